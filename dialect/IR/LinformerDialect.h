//===- LinformerDialect.h - Linformer dialect -------------------*- C++ -*-===//
//
// Declares the Linformer dialect, its enums and attributes. Include
// "dialect/IR/LinformerOps.h" for the ops.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_DIALECT_IR_LINFORMERDIALECT_H
#define LINFORMER_DIALECT_IR_LINFORMERDIALECT_H

#include "mlir/Dialect/SCF/IR/DeviceMappingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

// The attributes before the dialect: its discardable attributes' helpers
// (LinformerBase.td) are typed with them.
#include "dialect/IR/LinformerEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/IR/LinformerAttrs.h.inc"

#include "dialect/IR/LinformerDialect.h.inc"

namespace mlir::linformer {

/// The names of the dialect's attributes on other dialects' ops, one
/// constant each (their types and the verifier: LinformerBase.td,
/// discardableAttrs; docs/Spec.md, "Attributes on other ops").

/// Where an entry function carries its #linformer.dispatch_plan.
constexpr llvm::StringLiteral kDispatchPlanAttrName =
    LinformerDialect::DispatchPlanAttrHelper::getNameStr();

/// The module's #linformer.cpu_target, what schedules are chosen for.
constexpr llvm::StringLiteral kTargetAttrName =
    LinformerDialect::TargetAttrHelper::getNameStr();

/// Marks a linalg op as the root of a kernel: tiling starts from roots and
/// fuses their non-root producers into the tile loops.
constexpr llvm::StringLiteral kRootAttrName =
    LinformerDialect::RootAttrHelper::getNameStr();

/// A root's #linformer.cpu_schedule and the #linformer.kernel_shape facts
/// about its kernel that reach the manifest.
constexpr llvm::StringLiteral kScheduleAttrName =
    LinformerDialect::ScheduleAttrHelper::getNameStr();
constexpr llvm::StringLiteral kKernelInfoAttrName =
    LinformerDialect::KernelAttrHelper::getNameStr();

/// A kernel root, then its workgroup loop, whose kernel reads only weights
/// and what other initializers wrote: the runtime runs it once per session
/// (`initializer` in the dispatch plan), and what it writes are the
/// session's constants.
constexpr llvm::StringLiteral kInitializerAttrName =
    LinformerDialect::InitializerAttrHelper::getNameStr();

/// Per-root workgroup tile sizes chosen by the schedule (one per loop, 0 =
/// whole dimension).
constexpr llvm::StringLiteral kTileSizesAttrName =
    LinformerDialect::TileSizesAttrHelper::getNameStr();

/// On a linalg op that reduces over tokens (`E X`, pooling and conv
/// windows) and stops at each sequence's length: its
/// `#linformer.token_bound` (LinformerAttrs.td).
constexpr llvm::StringLiteral kTokenBoundAttrName =
    LinformerDialect::TokenBoundAttrHelper::getNameStr();

/// On a kernel root (`E'`, E with the columns of padded tokens zeroed)
/// whose result's entries at tokens past each sequence's length are read by
/// no kernel, because every reader is a token reduction that stops at the
/// length (`linformer.token_bound`): `array<i64: batch dim, token dim>` of
/// its result. The CPU pipeline then tiles its tokens into workgroups with a
/// length rule (the runtime skips the padded tiles), when the readers'
/// workgroups each hold one sequence (else the bound cannot apply).
constexpr llvm::StringLiteral kUnreadPaddingAttrName =
    LinformerDialect::UnreadPaddingAttrHelper::getNameStr();

/// On a workgroup loop (`scf.forall`) whose workgroups each hold one
/// sequence and a tile of its tokens: `array<i64: batch dim, row dim,
/// tokens per tile>` over the loop's dimensions. The outliner turns it into
/// the kernel's `#linformer.token_rows`, the runtime's length rule.
constexpr llvm::StringLiteral kTokenRowsAttrName =
    LinformerDialect::TokenRowsAttrHelper::getNameStr();

/// Marks the loops of register tiling, the only ones that may be peeled.
constexpr llvm::StringLiteral kRegisterLoopAttrName =
    LinformerDialect::RegisterLoopAttrHelper::getNameStr();

/// On a `linformer.attention_core` whose contractions take bf16 pairs
/// (linformer-bf16-products with dot products on): its lowering rounds the
/// query tile and the keys to bf16 for `Q K^T`, and the probabilities
/// (transposed back to rows of slots) and the values for `P V` (not where
/// pooled slots stop at a length); the softmax stays f32.
constexpr llvm::StringLiteral kBF16ScoresAttrName =
    LinformerDialect::Bf16ScoresAttrHelper::getNameStr();
/// Beside kBF16ScoresAttrName: the core's pairs are f16 (linformer-bf16-
/// products' f16, AMX-FP16 tiles): its lowering rounds to f16 instead.
constexpr llvm::StringLiteral kF16PairsAttrName =
    LinformerDialect::F16PairsAttrHelper::getNameStr();

/// On a kernel root with bf16 products: the unit they run on ("fma": bf16
/// factors extended for f32 FMAs; "dot": vdpbf16ps pairs; "amx": AMX
/// tiles; ", emulated" appended where the target lacks it), as
/// linformer-bf16-products chose it. The schedule records it (the shape's
/// engine, part of its key).
constexpr llvm::StringLiteral kBF16EngineAttrName =
    LinformerDialect::Bf16EngineAttrHelper::getNameStr();

/// On the elementwise op (a GELU and the rounding to bf16, fused) that a
/// bf16 contraction's workgroups compute from its result as an epilogue
/// (linformer-cpu-tile-and-fuse): register tiling computes it panel by
/// panel of the contraction's result, while the panel is in L1.
constexpr llvm::StringLiteral kBF16EpilogueAttrName =
    LinformerDialect::Bf16EpilogueAttrHelper::getNameStr();

/// CUDA: on a linalg op whose result holds tokens, `array<i64: batch
/// loop, token loop>`, when the function has a lengths argument.
constexpr llvm::StringLiteral kTokenLoopsAttrName =
    LinformerDialect::TokenLoopsAttrHelper::getNameStr();

/// CUDA: on cuda::wgmmaRS's inline PTX, `array<i64: n, accumulate, bf16>`
/// (what the PTX says), for linformer-cuda-emulate-warps.
constexpr llvm::StringLiteral kCUDAHostWgmmaAttrName =
    LinformerDialect::CudaHostWgmmaAttrHelper::getNameStr();

/// CUDA: beside `kTokenLoopsAttrName`, on an op whose rows are pooled slots
/// read only by fused attention cores, `array<i64: tokens a slot, slots a
/// granule>` (see cuda::tokenRowsRule).
constexpr llvm::StringLiteral kCUDASlotRowsAttrName =
    LinformerDialect::CudaSlotRowsAttrHelper::getNameStr();

/// CUDA: on a block loop (`scf.parallel` mapped to block x) whose blocks
/// each hold a tile of one sequence's tokens, its `#linformer.token_rows`.
constexpr llvm::StringLiteral kCUDATokenRowsAttrName =
    LinformerDialect::CudaTokenRowsAttrHelper::getNameStr();

/// CUDA, on a function: each block loop's length rule or unit, in launch
/// order (linformer-cuda-tile-parallel-loops records it,
/// linformer-cuda-plan-launches puts it in the plan).
constexpr llvm::StringLiteral kCUDALaunchRowsAttrName =
    LinformerDialect::CudaLaunchRowsAttrHelper::getNameStr();

/// CUDA: on a token contraction, `array<i64: T1, S1, T2, S2, ...>`: when
/// the run's longest sequence has at most Ti tokens, split-K Si instead of
/// its schedule's (T decreasing).
constexpr llvm::StringLiteral kCUDALengthSplitsAttrName =
    LinformerDialect::CudaLengthSplitsAttrHelper::getNameStr();

/// CUDA: on an scf.if, T: its condition is "the run's longest sequence has
/// at most T tokens", which the plan records for the runtime to evaluate.
constexpr llvm::StringLiteral kLengthGuardAttrName =
    LinformerDialect::LengthGuardAttrHelper::getNameStr();

/// CUDA: on a contraction in a nest of length guards, its variant (0: the
/// schedule's split, in the outermost else; i: the i-th [T, S] pair of
/// its `linformer.cuda_length_splits`), which orders their partial sums.
constexpr llvm::StringLiteral kLengthVariantAttrName =
    LinformerDialect::LengthVariantAttrHelper::getNameStr();

/// CUDA: a loop nest mapped onto tensor cores (warp tiles).
constexpr llvm::StringLiteral kTensorCoreAttrName =
    LinformerDialect::TensorCoreAttrHelper::getNameStr();

/// CUDA: a loop whose innermost dimension's threads exchange values by warp
/// shuffles (the f32 attention core's lanes of a query row): its blocks
/// must be whole warps.
constexpr llvm::StringLiteral kCUDAWholeWarpsAttrName =
    LinformerDialect::CudaWholeWarpsAttrHelper::getNameStr();

/// CUDA: on a loop over tokens whose token dimension counts groups of this
/// many consecutive tokens (the f32 attention core's rows a thread): its
/// length rule's tiles count tokens.
constexpr llvm::StringLiteral kCUDATokensPerIterationAttrName =
    LinformerDialect::CudaTokensPerIterationAttrHelper::getNameStr();

/// CUDA: on the elementwise op right after a contraction that stores its
/// results rounded into a 16-bit twin of the contraction's f32 output,
/// which every reader of those values reads instead
/// (linformer-cuda-narrow-intermediates). The values the contraction
/// leaves in its f32 output are then read by this op only, so
/// linformer-cuda-tensor-core-contractions absorbs it as the epilogue even
/// where the f32 buffer has other users (it is reused).
constexpr llvm::StringLiteral kNarrowedAttrName =
    LinformerDialect::NarrowedAttrHelper::getNameStr();

/// CUDA: a contraction's `#linformer.cuda_schedule`, chosen by
/// linformer-cuda-select-schedules, applied by
/// linformer-cuda-tensor-core-contractions.
constexpr llvm::StringLiteral kCUDAScheduleAttrName =
    LinformerDialect::CudaScheduleAttrHelper::getNameStr();
/// CUDA: a scheduled contraction's `#linformer.cuda_absorption`, the init
/// and epilogue ops its warp tiles take over, chosen by
/// linformer-cuda-absorb-init-epilogue, applied by
/// linformer-cuda-tensor-core-contractions.
constexpr llvm::StringLiteral kCUDAAbsorbsAttrName =
    LinformerDialect::CudaAbsorbsAttrHelper::getNameStr();
/// CUDA: an attention core's `#linformer.cuda_core_schedule` on tensor
/// cores, chosen by linformer-cuda-select-schedules, applied by
/// linformer-cuda-expand-attention-core.
constexpr llvm::StringLiteral kCUDACoreScheduleAttrName =
    LinformerDialect::CudaCoreScheduleAttrHelper::getNameStr();
/// CUDA: an f32 attention core's `#linformer.cuda_f32_core_schedule` (no
/// tensor cores), chosen by linformer-cuda-select-schedules, applied by
/// linformer-cuda-expand-attention-core.
constexpr llvm::StringLiteral kCUDAF32CoreScheduleAttrName =
    LinformerDialect::CudaF32CoreScheduleAttrHelper::getNameStr();
/// CUDA, on a function: `[{key, schedule, source}, ...]`, each contraction's
/// shape key, `#linformer.cuda_schedule` and where it came from ("selected"
/// or "file"), in order, for --print-schedule.
constexpr llvm::StringLiteral kCUDASchedulesAttrName =
    LinformerDialect::CudaSchedulesAttrHelper::getNameStr();

/// linformer-reassociate's estimate of both orders' cost.
constexpr llvm::StringLiteral kReassociationCostAttrName =
    LinformerDialect::ReassociationCostAttrHelper::getNameStr();

/// An outlined kernel function's workgroup count, each bound buffer's
/// bytes, and its length rule as the words of its ABI record.
constexpr llvm::StringLiteral kWorkgroupsAttrName =
    LinformerDialect::WorkgroupsAttrHelper::getNameStr();
constexpr llvm::StringLiteral kBufferBytesAttrName =
    LinformerDialect::BufferBytesAttrHelper::getNameStr();
constexpr llvm::StringLiteral kTokenRowsRecordAttrName =
    LinformerDialect::TokenRowsRecordAttrHelper::getNameStr();
/// An outlined kernel's buffers it indexes packed (1) or not (0), for its
/// ABI record.
constexpr llvm::StringLiteral kPackedBuffersAttrName =
    LinformerDialect::PackedBuffersAttrHelper::getNameStr();

/// Function argument attributes (unit): a sequence input `[b, n, ...]`
/// (batch at dimension 0, tokens at dimension 1; on a result, and after
/// bufferization on its out-parameter, an output that holds tokens, marked
/// by linformer-sequence-results), and the argument holding
/// each sequence's real length (`i32 [b]`). docs/Pipeline.md, "Lengths".
constexpr llvm::StringLiteral kSequenceArgAttrName = "linformer.sequence";
constexpr llvm::StringLiteral kLengthsArgAttrName = "linformer.lengths";
/// Function argument attribute (i64 P): a weight of a sequence-parallel
/// entry that is one rank's share of its last axis (E and F: the rank's
/// n columns of a [.., k, n P] matrix). The artifact says so, and the
/// runtime binds the session's rank's columns of the whole weight.
constexpr llvm::StringLiteral kSequenceSplitArgAttrName =
    "linformer.sequence_split";
/// Kernel argument attribute (unit): a sequence buffer (a sequence input
/// or an output that holds tokens, both marked `linformer.sequence`), declared
/// `[b, n, ...]` but holding the sequences packed: each one's real tokens
/// end to end, sequence s from row `sum of lengths[i < s]`. Its kernel
/// also takes the lengths (an argument marked `linformer.lengths`).
/// linformer-cpu-packed-sequences rewrites its accesses.
constexpr llvm::StringLiteral kPackedSequenceArgAttrName =
    "linformer.packed_sequence";

/// Whether argument `index` of `fn` is a weight, the same for the runtime
/// from run to run: `fn` marks its sequence inputs (so that every unmarked
/// argument but the lengths is a weight, as the driver binds them) and the
/// argument is a float tensor or memref it does not mark. An entry that
/// marks nothing takes every argument as an input.
bool isWeightArgument(FunctionOpInterface fn, unsigned index);

/// The arguments of `fn` marked `linformer.sequence`, in order: its
/// sequence inputs and, after bufferization, the out-parameters of the
/// results that hold tokens (what a dispatch plan's `sequences` records).
SmallVector<int64_t> sequenceArguments(FunctionOpInterface fn);

/// The dispatch plan of `entry` (null if it has none).
DispatchPlanAttr getDispatchPlan(Operation *entry);
void setDispatchPlan(Operation *entry, DispatchPlanAttr plan);

} // namespace mlir::linformer

#endif // LINFORMER_DIALECT_IR_LINFORMERDIALECT_H
