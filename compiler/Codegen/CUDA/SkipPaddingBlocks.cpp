//===- SkipPaddingBlocks.cpp - padding blocks return at once ----*- C++ -*-===//
//
// See Passes.td: linformer-cuda-skip-padding-blocks guards the thread loops
// of every block loop with a length rule with the block's token tile
// against its sequence's length, so that the blocks the runtime's launch
// box holds past a sequence's length do nothing.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDASKIPPADDINGBLOCKSPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using mlir::linformer::TokenRowsAttr;

namespace {

struct CUDASkipPaddingBlocksPass
    : mlir::linformer::impl::LinformerCUDASkipPaddingBlocksPassBase<
          CUDASkipPaddingBlocksPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    SmallVector<scf::ParallelOp> ruled;
    fn.walk([&](scf::ParallelOp op) {
      if (op->hasAttr(mlir::linformer::kCUDATokenRowsAttrName))
        ruled.push_back(op);
    });
    if (ruled.empty())
      return;
    BlockArgument lengths = mlir::linformer::markedLengthsArgument(fn);
    for (scf::ParallelOp blocks : ruled) {
      auto rule = cast<TokenRowsAttr>(
          blocks->getAttr(mlir::linformer::kCUDATokenRowsAttrName));
      ArrayRef<int64_t> grid = rule.getGrid().asArrayRef();
      auto type =
          lengths ? dyn_cast<MemRefType>(lengths.getType()) : MemRefType();
      if (!type || type.getRank() != 1 ||
          type.getDimSize(0) != grid[rule.getBatch()]) {
        blocks.emitOpError("has the length rule ")
            << rule << ", and its function has no linformer.lengths "
            << "argument of " << grid[rule.getBatch()] << " sequences";
        return signalPassFailure();
      }
      if (blocks.getNumLoops() != 1) {
        blocks.emitOpError("has the length rule ")
            << rule << " over " << blocks.getNumLoops()
            << " block dimensions; a rule numbers block x alone";
        return signalPassFailure();
      }
      for (Operation &child : blocks.getBody()->without_terminator()) {
        if (auto threads = dyn_cast<scf::ParallelOp>(child)) {
          if (failed(
                  guard(threads, blocks.getInductionVars()[0], rule, lengths)))
            return signalPassFailure();
          continue;
        }
        if (!isMemoryEffectFree(&child)) {
          child.emitOpError("touches memory in a block loop with a length "
                            "rule outside its thread loops: a padding block "
                            "could not skip it");
          return signalPassFailure();
        }
      }
    }
  }

  /// The body of `threads` (in the block `block` of a loop with `rule`)
  /// in an scf.if on the block's token tile starting before its sequence's
  /// length.
  static LogicalResult guard(scf::ParallelOp threads, Value block,
                             TokenRowsAttr rule, Value lengths) {
    if (threads.getNumReductions() != 0)
      return threads.emitOpError(
          "reduces across threads in a block loop with a length rule: a "
          "padding block could not skip it");
    Block *body = threads.getBody();
    Location loc = threads.getLoc();
    auto b = OpBuilder::atBlockBegin(body);
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    ArrayRef<int64_t> grid = rule.getGrid().asArrayRef();
    // Coordinate `dim` of block x in the rule's row-major grid.
    auto coordinate = [&](int64_t dim) {
      int64_t stride = 1;
      for (int64_t d = dim + 1; d < int64_t(grid.size()); ++d)
        stride *= grid[d];
      Value v = block;
      if (stride != 1)
        v = arith::DivUIOp::create(b, loc, v, c(stride));
      return arith::RemUIOp::create(b, loc, v, c(grid[dim])).getResult();
    };
    Value sequence = coordinate(rule.getBatch());
    Value tile = coordinate(rule.getRow());
    Value length = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, lengths, ValueRange{sequence}));
    Value first = arith::MulIOp::create(b, loc, tile, c(rule.getTile()));
    Value real =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, first, length);
    auto ifOp = scf::IfOp::create(b, loc, real, /*withElseRegion=*/false);
    Block &then = ifOp.getThenRegion().front();
    then.getOperations().splice(
        then.getTerminator()->getIterator(), body->getOperations(),
        std::next(Block::iterator(ifOp)), body->getTerminator()->getIterator());
    return success();
  }
};

} // namespace
