//===- Passes.td - the CUDA code generator's passes --------*- tablegen -*-===//
//
// Loop mapping, schedules, tensor-core contractions and launch planning of
// the CUDA pipeline (docs/CUDA.md).
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CUDA_PASSES_TD
#define LINFORMER_COMPILER_CODEGEN_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def LinformerCUDAPrepareLoopsPass
    : Pass<"linformer-cuda-prepare-loops", "::mlir::func::FuncOp"> {
  let summary = "linalg on memrefs ready to become one kernel per op";
  let description = [{
    Runs before `convert-linalg-to-parallel-loops` in the CUDA pipeline, so
    that every op becomes one `scf.parallel` over all its parallel
    dimensions with its reductions sequential inside (one kernel, nothing
    left on the host, which cannot touch device memory):
    the iterators of every `linalg.generic` are interchanged to put the
    reduction dimensions innermost (a head-split projection
    [b, h, n, k-reduction, dh] would otherwise leave dh as a parallel loop
    inside the sequential reduction), and `memref.copy` becomes
    `linalg.copy`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LinformerCUDAExpandAttentionCorePass
    : Pass<"linformer-cuda-expand-attention-core", "::mlir::func::FuncOp"> {
  let summary = "the attention core as one kernel: online softmax per query row";
  let description = [{
    After bufferization: each `linformer.attention_core` on buffers (the op
    is destination-style and bufferizable, so the CUDA pipeline keeps it
    whole across bufferization) becomes one
    `scf.parallel` over (batch, heads, query rows) whose body streams the k
    projected keys and values with an online softmax: running max, running
    sum and an accumulator vector of the head width, rescaled when a larger
    score arrives and divided by the sum at the end. Masked slots score
    -inf and add nothing. The [b, h, n, k] scores and probabilities are
    never written to memory: one kernel instead of five. The slots go 16
    at a time (the largest of 16, 8, 4, 2 that divides k): their scores as
    16 independent fma chains over the head width, one max and one rescale
    of the accumulator a block (a slot at a time, each score was a chain
    of mul and dependent adds and the accumulator was rescaled every slot:
    4 instructions for every 2 useful flops of a slot's head width).
    Pooled slots (the core's `linformer.token_bound` with `per_step` w, a
    key mask and the function's `linformer.lengths`): the loop over slots
    stops at the first step past the ceil(length / w) slots of the row's
    sequence that can be valid, on tensor cores too.

    On tensor cores each core applies its `linformer.cuda_core_schedule`
    (block warps, slots a step, staging, query groups a block, ldmatrix,
    wgmma), which `linformer-cuda-select-schedules` chose (or read from a
    schedule file) and recorded; a core without one, or with one that does
    not fit its shape, is an error. An f32 core (no tensor cores) applies
    its `linformer.cuda_f32_core_schedule` (lanes a query row, rows a
    thread) where it has one, exactly (one that does not fit is an error);
    without one (the pass alone, the pipeline without scheduled
    contractions) the `lanes` and `rows` options say. With mma=tf32 an f32
    core whose schedule is a `linformer.cuda_core_schedule` (a file's: the
    selection keeps the f32 core until a GPU has timed the two) runs on
    TF32 tensor cores instead, unstaged: mma.sync m16n8k8 on operands
    rounded with cvt.rna, P's fragments straight from S's accumulators
    (the lane's slots 2t and 2t + 1 are A's k = t and t + 4, and V's rows
    are read in that order, so no shuffle is needed). With mma=tf32x3
    (3xTF32) the same core splits every operand into a TF32 head and a
    TF32 tail (cvt.rna of the value, then of what the head leaves) and
    runs three mma.sync a step, tails first: `Q_h K_t + Q_t K_h + Q_h K_h`
    and likewise for `P V`, near f32 accuracy.

    With `mma=bf16` or `f16` (and the query rows, projected slots and head
    width multiples of 16), the core runs on tensor cores instead, one warp
    per 16 query rows, as FlashAttention-2 does: the warp keeps its Q
    fragments in registers and walks the slots 16 at a time; S = Q K^T is
    two m16n8k16 tiles a head-width step, the running max of each row is
    exchanged within its four lanes (`gpu.shuffle xor` 1, 2), and the
    probabilities P, rounded to the operand type, are packed straight from
    the S accumulators into the A fragment of O += P V (the C layout of two
    8-column tiles is the A layout of one 16-deep step), so P never leaves
    registers. Each lane's running sum is partial until a final exchange.
    A step takes the schedule's `slots` slots (32 by default: two 16-slot
    blocks of S, then of P V): one max exchange, one alpha and one
    rescale of the accumulators a step rather than every 16 slots (64
    holds 32 scores a lane: about 136 registers, one 8-warp block an SM). The
    exponentials are FlashAttention's exp2(s c - m c), c = scale log2(e):
    one fma and one `ex2.approx.ftz` each, not libdevice's expf after a
    subtraction and a multiplication (13 instructions); the scalar core
    uses the same form, and both divide by the sum once a row. Under
    `emulate` the host runs this same code (linformer-cuda-emulate-warps
    lowers its mma.sync and shuffles once the loops are mapped); with
    `exact` (f32 operands, which no 16-bit register holds) it replays it:
    the same loops, each lane computing the full rows it needs in f32
    scalars (no shuffles, no fragment exchange).

    A `staged` schedule (one (b, h)'s keys and values fit the shared memory
    a block has: k (d/2 + 4) + d (k/2 + 4) words of two operands, 69 KiB
    at k = 256, d = 64) has the loops come out already mapped: a block per
    (b, h) and the schedule's `warps` consecutive query tiles, whose
    threads copy K and V into dynamic shared memory once,
    rounded and packed (K as pairs of head columns, V as pairs of slots:
    each fragment register is one 32-bit shared load, the rows padded so a
    warp's loads hit 32 banks), meet at a `gpu.barrier`, then compute as
    above reading their fragments from there. Under `emulate` the host
    runs this same code (linformer-cuda-emulate-warps lowers its shared
    memory, barrier, ldmatrix, mma.sync, shuffles and wgmma: its inline PTX
    carries `linformer.cuda_host_wgmma`, what the PTX says); with `exact`
    it replays it instead: the copy and the computation two thread loops
    over one buffer a block. With
    `ldmatrix`, both buffers being k-major for their products, the B
    fragments come from `nvgpu.ldmatrix` x4: a key tile's registers for two
    head steps, or two value tiles' registers, in one instruction instead
    of four `ld.shared.b32` (x2 for a last odd step or tile): 8 instead of
    32 shared loads a block of 16 slots at head width 64, for 16 mma.
    Replayed, each operand is read where ldmatrix delivers it (word t of
    the row its holder, lane 8q + g, points at), which checks the
    addresses.

    With `wgmma` (sm_90a; off by default, not yet run on a GPU) and the
    block's warps in whole warpgroups (4 consecutive query tiles: 64 rows),
    K and V's transpose are staged unpadded in wgmma's canonical layout
    (core matrices of 8 lines x 16 bytes; k d words: 64 KiB at k = 256,
    d = 64) and each warpgroup runs S = Q K^T as one
    `wgmma.mma_async` m64n(slots)k16 a head step and O += P V as one
    m64n(d)k16 a 16-slot block, A from registers (Q's and P's m16n8k16 A
    fragments are the RS operand layout) as inline PTX, B by descriptor;
    the D registers are the m16n8 C layout, so the softmax between is the
    same. Emulated, the loops read K and V through the same layout.

    With `groups` > 1 a staged block walks that many consecutive groups of
    its query tiles after one copy of K and V: at k = 256, d = 64 each
    copy moves 64 KiB from
    L2 for 128 query rows, 256 MiB over the B = 1, n = 65536 core.

    Runs after linformer-cuda-tensor-core-contractions, which may leave q,
    key, value and the output as bf16 / f16 buffers (the projections
    around a core on tensor cores store them rounded, since the core and
    they round them at every load anyway): the tensor-core core loads them
    as they are and rounds what it stores into a 16-bit output. The
    one-thread-a-row core takes f32 only; a 16-bit buffer there is an
    error. Its lanes' butterflies are its own shuffles on the host too
    (fewer lanes a row than a warp: linformer-cuda-emulate-warps takes
    shuffles whose partners share the row).
  }];
  let options = [
    Option<"mma", "mma", "std::string", /*default=*/"\"none\"",
           "none (one thread a query row, f32), tf32 or tf32x3 (f32 cores "
           "whose schedule is a #linformer.cuda_core_schedule on TF32 "
           "tensor cores, once or as 3xTF32, the others as none), bf16 or "
           "f16 (tensor cores)">,
    Option<"emulate", "emulate", "bool", /*default=*/"false",
           "for the CPU: its GPU code, for linformer-cuda-emulate-warps "
           "(with exact: the tensor-core core replayed in scalars)">,
    Option<"rows", "rows", "int64_t", /*default=*/"1",
           "the f32 core (mma=none): consecutive query rows a thread (a "
           "lane) computes, each K and V slice it loads used for all: 1, 2 "
           "or 4; used where n is a multiple of 32 of them, else 1">,
    Option<"lanes", "lanes", "int64_t", /*default=*/"1",
           "the f32 core (mma=none): lanes a query row, each a slice of "
           "the head width, its score the lanes' partial dot products "
           "added by warp shuffles: 1 (a thread a row), 4, 8 or 16, or 0: "
           "4 with rows > 1 (where used), else 4, or 8 where 4 a row would "
           "give fewer than 256 threads for each of min-blocks blocks; "
           "used where they divide the head "
           "width and n is a multiple of 32, else 1">,
    Option<"exact", "exact", "bool", /*default=*/"false",
           "with emulate: no rounding of the operands (checks the loops' "
           "structure at f32 accuracy)">,
    Option<"minBlocks", "min-blocks", "int64_t", /*default=*/"0",
           "with lanes=0: the f32 core's 4 lanes a row must give 256 "
           "threads for each of this many blocks">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LinformerCUDAMarkTokenLoopsPass
    : Pass<"linformer-cuda-mark-token-loops", "::mlir::func::FuncOp"> {
  let summary = "marks the linalg ops whose results hold tokens, for the CUDA length rules";
  let description = [{
    On tensors, before bufferization in the CUDA pipeline, in a function
    with a `linformer.lengths` argument: every single-result linalg op whose
    result holds tokens (the analysis the CPU's workgroup tiling uses:
    forwards from the `linformer.sequence` arguments, a parallel token loop
    keeps them, a reduction over it ends them) gets
    `linformer.token_loops = array<i64: batch loop, token loop>`. The
    attribute travels with the op through bufferization; the code
    generators that map it onto blocks read it (the staged contractions of
    linformer-cuda-tensor-core-contractions: their blocks enumerate
    sequence-major tiles of tokens) and record the kernel's length rule.
    An attention core is marked with q's (batch, token) dimensions: the
    staged core then orders its blocks (sequence, query block, head) and
    records a rule too. Without a lengths argument nothing is marked: every
    block runs.

    Rows of pooled slots (windows of w tokens: the window sums, their
    means, the projections of them) are marked only where every reader is
    a fused attention core taking them as keys, values or key mask with
    its token bound's window w (it stops at the first step past the slots
    that can be valid), or another such op, and the slots cover n exactly.
    They also get `linformer.cuda_slot_rows = array<i64: w, g>`: their
    rule counts a slot as w tokens and launches whole granules of g slots,
    g the largest of 64, 32 and 16 dividing k, so that every step of 16 to
    64 slots the core reads was written (cuda::tokenRowsRule). A slot read
    anywhere else (a core lowered to linalg ops, `--cuda-fuse-core=0`) runs
    every block.
  }];
}

def LinformerCUDAFuseElementwisePass
    : Pass<"linformer-cuda-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "fuses elementwise producers into their consumers, not into contractions";
  let description = [{
    On tensors, before bufferization in the CUDA pipeline, where each
    remaining linalg op becomes one kernel: upstream's elementwise fusion
    patterns (`linalg::populateElementwiseOpsFusionPatterns`) move dtype
    extensions, GELU, residual adds, the softmax's exponentials and similar
    producers into the ops that read them, so their results are never
    written to device memory. Contractions take dtype extensions only (a
    bf16 weight's `extf`, moved across a `tensor.expand_shape` such as the
    head split to meet its reader): they stay multiply-adds of extended
    operands, which the tensor-core path matches and reads as stored. An
    extension several ops read is cloned for each (before fusing, and
    again after, since fusing an op into its readers hands them its
    extensions: the model input's, through the residual add into the
    LayerNorm's statistics): fusing a producer that still has other
    readers makes upstream keep its value as a second result of the fused
    op, which is then no contraction.

    A guarded extension (casts, compares and selects only: the padding
    mask applied to E) is cloned for each reader that is no contraction
    too, and fuses into those. The contractions share the op, which
    linformer-cuda-tensor-core-contractions has each compute as it loads
    the operand. E's row sums read E and the lengths instead of an f32
    copy of E per sequence.

    Any other producer fuses only when every reader takes it (none is a
    contraction, a reshape or the result). One reader that needs it in
    memory means it is written anyway, and the readers that fused it would
    recompute it from its inputs instead of reading it: in an encoder, each
    LayerNorm's statistics and the next layer's projections recomputed the
    residual chain through every earlier layer's LayerNorms (layer 4's Q
    projection took 33 operands and missed the tensor cores).

    First, a `linalg.fill` that several ops write into (their init) is
    cloned for each, of its own `tensor.empty`, right before it: the
    projected keys' and values' GEMMs shared one zero fill, which only the
    first (right after it) had absorbed by its accumulators; the other read
    a buffer that a fill kernel wrote (bench layer: 7 -> 6 kernels).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LinformerCUDASinkConstantsPass
    : Pass<"linformer-cuda-sink-constants", "::mlir::ModuleOp"> {
  let summary = "constant-like ops a gpu.launch uses, cloned into it";
  let description = [{
    Before `gpu-kernel-outlining`, after `gpu-launch-sink-index-computations`
    (which sinks `arith.constant` and a few index ops, not other dialects'
    constants): every constant-like op defined outside a `gpu.launch` and
    used inside it (`llvm.mlir.poison`, the empty struct a wgmma's
    accumulators are inserted into; canonicalization hoists such ops to the
    function's entry) is cloned into the launch body, so that the kernel
    makes it instead of taking it as an argument the host would have to
    produce.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def LinformerCUDAExternDynamicSharedPass
    : Pass<"linformer-cuda-extern-dynamic-shared", "::mlir::gpu::GPUModuleOp"> {
  let summary = "dynamic shared memory as an extern array, as nvcc declares it";
  let description = [{
    After `convert-gpu-to-nvvm`: the symbol `gpu.dynamic_shared_memory`
    lowers to is an internal zero-length array in the shared address space,
    which the NVPTX back end emits as a one-byte static shared variable
    (`.shared .b8 __dynamic_shmem__0;`, reported by ptxas as 1 byte of
    static shared memory). This pass makes every such array an external
    declaration instead, emitted as `.extern .shared .align 1024 .b8
    NAME[];`: what nvcc writes for `extern __shared__ __align__(1024) char
    smem[];`, whose size is the launch's dynamic shared memory alone. The
    1024-byte alignment is a 128-byte swizzle's repeat: wgmma swizzles by
    the address bits, and a staged contraction's swizzled buffers start
    at the array's start or a multiple of 1024 bytes past it.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LinformerCUDAPlanLaunchesPass
    : Pass<"linformer-cuda-plan-launches", "::mlir::ModuleOp"> {
  let summary = "records the host function's launches as the runtime's plan";
  let description = [{
    Runs after `gpu-kernel-outlining`. The runtime does not run host code:
    it allocates the buffers and replays the launches this pass records on
    each entry function as `linformer.dispatch_plan` (each launch's name,
    grid, block, dynamic shared bytes, workgroups and the buffer ids it
    takes, in launch order, and the bytes of each `memref.alloc`), with
    buffer ids as in the CPU plan: the entry's arguments, then the
    intermediates. Views (`memref.expand_shape`, `collapse_shape`, `cast`)
    bind their source buffer. Any other host op (a loop, a load) is an
    error at that op: it would touch device memory from the host, but for
    length variants: an `scf.if` marked `linformer.length_guard` T (from
    `linformer-cuda-tensor-core-contractions`) is planned branch by branch,
    each launch in it recording the longest lengths it runs for
    (`max_length = [lo, hi]`: at most T in the then-branch, more in the
    else, nested guards narrowing it; the main branch's hi is n, the
    `linformer.sequence` argument's length), and the ops that compute its
    condition from the lengths are left to the runtime, which evaluates
    the ranges itself. A buffer allocated inside a guard, or a guard whose
    T is not in [1, n), is an error. Every
    launched kernel is moved into one `gpu.module` named `<entry>_kernels`,
    renamed `<entry>_kernel_<i>` after its launch, so the artifact carries a
    single PTX module.

    Occupancy (`blocks-per-sm` > 1, with `sm`): each kernel is meant to run
    that many blocks an SM at once where the target's threads and shared
    memory per SM allow it (the driver's 1 KiB per block counted). The
    kernel gets `nvvm.minctasm` (PTX `.minnctapersm`), so ptxas must fit
    its registers to that many blocks or spill (which the tests refuse),
    and its plan entry records `blocks_per_sm`; the register budget
    `linformer-compile` writes for ptxas follows it.

    Each launch also records the buffers it may write (`writes`; it only
    reads the others), for the runtime's graph branches
    (`lf_session_options.cuda_graph_branches`), which order two kernels
    only where one writes what the other binds: every write effect in the
    kernel is traced back through views to the argument it writes; stores
    into the kernel's own buffers (shared memory, private arrays) write
    none; barriers, shuffles, MMAs (the warpgroup MMAs this compiler
    writes as inline assembly, marked `linformer.cuda_host_wgmma`,
    included), cp.async and wgmma bookkeeping and approximate math
    intrinsics write nothing; an op whose effects are unknown (other
    inline assembly), or a write it cannot trace, makes every buffer
    written.

    Initializers (`initializers`): a launch that computes the same values in
    every run, from the weights alone, is marked `initializer`, and the
    runtime runs it once, when a session is created, instead of in every
    run (the CPU's packed weight panels are such kernels; on CUDA, E's row
    sums of a model without lengths, which a 65536-token E makes a 32 MiB
    read). Found as a fixed point over the plan: a launch with no length
    rule or variant, whose every bound argument is a weight
    (`isWeightArgument`) it does not write, and every bound intermediate is
    written only by such launches, each of which comes before every other
    launch that binds it (so no run's kernel sees it half made). What they
    write becomes the session's constants.
  }];
  let options = [
    Option<"sm", "sm", "int64_t", /*default=*/"90",
           "the target's compute capability x 10 (its limits per SM)">,
    Option<"blocksPerSM", "blocks-per-sm", "int64_t", /*default=*/"1",
           "blocks of each kernel an SM should hold at once, where they "
           "fit (1: no request)">,
    Option<"initializers", "initializers", "bool", /*default=*/"false",
           "launches that read only weights (and what such launches wrote) "
           "run once per session, as initializers">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::linformer::LinformerDialect"];
}

def LinformerCUDANarrowIntermediatesPass
    : Pass<"linformer-cuda-narrow-intermediates", "::mlir::func::FuncOp"> {
  let summary = "f32 buffers whose every reader rounds them to bf16 / f16 become 16-bit";
  let description = [{
    The CUDA pipeline's 16-bit narrowing (`linformer-cuda-pipeline{mma=bf16}`
    or `f16`, not with `mma-exact` emulation, which rounds nothing), on
    memrefs right before `linformer-cuda-tensor-core-contractions`. When
    the buffer a contraction's results end in (C, or the output of its
    epilogue: the elementwise op right after it that the tensor-core pass
    runs on the accumulators) is an f32 allocation and every read of the
    values it leaves there (the uses up to the buffer's deallocation or the
    next op that overwrites all of it: buffers are reused, every layer's FFN
    writes one hidden buffer) is an input of a contraction the tensor-core
    pass maps or q, key or value of an attention core that runs on
    tensor cores (both round it to the operand type as they load it), the
    readers read a 16-bit twin of the buffer instead, extending it in
    their body as they extend a 16-bit weight, and the results are stored
    rounded into the twin: the epilogue's output becomes the twin and its
    body rounds what it yields, or, without an epilogue, a new one does,
    a rounding copy of C into the twin. That op is marked
    `linformer.narrowed`: the values left in C are read by it alone, and
    the tensor-core pass absorbs it even where C has other users. The same
    bits reach the readers, with half the bytes. The core's output gets
    the same treatment (its expansion rounds what it stores, and its
    operands on buffers may each have their own float type). In the default
    bf16 encoder: the FFN's hidden layer, q, the projected keys and
    values, and the core's output.

    An elementwise op that writes all of an f32 allocation (not a
    contraction's epilogue) gets the same treatment for its rounding
    readers: where every read of what it leaves rounds, it writes the twin
    instead (E under the padding mask, read only by E X; the f32 buffer
    goes); where other reads take the values as f32 too, it writes both, the
    twin as a second output and its body yielding the value and its
    rounding, and only the rounding readers read the twin (a post-norm
    LayerNorm's output: the next layer's projections, E X and the FFN's
    first contraction multiply it, the residual add and the next
    LayerNorm's statistics read it as f32). A buffer some op reads and
    writes after it (an accumulation), or reads through a view, keeps f32.

    ```mlir
    // A LayerNorm's output, read by a contraction and as f32:
    linalg.generic {...} ins(...) outs(%t, %t16 : memref<64x16xf32>, memref<64x16xbf16>) {
    ^bb0(..., %out: f32, %out16: bf16):
      ...
      %r = arith.truncf %v : f32 to bf16
      linalg.yield %v, %r : f32, bf16
    }
    // The hidden layer, read only by the FFN's second contraction:
    linalg.generic {...} ins(%h : memref<64x32xf32>) outs(%h16 : memref<64x32xbf16>)
        attrs = {linformer.narrowed} {
    ^bb0(%in: f32, %out: bf16):
      %r = arith.truncf %in : f32 to bf16
      linalg.yield %r : bf16
    }
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "bf16 or f16: the tensor cores' operand type">,
    Option<"warpTilesM", "warp-tiles-m", "int64_t", /*default=*/"4",
           "as linformer-cuda-select-schedules takes it (which "
           "contractions the warp tiles map)">,
    Option<"warpTilesN", "warp-tiles-n", "int64_t", /*default=*/"4",
           "as linformer-cuda-select-schedules takes it">,
    Option<"elementwise", "elementwise", "bool", /*default=*/"true",
           "also give twins to the outputs of elementwise ops (a "
           "LayerNorm's), written as a second output where other readers "
           "take f32; off: contractions' and cores' outputs only">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::linformer::LinformerDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LinformerCUDASelectSchedulesPass
    : Pass<"linformer-cuda-select-schedules", "::mlir::func::FuncOp"> {
  let summary = "a #linformer.cuda_schedule for every contraction the warp tiles map";
  let description = [{
    The CUDA pipeline's schedule selection, on memrefs right before
    `linformer-cuda-tensor-core-contractions` (and after
    `linformer-cuda-narrow-intermediates`, whose 16-bit buffers decide
    which operands cp.async can copy): every contraction that pass maps
    gets `linformer.cuda_schedule`, a `#linformer.cuda_schedule` with
    - its warp block: the most 16 x 8 tiles up to `warp-tiles-m` x
      `warp-tiles-n` that divide its innermost m and n extents;
    - split-K: parts of a single reduction (powers of two, up to 64, at
      least 16 k steps each) while the parts' warps stay within
      `split-k-warps` (the pipeline: 8 an SM of the target);
    - staging (bf16 / f16 / f32 SIMT; `shared-bytes` > 0): the most warps
      of a block, up to `block-warps` and 4 along n, whose block tile
      divides m and n, and the longest chunk up to `chunk-k` that divides
      a part's k range and fits; two buffers (`prefetch`) when both fit
      and a thread's copy is unrolled and at most 16 words; cp.async for
      an operand loaded as it is staged (`async-copy`: a 16-bit buffer of
      the operand type, identity layout, copied along runs), and
      `async-stages` buffers when both are and they fit; A's fragments by
      ldmatrix where its buffer is k-major (`ldmatrix`); B in its own
      [k][n] layout where its copy reads runs along n (`ldmatrix-trans`);
    - wgmma (`wgmma`, when both operands go by cp.async): planned again as
      one row tile a warp by up to `wgmma-tile-n` / 8 column tiles (16 by
      default: m64n128 a warpgroup; 32, m64n256), the block's warps all
      along m in warpgroups of 4, chunks of 64, 32 or 16 k; with
      `wgmma-in-flight` 1 and 3 buffers or more, `in_flight = 1` (a
      chunk's batch left running past it); `swizzle` from
      `wgmma-swizzle` (128 by default: 128-byte swizzled atoms wherever
      an operand's lines are that long).

    A staged token contraction (`linformer.token_loops`, its batch loop the
    only folded row dimension and its token loop the innermost m: its
    blocks have a length rule) also gets `linformer.cuda_length_splits`,
    `array<i64: T1, S1, T2, S2, ...>`: for the longest lengths T = n/2,
    n/4, ... down to one block's rows, the split-K the same rule gives
    when only the blocks that hold T tokens run, where it differs from
    the one before (at most 3): a run whose sequences are all at most T
    long runs split S (linformer-cuda-tensor-core-contractions builds each
    as a length variant). Not for wgmma plans. A schedule file's record
    gives its own (`"length_splits": [[T, S], ...]`, as --print-schedule
    writes them; none without it), checked: T decreasing in [1, n), S a
    power of two up to 64 that cuts k into whole chunks.

    A contraction without a schedule stays on the plain path: SIMT
    (`precision=f32`) has no unstaged tiles. TF32 (and 3xTF32) stages f32
    pairs as SIMT does, without ldmatrix, its .trans layout, cp.async or
    wgmma (a record asking for them is refused).

    With `precision=bf16` or `f16`, every `linformer.attention_core` that
    runs on tensor cores (on buffers; query rows, slots and head width in
    whole 16s) gets `linformer.cuda_core_schedule`, a
    `#linformer.cuda_core_schedule` that
    `linformer-cuda-expand-attention-core` applies: a block of the most
    16-row query tiles up to `core-warps` that divide n / 16; `core-slots`
    slots a step of the online softmax, halved until they divide k;
    staged when one (b, h)'s keys and values fit `core-shared-bytes`
    (k (d/2 + 4) + d (k/2 + 4) words; wgmma's unpadded layout, k d
    words); wgmma (`wgmma`) when the block's warps make whole warpgroups
    and the slots and head width are at most 256, else ldmatrix
    (`core-ldmatrix`); and the most query groups a staged block walks
    after one copy, up to `core-groups`, that divide its head's and keep
    `core-min-blocks` blocks; `core-tiles` query tiles a warp where they
    pair up and the core is not on warpgroup MMAs (else 1).

    Every other attention core (f32 products, on buffers, head-wide) gets
    `linformer.cuda_f32_core_schedule`, a `#linformer.cuda_f32_core_schedule`
    that `linformer-cuda-expand-attention-core` applies: `core-rows` query
    rows a thread where n is a multiple of 32 of them (else 1), and
    `core-lanes` lanes a row, or where 0: 4, or with one row a thread 8
    where 4 would leave fewer than 256 threads for each of
    `core-min-blocks` blocks; 1 where the lanes do not divide the head
    width or n is no multiple of 32.

    `schedule-file`: a JSON file `{"format": "linformer-cuda-schedules",
    "kernels": [ {"key": ..., "schedule": "#linformer.cuda_schedule<...>"} ] }`
    whose records replace the choice for each contraction of the same key
    (`contractionKey`: iterators, loops, indexing maps, operand types) and
    each attention core (`attention_core/BxHxNxDxK/` and its operand
    types, a `#linformer.cuda_core_schedule` on tensor cores, a
    `#linformer.cuda_f32_core_schedule` otherwise); a
    record that does not fit its contraction is an error that says why, one
    that matches none a warning. The function gets `linformer.cuda_schedules`,
    every contraction's key, schedule and source ("selected" or "file"), in
    order, then every core's: what `linformer-compile --target=cuda
    --print-schedule` prints. The
    tensor-core pass's description says what each choice builds.

    ```mlir
    linalg.generic {...} ins(%x, %w : memref<128x64xbf16>, memref<64x128xbf16>)
        outs(%c : memref<128x128xf32>) attrs = {linformer.cuda_schedule =
        #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1,
        warps = [2, 4], chunk = 16, buffers = 2, async = [true, true],
        natural_b = true, ldmatrix_a = true, wgmma = false>} {...}
    ```
  }];
  let options = [
    Option<"scheduleFile", "schedule-file", "std::string", /*default=*/"\"\"",
           "a CUDA schedule file (as linformer-compile --target=cuda "
           "--print-schedule writes it): its records replace the choice "
           "for contractions with the same key">,
    Option<"precision", "precision", "std::string", /*default=*/"\"tf32\"",
           "tf32 (m16n8k4), tf32x3 (m16n8k4 on each operand's TF32 head "
           "and tail, three a step), bf16 or f16 (m16n8k16 on rounded "
           "operands), "
           "or f32 (SIMT: staged f32 pairs, fma by each lane; staged "
           "contractions only)">,
    Option<"exact", "exact", "bool", /*default=*/"false",
           "the exact emulation's f32 words (staged f32 pairs, as the "
           "tensor-core pass's emulate exact stages them)">,
    Option<"warpTilesM", "warp-tiles-m", "int64_t", /*default=*/"4",
           "16-row mma tiles a warp computes, at most (1, 2, 4 or 8)">,
    Option<"warpTilesN", "warp-tiles-n", "int64_t", /*default=*/"4",
           "8-column mma tiles a warp computes, at most (1, 2, 4 or 8)">,
    Option<"splitKWarps", "split-k-warps", "int64_t", /*default=*/"1024",
           "split a single reduction into parts (powers of two, up to 64, "
           "each at least 16 k steps) until the warps reach this many; 0: "
           "never">,
    Option<"sharedBytes", "shared-bytes", "int64_t", /*default=*/"0",
           "bf16 / f16: blocks of warps share A and B through this much "
           "shared memory at most, a chunk of k at a time; 0: every warp "
           "loads its own fragments">,
    Option<"blockWarps", "block-warps", "int64_t", /*default=*/"8",
           "with shared-bytes: warps in a block, at most">,
    Option<"chunkK", "chunk-k", "int64_t", /*default=*/"16",
           "with shared-bytes: k values a block copies at a time, at most "
           "(16, 32 or 64; less where it does not divide or fit)">,
    Option<"prefetch", "prefetch", "bool", /*default=*/"false",
           "with shared-bytes: two buffers, and each chunk's loads issued "
           "during the previous chunk's mma (one barrier a chunk)">,
    Option<"ldmatrix", "ldmatrix", "bool", /*default=*/"false",
           "with shared-bytes: A's fragments read with ldmatrix.x4 (one a "
           "tile and k step) when its buffer is k-major">,
    Option<"ldmatrixTrans", "ldmatrix-trans", "bool", /*default=*/"false",
           "with shared-bytes: B staged in its own [k][n] layout when its "
           "copy reads runs along n (copied as loaded), its fragments read "
           "with ldmatrix.x4.trans (two column tiles a k step); not for "
           "precision=f32">,
    Option<"asyncCopy", "async-copy", "bool", /*default=*/"false",
           "with prefetch, bf16 / f16: an operand loaded as staged (16-bit, "
           "identity layout, staged as runs) copied with cp.async straight "
           "into the other buffer during the mma (no registers)">,
    Option<"asyncStages", "async-stages", "int64_t", /*default=*/"2",
           "with async-copy: buffers a block keeps when both operands are "
           "copied with cp.async and they fit (chunks up to this many - 1 "
           "ahead in flight; at least 2)">,
    Option<"wgmma", "wgmma", "bool", /*default=*/"false",
           "with async-copy, bf16 / f16 (sm_90a): a contraction whose "
           "operands both go by cp.async (k-major A; k-major or natural B) "
           "runs as warpgroup MMAs (wgmma.mma_async m64nNk16) reading "
           "both from shared memory in wgmma's canonical layout; an "
           "attention core whose block's warps make whole warpgroups, "
           "likewise (staged)">,
    Option<"wgmmaInFlight", "wgmma-in-flight", "int64_t", /*default=*/"0",
           "with wgmma, a staged contraction of 3 buffers or more leaves "
           "this many batches of warpgroup MMAs running past a chunk (0 or "
           "1: wgmma.wait_group 1, the copies one chunk less ahead)">,
    Option<"wgmmaTileN", "wgmma-tile-n", "int64_t", /*default=*/"128",
           "with wgmma, the widest n of a staged contraction's warpgroup "
           "tile (64, 128 or 256: wgmma.mma_async m64nNk16 with N up to "
           "this, as the contraction's n divides)">,
    Option<"wgmmaSwizzle", "wgmma-swizzle", "int64_t", /*default=*/"128",
           "with wgmma, the widest swizzle (bytes: 32, 64 or 128; 0 none) "
           "of a staged contraction's core-layout buffers (swizzle): "
           "each operand takes the widest up to this its lines allow">,
    Option<"pairStores", "pair-stores", "bool", /*default=*/"true",
           "schedules store a lane's two adjacent columns of C as one "
           "2-element vector where C's layout allows (pair_stores); off: "
           "one store an element">,
    Option<"coreSharedBytes", "core-shared-bytes", "int64_t",
           /*default=*/"0",
           "attention cores: shared memory a block may stage its (b, h)'s "
           "projected keys and values in (0: warps read them from global "
           "memory)">,
    Option<"coreWarps", "core-warps", "int64_t", /*default=*/"8",
           "attention cores: warps (16 query rows each) a block, at most">,
    Option<"coreSlots", "core-slots", "int64_t", /*default=*/"32",
           "attention cores: slots a step of the online softmax: 16, 32 or "
           "64 (halved until it divides k)">,
    Option<"coreGroups", "core-groups", "int64_t", /*default=*/"1",
           "attention cores, staged: query groups (warps x 16 rows) a block "
           "walks after one copy of its keys and values, at most">,
    Option<"coreTiles", "core-tiles", "int64_t", /*default=*/"1",
           "attention cores on tensor cores (not wgmma): query tiles of 16 "
           "rows a warp takes at once, 1 or 2 (each key and value fragment "
           "feeds both)">,
    Option<"coreMinBlocks", "core-min-blocks", "int64_t", /*default=*/"0",
           "attention cores, with core-groups: keep at least this many "
           "blocks">,
    Option<"coreLdmatrix", "core-ldmatrix", "bool", /*default=*/"false",
           "attention cores, staged: the keys' and values' B fragments read "
           "with ldmatrix (one x4 for two mma's registers)">,
    Option<"coreLanes", "core-lanes", "int64_t", /*default=*/"0",
           "f32 attention cores: lanes a query row, 1, 4, 8 or 16 (0: "
           "chosen)">,
    Option<"coreRows", "core-rows", "int64_t", /*default=*/"2",
           "f32 attention cores: query rows a thread, 1, 2 or 4 (1 where n "
           "is no multiple of 32 of them)">,
  ];
  let dependentDialects = ["::mlir::linformer::LinformerDialect"];
}

def LinformerCUDAAbsorbInitEpiloguePass
    : Pass<"linformer-cuda-absorb-init-epilogue", "::mlir::func::FuncOp"> {
  let summary = "what each scheduled contraction's warp tiles take over: "
                "the init writer before it, the epilogue after it";
  let description = [{
    The CUDA pipeline's step between `linformer-cuda-select-schedules` and
    `linformer-cuda-length-variants`: the fusion decision of the
    tensor-core path, made once and recorded on the contraction as
    `linformer.cuda_absorbs = #linformer.cuda_absorption<init = ...,
    epilogue = ...>` (any old one replaced). `linformer-cuda-length-variants` copies
    what it names into each variant's branch, and
    `linformer-cuda-tensor-core-contractions` applies it: its warp tiles
    compute the absorbed ops' values and the ops go. A scheduled
    contraction without the attribute absorbs nothing.

    - `init`: the op right before the contraction (past ops that touch no
      memory) writes all of C elementwise from other buffers, with a pure
      body that uses nothing from outside but constants (a bias
      broadcast, the bias times E's row sums), or is a `linalg.fill` or a
      copy of a constant fill (bufferization starts each reduction from a
      copy of one zero tensor): the accumulators start from its values.
    - `epilogue`: the op right after it is elementwise over C's shape and
      reads C only at the element it writes (GELU after the FFN's first
      projection, a residual add), into C or a buffer of its own; with
      its own buffer, C's values must be read by it alone (C has no other
      user than the contraction, the init writer and deallocations) or it
      is the rounding copy of `linformer-cuda-narrow-intermediates`
      (`linformer.narrowed`); and its output is none of the contraction's
      inputs (a buffer bufferization reused once the contraction is its
      last reader: the stores would overwrite rows still being read).

    Ops that do not fit stay kernels of their own. Only contractions that
    carry a `linformer.cuda_schedule` are looked at.

    ```mlir
    linalg.generic {...} ins(%bias : memref<512xf32>) outs(%c : ...) {...}
    linalg.generic {..., linformer.cuda_schedule = #linformer.cuda_schedule<...>,
        linformer.cuda_absorbs = #linformer.cuda_absorption<init = true,
                                                           epilogue = true>}
        ins(%x, %w : ...) outs(%c : ...) {...}
    linalg.generic {...} ins(%c : ...) outs(%h : ...) {... gelu ...}
    ```
  }];
  let dependentDialects = ["::mlir::linformer::LinformerDialect"];
}

def LinformerCUDALengthVariantsPass
    : Pass<"linformer-cuda-length-variants", "::mlir::func::FuncOp"> {
  let summary = "a token contraction's split-K variants for shorter runs, "
                "in guards on the longest length";
  let description = [{
    The CUDA pipeline's step between `linformer-cuda-select-schedules` and
    `linformer-cuda-tensor-core-contractions`. A staged contraction with
    `linformer.cuda_length_splits` (pairs [T, S], T decreasing: when the
    run's longest sequence has at most T tokens its length rule leaves
    fewer blocks, and split-K S fills the GPU again) becomes nested
    `scf.if`s on the run's longest length (the largest of the
    `linformer.lengths` argument, computed once at the function's start),
    each marked `linformer.length_guard` T: the then-branch (longest <= T)
    holds the shorter variants, the outermost else the schedule's own
    split. Each branch holds a copy of the contraction whose schedule has
    that branch's split, marked `linformer.length_variant` (0 for the
    schedule's own, i for the i-th pair), with copies of the ops the
    tensor-core rewrite absorbs into it (the init writer right before it,
    the epilogue right after it, as its `linformer.cuda_absorbs` says),
    so that each variant is rewritten on its own. The
    runtime evaluates the guards (linformer-cuda-plan-launches records
    them) and launches one variant's kernels.

    Errors: length splits on a contraction without a staged
    `linformer.cuda_schedule`, pairs that are not [T, S], or a function
    without a `linformer.lengths` argument.

    ```mlir
    // Before: linformer.cuda_length_splits = array<i64: 256, 2, 128, 4>
    linalg.generic ... {linformer.cuda_schedule = #linformer.cuda_schedule<
        warp_tiles = [4, 4], split = 1, ...>, ...}
    // After (abridged)
    %longest = scf.for ... // the largest length
    scf.if (%longest <= 256) {
      scf.if (%longest <= 128) {
        linalg.generic ... {linformer.length_variant = 2, ... split = 4 ...}
      } else {
        linalg.generic ... {linformer.length_variant = 1, ... split = 2 ...}
      } {linformer.length_guard = 128}
    } else {
      linalg.generic ... {linformer.length_variant = 0, ... split = 1 ...}
    } {linformer.length_guard = 256}
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linformer::LinformerDialect"];
}

def LinformerCUDATensorCoreContractionsPass
    : Pass<"linformer-cuda-tensor-core-contractions", "::mlir::func::FuncOp"> {
  let summary = "f32 contractions as warp tiles of mma.sync (TF32, BF16 or F16)";
  let description = [{
    The CUDA pipeline's tensor-core path (`linformer-cuda-pipeline{mma=...}`,
    `linformer-compile --target=cuda --cuda-mma=...`), on memrefs before
    `convert-linalg-to-parallel-loops`. Every contraction into f32
    `linalg.generic` (C += A * B with projected-permutation maps, A and B
    f32 or bf16/f16 data the body extends, nothing else in it; dimensions
    from `linalg::inferContractionDims`; innermost m, n and k extents
    divisible by 16, 8 and the instruction's depth) that carries a
    `linformer.cuda_schedule` (`linformer-cuda-select-schedules` chooses
    them; the options named below are that pass's) is rewritten as its
    schedule says, and one whose schedule does not fit it is an error
    that says why. It becomes one `scf.parallel`
    over (warp rows, warp columns, 32 lanes): each warp computes a block of
    `warp-tiles-m` x `warp-tiles-n` 16x8 tiles of C (the schedule's
    `warp_tiles`), loads its accumulator fragments once, steps k with one
    mma.sync per tile, reusing each A fragment across the block's columns
    and each B fragment across its rows, and stores the fragments back.

    - `precision=tf32`: `nvgpu.mma.sync` m16n8k4 (`tf32Enabled`: inputs
      rounded to TF32, products and sums in f32); expect normwise relative
      errors near 1e-3.
    - `precision=bf16` / `f16`: `nvvm.mma.sync` m16n8k16, each operand
      rounded to nearest even to bf16 / f16 as its fragment is loaded
      (packed two to a register), f32 accumulation; expect ~1e-2 (bf16) or
      ~2e-3 (f16).

    Batch and outer m dimensions fold into the row tiles, outer n dimensions
    into the column tiles (the grid has three dimensions); outer k
    dimensions become loops.

    Split-K: a contraction with a single reduction and fewer warps than
    `split-k-warps` (E X: a 256 x 512 output over an n-long reduction, 64
    warps) has its k loop cut into parts (powers of two up to 64, at least
    16 k steps each, as many as keep the parts' warps within
    `split-k-warps`: one that nearly fills the GPU alone, the Q projection
    and the FFN's second GEMM at n = 4096 with 1024 warps for 1056, is not
    split, since doubling its warps would buy little and write and read
    back two f32 copies of C); each part's warps write partial sums into a new
    buffer `[parts] + C's shape`, and a second loop adds them to C in part
    order (deterministic, unlike atomics). With `split-k-in-kernel` (the
    pipeline's default) a staged contraction's parts are added in its own
    kernel instead: each block, once its threads have stored their part's
    sums, fences them (GPU scope), meets the block at a barrier, and thread
    0 counts the part with an atomic add on the tile's i32 counter (a new
    buffer, one a block tile; intermediates start zeroed); the block that
    counts the last part fences again, adds the tile's parts to C in part
    order (the same values as the second loop: its threads take the tile's
    elements in turn, a warp 32 consecutive columns), through the
    epilogue, and sets the counter back to zero for the next launch. One
    kernel instead of two, no grid of its own for the sums. Unstaged
    contractions keep the second loop.

    Length variants: `linformer-cuda-length-variants`, run before, puts a
    contraction with `linformer.cuda_length_splits` in nested `scf.if`s,
    a copy a split; each copy (`linformer.length_variant` i) is rewritten
    here as any contraction, its partial sums allocated before the
    outermost guard in variant order, and freed after it. A staged
    contraction whose rows are tokens numbers its blocks (sequence, token
    tile, part, block column) with a length rule, so that the blocks of
    real tokens are a prefix of block x at every split; its sums' loop is
    marked `linformer.token_loops` (C's batch and token dimensions) for
    `linformer-cuda-tile-parallel-loops` to give it a rule too.

    What it absorbs is what its `linformer.cuda_absorbs` says
    (`linformer-cuda-absorb-init-epilogue` chose it; without one, nothing;
    one that names an op that is not there is an error that says which):

    C's initial values: when the op right before the contraction (past
    ops that touch no memory) writes all of C elementwise from other
    buffers, with a pure body that uses nothing from outside but constants
    (a bias broadcast, the bias times E's row sums, a constant fill), the
    accumulators (and split-K's sum) compute those values from its
    operands, and the op, a kernel that wrote C only for the contraction
    to read it back, goes. An op that reads C stays.

    C's final values: when the op right after the contraction is
    elementwise over C's shape and reads C only at the element it writes
    (GELU after the FFN's first projection, in place or into a buffer of
    its own when C has no other user), its body runs on the accumulators
    as they are stored and the op goes.

    Masked operands: when an operand's buffer is written only by a guarded
    extension (converts, compares and selects: the padding mask applied to
    E, `n < lengths[b] ? E[k, n] : 0`, broadcast over the batch into an
    f32 [b, k, n]) whose inputs are function arguments nothing writes, and
    only contractions after it read it (every layer's E X, with layerwise
    sharing), each one's loads compute its values from those inputs (a
    compare and a select a value), and the op and its buffer go with the
    last of them: at B = 16, n = 4096 that buffer was 64 MiB written and
    read back. A staged copy computes a unit of such an operand from
    vectors when its contiguous dim is that of every input that has it (E
    and a [b, n] mask along n, loaded as one vector each, 16 bytes at most:
    8 bf16 values of E a unit; the lengths as one scalar), instead of one
    2-byte load a value.

    16-bit intermediates: linformer-cuda-narrow-intermediates, run before
    this pass, gives a contraction whose readers all round its results a
    16-bit twin to store them in, through an epilogue marked
    `linformer.narrowed` (absorbed as any epilogue, even where C is a
    reused buffer with other users); the stores round them.

    Other ops, and contractions whose sizes do not
    divide or whose folded tiles exceed a grid dimension (65535), stay on the
    plain path.

    Staging (`shared-bytes` > 0, bf16 / f16): the warps of a block share
    their operands. Up to `block-warps` warps (at least 2; up to 4 along n,
    so 8 warps of 64 x 32 make a 128 x 128 block tile of C, which must
    divide the innermost m and n extents) run as one pre-mapped nest
    (block x; warps on thread y, lanes on thread x) around the k loop: per
    chunk of `chunk-k` k values (or fewer, down to 16, where the buffer
    does not fit or the chunk does not divide the k range; 16 by default:
    ptxas then holds every staged GEMM of the default bf16 encoder but one
    to 128 registers, two 256-thread blocks an SM), all threads copy the block's A rows and B
    columns into `gpu.dynamic_shared_memory`, rounded and packed two
    k-adjacent values to a word (a fragment register), meet at
    `gpu.barrier`, run the chunk's mma steps reading each fragment
    register as one shared-memory word, and meet again before the next
    copy. A copy thread reads consecutive addresses along the operand's
    contiguous dimension, up to 8 words in flight; the buffer's layout
    follows it (k-major rows of chunk/2 + 4 words, or pair-major rows of
    rows + 8 words), so stores and fragment loads are free of bank
    conflicts. An identity-layout operand whose contiguous dimension is k
    or its rows moves in units of up to 4 words, every thread as many:
    a k-major unit is one aligned vector load of 2 x 4 values, any other
    two of 4 values (the pair's two k rows, interleaved into the words),
    16 bytes at most, and the unit's words are one vector store (the bf16
    encoder's weights and activations: one 16-byte or two 8-byte global
    loads and one 16-byte shared store for 4 words, where each word took
    one or two global loads and a store). Each operand is read
    from device memory once a block instead of once a warp. Split-K parts
    are blocks too. A contraction that has no such block keeps the
    unstaged tiles.

    TF32 and 3xTF32 (`precision=tf32`, `tf32x3`): the SIMT block's buffer
    of f32 pairs, and per 8 k values one `mma.sync m16n8k8 .tf32` a tile
    (3xTF32: three, on heads and tails), whose k = t and t + 4 are the
    lane's pair at t (k 2t and 2t + 1 of the 8; A and B take the same
    assignment and the sums run over k in any order): A fragment i the
    words of rows g and g + 8 at pair t (a0 a2 and a1 a3), B fragment j
    column g's word at pair t (b0 b1), each value rounded with cvt.rna as
    it leaves its word.

    SIMT (`precision=f32`, the pipeline's choice without tensor cores):
    the staged tiles with f32 products. Words are f32 pairs (8 bytes, so
    the buffer takes twice the bytes; no ldmatrix, no rounding, no 16-bit
    intermediates), the copies as above; each lane updates the elements of
    C an mma fragment would give it (64 of a 4 x 4 warp block) with two
    `fma` a pair of k values, loading its 2 MT A words and 2 NT B words
    once a pair (a row's word is the same for the lanes of a g, a
    column's for those of a t: broadcasts), in a loop over the chunk's
    pairs (rolled: unrolled, LLVM hoists later pairs' loads and ptxas
    needs 220 registers instead of 127, one block an SM instead of two).
    A contraction that does not stage keeps the plain path (one thread an
    element) under SIMT: there are no unstaged SIMT tiles. The host runs
    the same per-lane code under `emulate`.

    Prefetching (`prefetch`, with staging): when both buffers fit and a
    thread copies at most 16 words a chunk (unrolled), the block keeps two
    buffers and walks its chunks (outer k dimensions included) by one
    index: the first chunk is loaded before the loop, and each iteration
    stores the chunk it holds in registers into buffer `chunk % 2`, issues
    the next chunk's global loads (the last chunk's again at the end, so
    there is no branch), meets the block at its only barrier and runs the
    mma while those loads are in flight. One barrier suffices: the buffer
    an iteration writes was last read two chunks earlier, before the
    previous barrier. The loads precede the barrier so that LLVM cannot
    sink them into the next iteration (InstCombine folds a phi of loads
    into a load of a phi when nothing after them in their block writes
    memory). A warp loads its B fragments for the step first, then each A
    fragment right before its row of mma, so at most 12 fragment registers
    are live: with prefetching every staged GEMM of the default bf16
    encoder fits 128 registers (two 256-thread blocks an SM) on sm_90 and
    sm_80 without spills.

    ldmatrix (`ldmatrix`, with staging): when A's buffer is k-major (rows
    of chunk/2 + 4 words, 16-byte aligned), its fragments are read with
    `nvgpu.ldmatrix` (PTX `ldmatrix.sync.aligned.m8n8.x4.shared.b16`): a
    tile's four registers a k step in one instruction instead of four
    `ld.shared.b32`. Lane L points at row L % 16, pair L / 16 * 4 of the
    step; the 8 rows each phase reads fall in distinct banks (the stride is
    4 mod 8 words). Every A of the encoder's GEMMs is k-major (activations
    and E are read along k).

    ldmatrix.trans (`ldmatrix-trans`, with staging, not SIMT): no B of the
    models is k-major (weights are [in][out], X in E X is [n][d]), so a B
    whose copy reads runs along n is staged in its own [k][n] layout
    instead of pair-major: k rows of rows/2 + 4 words, two n-adjacent
    16-bit values a word (the same size; rows 16-byte aligned, the 8 k
    rows of a matrix in distinct banks). A copy unit is one run of up to 8
    values of a k row, one vector load, its words stored as loaded (no
    pairs of k rows to interleave; a 16-bit B of the operand type is not
    converted at all). Two column tiles' fragments a k step are one
    `nvgpu.ldmatrix` x4 with `transpose` (PTX
    `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16`) from a 16-bit view of
    the buffer (x2 for an odd last tile): lane L points at k row L % 16 of
    tile j + L / 16, and lane (g, t) receives the values of k rows 2t,
    2t + 1 (and 2t + 8, 2t + 9) of column g: B's registers. One base address
    a chunk, constant offsets for the tiles and k steps. The bench layer's
    GEMMs load no `ld.shared` at all then (2 ldmatrix.x4.trans instead of 8
    word loads a k step), but ptxas takes 130-134 registers for the Q/K/V
    projections unforced (124-128 before: one block an SM instead of two)
    unless cp.async takes their prefetch out of registers (below: 120-128).

    cp.async (`async-copy`, with prefetching, bf16 / f16 words): an
    operand that is loaded as it is staged (a 16-bit buffer of the
    operand type with an identity layout, no absorbed extension) into a
    buffer whose units are runs (k-major A, natural B) is copied with
    `nvgpu.device_async_copy` (PTX `cp.async.cg.shared.global` for a
    16-byte unit, `.ca` for 4 or 8 bytes) from a view of the buffer in the
    operand's element type: the bytes land in shared memory without
    passing through registers. The pipelined loop then is: store the
    register-prefetched operands' words (if any) into buffer `chunk % 2`,
    issue their next loads, meet the block at the barrier, issue the next
    chunk's async copies into the other buffer (last read by the previous
    chunk's mma, which every thread finished before this barrier) and
    commit them as a group, run the mma, and wait for the group
    (`cp.async.wait_group 0`), so the next iteration's barrier publishes
    it. Still one barrier a chunk; the copies fly during the mma, as the
    register loads did, but hold no registers, and an async operand needs
    no even share of units. When both operands are async the block keeps
    `async-stages` buffers S where they fit: before the loop chunks
    0 .. S - 2 are issued (a group each) and chunk 0 waited for; iteration
    ci issues chunk ci + S - 1 (the last again past the end: no branch)
    into buffer (ci - 1) % S after the barrier, commits a group and after
    its mma waits
    until at most S - 2 groups are in flight, so chunk ci + 1 has landed. Emulated as a byte copy (the loaded 16-bit
    values bitcast to words, stored at the same index), into the chunk's
    own buffer before its compute.

    Tiles are the same on the host
    (`linformer-cuda-pipeline{on-host mma=...}`, `emulate`):
    `linformer-cuda-emulate-warps` lowers their `mma.sync`, `ldmatrix`,
    `cp.async`, barriers and shared-memory `wgmma` from the PTX ISA's
    layouts once the loops are mapped, so the CPU checks the fragments and
    the descriptors too. With `emulate exact`, TF32 operands are not
    rounded, and 16-bit tiles (whose registers cannot hold a whole
    operand) have each lane compute its C elements in f32 scalars instead:
    staged ones build the same loop nest (warp blocks, folded dimensions,
    lanes, k steps, the accumulator fragments' rows and columns) with each
    lane computing its C elements in f32 scalars instead of the warp-wide
    `mma.sync`. With ldmatrix,
    each lane reads a word where ldmatrix would deliver it from: word
    pair % 4 of the row the lane holding it (8q + g) points register q at,
    so the emulation checks those addresses; with ldmatrix.trans each B
    value likewise, from the k row lane 16 (j % 2) + 2 (pair % 8) + e
    points at, word t, half o (exact emulation keeps f32 pairs along n in
    the same words). A staged nest
    is emulated phase by phase: the copy and the compute of each chunk are
    separate thread loops over a buffer the block allocates, with each
    thread's accumulators kept in memory between them; prefetched, each
    thread's next-chunk words are kept in memory too, and a chunk is three
    thread loops (store into its buffer, load the next chunk, compute).

    wgmma (`wgmma`, sm_90a; bf16 / f16): a contraction whose operands both
    go by cp.async, A k-major and B k-major or natural, is planned as warps
    of one 16-row tile by up to 16 column tiles, every warp of the block
    along m (4 consecutive warps are a warpgroup: 64 rows x 8 NT columns,
    the same accumulator count a thread as the mma.sync plan). Its staged
    buffers take wgmma's canonical layout without swizzling (PTX ISA,
    "Shared Memory Matrix Layout"): core matrices of 8 lines x 16 bytes,
    each 128 contiguous bytes, a line's 16-byte units 128 bytes apart and
    groups of 8 lines 8 x line words apart, so that a copy unit u lands at
    words 4u .. 4u + 3 (consecutive threads, consecutive 16 bytes). A
    line is a row of k-major A or B (k runs along it: LBO 128 bytes, SBO
    32 x line bytes) or a k row of natural B (n along it: LBO 32 x line
    bytes, SBO 128 bytes, B transposed). Each chunk is then, per
    warpgroup, `wgmma.fence`, one `wgmma.mma_async` m64n(8 NT)k16 a k step
    from descriptors of the two buffers (the warpgroup's 64 A rows, every
    B column), a commit and a wait for it before the next barrier; after
    each cp.async wait, `fence.proxy.async.shared::cta` makes the copies
    visible to the tensor cores. Chunks of 64 k where they fit. The
    accumulators are the warpgroup's D fragments: warp w of the group holds
    rows 16 w + g and 16 w + g + 8, columns 8 j + 2 t (+ 1), the m16n8 C
    layout of its one row tile, so the plan's epilogue stores them as it
    stores mma.sync's. Emulated, each lane reads A and B where the layout
    puts them (the same index formula as the copies).

    Stores (the schedule's `pair_stores`, true unless
    linformer-cuda-select-schedules' `pair-stores` is off or a schedule
    file says false): a lane holds C's columns
    2t and 2t + 1 of each tile row, adjacent wherever C's last dimension
    is the n loop alone, contiguous, with an even extent and even strides
    and offset besides; there the two values (through the epilogue and
    rounded, or a split-K part's sums) go as one `vector.store` of two
    elements aligned to their size: one `st.global.v2.f32` (or one 32-bit
    store of two bf16 / f16) instead of two, and a warp's store fills
    each 32-byte sector it touches instead of half of it. Elsewhere (a
    head-split output whose last dimension is another loop) and after an
    epilogue of transcendental math (GELU: two bodies' values live at
    once spilled an f16 FFN kernel at sm_80's 128-register cap), one
    store an element, as with `pair_stores = false`.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"tf32\"",
           "tf32 (m16n8k4), tf32x3 (m16n8k4 on each operand's TF32 head "
           "and tail, three a step), bf16 or f16 (m16n8k16 on rounded "
           "operands), "
           "or f32 (SIMT: staged f32 pairs, fma by each lane; staged "
           "contractions only)">,
    Option<"emulate", "emulate", "bool", /*default=*/"false",
           "for the CPU: the tiles' GPU code, for "
           "linformer-cuda-emulate-warps (with exact: 16-bit tiles in f32 "
           "scalars)">,
    Option<"exact", "exact", "bool", /*default=*/"false",
           "with emulate: no rounding of the operands (checks the tiles' "
           "structure at f32 accuracy; unstaged 16-bit tiles in f32 "
           "scalars)">,
    Option<"sumPartsInKernel", "split-k-in-kernel", "bool",
           /*default=*/"false",
           "staged split-K: the block that stores a tile's last part adds "
           "the parts to C (an i32 counter a tile, zero at set-up, counted "
           "atomically and set back to zero); off: a second loop adds them">
  ];
  let dependentDialects = ["::mlir::nvgpu::NVGPUDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect"];
}

def LinformerCUDAWarpReductionsPass
    : Pass<"linformer-cuda-warp-reductions", "::mlir::func::FuncOp"> {
  let summary = "row sums as one warp a row, lanes on consecutive elements";
  let description = [{
    On memrefs, before `convert-linalg-to-parallel-loops`: a `linalg.generic`
    that sums over its one, innermost reduction dimension (`out + t`, `out`
    used nowhere else; at least 32 steps) into an f32 output indexed by its
    parallel dimensions in order, every input that has the reduction
    dimension having it as its contiguous one (a LayerNorm's mean and
    variance over d_model, E's row sums over n), becomes one `scf.parallel`
    over blocks of up to `warps` rows (a divisor of the row count) around
    one over the block's threads, both mapped (block x; warps on thread y,
    lanes on thread x). Lane l of a row's warp adds the row's elements l,
    l + 32, ... in a register, so a warp's loads are 32 consecutive
    addresses; `gpu.shuffle xor` 16, 8, 4, 2, 1 adds the 32 partial sums,
    and lane 0 adds the total to the output's initial value and stores it.
    A `linalg.fill` of the output with a constant right before (past ops
    that touch no memory) is that initial value instead, and goes.

    The plain path gives a row to one thread, which walks it alone (a
    warp's loads 32 rows apart: 32 cache lines a load) and loads and stores
    the output at every step; at n = 4096 a LayerNorm statistic was 128
    warps on a GPU of 132 SMs.

    On the host (the `cuda-host` tests) the shuffles are lowered by
    `linformer-cuda-emulate-warps`: the CPU runs these loops as they
    are.

    Contractions (whose inputs read the reduction dimension across rows)
    and reductions the tensor-core pass took are left alone.

    Few long rows (E's 256 row sums over n = 65536: 256 warps for 132 SMs,
    each lane 2048 dependent loads and adds, 0.76 ms of a 1.7 ms layer on an
    H200) are split when `split-warps` is set: each row's reduction is cut
    into P parts (a power of two up to 64, each at least 512 steps, rows x P
    within `split-warps`), a warp a part writes its sum into a buffer of
    rows x P partial sums, and a second loop, a warp a row, adds a row's P
    partials (lane p takes partial p) and stores as above. The order is
    fixed, so the result is deterministic.

    A row sum whose reduction stops at the lengths (`linformer.token_bound`
    on its one reduction loop, steps of one token and no parts: E's row
    sums, whose body masks padded tokens; the function's `linformer.lengths`
    argument marked) stops each lane's loop, and each part's, at the row's
    sequence length: a part wholly past it adds nothing.

    Rows over tokens (a row sum marked `linformer.token_loops` whose token
    loop is its last parallel one, the blocks whole tiles of a sequence's
    tokens; LayerNorm's statistics): the unsplit block loop gets the length
    rule of its order (`linformer.cuda_token_rows`: the leading extents and
    the token tiles, tile = the block's rows).

    Two in one kernel (`pairs`): a row sum that reads the output of the row
    sum right before it at its own row only (a LayerNorm's variance reading
    its mean), over the same loops, with nothing in between but
    allocations, ops that touch no memory and its own constant fill, and
    neither split nor stopped at the lengths (the same token loops), runs in
    the first's warps: the butterfly gives every lane the first total, lane
    0 stores it, the lanes add the second's terms with that total where the
    second read the first's output (no load of it; the row read again from
    L1 / L2), a second butterfly, and lane 0 stores the second total. The
    same sums in the same order; one kernel and one pass over the rows
    fewer a LayerNorm (the default bf16 encoder: 110 -> 102 kernels with
    length variants; on an H200, 2026-12-04, each LayerNorm's mean and
    variance were two kernels of 8 and 7 us).

    And the elementwise op after them (`fold-elementwise`, with `pairs`):
    an all-parallel linalg.generic right after the pair (nothing between
    but allocations and ops that touch no memory) over the same loops and
    token loops, not stopped at the lengths, that reads either total at
    its own row only, writes whole buffers of its own at every loop index
    (identity maps; not read by it or by the sums) and does not read its
    outputs (a LayerNorm's normalization), runs in the pair's warps after
    the second butterfly: each lane computes the row's steps lane, lane +
    32, ... with both totals from registers and stores them. One kernel a
    LayerNorm (the normalization was a third kernel of 10 us on that
    H200), its row read a third time from L1 / L2 instead of from memory.

    Loads in flight (`unroll` U, 1 by default; the CUDA pipeline's
    `row-sum-unroll`, 4): a lane's loop over its steps of a row takes U
    steps an iteration (lane, lane + 32, ..., lane + 32 (U - 1) from the
    iteration's start), each added to a partial sum of its own, so the U
    loads are independent and in flight together; the loop covers the
    whole rounds of 32 U steps of the row (or part), a loop of the steps
    left adds them to the first sum (none where the bounds leave none),
    and the U sums are added pairwise. One load at a time, a lane of E's
    split row sums at n = 65536 waited out 128 dependent loads: 59 us for
    32 MiB on an H200 (2026-12-04), about 7x its streaming time. The
    order is fixed, so the result stays deterministic; the sums of a
    pair and E's sums under the lengths are unrolled alike (the length's
    rounds computed from the row's start, the same for the whole warp).

    Vector loads (`vectors`, off by default; the CUDA pipeline's
    `row-sum-vectors`, on): where runs of R = min(U, 16 bytes) steps of
    each input along the reduction are aligned vectors (the input
    contiguous there with rows, and parts, a multiple of R steps long), a
    lane's steps of a round come in runs of R contiguous steps instead
    (lane l takes steps l R to l R + R - 1 of each of the round's U / R
    parts of 32 R steps), each run of each input loaded once as a vector,
    so a warp reads 32 R contiguous elements in one instruction (512
    bytes of bf16 at U = 8 where the strided steps read 64 bytes of
    2-byte loads; at U = 8 on f32, two vectors of 4 a round). The steps
    left stay strided. A pair's folded normalization likewise,
    where its rows are whole rounds of 32 U steps: each input loaded and
    each output stored as one vector of a lane's U contiguous steps.
  }];
  let options = [
    Option<"warps", "warps", "int64_t", /*default=*/"8",
           "rows (one warp each) a block takes at most">,
    Option<"pairs", "pairs", "bool", /*default=*/"true",
           "a row sum reading the one right before it at its row runs in "
           "the same warps (one kernel for a LayerNorm's mean and "
           "variance); off: a kernel each">,
    Option<"foldElementwise", "fold-elementwise", "bool", /*default=*/"true",
           "with pairs: an elementwise op right after a pair that reads its "
           "totals at its rows (a LayerNorm's normalization) runs in the "
           "pair's warps; off: a kernel of its own">,
    Option<"splitWarps", "split-warps", "int64_t", /*default=*/"0",
           "split rows into parts, a warp a part, while rows x parts stay "
           "within this many warps (0: never)">,
    Option<"unroll", "unroll", "int64_t", /*default=*/"1",
           "steps of a row a lane takes an iteration, each into a partial "
           "sum of its own (their loads in flight together): 1, 2, 4 or 8">,
    Option<"vectors", "vectors", "bool", /*default=*/"false",
           "with unroll: a lane's steps of an iteration in contiguous "
           "runs, each input loaded as aligned vectors of up to 16 bytes">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def LinformerCUDAEmulateWarpsPass
    : Pass<"linformer-cuda-emulate-warps", "::mlir::func::FuncOp"> {
  let summary = "the threads' warp- and block-wide ops (gpu.shuffle, "
                "mma.sync, ldmatrix, gpu.barrier, wgmma) lowered for the "
                "host: thread loops split at each exchange";
  let description = [{
    On-host CUDA pipeline only (`linformer-cuda-pipeline{on-host}`, the
    `cuda-host` tests), after the loops are mapped: the CPU runs a loop over
    a block's threads one thread to its end before the next, so it cannot
    give a warp-wide op the operands of a lane that has not run yet. Each
    such loop (an `scf.parallel` with a dimension mapped to thread x, the
    lanes; constant bounds from 0, steps of 1) is split at each warp-wide
    op in its body, the first one first: the loop up to the op stores the
    op's operands, one element a thread, into buffers of the loop's shape,
    and so every value the rest uses that it cannot compute again (what
    loads, loops and warp-wide ops made; indices, pure arithmetic and a
    thread's own element of these buffers are computed again); a second
    loop over the same threads, with the same mapping, holds the rest and
    computes each lane's result where the op was, from the elements of the
    lanes the PTX ISA says it reads:
    - `gpu.shuffle xor` (32 lanes, a constant offset): lane `l xor
      offset`'s element; its `valid` result is true;
    - `nvgpu.mma.sync` (m16n8k4 and m16n8k8 on tf32, m16n8k16 on f16) and
      `nvvm.mma.sync` (m16n8k16 on bf16 or f16, row A, column B), f32
      accumulators: each of the lane's four C elements plus the products
      of A's row and B's column, each operand element read from the lane
      and register that hold it ("Matrix Fragments for mma.m16n8k*"),
      products and sums in f32, k in order;
    - `nvgpu.ldmatrix` (from a 1-D buffer: of 32-bit words, or with
      `.trans` of 16-bit halves): row r of matrix q starts where lane
      8q + r points; lane (g, t) = (lane / 4, lane % 4) gets word t of row
      g of each matrix, or with `.trans` element g of rows 2t and 2t + 1;
    - `gpu.barrier`: nothing exchanged, the split itself (every thread of
      the block runs what precedes it before any runs what follows; the
      thread loop must hold all of the block's threads).

    Before anything else, a thread loop whose body is side-effect-free ops and
    one `scf.if` on a condition no thread id reaches (a merged launch's choice
    of body, `linformer-cuda-merge-launches`) becomes an `scf.if` of a thread
    loop a branch, each with those ops again (and again inside, for a launch
    merged twice), so that each branch's loop splits at its own warp-wide ops.

    Before that, a block's dynamic shared memory (`gpu.dynamic_shared_memory`
    and its static `memref.view`s at constant shifts) becomes a buffer
    allocated in the body of the loop over blocks, as large as the views
    reach, the views of it in host memory; `nvgpu.device_async_copy`
    (cp.async) becomes a vector load and store at issue, its groups and
    waits go (a copy may land any time before its wait, and no thread reads
    its buffer before a barrier after that wait).
    `nvvm.wgmma.mma_async` (m64nNk16 on bf16 or f16, A and B from shared
    memory, f32 accumulators, scales of one, K-major A) needs no split, as
    no thread reads another's registers: each thread's D registers are
    computed where the op was, register 4j + 2h + o of warp w of its
    warpgroup (thread / 32 % 4), lane (g, t), being D's row 16 w + g + 8 h,
    column 8 j + 2 t + o, from the operands where the descriptors point:
    the start (an 18-bit shared address, taken relative to the buffer of
    the view whose address built the descriptor), the leading and the
    stride byte offsets decoded from the descriptor's bits, elements read
    as the unswizzled core-matrix layout puts them ((i % 8) 16 + (i / 8)
    SBO + (k % 8) 2 + (k / 8) LBO bytes for a K-major operand, i along m
    or n; (i % 8) 2 + (i / 8) SBO + (k % 8) 16 + (k / 8) LBO for an
    MN-major one), products and sums in f32, k in order. The attention
    core's wgmma with A in registers is inline PTX, which the host cannot
    read, marked `linformer.cuda_host_wgmma` = [n, accumulate, bf16]: a
    warp-wide op like mma.sync, its thread loop split there and its four A
    registers kept; A[16 w + g + 8 h][k] is half k % 2 of register
    h + 2 (k / 8) of lane 4 g + (k % 8) / 2 of the warp (the m16n8k16 A
    layout), B K-major from its descriptor as above, onto D when it
    accumulates. The wgmma fences, commits and waits, and
    `fence.proxy.async`, go: the host has one proxy and runs a wgmma at
    issue. A load of a function
    argument that is only ever loaded from (an input: the lengths) is
    computed again after a split rather than kept, and may bound a loop of
    thread loops.
    An `scf.for` in the thread loop's body that holds warp-wide ops, whose
    bounds every thread shares (values from outside the thread loop, the
    index of a dimension of one thread, pure arithmetic of these), becomes an `scf.for` of thread loops: its
    carried values in buffers (stored where it was, loaded at the start of
    each step, each step's yield stored at its end), its body split again
    inside. So the host runs the kernels' own butterflies and mma
    fragments, in their order, instead of a hand-written replay of them,
    and checks the fragments' index arithmetic against the reference.

    A thread loop with fewer threads along x than a warp (a power of two:
    the f32 core's lanes of a query row, 32 / x rows of them a warp) is
    lowered when its warp-wide ops are shuffles whose offsets are below x:
    a partner then differs in x alone.

    Anything else is an error that says what is not lowered: another
    shuffle mode or width, another mma shape or type, mma.sync, ldmatrix or
    a larger offset over fewer than 32 threads along x, an ldmatrix of
    another buffer, a warp-wide op in a branch or in a loop whose bounds
    depend on the thread, one in no thread loop, a barrier in a loop over
    only some of a block's threads, shared memory other than through
    static views, a cp.async with zero fill or whose token a loop carries,
    a value a buffer cannot hold, another wgmma (shape, types, scales, A's
    layout) or one whose descriptor was not built from a shared buffer's
    address, marked inline PTX without a wgmma's operands.

    ```mlir
    // Before (one warp's butterfly, abridged)
    scf.parallel (%w, %l) = (%c0, %c0) to (%c8, %c32) step (%c1, %c1) {
      %s = ... : f32
      %o, %v = gpu.shuffle xor %s, %c16_i32, %c32_i32 : f32
      %t = arith.addf %s, %o : f32
      ...
    } {mapping = [#gpu.loop_dim_map<processor = thread_y, ...>,
                  #gpu.loop_dim_map<processor = thread_x, ...>]}
    // After
    %buf = memref.alloc() : memref<8x32xf32>
    scf.parallel (%w, %l) = ... {
      %s = ... : f32
      memref.store %s, %buf[%w, %l]
    } {mapping = ...}
    scf.parallel (%w, %l) = ... {
      %s = memref.load %buf[%w, %l]
      %p = arith.xori %l, %c16
      %o = memref.load %buf[%w, %p]
      %t = arith.addf %s, %o : f32
      ...
    } {mapping = ...}
    memref.dealloc %buf
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def LinformerCUDAEmulateInstructionsPass
    : Pass<"linformer-cuda-emulate-instructions", "::mlir::func::FuncOp"> {
  let summary = "the GPU instructions the kernels call, as the host "
                "computes them";
  let description = [{
    On-host CUDA pipeline only (`linformer-cuda-pipeline{on-host}`, the
    `cuda-host` tests): the instructions the generators emit for the GPU
    that LLVM cannot lower for a CPU become the arithmetic they perform,
    so the host runs the kernels' own code rather than an emulated form
    the generators build on the side:
    - `nvvm.convert.float.to.tf32` (`cvt.rna.tf32.f32`, the TF32 rounding
      of a .tf32 mma's operands): half a TF32 ulp (bit 12) added to the
      magnitude, the 13 low bits cleared, a NaN kept;
    - `llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"` (the online
      softmax's exponentials): `math.exp2`, which keeps the results below
      2^-126 that ftz flushes to 0 (such a p adds nothing to a sum of at
      least 1).

    Any other NVVM op, or `llvm.nvvm.*` intrinsic, left in the function is
    an error naming it: the host cannot run it.

    ```mlir
    // Before
    %r = nvvm.convert.float.to.tf32 %v {rnd = #nvvm.fp_rnd_mode<rna>} : i32
    %e = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%y) : (f32) -> f32
    // After
    %b = arith.bitcast %v : f32 to i32
    %u = arith.addi %b, %c4096_i32 : i32
    %c = arith.andi %u, %c-8192_i32 : i32
    %n = arith.cmpf uno, %v, %v : f32
    %r = arith.select %n, %b, %c : i32
    %e = math.exp2 %y : f32
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def LinformerCUDATokenParallelLoopsPass
    : Pass<"linformer-cuda-token-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "linalg ops over tokens to scf.parallel that keeps their token loops, reductions over tokens stopped at the lengths";
  let description = [{
    Right before `convert-linalg-to-parallel-loops` in the CUDA pipeline:
    each linalg op on buffers marked `linformer.token_loops` (by
    `linformer-cuda-mark-token-loops`: its batch and token loops, both
    among its leading parallel loops) becomes the same loop nest
    (`linalg::linalgOpToParallelLoops`), and its outer `scf.parallel` gets
    the mark, which `linformer-cuda-tile-parallel-loops` turns into a
    length rule (the upstream pass keeps no attribute of the op).

    So does each linalg op on buffers whose reduction over tokens stops at
    the lengths (`linformer.token_bound`, its token loop the only
    reduction and innermost, as `linformer-cuda-prepare-loops` leaves it,
    in a function with a `linformer.lengths` argument): pooling and conv
    windows, the reassociated mean pooling's window sums, `E X` where it
    stays off the tensor cores. Its token loop's trip count is read from
    the lengths: `min(steps, max(0, lengths[b] - part * per_part))` for
    windows (`min(steps, lengths[b])` without parts), so a window past its
    sequence's length reads nothing and keeps its initial value, which is
    what its masked or zero tokens would have added up to (a window of any
    size: a window's tokens are not contiguous in its input, so
    `linformer-cuda-warp-reductions` never takes one as a row sum). Other
    ops are left to the upstream pass.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def LinformerCUDAMergeLaunchesPass
    : Pass<"linformer-cuda-merge-launches", "::mlir::func::FuncOp"> {
  let summary = "two small independent launches on the same threads as one";
  let description = [{
    After `linformer-cuda-tile-parallel-loops` (and the packed sequences'
    rewrite): two block loops of host code, each a body of
    side-effect-free block coordinates and one thread loop, with the same
    thread loop bounds and attributes, whose grids together have at most
    `max-blocks` blocks (the pipeline's `merge-launches`: the target's SM
    count, so that the merged launch is still one wave), become one launch
    when neither writes or frees a buffer the other touches (accesses
    traced through views to a function argument or an allocation; two
    arguments may be one buffer; an op whose effects cannot be traced
    merges with nothing) and every op between them commutes with the
    later one (which moves up to the earlier, with the allocations and
    index arithmetic it uses); each loop joins the earliest such loop
    within 4 launches before it (so a K bias fill, the K
    projection, a V bias fill and the V projection become two launches,
    the fills and the projections, not three). The merged loop is one-dimensional over
    both grids, on block x; its thread loop runs the first loop's body in
    the blocks below its count, the second's in the rest, each with its
    block coordinates recovered from block x in launch order (x fastest).
    The condition is uniform in a block, so barriers and warp-wide ops in
    either body stay legal (the host's emulation unswitches it,
    `linformer-cuda-emulate-warps`). Block loops with a length rule or any
    attribute but their mapping are left alone. In the default bf16
    encoder, each layer's K and V projections of the shared E X (16 blocks
    each on 132 SMs) run as one launch of 32.

    ```mlir
    scf.parallel (%blk) = (%c0) to (%c32) step (%c1) {
      %first = arith.cmpi ult, %blk, %c16 : index
      %rest = arith.subi %blk, %c16 : index
      scf.parallel (%y, %x) = ... {
        scf.if %first { ...the first body, block %blk... }
        else { ...the second body, block %rest... }
      }
    } {mapping = [#gpu.loop_dim_map<processor = block_x, ...>]}
    ```
  }];
  let options = [
    Option<"maxBlocks", "max-blocks", "int64_t", /*default=*/"0",
           "merge while the merged grid has at most this many blocks "
           "(0: never)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect"];
}

def LinformerCUDASkipPaddingBlocksPass
    : Pass<"linformer-cuda-skip-padding-blocks", "::mlir::func::FuncOp"> {
  let summary = "blocks of a length-ruled loop past their sequence's length do nothing";
  let description = [{
    After `linformer-cuda-tile-parallel-loops`, on the GPU path (not the
    host emulation): every block loop with a length rule
    (`linformer.cuda_token_rows`: its single induction variable is block x,
    the row-major enumeration of the rule's grid) gets, at the start of each
    thread loop in it, the block's sequence `s` and token tile `t` from
    block x, `lengths[s]` from the function's `linformer.lengths` argument,
    and an `scf.if` on `t * tile < lengths[s]` around the rest of the
    thread loop's body: a block that holds only padded tokens returns at
    once. The runtime launches one box of blocks (up to the last block
    that holds a real token of some sequence); with this guard a short
    sequence before a long one no longer pays for its padding tiles inside
    the box (a mixed batch [4096, 512, 512, 256] of n = 4096: the box holds
    3 x 4096 + 256 tokens' tiles, 5376 of them real). The condition is
    uniform in a block, so barriers and warp-wide ops in the guarded body
    stay legal. Such blocks leave their padded rows as an earlier run wrote
    them, as the blocks past the box do (docs/Runtime.md).

    ```mlir
    scf.parallel (%blk) = (%c0) to (%c8) step (%c1) {
      scf.parallel (%y, %x) = ... {
        %s = arith.remui ... ; %t = arith.remui ...
        %len = memref.load %lengths[%s] : memref<2xi32>
        %real = arith.cmpi slt, %first, %len_index : index
        scf.if %real { ...the body... }
      }
    } {linformer.cuda_token_rows = #linformer.token_rows<grid = [2, 4], batch = 0, row = 1, tile = 64>}
    ```

    Errors: a ruled block loop of more than one induction variable, an op
    with memory effects in a ruled block loop outside its thread loops, or
    a function without a `linformer.lengths` argument as long as the rule's
    batch.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LinformerCUDATileParallelLoopsPass
    : Pass<"linformer-cuda-tile-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "tiles each outermost scf.parallel into blocks of threads";
  let description = [{
    The first CUDA path's schedule: every outermost `scf.parallel` (one per
    linalg op, from `convert-linalg-to-parallel-loops`) is tiled with
    `scf::tileParallelLoop` so that its innermost dimension gets up to
    `threads-x` threads and the next one up to `threads-y` (each the
    largest divisor of the extent within the bound, so no thread is idle
    and every inner bound is a constant), leading dimensions 1. The result
    is an outer loop over blocks and an inner loop over the threads of one
    block, mapped here (the `mapping` attribute that
    `convert-parallel-loops-to-gpu` reads): the innermost dimension to x,
    the next to y (and z for blocks), the rest sequential, which keeps
    consecutive threads on consecutive addresses of the row-major buffers
    (coalesced). The grid has three dimensions: a loop of rank 4 or more
    first has its leading dimensions folded into one (`collapseParallelLoops`,
    when the fold is at most 65535, the grid's z limit), which becomes block
    z, so that no dimension is a sequential loop in every thread. Parallel
    loops nested deeper (inside a reduction loop) and loops without static
    bounds are mapped sequential.

    A loop marked `linformer.token_loops` (its batch and token dimensions,
    batch first; the sums of a split-K token contraction, the elementwise
    kernels over tokens, the f32 attention core) is reordered (batch, token,
    the rest) and not folded; its threads stay on the loop's own two
    innermost dimensions (x the innermost), wherever the order puts them,
    so the f32 core's lanes stay on consecutive query rows of one head.
    Its blocks are then numbered row-major along x alone:
    the block loop gets the length rule of that order
    (`linformer.cuda_token_rows`: the tiled extents, the two dimensions,
    the token dimension's tile). The function records each block loop's
    rule (or unit), in launch order, as `linformer.cuda_launch_rows` for
    `linformer-cuda-plan-launches`.
  }];
  let options = [
    Option<"threadsX", "threads-x", "int64_t", /*default=*/"32",
           "Threads per block along the innermost dimension">,
    Option<"threadsY", "threads-y", "int64_t", /*default=*/"8",
           "Threads per block along the next dimension">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::gpu::GPUDialect"];
}

#endif // LINFORMER_COMPILER_CODEGEN_CUDA_PASSES_TD
