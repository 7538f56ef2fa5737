//===- Pipelines.h - named pass pipelines -----------------------*- C++ -*-===//
//
// The pipelines that take a module in the Linformer dialect down to code:
// plain functions taking an options struct, registered in linformer-opt as
// --linformer-cpu-pipeline (and its stages).
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_PIPELINES_PIPELINES_H
#define LINFORMER_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include "compiler/ScheduleDefaults.h"

namespace mlir::linformer {

/// The CPU pipeline's options: the target ISA, the schedule knobs and files
/// (0 / empty: the cost model's choice), the order of the K/V projection,
/// and where to stop (the Halide generator's input, or before LLVM).
struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<std::string> targetIsa{
      *this, "isa",
      llvm::cl::desc("Target when the module has no linformer.target: host, "
                     "avx512, avx2, sse"),
      llvm::cl::init("host")};
  PassOptions::Option<std::string> scheduleFile{
      *this, "schedule-file",
      llvm::cl::desc("JSON schedule file overriding the cost model by key"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> rowTile{
      *this, "row-tile",
      llvm::cl::desc("Force rows per workgroup tile (0: cost model)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Force register-tile columns (0: cost model)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> unroll{
      *this, "unroll",
      llvm::cl::desc("Force register-tile rows (0: cost model)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> reductionTile{
      *this, "reduction-tile",
      llvm::cl::desc("Force the reduction block (0: cost model, -1: none)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> candidate{
      *this, "candidate",
      llvm::cl::desc("ROUND:INDEX: every kernel's INDEX-th autotuning "
                     "candidate of ROUND (tests)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> shortLength{
      *this, "short-length",
      llvm::cl::desc("Tokens of the short run the cost model plans "
                     "length-cut kernels for (0: 1/16 of their rows)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> reassociate{
      *this, "reassociate",
      llvm::cl::desc("Order of the K/V projection: auto (cost model), "
                     "always ((E X) W), never (E (X W))"),
      llvm::cl::init("auto")};
  PassOptions::Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("Products of the contractions: f32 (exact), bf16 "
                     "(bf16 factors, f32 sums: linformer-bf16-products) or "
                     "f16 (f16 factors on AMX-FP16 tiles, f32 sums)"),
      llvm::cl::init("f32")};
  PassOptions::Option<std::string> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("With precision=bf16: auto (vdpbf16ps where the target "
                     "has AVX512_BF16), "
                     "emulate (vdpbf16ps on every target, emulated where "
                     "it lacks it), amx (AMX tiles, emulated likewise) or "
                     "off (f32 FMAs)"),
      llvm::cl::init("auto")};
  PassOptions::Option<bool> halide{
      *this, "halide",
      llvm::cl::desc("Stop at the Halide generator's input: the same "
                     "kernels, each one untiled workgroup of linalg ops on "
                     "buffers (compiler/Codegen/Halide)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> unreadPadding{
      *this, "unread-padding",
      llvm::cl::desc("E' writes only the token tiles its reader (E X, "
                     "which stops at the lengths) reads (off: every token, "
                     "for a Halide E X in a --backend=best mix)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> packedSequences{
      *this, "packed-sequences",
      llvm::cl::desc("With a lengths input: the kernels index the sequence "
                     "inputs and outputs packed (each sequence's real "
                     "tokens end to end), so the runtime binds packed and "
                     "shorter tensors in place (linformer-cpu-packed-"
                     "sequences)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> padRowStrides{
      *this, "pad-row-strides",
      llvm::cl::desc("Intermediate buffers whose rows span a multiple of 4 "
                     "KiB get one cache line more a row, so that a block "
                     "of rows spreads over the L1 cache's sets "
                     "(linformer-cpu-pad-row-strides)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> prepackWeights{
      *this, "prepack-weights",
      llvm::cl::desc("A contraction that streams a weight reads it from "
                     "panels an initializer kernel makes once per session "
                     "(the cost model plans for them: packed, the whole "
                     "reduction at once), instead of every workgroup "
                     "copying its own in every run (linformer-cpu-prepack-"
                     "weights)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> toLLVM{
      *this, "to-llvm",
      llvm::cl::desc("Lower to the LLVM dialect (off: stop after "
                     "bufferization and vector lowering)"),
      llvm::cl::init(true)};
};

/// The CUDA pipeline's options: the target (chip, PTX features, binary
/// format) and the schedule knobs linformer-compile's --cuda-* flags set
/// (compiler/Pipelines/CUDAFlags.h).
struct CUDAPipelineOptions : public PassPipelineOptions<CUDAPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture: sm_90, sm_80, ..."),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (+ptx80: PTX ISA 8.0)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<int64_t> threadsX{
      *this, "threads-x",
      llvm::cl::desc("Threads per block along each kernel's innermost "
                     "parallel dimension, at most (0: the target's warp)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> threadsY{
      *this, "threads-y",
      llvm::cl::desc("Threads per block along the next dimension, at most "
                     "(0: 8, within the target's block limit)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Binary in the GPU modules: isa (PTX), bin (cubin, "
                     "needs ptxas), fatbin, or none (stop at NVVM IR)"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> scheduleFile{
      *this, "schedule-file",
      llvm::cl::desc("CUDA schedule file (linformer-cuda-select-schedules' "
                     "schedule-file): its records replace the chosen "
                     "schedules of contractions with the same key"),
      llvm::cl::init("")};
  PassOptions::Option<bool> onHost{
      *this, "on-host",
      llvm::cl::desc("Stop before GPU ids: lower the tiled and mapped loop "
                     "nest to LLVM for the CPU, to check it against the "
                     "reference without a GPU"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit", llvm::cl::desc("CUDA toolkit (ptxas for bin)"),
      llvm::cl::init("/usr/local/cuda")};
  PassOptions::Option<bool> fuseCore{
      *this, "fuse-core",
      llvm::cl::desc("The attention core as one kernel (online softmax per "
                     "query row, no scores in memory); off: five linalg "
                     "kernels"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> mma{
      *this, "mma",
      llvm::cl::desc("Tensor cores for contractions: none, tf32 "
                     "(mma.sync m16n8k4 on f32 data), tf32x3 (the same on "
                     "each operand's TF32 head and tail, three products a "
                     "pair), bf16 or f16 "
                     "(m16n8k16 on operands rounded to that type); sm_80 "
                     "and later; with on-host, the same warp tiles "
                     "emulated in scalars"),
      llvm::cl::init("none")};
  PassOptions::Option<bool> mmaExact{
      *this, "mma-exact",
      llvm::cl::desc("With on-host: emulate the tensor-core tiles without "
                     "rounding their operands, so that their structure is "
                     "checked at f32 accuracy"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> skipPaddingBlocks{
      *this, "skip-padding-blocks",
      llvm::cl::desc("Blocks of a kernel with a length rule whose token "
                     "tile starts past their sequence's length return at "
                     "once (linformer-cuda-skip-padding-blocks); off: they "
                     "compute their padding, as the runtime's launch box "
                     "includes them"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> packedSequences{
      *this, "packed-sequences",
      llvm::cl::desc("With a lengths input: the kernels index the sequence "
                     "input and the output packed (each sequence's real "
                     "tokens end to end, linformer-packed-sequences{entry}), "
                     "so the runtime binds packed and shorter tensors, on "
                     "the host or the device, in place; off: the padded "
                     "[b, n, ...] layout"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> stageCore{
      *this, "stage-core",
      llvm::cl::desc("The tensor-core attention core copies each (b, h)'s "
                     "projected keys and values into shared memory once a "
                     "block (when they fit); off: every warp reads them "
                     "from global memory"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> stageContractions{
      *this, "stage-contractions",
      llvm::cl::desc("bf16 / f16 tensor-core contractions: a block's warps "
                     "share A and B through shared memory, copied a chunk "
                     "of k at a time (when a block tile divides the "
                     "extents); off: every warp loads its own fragments "
                     "from global memory"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> blocksPerSM{
      *this, "blocks-per-sm",
      llvm::cl::desc("Blocks of each kernel an SM should hold at once where "
                     "its threads and shared memory allow (ptxas "
                     ".minnctapersm: registers fit that many blocks or "
                     "spill); the staged kernels' shared memory is sized "
                     "for 2; 1: no request, ptxas chooses"),
      llvm::cl::init(1)};
  PassOptions::Option<bool> initializers{
      *this, "initializers",
      llvm::cl::desc("Kernels that read only weights (E's row sums of a "
                     "model without lengths) run once, when a session is "
                     "created, instead of in every run "
                     "(linformer-cuda-plan-launches{initializers})"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> prefetchContractions{
      *this, "prefetch-contractions",
      llvm::cl::desc("Staged contractions: two shared buffers, and each "
                     "chunk's global loads issued into registers while the "
                     "previous chunk's mma run (one barrier a chunk); off: "
                     "copy, barrier, mma, barrier"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> simtContractions{
      *this, "simt-contractions",
      llvm::cl::desc("Without tensor cores (mma=none): contractions whose "
                     "block tile divides run as staged SIMT tiles (f32 "
                     "pairs in shared memory, each lane's 64 C elements "
                     "with fma); off: one thread an element, loading its "
                     "operands from device memory"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> ldmatrixCore{
      *this, "ldmatrix-core",
      llvm::cl::desc("The staged tensor-core attention core: the keys' and "
                     "values' fragments read with ldmatrix.x4 (one "
                     "instruction for two mma's registers); off: one "
                     "ld.shared.b32 a register"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> coreSlots{
      *this, "core-slots",
      llvm::cl::desc("The tensor-core attention core's slots a step of its "
                     "online softmax: 16, 32 or 64 (halved until it divides "
                     "k): one max exchange, alpha and rescale of the "
                     "accumulators a step"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> coreLanes{
      *this, "core-lanes",
      llvm::cl::desc("The f32 attention core (no tensor cores): lanes a "
                     "query row, each a slice of the head width, the "
                     "scores added by warp shuffles: 1 (a thread a row, "
                     "the whole head width in its registers), 4, 8 or 16; "
                     "0: 4, or 8 where the rows are too few to fill the "
                     "GPU with 4 (the selection's default for each f32 "
                     "core's #linformer.cuda_f32_core_schedule, which a "
                     "--schedule file's record replaces)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> coreRows{
      *this, "core-rows",
      llvm::cl::desc("The f32 attention core (no tensor cores): consecutive "
                     "query rows a thread (a lane) computes, each K and V "
                     "slice it loads used for all: 1, 2 or 4 (where n is "
                     "a multiple of 32 of them, else 1; 2 was 1.1-1.4x "
                     "faster than 1 on an H200; the selection's default, "
                     "as core-lanes)"),
      llvm::cl::init(2)};
  PassOptions::Option<int64_t> coreGroups{
      *this, "core-groups",
      llvm::cl::desc("The staged attention core: query groups (8 warps x "
                     "16 rows) a block walks after one copy of its keys and "
                     "values, as long as 4 blocks an SM remain"),
      llvm::cl::init(4)};
  PassOptions::Option<int64_t> coreTiles{
      *this, "core-tiles",
      llvm::cl::desc("The attention core on mma.sync tensor cores: query "
                     "tiles of 16 rows a warp takes at once, 1 or 2 (each "
                     "key and value fragment it loads feeds both, as "
                     "FlashAttention-2's 32 rows a warp)"),
      llvm::cl::init(1)};
  PassOptions::Option<int64_t> splitKWarps{
      *this, "split-k-warps",
      llvm::cl::desc("Split-K cuts a contraction's k loop until its warps "
                     "would exceed this many (-1: 8 an SM of the target); "
                     "token contractions also get the splits of shorter "
                     "runs by it"),
      llvm::cl::init(-1)};
  PassOptions::Option<bool> splitKInKernel{
      *this, "split-k-in-kernel",
      llvm::cl::desc("Split-K of staged contractions: the block that stores "
                     "a tile's last part adds the parts to C, in the same "
                     "kernel (an atomic counter a tile); off: a kernel of "
                     "its own adds them"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> mergeLaunches{
      *this, "merge-launches",
      llvm::cl::desc("Two independent launches on the same threads run as "
                     "one while their grids together have at most this "
                     "many blocks (-1: the target's SMs, one wave; 0: "
                     "never), such as the K and V projections of one E X"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> coreMinBlocks{
      *this, "core-min-blocks",
      llvm::cl::desc("With core-groups: the blocks the staged core keeps at "
                     "least (-1: 4 an SM of the target)"),
      llvm::cl::init(-1)};
  PassOptions::Option<bool> ldmatrixContractions{
      *this, "ldmatrix-contractions",
      llvm::cl::desc("Staged contractions: A's fragments read with "
                     "ldmatrix.x4 when it is staged k-major (one instruction "
                     "for four registers); off: one ld.shared.b32 a "
                     "register"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> ldmatrixTransContractions{
      *this, "ldmatrix-trans-contractions",
      llvm::cl::desc("Staged contractions: B staged in its own layout when "
                     "it is contiguous along n, copied as loaded, and its "
                     "fragments read with ldmatrix.x4.trans (one "
                     "instruction for two column tiles); off: pair-major, "
                     "one ld.shared.b32 a register"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> pairStoresContractions{
      *this, "pair-stores-contractions",
      llvm::cl::desc("Tensor-core contractions: a lane's two adjacent "
                     "columns of C stored as one 2-element vector where "
                     "C's layout allows (st.global.v2.f32, one 32-bit "
                     "store of two bf16); off: one store an element (the "
                     "schedules' pair_stores, which a schedule file sets "
                     "per contraction)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> narrowElementwise{
      *this, "narrow-elementwise",
      llvm::cl::desc("bf16 / f16 tensor cores: an elementwise kernel's f32 "
                     "output that contractions round as they load it (a "
                     "LayerNorm's) also written as a 16-bit twin, which "
                     "they read by cp.async; off: they load the f32 "
                     "values and round them in registers"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> pairRowSums{
      *this, "pair-row-sums",
      llvm::cl::desc("Row sums: one that reads the one right before it at "
                     "its row (a LayerNorm's variance, its mean) runs in the "
                     "same warps, one kernel for both; off: a kernel each"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> foldRowElementwise{
      *this, "fold-row-elementwise",
      llvm::cl::desc("With pair-row-sums: an elementwise op right after a "
                     "pair that reads its totals at its rows (a LayerNorm's "
                     "normalization) runs in the pair's warps, one kernel a "
                     "LayerNorm; off: a kernel of its own"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> rowSumUnroll{
      *this, "row-sum-unroll",
      llvm::cl::desc("Row sums: steps of a row a lane takes an iteration, "
                     "each into a partial sum of its own so that their "
                     "loads are in flight together (1, 2, 4 or 8; 1: one "
                     "load at a time)"),
      llvm::cl::init(4)};
  PassOptions::Option<bool> rowSumVectors{
      *this, "row-sum-vectors",
      llvm::cl::desc("Row sums: a lane's unrolled steps in contiguous runs, "
                     "each input loaded as aligned vectors of up to 16 bytes "
                     "(linformer-cuda-warp-reductions{vectors}); off: steps "
                     "32 apart, one element a load"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> chunkKContractions{
      *this, "chunk-k-contractions",
      llvm::cl::desc("Staged contractions: k values a block copies and "
                     "multiplies between barriers, at most (16, 32 or 64; "
                     "the longest that divides the block's k range, fits "
                     "shared memory and keeps the prefetch); 0: chosen, 64 "
                     "for a GPU (1.1-1.25x faster than 16 on an H200), 16 "
                     "on-host (the emulation's unrolled chunks of 64 cost "
                     "LLVM minutes on a large model)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> asyncStages{
      *this, "async-stages",
      llvm::cl::desc("Staged contractions whose operands are both copied "
                     "with cp.async: shared buffers a block keeps, chunks "
                     "up to this many - 1 ahead in flight (2 or more; 2 "
                     "where more do not fit)"),
      llvm::cl::init(3)};
  PassOptions::Option<bool> asyncCopyContractions{
      *this, "async-copy-contractions",
      llvm::cl::desc("Prefetched staged contractions: an operand loaded as "
                     "it is staged (16-bit of the operand type) copied with "
                     "cp.async into the next buffer, no registers; off: "
                     "loaded into registers and stored after the mma"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> wgmmaInFlight{
      *this, "wgmma-in-flight",
      llvm::cl::desc("With wgmma: batches of warpgroup MMAs a staged "
                     "contraction of 3 buffers or more leaves running past "
                     "a chunk (0 or 1; 1: wgmma.wait_group 1, the accumulators "
                     "carried as the batches' registers, the copies one "
                     "chunk less ahead); 0 by default until a GPU has timed "
                     "it"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> wgmmaTileN{
      *this, "wgmma-tile-n",
      llvm::cl::desc("With wgmma: the widest n of a staged contraction's "
                     "warpgroup tile (64, 128 or 256: wgmma.mma_async "
                     "m64nNk16 up to that N where the contraction's n "
                     "divides); 128 by default until a GPU has timed 256"),
      llvm::cl::init(128)};
  PassOptions::Option<int64_t> wgmmaSwizzle{
      *this, "wgmma-swizzle",
      llvm::cl::desc("With wgmma: the widest swizzle, in bytes (32, 64 or "
                     "128; 0 none), of a staged contraction's shared "
                     "buffers: 16-byte units permuted within atoms of 8 "
                     "lines (as TMA writes them), so that copies read "
                     "whole lines and write distinct banks; 0 keeps the "
                     "unswizzled canonical layout"),
      llvm::cl::init(128)};
  PassOptions::Option<bool> wgmma{
      *this, "wgmma",
      llvm::cl::desc("Staged bf16 / f16 contractions whose operands both go "
                     "by cp.async, and the staged attention core, run as "
                     "warpgroup MMAs (wgmma.mma_async; needs chip sm_90a, "
                     "which linformer-compile --sm=90 then builds for); off "
                     "by default: correct on an H200, slower there than "
                     "mma.sync"),
      llvm::cl::init(false)};
};

/// Linformer ops -> linalg on tensors (verification, reassociation choice,
/// decomposition, lowering of the parts).
void buildLinalgPipeline(OpPassManager &pm);

/// The CUDA chain (docs/CUDA.md): the linalg pipeline on
/// buffers, each kernel an scf.parallel nest mapped onto blocks and
/// threads; contractions on tensor cores (mma.sync, wgmma on sm_90a)
/// staged through shared memory, with split-K and length variants; the
/// attention core fused into one kernel; row sums a warp a row; then NVVM
/// and PTX (or, `on-host`, the mapped nest lowered for the CPU).
void buildCUDAPipeline(OpPassManager &pm, const CUDAPipelineOptions &options);

/// The whole CPU chain: linalg pipeline, workgroup tiling and fusion,
/// register tiling, vectorization, bufferization, lowering to LLVM.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Linformer ops to the CPU pipeline's kernels (same roots, same fused
/// producers), each one untiled function of linalg ops on buffers, with
/// the dispatch plan: the input of the Halide code generator
/// (compileHalideToSharedObject in compiler/Codegen/Halide/HalideTarget.h).
void buildHalidePipeline(OpPassManager &pm);

/// Registers --linformer-linalg-pipeline, --linformer-cpu-pipeline,
/// --linformer-halide-pipeline and --linformer-cuda-pipeline.
void registerLinformerPipelines();

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_PIPELINES_PIPELINES_H
