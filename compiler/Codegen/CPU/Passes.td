//===- Passes.td - the CPU code generator's passes ---------*- tablegen -*-===//
//
// Schedule selection, tiling and fusion, vectorization, vector lowering and
// the bf16 products of the CPU pipeline (docs/Pipeline.md).
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CPU_PASSES_TD
#define LINFORMER_COMPILER_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def LinformerCPUSelectSchedulesPass
    : Pass<"linformer-cpu-select-schedules", "::mlir::ModuleOp"> {
  let summary = "chooses each CPU kernel's schedule (cost model, file, knobs)";
  let description = [{
    Choosing a schedule is separate from applying it (IREE's
    `lowering_config`): this pass attaches to every kernel root (an op
    marked `linformer.root`, or a `linformer.attention_core`) a
    `linformer.schedule = #linformer.cpu_schedule<...>` and a
    `linformer.kernel` dictionary (shape key, kind, loops, iterators,
    FLOPs, where the schedule came from) that the manifest records. The
    tiling passes read the schedule; nothing else does.

    The target is the module's `linformer.target` (a `#linformer.cpu_target`
    that `linformer-compile` attaches); without one, `isa` picks a preset
    (`avx512`, `avx2`, `sse`) or `host` (the default) describes this machine,
    and the attribute is attached so that the choice is visible.

    For each root, in order of precedence:
    1. a record of `schedule-file` (JSON, see docs/Schedules.md) whose key is
       the root's shape key;
    2. the knobs `row-tile`, `vector-width`, `unroll`, `reduction-tile`
       when any is non-zero (experiments: every kernel gets them);
    3. a `linformer.schedule` already on the root (hand-written IR);
    4. the cost model (compiler/Schedule/Schedule.h): the register tile that
       keeps enough accumulators for the FMA latency within the vector
       registers, a reduction block within half of L1, and at least 4
       workgroups per core (and one a core for a short run, 1/16 of the
       rows, of a kernel whose rows the length rule cuts). With
       `prepack-weights`, a contraction that streams a weight
       (`streamed_weight` in its shape) packs it, in panels that
       linformer-cpu-prepack-weights makes once per session, and takes its
       whole reduction at once where a panel fits half of L2.
    A schedule that does not fit its kernel (a tile that does not divide its
    loop, a split reduction, a wrong number of sizes) is an error that names
    the kernel's key and the problem. A schedule file entry whose key
    matches no kernel is reported as a warning, except the parts of split
    reductions (source "..., split S"), which
    `linformer-cpu-split-reductions` applies.

    ```mlir
    // After (abridged)
    %q = linalg.generic {...} ins(%x, %w : ...) outs(%init : ...)
        {linformer.root,
         linformer.kernel = {key = "contraction/pppRp/1x8x4096x512x64/...",
                             kind = "contraction", flops = 2.1e9 : f64, ...},
         linformer.schedule = #linformer.cpu_schedule<workgroup =
           [1, 1, 32, 0, 0], register = [8, 32], reduction = 64, pack = false>}
    ```
  }];
  let options = [
    Option<"targetIsa", "isa", "std::string", /*default=*/"\"host\"",
           "Target when the module has no linformer.target: host, avx512, "
           "avx2, sse">,
    Option<"scheduleFile", "schedule-file", "std::string", /*default=*/"",
           "JSON schedule file whose records override the cost model by key">,
    Option<"rowTile", "row-tile", "int64_t", /*default=*/"0",
           "Force rows per workgroup tile (0: cost model)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"0",
           "Force register-tile columns (0: cost model)">,
    Option<"unroll", "unroll", "int64_t", /*default=*/"0",
           "Force register-tile rows (0: cost model)">,
    Option<"reductionTile", "reduction-tile", "int64_t", /*default=*/"0",
           "Force the reduction block (0: cost model; -1: no blocking)">,
    Option<"candidate", "candidate", "std::string", /*default=*/"",
           "ROUND:INDEX: give every kernel the INDEX-th autotuning candidate "
           "of ROUND around the model's pick (where it has one), so that "
           "tests can run what the autotuner may choose">,
    Option<"shortLength", "short-length", "int64_t", /*default=*/"0",
           "Tokens of the short run a kernel whose rows the length rule "
           "cuts is planned for, one workgroup a core at least (0: 1/16 of "
           "its rows; linformer-compile --lengths-hint: the shortest)">,
    Option<"prepackWeights", "prepack-weights", "bool", /*default=*/"false",
           "The pipeline packs streamed weights once per session "
           "(linformer-cpu-prepack-weights): the cost model plans a "
           "contraction that streams a weight for contiguous panels and "
           "its whole reduction at once">
  ];
  let dependentDialects = ["::mlir::linformer::LinformerDialect"];
}

def LinformerCPUSplitReductionsPass
    : Pass<"linformer-cpu-split-reductions", "::mlir::ModuleOp"> {
  let summary = "splits long reductions whose schedule asks for it (split-K)";
  let description = [{
    A kernel root whose `#linformer.cpu_schedule` has `split = S > 1`
    (the cost model sets it for a single long reduction over an operand
    larger than half of L3: `E X` at large `n`) is rewritten with upstream
    `linalg::splitReduction`: a partial contraction with a new leading
    parallel loop of `S` parts, each reducing `1/S` of the reduction, then
    a combining op that adds the parts. Both become kernel roots with the
    cost model's schedules (the parts a batch-like loop, one per
    workgroup), or those of `schedule-file`'s records for their shape keys
    (--print-schedule writes them with source "..., split S"; such a
    record that matches no part is reported as a warning, a schedule that
    would split a part again or does not fit it is an error). The row tiles of a part then share its operand block in L3
    instead of each streaming the whole operand from memory.

    ```mlir
    // Before: E X over n = 65536, schedule split = 16
    %ex = linalg.generic {iterator_types = ["parallel", "parallel",
        "reduction", "parallel"]} ins(%e, %x ...) {linformer.root, ...}
    // After (abridged)
    %parts = linalg.generic {iterator_types = ["parallel", "parallel",
        "parallel", "reduction", "parallel"]} ... -> tensor<16x1x256x512xf32>
    %ex = linalg.generic {iterator_types = ["reduction", "parallel", ...]}
        ins(%parts ...) // adds the 16 parts
    ```
  }];
  let options = [
    Option<"scheduleFile", "schedule-file", "std::string", /*default=*/"",
           "JSON schedule file whose records override the cost model for "
           "the parts of a split, by key">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LinformerCPUPrepackWeightsPass
    : Pass<"linformer-cpu-prepack-weights", "::mlir::func::FuncOp"> {
  let summary = "packs a contraction's streamed weight once, in a kernel of its own";
  let description = [{
    A kernel root whose `#linformer.cpu_schedule` has `pack = true` and
    whose streamed operand (the one indexed by its register tile's columns,
    see linformer-cpu-tile-for-vectors) is a `[K, N]` argument of the
    function (a weight) read `(k, n)`, with `N` a multiple of the schedule's
    `register` columns `nr` (and every workgroup's columns starting at a
    multiple of `nr`), reads that weight through panels made once: a new
    kernel root at the top of the function (a plain `linalg.generic` copy,
    with the cost model's schedule) writes `P[j, k, c] = W[k, j nr + c]`
    (`[N / nr, K, nr]`: panel `j` is `K` rows of `nr` contiguous elements),
    and the contraction's operand becomes `linalg.unpack` of `P`
    (`outer_dims_perm = [1, 0]`, `inner_dims_pos = [1]`, `inner_tiles =
    [nr]`), which is `W` again. Workgroup tiling fuses the unpack into each
    workgroup; register tiling then slices each register tile's panel block
    straight out of `P` instead of copying it (GotoBLAS's packed B, packed
    once instead of once per workgroup). Weights shared by several
    contractions with the same `nr` are packed once.

    A weight that the contraction reads split per head, through a
    `tensor.expand_shape` of `W` into `K`'s dims then `N`'s (attention's
    projections: `[K, H, C]` for the queries', keys' and values' heads,
    read `(k, h, c)` with `h` parallel; `[H, R, N]` for the output's, read
    `(h, r, n)` with both reductions), is packed the same way, as the whole
    `[K, N]` it is (with `C` a multiple of `nr`), and read through `P`
    split alike: `P` expanded to `[H, C / nr, K, nr]` (`[N / nr, H, R,
    nr]`) and unpacked into the split shape with its outer dims in that
    order (`outer_dims_perm = [1, 2, 0]`, `[2, 0, 1]`; `inner_dims_pos` the
    last dim).

    A bf16 or f16 weight that the contraction reads extended to f32 (by an
    elementwise `linalg.generic` whose body is one `arith.extf`, as a 16-bit
    model's entry reads its weights) is packed the same way, extended as it
    is packed: f32 panels, made once, in place of the f32 copy that the
    extension wrote in every run. The session then holds the weight at
    twice its size in the file (the file's pages are released after
    packing, as for f32); the contractions read exactly what they read
    before.

    When `W` is a weight (the entry marks its sequence inputs and not `W`),
    the packing root is marked `linformer.initializer`: its kernel becomes
    an initializer of the dispatch plan, which the runtime runs once when a
    session is created, and `P` a constant of the session, written into a
    `bufferization.alloc_tensor` (a buffer of its own: CSE merges equal
    `tensor.empty` ops, and a value of a run once shared the panels' and
    overwrote them). Otherwise (every argument an input) it runs at the
    start of every run.

    The packing kernel's schedule is the cost model's, or the record of
    `schedule-file` with its key: such records say `source = "...,
    panels"`, and linformer-cpu-select-schedules leaves them to this pass.

    Pairs: where the contraction's register tiles multiply bf16 pairs with
    dot products (both factors bf16, `bf16-dot` selecting `vdpbf16ps`), its
    paired reduction loop indexes the weight's innermost row dim (`K`, or
    `R` of `[H, R, N]`), whose size and the schedule's reduction block are
    even, the panels hold the pairs as `vdpbf16ps` reads them: `P[j, i, c,
    t] = W[2 i + t, j nr + c]` (`[N / nr, K / 2, nr, 2]`), read through
    `linalg.unpack` with `inner_dims_pos = [last, row dim]` and
    `inner_tiles = [nr, 2]`. Register tiling reads each step's `2 x nr`
    block as one contiguous `nr x 2` slice (transposed), and
    linformer-cpu-lower-vectors loads its pairs as they are, with no
    interleaving shuffles.

    ```mlir
    // Before: Y = X W, W : tensor<512x2048xf32>, schedule register = [13, 32], pack
    %y = linalg.generic ... ins(%x, %w ...) {linformer.root, ...}
    // After (abridged)
    %e = tensor.expand_shape %w [[0], [1, 2]] : ... into tensor<512x64x32xf32>
    %p = linalg.generic ... ins(%e) outs(%empty : tensor<64x512x32xf32>)
        {linformer.root, linformer.schedule = ...}      // P[j, k, c] = W[k, 32 j + c]
    %u = linalg.unpack %p outer_dims_perm = [1, 0] inner_dims_pos = [1]
        inner_tiles = [32] into %empty2 : ... -> tensor<512x2048xf32>
    %y = linalg.generic ... ins(%x, %u ...) {linformer.root, ...}
    ```
  }];
  let options = [
    Option<"scheduleFile", "schedule-file", "std::string", /*default=*/"",
           "JSON schedule file whose records override the cost model for "
           "the packing kernels">,
    Option<"bf16Dot", "bf16-dot", "std::string", "\"auto\"",
           "what multiplies bf16 pairs, as for linformer-cpu-tile-for-vectors "
           "(auto, emulate, amx, off): with dot products, panels of bf16 "
           "pairs">,
    Option<"f16", "f16", "bool", /*default=*/"false",
           "The pairs are f16 (linformer-bf16-products' f16): AMX-FP16's "
           "tiles, the only engine of f16 pairs">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LinformerCPUTileAndFusePass
    : Pass<"linformer-cpu-tile-and-fuse", "::mlir::func::FuncOp"> {
  let summary = "tiles each kernel root into workgroups and fuses its producers";
  let description = [{
    Every op marked `linformer.root` (by the decomposition and the
    lowering) and every `linformer.attention_core` is the root of one
    kernel. The root is tiled with `scf.forall`
    (one iteration = one workgroup, which the runtime runs on its threads)
    and the producers of its operands that are not roots themselves are fused
    into the loop (upstream `tileConsumerAndFuseProducersUsingSCF`). The
    attention core is tiled as one op over query rows (its TilingInterface);
    lowered afterwards, each tile computes scores, softmax and weighted sum
    for its rows only, so the n x k scores never exist whole.

    Tile sizes come from the root's `linformer.tile_sizes` attribute (the
    schedule); without one, a default: batch and head 1, the second innermost
    output dimension `row-tile` rows, the innermost output dimension whole,
    reductions whole; then, while that gives fewer than 8 workgroups, rows
    and then the innermost dimension (not below 16) are halved. Sizes are
    rounded down to divisors of the dimension so that every tile has a
    static shape.

    With a `linformer.lengths` argument, a workgroup loop whose workgroups
    each hold one sequence and a tile of its tokens gets
    `linformer.token_rows`, the runtime's length rule. So does `E'` (a root
    marked `linformer.unread_padding`), whose tokens are its columns, when
    every reader of it stops at the lengths (`linformer.token_bound`, one
    sequence a workgroup).

    A bf16 epilogue goes the other way: a root with bf16 products
    (`linformer.bf16_engine`) whose result only feeds elementwise ops ending
    in a rounding to bf16 that only other roots read, or their extension
    back to f32 that only roots read (the FFN's first GEMM,
    its GELU, the rounding the second GEMM multiplies; `E X` and its
    rounding for the K and V projections; the K' and V' projections and
    the rounding a paired attention core reads extended) gets them,
    fused into one op
    (upstream elementwise fusion) marked `linformer.bf16_epilogue`, into
    its own workgroups as a consumer (upstream `tileAndFuseConsumer`): the
    kernel writes the bf16 values its readers multiply, rounded once, half
    the bytes of the f32 result, and its readers no longer compute them
    per tile from the f32 result.
  }];
  let options = [
    Option<"rowTile", "row-tile", "int64_t",
           /*default=*/"::mlir::linformer::kDefaultRowTile",
           "Default rows per workgroup tile">,
    Option<"whole", "whole", "bool", /*default=*/"false",
           "One workgroup per kernel (the same roots and fused producers, "
           "untiled): the Halide generator's kernels">,
    Option<"unreadPadding", "unread-padding", "bool", /*default=*/"true",
           "Give a root marked linformer.unread_padding (E') a length rule "
           "when its readers stop at the lengths (off: it writes every "
           "token, as a Halide reader of it in a --backend=best mix needs)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LinformerCPUTileForVectorsPass
    : Pass<"linformer-cpu-tile-for-vectors", "::mlir::func::FuncOp"> {
  let summary = "decomposes the softmax and tiles every linalg op to register size";
  let description = [{
    Decomposes aggregate ops (`linalg.softmax` into max, exp, sum, divide),
    cuts the reduction loops into blocks of at most `reduction-tile` steps
    counted over all of them together, innermost first (so that the operand
    block a reduction streams stays in cache while all register tiles sweep
    it), then tiles each linalg op with `scf.for` to the size
    that one vector operation handles:
    - innermost loop parallel (contractions written with contiguous output
      channels innermost): innermost loop to `vector-width`, the next output
      dimension to `unroll` rows, other loops to 1, reductions to 1 (one
      outer product per step). The defaults, 8 rows x 32 channels, keep 16
      AVX-512 accumulators live and issue 16 FMAs per 2 vector loads and 8
      broadcasts; a 64-step reduction block keeps the weight panel it sweeps
      (64 x 32 floats per register tile) in L1. Measured on the benchmark
      layer (bench/layer): 8x16 with 256-blocks ran at 67 GFLOP/s, 8x32 with
      64-blocks at 120. A contraction left whole along its reductions whose
      accumulators a `linalg.fill` used by nothing else sets takes the fill
      into each register tile, before the reduction loop, so that the
      accumulators start from it instead of reading back a filled output
      (the attention core's scores). A contraction of two bf16 factors
      (linformer-bf16-products' pairs) steps its `pairedReductionDim` two
      at a time instead, one bf16 pair per row and step (a dot product:
      linformer-cpu-lower-vectors); an odd range's last step is peeled.
      A paired token loop stopped at the lengths (`E X`) stops at the last
      complete pair, and a loop after it steps the odd token alone (run
      once or not at all), so that no pair reads the padded token after an
      odd length;
    - innermost loop a reduction (row max/sum): parallel loops to 1, the
      reduction whole (one vector reduction).

    An op marked `linformer.token_bound` in a function with a
    `linformer.lengths` argument stops the loop over its tokens at the
    length of its tile's sequence (`E X`, split parts, windows); with
    `per_step` > 1 (an attention core's pooled slots, a window of tokens
    each) at ceil(length / per_step) steps, where the loop may also be a
    parallel one (the rows of the core's scores). A bound that no loop of
    the tiled op can take is an error.

    A contraction's bf16 epilogue (`linformer.bf16_epilogue`, from
    linformer-cpu-tile-and-fuse) is fused as a consumer (upstream
    `tileAndFuseConsumer`) into the outermost loop of the contraction's
    register tiling when that loop steps over panels of its result (the
    packed weight's), not over reduction blocks: each panel's part is
    computed right after the panel's register tiles, while their f32
    accumulators are in L1, then tiled as any elementwise op. The panel's
    accumulators get a panel-sized tensor of their own (their init, a fill
    or a bias broadcast, computed per panel), not a slice of the whole f32
    result, which is no longer made.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t",
           /*default=*/"::mlir::linformer::kDefaultVectorWidth",
           "Elements per register-tile row (32 f32: two AVX-512 registers, "
           "so each broadcast operand feeds two FMAs)">,
    Option<"unroll", "unroll", "int64_t",
           /*default=*/"::mlir::linformer::kDefaultUnroll",
           "Rows handled per step (accumulator registers)">,
    Option<"reductionTile", "reduction-tile", "int64_t",
           /*default=*/"::mlir::linformer::kDefaultReductionTile",
           "Steps of all reduction loops together kept in one cache block "
           "(0: never block)">,
    Option<"bf16Dot", "bf16-dot", "std::string", "\"auto\"",
           "The engine of bf16 pairs (linformer-bf16-products' dot): with "
           "AMX a paired contraction's register tile is 16 rows x 16 "
           "columns, 32 steps (16 pairs) a tile">,
    Option<"f16", "f16", "bool", /*default=*/"false",
           "The pairs are f16 (linformer-bf16-products' f16): AMX-FP16's "
           "tiles, the only engine of f16 pairs">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::math::MathDialect"];
}

def LinformerCPUVectorizePass
    : Pass<"linformer-cpu-vectorize", "::mlir::func::FuncOp"> {
  let summary = "vectorizes every linalg op (upstream linalg::vectorize)";
  let description = [{
    Turns each register-sized linalg op into vector ops: contractions become
    `vector.contract`, elementwise ops vector arithmetic, reductions
    `vector.multi_reduction`, with transfer reads/writes at the boundary.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
}

def LinformerCPULowerVectorsPass
    : Pass<"linformer-cpu-lower-vectors", "::mlir::func::FuncOp"> {
  let summary = "lowers vector ops to what LLVM handles well on CPUs";
  let description = [{
    Lowers `vector.contract` to outer products (FMAs of a broadcast scalar and a
    vector), multi-reductions to inner reductions, transposes and transfers
    to plain loads and stores, and `math.exp` and `math.erf` (GELU) to
    their polynomial approximations, so that they vectorise instead of
    calling libm per lane. An outer product's broadcast elements, where they
    were read as one vector, are read one by one (`memref.load`: a
    broadcast from memory on x86). Vector float sums and products may be
    reassociated, and vector maximumf / minimumf ignore the sign of zero
    (nsz; NaNs still propagate). An 8 x 8 f32 transpose (a block of the
    attention core's transposed query tile) becomes upstream's AVX2
    sequence (unpacks, shuffles, blends as inline `vblendps`, 128-bit
    permutes: 24 instructions), any other one 1-D shuffles.

    A register tile of bf16 pairs (`[m, 2] x [2, n]`, both factors
    extended from bf16: linformer-bf16-products' pairs) becomes dot
    products instead (`ContractBF16PairsToDot`): each row's pair is one
    32-bit word broadcast to every lane, the streamed operand's two rows are
    interleaved into pairs 16 columns at a time (8 or 4 for a narrower
    tile), and each such group of a row takes one `x86vector.avx512.dot`
    (`vdpbf16ps`: two products a lane into f32) where the module's target
    has AVX512_BF16 (8 and 4 lanes with AVX512VL), else the instruction
    emulated: the even and odd halves of each word as f32 (a shift, a mask)
    and two FMAs, odd first as the instruction adds them (bit for bit its
    result but for denormals, which it flushes).

    With AMX (`bf16-dot=amx`; not auto's choice until measured) a tile
    of bf16 factors of at most 16 rows, 16 columns (or a multiple, cut into
    16-column tiles) and an even number of steps up to 32 becomes the
    VNNI-form contraction (the streamed rows interleaved in pairs) that
    upstream's convert-vector-to-amx turns into `amx.tile_load`,
    `amx.tile_mulf` (`tdpbf16ps`) and `amx.tile_store`, through stack
    buffers. Where the target lacks AMX those tile operations are then
    emulated: loads and stores as vector transfers, `tdpbf16ps` as one dot
    product (above) per row and pair, in the order the instruction sums.
  }];
  let options = [
    Option<"bf16Dot", "bf16-dot", "std::string", "\"auto\"",
           "The engine of bf16 pairs (linformer-bf16-products' dot)">,
    Option<"f16", "f16", "bool", /*default=*/"false",
           "The pairs are f16 (linformer-bf16-products' f16): AMX-FP16's "
           "tiles, the only engine of f16 pairs">
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::amx::AMXDialect",
                           "::mlir::x86vector::X86VectorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LinformerCPUExpandBF16Pass
    : Pass<"linformer-cpu-expand-bf16", "::mlir::ModuleOp"> {
  let summary = "expands f32 <-> bf16 conversions into integer arithmetic "
                "unless the target converts in hardware";
  let description = [{
    LLVM lowers an f32 -> bf16 `fptrunc` to one instruction on CPUs with
    AVX512_BF16 or AVX-NE-CONVERT and to a call into the compiler runtime
    (`__truncsfbf2`) everywhere else. That helper is in GCC 13's libgcc and
    not in GCC 12's (Debian 12), so a bf16 model could not be linked for an
    AVX2 CPU, and an artifact that needed the helper would depend on what
    the machine running it has. Without hardware conversion, this pass
    rewrites `arith.truncf` f32 -> bf16 (round to nearest even, NaN kept
    quiet) and `arith.extf` bf16 -> f32 (a shift) with upstream's arith bf16
    expansion, on scalars and vectors alike, so the kernels call nothing.

    The target is the module's `linformer.target` (the host's when it has
    none): its features decide. With `+avx512bf16` or `+avxneconvert` the
    truncations stay as they are (one instruction), and only `arith.extf`
    bf16 -> f32 becomes the shift it is everywhere: LLVM 22's instruction
    selection for these targets crashes on a `<N x bfloat>` value live
    across blocks for N = 9, 17, 25, ... ("Do not know how to soft promote
    this operator's operand"), which its own passes make of a bf16 load
    followed by `fpext`; as i16 such a value never exists. A truncation to
    a vector whose length is not a power of two is expanded there too: LLVM
    forwarded the stores of such a value into bfloat shuffles that its
    instruction selection for AVX512_BF16 cannot select (`v16bf16 =
    X86ISD::VPERM2X128`, a 12-wide tile); every default model's tiles are
    powers of two and keep the one instruction.

    ```mlir
    %b = arith.truncf %x : vector<8xf32> to vector<8xbf16>
    // becomes, for an AVX2 target:
    //   %i = arith.bitcast %x : vector<8xf32> to vector<8xi32>
    //   ... round to nearest even on the upper 16 bits, NaN -> quiet NaN ...
    //   %b = arith.bitcast %t : vector<8xi16> to vector<8xbf16>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def LinformerCPUStoreBF16BitsPass
    : Pass<"linformer-cpu-store-bf16-bits", "::mlir::ModuleOp"> {
  let summary = "bf16 values made of integer bits stay integers in the "
                "LLVM dialect";
  let description = [{
    After linformer-cpu-expand-bf16, a rounding to bf16 ends in
    `llvm.bitcast %bits : vector<Nxi16> to vector<Nxbf16>`, whose only use
    is to be stored (whole, or element by element through
    `llvm.extractelement`). LLVM's InstCombine then moves the bitcast above
    the rounding's NaN `select`, making `<N x bfloat>` selects, which
    instruction selection for a CPU without bf16 conversion promotes
    through f32 and truncates back with `__truncsfbf2` again (for N = 3, a
    model with d_model 9 and bf16 products): the link fails on GCC 12's
    libgcc. With opaque pointers a store takes any type of the same size,
    so this pass stores the integer bits themselves and extracts elements
    of the integer vector: no bf16 value is left for LLVM to move. Likewise
    a bf16 load only read as bits loads the integers, a bf16 load only
    stored (a copy) loads and stores the integers (LLVM's GVN kept a
    `<9 x bfloat>` copy's load in a register across a loop, which
    instruction selection cannot legalize even with AVX512_BF16), shuffles
    and element insertions of bf16 move 16-bit words (a d_model-4 model's
    `<2 x bfloat>` tile built element by element, for haswell, went through
    `__truncsfbf2`), a bf16 vector load whose elements are only extracted
    loads and extracts the words (a k = 1 attention core's `<1 x bfloat>`
    loads, for haswell), and stack buffers and
    addresses of bf16 (`llvm.alloca`, `llvm.getelementptr`) count in i16:
    LLVM's SROA types a promoted buffer after its alloca, and a d_model-2
    model's `[4 x bfloat]` scratch tiles became bfloat selects again.

    ```mlir
    %b = llvm.bitcast %bits : vector<3xi16> to vector<3xbf16>
    llvm.store %b, %p : vector<3xbf16>, !llvm.ptr
    // becomes
    llvm.store %bits, %p : vector<3xi16>, !llvm.ptr
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LinformerCPUScratchHooksPass
    : Pass<"linformer-cpu-scratch-hooks", "::mlir::ModuleOp"> {
  let summary = "kernels' heap buffers come from the runtime's per-thread "
                "cache where it set the hooks, else from malloc";
  let description = [{
    A buffer too large for a kernel's stack (a bf16 copy of E' or of X, 2
    MiB a workgroup at n = 4096) is allocated and freed by every workgroup
    in every run. glibc's malloc returns such a block to the system when it
    trims, and the next run faults its pages in again (1,500 faults a run
    of a bf16 encoder at 256 of 4096 tokens, 2.5 ms of 13). The memref
    lowering runs with its generic functions (`use-generic-functions`); this
    pass defines `_mlir_memref_to_llvm_alloc` and `_mlir_memref_to_llvm_free`
    in the module (internal), each calling the function that the exported
    pointer `linformer_scratch_alloc` / `linformer_scratch_free` holds, or
    malloc / free while it is null (the runtime sets the pointers after
    loading the object; an object without them, from an older compiler,
    simply calls malloc).

    ```mlir
    llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
    // becomes
    llvm.mlir.global external @linformer_scratch_alloc() : !llvm.ptr
    llvm.func internal @_mlir_memref_to_llvm_alloc(%size: i64) -> !llvm.ptr {
      // load the hook; null: llvm.call @malloc(%size), else call it
    }
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LinformerCPUPadRowStridesPass
    : Pass<"linformer-cpu-pad-row-strides", "::mlir::func::FuncOp"> {
  let summary = "intermediate buffers whose rows are a multiple of 4 KiB "
                "get a row stride one cache line longer";
  let description = [{
    An L1 data cache of 48 KiB with 12 ways (Intel since Ice Lake) or 32 KiB
    with 8 (AMD Zen) maps addresses 4 KiB apart to one set. A kernel that
    reads a block of rows of a buffer whose rows are 4 KiB long (the FFN's
    hidden activation, 2048 bf16 a token; 8 KiB in f32) finds every row of
    the block in the same set: an AMX `tileloadd` of 16 rows, or a register
    tile's rows, evict each other. On a Sapphire Rapids Xeon the FFN's
    second GEMM ran at 1.46-1.73 TFLOP/s on such rows and at 1.79-1.87 on
    rows of 2080 bf16 (a model with that ffn_dim, same run: a proxy, its
    reduction 32 longer too).

    Each entry-block `memref.alloc` of a static, identity-layout type of
    rank 2 or more whose innermost dimension spans a multiple of
    `critical-stride` bytes (and more than one row) becomes an allocation
    with `pad-bytes` more a row and a subview of it of the old shape; the
    subviews built on the old buffer take the new strides. Only buffers
    whose every use takes any strided layout change (subviews, vector and
    memref loads and stores, transfers, linalg ops, copies, deallocs);
    anything else (a call, a reshape, an all-reduce) leaves the buffer as
    it is. Function arguments (the model's inputs, outputs and weights)
    never change. Runs after bufferization and deallocation, before
    linformer-outline-kernels, which binds the padded allocation and
    rebuilds the view inside each kernel.

    ```mlir
    %h = memref.alloc() : memref<1x4096x2048xbf16>
    // becomes
    %p = memref.alloc() : memref<1x4096x2080xbf16>
    %h = memref.subview %p[0, 0, 0] [1, 4096, 2048] [1, 1, 1]
        : memref<1x4096x2080xbf16>
          to memref<1x4096x2048xbf16, strided<[8519680, 2080, 1]>>
    ```
  }];
  let options = [
    Option<"criticalStride", "critical-stride", "int64_t", "4096",
           "Rows spanning a multiple of this many bytes are padded (0: none)">,
    Option<"padBytes", "pad-bytes", "int64_t", "64",
           "Bytes added to each padded row (a multiple of the element size)">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def LinformerCPUExpandStridedCopiesPass
    : Pass<"linformer-cpu-expand-strided-copies", "::mlir::func::FuncOp"> {
  let summary = "copies between strided buffers become loops the kernel runs";
  let description = [{
    Bufferization copies a tile that it cannot write in place
    (`memref.copy`). Between two contiguous blocks the LLVM lowering copies
    with a memcpy intrinsic; anything else (a workgroup's 20 of 40 columns,
    `memref<1x4x20xf32, strided<[640, 40, 1], offset: ?>>`) becomes a call
    to `memrefCopy`, a function of MLIR's runner library that generated
    kernels do not link (an encoder with d_model 40 once failed to link
    here). Such a copy becomes a `linalg.copy`, which
    `convert-linalg-to-loops` turns into loops, so that the kernels call
    nothing. Contiguous copies stay as they are. Runs before that
    conversion.

    ```mlir
    memref.copy %a, %b : memref<1x4x20xf32, strided<[640, 40, 1], offset: ?>>
                      to memref<1x4x20xf32>
    // becomes
    linalg.copy ins(%a : ...) outs(%b : memref<1x4x20xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LinformerBF16ProductsPass
    : Pass<"linformer-bf16-products", "::mlir::func::FuncOp"> {
  let summary = "contractions multiply bf16 factors and accumulate in f32";
  let description = [{
    Every kernel-root contraction on f32 values (`acc + a * b`, two inputs,
    a reduction loop: the projections, `E X`, the FFN) multiplies factors
    rounded to bf16 (to nearest even) and sums in f32. The product of two
    bf16 values is exact in f32, so only the factors' rounding (2^-9
    relative) and the f32 sums remain: the numerics of the CPU's bf16
    engines (`vdpbf16ps`, AMX `tdpbf16ps`), which read bf16 pairs and
    accumulate f32. Softmax, LayerNorm, GELU, residual sums and biases stay
    f32. With `dot`, the attention core's `Q K^T` and `P V` take bf16 pairs
    too: the core is marked `linformer.bf16_scores`, and its lowering
    (after workgroup tiling) rounds the query tile and the keys, and the
    probabilities (transposed back to rows of slots, so that a row's pair
    is adjacent) and the values; its softmax stays f32, and so does `P V`
    where pooled slots stop at a length. K' and V', which kernels of their
    own compute (the projections; not where the slots stop at a length),
    are rounded right after them and read by the
    core extended: linformer-cpu-tile-and-fuse makes the rounding those
    kernels' bf16 epilogue, and the core's lowering reads the extension as
    the bf16 values, so a head's K' and V' are rounded once, not in every
    query tile.

    The two factors take the form the register tile reads them in. With
    `dot` (`auto` where the module's CPU target has AVX512_BF16, `emulate`
    or `amx` on every target) a contraction whose register tile can step its
    reduction in pairs (`pairedReductionDim`: the broadcast operand's
    innermost loop; a token loop stopped at the lengths when its range is
    even, `E X`) reads both
    factors as bf16: linformer-cpu-tile-for-vectors then steps two at a
    time and linformer-cpu-lower-vectors multiplies with `vdpbf16ps`
    (emulated where the target lacks it). Otherwise, and for the others:
    - the operand a register tile streams (`streamedOperand`: a weight,
      whose panels linformer-cpu-prepack-weights makes once per session)
      is read as bf16 and extended in the body: half the bytes, and one
      vector extension per loaded vector;
    - the operand it broadcasts, one element per row and step, is read as
      f32 values rounded to bf16: extending each element in the innermost
      loop cost as much as the products (1.8x slower on an AVX2 CPU).

    A factor a bf16 model extended from bf16 at its entry is read as that
    bf16 value (streamed) or as it is (broadcast, exactly bf16 already),
    through reshapes; any other is rounded once by an elementwise generic
    of its own, shared by every contraction that reads it (tiling fuses it
    into them, the weight packing into its panels). A factor written by an
    elementwise op whose every value bf16 holds exactly (a select of a bf16
    input or a constant such as 0: a bf16 model's E masked at the lengths)
    is written as bf16 by a twin of that op instead, its other readers
    reading the twin extended: `E X` then reads bf16 E, which every
    workgroup of it rounded before; no value changes.

    linformer-compile runs it for `--precision=bf16`, on f32 and 16-bit
    models alike, and for bf16 models where the CPU has AVX512_BF16 or AMX.

    With `f16` the factors are f16 (10 bits of mantissa, 2^-11 relative)
    instead, on AMX-FP16's tiles (`tdpfp16ps`: f16 pairs, f32 sums), the
    only engine that multiplies f16 and sums in f32: `dot=auto` takes them
    where the target has AMX-FP16 and FMAs on rounded factors elsewhere;
    `emulate` and `amx` take them, emulated where the target lacks them.
    The attention core takes f16 pairs likewise (marked
    `linformer.f16_pairs` beside `linformer.bf16_scores`: its lowering
    rounds to f16). linformer-compile
    runs it for `--precision=f16` and for f16 models where the CPU has
    AMX-FP16.

    ```mlir
    // Before: %x : tensor<8x64xf32>, %w = extf(%wb : tensor<64x32xbf16>)
    %y = linalg.generic {..., ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<8x64xf32>, tensor<64x32xf32>) outs(%acc) {
      ^bb0(%a: f32, %b: f32, %c: f32):
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %c, %m : f32
        linalg.yield %s : f32
    } {linformer.root}
    // After: x rounded and kept in f32 (broadcast), w read as bf16
    %xr = linalg.generic ... ins(%x) outs(... : tensor<8x64xf32>)
        // arith.truncf to bf16, arith.extf back
    %y = linalg.generic ... ins(%xr, %wb : tensor<8x64xf32>,
                                 tensor<64x32xbf16>) outs(%acc) {
      ^bb0(%a: f32, %b: bf16, %c: f32):
        %eb = arith.extf %b : bf16 to f32
        %m = arith.mulf %a, %eb : f32
        ...
    ```
  }];
  let options = [
    Option<"dot", "dot", "std::string", "\"auto\"",
           "Pairs of bf16 factors for dot products or AMX tiles: auto "
           "(vdpbf16ps where the target has AVX512_BF16), emulate "
           "(vdpbf16ps, emulated where the target lacks it), amx (AMX "
           "tiles, emulated likewise) or off">,
    Option<"f16", "f16", "bool", /*default=*/"false",
           "f16 factors instead of bf16 (AMX-FP16 tiles; FMAs on rounded "
           "factors where dot=auto finds no AMX-FP16)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // LINFORMER_COMPILER_CODEGEN_CPU_PASSES_TD
