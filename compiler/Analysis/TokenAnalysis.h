//===- TokenAnalysis.h - which tensors hold tokens --------------*- C++ -*-===//
//
// Which values of a function hold tokens, and along which dimensions: the
// length rules of both pipelines start here (the CPU's workgroup tiling,
// the CUDA pipeline's block loops). Works on tensors, before bufferization.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_ANALYSIS_TOKENANALYSIS_H
#define LINFORMER_COMPILER_ANALYSIS_TOKENANALYSIS_H

#include "dialect/IR/LinformerDialect.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir::linformer {

/// Where a tensor keeps tokens: the dimensions of its sequence (batch) and
/// of its tokens, and how many tokens an index along it covers: 1, or a
/// window's (pooled slots, each real while its window's first token is).
struct TokenDims {
  unsigned batch, token;
  int64_t perRow = 1;
};

/// Which values of a function hold tokens, from its sequence arguments
/// (`linformer.sequence`: `[b, n, ...]`) forwards through linalg ops (a
/// token loop that stays parallel keeps them, a reduction over it ends
/// them) and the attention core (its rows are the queries'). A window
/// reduction (`linformer.token_bound` with parts, masked: token = window *
/// w + r, w >= 2) holds windows of w tokens along its window loop; the
/// core reading them then stops at the real windows too (its own
/// token_bound, per_step = w, set by the decomposition): rows of windows a
/// rule leaves unwritten are never read unmasked. Anything else holds no
/// tokens.
class TokenAnalysis {
public:
  std::optional<TokenDims> of(Value v) {
    auto it = cache.find(v);
    if (it != cache.end())
      return it->second;
    cache[v] = std::nullopt; // cycles (there are none in SSA) end here
    std::optional<TokenDims> dims = compute(v);
    cache[v] = dims;
    return dims;
  }

private:
  std::optional<TokenDims> compute(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (fn && type && type.getRank() >= 2 &&
          fn.getArgAttr(arg.getArgNumber(), kSequenceArgAttrName))
        return TokenDims{0, 1};
      return std::nullopt;
    }
    Operation *def = v.getDefiningOp();
    if (auto core = dyn_cast<AttentionCoreOp>(def))
      return of(core.getQ());
    auto op = dyn_cast<linalg::LinalgOp>(def);
    if (!op || !op.hasPureTensorSemantics())
      return std::nullopt;
    AffineMap out = op.getIndexingMapMatchingResult(cast<OpResult>(v));
    SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
    if (auto bound = op->getAttrOfType<TokenBoundAttr>(kTokenBoundAttrName);
        bound && bound.hasParts() && bound.getMasked() &&
        bound.getPerPart() >= 2 && bound.getPart() < int64_t(iters.size()) &&
        bound.getBatch() < int64_t(iters.size()) &&
        iters[bound.getPart()] == utils::IteratorType::parallel) {
      std::optional<unsigned> b = out.getResultPosition(
          getAffineDimExpr(bound.getBatch(), op.getContext()));
      std::optional<unsigned> t = out.getResultPosition(
          getAffineDimExpr(bound.getPart(), op.getContext()));
      if (b && t)
        return TokenDims{*b, *t, bound.getPerPart()};
      return std::nullopt;
    }
    // An op that reads real tokens (one a row) along a parallel loop keeps
    // them whatever else it reads: pooled slots (windows of tokens) it
    // mixes in, broadcast along the queries or summed over (an attention
    // core lowered to linalg ops before this analysis, the CUDA pipeline's
    // five kernels: its scores' and weighted sum's rows are the queries',
    // as the core op's are). Without such an operand, slots are tokens as
    // any.
    bool realRows = llvm::any_of(op->getOpOperands(), [&](OpOperand &o) {
      std::optional<TokenDims> in = of(o.get());
      return in && in->perRow == 1;
    });
    std::optional<TokenDims> result;
    for (OpOperand &operand : op->getOpOperands()) {
      std::optional<TokenDims> in = of(operand.get());
      if (!in || (realRows && in->perRow != 1))
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      auto loopOf = [&](unsigned pos) -> std::optional<unsigned> {
        if (pos >= map.getNumResults())
          return std::nullopt;
        auto d = dyn_cast<AffineDimExpr>(map.getResult(pos));
        if (!d)
          return std::nullopt;
        return d.getPosition();
      };
      std::optional<unsigned> batch = loopOf(in->batch),
                              token = loopOf(in->token);
      if (!batch || !token ||
          iters[*token] != utils::IteratorType::parallel)
        return std::nullopt; // a reduction over tokens: none left
      std::optional<unsigned> b = out.getResultPosition(
          getAffineDimExpr(*batch, op.getContext()));
      std::optional<unsigned> t = out.getResultPosition(
          getAffineDimExpr(*token, op.getContext()));
      if (!b || !t)
        return std::nullopt;
      if (result && (result->batch != *b || result->token != *t ||
                     result->perRow != in->perRow))
        return std::nullopt;
      result = TokenDims{*b, *t, in->perRow};
    }
    return result;
  }

  DenseMap<Value, std::optional<TokenDims>> cache;
};

/// The loops of `op` (one result) along which the result's token
/// dimensions `dims` lie: an attention core's result dimensions are its own
/// loops; a linalg op's come from its output's indexing map, none where
/// either is not a plain loop. Anything else: none.
inline std::optional<TokenDims> tokenLoopsOf(Operation *op, TokenDims dims) {
  if (isa<AttentionCoreOp>(op))
    return dims;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return std::nullopt;
  AffineMap out = linalgOp.getIndexingMapMatchingResult(op->getResult(0));
  auto b = dyn_cast<AffineDimExpr>(out.getResult(dims.batch));
  auto t = dyn_cast<AffineDimExpr>(out.getResult(dims.token));
  if (!b || !t)
    return std::nullopt;
  return TokenDims{b.getPosition(), t.getPosition(), dims.perRow};
}

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_ANALYSIS_TOKENANALYSIS_H
