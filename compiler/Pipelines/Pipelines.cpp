//===- Pipelines.cpp - named pass pipelines --------------------*- C++ -*-===//
//
// See Pipelines.h. Ordering constraints are explained where they matter.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Codegen/CPU/Passes.h"
#include "compiler/Codegen/CUDA/Passes.h"
#include "compiler/Passes.h"
#include "compiler/Schedule/Target.h"
#include "dialect/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::linformer;

static void addCleanup(OpPassManager &funcPm) {
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
}

/// Verification and decomposition; lowers the projections, and the
/// attention core too unless `lowerCore` is off; `fuseCoreCUDA` keeps the
/// cores the CUDA pipeline runs as one kernel (expanded after
/// bufferization).
static void addLinalgStages(OpPassManager &pm, bool lowerCore,
                            StringRef reassociate, bool fuseCoreCUDA = false) {
  // Layer sharing is a claim across ops; check it before decomposition
  // erases the ops that make it.
  pm.addPass(createLinformerVerifyLayerSharingPass());
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  // The order of the K/V projection is an algebraic choice: it must be made
  // while the layer is still one op.
  LinformerReassociatePassOptions reassociateOptions;
  reassociateOptions.mode = reassociate.str();
  funcPm.addPass(createLinformerReassociatePass(reassociateOptions));
  funcPm.addPass(createLinformerDecomposeAttentionPass());
  LinformerLowerToLinalgPassOptions lowerOptions;
  lowerOptions.lowerCore = lowerCore;
  lowerOptions.keepFusableCore = fuseCoreCUDA;
  funcPm.addPass(createLinformerLowerToLinalgPass(lowerOptions));
  addCleanup(funcPm);
  // Before anything decides where a value lives: the caller's buffer for a
  // result must hold its tokens and nothing else (CSE, just above, shares
  // one tensor.empty among every value of the output's type).
  funcPm.addPass(createLinformerSequenceResultsPass());
}

static void addLLVMLowering(OpPassManager &pm);
static void addBufferization(OpPassManager &pm);

/// The Halide generator's input: the CPU pipeline's kernels (same roots,
/// same fused producers, same split reductions), each one workgroup of
/// linalg.generic ops on buffers, so that a kernel can come from either
/// generator (--backend=best).
static void addHalideKernels(OpPassManager &pm) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  LinformerCPUTileAndFusePassOptions tileOptions;
  tileOptions.whole = true;
  funcPm.addPass(createLinformerCPUTileAndFusePass(tileOptions));
  funcPm.addPass(createLinformerLowerToLinalgPass());
  funcPm.addPass(createLinalgGeneralizeNamedOpsPass());
  addCleanup(funcPm);
  addBufferization(pm);
  bufferization::BufferDeallocationPipelineOptions deallocOptions;
  bufferization::buildBufferDeallocationPipeline(pm, deallocOptions);
  OpPassManager &bufPm = pm.nest<func::FuncOp>();
  addCleanup(bufPm);
  bufPm.addPass(createLinformerHalideGroupKernelsPass());
  pm.addPass(createLinformerOutlineKernelsPass());
  // The single workgroup's index folds away: views get static offsets.
  OpPassManager &kernelPm = pm.nest<func::FuncOp>();
  addCleanup(kernelPm);
}

/// Tensors to memrefs across function boundaries (identity layouts), with
/// results turned into caller-provided output buffers, written in place.
static void addBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferizeOptions;
  bufferizeOptions.bufferizeFunctionBoundaries = true;
  bufferizeOptions.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferizeOptions));
  bufferization::BufferResultsToOutParamsPassOptions outParamOptions;
  outParamOptions.hoistStaticAllocs = true;
  outParamOptions.modifyPublicFunctions = true;
  pm.addPass(
      bufferization::createBufferResultsToOutParamsPass(outParamOptions));
}

void mlir::linformer::buildLinalgPipeline(OpPassManager &pm) {
  addLinalgStages(pm, /*lowerCore=*/true, "auto");
}

void mlir::linformer::buildCPUPipeline(OpPassManager &pm,
                                       const CPUPipelineOptions &options) {
  // The attention core stays one op until it is tiled: lowered whole, its
  // softmax could not be fused into query tiles.
  addLinalgStages(pm, /*lowerCore=*/false, options.reassociate);
  // bf16 products change the contractions' operand types, which the
  // schedules below are chosen for.
  bool f16 = options.precision == "f16";
  if (options.precision == "bf16" || f16) {
    LinformerBF16ProductsPassOptions productsOptions;
    productsOptions.dot = options.bf16Dot;
    productsOptions.f16 = f16;
    pm.nest<func::FuncOp>().addPass(
        createLinformerBF16ProductsPass(productsOptions));
  }

  // Choosing schedules is separate from applying them: every kernel root
  // gets its #linformer.cpu_schedule here, from the roots' static shapes
  // (so after decomposition and lowering), before any tiling reads it.
  LinformerCPUSelectSchedulesPassOptions selectOptions;
  selectOptions.targetIsa = options.targetIsa;
  selectOptions.scheduleFile = options.scheduleFile;
  selectOptions.rowTile = options.rowTile;
  selectOptions.vectorWidth = options.vectorWidth;
  selectOptions.unroll = options.unroll;
  selectOptions.reductionTile = options.reductionTile;
  selectOptions.candidate = options.candidate;
  selectOptions.shortLength = options.shortLength;
  selectOptions.prepackWeights = options.prepackWeights && !options.halide;
  pm.addPass(createLinformerCPUSelectSchedulesPass(selectOptions));
  // Split-K is part of a schedule, applied before tiling: its parts are the
  // kernels that get tiled.
  LinformerCPUSplitReductionsPassOptions splitOptions;
  splitOptions.scheduleFile = options.scheduleFile;
  pm.addPass(createLinformerCPUSplitReductionsPass(splitOptions));

  if (options.halide) {
    addHalideKernels(pm);
    return;
  }
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  // A packed weight is packed once, by a kernel of its own, before the
  // kernels that read it are tiled.
  if (options.prepackWeights) {
    LinformerCPUPrepackWeightsPassOptions prepackOptions;
    prepackOptions.scheduleFile = options.scheduleFile;
    prepackOptions.bf16Dot = options.bf16Dot;
    prepackOptions.f16 = f16;
    funcPm.addPass(createLinformerCPUPrepackWeightsPass(prepackOptions));
  }
  // Workgroup tiling must see whole (untiled) producers to fuse them, so it
  // runs before any other tiling.
  LinformerCPUTileAndFusePassOptions tileOptions;
  tileOptions.unreadPadding = options.unreadPadding;
  funcPm.addPass(createLinformerCPUTileAndFusePass(tileOptions));
  // Each core tile becomes scores -> softmax -> weighted sum on its rows.
  funcPm.addPass(createLinformerLowerToLinalgPass());
  addCleanup(funcPm);
  // Register tiles come from each kernel's schedule.
  LinformerCPUTileForVectorsPassOptions vectorTileOptions;
  vectorTileOptions.bf16Dot = options.bf16Dot;
  vectorTileOptions.f16 = f16;
  funcPm.addPass(createLinformerCPUTileForVectorsPass(vectorTileOptions));
  addCleanup(funcPm);
  funcPm.addPass(createLinformerCPUVectorizePass());
  addCleanup(funcPm);
  // The accumulators of a register tile are read and written around every
  // step of its reduction loop; hoisting the pair out (on tensors, where
  // the loop carries the tile as an iter_arg) keeps them in registers.
  // Nothing leaves a workgroup loop: it is a kernel.
  funcPm.addPass(createLinformerHoistInKernelsPass());
  addCleanup(funcPm);

  // Bufferize after vectorization: vector transfers on tensors fold their
  // slices, and one-shot analysis then keeps tiles in place.
  addBufferization(pm);
  OpPassManager &bufPm = pm.nest<func::FuncOp>();
  addCleanup(bufPm);
  // Per-tile scratch (a query tile's scores) lives on the stack.
  bufferization::PromoteBuffersToStackPassOptions stackOptions;
  stackOptions.maxAllocSizeInBytes = 1 << 18;
  stackOptions.maxRankOfAllocatedMemRef = 6;
  bufPm.addPass(bufferization::createPromoteBuffersToStackPass(stackOptions));
  bufferization::BufferDeallocationPipelineOptions deallocOptions;
  bufferization::buildBufferDeallocationPipeline(pm, deallocOptions);

  // Buffer layouts are final once the kernels bind them.
  if (options.padRowStrides)
    pm.nest<func::FuncOp>().addPass(createLinformerCPUPadRowStridesPass());

  // One kernel per workgroup loop; from here on each kernel is a function
  // whose loops are sequential.
  LinformerOutlineKernelsPassOptions outlineOptions;
  outlineOptions.packedSequences = options.packedSequences;
  pm.addPass(createLinformerOutlineKernelsPass(outlineOptions));
  OpPassManager &lowerPm = pm.nest<func::FuncOp>();
  LinformerCPULowerVectorsPassOptions lowerVectorsOptions;
  lowerVectorsOptions.bf16Dot = options.bf16Dot;
  lowerVectorsOptions.f16 = f16;
  lowerPm.addPass(createLinformerCPULowerVectorsPass(lowerVectorsOptions));
  // n-D transfers that remain (tile boundaries) become unrolled 1-D ones,
  // which convert-vector-to-llvm turns into (masked) vector loads/stores.
  VectorTransferToSCFOptions transferOptions;
  transferOptions.enableFullUnroll();
  lowerPm.addPass(createConvertVectorToSCFPass(transferOptions));
  // Bufferization's copies between strided buffers as loops (the LLVM
  // lowering would call a runner-library function the kernels do not link).
  lowerPm.addPass(createLinformerCPUExpandStridedCopiesPass());
  lowerPm.addPass(createConvertLinalgToLoopsPass());
  lowerPm.addPass(createForallToForLoopPass());
  // Only now are all loops sequential, so scratch can be shared.
  lowerPm.addPass(createLinformerHoistStaticAllocasPass());
  // Packed sequence buffers: every access, now a load or a store, finds
  // its row through the lengths.
  lowerPm.addPass(createLinformerPackedSequencesPass());
  addCleanup(lowerPm);
  if (!options.toLLVM)
    return;
  addLLVMLowering(pm);
}

/// Host code on memrefs and loops to the LLVM dialect, entry points taking
/// bare pointers.
static void addLLVMLowering(OpPassManager &pm) {
  // While conversions are still arith ops: without hardware bf16
  // conversion LLVM would call a libgcc helper that GCC 12 lacks.
  pm.addPass(createLinformerCPUExpandBF16Pass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // x86vector ops (linformer-cpu-lower-vectors' vdpbf16ps) become calls
  // of their LLVM intrinsics.
  ConvertVectorToLLVMPassOptions vectorOptions;
  vectorOptions.x86Vector = true;
  vectorOptions.amx = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorOptions));
  // Heap buffers through the generic functions, which
  // linformer-cpu-scratch-hooks defines below: the runtime's per-thread
  // cache of blocks where it set the hooks, else malloc.
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (erf: GELU in the CUDA pipeline's
  // on-host nest, where the GPU would take libdevice's) calls libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  // Kernels take plain pointers: static shapes need no descriptors, and a
  // C caller (the runtime) passes buffers as they are.
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  // Branches through the dialects' interfaces, with AMX's: a loop that
  // carries AMX tiles (linformer-cpu-lower-vectors' accumulators) branches
  // with x86_amx values, a type the control-flow pass alone does not know.
  ConvertToLLVMPassOptions branchOptions;
  branchOptions.filterDialects = {"cf", "amx"};
  pm.addPass(createConvertToLLVMPass(branchOptions));
  pm.addPass(createReconcileUnrealizedCastsPass());
  // After expanded bf16 roundings: stores of their bits, not of bf16.
  pm.addPass(createLinformerCPUStoreBF16BitsPass());
  pm.addPass(createLinformerCPUScratchHooksPass());
  pm.addPass(createCanonicalizerPass());
}

namespace {
/// What the CUDA pipeline's schedules read of the target: its numbers (from
/// the chip, sm_90's where it names none this compiler knows), a warp along
/// x (consecutive addresses) and 8 rows of warps along y (256 threads),
/// within its block limit, and the blocks the attention core keeps at
/// least.
struct CUDALaunchShape {
  ::linformer::schedule::CUDATarget target =
      ::linformer::schedule::presetCUDATarget(90);
  int64_t threadsX = 0, threadsY = 0;
  int64_t coreMinBlocks = 0;
};

CUDALaunchShape cudaLaunchShape(const CUDAPipelineOptions &options) {
  CUDALaunchShape shape;
  StringRef chip = options.chip;
  int64_t sm = 0;
  if (chip.consume_front("sm_") &&
      !chip.take_while(llvm::isDigit).getAsInteger(10, sm))
    (void)::linformer::schedule::knownCUDATarget(sm, shape.target);
  shape.threadsX =
      options.threadsX ? int64_t(options.threadsX) : shape.target.warpSize;
  shape.threadsY =
      options.threadsY
          ? int64_t(options.threadsY)
          : std::min<int64_t>(8, shape.target.maxThreadsPerBlock /
                                     shape.threadsX);
  // Two blocks an SM (the staged core's shared memory and registers), two
  // waves at least: the f32 core's lanes a row, the staged core's groups.
  shape.coreMinBlocks = options.coreMinBlocks >= 0
                            ? int64_t(options.coreMinBlocks)
                            : 4 * shape.target.smCount;
  return shape;
}

/// The f32 attention core's query rows a thread: two rows a lane with the
/// lanes chosen (4) need blocks 32 threads wide along x for whole warps;
/// narrower blocks (threads-x < 32) keep one row and the lanes chosen for
/// it unless the lanes are given.
static int64_t f32CoreRows(const CUDAPipelineOptions &options,
                           const CUDALaunchShape &shape) {
  return options.coreLanes == 0 && shape.threadsX < 32
             ? int64_t(1)
             : int64_t(options.coreRows);
}

/// Tensor cores: contractions become warp tiles of mma.sync. On the host
/// they keep their mma.sync, ldmatrix, cp.async, barriers and wgmma
/// (linformer-cuda-emulate-warps lowers them below), but for exact
/// emulation, which is replayed (the same tiles in scalars). Without them
/// (mma=none), f32 contractions run as the same staged tiles with f32
/// products (precision=f32, SIMT).
void addCUDAContractions(OpPassManager &funcPm,
                         const CUDAPipelineOptions &options,
                         const CUDALaunchShape &shape) {
  const ::linformer::schedule::CUDATarget &target = shape.target;
  // 16-bit readers read 16-bit buffers (not when the emulation rounds
  // nothing).
  if ((options.mma == "bf16" || options.mma == "f16") &&
      !(options.onHost && options.mmaExact)) {
    LinformerCUDANarrowIntermediatesPassOptions narrowOptions;
    narrowOptions.precision = options.mma;
    narrowOptions.elementwise = options.narrowElementwise;
    funcPm.addPass(createLinformerCUDANarrowIntermediatesPass(narrowOptions));
  }
  // Each contraction's schedule, from the target's SMs, shared memory
  // and block.
  LinformerCUDASelectSchedulesPassOptions selectOptions;
  selectOptions.precision =
      options.mma != "none" ? std::string(options.mma) : "f32";
  // Split-K until a contraction has 8 warps an SM (one 256-thread block
  // each): 1056 on an H100, 864 on an A100.
  selectOptions.splitKWarps = options.splitKWarps >= 0
                                  ? int64_t(options.splitKWarps)
                                  : 8 * target.smCount;
  // Staged contractions: 8-warp blocks (as the core), their buffer
  // within the core's budget.
  selectOptions.sharedBytes =
      options.stageContractions ? std::min(target.sharedBytesPerBlock,
                                           target.sharedBytesPerSM / 2)
                                : 0;
  selectOptions.blockWarps = shape.threadsY;
  selectOptions.prefetch = options.prefetchContractions;
  selectOptions.ldmatrix = options.ldmatrixContractions;
  selectOptions.ldmatrixTrans = options.ldmatrixTransContractions;
  selectOptions.asyncCopy = options.asyncCopyContractions;
  selectOptions.asyncStages = options.asyncStages;
  selectOptions.chunkK = options.chunkKContractions > 0
                             ? int64_t(options.chunkKContractions)
                         : options.onHost ? 16
                                          : 64;
  selectOptions.wgmma = options.wgmma;
  selectOptions.wgmmaInFlight = options.wgmmaInFlight;
  selectOptions.wgmmaSwizzle = options.wgmmaSwizzle;
  selectOptions.wgmmaTileN = options.wgmmaTileN;
  selectOptions.pairStores = options.pairStoresContractions;
  selectOptions.exact = options.onHost && options.mmaExact;
  selectOptions.scheduleFile = options.scheduleFile;
  // The attention core on tensor cores: a block's keys and values in
  // shared memory, at most half an SM's so that two blocks (16 warps)
  // can share one.
  selectOptions.coreSharedBytes =
      options.stageCore
          ? std::min(target.sharedBytesPerBlock, target.sharedBytesPerSM / 2)
          : 0;
  selectOptions.coreWarps = shape.threadsY;
  selectOptions.coreLdmatrix = options.ldmatrixCore;
  selectOptions.coreSlots = options.coreSlots;
  selectOptions.coreGroups = options.coreGroups;
  selectOptions.coreTiles = options.coreTiles;
  selectOptions.coreMinBlocks = shape.coreMinBlocks;
  selectOptions.coreLanes = options.coreLanes;
  selectOptions.coreRows = f32CoreRows(options, shape);
  funcPm.addPass(createLinformerCUDASelectSchedulesPass(selectOptions));
  // What each contraction's tiles take over: the init before it, the
  // epilogue after it.
  funcPm.addPass(createLinformerCUDAAbsorbInitEpiloguePass());
  // A copy a split-K for shorter runs, in guards on the longest length.
  funcPm.addPass(createLinformerCUDALengthVariantsPass());
  LinformerCUDATensorCoreContractionsPassOptions mmaOptions;
  mmaOptions.precision = selectOptions.precision;
  mmaOptions.emulate = options.onHost;
  mmaOptions.exact = selectOptions.exact;
  mmaOptions.sumPartsInKernel = options.splitKInKernel;
  funcPm.addPass(createLinformerCUDATensorCoreContractionsPass(mmaOptions));
}

/// The kernels as GPU modules in NVVM, the host function the runtime's
/// launch plan, and (format != none) the binary.
void addGPUModules(OpPassManager &pm, const CUDAPipelineOptions &options,
                   const CUDALaunchShape &shape) {
  // Constants the kernels use are rematerialized inside them rather than
  // passed as arguments: kernels take buffers only.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  // Other constant-like ops too (a wgmma's accumulator struct starts as
  // llvm.mlir.poison).
  pm.addPass(createLinformerCUDASinkConstantsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // The host function becomes the runtime's launch plan; the kernels one
  // module.
  LinformerCUDAPlanLaunchesPassOptions planOptions;
  planOptions.sm = shape.target.sm;
  planOptions.blocksPerSM = options.blocksPerSM;
  planOptions.initializers = options.initializers;
  pm.addPass(createLinformerCUDAPlanLaunchesPass(planOptions));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  GpuNVVMAttachTargetOptions targetOptions;
  targetOptions.chip = options.chip;
  targetOptions.features = options.features;
  targetOptions.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(targetOptions));
  OpPassManager &gpuPm = pm.nest<gpu::GPUModuleOp>();
  gpuPm.addPass(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions nvvmOptions;
  nvvmOptions.useBarePtrCallConv = true;
  gpuPm.addPass(createConvertGpuOpsToNVVMOps(nvvmOptions));
  // NVVM ops without an LLVM intrinsic (wgmma.mma_async) become inline PTX.
  if (options.wgmma)
    gpuPm.addPass(createConvertNVVMToLLVMPass());
  gpuPm.addPass(createReconcileUnrealizedCastsPass());
  gpuPm.addPass(createLinformerCUDAExternDynamicSharedPass());
  gpuPm.addPass(createCanonicalizerPass());
  if (options.format != "none") {
    GpuModuleToBinaryPassOptions binaryOptions;
    binaryOptions.compilationTarget = options.format;
    binaryOptions.toolkitPath = options.toolkit;
    pm.addPass(createGpuModuleToBinaryPass(binaryOptions));
  }
}
} // namespace

void mlir::linformer::buildCUDAPipeline(OpPassManager &pm,
                                        const CUDAPipelineOptions &options) {
  // The attention core becomes one fused kernel (kept whole across
  // bufferization, expanded on buffers).
  addLinalgStages(pm, /*lowerCore=*/true, "auto", options.fuseCore);
  // One kernel per linalg op: elementwise producers (dtype extensions, GELU,
  // residual adds, the softmax's exp) fuse into their consumers instead of
  // each writing a tensor to device memory; contractions stay plain.
  pm.addNestedPass<func::FuncOp>(createLinformerCUDAFuseElementwisePass());
  // Which ops compute tokens (for the length rules), while on tensors.
  pm.addNestedPass<func::FuncOp>(createLinformerCUDAMarkTokenLoopsPass());
  // The result is a caller-provided buffer, as on the CPU.
  addBufferization(pm);
  if (options.onHost) {
    bufferization::BufferDeallocationPipelineOptions deallocOptions;
    bufferization::buildBufferDeallocationPipeline(pm, deallocOptions);
  }
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  addCleanup(funcPm);
  // Every linalg op becomes one scf.parallel (reductions stay sequential
  // inside it); tiling it makes an outer loop over blocks and an inner one
  // over the threads of a block, mapped to block and thread ids (x =
  // innermost; upstream gpu-map-parallel-loops maps a 4-d loop's innermost
  // dimension to a sequential loop). The schedule's numbers come from the
  // target: its SM count (split-K), its shared memory (the staged core).
  CUDALaunchShape shape = cudaLaunchShape(options);
  LinformerCUDAExpandAttentionCorePassOptions coreOptions;
  if (options.mma == "tf32" || options.mma == "tf32x3" ||
      options.mma == "bf16" || options.mma == "f16")
    coreOptions.mma = options.mma;
  coreOptions.emulate = options.onHost;
  coreOptions.exact = options.onHost && options.mmaExact;
  // The f32 core's schedule where the selection ran (with the
  // contractions'), else these.
  coreOptions.lanes = options.coreLanes;
  coreOptions.rows = f32CoreRows(options, shape);
  coreOptions.minBlocks = shape.coreMinBlocks;
  funcPm.addPass(createLinformerCUDAPrepareLoopsPass());
  if (options.mma != "none" ||
      (options.simtContractions && options.stageContractions))
    addCUDAContractions(funcPm, options, shape);
  // After the contractions, which store what the core reads (q, the
  // projected keys and values) into the 16-bit buffers narrowing gave
  // them when it rounds them anyway, and read its output as one when they
  // do.
  funcPm.addPass(createLinformerCUDAExpandAttentionCorePass(coreOptions));
  // Row sums (LayerNorm statistics, E's row sums): one warp a row.
  LinformerCUDAWarpReductionsPassOptions reduceOptions;
  reduceOptions.warps = shape.threadsY;
  // Split few long rows until their warps would fill every SM to half of
  // its 64 warps: enough loads in flight to stream E at n = 65536.
  reduceOptions.splitWarps = 32 * shape.target.smCount;
  reduceOptions.pairs = options.pairRowSums;
  reduceOptions.foldElementwise = options.foldRowElementwise;
  reduceOptions.unroll = options.rowSumUnroll;
  reduceOptions.vectors = options.rowSumVectors;
  funcPm.addPass(createLinformerCUDAWarpReductionsPass(reduceOptions));
  // Ops over tokens keep their (batch, token) loops for a length rule.
  funcPm.addPass(createLinformerCUDATokenParallelLoopsPass());
  funcPm.addPass(createConvertLinalgToParallelLoopsPass());
  LinformerCUDATileParallelLoopsPassOptions tileOptions;
  tileOptions.threadsX = shape.threadsX;
  tileOptions.threadsY = shape.threadsY;
  funcPm.addPass(createLinformerCUDATileParallelLoopsPass(tileOptions));
  // Packed sequences: every access to the sequence input and the output
  // finds its row through the lengths (the same rewrite as the CPU
  // kernels', each outermost parallel loop a kernel).
  if (options.packedSequences) {
    LinformerPackedSequencesPassOptions packedOptions;
    packedOptions.entry = true;
    funcPm.addPass(createLinformerPackedSequencesPass(packedOptions));
  }
  // Small independent launches on the same threads as one (the K and V
  // projections of one E X): on the host too, so that its emulation runs
  // the merged kernels.
  LinformerCUDAMergeLaunchesPassOptions mergeOptions;
  mergeOptions.maxBlocks = options.mergeLaunches >= 0
                               ? int64_t(options.mergeLaunches)
                               : shape.target.smCount;
  funcPm.addPass(createLinformerCUDAMergeLaunchesPass(mergeOptions));
  if (options.onHost) {
    // The tiled loop nest as it would be mapped, run on the CPU: block and
    // thread loops become sequential loops (tests check it against the
    // reference without a GPU), each thread loop split at its lanes'
    // warp-wide ops (shuffles, mma.sync) first, the GPU instructions
    // computed as the host can.
    funcPm.addPass(createLinformerCUDAEmulateWarpsPass());
    funcPm.addPass(createLinformerCUDAEmulateInstructionsPass());
    addLLVMLowering(pm);
    return;
  }
  // Blocks of a length rule whose token tile is past their sequence's
  // length return at once (the runtime launches one box of blocks). Not on
  // the host: its entry function's buffers are not zeroed, and a row no
  // block writes would be read, times a zero of E', by E X's last chunk.
  if (options.skipPaddingBlocks)
    funcPm.addPass(createLinformerCUDASkipPaddingBlocksPass());
  funcPm.addPass(createConvertParallelLoopToGpuPass());
  addCleanup(funcPm);
  addGPUModules(pm, options, shape);
}

void mlir::linformer::buildHalidePipeline(OpPassManager &pm) {
  CPUPipelineOptions options;
  options.halide = true;
  buildCPUPipeline(pm, options);
}

void mlir::linformer::registerAllLinformerPasses() {
  registerLinformerCompilerPasses();
  registerLinformerCPUPasses();
  registerLinformerCUDAPasses();
}

void mlir::linformer::registerLinformerPipelines() {
  PassPipelineRegistration<>(
      "linformer-linalg-pipeline",
      "Linformer ops to linalg on tensors (verify, decompose, lower)",
      [](OpPassManager &pm) { buildLinalgPipeline(pm); });
  PassPipelineRegistration<CPUPipelineOptions>(
      "linformer-cpu-pipeline",
      "Linformer ops to LLVM dialect CPU code (tile, fuse, vectorize, "
      "bufferize, lower)",
      buildCPUPipeline);
  PassPipelineRegistration<>(
      "linformer-halide-pipeline",
      "Linformer ops to kernel functions on buffers, one linalg op each, "
      "for the Halide code generator",
      [](OpPassManager &pm) { buildHalidePipeline(pm); });
  PassPipelineRegistration<CUDAPipelineOptions>(
      "linformer-cuda-pipeline",
      "Linformer ops to GPU kernels in PTX (blocks x threads from the "
      "target; tensor cores with mma=...; the fused attention core with "
      "its keys and values staged in shared memory)",
      buildCUDAPipeline);
}
