//===- PlanLaunches.cpp - the host function as a list of launches -*- C++ -*-===//
//
// After kernel outlining (see Passes.td): the host function of the CUDA
// pipeline must be nothing but buffers and launches, because the runtime
// does not run host code; it replays the plan this pass records, a
// #linformer.dispatch_plan: each launch in order (#linformer.kernel with
// name, workgroups, buffers, grid, block, shared bytes, blocks_per_sm) and
// the bytes of each memref.alloc, in order, with buffer ids numbered like
// the CPU plan's (OutlineKernels.cpp): the entry's arguments first, then the
// intermediates. Views of a buffer
// (expand/collapse_shape, casts) bind the buffer itself: with bare-pointer
// kernel arguments a view of an identity-layout buffer is its base pointer.
// Length variants (an scf.if marked `linformer.length_guard` T, which a
// contraction's split-K for shorter runs made) are planned branch by
// branch: each kernel in them records the range of longest lengths it runs
// for (`max_length = [lo, hi]`), and the ops computing the condition are
// left to the runtime. Anything else on the host (a loop, a load) is an
// error at that op.
//
// It also moves every outlined kernel into one gpu.module, named after the
// entry, so that the artifact carries one PTX module (and one cubin).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/LoopMapping.h"
#include "compiler/Codegen/CUDA/MmaUtils.h"
#include "compiler/Codegen/CUDA/Passes.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Schedule/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAPLANLAUNCHESPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

/// Which of `kernel`'s arguments it may write: each write effect in its
/// body traced back through views to the buffer it writes. A write into a
/// buffer of the kernel's own (shared memory, a private array) writes no
/// argument; a write whose buffer cannot be traced, and an op whose
/// effects are unknown, count as writes of every argument (the runtime
/// then orders the kernel after and before every kernel that shares a
/// buffer with it).
SmallVector<bool> writtenArguments(gpu::GPUFuncOp kernel) {
  unsigned n = kernel.getNumArguments();
  SmallVector<bool> written(n, false);
  Block *entry = &kernel.getBody().front();
  bool all = false;
  kernel.walk([&](Operation *op) {
    if (all || op == kernel.getOperation() || cuda::touchesNoBuffer(op))
      return;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
          !isMemoryEffectFree(op))
        all = true;
      return;
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &e : list) {
      if (!isa<MemoryEffects::Write>(e.getEffect()) ||
          isa<SideEffects::AutomaticAllocationScopeResource>(e.getResource()))
        continue;
      Value v = e.getValue();
      if (!v) {
        all = true;
        return;
      }
      Value root = cuda::viewedBuffer(v);
      auto arg = dyn_cast<BlockArgument>(root);
      if (arg && arg.getOwner() == entry && arg.getArgNumber() < n)
        written[arg.getArgNumber()] = true;
      else if (!isa_and_nonnull<memref::AllocaOp, memref::AllocOp,
                                gpu::DynamicSharedMemoryOp>(
                   root.getDefiningOp()))
        all = true;
    }
  });
  if (all)
    written.assign(n, true);
  return written;
}

struct CUDAPlanLaunchesPass
    : mlir::linformer::impl::LinformerCUDAPlanLaunchesPassBase<
          CUDAPlanLaunchesPass> {
  using Base::Base;

  ::linformer::schedule::CUDATarget target;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blocksPerSM < 1 ||
        !::linformer::schedule::knownCUDATarget(sm, target)) {
      module.emitError() << "linformer-cuda-plan-launches needs a known sm "
                            "(70, 75, 80, 86, 89, 90, 100 or 120) and "
                            "blocks-per-sm >= 1, not sm "
                         << int64_t(sm) << " and blocks-per-sm "
                         << int64_t(blocksPerSM);
      return signalPassFailure();
    }
    for (func::FuncOp fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(plan(fn)))
        return signalPassFailure();
  }

  /// The bytes of a statically shaped, identity-layout memref, or failure.
  static FailureOr<int64_t> staticBytes(MemRefType type) {
    if (!type.hasStaticShape() || !type.getLayout().isIdentity())
      return failure();
    unsigned bits = type.getElementTypeBitWidth();
    return type.getNumElements() * int64_t((bits + 7) / 8);
  }

  /// The end of the furthest memref.view of dynamic shared memory in the
  /// launched kernel (0 without one); an error at a view whose offset or
  /// shape is not static.
  static FailureOr<int64_t> dynamicSharedBytes(gpu::LaunchFuncOp launch) {
    auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
        launch, launch.getKernel());
    int64_t end = 0;
    if (!kernel)
      return end;
    WalkResult r = kernel.walk([&](memref::ViewOp view) {
      if (!view.getSource().getDefiningOp<gpu::DynamicSharedMemoryOp>())
        return WalkResult::advance();
      std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
      FailureOr<int64_t> bytes = staticBytes(view.getType());
      if (!shift || failed(bytes)) {
        view.emitError("a view of dynamic shared memory needs a constant "
                       "offset and a static shape to size the launch");
        return WalkResult::interrupt();
      }
      end = std::max(end, *shift + *bytes);
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      return failure();
    return end;
  }

  /// An op of the entry function with the range [lo, hi) of longest
  /// lengths it runs for (a length variant's ops: their guard's).
  struct Item {
    Operation *op;
    int64_t lo, hi;
  };

  /// What plan() builds for one entry function.
  struct Plan {
    func::FuncOp fn;
    int64_t seqLen = 0;
    /// The runtime's buffer index of every value that is a buffer.
    DenseMap<Value, int64_t> bufferOf;
    SmallVector<int64_t> intermediates;
    SmallVector<KernelLaunchAttr> kernels;
    SmallVector<gpu::LaunchFuncOp> launches;
    ArrayAttr launchRows;
    SmallVector<Item> items;
    /// The ops computing the guards' conditions from the lengths (the
    /// runtime evaluates them from the plan instead).
    llvm::SmallPtrSet<Operation *, 16> guardInputs;
  };

  /// The entry's ops in order, each length variant's (the ops of a
  /// `linformer.length_guard` scf.if's branches) with its range.
  LogicalResult collect(Plan &p, Block &block, int64_t lo, int64_t hi) {
    for (Operation &op : block) {
      auto guard = dyn_cast<scf::IfOp>(op);
      if (!guard || !guard->hasAttr(kLengthGuardAttrName)) {
        if (!isa<scf::YieldOp>(op) || &block == &p.fn.getBody().front())
          p.items.push_back({&op, lo, hi});
        continue;
      }
      auto t = guard->getAttrOfType<IntegerAttr>(kLengthGuardAttrName);
      if (p.seqLen <= 0 || !t || t.getInt() < 1 || t.getInt() >= p.seqLen ||
          guard.getNumResults() != 0 || guard.getElseRegion().empty())
        return guard.emitError("a length guard needs an integer T with "
                               "1 <= T < n (the sequence argument's "
                               "length), an else branch and no results");
      SmallVector<Value> work{guard.getCondition()};
      while (!work.empty()) {
        Operation *def = work.pop_back_val().getDefiningOp();
        if (def && p.guardInputs.insert(def).second)
          llvm::append_range(work, def->getOperands());
      }
      if (failed(collect(p, *guard.thenBlock(), lo,
                         std::min(hi, t.getInt()))) ||
          failed(collect(p, *guard.elseBlock(), std::max(lo, t.getInt()), hi)))
        return failure();
    }
    return success();
  }

  /// A device buffer (an intermediate) or a view of one.
  LogicalResult planBuffer(Plan &p, Operation &op) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      if (alloc->getBlock() != &p.fn.getBody().front())
        return alloc.emitError("a device buffer of a length variant must "
                               "be allocated outside its guard");
      FailureOr<int64_t> bytes = staticBytes(alloc.getType());
      if (failed(bytes))
        return alloc.emitError("a device buffer needs a static shape and "
                               "an identity layout, not ")
               << alloc.getType();
      p.bufferOf[alloc] = p.fn.getNumArguments() + p.intermediates.size();
      p.intermediates.push_back(*bytes);
      return success();
    }
    auto it = p.bufferOf.find(op.getOperand(0));
    if (it == p.bufferOf.end() ||
        !cast<MemRefType>(op.getResult(0).getType()).getLayout().isIdentity())
      return op.emitError("a view the CUDA runtime cannot bind: its "
                          "source is not a buffer or its layout is "
                          "not the identity");
    p.bufferOf[op.getResult(0)] = it->second;
    return success();
  }

  /// The constant values of a grid or block size, or failure.
  static FailureOr<SmallVector<int64_t>> constants(ValueRange values) {
    SmallVector<int64_t> out;
    for (Value v : values) {
      std::optional<int64_t> c = getConstantIntValue(v);
      if (!c)
        return failure();
      out.push_back(*c);
    }
    return out;
  }

  /// The dynamic shared memory `launch` takes: its constant, else (set on
  /// it) as many bytes as its kernel's views reach.
  static FailureOr<int64_t> launchSharedBytes(gpu::LaunchFuncOp launch) {
    // A kernel that views dynamic shared memory (the staged attention
    // core) is launched with as many bytes as its views reach.
    if (!launch.getDynamicSharedMemorySize()) {
      FailureOr<int64_t> bytes = dynamicSharedBytes(launch);
      if (failed(bytes))
        return failure();
      if (*bytes > 0) {
        OpBuilder ob(launch);
        launch.getDynamicSharedMemorySizeMutable().assign(
            arith::ConstantIntOp::create(ob, launch.getLoc(), *bytes, 32));
      }
    }
    int64_t shared = 0;
    if (Value s = launch.getDynamicSharedMemorySize()) {
      std::optional<int64_t> c = getConstantIntValue(s);
      if (!c)
        return launch.emitError("the dynamic shared memory must be "
                                "constant");
      shared = *c;
    }
    return shared;
  }

  /// One launch's record in the plan: its name, grid, block, shared
  /// memory, resident blocks, buffers, length rule and length range.
  LogicalResult planLaunch(Plan &p, gpu::LaunchFuncOp launch, int64_t lo,
                           int64_t hi) {
    MLIRContext *ctx = launch.getContext();
    if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
        launch.hasClusterSize())
      return launch.emitError("async launches and clusters are not "
                              "planned yet");
    FailureOr<SmallVector<int64_t>> grid = constants(
        {launch.getGridSizeX(), launch.getGridSizeY(), launch.getGridSizeZ()});
    if (failed(grid))
      return launch.emitError("the grid must be constant");
    FailureOr<SmallVector<int64_t>> block =
        constants({launch.getBlockSizeX(), launch.getBlockSizeY(),
                   launch.getBlockSizeZ()});
    if (failed(block))
      return launch.emitError("the block must be constant");
    int64_t workgroups = llvm::product_of(*grid);
    FailureOr<int64_t> shared = launchSharedBytes(launch);
    if (failed(shared))
      return failure();
    auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
        launch, launch.getKernelAttr());
    if (!kernel)
      return launch.emitError("the launched kernel does not exist");
    SmallVector<bool> written = writtenArguments(kernel);
    SmallVector<int64_t> buffers, writes;
    for (auto [i, v] : llvm::enumerate(launch.getKernelOperands())) {
      auto it = p.bufferOf.find(v);
      if (it == p.bufferOf.end())
        return launch.emitError("kernel operand #")
               << i << " (" << v.getType()
               << ") is not a buffer; kernels take buffers only (constants "
                  "belong inside the kernel)";
      buffers.push_back(it->second);
      if (i < written.size() && written[i] &&
          !llvm::is_contained(writes, it->second))
        writes.push_back(it->second);
    }
    std::string name =
        (p.fn.getSymName() + "_kernel_" + Twine(p.kernels.size())).str();
    int64_t threads = llvm::product_of(*block);
    int64_t resident = target.residentBlocks(threads, *shared, blocksPerSM);
    // The length rule of the loop this launch came from (recorded in
    // launch order by linformer-cuda-tile-parallel-loops); it numbers
    // block x, so the grid must be x alone.
    TokenRowsAttr rows;
    if (p.launchRows && p.kernels.size() < p.launchRows.size())
      rows = dyn_cast<TokenRowsAttr>(p.launchRows[p.kernels.size()]);
    if (rows && ((*grid)[1] != 1 || (*grid)[2] != 1 ||
                 llvm::product_of(rows.getGrid().asArrayRef()) != workgroups))
      return launch.emitError("the length rule ")
             << rows << " does not number this launch's grid ["
             << (*grid)[0] << ", " << (*grid)[1] << ", " << (*grid)[2] << "]";
    SmallVector<int64_t> maxLength;
    if (lo > 0 || hi < p.seqLen)
      maxLength = {lo, hi};
    Builder b(ctx);
    p.kernels.push_back(KernelLaunchAttr::get(
        ctx, b.getStringAttr(name), workgroups, buffers, writes,
        /*schedule=*/{}, /*shape=*/{}, /*generator=*/{}, *grid, *block, *shared,
        resident, rows, maxLength, /*initializer=*/false,
        /*allReduce=*/0, /*gather=*/0));
    p.launches.push_back(launch);
    return success();
  }

  /// One gpu.module for the entry: each launched kernel is moved there
  /// (cloned, so that a kernel launched twice stays valid) under its plan
  /// name; the modules no launch names any more are erased.
  LogicalResult moveKernels(Plan &p) {
    func::FuncOp fn = p.fn;
    MLIRContext *ctx = fn.getContext();
    ModuleOp module = getOperation();
    Builder b(ctx);
    std::string moduleName = (fn.getSymName() + "_kernels").str();
    if (SymbolTable::lookupSymbolIn(module, moduleName))
      return fn.emitError("a symbol named '")
             << moduleName << "' already exists";
    OpBuilder mb(ctx);
    mb.setInsertionPointAfter(fn);
    auto kernels = gpu::GPUModuleOp::create(mb, fn.getLoc(), moduleName);
    SymbolTable kernelsTable(kernels);
    llvm::SetVector<Operation *> emptied;
    for (auto [launch, attr] : llvm::zip(p.launches, p.kernels)) {
      auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernelAttr());
      if (!kernel)
        return launch.emitError("the launched kernel does not exist");
      std::string name = attr.getName().str();
      gpu::GPUFuncOp copy = kernel.clone();
      copy.setName(name);
      // ptxas keeps the registers within what that many blocks leave.
      int64_t resident = attr.getBlocksPerSm();
      if (resident > 1)
        copy->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      b.getI32IntegerAttr(resident));
      kernelsTable.insert(copy);
      launch.setKernelAttr(SymbolRefAttr::get(
          b.getStringAttr(moduleName),
          {FlatSymbolRefAttr::get(b.getStringAttr(name))}));
      emptied.insert(kernel->getParentOp());
    }
    for (Operation *old : emptied) {
      bool stillUsed = false;
      auto oldModule = cast<gpu::GPUModuleOp>(old);
      module.walk([&](gpu::LaunchFuncOp l) {
        stillUsed |= l.getKernelModuleName() == oldModule.getSymName();
      });
      if (!stillUsed)
        old->erase();
    }
    return success();
  }

  /// The entry's dispatch plan: every launch in order (length variants
  /// with their ranges), its buffers, the intermediates' sizes.
  /// The launches that compute the same values in every run, from the
  /// weights alone, become initializers: the candidates (no length rule or
  /// variant) shrink to a fixed point where each binds arguments only as
  /// weights it reads, and intermediates only where every writer is a
  /// candidate and comes before every launch that is not.
  void markInitializers(Plan &p) {
    unsigned args = p.fn.getNumArguments();
    size_t n = p.kernels.size();
    SmallVector<bool> candidate(n);
    for (auto [k, attr] : llvm::enumerate(p.kernels))
      candidate[k] = !attr.getRows() && attr.getMaxLength().empty();
    auto made = [&](size_t k) {
      for (int64_t id : p.kernels[k].getBuffers()) {
        bool written = llvm::is_contained(p.kernels[k].getWrites(), id);
        if (id < int64_t(args)) {
          if (written || !isWeightArgument(p.fn, unsigned(id)))
            return false;
          continue;
        }
        // The last candidate writer and the first other binder.
        size_t lastWriter = 0, firstOther = n;
        for (size_t j = 0; j < n; ++j) {
          KernelLaunchAttr other = p.kernels[j];
          if (!llvm::is_contained(other.getBuffers(), id))
            continue;
          bool writes = llvm::is_contained(other.getWrites(), id);
          if (writes && !candidate[j])
            return false;
          if (writes)
            lastWriter = j;
          else if (!candidate[j])
            firstOther = std::min(firstOther, j);
        }
        if (firstOther < lastWriter)
          return false;
      }
      return true;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t k = 0; k < n; ++k)
        if (candidate[k] && !made(k)) {
          candidate[k] = false;
          changed = true;
        }
    }
    for (size_t k = 0; k < n; ++k)
      if (candidate[k])
        p.kernels[k] = p.kernels[k].asInitializer();
  }

  LogicalResult plan(func::FuncOp fn) {
    Plan p;
    p.fn = fn;
    for (BlockArgument arg : fn.getArguments()) {
      if (!isa<MemRefType>(arg.getType()))
        return fn.emitError("argument #")
               << arg.getArgNumber() << " has type " << arg.getType()
               << "; the CUDA runtime binds buffers only";
      p.bufferOf[arg] = arg.getArgNumber();
    }
    p.launchRows = fn->getAttrOfType<ArrayAttr>(kCUDALaunchRowsAttrName);
    p.seqLen = markedSequenceLength(fn);
    if (failed(collect(p, fn.getBody().front(), 0, p.seqLen)))
      return failure();
    for (auto [opPtr, lo, hi] : p.items) {
      Operation &op = *opPtr;
      if (isa<arith::ConstantOp, memref::DeallocOp, func::ReturnOp>(op) ||
          p.guardInputs.contains(&op))
        continue;
      if (isa<memref::AllocOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
              memref::CastOp>(op)) {
        if (failed(planBuffer(p, op)))
          return failure();
        continue;
      }
      auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
      if (!launch)
        return op.emitError("'")
               << op.getName()
               << "' would run on the host, which cannot touch device "
                  "buffers; the CUDA pipeline must make it part of a kernel";
      if (failed(planLaunch(p, launch, lo, hi)))
        return failure();
    }
    if (p.launches.empty())
      return fn.emitError("the CUDA pipeline produced no kernel launch");
    if (p.launchRows && p.launchRows.size() != p.launches.size())
      return fn.emitError("the length rules name ")
             << p.launchRows.size() << " block loops, and there are "
             << p.launches.size() << " launches";
    fn->removeAttr(kCUDALaunchRowsAttrName);
    if (initializers)
      markInitializers(p);
    if (failed(moveKernels(p)))
      return failure();
    // linformer-packed-sequences{entry} marked the arguments it made
    // packed.
    bool packed = false;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      packed |= bool(fn.getArgAttr(i, kPackedSequenceArgAttrName));
    setDispatchPlan(fn, DispatchPlanAttr::get(fn.getContext(), p.kernels,
                                              p.intermediates, packed,
                                              sequenceArguments(fn)));
    return success();
  }
};

} // namespace
