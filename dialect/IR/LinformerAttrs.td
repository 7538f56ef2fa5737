//===- LinformerAttrs.td - Linformer attributes ------------*- tablegen -*-===//
//
// The projection kind and the sharing of projections.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_ATTRS_TD
#define LINFORMER_ATTRS_TD

include "dialect/IR/LinformerBase.td"
include "mlir/Dialect/SCF/IR/DeviceMappingInterface.td"

class Linformer_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Linformer_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Linformer_ProjectionKindAttr
    : EnumAttr<Linformer_Dialect, Linformer_ProjectionKind, "projection"> {
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    The projection kind: `learned` (matrices E, F of k x n), `mean_pool` and
    `max_pool` (window = stride = n / k), `conv` (depthwise convolution along
    the sequence, kernel = stride = n / k, learned per-channel weights).
  }];
}

def Linformer_SharingAttr : Linformer_Attr<"Sharing", "sharing"> {
  let summary = "which projections are shared (heads, K/V, layers)";
  let description = [{
    Three orthogonal facts about the projection parameters, each on or off:
    - `heads`: one projection for all heads of a layer;
    - `kv`: one projection for both K and V (E = F);
    - `layers`: one projection value for every layer of the model.

    The paper's presets print by name where the flags match them; the paper's
    presets are nested (each adds to the one before):

    | preset      | heads | kv | layers |
    |-------------|-------|----|--------|
    | `none`      |       |    |        |
    | `headwise`  |   x   |    |        |
    | `key_value` |   x   | x  |        |
    | `layerwise` |   x   | x  |   x    |

    Any other combination prints as its flags, e.g. `#linformer.sharing<kv>`
    (one E = F per head) or `#linformer.sharing<heads, layers>` (separate E
    and F, each shared by all layers).
  }];
  let parameters = (ins "bool":$heads, "bool":$kv, "bool":$layers);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// The paper's preset name for these flags, or an empty string.
    ::llvm::StringRef getPresetName() const;
    /// Builds the attribute for a preset name; null if the name is unknown.
    static SharingAttr getPreset(::mlir::MLIRContext *ctx, ::llvm::StringRef name);
  }];
}

def Linformer_CPUTargetAttr : Linformer_Attr<"CPUTarget", "cpu_target"> {
  let summary = "the CPU that schedules are chosen for";
  let description = [{
    What the CPU schedule depends on: the LLVM CPU name and features, the
    vector ISA (`avx512`, `avx2`, `sse`, `generic`), its width in bits and
    number of vector registers, the FMA units per core and their latency,
    the L1/L2 (per core) and L3 sizes in bytes and the cores the runtime
    will use; optionally the FMA datapath's width in bits where it is
    narrower than the vectors (`fma_bits`, 0 = as wide: Zen 4's 512-bit
    FMAs issue as two 256-bit halves) and the bytes per cycle L2 refills L1
    with (`l2_bytes_per_cycle`, default 32). `linformer-compile` attaches one to the module as
    `linformer.target` (from the host, or from `--cpu` / `--cpu-features`);
    `--linformer-cpu-select-schedules` reads it.

    ```mlir
    module attributes {linformer.target = #linformer.cpu_target<
        cpu = "znver3", features = "+avx2,+fma", isa = "avx2",
        vector_bits = 256, vector_registers = 16, fma_units = 2,
        fma_latency = 4, l1_bytes = 32768, l2_bytes = 524288,
        l3_bytes = 33554432, cores = 2>} { ... }
    ```
  }];
  let parameters = (ins
    StringRefParameter<"LLVM CPU name">:$cpu,
    StringRefParameter<"LLVM feature string">:$features,
    StringRefParameter<"vector ISA">:$isa,
    "int64_t":$vector_bits,
    "int64_t":$vector_registers,
    "int64_t":$fma_units,
    "int64_t":$fma_latency,
    "int64_t":$l1_bytes,
    "int64_t":$l2_bytes,
    "int64_t":$l3_bytes,
    "int64_t":$cores,
    DefaultValuedParameter<"int64_t", "0">:$fma_bits,
    DefaultValuedParameter<"int64_t", "32">:$l2_bytes_per_cycle);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Linformer_CPUScheduleAttr : Linformer_Attr<"CPUSchedule", "cpu_schedule"> {
  let summary = "how one CPU kernel is tiled";
  let description = [{
    The schedule of the kernel whose root carries it (as
    `linformer.schedule`), chosen by `--linformer-cpu-select-schedules`
    (cost model, schedule file or autotuning) and applied by the tiling
    passes, as IREE's `lowering_config`:
    - `workgroup`: the workgroup tile, one size per loop of the root
      (0 = the whole loop; reduction loops are always whole);
    - `register`: `[rows, columns]` of the accumulator block a contraction
      keeps in vector registers (columns in elements);
    - `reduction`: how many steps of all reduction loops together one cache
      block covers (0 = no blocking);
    - `pack`: pack the streamed operand into register-tile panels: the
      columns' register tiles loop outside the rows', and each copies its
      block of the streamed operand (reduction block x columns) into a
      contiguous buffer that every row tile reads;
    - `split` (printed when not 1): cut the single reduction loop into that
      many parts computed by separate workgroups and add the partial results
      (`--linformer-cpu-split-reductions`).

    ```mlir
    linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 1, 32, 0, 0],
        register = [8, 32], reduction = 64, pack = false>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "workgroup tile per loop">:$workgroup,
    "int64_t":$rows,
    "int64_t":$columns,
    "int64_t":$reduction,
    "bool":$pack,
    DefaultValuedParameter<"int64_t", "1">:$split);
  let assemblyFormat = [{
    `<` `workgroup` `=` `[` $workgroup `]` `,` `register` `=` `[` $rows `,`
    $columns `]` `,` `reduction` `=` $reduction `,` `pack` `=` $pack
    (`,` `split` `=` $split^)? `>`
  }];
  let genVerifyDecl = 1;
}

def Linformer_CUDAScheduleAttr : Linformer_Attr<"CUDASchedule", "cuda_schedule"> {
  let summary = "how one CUDA contraction is mapped onto warps and tensor cores";
  let description = [{
    The schedule of a contraction (as `linformer.cuda_schedule`), chosen by
    `linformer-cuda-select-schedules` from the target's shared memory, SMs
    and block size and applied by `linformer-cuda-tensor-core-contractions`,
    as IREE's `lowering_config` / `MMAScheduleAttr`:
    - `warp_tiles`: `[m, n]` mma tiles (16 x 8) a warp computes, up to 8
      each (with wgmma `[1, n]`, n up to 32: a warpgroup's m64n256);
    - `split`: parts of the k loop, each its own warps (split-K), whose
      partial sums a second loop adds in order;
    - `warps`: `[m, n]` warps of a block that share the operands through
      shared memory (`[0, 0]`: no staging, every warp loads its own
      fragments);
    - `chunk`: k values a staged block copies at a time;
    - `buffers`: shared buffers a staged block keeps (1; 2 or more: the
      next chunks are prefetched while the mma runs, in registers or, for
      operands copied with cp.async, up to `buffers - 1` chunks ahead);
    - `async`: `[a, b]`, the operands copied with cp.async;
    - `natural_b`: B staged in its own [k][n] layout (read with
      ldmatrix.trans, or wgmma's transposed descriptor);
    - `ldmatrix_a`: A's fragments read with ldmatrix (k-major buffer);
    - `wgmma`: warpgroup MMAs from core-layout buffers (sm_90a), one row
      tile a warp and `warps` = `[4 x warpgroups, 1]`;
    - `in_flight` (printed where it is not 0): with wgmma, the batches of
      warpgroup MMAs a warpgroup leaves running when it goes on to the next
      chunk: 0 waits for each chunk's batch (`wgmma.wait_group 0`) before
      the next chunk's copies are waited for; 1 lets it run on under them
      (`wgmma.wait_group 1`, the accumulators carried by the k loop as
      the batches' registers), its buffer reused a chunk later, so the
      copies run one chunk less far ahead (3 buffers or more);
    - `swizzle` (printed where it is not 0): with wgmma, the widest
      swizzle in bytes (32, 64 or 128; 0 none) of the buffers' core
      layouts: each operand's lines (a k-major row's chunk of k, a natural
      B's k row of the block's columns) in atoms of 8 lines of up to that
      many bytes, its 16-byte units permuted by the line within the atom
      (address bits 4.. XOR bits 7..), as TMA writes and CUTLASS's
      `Layout_K_SW128` reads; the buffers 1024-byte aligned. Copy threads
      then read along a line (whole 128-byte lines of global memory) and
      write distinct banks;
    - `pair_stores` (printed where it is false): a lane's two adjacent
      columns of C leave as one 2-element vector store where C's layout
      allows (true); false: one store an element.

    ```mlir
    linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4],
        split = 1, warps = [2, 4], chunk = 16, buffers = 2,
        async = [true, true], natural_b = false, ldmatrix_a = true,
        wgmma = false>
    linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 16],
        split = 1, warps = [8, 1], chunk = 64, buffers = 3,
        async = [true, true], natural_b = false, ldmatrix_a = false,
        wgmma = true, in_flight = 1, swizzle = 128>
    linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4],
        split = 1, warps = [2, 4], chunk = 64, buffers = 2,
        async = [false, true], natural_b = true, ldmatrix_a = true,
        wgmma = false, pair_stores = false>
    ```
  }];
  let parameters = (ins
    "int64_t":$tilesM,
    "int64_t":$tilesN,
    "int64_t":$split,
    "int64_t":$warpsM,
    "int64_t":$warpsN,
    "int64_t":$chunk,
    "int64_t":$buffers,
    "bool":$asyncA,
    "bool":$asyncB,
    "bool":$naturalB,
    "bool":$ldmatrixA,
    "bool":$wgmma,
    DefaultValuedParameter<"int64_t", "0">:$inFlight,
    DefaultValuedParameter<"int64_t", "0">:$swizzle,
    DefaultValuedParameter<"bool", "true">:$pairStores);
  let assemblyFormat = [{
    `<` `warp_tiles` `=` `[` $tilesM `,` $tilesN `]` `,` `split` `=` $split
    `,` `warps` `=` `[` $warpsM `,` $warpsN `]` `,` `chunk` `=` $chunk `,`
    `buffers` `=` $buffers `,` `async` `=` `[` $asyncA `,` $asyncB `]` `,`
    `natural_b` `=` $naturalB `,` `ldmatrix_a` `=` $ldmatrixA `,` `wgmma` `=`
    $wgmma `` custom<ScheduleTail>($inFlight, $swizzle, $pairStores) `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether a block's warps share the operands through shared memory.
    bool staged() const { return getWarpsM() > 0; }
    /// The same schedule with split-K `split` (a length variant's).
    CUDAScheduleAttr withSplit(int64_t split) const {
      return get(getContext(), getTilesM(), getTilesN(), split, getWarpsM(),
                 getWarpsN(), getChunk(), getBuffers(), getAsyncA(),
                 getAsyncB(), getNaturalB(), getLdmatrixA(), getWgmma(),
                 getInFlight(), getSwizzle(), getPairStores());
    }
    /// Whether `bytes` is a swizzle warpgroup MMAs read: 32, 64 or 128,
    /// or 0 (none).
    static bool isSwizzle(int64_t bytes) {
      return bytes == 0 || bytes == 32 || bytes == 64 || bytes == 128;
    }
    /// Whether `batches` of warpgroup MMAs may be left running past a
    /// chunk: 0 or 1.
    static bool isInFlight(int64_t batches) {
      return batches == 0 || batches == 1;
    }
    /// Whether `columns` is the widest n of a warpgroup tile that the
    /// selection may be given: 64, 128 or 256.
    static bool isWgmmaTileN(int64_t columns) {
      return columns == 64 || columns == 128 || columns == 256;
    }
  }];
}

def Linformer_CUDAAbsorptionAttr
    : Linformer_Attr<"CUDAAbsorption", "cuda_absorption"> {
  let summary = "what a CUDA contraction's warp tiles compute besides C += A B";
  let description = [{
    The ops next to a scheduled contraction that its warp tiles take over
    (as `linformer.cuda_absorbs`), chosen by
    `linformer-cuda-absorb-init-epilogue` and applied by
    `linformer-cuda-tensor-core-contractions`, which erases them:
    - `init`: the op right before it, which writes C's initial values
      elementwise from other buffers (a bias broadcast, a constant fill):
      the accumulators start from those values instead of loading C;
    - `epilogue`: the elementwise op right after it that reads C at the
      element it writes (GELU, a residual add, the rounding copy of
      `linformer-cuda-narrow-intermediates`): the stores run its body on
      the accumulators.

    ```mlir
    #linformer.cuda_absorption<init = true, epilogue = false>
    ```
  }];
  let parameters = (ins "bool":$init, "bool":$epilogue);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Linformer_CUDACoreScheduleAttr
    : Linformer_Attr<"CUDACoreSchedule", "cuda_core_schedule"> {
  let summary = "how one CUDA attention core runs on tensor cores";
  let description = [{
    The schedule of a fused attention core on tensor cores (as
    `linformer.cuda_core_schedule`), chosen by
    `linformer-cuda-select-schedules` (or read from a CUDA schedule file),
    applied by `linformer-cuda-expand-attention-core` and recorded in the
    function's `linformer.cuda_schedules`:
    - `warps`: query tiles (16 rows, a warp each) a block holds, all of
      one (b, h), staged or not;
    - `slots`: projected keys an online-softmax step takes (16, 32 or 64);
    - `staged`: the (b, h)'s keys and values copied into shared memory once
      a block (else every warp reads them from global memory);
    - `groups`: groups of `warps` query tiles a staged block walks after
      one copy;
    - `ldmatrix`: the B fragments read with ldmatrix (staged, mma.sync);
    - `wgmma`: warpgroup MMAs (sm_90a; staged, warps in whole warpgroups);
    - `tiles`: query tiles a warp takes at once (1 or 2; 1 with wgmma, and
      then elided): each key and value fragment it loads feeds the mma of
      every one of them, as FlashAttention-2's 32 rows a warp at head width
      64. A block then holds `warps` x `tiles` query tiles, a group is that
      many.

    ```mlir
    #linformer.cuda_core_schedule<warps = 8, slots = 32, staged = true,
        groups = 2, ldmatrix = true, wgmma = false, tiles = 2>
    ```
  }];
  let parameters = (ins
    "int64_t":$warps,
    "int64_t":$slots,
    "bool":$staged,
    "int64_t":$groups,
    "bool":$ldmatrix,
    "bool":$wgmma,
    DefaultValuedParameter<"int64_t", "1">:$tiles);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Linformer_CUDAF32CoreScheduleAttr
    : Linformer_Attr<"CUDAF32CoreSchedule", "cuda_f32_core_schedule"> {
  let summary = "how one f32 CUDA attention core runs without tensor cores";
  let description = [{
    The schedule of a fused attention core with f32 products (as
    `linformer.cuda_f32_core_schedule`), chosen by
    `linformer-cuda-select-schedules` (or read from a CUDA schedule file
    under the core's `attention_core/...` key), applied by
    `linformer-cuda-expand-attention-core` and recorded in the function's
    `linformer.cuda_schedules`:
    - `lanes`: consecutive lanes of a warp a query row, each a slice of the
      head width, their partial scores added by warp shuffles (1: one
      thread the whole head width, in its registers; 4, 8 or 16: they
      divide the head width, n a multiple of 32);
    - `rows`: consecutive query rows a thread computes, each slice of K and
      V it loads used for all of them (1, 2 or 4; n a multiple of 32 of
      them).

    ```mlir
    #linformer.cuda_f32_core_schedule<lanes = 4, rows = 2>
    ```
  }];
  let parameters = (ins "int64_t":$lanes, "int64_t":$rows);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Linformer_KernelShapeAttr : Linformer_Attr<"KernelShape", "kernel_shape"> {
  let summary = "what the CPU cost model saw of a kernel";
  let description = [{
    The facts `--linformer-cpu-select-schedules` records on a kernel's root
    (as `linformer.kernel`) beside its schedule, carried to the kernel's
    entry in the dispatch plan and from there into the artifact's schedule
    record: the shape `key` schedules are cached and overridden by, the
    `kind` (contraction, attention_core, other), the `loops` and their
    `iterators` (p parallel, R reduction), the output's loop dims, the
    FLOPs, where the schedule came from (`source`: cost-model, file, tuned),
    and when they differ from the defaults the attention core's k, the
    contraction's m and n loops, the register tile's column loops and the
    cost model's own schedule (`model_schedule`, when another was chosen).
    A part of a split reduction also carries the kernel it was split from
    (`split_of`, that kernel's facts, and `split_schedule`, its schedule
    with the split), so that --print-schedule can write the split itself.
    `streamed_weight`: a contraction whose streamed operand is a weight that
    the pipeline packs once per session (`--prepack-weights`). `engine`:
    the unit bf16 products run on (`linformer.bf16_engine`: "fma", "dot",
    "amx", ", emulated" where the target lacks it), absent for f32 ones.

    ```mlir
    linformer.kernel = #linformer.kernel_shape<key = "contraction/pppRp/...",
        kind = "contraction", loops = [2, 4, 128, 64, 16],
        iterators = "pppRp", output_dims = [0, 1, 2, 4],
        flops = 2097152, source = "cost-model", n_loop = 4>
    ```
  }];
  let parameters = (ins
    "StringAttr":$key,
    "StringAttr":$kind,
    "DenseI64ArrayAttr":$loops,
    "StringAttr":$iterators,
    "DenseI32ArrayAttr":$output_dims,
    "int64_t":$flops,
    "StringAttr":$source,
    DefaultValuedParameter<"int64_t", "0">:$core_k,
    DefaultValuedParameter<"int64_t", "-1">:$m_loop,
    DefaultValuedParameter<"int64_t", "-1">:$n_loop,
    OptionalParameter<"DenseI32ArrayAttr">:$column_loops,
    OptionalParameter<"CPUScheduleAttr">:$model_schedule,
    OptionalParameter<"KernelShapeAttr">:$split_of,
    OptionalParameter<"CPUScheduleAttr">:$split_schedule,
    DefaultValuedParameter<"bool", "false">:$streamed_weight,
    OptionalParameter<"StringAttr">:$engine);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Linformer_TokenBoundAttr : Linformer_Attr<"TokenBound", "token_bound"> {
  let summary = "a reduction over tokens that stops at each sequence's length";
  let description = [{
    On a linalg op that reduces over tokens (`E X`, pooling and conv
    windows) whose iterations at or past a sequence's length contribute
    nothing (their operand is zero there, or the body masks them): the
    loop that walks the tokens (`token`, a reduction) and the loop of the
    sequence (`batch`, parallel, one sequence per tile). Register tiling
    stops the token loop at the length read from the function's
    `linformer.lengths` argument; the CUDA tensor-core pass stops the k
    loop there.

    When the tokens are split into parts (a split reduction: token = part *
    per_part + token loop; a window reduction: token = window * per_part +
    r), `part` is the loop of the parts and `per_part` their tokens.
    `masked` says the body masks padded tokens itself (the window
    reductions), so a tile of several parts may stop at its first part's
    real tokens. Without parts (and steps of one token) it lets register
    tiling leave the last steps unbounded where no loop walks the tokens
    one at a time (E's row sums: a vector along the tokens reads past the
    length, and the body selects those tokens away).

    `per_step` > 1: each step of the token loop covers that many tokens,
    real while its first one is (an attention core's pooled or convolved
    slots, each a window of `per_step` tokens): the loop stops at
    ceil(length / per_step), and it may be a parallel loop (the rows of the
    core's scores). On an attention core, `token` and `batch` are its
    keys' dimensions (slots, sequence). With `masked` (and no parts), the
    op writes every step it runs over whatever it reads (the core's key
    mask select, -inf past the lengths), so it may also run over all of
    them, as may the ops that read only what it wrote.

    ```mlir
    linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>
    linformer.token_bound = #linformer.token_bound<token = 3, batch = 0,
                                                   part = 2, per_part = 16,
                                                   masked = true>
    linformer.token_bound = #linformer.token_bound<token = 2, batch = 0,
                                                   per_step = 16>
    ```
  }];
  let parameters = (ins
    "int64_t":$token,
    "int64_t":$batch,
    DefaultValuedParameter<"int64_t", "-1">:$part,
    DefaultValuedParameter<"int64_t", "0">:$per_part,
    DefaultValuedParameter<"bool", "false">:$masked,
    DefaultValuedParameter<"int64_t", "1">:$per_step);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "int64_t":$token, "int64_t":$batch), [{
      return $_get($_ctxt, token, batch, /*part=*/-1, /*per_part=*/0,
                   /*masked=*/false, /*per_step=*/1);
    }]>,
    AttrBuilder<(ins "int64_t":$token, "int64_t":$batch, "int64_t":$part,
                     "int64_t":$per_part, "bool":$masked), [{
      return $_get($_ctxt, token, batch, part, per_part, masked,
                   /*per_step=*/1);
    }]>
  ];
  let extraClassDeclaration = [{
    /// Whether the tokens are split into parts (`part` is a loop).
    bool hasParts() const { return getPart() >= 0; }
    /// The same bound with its loops (token, batch, part) renumbered by
    /// `position` (an interchange's new position of each old loop).
    TokenBoundAttr
    renumbered(::llvm::function_ref<int64_t(int64_t)> position) const;
  }];
}

def Linformer_TokenRowsAttr : Linformer_Attr<"TokenRows", "token_rows"> {
  let summary = "which workgroups of a kernel hold which tokens of which sequence";
  let description = [{
    The length rule of a kernel whose output rows are tokens: its
    workgroups are the row-major enumeration of `grid` (one size per
    dimension of its workgroup loop); dimension `batch` is the sequence,
    dimension `row` a tile of `tile` consecutive tokens. For sequences of
    real lengths `len[s]`, the runtime runs only the workgroups with
    batch coordinate `s` and row coordinate below `ceil(len[s] / tile)`:
    the others compute padded rows only. Recorded by
    `linformer-outline-kernels` from the workgroup loop's
    `linformer.token_rows` (set by the CPU tile-and-fuse pass), written to
    the manifest as the kernel's `rows` and validated at load.

    ```mlir
    #linformer.token_rows<grid = [1, 8, 128], batch = 0, row = 2, tile = 32>
    ```
  }];
  let parameters = (ins
    "DenseI64ArrayAttr":$grid,
    "int64_t":$batch,
    "int64_t":$row,
    "int64_t":$tile);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Linformer_KernelLaunchAttr : Linformer_Attr<"KernelLaunch", "kernel"> {
  let summary = "one kernel of a dispatch plan: what the runtime launches";
  let description = [{
    A kernel the runtime runs, in launch order within its
    `#linformer.dispatch_plan`: its symbol, its workgroups, and the buffers
    it takes (ids: the entry's arguments in order, the output last, then
    the plan's intermediates). The CPU pipeline adds the buffers it writes,
    its schedule and the shape the cost model saw (`shape`, for the
    artifact's schedule record); `generator = "halide"` marks a kernel the
    Halide generator built; the CUDA pipeline adds the launch: `grid`,
    `block`, dynamic `shared` bytes and the `blocks_per_sm` the schedule
    asks of it; `rows`, the length rule of a kernel whose workgroups are
    tiles of tokens (`#linformer.token_rows`); `max_length = [lo, hi]`, a
    kernel of one length variant, launched only in runs whose longest
    sequence has more than `lo` and at most `hi` tokens; `initializer`, a
    kernel that reads only weights (and what other initializers wrote) and
    that the runtime runs once, when a session is created, instead of in
    every run: the buffers it writes are the session's constants.
    `all_reduce = P`: not a kernel but a collective step of a
    sequence-parallel plan (`linformer.all_reduce`): the runtime sums the
    one f32 buffer it names over the P ranks, in place, through the
    application's all-reduce; it has no code, one workgroup, and writes
    that buffer. With `gather = B` (`linformer.all_gather`) it takes two:
    `buffers = [share, whole]`, `writes = [whole]`; the share is B
    contiguous blocks, and the runtime zeroes the whole, copies block i to
    block i P + rank there, and sums the whole over the ranks.

    ```mlir
    #linformer.kernel<"layer_kernel_0", workgroups = 16, buffers = [0, 1, 5],
        writes = [5], schedule = #linformer.cpu_schedule<...>>
    #linformer.kernel<"layer_kernel_1", workgroups = 4, buffers = [2, 1],
        grid = [2, 2, 1], block = [32, 1, 1], shared = 256>
    #linformer.kernel<"layer_all_reduce_0", workgroups = 1, buffers = [7],
        writes = [7], all_reduce = 2>
    #linformer.kernel<"layer_all_reduce_1", workgroups = 1, buffers = [8, 9],
        writes = [9], all_reduce = 2, gather = 4>
    ```
  }];
  let parameters = (ins
    "StringAttr":$name,
    "int64_t":$workgroups,
    ArrayRefParameter<"int64_t", "buffer ids, in argument order">:$buffers,
    OptionalArrayRefParameter<"int64_t", "buffer ids written">:$writes,
    OptionalParameter<"CPUScheduleAttr">:$schedule,
    OptionalParameter<"KernelShapeAttr", "what the cost model saw">:$shape,
    OptionalParameter<"StringAttr">:$generator,
    OptionalArrayRefParameter<"int64_t", "CUDA grid (x, y, z)">:$grid,
    OptionalArrayRefParameter<"int64_t", "CUDA block (x, y, z)">:$block,
    DefaultValuedParameter<"int64_t", "0">:$shared,
    DefaultValuedParameter<"int64_t", "1">:$blocksPerSm,
    OptionalParameter<"TokenRowsAttr", "the length rule">:$rows,
    OptionalArrayRefParameter<"int64_t",
        "[lo, hi]: launched when lo < the longest length <= hi">:$maxLength,
    DefaultValuedParameter<"bool", "false",
        "run once per session, before any run">:$initializer,
    DefaultValuedParameter<"int64_t", "0",
        "an all-reduce step over this many ranks (0: a kernel)">:$allReduce,
    DefaultValuedParameter<"int64_t", "0",
        "an all-gather's blocks of its share (0: a sum)">:$gather);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// This kernel taking `buffers` instead.
    KernelLaunchAttr withBuffers(::llvm::ArrayRef<int64_t> buffers) const;
    /// This kernel run once per session, as an initializer.
    KernelLaunchAttr asInitializer() const;
    /// This kernel as the Halide generator built it: `workgroups`, writing
    /// `writes`, no CPU schedule (it chose the kernel's boundaries only).
    KernelLaunchAttr withHalide(int64_t workgroups,
                                ::llvm::ArrayRef<int64_t> writes) const;
    /// Threads a block of the CUDA launch (1 without one).
    int64_t threads() const;
  }];
}

def Linformer_DispatchPlanAttr : Linformer_Attr<"DispatchPlan", "dispatch_plan"> {
  let summary = "what the runtime runs for an entry function";
  let description = [{
    Recorded on an entry function (as `linformer.dispatch_plan`) by the
    pass that outlines its kernels (CPU: `linformer-outline-kernels`; CUDA:
    `linformer-cuda-plan-launches`), and read by the artifact builder: the
    kernels in launch order and the bytes of each intermediate buffer the
    runtime allocates (buffer ids after the entry's arguments and output).
    `sequences`: the entry's arguments (after bufferization: its outputs
    are its last arguments) that hold tokens, `[b, n, ...]`: the sequence
    inputs and the outputs marked `linformer.sequence` (by
    linformer-sequence-results, from the token analysis). The artifact says
    which outputs they are, so that the runtime treats as sequences (rows
    past a length are padding) the outputs that are, not those that merely
    have their `[b, n]`. Printed when not empty.
    `packed_sequences`: the kernels index the sequence inputs and outputs
    packed (each sequence's real tokens end to end, from the lengths), so
    the runtime binds a caller's packed or shorter tensors in place.

    ```mlir
    linformer.dispatch_plan = #linformer.dispatch_plan<
        kernels = [#linformer.kernel<"layer_kernel_0", ...>, ...],
        intermediates = [65536, 4096]>
    linformer.dispatch_plan = #linformer.dispatch_plan<
        kernels = [...], intermediates = [...], sequences = [0, 18],
        packed_sequences>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"KernelLaunchAttr", "kernels in launch order">:$kernels,
    ArrayRefParameter<"int64_t", "intermediate buffer bytes">:$intermediates,
    DefaultValuedParameter<"bool", "false">:$packed_sequences,
    OptionalArrayRefParameter<"int64_t",
                              "the arguments that hold tokens">:$sequences);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Linformer_WorkgroupMappingAttr
    : Linformer_Attr<"WorkgroupMapping", "workgroup",
                     [DeclareAttrInterfaceMethods<DeviceMappingAttrInterface>]> {
  let summary = "maps a dimension of an scf.forall to the kernel's workgroups";
  let description = [{
    The mapping of a workgroup loop (`scf.forall`) made by the CPU
    tile-and-fuse pass: dimension `dim` of the loop enumerates workgroups,
    which the runtime distributes over its threads. Like `#gpu.block<x>`,
    a mapped dimension is never folded away, even with a single iteration:
    every kernel keeps its loop until it is outlined.

    ```mlir
    scf.forall (%i, %j) in (8, 128) ... {
      ...
    } {mapping = [#linformer.workgroup<0>, #linformer.workgroup<1>]}
    ```
  }];
  let parameters = (ins "int64_t":$dim);
  let assemblyFormat = "`<` $dim `>`";
}

#endif // LINFORMER_ATTRS_TD
