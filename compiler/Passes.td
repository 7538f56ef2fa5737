//===- Passes.td - Linformer compiler passes, every target -*- tablegen -*-===//
//
// The passes every target shares: rewrites of the Linformer ops, their
// lowering to linalg on tensors, the packed sequence layout, kernel
// outlining and hoisting, and Halide's kernel grouping. The CPU code
// generator's passes are in compiler/Codegen/CPU/Passes.td, the CUDA
// code generator's in compiler/Codegen/CUDA/Passes.td; pipelines that
// chain them live in compiler/Pipelines.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_PASSES_TD
#define LINFORMER_COMPILER_PASSES_TD

include "mlir/Pass/PassBase.td"

def LinformerDecomposeAttentionPass
    : Pass<"linformer-decompose-attention", "::mlir::func::FuncOp"> {
  let summary = "splits linformer.attention into its parts";
  let description = [{
    Rewrites each `linformer.attention` layer into its parts: the Q/K/V input
    projections (contractions written as `linalg.generic`, producing
    [b, h, n, d] directly, so no transpose is materialised), two
    `linformer.project` ops for K and V, one `linformer.attention_core`, and
    the output projection. For pooling and convolution with padding it also
    computes which projected slots have a real token behind them and passes
    that to the core as `key_mask`.

    Before:
    ```mlir
    %y = linformer.attention %x weights(%wq, %wk, %wv, %wo) heads(4) k(16)
           projection<mean_pool> sharing<none> lengths(%l) : ...
    ```
    After (abridged):
    ```mlir
    %q = linalg.generic ... // X * W_q, [b, h, n, d]
    %k = linalg.generic ... // X * W_k
    %v = linalg.generic ... // X * W_v
    %kp = linformer.project<mean_pool> %k lengths(%l) : ...
    %vp = linformer.project<mean_pool> %v lengths(%l) : ...
    %m = linalg.generic ...  // [b, k] i8: slots with a real token
    %a = linformer.attention_core %q, %kp, %vp scale(0.35355) key_mask(%m)
    %y = linalg.generic ... // concat(heads) * W_o
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def LinformerLowerToLinalgPass
    : Pass<"linformer-lower-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "lowers linformer.project and linformer.attention_core to linalg";
  let description = [{
    Lowers the parts to linalg on tensors, with the padding semantics of
    docs/Spec.md:
    - `project<learned>`: padded tokens are zeroed, then a contraction with E
      over n (per head or shared);
    - `project<mean_pool>`: window sums over real tokens divided by the
      number of real tokens (at least 1; a window without one gives 0);
    - `project<max_pool>`: padded tokens become -inf, window maximum, and a
      window without a real token gives 0;
    - `project<conv>`: padded tokens are zeroed, then a depthwise contraction
      with the kernel over each window;
    - `attention_core`: `S = Q K^T` (contraction over d), `S * scale` with
      masked slots at -inf, `linalg.softmax` over k, then `P V`.

    With `lower-core=false` the attention core is left alone: the CPU
    pipeline tiles it first (it implements the TilingInterface) and runs
    this pass again on the tiles, so the scores of one query tile are all
    that ever exists. With `keep-fusable-core` (the CUDA pipeline) the
    cores that `linformer-cuda-expand-attention-core` runs as one kernel
    (static shapes, value width equal to the head width) stay whole, to be
    bufferized as they are; any other core is lowered.

    ```mlir
    // Before
    %kp = linformer.project<max_pool> %k : (tensor<1x2x8x4xf32>) -> tensor<1x2x2x4xf32>
    // After
    %e = tensor.expand_shape %k [[0], [1], [2, 3], [4]] ... -> tensor<1x2x2x4x4xf32>
    %kp = linalg.generic {iterator_types = [..., "reduction"]} ins(%e ...) {
      arith.maximumf ...
    }
    ```
  }];
  let options = [
    Option<"lowerCore", "lower-core", "bool", /*default=*/"true",
           "Also lower linformer.attention_core">,
    Option<"keepFusableCore", "keep-fusable-core", "bool",
           /*default=*/"false",
           "With lower-core: keep the attention cores that the CUDA "
           "pipeline expands as one kernel on buffers (static shapes, value "
           "width equal to the head width)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

//===----------------------------------------------------------------------===//
// CPU code generation
//===----------------------------------------------------------------------===//

def LinformerPackedSequencesPass
    : Pass<"linformer-packed-sequences", "::mlir::func::FuncOp"> {
  let summary = "kernels index their packed sequence buffers through the "
                "lengths";
  let description = [{
    On a kernel (after linformer-outline-kernels with `packed-sequences`,
    and after lowering to loops) with arguments marked
    `linformer.packed_sequence`: such a buffer is declared `[b, n, ...]`
    but holds each sequence's real tokens end to end, sequence s from row
    `start(s) = lengths[0] + ... + lengths[s - 1]` (the argument marked
    `linformer.lengths`). Accesses through views first fold into accesses
    to the argument (upstream's memref alias folding); then each access at
    `[s, r, ...]` becomes one to the buffer's `[b * n, ...]` view:
    - a store at row `start(s) + r`, only where `r < lengths[s]` (an
      `scf.if`): rows of a tile past the length are not the sequence's;
    - a load at row `start(s) + min(r, lengths[s] - 1)`: rows past the
      length read the sequence's last real row (a sequence past the run's
      batch, of length 0, reads row 0), so nothing past the real rows is
      read. Kernels compute such rows, but no real result depends on
      them (the length rules and token bounds already leave them unwritten
      in the padded layout).
    `start(s)` and `lengths[s]` are computed once, right after `s` is.
    So the runtime binds a caller's packed (`cu_seqlens`) or shorter
    (`[b, L, ...]`, one sequence, or every sequence of length L) tensors
    in place.

    With `entry` (the CUDA pipeline, after its loops are tiled for blocks
    and threads): the function is a whole model's, and each outermost
    `scf.parallel` is one kernel. Its arguments marked `linformer.sequence`
    (the sequence inputs, and the outputs that hold tokens, which
    linformer-sequence-results marks) are marked packed and stay so (linformer-cuda-plan-launches then records
    `packed_sequences`); the `[b * n, ...]` view and each sequence's start
    and length are made inside each kernel, which also reads an
    `nvgpu.device_async_copy`'s source this way.

    Errors: a kernel with packed arguments but no i32 `[b]` lengths
    argument; with `entry`, an access outside the parallel loops; a packed argument that is not a static identity-layout
    `[b, n, ...]` memref of rank >= 3; a use other than loads and stores
    (after folding views); a transfer whose vector runs along the batch or
    the tokens.

    ```mlir
    // Before
    %v = vector.load %x[%s, %r, %c] : memref<2x64x16xf32>, vector<8xf32>
    // After
    %rows = memref.collapse_shape %x [[0, 1], [2]]
    %len = ... lengths[%s] ...   %start = scf.for ... (sum of lengths[< s])
    %last = arith.subi %len, 1
    %row = arith.select (%last < 0), 0, (%start + arith.minsi %r, %last)
    %v = vector.load %rows[%row, %c] : memref<128x16xf32>, vector<8xf32>
    ```
  }];
  let options = [
    Option<"entry", "entry", "bool", /*default=*/"false",
           "the function is a whole model's (CUDA, before its parallel loops "
           "become kernels): its arguments marked linformer.sequence are the "
           "packed ones, each outermost scf.parallel a kernel, and the marks "
           "stay for the launch plan">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def LinformerSequenceResultsPass
    : Pass<"linformer-sequence-results", "::mlir::func::FuncOp"> {
  let summary = "results that hold tokens are marked and own their buffer";
  let description = [{
    On tensors: each result of a function that holds tokens along `[b, n]`
    (the token analysis, from the `linformer.sequence` inputs through the
    ops, never from a size) is marked `linformer.sequence`. Bufferization
    carries the mark to its out-parameter; linformer-outline-kernels and
    linformer-packed-sequences read it as "a sequence buffer" (packed with
    a lengths input), and the dispatch plan's `sequences` (and from it the
    artifact's manifest) say which outputs the runtime treats as sequences.

    In an entry with a `linformer.lengths` argument (whose sequence buffers
    the runtime may bind packed or shorter, in place), each such result's
    destination-passing chain (the ops that write it in place, each into
    its tied init) also gets a destination of its own: its
    `tensor.empty` becomes a `bufferization.alloc_tensor` (whether another
    op writes into it yet or not), a shared zero fill a copy of its own.
    CSE merges equal `tensor.empty` ops, so a value of the output's type
    whose rows are not tokens (`E X` with `k = n` and `d_model` columns,
    one E for K and V) shared the output's, and One-Shot Bufferize wrote it
    into the caller's buffer, whose packed layout keeps only each
    sequence's real rows: rows of `E X` past a sequence's length were lost.
    An empty the output alone uses is made a buffer too: later passes make
    empties of their own (a bf16 model's `E X` rounded to bf16 in its own
    kernel with bf16 products), which CSE would merge with it.

    ```mlir
    // Before
    %e = tensor.empty() : tensor<1x128x64xf32>
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<1x128x64xf32>) -> ...
    %ex = linalg.generic ... outs(%z)                  // E X: [b, k, d]
    %y = linalg.generic ... outs(%e) {linformer.root}  // the output
    return %y
    // After
    func.func @f(...) -> (tensor<1x128x64xf32> {linformer.sequence})
    %own = bufferization.alloc_tensor() : tensor<1x128x64xf32>
    %y = linalg.generic ... outs(%own) {linformer.root}
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def LinformerHoistInKernelsPass
    : Pass<"linformer-hoist-in-kernels", "::mlir::func::FuncOp"> {
  let summary = "loop-invariant code motion and subset hoisting, inside kernels";
  let description = [{
    Upstream loop-invariant code motion and loop-invariant subset hoisting
    (the accumulators of a register tile, read and written around every step
    of its reduction loop, move out of it and stay in registers), applied to
    `scf.for` loops only. A workgroup loop (`scf.forall`) is a kernel: what
    its body computes must stay in it, or it would end up outside every
    kernel (code that only the sequential entry runs) or, for work that
    yields values, could not be outlined at all.

    A hoisted accumulator read then gets the vector the same elements'
    initializing write stored, past writes of other vector types whose
    boxes (constant indices, vector extents) it does not overlap: a row
    split into a full vector and a remainder (20 = 16 + 4) otherwise reads
    the tensor after the remainder's write, which upstream's folding does not
    see through, and one-shot bufferization copies the row to resolve the
    conflict (a copy of a kernel's output that packed sequences cannot
    index). Only a forward rewrites; a read merely moved onto an older
    tensor would make that conflict itself.
  }];
}

def LinformerHoistStaticAllocasPass
    : Pass<"linformer-hoist-static-allocas", "::mlir::func::FuncOp"> {
  let summary = "moves statically sized stack buffers to the function entry";
  let description = [{
    A `memref.alloca` inside a sequential loop grows the stack on every
    iteration until the function returns. Per-tile scratch buffers have
    static sizes, so one buffer at the function entry serves every
    iteration. Run it only where the loops are sequential (after
    `scf.forall` became `scf.for`, or inside one workgroup's kernel):
    parallel iterations must not share scratch.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def LinformerOutlineKernelsPass
    : Pass<"linformer-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "outlines each workgroup loop into a kernel function";
  let description = [{
    The dispatch model (IREE's, see DESIGN.md): after bufferization every
    top-level `scf.forall` of a public function is one kernel. It becomes a
    function `@<entry>_kernel_<i>(buffers..., %workgroup: index)` whose body
    is one iteration of the loop: the workgroup id is delinearized into the
    loop's indices. The kernel's buffers are the function's arguments and
    intermediate allocations the loop reads or writes (views of them are
    rebuilt inside the kernel), so a runtime can call it for any workgroup,
    from any thread, in any order. Generated code never starts threads.

    The entry function keeps a sequential reference path (a loop calling the
    kernel for every workgroup) and records the dispatch plan as
    `linformer.dispatch_plan` (`#linformer.dispatch_plan`): for each kernel
    (`#linformer.kernel`) its name, workgroup count, the buffers it binds
    and writes (index < number of arguments: an argument; otherwise an
    intermediate allocation) and its schedule; and the bytes of each
    intermediate allocation.
    The kernel carries `linformer.workgroups`.

    A top-level op that writes memory outside any workgroup loop (work too
    small to have been tiled) becomes a kernel of one workgroup, so that
    nothing escapes the runtime.

    With `packed-sequences`, in an entry with a `linformer.lengths`
    argument and sequence inputs (`linformer.sequence`, `[b, n, ...]`), the
    sequence buffers are packed: the arguments marked `linformer.sequence`,
    the sequence inputs and the outputs that hold tokens (marked by
    linformer-sequence-results, which also gives each its own buffer, so
    that no other value lives there; bufferization carries the mark to the
    out-parameter). An argument that only has their `[b, n]` is not one. Each kernel that binds one also binds the
    lengths; its arguments are marked `linformer.packed_sequence` and
    `linformer.lengths` for linformer-packed-sequences, and the plan
    says `packed_sequences`.
  }];
  let options = [
    Option<"packedSequences", "packed-sequences", "bool", /*default=*/"false",
           "Kernels index the sequence inputs and outputs packed (the "
           "runtime binds packed and shorter tensors in place)">
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linformer::LinformerDialect"];
}

def LinformerHalideGroupKernelsPass
    : Pass<"linformer-halide-group-kernels", "::mlir::func::FuncOp"> {
  let summary = "linalg on memrefs grouped into the Halide generator's kernels";
  let description = [{
    Runs on a bufferized entry function in the Halide pipeline, before
    `linformer-outline-kernels`: every `memref.copy` becomes a
    `linalg.generic` copy, and each op that only initializes a buffer (all
    loops parallel, the old contents unread: a fill, or a bias broadcast) is
    grouped with the op that next writes the same buffer and reads it as its
    accumulator, in one single-iteration
    `scf.forall`, so the two become one kernel and one Halide pipeline (the
    fill is the accumulator's pure definition, the reduction its update).
    Every other op becomes a kernel of its own when outlined.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // LINFORMER_COMPILER_PASSES_TD
