//===- BodyCloning.h - a linalg body evaluated inside a kernel --*- C++ -*-===//
//
// What the CUDA passes that fold a linalg op into a kernel of their own
// share (linformer-cuda-tensor-core-contractions: bias inits and GELU
// epilogues; linformer-cuda-warp-reductions: a row's sum): whether a body
// can be cloned into a kernel, the op next to another past ops that touch
// no memory, the body's value at given loop indices, and the constant an
// output starts from.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CUDA_BODYCLONING_H
#define LINFORMER_COMPILER_CODEGEN_CUDA_BODYCLONING_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::linformer::cuda {

/// Whether `op`'s body is pure and takes nothing from outside but constants
/// (it can be cloned into a kernel, which takes buffers only).
inline bool clonableBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  for (Operation &bodyOp : body.without_terminator()) {
    if (!isMemoryEffectFree(&bodyOp) || bodyOp.getNumRegions())
      return false;
    for (Value v : bodyOp.getOperands())
      if (v.getParentBlock() != &body && !v.getDefiningOp<arith::ConstantOp>())
        return false;
  }
  return true;
}

/// An elementwise linalg.generic (identity output map, projected
/// permutations in) that only converts, compares and selects: its body
/// holds casts, comparisons of inputs and loop indices, selects and
/// constants, at least one select, no arithmetic (the padding mask applied
/// to E: `n < lengths[b] ? extf(E[k, n]) : 0`). Where it is read it costs
/// a compare and a select to recompute, against an f32 buffer of the
/// reader's whole iteration space written and read back (E broadcast to
/// every sequence of the batch).
inline bool isGuardedExtension(Operation *op) {
  auto g = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!g || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity() ||
      !g.getRegionOutputArgs()[0].use_empty() || !clonableBody(g))
    return false;
  for (OpOperand *in : g.getDpsInputOperands())
    if (!g.getMatchingIndexingMap(in).isProjectedPermutation())
      return false;
  bool selects = false;
  for (Operation &bodyOp : g.getRegion().front().without_terminator()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp, arith::IndexCastOp,
             arith::CmpIOp, arith::CmpFOp, arith::SelectOp, arith::ConstantOp,
             linalg::IndexOp>(bodyOp))
      return false;
    selects |= isa<arith::SelectOp>(bodyOp);
  }
  return selects;
}

/// The op next to `op` (before it, or after it with `after`), past ops
/// that touch no memory (constants, views).
inline Operation *neighbour(Operation *op, bool after) {
  auto step = [&](Operation *o) {
    return after ? o->getNextNode() : o->getPrevNode();
  };
  Operation *next = step(op);
  while (next && isMemoryEffectFree(next) && next->getNumRegions() == 0)
    next = step(next);
  return next;
}

/// `in`'s indices (an operand of `g`) at `g`'s loop indices `indices`.
inline SmallVector<Value> operandIndices(linalg::GenericOp g, OpOperand *in,
                                       ArrayRef<Value> indices) {
  AffineMap m = g.getMatchingIndexingMap(in);
  SmallVector<Value> at;
  for (unsigned i = 0; i < m.getNumResults(); ++i)
    at.push_back(indices[m.getDimPosition(i)]);
  return at;
}

/// The values `g`'s (clonable) body yields with its block arguments as
/// `map` maps them and `linalg.index d` as `index(d)`: its ops cloned
/// (and the constants they take from outside it).
inline SmallVector<Value> cloneYields(OpBuilder &b, linalg::GenericOp g,
                                      IRMapping &map,
                                      function_ref<Value(unsigned)> index) {
  Block &body = g.getRegion().front();
  for (Operation &bodyOp : body.without_terminator()) {
    if (auto op = dyn_cast<linalg::IndexOp>(bodyOp)) {
      map.map(op.getResult(), index(op.getDim()));
      continue;
    }
    for (Value v : bodyOp.getOperands())
      if (!map.contains(v) && v.getParentBlock() != &body)
        map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
    b.clone(bodyOp, map);
  }
  SmallVector<Value> yields;
  for (Value v : body.getTerminator()->getOperands())
    yields.push_back(map.lookupOrDefault(v));
  return yields;
}

/// The first value `g`'s body yields (cloneYields).
inline Value cloneOps(OpBuilder &b, linalg::GenericOp g, IRMapping &map,
                      function_ref<Value(unsigned)> index) {
  return cloneYields(b, g, map, index)[0];
}

/// The values `g`'s (clonable) body yields at loop indices `indices`,
/// each input loaded at its own indices but those `given` maps (inputs,
/// or the output for a reduction's running value) to a value.
inline SmallVector<Value>
cloneBodyYields(OpBuilder &b, Location loc, linalg::GenericOp g,
                ArrayRef<Value> indices,
                ArrayRef<std::pair<OpOperand *, Value>> given) {
  IRMapping map;
  auto givenValue = [&](OpOperand *operand) -> Value {
    for (auto [o, v] : given)
      if (o == operand)
        return v;
    return {};
  };
  for (auto [o, v] : given)
    map.map(g.getMatchingBlockArgument(o), v);
  for (OpOperand *in : g.getDpsInputOperands())
    if (!givenValue(in))
      map.map(g.getMatchingBlockArgument(in),
              memref::LoadOp::create(b, loc, in->get(),
                                     operandIndices(g, in, indices)));
  return cloneYields(b, g, map, [&](unsigned d) { return indices[d]; });
}

/// The value `g`'s (clonable) body yields at loop indices `indices`, each
/// input loaded at its own indices but `given` (an input, or the output
/// for a reduction's running value), which is `value`.
inline Value cloneBody(OpBuilder &b, Location loc, linalg::GenericOp g,
                       ArrayRef<Value> indices, OpOperand *given = nullptr,
                       Value value = {}) {
  if (!given)
    return cloneBodyYields(b, loc, g, indices, {})[0];
  std::pair<OpOperand *, Value> one(given, value);
  return cloneBodyYields(b, loc, g, indices, one)[0];
}

/// `g`'s inputs and, with `outputs`, its outputs: the operands a run of
/// cloneBodyRun loads (or stores) as vectors where they have `g`'s last
/// loop dimension.
inline SmallVector<OpOperand *> runOperands(linalg::GenericOp g, bool outputs) {
  SmallVector<OpOperand *> operands(g.getDpsInputOperands());
  if (outputs)
    for (OpOperand &out : g.getDpsInitsMutable())
      operands.push_back(&out);
  return operands;
}

/// Whether `g`'s inputs (with `outputs`, its outputs too: stored a run
/// at a time) all allow cloneBodyRun: each either has `g`'s last loop
/// dimension as its own last (contiguous: an identity layout, of whole
/// bytes) or does not have it at all.
inline bool runClonable(linalg::GenericOp g, bool outputs = false) {
  AffineExpr last = getAffineDimExpr(g.getNumLoops() - 1, g.getContext());
  for (OpOperand *in : runOperands(g, outputs)) {
    AffineMap m = g.getMatchingIndexingMap(in);
    if (!llvm::is_contained(m.getResults(), last))
      continue;
    auto type = dyn_cast<MemRefType>(in->get().getType());
    if (!type || !type.getLayout().isIdentity() ||
        m.getResults().back() != last ||
        !type.getElementType().isIntOrFloat() ||
        type.getElementType().getIntOrFloatBitWidth() % 8)
      return false;
  }
  return true;
}

/// The widest element, in bytes, of the inputs cloneBodyRun loads as
/// vectors (with `outputs`, and of the outputs; 4 if none).
inline int64_t runElementBytes(linalg::GenericOp g, bool outputs = false) {
  AffineExpr last = getAffineDimExpr(g.getNumLoops() - 1, g.getContext());
  int64_t widest = 0;
  for (OpOperand *in : runOperands(g, outputs))
    if (llvm::is_contained(g.getMatchingIndexingMap(in).getResults(), last))
      widest = std::max<int64_t>(
          widest, cast<MemRefType>(in->get().getType())
                          .getElementType()
                          .getIntOrFloatBitWidth() /
                      8);
  return widest ? widest : 4;
}

/// The values `g`'s body (clonable, runClonable) yields at loop indices
/// `indices` and at the `n` - 1 after them along its last loop dimension
/// (all of them, per element):
/// an input that has that dimension is loaded once, as a vector of n
/// aligned to its size (the caller's indices make it so), any other once
/// as a scalar; the body is cloned for each value. `given` maps inputs to
/// values (not loaded; the same for every element); `inits`, when not
/// empty, the output's running value of each of the n elements (a
/// reduction's: each element's body adds into its own).
inline SmallVector<SmallVector<Value>>
cloneBodyRunYields(OpBuilder &b, Location loc, linalg::GenericOp g,
                   ArrayRef<Value> indices, int64_t n,
                   ArrayRef<std::pair<OpOperand *, Value>> given = {},
                   ValueRange inits = {}) {
  unsigned lastDim = g.getNumLoops() - 1;
  AffineExpr last = getAffineDimExpr(lastDim, g.getContext());
  struct Loaded {
    BlockArgument arg;
    Value value;
    bool vector;
  };
  SmallVector<Loaded> loaded;
  for (auto [in, v] : given)
    loaded.push_back({g.getMatchingBlockArgument(in), v, false});
  for (OpOperand *in : g.getDpsInputOperands()) {
    if (llvm::any_of(given, [&](auto &p) { return p.first == in; }))
      continue;
    SmallVector<Value> at = operandIndices(g, in, indices);
    bool vec =
        llvm::is_contained(g.getMatchingIndexingMap(in).getResults(), last);
    Value v;
    if (vec) {
      Type elem = cast<MemRefType>(in->get().getType()).getElementType();
      v = vector::LoadOp::create(
          b, loc, VectorType::get({n}, elem), in->get(), at,
          /*nontemporal=*/false,
          llvm::MaybeAlign(n * elem.getIntOrFloatBitWidth() / 8));
    } else {
      v = memref::LoadOp::create(b, loc, in->get(), at);
    }
    loaded.push_back({g.getMatchingBlockArgument(in), v, vec});
  }
  SmallVector<SmallVector<Value>> out;
  for (int64_t e = 0; e < n; ++e) {
    IRMapping map;
    for (const Loaded &l : loaded)
      map.map(l.arg, l.vector ? vector::ExtractOp::create(
                                    b, loc, l.value, ArrayRef<int64_t>{e})
                                    .getResult()
                              : l.value);
    if (!inits.empty())
      map.map(g.getMatchingBlockArgument(g.getDpsInitOperand(0)), inits[e]);
    out.push_back(cloneYields(b, g, map, [&](unsigned d) -> Value {
      if (d != lastDim || !e)
        return indices[d];
      return arith::AddIOp::create(b, loc, indices[d],
                                   arith::ConstantIndexOp::create(b, loc, e));
    }));
  }
  return out;
}

/// The first value `g`'s body yields at each of the n elements
/// (cloneBodyRunYields).
inline SmallVector<Value>
cloneBodyRun(OpBuilder &b, Location loc, linalg::GenericOp g,
             ArrayRef<Value> indices, int64_t n,
             ArrayRef<std::pair<OpOperand *, Value>> given = {},
             ValueRange inits = {}) {
  SmallVector<Value> first;
  for (SmallVector<Value> &yields :
       cloneBodyRunYields(b, loc, g, indices, n, given, inits))
    first.push_back(yields[0]);
  return first;
}

/// The constant `op` writes into all of `c`: `op` is a linalg.fill of `c`
/// with an f32 constant, or a linalg.copy into `c` from a buffer whose last
/// writer before it is such a fill (bufferization copies one zero-filled
/// tensor into the output of every reduction that starts from it, and the
/// last of them into that tensor itself). Null otherwise.
inline arith::ConstantOp filledConstant(Operation *op, Value c) {
  auto constantOf = [](linalg::FillOp fill) {
    auto cst = fill.value().getDefiningOp<arith::ConstantOp>();
    return fill.hasPureBufferSemantics() && cst && cst.getType().isF32()
               ? cst
               : arith::ConstantOp();
  };
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(op))
    return fill.getDpsInitOperand(0)->get() == c ? constantOf(fill)
                                                 : arith::ConstantOp();
  auto copy = dyn_cast_or_null<linalg::CopyOp>(op);
  if (!copy || !copy.hasPureBufferSemantics() ||
      copy.getDpsInitOperand(0)->get() != c)
    return {};
  Value src = copy.getDpsInputOperand(0)->get();
  if (src.getType() != c.getType() || !src.getDefiningOp<memref::AllocOp>())
    return {};
  // The last op before the copy that may write `src` must be the fill.
  Operation *last = nullptr;
  for (OpOperand &use : src.getUses()) {
    Operation *owner = copy->getBlock()->findAncestorOpInBlock(*use.getOwner());
    if (!owner)
      return {};
    auto reader = dyn_cast<linalg::CopyOp>(use.getOwner());
    if (owner == copy || !owner->isBeforeInBlock(copy) ||
        (reader && reader.isDpsInput(&use)))
      continue;
    if (!last || last->isBeforeInBlock(owner))
      last = owner;
  }
  auto writer = dyn_cast_or_null<linalg::FillOp>(last);
  if (writer && writer.getDpsInitOperand(0)->get() != src)
    return {};
  return writer ? constantOf(writer) : arith::ConstantOp();
}

/// Erases `op`, an output's initial writer that a kernel absorbed, and
/// when it is a copy (see filledConstant) its source buffer too if nothing
/// but its fill and deallocations use that any more.
inline void eraseInitWriter(RewriterBase &rewriter, Operation *op) {
  auto copy = dyn_cast<linalg::CopyOp>(op);
  Value src = copy ? copy.getDpsInputOperand(0)->get() : Value();
  rewriter.eraseOp(op);
  if (!src || !llvm::all_of(src.getUsers(), [](Operation *user) {
        return isa<linalg::FillOp, memref::DeallocOp>(user);
      }))
    return;
  for (Operation *user : llvm::make_early_inc_range(src.getUsers()))
    rewriter.eraseOp(user);
  rewriter.eraseOp(src.getDefiningOp());
}

} // namespace mlir::linformer::cuda

#endif // LINFORMER_COMPILER_CODEGEN_CUDA_BODYCLONING_H
