//===- OutlineKernels.cpp - workgroup loops to kernel functions -*- C++ -*-===//
//
// Turns each top-level scf.forall of a bufferized entry function into a
// kernel function that computes one workgroup, and records the dispatch plan
// (kernels in order, their workgroup counts and buffer bindings) for the
// runtime. See LinformerOutlineKernelsPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/LinalgBuilders.h"
#include "dialect/IR/LinformerOps.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMEROUTLINEKERNELSPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

/// Ops that a kernel may recompute from its buffers: views, constants and
/// loop-invariant code hoisted out of the workgroup loop (pure values and
/// reads). A read moved into the kernel sees the same memory as before:
/// kernels run in program order and the loop itself did not write what was
/// read, or the read could not have been hoisted.
bool isRebuildable(Operation *op) {
  if (isa<ViewLikeOpInterface>(op))
    return true;
  if (op->getNumRegions() != 0)
    return false;
  if (isPure(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.onlyHasEffect<MemoryEffects::Read>();
}

/// Bytes from a memref's base pointer to one past its last element, or
/// nullopt unless shape, strides and offset are all static.
std::optional<int64_t> extentBytes(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (!type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  int64_t elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
  if (type.getNumElements() == 0)
    return 0;
  int64_t last = offset;
  for (auto [size, stride] : llvm::zip(type.getShape(), strides))
    last += (size - 1) * stride;
  return (last + 1) * elementBytes;
}

/// Buffers are function arguments or allocations of the entry block.
bool isBufferRoot(Value v) {
  if (isa<BlockArgument>(v))
    return true;
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(v.getDefiningOp());
}

/// The buffers the ops in `scope` write (through views: the memrefs the
/// views look into), in the order of their first write.
SetVector<Value> writtenBuffers(Operation *scope) {
  SetVector<Value> written;
  scope->walk([&](MemoryEffectOpInterface op) {
    SmallVector<MemoryEffects::EffectInstance> effects;
    op.getEffects(effects);
    for (const MemoryEffects::EffectInstance &e : effects)
      if (auto memref =
              dyn_cast_if_present<TypedValue<BaseMemRefType>>(e.getValue());
          memref && isa<MemoryEffects::Write>(e.getEffect()))
        written.insert(memref::skipViewLikeOps(memref));
  });
  return written;
}

/// The sequence buffers of `entry` that packed-sequences packs, and its
/// lengths argument: none unless it has both a lengths argument and sequence
/// inputs. They are the arguments marked `linformer.sequence`: the sequence
/// inputs, and the outputs whose results hold tokens (marked by
/// linformer-sequence-results, which also gave each a buffer of its own;
/// bufferization carried the mark to the out-parameter). A size that
/// happens to match is no reason: `E X` with k = n once shared the output.
std::pair<SmallVector<BlockArgument>, BlockArgument>
packedSequenceArgs(func::FuncOp entry) {
  BlockArgument lengths;
  SmallVector<BlockArgument> sequences;
  for (BlockArgument arg : entry.getBody().front().getArguments()) {
    if (entry.getArgAttr(arg.getArgNumber(), kLengthsArgAttrName))
      lengths = arg;
    if (entry.getArgAttr(arg.getArgNumber(), kSequenceArgAttrName))
      sequences.push_back(arg);
  }
  if (!lengths || sequences.empty())
    return {};
  auto type = dyn_cast<MemRefType>(sequences.front().getType());
  if (!type || type.getRank() < 2)
    return {};
  return {sequences, lengths};
}

struct OutlineKernelsPass
    : mlir::linformer::impl::LinformerOutlineKernelsPassBase<OutlineKernelsPass> {
  using Base::Base;

  /// The current entry's packed sequence buffers and its lengths argument
  /// (none without packed-sequences).
  DenseSet<Value> packedArgs;
  Value lengthsArg;
  bool anyPacked = false;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn.isPublic() && !fn.isExternal() &&
          !fn->hasAttr(kWorkgroupsAttrName))
        entries.push_back(fn);
    for (func::FuncOp fn : entries) {
      if (failed(outlineEntry(fn)))
        return signalPassFailure();
      // The length marks have been read (tiling), the split weights' by the
      // artifact builder from the source; LLVM has no use for them.
      for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
        fn.removeArgAttr(i, kSequenceArgAttrName);
        fn.removeArgAttr(i, kLengthsArgAttrName);
        fn.removeArgAttr(i, kSequenceSplitArgAttrName);
      }
    }
  }

  LogicalResult outlineEntry(func::FuncOp entry) {
    MLIRContext *ctx = entry.getContext();
    Block &body = entry.getBody().front();
    SymbolTable symbols(getOperation());

    packedArgs.clear();
    lengthsArg = {};
    anyPacked = false;
    if (packedSequences) {
      auto [sequences, lengths] = packedSequenceArgs(entry);
      packedArgs.insert(sequences.begin(), sequences.end());
      lengthsArg = lengths;
    }

    // Buffer ids: arguments first, then entry-block allocations in order.
    DenseMap<Value, int64_t> bufferIds;
    SmallVector<int64_t> intermediateBytes;
    for (BlockArgument arg : body.getArguments())
      bufferIds[arg] = arg.getArgNumber();
    for (Operation &op : body) {
      if (!isa<memref::AllocOp, memref::AllocaOp>(op))
        continue;
      auto type = cast<MemRefType>(op.getResult(0).getType());
      if (!type.hasStaticShape() || !type.getLayout().isIdentity())
        return op.emitOpError("intermediate buffers must be statically "
                              "shaped with an identity layout");
      int64_t bytes = type.getNumElements() *
                      ((type.getElementTypeBitWidth() + 7) / 8);
      bufferIds[op.getResult(0)] = body.getNumArguments() +
                                   intermediateBytes.size();
      intermediateBytes.push_back(bytes);
    }

    // The plan's steps in order: workgroup loops, and the all-reduces of a
    // sequence-parallel entry.
    SmallVector<Operation *> steps;
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (isa<scf::ForallOp, linformer::AllReduceOp, linformer::AllGatherOp>(
              op)) {
        steps.push_back(&op);
        continue;
      }
      if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
              func::ReturnOp>(op) ||
          isRebuildable(&op))
        continue;
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      bool writes = !effects || effects.hasEffect<MemoryEffects::Write>();
      if (!writes)
        continue;
      // Work that was not tiled (a tensor too small to split) still has to
      // run inside a kernel: it becomes a kernel of one workgroup.
      if (op.getNumResults() != 0)
        return op.emitOpError("computes a value outside a workgroup loop; "
                              "it cannot become a kernel");
      OpBuilder b(&op);
      auto single = scf::ForallOp::create(
          b, op.getLoc(), ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)}, ValueRange{},
          std::nullopt);
      op.moveBefore(single.getBody()->getTerminator());
      steps.push_back(single);
    }

    SmallVector<KernelLaunchAttr> kernelInfos;
    int64_t kernels = 0, reductions = 0;
    for (Operation *step : steps) {
      FailureOr<KernelLaunchAttr> info = failure();
      if (isa<linformer::AllReduceOp, linformer::AllGatherOp>(step))
        info = collectiveStep(
            entry, step,
            (entry.getSymName() +
             (isa<linformer::AllGatherOp>(step) ? "_all_gather_"
                                                : "_all_reduce_") +
             Twine(reductions++))
                .str(),
            bufferIds);
      else
        info = outlineLoop(
            entry, cast<scf::ForallOp>(step),
            (entry.getSymName() + "_kernel_" + Twine(kernels++)).str(),
            bufferIds, symbols);
      if (failed(info))
        return failure();
      kernelInfos.push_back(*info);
    }
    if (failed(checkInitializers(entry, kernelInfos)))
      return failure();
    setDispatchPlan(entry, DispatchPlanAttr::get(ctx, kernelInfos,
                                                 intermediateBytes, anyPacked,
                                                 sequenceArguments(entry)));
    return success();
  }

  /// An initializer runs once per session, before every run: it may read
  /// weights and what initializers before it wrote, and what it writes no
  /// other kernel may write.
  LogicalResult checkInitializers(func::FuncOp entry,
                                  ArrayRef<KernelLaunchAttr> kernels) {
    unsigned args = entry.getNumArguments();
    DenseSet<int64_t> constants;
    for (KernelLaunchAttr k : kernels) {
      if (!k.getInitializer())
        continue;
      for (int64_t id : k.getBuffers()) {
        bool written = llvm::is_contained(k.getWrites(), id);
        if (id < int64_t(args) &&
            (written || !isWeightArgument(entry, unsigned(id))))
          return entry.emitOpError("initializer kernel '")
                 << k.getName().getValue() << "' takes argument " << id
                 << ", which is not a weight it only reads";
        if (id >= int64_t(args) && !written && !constants.count(id))
          return entry.emitOpError("initializer kernel '")
                 << k.getName().getValue() << "' reads buffer " << id
                 << ", which no initializer before it wrote";
      }
      constants.insert(k.getWrites().begin(), k.getWrites().end());
    }
    for (KernelLaunchAttr k : kernels)
      for (int64_t id : k.getWrites())
        if (!k.getInitializer() && constants.count(id))
          return entry.emitOpError("kernel '")
                 << k.getName().getValue() << "' writes buffer " << id
                 << ", a constant an initializer made once per session";
    return success();
  }

  /// A collective step: the runtime sums the buffer over the ranks through
  /// the application's all-reduce (no code of ours runs); an all-gather's
  /// share and whole buffer, the runtime placing the share in the whole
  /// before it sums. The entry's sequential path, which calls the kernels
  /// in order on one process, has no ranks to sum over and drops it: it
  /// computes this rank's share alone.
  FailureOr<KernelLaunchAttr>
  collectiveStep(func::FuncOp entry, Operation *step, StringRef name,
                 DenseMap<Value, int64_t> &bufferIds) {
    auto reduce = dyn_cast<linformer::AllReduceOp>(step);
    auto gather = dyn_cast<linformer::AllGatherOp>(step);
    SmallVector<Value> buffers;
    if (reduce)
      buffers.push_back(reduce.getInit());
    else
      buffers.append({gather.getShare(), gather.getInit()});
    SmallVector<int64_t> ids;
    for (Value buffer : buffers) {
      auto type = dyn_cast<MemRefType>(buffer.getType());
      if (!type || !isBufferRoot(buffer) || !bufferIds.count(buffer) ||
          !type.getElementType().isF32())
        return step->emitOpError(
                   "takes a buffer the runtime cannot name: a collective "
                   "step needs whole f32 buffers (an argument or an "
                   "entry-block allocation), not ")
               << buffer.getType();
      ids.push_back(bufferIds.lookup(buffer));
    }
    MLIRContext *ctx = entry.getContext();
    int64_t ranks = reduce ? reduce.getRanks() : gather.getRanks();
    int64_t blocks = gather ? gather.getBlocks() : 0;
    step->erase();
    return KernelLaunchAttr::get(
        ctx, StringAttr::get(ctx, name), /*workgroups=*/1, ids, {ids.back()},
        CPUScheduleAttr(), KernelShapeAttr(), StringAttr(), {}, {},
        /*shared=*/0, /*blocksPerSm=*/1, TokenRowsAttr(), /*maxLength=*/{},
        /*initializer=*/false, ranks, blocks);
  }

  FailureOr<KernelLaunchAttr> outlineLoop(func::FuncOp entry, scf::ForallOp forall,
                                   StringRef name,
                                   DenseMap<Value, int64_t> &bufferIds,
                                   SymbolTable &symbols) {
    MLIRContext *ctx = entry.getContext();
    Location loc = forall.getLoc();
    ArrayRef<int64_t> lbs = forall.getStaticLowerBound();
    ArrayRef<int64_t> ubs = forall.getStaticUpperBound();
    ArrayRef<int64_t> steps = forall.getStaticStep();
    auto anyDynamic = [](ArrayRef<int64_t> values) {
      return llvm::any_of(values, ShapedType::isDynamic);
    };
    if (anyDynamic(lbs) || anyDynamic(ubs) || anyDynamic(steps) ||
        !forall.getOutputs().empty())
      return forall.emitOpError("a workgroup loop needs static bounds and "
                                "no tensor results after bufferization");

    // Values from outside: buffers become arguments; their views and the
    // constants are recomputed inside.
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(forall.getRegion(), captured);
    SetVector<Value> roots;
    SetVector<Operation *> rebuild;
    SmallVector<Value> worklist(captured.begin(), captured.end());
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (isBufferRoot(v)) {
        if (!bufferIds.count(v))
          return forall.emitOpError("uses a buffer that is not an argument "
                                    "or an entry-block allocation");
        roots.insert(v);
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (!def || !isRebuildable(def))
        return forall.emitOpError("uses a value computed outside the loop "
                                  "that a kernel cannot rebuild: ")
               << v;
      if (rebuild.insert(def))
        worklist.append(def->operand_begin(), def->operand_end());
    }

    // A kernel of packed sequences finds them through the lengths.
    bool packed = llvm::any_of(
        roots, [&](Value root) { return packedArgs.contains(root); });
    if (packed) {
      roots.insert(lengthsArg);
      anyPacked = true;
    }

    // The kernel: (buffers..., workgroup). Each buffer's extent in bytes
    // goes into the object (the K_abi record), where the runtime checks it
    // against the manifest before running anything.
    SmallVector<Type> argTypes;
    SmallVector<int64_t> bufferBytes;
    for (Value root : roots) {
      argTypes.push_back(root.getType());
      std::optional<int64_t> bytes =
          extentBytes(cast<MemRefType>(root.getType()));
      if (!bytes)
        return forall.emitOpError("binds a buffer of type ")
               << root.getType()
               << " whose extent is not static; kernels need statically "
                  "shaped buffers";
      bufferBytes.push_back(*bytes);
    }
    argTypes.push_back(IndexType::get(ctx));
    OpBuilder b(ctx);
    b.setInsertionPoint(entry);
    auto kernel = func::FuncOp::create(b, loc, name,
                                       b.getFunctionType(argTypes, {}));
    symbols.insert(kernel);
    int64_t workgroups = 1;
    SmallVector<int64_t> tripCounts;
    for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps)) {
      tripCounts.push_back((ub - lb + step - 1) / step);
      workgroups *= tripCounts.back();
    }
    kernel->setAttr(kWorkgroupsAttrName, b.getI64IntegerAttr(workgroups));
    kernel->setAttr(kBufferBytesAttrName,
                    b.getDenseI64ArrayAttr(bufferBytes));
    // The schedule and the kernel's facts travel with the kernel into the
    // dispatch plan (and from there into the manifest).
    // The length rule: the grid is the loop's trip counts.
    TokenRowsAttr tokenRows;
    if (auto rows = forall->getAttrOfType<DenseI64ArrayAttr>(
            kTokenRowsAttrName);
        rows && rows.size() == 3)
      if (auto grid = DenseI64ArrayAttr::get(ctx, tripCounts);
          succeeded(TokenRowsAttr::verify(
              [&] { return forall.emitOpError(); }, grid, rows[0], rows[1],
              rows[2])))
        tokenRows = TokenRowsAttr::get(ctx, grid, rows[0], rows[1], rows[2]);
    Attribute schedule = forall->getAttr(kScheduleAttrName);
    bool initializer = forall->hasAttr(kInitializerAttrName);
    Attribute kernelInfo = forall->getAttr(kKernelInfoAttrName);
    if (schedule)
      kernel->setAttr(kScheduleAttrName, schedule);
    // The rule goes into the object's K_abi record too, as the words it
    // takes there (grid..., batch, row, tile).
    if (tokenRows) {
      SmallVector<int64_t> words(tokenRows.getGrid().asArrayRef());
      words.append({tokenRows.getBatch(), tokenRows.getRow(),
                    tokenRows.getTile()});
      kernel->setAttr(kTokenRowsRecordAttrName,
                      b.getDenseI64ArrayAttr(words));
    }
    for (auto [i, root] : llvm::enumerate(roots)) {
      if (packed && packedArgs.contains(root))
        kernel.setArgAttr(i, kPackedSequenceArgAttrName, b.getUnitAttr());
      if (packed && root == lengthsArg)
        kernel.setArgAttr(i, kLengthsArgAttrName, b.getUnitAttr());
    }
    Block *kernelBody = kernel.addEntryBlock();
    b.setInsertionPointToStart(kernelBody);
    IRMapping mapping;
    for (auto [i, root] : llvm::enumerate(roots))
      mapping.map(root, kernelBody->getArgument(i));
    // Rebuild views/constants in their original order.
    for (Operation &op : entry.getBody().front())
      if (rebuild.contains(&op))
        b.clone(op, mapping);
    // Workgroup id -> loop indices (row-major, last index fastest).
    Value wg = kernelBody->getArguments().back();
    auto delinearized =
        affine::AffineDelinearizeIndexOp::create(b, loc, wg, tripCounts);
    for (auto [i, iv] : llvm::enumerate(forall.getInductionVars())) {
      Value idx = delinearized.getResult(i);
      Value step = arith::ConstantIndexOp::create(b, loc, steps[i]);
      Value lb = arith::ConstantIndexOp::create(b, loc, lbs[i]);
      Value scaled = arith::MulIOp::create(b, loc, idx, step);
      mapping.map(iv, arith::AddIOp::create(b, loc, scaled, lb));
    }
    for (Operation &op : forall.getBody()->without_terminator())
      b.clone(op, mapping);
    func::ReturnOp::create(b, loc);

    // The entry keeps a sequential path: every workgroup in order.
    b.setInsertionPoint(forall);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value count = arith::ConstantIndexOp::create(b, loc, workgroups);
    auto seq = scf::ForOp::create(b, loc, zero, count, one);
    b.setInsertionPointToStart(seq.getBody());
    SmallVector<Value> callArgs(roots.begin(), roots.end());
    callArgs.push_back(seq.getInductionVar());
    func::CallOp::create(b, loc, kernel, callArgs);
    forall.erase();

    SmallVector<int64_t> bufferList;
    for (Value root : roots)
      bufferList.push_back(bufferIds.lookup(root));
    // The buffers the kernel writes (from the memory effects of its ops on
    // views of them): two plans of the same kernels are matched through
    // them (--backend=best).
    SmallVector<int64_t> writtenIds;
    for (Value v : writtenBuffers(kernel))
      if (auto arg = dyn_cast<BlockArgument>(v);
          arg && arg.getOwner() == kernelBody)
        writtenIds.push_back(bufferIds.lookup(roots[arg.getArgNumber()]));
    return KernelLaunchAttr::get(
        ctx, b.getStringAttr(kernel.getSymName()), workgroups, bufferList,
        writtenIds, dyn_cast_or_null<CPUScheduleAttr>(schedule),
        dyn_cast_or_null<KernelShapeAttr>(kernelInfo), StringAttr(), {}, {},
        /*shared=*/0, /*blocksPerSm=*/1, tokenRows, /*maxLength=*/{},
        initializer, /*allReduce=*/0, /*gather=*/0);
  }
};
} // namespace
