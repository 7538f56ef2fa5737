//===- LinformerBase.td - Linformer dialect definition -----*- tablegen -*-===//
//
// The dialect record and the enums shared by the attribute and op files.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_BASE_TD
#define LINFORMER_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/AttrTypeBase.td"

def Linformer_Dialect : Dialect {
  let name = "linformer";
  let summary = "Linformer attention: low-rank self-attention with sequence projections";
  let description = [{
    The `linformer` dialect represents Linformer attention (Wang et al., 2020):
    keys and values are projected along the sequence axis, n -> k, before the
    attention core, so attention costs O(n*k) instead of O(n^2).

    It has ops at two levels: `linformer.attention`, a whole multi-head
    attention layer that keeps the algebra visible to rewrites, and its parts,
    `linformer.project` (the n -> k sequence projection, for every projection
    kind) and `linformer.attention_core` (`softmax(Q Kp^T * scale) Vp`), which
    are what tiling and fusion work on. All ops work on builtin ranked tensors
    and carry the batch dimension.
  }];
  let cppNamespace = "::mlir::linformer";
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::tensor::TensorDialect"];

  // Every `linformer.*` attribute the compiler attaches to ops it does not
  // define, with its type: one list, typed accessors (`<Name>AttrHelper`,
  // whose getNameStr() is the attribute's name), and a verifier that
  // refuses a wrong type or an unknown name in plain words
  // (LinformerDialect.cpp).
  let discardableAttrs = (ins
    // The entry function's kernels, buffers and workgroups.
    "::mlir::linformer::DispatchPlanAttr":$dispatch_plan,
    // The module's CPU target, what schedules are chosen for.
    "::mlir::linformer::CPUTargetAttr":$target,
    // A linalg op (or its workgroup loop) that starts a kernel.
    "::mlir::UnitAttr":$root,
    // A kernel root's schedule and the shape facts it was chosen from.
    "::mlir::linformer::CPUScheduleAttr":$schedule,
    "::mlir::linformer::KernelShapeAttr":$kernel,
    // A kernel root (then its workgroup loop) that reads only weights: the
    // runtime runs its kernel once per session (an initializer).
    "::mlir::UnitAttr":$initializer,
    // Workgroup tile sizes forced on a root (pipeline knobs, tests).
    "::mlir::DenseI64ArrayAttr":$tile_sizes,
    // A reduction over tokens that stops at the sequence's length.
    "::mlir::linformer::TokenBoundAttr":$token_bound,
    // A kernel root whose result's entries at padded tokens no one reads
    // (its readers stop at the lengths): [batch dim, token dim] of the
    // result. The CPU tiles its tokens and skips the padded tiles.
    "::mlir::DenseI64ArrayAttr":$unread_padding,
    // A workgroup loop of one sequence's token tiles: [batch dim, row dim,
    // tokens per tile].
    "::mlir::DenseI64ArrayAttr":$token_rows,
    // An outlined kernel: its workgroup count, each buffer's bytes, and its
    // length rule as the words of its ABI record.
    "::mlir::IntegerAttr":$workgroups,
    "::mlir::DenseI64ArrayAttr":$buffer_bytes,
    "::mlir::DenseI64ArrayAttr":$token_rows_record,
    // An outlined kernel: 1 for each buffer it indexes packed (sequence s
    // from the lengths before it), 0 for the others; its ABI record says so.
    "::mlir::DenseI64ArrayAttr":$packed_buffers,
    // A register-tiling loop (the only loops that may be peeled).
    "::mlir::UnitAttr":$register_loop,
    // CPU: an attention core whose contractions multiply bf16 pairs
    // (linformer-bf16-products with dot products; linformer-lower-to-linalg
    // rounds its queries and keys, and its probabilities and values, to
    // bf16).
    "::mlir::UnitAttr":$bf16_scores,
    // CPU: with bf16_scores, the core's pairs are f16, not bf16
    // (linformer-bf16-products' f16: AMX-FP16 tiles).
    "::mlir::UnitAttr":$f16_pairs,
    // CPU: the unit a kernel root's bf16 products run on ("fma", "dot",
    // "amx"; ", emulated" where the target lacks it), as
    // linformer-bf16-products chose it; the schedule records it.
    "::mlir::StringAttr":$bf16_engine,
    // CPU: the elementwise op (a GELU and the rounding to bf16, fused) that
    // a bf16 contraction's workgroups compute from its result
    // (linformer-cpu-tile-and-fuse); register tiling computes it panel by
    // panel of the contraction's result.
    "::mlir::UnitAttr":$bf16_epilogue,
    // CUDA: a loop nest mapped onto tensor cores.
    "::mlir::UnitAttr":$tensor_core,
    // CUDA: a loop whose innermost dimension's threads exchange values by
    // warp shuffles: its blocks must be whole warps (linformer-cuda-tile-
    // parallel-loops checks).
    "::mlir::UnitAttr":$cuda_whole_warps,
    // CUDA: on a loop over tokens (token_loops) whose token dimension
    // counts groups of this many consecutive tokens (the f32 attention
    // core's rows a thread): its length rule's tiles count tokens.
    "::mlir::IntegerAttr":$cuda_tokens_per_iteration,
    // CUDA: an elementwise op that stores a contraction's results rounded
    // into the 16-bit twin its readers read (linformer-cuda-narrow-
    // intermediates); the values it leaves in the f32 buffer are dead.
    "::mlir::UnitAttr":$narrowed,
    // CUDA: a linalg op whose result holds tokens, on a function with a
    // lengths argument: [batch loop, token loop] (linformer-cuda-mark-
    // token-loops).
    "::mlir::DenseI64ArrayAttr":$token_loops,
    // CUDA: beside token_loops, on an op whose rows are pooled slots that
    // only fused attention cores read (through other such ops): [tokens a
    // slot, slots a granule]. Its length rule counts a slot as its window's
    // tokens and launches whole granules: the core reads whole steps of
    // slots, each within a granule.
    "::mlir::DenseI64ArrayAttr":$cuda_slot_rows,
    // CUDA: a block loop whose blocks each hold a tile of one sequence's
    // tokens: the kernel's length rule.
    "::mlir::linformer::TokenRowsAttr":$cuda_token_rows,
    // CUDA, on a function: each block loop's length rule (or unit), in
    // launch order, for linformer-cuda-plan-launches
    // (convert-parallel-loops-to-gpu keeps no attribute of a loop).
    "::mlir::ArrayAttr":$cuda_launch_rows,
    // CUDA: a contraction's warp, staging and mma schedule.
    "::mlir::linformer::CUDAScheduleAttr":$cuda_schedule,
    // CUDA: the init and epilogue ops a scheduled contraction's warp
    // tiles take over (linformer-cuda-absorb-init-epilogue).
    "::mlir::linformer::CUDAAbsorptionAttr":$cuda_absorbs,
    // CUDA: an attention core's schedule on tensor cores.
    "::mlir::linformer::CUDACoreScheduleAttr":$cuda_core_schedule,
    // CUDA: an f32 attention core's schedule (no tensor cores).
    "::mlir::linformer::CUDAF32CoreScheduleAttr":$cuda_f32_core_schedule,
    // CUDA: on the inline PTX of a wgmma.mma_async whose A comes from
    // registers (cuda::wgmmaRS), what the PTX says: [n, accumulate (1) or
    // not (0), bf16 (1) or f16 (0)], for linformer-cuda-emulate-warps,
    // which cannot read PTX (the GPU's translation ignores it).
    "::mlir::DenseI64ArrayAttr":$cuda_host_wgmma,
    // CUDA: a token contraction's split-K for shorter runs: pairs [T, S],
    // T decreasing: when the run's longest sequence has at most T tokens,
    // split S (linformer-cuda-select-schedules).
    "::mlir::DenseI64ArrayAttr":$cuda_length_splits,
    // CUDA: an scf.if whose condition is "the run's longest sequence has
    // at most this many tokens": its kernels are launched or skipped by
    // the runtime from the lengths (linformer-cuda-plan-launches).
    "::mlir::IntegerAttr":$length_guard,
    // CUDA: a contraction inside length guards: which of its variants it
    // is (0: the schedule's own split; i: the i-th [T, S] pair), the order
    // their partial sums are allocated in (linformer-cuda-length-variants).
    "::mlir::IntegerAttr":$length_variant,
    // CUDA, on a function: each contraction's and attention core's key,
    // schedule and source, in order (what --print-schedule prints).
    "::mlir::ArrayAttr":$cuda_schedules,
    // linformer-reassociate's estimate of both orders, for the reader.
    "::mlir::DictionaryAttr":$reassociation_cost
  );
  let hasOperationAttrVerify = 1;
  // `linformer.sequence` and `linformer.lengths` on entry arguments.
  let hasRegionArgAttrVerify = 1;
}

def Linformer_ProjectionKind : I32Enum<"ProjectionKind",
    "how the sequence axis is projected from n to k", [
      I32EnumCase<"learned", 0>,
      I32EnumCase<"mean_pool", 1>,
      I32EnumCase<"max_pool", 2>,
      I32EnumCase<"conv", 3>
    ]> {
  let cppNamespace = "::mlir::linformer";
}

#endif // LINFORMER_BASE_TD
