//===- EmulateWarps.cpp - warp-wide ops on the host -------------*- C++ -*-===//
//
// The host's lowering of the ops a warp's lanes perform together (see
// LinformerCUDAEmulateWarpsPass in Passes.td): the CPU runs a thread loop
// one thread to its end before the next, so a value another lane has not
// computed yet cannot be read. Each thread loop is split at its warp-wide
// ops instead: the loop up to one stores the op's operands (and whatever
// the rest needs that cannot be recomputed) into buffers with one element
// a thread, and a second loop over the same threads, holding the rest,
// computes each lane's result from every lane's elements there, as the
// PTX ISA defines it (a shuffle's partner, an mma's fragments). A loop
// inside the thread loop that holds such an op, with bounds every thread
// shares, becomes a loop of thread loops (its carried values in buffers
// too). The kernels' own code is what runs; nothing is replayed by hand.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/MmaUtils.h"
#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAEMULATEWARPSPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

constexpr int64_t kWarp = 32;

/// The dimension of `loop` mapped to thread x (the lanes), if any.
std::optional<unsigned> laneDim(scf::ParallelOp loop) {
  auto mapping = loop->getAttrOfType<ArrayAttr>(gpu::getMappingAttrName());
  if (!mapping)
    return std::nullopt;
  for (auto [i, m] : llvm::enumerate(mapping))
    if (auto dim = dyn_cast<gpu::ParallelLoopDimMappingAttr>(m))
      if (dim.getProcessor() == gpu::Processor::ThreadX)
        return i;
  return std::nullopt;
}

/// Each thread loop whose body is side-effect-free ops and then one scf.if
/// on a condition that no thread id reaches (a merged launch's choice of
/// body, linformer-cuda-merge-launches: uniform in a block, so its
/// barriers and warp-wide ops are legal on the GPU) becomes an scf.if of a
/// thread loop a branch, each with those ops again, which then split at
/// their own warp-wide ops (a launch merged twice: again, inside).
void unswitchUniformBranches(func::FuncOp func) {
  // `loop`'s branch and the ops of its body that compute the branch's
  // condition, in order, if none of them reads a thread id or touches
  // memory.
  struct Uniform {
    scf::IfOp branch;
    SmallVector<Operation *> chain;
  };
  auto uniformChain = [](scf::ParallelOp loop) -> std::optional<Uniform> {
    Block *body = loop.getBody();
    auto branch = dyn_cast<scf::IfOp>(body->getTerminator()->getPrevNode());
    if (!laneDim(loop) || !loop.getInitVals().empty() || !branch ||
        branch.getNumResults() != 0)
      return std::nullopt;
    for (Operation &op : body->without_terminator())
      if (&op != branch && (op.getNumRegions() || !isMemoryEffectFree(&op)))
        return std::nullopt;
    llvm::SetVector<Operation *> chain;
    SmallVector<Value> work{branch.getCondition()};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!loop->isAncestor(v.getParentRegion()->getParentOp()))
        continue;
      Operation *def = v.getDefiningOp();
      if (!def)
        return std::nullopt; // a thread id
      if (chain.insert(def))
        work.append(def->operand_begin(), def->operand_end());
    }
    Uniform uniform{branch, {}};
    for (Operation &op : body->without_terminator())
      if (chain.contains(&op))
        uniform.chain.push_back(&op);
    return uniform;
  };
  // Thread loops (none holds another: erasing one leaves the list valid).
  SmallVector<scf::ParallelOp> work;
  func.walk([&](scf::ParallelOp loop) {
    if (laneDim(loop))
      work.push_back(loop);
  });
  while (!work.empty()) {
    scf::ParallelOp loop = work.pop_back_val();
    std::optional<Uniform> uniform = uniformChain(loop);
    if (!uniform)
      continue;
    Block *body = loop.getBody();
    scf::IfOp branch = uniform->branch;
    OpBuilder b(loop);
    IRMapping outside;
    for (Operation *op : uniform->chain)
      b.clone(*op, outside);
    auto outer = scf::IfOp::create(
        b, branch.getLoc(), outside.lookupOrDefault(branch.getCondition()),
        /*withElseRegion=*/!branch.getElseRegion().empty());
    for (auto [from, to] :
         llvm::zip(branch->getRegions(), outer->getRegions())) {
      if (from.empty())
        continue;
      b.setInsertionPoint(to.front().getTerminator());
      auto copy =
          scf::ParallelOp::create(b, loop.getLoc(), loop.getLowerBound(),
                                  loop.getUpperBound(), loop.getStep());
      copy->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
      IRMapping map;
      map.map(loop.getInductionVars(), copy.getInductionVars());
      b.setInsertionPoint(copy.getBody()->getTerminator());
      for (Operation &op : body->without_terminator())
        if (&op != branch)
          b.clone(op, map);
      for (Operation &op : from.front().without_terminator())
        b.clone(op, map);
      work.push_back(copy);
    }
    loop.erase();
  }
}

/// An op whose threads exchange values or wait for each other: lowered
/// here by splitting its thread loop.
bool isWarpOp(Operation *op) {
  return isa<gpu::ShuffleOp, nvgpu::MmaSyncOp, NVVM::MmaOp, nvgpu::LdMatrixOp,
             gpu::BarrierOp>(op) ||
         (isa<LLVM::InlineAsmOp>(op) &&
          op->hasAttr(mlir::linformer::kCUDAHostWgmmaAttrName));
}

/// Whether `op` loads from an argument of its function that is only ever
/// loaded from (an input such as the lengths): it reads the same value
/// wherever it runs.
bool loadsInput(Operation *op) {
  auto load = dyn_cast<memref::LoadOp>(op);
  auto arg = load ? dyn_cast<BlockArgument>(load.getMemRef()) : BlockArgument();
  return arg && isa<FunctionOpInterface>(arg.getOwner()->getParentOp()) &&
         llvm::all_of(arg.getUsers(), [](Operation *user) {
           return isa<memref::LoadOp>(user);
         });
}

/// Whether `loop`'s mapping puts a dimension on one of `processors`.
bool mapsTo(scf::ParallelOp loop, ArrayRef<gpu::Processor> processors) {
  auto mapping = loop->getAttrOfType<ArrayAttr>(gpu::getMappingAttrName());
  return mapping && llvm::any_of(mapping, [&](Attribute m) {
           auto dim = dyn_cast<gpu::ParallelLoopDimMappingAttr>(m);
           return dim && llvm::is_contained(processors, dim.getProcessor());
         });
}

/// Whether `loop`'s mapping puts a dimension on threads.
bool mapsThreads(scf::ParallelOp loop) {
  return mapsTo(loop, {gpu::Processor::ThreadX, gpu::Processor::ThreadY,
                       gpu::Processor::ThreadZ});
}

/// Whether `loop`'s mapping puts a dimension on blocks.
bool mapsBlocks(scf::ParallelOp loop) {
  return mapsTo(loop, {gpu::Processor::BlockX, gpu::Processor::BlockY,
                       gpu::Processor::BlockZ});
}

/// The kernels' dynamic shared memory on the host: one buffer a block
/// (allocated at the start of the body of the loop over blocks, or right
/// before the outermost loop over threads where there is none), as large
/// as its views reach; each `memref.view` of `gpu.dynamic_shared_memory`
/// becomes the same view of that buffer (host memory: no address space).
LogicalResult hostSharedMemory(func::FuncOp func) {
  SmallVector<gpu::DynamicSharedMemoryOp> raws;
  func.walk([&](gpu::DynamicSharedMemoryOp op) { raws.push_back(op); });
  // The views of each block's buffer, and how many bytes they reach.
  llvm::MapVector<Operation *, std::pair<SmallVector<memref::ViewOp>, int64_t>>
      homes;
  for (gpu::DynamicSharedMemoryOp raw : raws) {
    scf::ParallelOp threads;
    for (auto p = raw->getParentOfType<scf::ParallelOp>(); p;
         p = p->getParentOfType<scf::ParallelOp>())
      if (mapsThreads(p))
        threads = p;
    if (!threads)
      return raw.emitOpError(
          "is in no loop over threads: the host has no block to give its "
          "shared memory to");
    Operation *home = threads;
    for (auto p = threads->getParentOfType<scf::ParallelOp>(); p;
         p = p->getParentOfType<scf::ParallelOp>())
      if (mapsBlocks(p)) {
        home = p;
        break;
      }
    auto &[views, bytes] = homes[home];
    for (Operation *user : raw->getUsers()) {
      auto view = dyn_cast<memref::ViewOp>(user);
      std::optional<int64_t> shift =
          view ? getConstantIntValue(view.getByteShift()) : std::nullopt;
      if (!view || !shift || !view.getType().hasStaticShape())
        return user->emitOpError(
            "uses the dynamic shared memory other than as a static "
            "memref.view at a constant byte shift: the host cannot size "
            "its buffer");
      int64_t end = *shift + view.getType().getNumElements() *
                                 (view.getType().getElementTypeBitWidth() / 8);
      bytes = std::max(bytes, end);
      views.push_back(view);
    }
  }
  for (auto &[home, entry] : homes) {
    auto &[views, bytes] = entry;
    OpBuilder b(home);
    auto blocks = dyn_cast<scf::ParallelOp>(home);
    if (blocks && !mapsBlocks(blocks))
      blocks = nullptr;
    if (blocks)
      b.setInsertionPointToStart(blocks.getBody());
    Location loc = home->getLoc();
    auto buffer = memref::AllocOp::create(
        b, loc, MemRefType::get({std::max<int64_t>(bytes, 1)}, b.getI8Type()),
        b.getI64IntegerAttr(16));
    if (blocks)
      b.setInsertionPoint(blocks.getBody()->getTerminator());
    else
      b.setInsertionPointAfter(home);
    memref::DeallocOp::create(b, loc, buffer);
    for (memref::ViewOp view : views) {
      OpBuilder vb(view);
      auto type = MemRefType::get(view.getType().getShape(),
                                  view.getType().getElementType());
      Value hostView = memref::ViewOp::create(
          vb, view.getLoc(), type, buffer, view.getByteShift(), ValueRange{});
      view.getResult().replaceAllUsesWith(hostView);
      view.erase();
    }
  }
  for (gpu::DynamicSharedMemoryOp raw : raws)
    raw.erase();
  return success();
}

/// A memory barrier (`membar.gl`, NVVM::MembarOp) on the host: a
/// sequentially consistent fence. Blocks may run on several host threads
/// (split-K's parts, counted by an atomic add, publish their sums
/// through it).
void hostMemoryBarriers(func::FuncOp func) {
  SmallVector<NVVM::MembarOp> barriers;
  func.walk([&](NVVM::MembarOp op) { barriers.push_back(op); });
  for (NVVM::MembarOp op : barriers) {
    OpBuilder b(op);
    LLVM::FenceOp::create(b, op.getLoc(), LLVM::AtomicOrdering::seq_cst);
    op.erase();
  }
}

/// cp.async on the host: each `nvgpu.device_async_copy` copies its
/// elements at once (a vector load and store), and its groups and waits
/// go. Copying at issue rather than by the wait is what the kernels allow
/// anyway: a copy may land at any time before its wait, and the buffer it
/// writes is one no thread reads until a barrier after that wait.
LogicalResult hostAsyncCopies(func::FuncOp func) {
  SmallVector<Operation *> waits, groups, copies;
  func.walk([&](Operation *op) {
    if (isa<nvgpu::DeviceAsyncWaitOp>(op))
      waits.push_back(op);
    else if (isa<nvgpu::DeviceAsyncCreateGroupOp>(op))
      groups.push_back(op);
    else if (isa<nvgpu::DeviceAsyncCopyOp>(op))
      copies.push_back(op);
  });
  auto unused = [](Operation *op) -> LogicalResult {
    if (op->use_empty())
      return success();
    return op->emitOpError(
        "has a token that is used other than by a cp.async group or wait "
        "(carried by a loop?): not lowered for the host");
  };
  for (Operation *op : waits)
    op->erase();
  for (Operation *op : groups) {
    if (failed(unused(op)))
      return failure();
    op->erase();
  }
  for (Operation *op : copies) {
    if (failed(unused(op)))
      return failure();
    auto copy = cast<nvgpu::DeviceAsyncCopyOp>(op);
    if (copy.getSrcElements())
      return copy.emitOpError(
          "copies fewer source elements than it writes (zero fill): not "
          "lowered for the host");
    OpBuilder b(copy);
    Type elem = cast<MemRefType>(copy.getSrc().getType()).getElementType();
    auto type = VectorType::get({copy.getDstElements().getSExtValue()}, elem);
    Value v = vector::LoadOp::create(b, copy.getLoc(), type, copy.getSrc(),
                                     copy.getSrcIndices());
    vector::StoreOp::create(b, copy.getLoc(), v, copy.getDst(),
                            copy.getDstIndices());
    copy.erase();
  }
  return success();
}

/// The `memref.extract_aligned_pointer_as_index` a wgmma descriptor was
/// built from (cuda::wgmmaDescriptor: the shared buffer's address plus
/// the operand's offset, masked and shifted), found through the
/// arithmetic that made it; null when there is not exactly one.
memref::ExtractAlignedPointerAsIndexOp descriptorBase(Value desc) {
  memref::ExtractAlignedPointerAsIndexOp found;
  SmallVector<Value> work{desc};
  DenseSet<Operation *> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (auto base = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(def)) {
      if (found && found != base)
        return {};
      found = base;
      continue;
    }
    if (isa<arith::ArithDialect>(def->getDialect()))
      llvm::append_range(work, def->getOperands());
  }
  return found;
}

/// The thread loop around `op` (the scf.parallel with a dimension mapped
/// to thread x), its thread's linear index in the block (x fastest, then
/// y, then z: the hardware's order), or failure with an error.
FailureOr<Value> linearThread(OpBuilder &b, Operation *op) {
  auto loop = op->getParentOfType<scf::ParallelOp>();
  while (loop && !laneDim(loop))
    loop = loop->getParentOfType<scf::ParallelOp>();
  if (!loop)
    return op->emitOpError("is in no loop over threads (an scf.parallel with "
                           "a dimension mapped to thread x): the host has no "
                           "thread to compute it for");
  auto mapping = loop->getAttrOfType<ArrayAttr>(gpu::getMappingAttrName());
  Location loc = op->getLoc();
  Value linear, scale;
  for (gpu::Processor proc : {gpu::Processor::ThreadX, gpu::Processor::ThreadY,
                              gpu::Processor::ThreadZ})
    for (auto [i, m] : llvm::enumerate(mapping)) {
      auto dim = dyn_cast<gpu::ParallelLoopDimMappingAttr>(m);
      if (!dim || dim.getProcessor() != proc)
        continue;
      std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[i]),
                             st = getConstantIntValue(loop.getStep()[i]);
      if (lb != 0 || st != 1)
        return loop.emitOpError("has a warpgroup-wide op (wgmma) but a "
                                "thread dimension that does not count from "
                                "0 in steps of 1");
      Value iv = loop.getInductionVars()[i];
      linear =
          linear ? arith::AddIOp::create(
                       b, loc, linear, arith::MulIOp::create(b, loc, iv, scale))
                       .getResult()
                 : iv;
      Value ub = loop.getUpperBound()[i];
      scale = scale ? arith::MulIOp::create(b, loc, scale, ub).getResult() : ub;
    }
  return linear;
}

/// A wgmma operand in shared memory, as its matrix descriptor says (PTX
/// ISA, "Matrix Descriptor Format", "Shared Memory Matrix Layout"): its
/// buffer's 16-bit view, its first byte in that view, its leading and
/// stride byte offsets and its swizzle's bytes (0 none; index values
/// decoded from the descriptor's bits at run time), its layout.
struct SharedOperand {
  Value halves, start, lbo, sbo, swizzle;
  bool kMajor = true;

  /// The operand `desc` describes, for `op` (errors go there), its
  /// elements of type `half`. The start is an 18-bit shared address: taken
  /// relative to the buffer of the view whose address built the
  /// descriptor, modulo 2^18 (a block's shared memory is below 256 KiB).
  static FailureOr<SharedOperand> of(OpBuilder &b, Location loc, Operation *op,
                                     Value desc, bool kMajor, Type half) {
    memref::ExtractAlignedPointerAsIndexOp base = descriptorBase(desc);
    auto view = base ? base.getSource().getDefiningOp<memref::ViewOp>()
                     : memref::ViewOp();
    if (!view)
      return op->emitOpError(
          "has a descriptor not built from one shared buffer's address (a "
          "view of the block's shared memory): the host cannot tell what it "
          "reads");
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto i64c = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
    };
    auto type = cast<MemRefType>(view.getType());
    int64_t halves = type.getNumElements() * type.getElementTypeBitWidth() / 16;
    Value h = memref::ViewOp::create(b, loc, MemRefType::get({halves}, half),
                                     view.getSource(), view.getByteShift(),
                                     ValueRange{});
    auto field = [&](int64_t shift) -> Value {
      Value f = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, desc, i64c(shift)),
          i64c((int64_t(1) << 14) - 1));
      return arith::IndexCastUIOp::create(
          b, loc, b.getIndexType(), arith::ShLIOp::create(b, loc, f, i64c(4)));
    };
    Value mask = c(0x3FFFF);
    Value buf = arith::AndIOp::create(b, loc, base.getResult(), mask);
    Value start = arith::AndIOp::create(
        b, loc, arith::SubIOp::create(b, loc, field(0), buf), mask);
    // Bits 62-63: 0 none, 1 128 bytes, 2 64, 3 32 (256 >> mode).
    Value mode = arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(),
        arith::ShRUIOp::create(b, loc, desc, i64c(62)));
    Value swizzle = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, mode, c(0)),
        c(0), arith::ShRUIOp::create(b, loc, c(256), mode));
    return SharedOperand{h, start, field(16), field(32), swizzle, kMajor};
  }

  /// Element (i, k), i along m or n being `i8` 8 + `ir` (ir < 8), as f32.
  /// Unswizzled at (i % 8) 16 + (i / 8) SBO + (k % 8) 2 + (k / 8) LBO bytes
  /// K-major, (i % 8) 2 + (i / 8) SBO + (k % 8) 16 + (k / 8) LBO MN-major.
  /// Swizzled (S bytes) at (i % 8) S + (i / 8) SBO + 2 k K-major (k within
  /// the atom's line from the start), (2 i % S) + (2 i / S) LBO + (k % 8)
  /// S + (k / 8) SBO MN-major, then bits 4 .. XOR bits 7 .. (log2(S / 16)
  /// of each) of the offset in the buffer (1024-byte aligned on the GPU).
  Value element(OpBuilder &b, Location loc, Value i8, Value ir,
                int64_t k) const {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto add = [&](Value x, Value y) -> Value {
      return arith::AddIOp::create(b, loc, x, y);
    };
    auto mul = [&](Value x, Value y) -> Value {
      return arith::MulIOp::create(b, loc, x, y);
    };
    Value lineBytes = mul(ir, c(kMajor ? 16 : 2));
    int64_t inner = kMajor ? (k % 8) * 2 : (k % 8) * 16;
    Value bytes =
        add(start, add(mul(i8, sbo),
                       add(lineBytes, add(c(inner), mul(c(k / 8), lbo)))));
    // Swizzled: S is at least 32 there (16 stands in where there is none,
    // so that nothing divides by 0).
    Value none =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, swizzle, c(0));
    Value s = arith::SelectOp::create(b, loc, none, c(16), swizzle);
    Value swizzled;
    if (kMajor) {
      swizzled = add(start, add(mul(i8, sbo), add(mul(ir, s), c(2 * k))));
    } else {
      Value i2 = mul(add(mul(i8, c(8)), ir), c(2));
      swizzled =
          add(start, add(add(arith::RemUIOp::create(b, loc, i2, s),
                             mul(arith::DivUIOp::create(b, loc, i2, s), lbo)),
                         add(mul(c(k % 8), s), mul(c(k / 8), sbo))));
    }
    Value units = arith::SubIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, s, c(16)), c(1));
    Value row = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, swizzled, c(7)), units);
    swizzled = arith::XOrIOp::create(b, loc, swizzled,
                                     arith::ShLIOp::create(b, loc, row, c(4)));
    bytes = arith::SelectOp::create(b, loc, none, bytes, swizzled);
    Value v = memref::LoadOp::create(
        b, loc, halves,
        ValueRange{arith::DivUIOp::create(b, loc, bytes, c(2))});
    return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  }
};

/// The warp of its warpgroup that linear thread `tid` is in: tid / 32 % 4.
Value warpOfWarpgroup(OpBuilder &b, Location loc, Value tid) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  return arith::RemUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, tid, c(kWarp)), c(4));
}

/// One thread's D registers of a wgmma m64nNk16, inserted into `out`:
/// register 4j + 2h + o (row g + 8 h of its warp's 16, column 8 j + 2 t +
/// o) is `initial(4j + 2h + o)` plus aRow[h][k] B[8 j + 2 t + o][k] for k
/// = 0 .. 15 in order, in f32, B read from shared memory where `bo` says.
Value warpgroupProducts(OpBuilder &b, Location loc,
                        ArrayRef<SmallVector<Value>> aRow,
                        const SharedOperand &bo, Value t, int64_t n, Value out,
                        function_ref<Value(int64_t)> initial) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  for (int64_t j = 0; j < n / 8; ++j)
    for (int64_t o = 0; o < 2; ++o) {
      // B's column 8 j + 2 t + o: line group j, line 2 t + o.
      Value ir = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, t, c(2)), c(o));
      SmallVector<Value> bCol;
      for (int64_t k = 0; k < 16; ++k)
        bCol.push_back(bo.element(b, loc, c(j), ir, k));
      for (int64_t h = 0; h < 2; ++h) {
        int64_t reg = 4 * j + 2 * h + o;
        Value sum = initial(reg);
        for (int64_t k = 0; k < 16; ++k)
          sum = arith::AddFOp::create(
              b, loc, sum, arith::MulFOp::create(b, loc, aRow[h][k], bCol[k]));
        out = LLVM::InsertValueOp::create(b, loc, out, sum, reg);
      }
    }
  return out;
}

/// `wgmma.mma_async` (shared-memory A and B, f32 D) on the host: each
/// thread's D registers computed where the op was, from the operands in
/// shared memory where its descriptors point, read as the PTX ISA lays
/// them out ("Matrix Descriptor Format", "Shared Memory Matrix Layout":
/// without swizzle core matrices of 8 lines of 16 bytes; element (i, k),
/// i along m or n, of a K-major operand at (i % 8) 16 + (i / 8) SBO +
/// (k % 8) 2 + (k / 8) LBO bytes, of an MN-major one at (i % 8) 2 +
/// (i / 8) SBO + (k % 8) 16 + (k / 8) LBO; swizzled, see
/// SharedOperand::element), the start, LBO, SBO and swizzle decoded from
/// the descriptor's bits; products and sums in f32, k in
/// order. Register 4j + 2h + o of warp w of the warpgroup (w = thread /
/// 32 % 4), lane (g, t), is D's row 16 w + g + 8 h, column 8 j + 2 t + o
/// (PTX ISA, wgmma .m64nNk16 D fragments). No thread reads another's
/// registers, so its loop is not split: the barrier before the op already
/// puts every thread's writes of shared memory before it. The wgmma
/// fences, commits and waits, and the async-proxy fences, go (the host has
/// one proxy and runs the op at issue).
LogicalResult hostWarpgroupMma(func::FuncOp func) {
  SmallVector<NVVM::WgmmaMmaAsyncOp> mmas;
  SmallVector<Operation *> gone;
  func.walk([&](Operation *op) {
    if (auto mma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op))
      mmas.push_back(mma);
    else if (isa<NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp,
                 NVVM::WgmmaWaitGroupSyncOp>(op))
      gone.push_back(op);
    else if (auto fence = dyn_cast<NVVM::FenceProxyOp>(op);
             fence && fence.getKind() == NVVM::ProxyKind::async_shared)
      gone.push_back(op);
  });
  for (NVVM::WgmmaMmaAsyncOp mma : mmas) {
    NVVM::MMAShapeAttr shape = mma.getShape();
    auto sixteen = [](NVVM::WGMMATypes t) {
      return t == NVVM::WGMMATypes::bf16 || t == NVVM::WGMMATypes::f16;
    };
    if (shape.getM() != 64 || shape.getK() != 16 || shape.getN() % 8 ||
        !sixteen(mma.getTypeA()) || mma.getTypeB() != mma.getTypeA() ||
        mma.getTypeD() != NVVM::WGMMATypes::f32 ||
        mma.getScaleD() != NVVM::WGMMAScaleOut::one ||
        mma.getScaleA() != NVVM::WGMMAScaleIn::one ||
        mma.getScaleB() != NVVM::WGMMAScaleIn::one ||
        mma.getLayoutA() != NVVM::MMALayout::row)
      return mma.emitOpError(
          "is lowered for the host only as m64nNk16 on bf16 or f16 with f32 "
          "accumulators, scales of one and a K-major A");
    OpBuilder b(mma);
    Location loc = mma.getLoc();
    FailureOr<Value> tid = linearThread(b, mma);
    if (failed(tid))
      return failure();
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Type half = mma.getTypeA() == NVVM::WGMMATypes::bf16 ? Type(b.getBF16Type())
                                                         : Type(b.getF16Type());
    FailureOr<SharedOperand> a = SharedOperand::of(
        b, loc, mma, mma.getDescriptorA(), /*kMajor=*/true, half);
    if (failed(a))
      return failure();
    FailureOr<SharedOperand> bo =
        SharedOperand::of(b, loc, mma, mma.getDescriptorB(),
                          mma.getLayoutB() == NVVM::MMALayout::col, half);
    if (failed(bo))
      return failure();
    Value lane = arith::RemUIOp::create(b, loc, *tid, c(kWarp));
    Value w = warpOfWarpgroup(b, loc, *tid);
    Value g = arith::DivUIOp::create(b, loc, lane, c(4));
    Value t = arith::RemUIOp::create(b, loc, lane, c(4));
    // A's rows 16 w + g + 8 h: line group 2 w + h, line g.
    SmallVector<SmallVector<Value>> aRow(2);
    for (int64_t h = 0; h < 2; ++h) {
      Value i8 = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, w, c(2)), c(h));
      for (int64_t k = 0; k < 16; ++k)
        aRow[h].push_back(a->element(b, loc, i8, g, k));
    }
    Value d = mma.getInouts();
    Value out = warpgroupProducts(
        b, loc, aRow, *bo, t, shape.getN(), d, [&](int64_t r) -> Value {
          return LLVM::ExtractValueOp::create(b, loc, d, r);
        });
    mma.getResults().replaceAllUsesWith(out);
    mma.erase();
  }
  for (Operation *op : gone)
    op->erase();
  return success();
}

/// Whether `op` is a warp-wide op or has one in its regions.
bool holdsWarpOp(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isWarpOp(inner) ? WalkResult::interrupt()
                               : WalkResult::advance();
      })
      .wasInterrupted();
}

/// An m16n8kK mma's fragments as the PTX ISA lays them out ("Matrix
/// Fragments for mma.m16n8k*"; g = lane / 4, t = lane % 4; `per` operands
/// a 32-bit register, kq = 4 per the k a group of 4 lanes holds): A[r][k]
/// is element k % per of register r / 8 + 2 (k / kq) of lane
/// 4 (r % 8) + (k % kq) / per; B[k][n] element k % per of register k / kq
/// of lane 4 n + (k % kq) / per; C / D[g + 8 h][2 t + o] element (h, o)
/// of lane 4 g + t.
struct MmaFragments {
  int64_t k = 0, per = 1;
  /// Operand element (register, element) of the fragment value `frag`
  /// (A or B) a lane holds, as f32.
  std::function<Value(OpBuilder &, Location, Value frag, int64_t reg,
                      int64_t elem)>
      element;
  /// The fragment values (A's, B's): what each lane passes to the mma.
  SmallVector<Value> a, b;
  /// Whether A and B each are one value (nvgpu: a vector of registers)
  /// rather than one value a register (nvvm).
  bool whole = false;
};

/// The lowering of the warp-wide ops of one thread loop (`root`) and the
/// loops it is split into.
class WarpLowering {
public:
  WarpLowering(scf::ParallelOp root, unsigned lane, ArrayRef<int64_t> extents)
      : root(root), lane(lane), extents(extents), last(root) {}

  LogicalResult run() {
    if (failed(lower(root)))
      return failure();
    OpBuilder b(last->getContext());
    b.setInsertionPointAfter(last);
    for (Value buffer : buffers)
      memref::DeallocOp::create(b, root.getLoc(), buffer);
    return success();
  }

private:
  scf::ParallelOp root;
  unsigned lane;
  SmallVector<int64_t> extents;
  /// The thread loop or loop of thread loops last in root's block.
  Operation *last;
  /// The buffers of one element a thread, allocated before root.
  SmallVector<Value> buffers;
  DenseSet<Value> ours;

  Value newBuffer(Type t) {
    OpBuilder b(root);
    Value buffer =
        memref::AllocOp::create(b, root.getLoc(), MemRefType::get(extents, t));
    buffers.push_back(buffer);
    ours.insert(buffer);
    return buffer;
  }

  /// Records `op`, a new loop, as the last of root's block when it is in
  /// that block after the last so far (the buffers are freed after it).
  void placed(Operation *op) {
    if (op->getBlock() == root->getBlock() && last->isBeforeInBlock(op))
      last = op;
  }

  /// An empty loop over the same threads as `like` at `b`'s point, with
  /// its mapping and marks.
  static scf::ParallelOp threadLoop(OpBuilder &b, scf::ParallelOp like) {
    auto loop = scf::ParallelOp::create(
        b, like.getLoc(), like.getLowerBound(), like.getUpperBound(),
        like.getStep(), [](OpBuilder &b, Location loc, ValueRange) {
          scf::ReduceOp::create(b, loc);
        });
    for (NamedAttribute attr : like->getDiscardableAttrs())
      loop->setAttr(attr.getName(), attr.getValue());
    return loop;
  }

  /// The op of `loop`'s body that `v` is defined in or under; null for a
  /// value from outside the loop or one of its indices.
  static Operation *topOf(Value v, scf::ParallelOp loop) {
    Operation *def = v.getDefiningOp();
    if (!def) {
      Block *owner = cast<BlockArgument>(v).getOwner();
      if (owner == loop.getBody())
        return nullptr;
      def = owner->getParentOp();
    }
    return loop.getBody()->findAncestorOpInBlock(*def);
  }

  /// Whether `def` loads this thread's element of one of our buffers.
  bool loadsOwnElement(Operation *def, scf::ParallelOp loop) const {
    auto load = dyn_cast<memref::LoadOp>(def);
    return load && ours.contains(load.getMemRef()) &&
           llvm::equal(load.getIndices(), loop.getInductionVars());
  }

  /// Whether `v` can be computed again in a later loop over the threads
  /// rather than kept: an index of the loop, a value from outside it, a
  /// pure op of such values (not a warp-wide one), a load of an input
  /// nothing writes (loadsInput), or this thread's element of a buffer of
  /// ours (each is written before it is read, and a carried value's last,
  /// after every read). `known` holds the answers
  /// so far.
  bool recomputable(Value v, scf::ParallelOp loop,
                    DenseMap<Value, bool> &known) const {
    if (!loop->isAncestor(v.getParentRegion()->getParentOp()))
      return true;
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == loop.getBody();
    auto it = known.find(v);
    if (it != known.end())
      return it->second;
    Operation *def = v.getDefiningOp();
    bool yes = def->getBlock() == loop.getBody() && !isWarpOp(def) &&
               def->getNumRegions() == 0 &&
               (isPure(def) || loadsOwnElement(def, loop) || loadsInput(def)) &&
               llvm::all_of(def->getOperands(), [&](Value o) {
                 return recomputable(o, loop, known);
               });
    return known[v] = yes;
  }

  /// Moves `ops` (in order, from `from`'s body) to the end of `into`'s
  /// body. What they use from the rest of `from`'s body is `map`'s value
  /// for it, or computed again in `into` before them (it must be
  /// recomputable); `from`'s indices are `into`'s.
  void moveInto(scf::ParallelOp from, ArrayRef<Operation *> ops,
                scf::ParallelOp into, IRMapping &map) {
    for (auto [f, t] :
         llvm::zip(from.getInductionVars(), into.getInductionVars()))
      map.map(f, t);
    DenseSet<Operation *> moved(ops.begin(), ops.end());
    // Whether `v` is defined by or under one of `ops`.
    auto internal = [&](Value v) {
      Operation *op = v.getDefiningOp();
      if (!op)
        op = cast<BlockArgument>(v).getOwner()->getParentOp();
      for (; op; op = op->getParentOp())
        if (moved.contains(op))
          return true;
      return false;
    };
    OpBuilder b = OpBuilder::atBlockTerminator(into.getBody());
    std::function<Value(Value)> remake = [&](Value v) -> Value {
      if (Value m = map.lookupOrNull(v))
        return m;
      Operation *def = v.getDefiningOp();
      if (!def || !from->isAncestor(def))
        return v;
      for (Value o : def->getOperands())
        remake(o);
      Operation *copy = b.clone(*def, map);
      return copy->getResult(cast<OpResult>(v).getResultNumber());
    };
    for (Operation *op : ops)
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (!internal(v) &&
              from->isAncestor(v.getParentRegion()->getParentOp()))
            remake(v);
      });
    for (Operation *op : ops) {
      op->moveBefore(into.getBody()->getTerminator());
      op->walk([&](Operation *inner) {
        for (OpOperand &use : inner->getOpOperands())
          if (Value m = map.lookupOrNull(use.get()))
            use.set(m);
      });
    }
  }

  /// Splits `loop` before `at`: `at` and what follows it move to a new
  /// loop over the same threads right after `loop`, returned. The values
  /// of the first part the rest uses are kept in buffers (stored where
  /// `at` was, loaded at the start of the new loop) or computed again;
  /// those of `forced` that are defined in `loop` are kept in any case,
  /// their buffers in `kept` (a warp-wide op reads other lanes' elements).
  FailureOr<scf::ParallelOp> splitBefore(scf::ParallelOp loop, Operation *at,
                                         ArrayRef<Value> forced,
                                         DenseMap<Value, Value> &kept) {
    Block *body = loop.getBody();
    SmallVector<Operation *> rest;
    for (Operation *op = at; op != body->getTerminator();
         op = op->getNextNode())
      rest.push_back(op);
    DenseSet<Operation *> moved(rest.begin(), rest.end());
    SetVector<Value> crossing;
    for (Value v : forced)
      if (v.getParentBlock() == body)
        crossing.insert(v);
    for (Operation *op : rest)
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (Operation *top = topOf(v, loop); top && !moved.contains(top))
            crossing.insert(v);
      });
    DenseMap<Value, bool> known;
    OpBuilder b(at);
    Location loc = at->getLoc();
    SmallVector<Value> ivs = loop.getInductionVars();
    SmallVector<std::pair<Value, Value>> stored;
    for (Value v : crossing) {
      if (!llvm::is_contained(forced, v) && recomputable(v, loop, known))
        continue;
      if (!MemRefType::isValidElementType(v.getType()))
        return at->emitOpError()
               << "needs a value of type " << v.getType()
               << " kept for each thread across the host's split of its "
                  "thread loop, and a buffer cannot hold that type";
      Value buffer = newBuffer(v.getType());
      memref::StoreOp::create(b, loc, v, buffer, ivs);
      stored.push_back({v, buffer});
      kept[v] = buffer;
    }
    b.setInsertionPointAfter(loop);
    scf::ParallelOp next = threadLoop(b, loop);
    placed(next);
    b.setInsertionPointToStart(next.getBody());
    IRMapping map;
    for (auto [v, buffer] : stored)
      map.map(v, memref::LoadOp::create(b, loc, buffer, next.getInductionVars())
                     .getResult());
    moveInto(loop, rest, next, map);
    return next;
  }

  /// Lowers the warp-wide ops of `loop` (and of the loops it is split
  /// into), the first one first.
  LogicalResult lower(scf::ParallelOp loop) {
    while (loop) {
      Operation *first = nullptr;
      for (Operation &op : loop.getBody()->without_terminator())
        if (holdsWarpOp(&op)) {
          first = &op;
          break;
        }
      if (!first)
        return success();
      FailureOr<scf::ParallelOp> next = failure();
      if (auto shuffle = dyn_cast<gpu::ShuffleOp>(first))
        next = lowerShuffle(loop, shuffle);
      else if (isa<nvgpu::MmaSyncOp, NVVM::MmaOp>(first))
        next = lowerMma(loop, first);
      else if (auto ld = dyn_cast<nvgpu::LdMatrixOp>(first))
        next = lowerLdmatrix(loop, ld);
      else if (auto barrier = dyn_cast<gpu::BarrierOp>(first))
        next = lowerBarrier(loop, barrier);
      else if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(first))
        next = lowerRegisterWgmma(loop, asmOp);
      else if (auto inner = dyn_cast<scf::ForOp>(first))
        next = fission(loop, inner);
      else
        return first->emitOpError(
            "holds a warp- or block-wide op (gpu.shuffle, mma.sync, "
            "ldmatrix, gpu.barrier) in a region that is not an scf.for's: "
            "the host splits thread loops only around loops that every "
            "thread runs alike");
      if (failed(next))
        return failure();
      loop = *next;
    }
    return success();
  }

  /// `forOp`, in `loop`'s body and holding warp-wide ops, as an scf.for
  /// around a loop over the threads that runs its body (lowered before
  /// this returns); its carried values in buffers. Returns the loop over
  /// the threads with what followed `forOp`, or null when nothing did.
  FailureOr<scf::ParallelOp> fission(scf::ParallelOp loop, scf::ForOp forOp) {
    Location loc = forOp.getLoc();
    // forOp and what follows it, in a loop of their own: `mid`.
    DenseMap<Value, Value> kept;
    FailureOr<scf::ParallelOp> split = splitBefore(loop, forOp, {}, kept);
    if (failed(split))
      return failure();
    scf::ParallelOp mid = *split;
    // The bounds, the same for every thread, computed before the threads.
    OpBuilder b(mid);
    IRMapping outside;
    std::function<FailureOr<Value>(Value)> uniform =
        [&](Value v) -> FailureOr<Value> {
      if (!mid->isAncestor(v.getParentRegion()->getParentOp()))
        return v;
      if (Value m = outside.lookupOrNull(v))
        return m;
      // An index of a dimension of one thread: its lower bound.
      if (auto arg = dyn_cast<BlockArgument>(v);
          arg && arg.getOwner() == mid.getBody() &&
          extents[arg.getArgNumber()] == 1) {
        Value lb = mid.getLowerBound()[arg.getArgNumber()];
        outside.map(v, lb);
        return lb;
      }
      Operation *def = v.getDefiningOp();
      // A load of an input nothing writes (a sequence's length): the
      // same for every thread.
      if (!def || def->getBlock() != mid.getBody() ||
          !(isPure(def) || loadsInput(def)) || def->getNumRegions() ||
          isWarpOp(def))
        return failure();
      for (Value o : def->getOperands())
        if (failed(uniform(o)))
          return failure();
      Operation *copy = b.clone(*def, outside);
      return copy->getResult(cast<OpResult>(v).getResultNumber());
    };
    SmallVector<Value> bounds;
    for (Value v :
         {forOp.getLowerBound(), forOp.getUpperBound(), forOp.getStep()}) {
      FailureOr<Value> u = uniform(v);
      if (failed(u))
        return forOp.emitOpError(
            "holds a warp- or block-wide op (gpu.shuffle, mma.sync, "
            "ldmatrix, gpu.barrier) but its bounds depend on the thread: the "
            "host runs its steps thread loop by thread loop, so every thread "
            "of the loop must take the same steps");
      bounds.push_back(*u);
    }
    // The carried values, one buffer each: the inits stored where the
    // loop was, each step's yield stored last in its step.
    SmallVector<Value> carried;
    b.setInsertionPoint(forOp);
    for (Value init : forOp.getInitArgs()) {
      carried.push_back(newBuffer(init.getType()));
      memref::StoreOp::create(b, loc, init, carried.back(),
                              mid.getInductionVars());
    }
    SmallVector<Operation *> tail;
    for (Operation *op = forOp->getNextNode();
         op != mid.getBody()->getTerminator(); op = op->getNextNode())
      tail.push_back(op);
    b.setInsertionPointAfter(mid);
    auto steps = scf::ForOp::create(b, loc, bounds[0], bounds[1], bounds[2]);
    placed(steps);
    b.setInsertionPoint(steps.getBody()->getTerminator());
    scf::ParallelOp inner = threadLoop(b, mid);
    IRMapping map;
    map.map(forOp.getInductionVar(), steps.getInductionVar());
    b.setInsertionPointToStart(inner.getBody());
    for (auto [arg, buffer] : llvm::zip(forOp.getRegionIterArgs(), carried))
      map.map(arg,
              memref::LoadOp::create(b, loc, buffer, inner.getInductionVars())
                  .getResult());
    auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
    SmallVector<Operation *> stepOps;
    for (Operation &op : forOp.getBody()->without_terminator())
      stepOps.push_back(&op);
    // The forOp's body ops are in its own block, not mid's: moveInto
    // treats what they use from mid's body (and forOp's arguments, in
    // `map`) alike.
    moveInto(mid, stepOps, inner, map);
    b.setInsertionPoint(inner.getBody()->getTerminator());
    for (auto [v, buffer] : llvm::zip(yield.getOperands(), carried))
      memref::StoreOp::create(b, loc, map.lookupOrDefault(v), buffer,
                              inner.getInductionVars());
    // What followed forOp, after the steps, its results read from the
    // carried buffers (all else it uses from mid is computed again).
    scf::ParallelOp after;
    if (!tail.empty()) {
      b.setInsertionPointAfter(steps);
      after = threadLoop(b, mid);
      placed(after);
      IRMapping resultMap;
      b.setInsertionPointToStart(after.getBody());
      for (auto [r, buffer] : llvm::zip(forOp.getResults(), carried))
        resultMap.map(
            r, memref::LoadOp::create(b, loc, buffer, after.getInductionVars())
                   .getResult());
      moveInto(mid, tail, after, resultMap);
    }
    forOp.erase();
    if (failed(lower(inner)))
      return failure();
    return after;
  }

  /// Where lane index `l` is in its warp: the warp's first lane, and (g, t)
  /// = (l / 4, l % 4) of the lane within it, as the PTX ISA's fragment
  /// tables number them.
  static std::array<Value, 3> placeOf(OpBuilder &b, Location loc, Value l) {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value inWarp = arith::RemUIOp::create(b, loc, l, c(kWarp));
    return {arith::SubIOp::create(b, loc, l, inWarp),
            arith::DivUIOp::create(b, loc, inWarp, c(4)),
            arith::RemUIOp::create(b, loc, inWarp, c(4))};
  }

  /// `barrier`: the loop split before it, so that every thread of the
  /// block has run what precedes it before any runs what follows. The
  /// loop must hold all of the block's threads.
  FailureOr<scf::ParallelOp> lowerBarrier(scf::ParallelOp loop,
                                          gpu::BarrierOp barrier) {
    for (auto p = root->getParentOfType<scf::ParallelOp>(); p;
         p = p->getParentOfType<scf::ParallelOp>())
      if (mapsThreads(p))
        return barrier.emitOpError(
            "is in a loop over some of a block's threads, inside another "
            "over the rest: the host's split of the inner loop would not "
            "wait for the other threads");
    DenseMap<Value, Value> kept;
    FailureOr<scf::ParallelOp> next = splitBefore(loop, barrier, {}, kept);
    if (failed(next))
      return failure();
    barrier.erase();
    return *next;
  }

  /// `ld` (nvgpu.ldmatrix of 8 x 8 matrices of 16-bit values from a 1-D
  /// buffer): the loop split before it, and in the second loop each
  /// lane's registers read from the rows the lanes that hold them point
  /// at, as the PTX ISA says ("Warp-level matrix load instruction:
  /// ldmatrix"): row r of matrix q starts at lane 8q + r's index; lane
  /// (g, t) = (lane / 4, lane % 4) receives of matrix q elements 2t, 2t
  /// + 1 of row g (one 32-bit element of the buffer: word t of the row),
  /// or with .trans elements (2t, g) and (2t + 1, g) (16-bit elements of
  /// the buffer: element g of rows 2t and 2t + 1).
  FailureOr<scf::ParallelOp> lowerLdmatrix(scf::ParallelOp loop,
                                           nvgpu::LdMatrixOp ld) {
    auto memType = cast<MemRefType>(ld.getSrcMemref().getType());
    auto resType = cast<VectorType>(ld.getRes().getType());
    int64_t n = ld.getNumTiles();
    bool trans = ld.getTranspose();
    int64_t bits = memType.getElementTypeBitWidth();
    if (memType.getRank() != 1 || resType.getRank() != 2 ||
        resType.getDimSize(0) != n ||
        resType.getDimSize(1) != (trans ? 2 : 1) ||
        resType.getElementType() != memType.getElementType() ||
        bits != (trans ? 16 : 32))
      return ld.emitOpError(
          "is lowered for the host only from a 1-D buffer of 32-bit elements "
          "(a row's 4 words) or, transposed, of 16-bit ones, into a "
          "vector<n x 1> or vector<n x 2> of that element type");
    Value index = ld.getIndices()[0];
    DenseMap<Value, Value> kept;
    FailureOr<scf::ParallelOp> next = splitBefore(loop, ld, {index}, kept);
    if (failed(next))
      return failure();
    OpBuilder b(ld);
    Location loc = ld.getLoc();
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    SmallVector<Value> ivs = next->getInductionVars();
    std::array<Value, 3> place = placeOf(b, loc, ivs[lane]);
    Value base = place[0], g = place[1], t = place[2];
    Value buffer = kept.lookup(index);
    // Where lane `base + holder` points.
    auto rowOf = [&](Value holder) -> Value {
      if (!buffer)
        return index; // every lane points at the same row
      SmallVector<Value> idx(ivs.begin(), ivs.end());
      idx[lane] = arith::AddIOp::create(b, loc, base, holder);
      return memref::LoadOp::create(b, loc, buffer, idx);
    };
    SmallVector<Value> elements;
    for (int64_t q = 0; q < n; ++q) {
      if (!trans) {
        Value row = rowOf(arith::AddIOp::create(b, loc, g, c(8 * q)));
        elements.push_back(memref::LoadOp::create(
            b, loc, ld.getSrcMemref(),
            ValueRange{arith::AddIOp::create(b, loc, row, t)}));
        continue;
      }
      Value twoT = arith::MulIOp::create(b, loc, t, c(2));
      for (int64_t e = 0; e < 2; ++e) {
        Value row = rowOf(arith::AddIOp::create(b, loc, twoT, c(8 * q + e)));
        elements.push_back(memref::LoadOp::create(
            b, loc, ld.getSrcMemref(),
            ValueRange{arith::AddIOp::create(b, loc, row, g)}));
      }
    }
    ld.getRes().replaceAllUsesWith(
        vector::FromElementsOp::create(b, loc, resType, elements));
    ld.erase();
    return *next;
  }

  /// `shuffle`: the loop split before it, and in the second loop the
  /// partner's element, lane `l xor offset`, the other indices the same.
  FailureOr<scf::ParallelOp> lowerShuffle(scf::ParallelOp loop,
                                          gpu::ShuffleOp shuffle) {
    std::optional<int64_t> width = getConstantIntValue(shuffle.getWidth());
    if (shuffle.getMode() != gpu::ShuffleMode::XOR || width != kWarp)
      return shuffle.emitOpError()
             << "is lowered for the host only as an xor over all " << kWarp
             << " lanes of a warp";
    std::optional<int64_t> offset = getConstantIntValue(shuffle.getOffset());
    if (!offset || *offset < 0 || *offset >= kWarp)
      return shuffle.emitOpError()
             << "has an offset that is not a constant in [0, " << kWarp
             << "): its partner could be outside the warp";
    Value value = shuffle.getValue();
    DenseMap<Value, Value> kept;
    FailureOr<scf::ParallelOp> next = splitBefore(loop, shuffle, {value}, kept);
    if (failed(next))
      return failure();
    OpBuilder b(shuffle);
    Location loc = shuffle.getLoc();
    Value theirs = shuffle.getValue(); // the same in every lane
    if (Value buffer = kept.lookup(value)) {
      SmallVector<Value> ivs = next->getInductionVars();
      SmallVector<Value> partner(ivs.begin(), ivs.end());
      partner[lane] = arith::XOrIOp::create(
          b, loc, ivs[lane], arith::ConstantIndexOp::create(b, loc, *offset));
      theirs = memref::LoadOp::create(b, loc, buffer, partner);
    }
    shuffle.getShuffleResult().replaceAllUsesWith(theirs);
    // Every partner is a lane of the warp.
    if (!shuffle.getValid().use_empty())
      shuffle.getValid().replaceAllUsesWith(
          arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
    shuffle.erase();
    return *next;
  }

  /// The inline PTX of a `wgmma.mma_async` m64nNk16 whose A comes from
  /// registers (cuda::wgmmaRS, marked with what the PTX says: n, whether D
  /// accumulates, bf16 or f16): the loop split before it, A's registers
  /// (each warp's m16n8k16 A fragment of its 16 rows of the warpgroup's
  /// 64) kept, and each thread's D registers computed where it was:
  /// register 4j + 2h + o of warp w of the warpgroup, lane (g, t), is row
  /// 16 w + g + 8 h, column 8 j + 2 t + o; A[16 w + g + 8 h][k] is half k % 2
  /// of register h + 2 (k / 8) of lane 4 g + (k % 8) / 2 of the same warp; B
  /// (K-major: the PTX's imm-trans-b is 0) from shared memory where the
  /// descriptor points (SharedOperand); products and sums in f32, k in
  /// order, onto D when it accumulates.
  FailureOr<scf::ParallelOp> lowerRegisterWgmma(scf::ParallelOp loop,
                                                LLVM::InlineAsmOp op) {
    auto info = op->getAttrOfType<DenseI64ArrayAttr>(
        mlir::linformer::kCUDAHostWgmmaAttrName);
    int64_t n = info && info.size() == 3 ? info[0] : 0, r = n / 2;
    if (n <= 0 || n % 8 || op->getNumOperands() != size_t(r + 5) ||
        op.getNumResults() != 1)
      return op.emitOpError("is marked as a wgmma with A in registers but "
                            "does not have its operands (n / 2 accumulators, "
                            "4 A registers, B's descriptor)");
    bool accumulate = info[1] != 0;
    SmallVector<Value> aRegs(op->getOperands().slice(r, 4));
    DenseMap<Value, Value> kept;
    FailureOr<scf::ParallelOp> next = splitBefore(loop, op, aRegs, kept);
    if (failed(next))
      return failure();
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    StringRef precision = info[2] ? "bf16" : "f16";
    Type half =
        mlir::linformer::cuda::mmaOperandType(b.getContext(), precision);
    SmallVector<Value> ivs = next->getInductionVars();
    std::array<Value, 3> place = placeOf(b, loc, ivs[lane]);
    Value base = place[0], g = place[1], t = place[2];
    // D's rows are those of the warp's own A fragment (16 w + its rows):
    // no warp index is needed.
    FailureOr<SharedOperand> bo = SharedOperand::of(
        b, loc, op, op->getOperand(r + 4), /*kMajor=*/true, half);
    if (failed(bo))
      return failure();
    // A[g + 8 h][k], k = 2 p + e: half e of register h + 2 (k / 8) of lane
    // 4 g + p % 4 (its buffer's element, or the value itself when every
    // lane passes the same), each word read once.
    Value fourG = arith::MulIOp::create(b, loc, g, c(4));
    SmallVector<SmallVector<Value>> aRow(2);
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t k = 0; k < 16; k += 2) {
        Value reg = aRegs[h + 2 * (k / 8)];
        Value word = op->getOperand(r + h + 2 * (k / 8));
        if (Value buffer = kept.lookup(reg)) {
          SmallVector<Value> idx(ivs.begin(), ivs.end());
          idx[lane] = arith::AddIOp::create(
              b, loc, base,
              arith::AddIOp::create(b, loc, fourG, c((k % 8) / 2)));
          word = memref::LoadOp::create(b, loc, buffer, idx);
        }
        for (int64_t e = 0; e < 2; ++e)
          aRow[h].push_back(
              mlir::linformer::cuda::wordElement(b, loc, word, e, precision,
                                                 /*exact=*/false));
      }
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    SmallVector<Value> d(op->getOperands().take_front(r));
    Value out = warpgroupProducts(
        b, loc, aRow, *bo, t, n,
        LLVM::PoisonOp::create(b, loc, op.getResult(0).getType()),
        [&](int64_t reg) { return accumulate ? d[reg] : zero; });
    op.getResult(0).replaceAllUsesWith(out);
    op.erase();
    return *next;
  }

  /// What `op` (nvgpu.mma.sync or nvvm.mma.sync) is, in MmaFragments'
  /// terms, or an error that says what is not lowered.
  FailureOr<MmaFragments> fragmentsOf(Operation *op) {
    MmaFragments f;
    Type f32 = Float32Type::get(op->getContext());
    auto wordElement = [f32](OpBuilder &b, Location loc, Value word,
                             int64_t elem) -> Value {
      // A register of two 16-bit operands: an i32 (bf16) or vector<2xf16>.
      if (word.getType().isInteger(32)) {
        Value pair = vector::BitCastOp::create(
            b, loc, VectorType::get({2}, b.getBF16Type()),
            vector::BroadcastOp::create(
                b, loc, VectorType::get({1}, b.getI32Type()), word));
        word = pair;
      }
      Value e =
          vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{elem});
      return arith::ExtFOp::create(b, loc, f32, e);
    };
    if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
      std::array<int64_t, 3> shape = mma.getMmaShapeAsArray();
      auto aType = mma.getMatrixA().getType();
      auto cType = mma.getMatrixC().getType();
      bool tf32 = aType.getElementType().isF32();
      f.per = tf32 ? 1 : 2;
      if (shape[0] != 16 || shape[1] != 8 ||
          (tf32 ? (shape[2] != 4 && shape[2] != 8) : shape[2] != 16) ||
          (!tf32 && !aType.getElementType().isF16()) ||
          cType != VectorType::get({2, 2}, f32))
        return op->emitOpError(
            "is lowered for the host only as m16n8k4 / m16n8k8 on tf32 or "
            "m16n8k16 on f16, with f32 accumulators");
      f.k = shape[2];
      f.whole = true;
      f.a = {mma.getMatrixA()};
      f.b = {mma.getMatrixB()};
      f.element = [f32](OpBuilder &b, Location loc, Value frag, int64_t reg,
                        int64_t elem) -> Value {
        Value e = vector::ExtractOp::create(b, loc, frag,
                                            ArrayRef<int64_t>{reg, elem});
        return e.getType().isF32() ? e : arith::ExtFOp::create(b, loc, f32, e);
      };
      return f;
    }
    auto mma = cast<NVVM::MmaOp>(op);
    NVVM::MMAShapeAttr shape = mma.getShape();
    std::optional<NVVM::MMATypes> aType = mma.getMultiplicandAPtxType(),
                                  bType = mma.getMultiplicandBPtxType();
    auto sixteen = [](std::optional<NVVM::MMATypes> t) {
      return t == NVVM::MMATypes::bf16 || t == NVVM::MMATypes::f16;
    };
    auto result = dyn_cast<LLVM::LLVMStructType>(mma.getResult().getType());
    if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != 16 ||
        !sixteen(aType) || aType != bType ||
        mma.getLayoutA() != NVVM::MMALayout::row ||
        mma.getLayoutB() != NVVM::MMALayout::col ||
        mma.getOperandA().size() != 4 || mma.getOperandB().size() != 2 ||
        mma.getOperandC().size() != 4 ||
        !llvm::all_of(mma.getOperandC().getTypes(),
                      [](Type t) { return t.isF32(); }) ||
        !result || result.getBody().size() != 4)
      return op->emitOpError(
          "is lowered for the host only as m16n8k16 on bf16 or f16 (row A, "
          "column B) with f32 accumulators");
    f.k = 16;
    f.per = 2;
    llvm::append_range(f.a, mma.getOperandA());
    llvm::append_range(f.b, mma.getOperandB());
    f.element = [wordElement](OpBuilder &b, Location loc, Value word, int64_t,
                              int64_t elem) {
      return wordElement(b, loc, word, elem);
    };
    return f;
  }

  /// `op`, an m16n8kK mma: the loop split before it, and in the second
  /// loop each lane's D = C + A B for its C elements, from every lane's
  /// fragments (products and sums in f32, k in order).
  FailureOr<scf::ParallelOp> lowerMma(scf::ParallelOp loop, Operation *op) {
    FailureOr<MmaFragments> f = fragmentsOf(op);
    if (failed(f))
      return failure();
    SmallVector<Value> forced;
    llvm::append_range(forced, f->a);
    llvm::append_range(forced, f->b);
    DenseMap<Value, Value> kept;
    FailureOr<scf::ParallelOp> next = splitBefore(loop, op, forced, kept);
    if (failed(next))
      return failure();
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    SmallVector<Value> ivs = next->getInductionVars();
    std::array<Value, 3> place = placeOf(b, loc, ivs[lane]);
    Value base = place[0], g = place[1], t = place[2];
    // The fragment value `v` of lane `base + from + off`: its buffer's
    // element, or `mapped` (v in the second loop) when every lane passes
    // the same (defined outside the thread loop).
    DenseMap<std::tuple<Value, Value, int64_t>, Value> loaded;
    auto fragment = [&](Value v, Value mapped, Value from,
                        int64_t off) -> Value {
      Value buffer = kept.lookup(v);
      if (!buffer)
        return mapped;
      Value &x = loaded[{buffer, from, off}];
      if (!x) {
        SmallVector<Value> idx(ivs.begin(), ivs.end());
        idx[lane] = arith::AddIOp::create(
            b, loc, base, arith::AddIOp::create(b, loc, from, c(off)));
        x = memref::LoadOp::create(b, loc, buffer, idx);
      }
      return x;
    };
    // The operands as the second loop has them (own elements: C).
    SmallVector<Value> aNow, bNow, cNow;
    if (f->whole) {
      auto mma = cast<nvgpu::MmaSyncOp>(op);
      aNow = {mma.getMatrixA()};
      bNow = {mma.getMatrixB()};
      cNow = {mma.getMatrixC()};
    } else {
      auto mma = cast<NVVM::MmaOp>(op);
      llvm::append_range(aNow, mma.getOperandA());
      llvm::append_range(bNow, mma.getOperandB());
      llvm::append_range(cNow, mma.getOperandC());
    }
    const int64_t kq = 4 * f->per;
    // Lane offsets (within the warp) that hold A's row g (+ 8 h) and B's
    // column 2 t + o: 4 g + j and 8 t + 4 o + j, j = (k % kq) / per.
    Value fourG = arith::MulIOp::create(b, loc, g, c(4));
    Value eightT = arith::MulIOp::create(b, loc, t, c(8));
    SmallVector<Value> d;
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t o = 0; o < 2; ++o) {
        Value sum = f->whole ? vector::ExtractOp::create(
                                   b, loc, cNow[0], ArrayRef<int64_t>{h, o})
                                   .getResult()
                             : cNow[h * 2 + o];
        for (int64_t k = 0; k < f->k; ++k) {
          int64_t j = (k % kq) / f->per, elem = k % f->per;
          int64_t aReg = h + 2 * (k / kq), bReg = k / kq;
          Value x, y;
          if (f->whole) {
            x = f->element(b, loc, fragment(f->a[0], aNow[0], fourG, j), aReg,
                           elem);
            y = f->element(b, loc,
                           fragment(f->b[0], bNow[0], eightT, 4 * o + j), bReg,
                           elem);
          } else {
            x = f->element(b, loc, fragment(f->a[aReg], aNow[aReg], fourG, j),
                           0, elem);
            y = f->element(b, loc,
                           fragment(f->b[bReg], bNow[bReg], eightT, 4 * o + j),
                           0, elem);
          }
          sum = arith::AddFOp::create(b, loc, sum,
                                      arith::MulFOp::create(b, loc, x, y));
        }
        d.push_back(sum);
      }
    Value result;
    Type resultType = op->getResult(0).getType();
    if (f->whole) {
      result = vector::FromElementsOp::create(b, loc,
                                              cast<VectorType>(resultType), d);
    } else {
      result = LLVM::PoisonOp::create(b, loc, resultType);
      for (auto [i, v] : llvm::enumerate(d))
        result = LLVM::InsertValueOp::create(b, loc, result, v,
                                             ArrayRef<int64_t>{int64_t(i)});
    }
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
    return *next;
  }
};

struct CUDAEmulateWarpsPass
    : mlir::linformer::impl::LinformerCUDAEmulateWarpsPassBase<
          CUDAEmulateWarpsPass> {
  void runOnOperation() override {
    unswitchUniformBranches(getOperation());
    hostMemoryBarriers(getOperation());
    if (failed(hostSharedMemory(getOperation())) ||
        failed(hostAsyncCopies(getOperation())) ||
        failed(hostWarpgroupMma(getOperation())))
      return signalPassFailure();
    SmallVector<scf::ParallelOp> loops;
    WalkResult r = getOperation().walk([&](Operation *op) {
      if (!isWarpOp(op))
        return WalkResult::advance();
      auto loop = op->getParentOfType<scf::ParallelOp>();
      while (loop && !laneDim(loop))
        loop = loop->getParentOfType<scf::ParallelOp>();
      if (!loop) {
        op->emitOpError("is in no loop over threads (an scf.parallel with a "
                        "dimension mapped to thread x): the host has no "
                        "lanes to take its operands from");
        return WalkResult::interrupt();
      }
      if (!llvm::is_contained(loops, loop))
        loops.push_back(loop);
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      return signalPassFailure();
    for (scf::ParallelOp loop : loops)
      if (failed(lowerLoop(loop)))
        return signalPassFailure();
  }

  LogicalResult lowerLoop(scf::ParallelOp loop) {
    unsigned lane = *laneDim(loop);
    SmallVector<int64_t> extents;
    for (auto [lb, ub, step] : llvm::zip(
             loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      std::optional<int64_t> l = getConstantIntValue(lb),
                             u = getConstantIntValue(ub),
                             s = getConstantIntValue(step);
      if (!l || !u || !s || *l != 0 || *s != 1)
        return loop.emitOpError(
            "has a warp-wide op (gpu.shuffle, mma.sync) but not constant "
            "bounds from 0 in steps of 1: the host's buffers of one "
            "element a thread need them");
      extents.push_back(*u);
    }
    if (!loop.getInitVals().empty())
      return loop.emitOpError("has a warp-wide op (gpu.shuffle, mma.sync) "
                              "and reductions: not lowered for the host");
    // Fewer threads along x than a warp (a power of two: the f32 core's
    // lanes of a row): a warp is 32 / x rows of them, and a shuffle whose
    // offset is below x stays in its row, so its partner differs in x
    // alone. mma.sync and ldmatrix read the whole warp's lanes.
    int64_t x = extents[lane];
    if (x % kWarp) {
      bool rows = llvm::isPowerOf2_64(x) && x < kWarp;
      WalkResult r = loop.getBody()->walk([&](Operation *op) {
        if (isa<nvgpu::MmaSyncOp, NVVM::MmaOp, nvgpu::LdMatrixOp>(op))
          return WalkResult::interrupt();
        if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
          std::optional<int64_t> offset =
              getConstantIntValue(shuffle.getOffset());
          if (!offset || *offset >= x)
            return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (!rows || r.wasInterrupted())
        return loop.emitOpError()
               << "has a warp-wide op (gpu.shuffle, mma.sync) but " << x
               << " threads along x, not whole warps of " << kWarp
               << " (fewer are lowered only as a power of two with "
                  "shuffles of constant offsets below it)";
    }
    return WarpLowering(loop, lane, extents).run();
  }
};

} // namespace
