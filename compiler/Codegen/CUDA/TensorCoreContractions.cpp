//===- TensorCoreContractions.cpp - contractions on tensor cores -*- C++
//-*-===//
//
// The CUDA pipeline's tensor-core path (see Passes.td): every contraction
// `linalg.generic` that carries a `#linformer.cuda_schedule` (linformer-
// cuda-select-schedules chose it; Contractions.h turns it back into a Plan)
// is rewritten here: what it absorbs (the init writer right before it and
// the epilogue right after it where its `linformer.cuda_absorbs` says so,
// as linformer-cuda-absorb-init-epilogue chose; guarded extensions that
// wrote its operands), its warp tiles (WarpTiles.h: unstaged in
// WarpTiles.cpp, staged blocks in StagedTiles.cpp), and with split-K the
// partial sums' buffer and the loop that adds them to C. Length variants
// (linformer-cuda-length-variants) arrive as separate contractions in guards;
// their partial sums are allocated around the guards.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/BodyCloning.h"
#include "compiler/Codegen/CUDA/Contractions.h"
#include "compiler/Codegen/CUDA/LoopMapping.h"
#include "compiler/Codegen/CUDA/MmaUtils.h"
#include "compiler/Codegen/CUDA/WarpTiles.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDATENSORCORECONTRACTIONSPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
namespace cuda = mlir::linformer::cuda;
using cuda::clonableBody;
using cuda::cloneBody;
using cuda::copyWidth;
using cuda::evenShare;
using cuda::innermost;
using cuda::kTileM;
using cuda::kTileN;
using cuda::kWarp;
using cuda::neighbour;
using cuda::operandIndices;
using cuda::Plan;
using cuda::StagedBuffer;
using cuda::Staging;
using cuda::unrolledWords;
using cuda::vectorCopy;

namespace {

struct CUDATensorCoreContractionsPass
    : mlir::linformer::impl::LinformerCUDATensorCoreContractionsPassBase<
          CUDATensorCoreContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(cuda::checkPrecision(getOperation(), precision)))
      return signalPassFailure();
    freed.clear();
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(mlir::linformer::kCUDAScheduleAttrName))
        ops.push_back(op);
    });
    // The variants in one nest of length guards in variant order (the
    // walk meets the innermost first): their partial sums' order.
    auto variant = [](linalg::GenericOp op) {
      auto v = op->getAttrOfType<IntegerAttr>(
          mlir::linformer::kLengthVariantAttrName);
      return v ? v.getInt() : 0;
    };
    for (auto it = ops.begin(); it != ops.end();) {
      Operation *anchor = outermostGuard(*it);
      auto end = std::find_if(it, ops.end(), [&](linalg::GenericOp op) {
        return outermostGuard(op) != anchor;
      });
      if (anchor != it->getOperation())
        std::stable_sort(it, end,
                         [&](linalg::GenericOp a, linalg::GenericOp b) {
                           return variant(a) < variant(b);
                         });
      it = end;
    }
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      auto schedule = op->getAttrOfType<mlir::linformer::CUDAScheduleAttr>(
          mlir::linformer::kCUDAScheduleAttrName);
      std::string why;
      FailureOr<Plan> p = cuda::planOf(op, schedule, precision, exact, why);
      if (failed(p)) {
        op.emitOpError() << "cannot take its schedule " << schedule << ": "
                         << why;
        return signalPassFailure();
      }
      FailureOr<cuda::Absorbed> absorbed = cuda::absorbedBy(op);
      if (failed(absorbed))
        return signalPassFailure();
      p->initFrom = absorbed->init;
      Value c = op.getDpsInitOperand(0)->get();
      p->out = c;
      p->epilogueRead = absorbed->epilogueRead;
      linalg::GenericOp epilogue = p->epilogue();
      if (epilogue)
        p->out = epilogue.getDpsInitOperand(0)->get();
      rewrite(rewriter, op, *p);
      if (p->initFrom)
        cuda::eraseInitWriter(rewriter, p->initFrom);
      for (linalg::GenericOp from : p->operandFrom)
        if (from)
          eraseAbsorbed(rewriter, from);
      if (epilogue)
        rewriter.eraseOp(epilogue);
      // C, when nothing but deallocations uses it any more.
      cuda::eraseIfUnused(rewriter, c);
    }
  }

  /// The emitters' options: the precision and the host's emulation.
  cuda::WarpTileOptions options() const {
    cuda::WarpTileOptions o;
    o.precision = precision;
    o.emulate = emulate;
    o.exact = exact;
    return o;
  }

  /// Erases `from`, a guarded extension whose values contractions computed
  /// as they loaded them, and its buffer, once no other op reads it.
  void eraseAbsorbed(IRRewriter &rewriter, linalg::GenericOp from) {
    Value buffer = from.getDpsInitOperand(0)->get();
    if (!llvm::all_of(buffer.getUsers(), [&](Operation *user) {
          return user == from.getOperation() || isa<memref::DeallocOp>(user);
        }))
      return;
    rewriter.eraseOp(from);
    cuda::eraseIfUnused(rewriter, buffer);
  }

  /// `op` as warp tiles (staged through shared memory when `p` says so),
  /// then with split-K the parts' sums added to C. The partial sums,
  /// [split] + C's shape, are allocated before `op` (the plan binds
  /// buffers of the function's body), or before the outermost length
  /// guard when `op` is a variant of linformer-cuda-length-variants, and
  /// freed after it.
  void rewrite(IRRewriter &rewriter, linalg::GenericOp op, const Plan &p) {
    Location loc = op.getLoc();
    Operation *anchor = outermostGuard(op);
    Value partials, counters;
    if (p.split > 1) {
      auto initType =
          cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
      SmallVector<int64_t> shape{p.split};
      llvm::append_range(shape, initType.getShape());
      rewriter.setInsertionPoint(anchor);
      partials = memref::AllocOp::create(
          rewriter, loc, MemRefType::get(shape, rewriter.getF32Type()));
      // The parts summed in the kernel: a counter a block tile.
      if (sumPartsInKernel && p.staging.warpsM) {
        counters = memref::AllocOp::create(
            rewriter, loc,
            MemRefType::get({p.blockRows() * p.blockCols()},
                            rewriter.getI32Type()));
        // The CUDA runtime zeroes intermediates once, at set-up, and the
        // kernel leaves its counters at zero; the host's buffers come
        // from malloc, so there they are zeroed before each launch.
        if (emulate)
          linalg::FillOp::create(rewriter, loc,
                                 ValueRange{arith::ConstantIntOp::create(
                                     rewriter, loc, rewriter.getI32Type(), 0)},
                                 ValueRange{counters});
      }
    }
    rewriter.setInsertionPoint(op);
    emit(rewriter, op, p, partials, counters);
    for (Value buffer : {partials, counters}) {
      if (!buffer)
        continue;
      if (anchor == op) {
        rewriter.setInsertionPointAfter(op);
        memref::DeallocOp::create(rewriter, loc, buffer);
        continue;
      }
      // After those of the variants before this one.
      Operation *&last = freed[anchor];
      rewriter.setInsertionPointAfter(last ? last : anchor);
      last = memref::DeallocOp::create(rewriter, loc, buffer);
    }
    rewriter.eraseOp(op);
  }
  /// The last deallocation of partial sums after each outermost guard.
  DenseMap<Operation *, Operation *> freed;

  /// Where `op`'s partial sums go: before and after the outermost length
  /// guard around it, or `op` itself.
  static Operation *outermostGuard(Operation *op) {
    Operation *guard = cuda::outermostLengthGuard(op);
    return guard ? guard : op;
  }

  /// `op`'s code at the insertion point: its warp tiles (into `partials`
  /// with split-K), then the parts' sums added to C (in the same kernel
  /// where `counters` are given).
  void emit(IRRewriter &rewriter, linalg::GenericOp op, const Plan &p,
            Value partials, Value counters) {
    Location loc = op.getLoc();
    OpOperand *init = op.getDpsInitOperand(0);
    auto initType = cast<MemRefType>(init->get().getType());
    if (p.staging.warpsM)
      cuda::emitStagedTiles(rewriter, op, p, options(), partials, counters);
    else
      cuda::emitUnstagedTiles(rewriter, op, p, options(), partials);
    if (p.split <= 1 || counters)
      return;
    auto c = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value zero = c(rewriter, 0), one = c(rewriter, 1);
    // C += the parts' sums, part 0 first: one loop over C's elements.
    SmallVector<Value> lo, hi, st;
    for (int64_t e : initType.getShape()) {
      lo.push_back(zero);
      hi.push_back(c(rewriter, e));
      st.push_back(one);
    }
    auto sums = scf::ParallelOp::create(
        rewriter, loc, lo, hi, st,
        [&](OpBuilder &b, Location loc, ValueRange idx) {
          cuda::storeSumOfParts(b, loc, op, p, partials,
                                SmallVector<Value>(idx));
        });
    // Where C's rows are tokens, so are the sums': their (batch, token)
    // dimensions, for linformer-cuda-tile-parallel-loops' length rule.
    if (std::optional<std::pair<int64_t, int64_t>> rows = tokenDimsOfC(op)) {
      sums->setAttr(mlir::linformer::kTokenLoopsAttrName,
                    rewriter.getDenseI64ArrayAttr({rows->first, rows->second}));
      if (Attribute slots = op->getAttr(mlir::linformer::kCUDASlotRowsAttrName))
        sums->setAttr(mlir::linformer::kCUDASlotRowsAttrName, slots);
    }
  }

  /// C's (batch, token) dimensions, where `op` has token loops that C
  /// indexes by (batch before token); none otherwise.
  static std::optional<std::pair<int64_t, int64_t>>
  tokenDimsOfC(linalg::GenericOp op) {
    auto loops = op->getAttrOfType<DenseI64ArrayAttr>(
        mlir::linformer::kTokenLoopsAttrName);
    if (!loops || loops.size() != 2)
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    MLIRContext *ctx = op.getContext();
    std::optional<unsigned> batch = map.getResultPosition(
                                getAffineDimExpr(loops[0], ctx)),
                            token = map.getResultPosition(
                                getAffineDimExpr(loops[1], ctx));
    if (!batch || !token || *batch >= *token)
      return std::nullopt;
    return std::make_pair(int64_t(*batch), int64_t(*token));
  }
};

} // namespace
