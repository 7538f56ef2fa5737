//===- LinformerOps.cpp - Linformer operations ------------------*- C++ -*-===//
//
// Verifiers, folders and canonicalization patterns of the Linformer ops.
// Every verifier message names the operand, the shape or type it expected and
// the rule behind it, so that a user can fix the IR from the message alone.
// The constraint numbers (C1, P1, A1, ...) are those of docs/Spec.md.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/LinformerOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <string>

using namespace mlir;
using namespace mlir::linformer;

#define GET_OP_CLASSES
#include "dialect/IR/LinformerOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Formats a shape as `[2, 64, ?]` for diagnostics.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += ShapedType::isDynamic(dim) ? std::string("?") : std::to_string(dim);
  }
  return s + "]";
}

/// Two sizes conflict only when both are known and differ: dynamic sizes are
/// checked when the shape becomes static.
static bool conflicts(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

static bool conflicts(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return true;
  for (auto [x, y] : llvm::zip(a, b))
    if (conflicts(x, y))
      return true;
  return false;
}

/// A tensor's or (the attention core on buffers) a memref's type.
static ShapedType tensorType(Value v) { return cast<ShapedType>(v.getType()); }

/// Checks that `value` has shape `expected`; `why` explains where the
/// expected shape comes from.
static LogicalResult checkShape(Operation *op, Value value, StringRef name,
                                ArrayRef<int64_t> expected, StringRef why) {
  ArrayRef<int64_t> actual = tensorType(value).getShape();
  if (!conflicts(actual, expected))
    return success();
  InFlightDiagnostic diag = op->emitOpError();
  // The result is checked with the same helper; do not call it an operand.
  if (isa<OpResult>(value) && value.getDefiningOp() == op)
    diag << "result";
  else
    diag << "operand '" << name << "'";
  diag << " must have shape " << formatShape(expected) << " (" << why
       << "), but has shape " << formatShape(actual);
  return diag;
}

/// All floating-point operands and the result share one element type, that
/// of the operand named `refName`.
static LogicalResult
checkElementTypes(Operation *op, Type expected, StringRef refName,
                  ArrayRef<std::pair<StringRef, Value>> operands) {
  for (auto [name, value] : operands) {
    if (!value)
      continue;
    Type actual = tensorType(value).getElementType();
    if (actual == expected)
      continue;
    InFlightDiagnostic diag = op->emitOpError();
    if (isa<OpResult>(value) && value.getDefiningOp() == op)
      diag << "result";
    else
      diag << "operand '" << name << "'";
    diag << " has element type " << actual << ", but the element type of '"
         << refName << "' is " << expected
         << " (all floating-point operands must agree)";
    return diag;
  }
  return success();
}

/// Padding information: `lengths` [b] or `mask` [b, n], never both.
static LogicalResult checkPadding(Operation *op, Value lengths, Value mask,
                                  int64_t batch, int64_t seqLen) {
  if (lengths && mask)
    return op->emitOpError()
           << "takes either 'lengths' or 'mask' to describe padding, not both";
  if (lengths) {
    auto type = tensorType(lengths);
    if (type.getRank() != 1 || conflicts(type.getDimSize(0), batch))
      return op->emitOpError()
             << "operand 'lengths' must have shape " << formatShape({batch})
             << " (one length per sequence of the batch), but has shape "
             << formatShape(type.getShape());
  }
  if (mask)
    return checkShape(op, mask, "mask", {batch, seqLen},
                      "[batch, n]: one flag per token, true = real token");
  return success();
}

/// Pooling and convolution windows tile the sequence exactly. With
/// `sequenceParallel` (ranks > 1) n is one rank's share: the projection is
/// learned, and k fits the whole sequence of n ranks tokens.
static LogicalResult checkWindow(Operation *op, ProjectionKind kind,
                                 int64_t n, int64_t k,
                                 std::optional<int64_t> sequenceParallel) {
  // A project op takes k from its result type, where 0 is a legal size; an
  // empty projection has nothing to attend to, and n % 0 below would trap.
  if (!ShapedType::isDynamic(k) && k <= 0)
    return op->emitOpError()
           << "projected length k = " << k << " must be positive";
  int64_t ranks = sequenceParallel.value_or(1);
  // Windows split at rank boundaries: each rank projects its own windows to
  // k / P slots.
  if (ranks > 1 && kind != ProjectionKind::learned &&
      !ShapedType::isDynamic(k) && k % ranks != 0)
    return op->emitOpError()
           << "has sequence_parallel = " << ranks << " and a '"
           << stringifyProjectionKind(kind) << "' projection to k = " << k
           << " slots, which the ranks cannot share: each rank projects its "
              "own windows to k / sequence_parallel slots, so "
           << ranks << " must divide k";
  if (!ShapedType::isDynamic(n) && !ShapedType::isDynamic(k) &&
      k > n * ranks) {
    if (ranks > 1)
      return op->emitOpError()
             << "projected length k = " << k
             << " exceeds the whole sequence's n * sequence_parallel = " << n
             << " * " << ranks << " tokens";
    return op->emitOpError() << "projected length k = " << k
                             << " exceeds the sequence length n = " << n
                             << " (the projection must shorten the sequence)";
  }
  // With ranks, n is a rank's share and k / ranks its slots: the same
  // windows of n ranks / k tokens.
  int64_t slots = ranks > 1 && !ShapedType::isDynamic(k) ? k / ranks : k;
  if (kind != ProjectionKind::learned && !ShapedType::isDynamic(n) &&
      !ShapedType::isDynamic(k) && n % slots != 0) {
    if (ranks > 1)
      return op->emitOpError()
             << "a rank's n = " << n << " tokens do not divide into its k / "
             << "sequence_parallel = " << slots << " windows ('"
             << stringifyProjectionKind(kind)
             << "' uses windows of n / k tokens of the whole sequence, and "
                "no window may cross a rank)";
    return op->emitOpError()
           << "sequence length n = " << n
           << " is not divisible by the projected length k = " << k
           << " ('" << stringifyProjectionKind(kind)
           << "' uses windows of n / k tokens)";
  }
  return success();
}

static int64_t divOrDynamic(int64_t a, int64_t b) {
  if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || b == 0)
    return ShapedType::kDynamic;
  return a / b;
}

/// The expected shape of a projection weight (`e`, `f` or a project op's
/// `weight`) for a kind, with `why` describing the rule.
static SmallVector<int64_t> expectedWeightShape(ProjectionKind kind,
                                                bool sharedAcrossHeads,
                                                int64_t heads, int64_t n,
                                                int64_t k, int64_t headDim,
                                                std::string &why) {
  SmallVector<int64_t> shape;
  if (kind == ProjectionKind::learned) {
    why = sharedAcrossHeads ? "[k, n]: one learned matrix shared by all heads"
                            : "[heads, k, n]: one learned matrix per head";
    shape = {k, n};
  } else {
    why = sharedAcrossHeads
              ? "[head_dim, n / k]: one depthwise kernel shared by all heads"
              : "[heads, head_dim, n / k]: one depthwise kernel per head";
    shape = {headDim, divOrDynamic(n, k)};
  }
  if (!sharedAcrossHeads)
    shape.insert(shape.begin(), heads);
  return shape;
}

/// A constant operand that states "no padding": lengths all equal to n, or a
/// mask that is all true (nonzero, for i8 masks).
static bool isNoPadding(Value lengths, Value mask, int64_t seqLen) {
  DenseIntElementsAttr attr;
  if (lengths && matchPattern(lengths, m_Constant(&attr)))
    return !ShapedType::isDynamic(seqLen) &&
           llvm::all_of(attr.getValues<APInt>(), [&](const APInt &v) {
             return v.getSExtValue() == seqLen;
           });
  if (mask && matchPattern(mask, m_Constant(&attr)))
    return llvm::all_of(attr.getValues<APInt>(),
                        [](const APInt &v) { return !v.isZero(); });
  return false;
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  RankedTensorType inputType = getInput().getType();
  // C1: X is [batch, n, d_model].
  if (inputType.getRank() != 3)
    return emitOpError() << "operand 'input' must have rank 3 ([batch, n, "
                            "d_model]), but has shape "
                         << formatShape(inputType.getShape());
  int64_t b = getBatch(), n = getSeqLen(), dm = getModelDim();
  int64_t h = getHeads(), k = getK();
  // C2: heads divide the model dimension.
  if (!ShapedType::isDynamic(dm) && dm % h != 0)
    return emitOpError() << "d_model = " << dm
                         << " is not divisible by heads = " << h
                         << " (each head takes d_model / heads channels)";
  // C3: the result has the input's type.
  if (getResult().getType() != inputType)
    return emitOpError() << "result type " << getResult().getType()
                         << " must equal the input type " << inputType;
  // C4: square input/output projections.
  for (auto [name, w] : {std::pair<StringRef, Value>{"wq", getWq()},
                         {"wk", getWk()},
                         {"wv", getWv()},
                         {"wo", getWo()}})
    if (failed(checkShape(*this, w, name, {dm, dm},
                          "[d_model, d_model], applied as x * W")))
      return failure();
  // C5: biases come as a set of four, each [d_model].
  int numBiases = !!getBq() + !!getBk() + !!getBv() + !!getBo();
  if (numBiases != 0 && numBiases != 4)
    return emitOpError() << "takes all four biases (bq, bk, bv, bo) or none, "
                            "but has "
                         << numBiases;
  for (auto [name, bias] : {std::pair<StringRef, Value>{"bq", getBq()},
                            {"bk", getBk()},
                            {"bv", getBv()},
                            {"bo", getBo()}})
    if (bias && failed(checkShape(*this, bias, name, {dm}, "[d_model]")))
      return failure();
  // C6, C7: k fits n, and windows tile n.
  ProjectionKind kind = getProjection();
  if (failed(checkWindow(*this, kind, n, k, getSequenceParallel())))
    return failure();
  // C8: the projection operands the kind and the sharing need.
  SharingAttr sharing = getSharing();
  bool hasParams =
      kind == ProjectionKind::learned || kind == ProjectionKind::conv;
  StringRef kindName = stringifyProjectionKind(kind);
  if (!hasParams && (getE() || getF()))
    return emitOpError() << "projection '" << kindName
                         << "' has no parameters, so it takes no 'e' or 'f'";
  if (hasParams && !getE())
    return emitOpError() << "projection '" << kindName
                         << "' needs operand 'e' (the projection of K)";
  if (hasParams && sharing.getKv() && getF())
    return emitOpError()
           << "sharing has 'kv' (K and V share one projection), so operand "
              "'f' must be absent: 'e' projects both";
  if (hasParams && !sharing.getKv() && !getF())
    return emitOpError() << "projection '" << kindName
                         << "' needs operand 'f' (the projection of V) "
                            "unless sharing has 'kv'";
  // C9: their shapes follow the sharing across heads.
  if (hasParams) {
    std::string why;
    // A convolution's kernel spans a window of the whole sequence (n P / k
    // tokens); a learned E, a rank's n columns.
    int64_t ranks = getSequenceParallel().value_or(1);
    int64_t windowN = kind == ProjectionKind::conv && ranks > 1 &&
                              !ShapedType::isDynamic(n)
                          ? n * ranks
                          : n;
    SmallVector<int64_t> expected = expectedWeightShape(
        kind, sharing.getHeads(), h, windowN, k, divOrDynamic(dm, h), why);
    if (failed(checkShape(*this, getE(), "e", expected, why)) ||
        (getF() && failed(checkShape(*this, getF(), "f", expected, why))))
      return failure();
  }
  // C12: only linear projections commute with W.
  if (getReassociate().value_or(false) && kind != ProjectionKind::learned &&
      kind != ProjectionKind::mean_pool)
    return emitOpError() << "cannot be reassociated: projection '" << kindName
                         << "' is not linear, so E (X W) = (E X) W does not "
                            "hold (only 'learned' and 'mean_pool' are)";
  // C10: one floating-point element type throughout.
  if (failed(checkElementTypes(*this, inputType.getElementType(), "input",
                               {{"wq", getWq()},
                                {"wk", getWk()},
                                {"wv", getWv()},
                                {"wo", getWo()},
                                {"bq", getBq()},
                                {"bk", getBk()},
                                {"bv", getBv()},
                                {"bo", getBo()},
                                {"e", getE()},
                                {"f", getF()}})))
    return failure();
  // C11: padding information matches the batch and the sequence.
  return checkPadding(*this, getLengths(), getMask(), b, n);
}

namespace {
/// Drops padding operands that say every token is real.
template <typename OpTy>
struct DropTrivialPadding : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!isNoPadding(op.getLengths(), op.getMask(), op.getSeqLen()))
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.getLengthsMutable().clear();
      op.getMaskMutable().clear();
    });
    return success();
  }
};
} // namespace

void AttentionOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<DropTrivialPadding<AttentionOp>>(context);
}

//===----------------------------------------------------------------------===//
// ProjectOp
//===----------------------------------------------------------------------===//

LogicalResult ProjectOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getResult().getType();
  // P1: [b, h, n, d] -> [b, h, k, d].
  if (inputType.getRank() != 4)
    return emitOpError() << "operand 'input' must have rank 4 ([batch, heads, "
                            "n, head_dim]), but has shape "
                         << formatShape(inputType.getShape());
  ArrayRef<int64_t> in = inputType.getShape();
  int64_t k = resultType.getRank() == 4 ? resultType.getDimSize(2)
                                        : ShapedType::kDynamic;
  if (failed(checkShape(*this, getResult(), "result",
                        {in[0], in[1], k, in[3]},
                        "[batch, heads, k, head_dim]: only the sequence axis "
                        "changes")))
    return failure();
  if (resultType.getElementType() != inputType.getElementType())
    return emitOpError() << "result element type "
                         << resultType.getElementType()
                         << " must equal the input's "
                         << inputType.getElementType();
  // P2: window rules. A rank's pooling or convolution is a projection of
  // its own windows to its own slots, which needs no ranks.
  ProjectionKind kind = getKind();
  if (getSequenceParallel() && kind != ProjectionKind::learned)
    return emitOpError()
           << "has sequence_parallel = " << *getSequenceParallel()
           << " and projection '" << stringifyProjectionKind(kind)
           << "': only a learned projection's sum is split over the ranks; "
              "a rank's windows project to its own slots (n and k of its "
              "share), without sequence_parallel";
  if (failed(checkWindow(*this, kind, in[2], k, getSequenceParallel())))
    return failure();
  // P3: the weight the kind needs.
  StringRef kindName = stringifyProjectionKind(kind);
  bool hasParams =
      kind == ProjectionKind::learned || kind == ProjectionKind::conv;
  if (!hasParams && getWeight())
    return emitOpError() << "projection '" << kindName
                         << "' has no parameters, so it takes no weight";
  if (hasParams && !getWeight())
    return emitOpError() << "projection '" << kindName
                         << "' needs a weight operand";
  if (hasParams) {
    std::string why;
    SmallVector<int64_t> expected = expectedWeightShape(
        kind, isSharedAcrossHeads(), in[1], in[2], k, in[3], why);
    if (failed(checkShape(*this, getWeight(), "weight", expected, why)))
      return failure();
    if (failed(checkElementTypes(*this, inputType.getElementType(), "input",
                                 {{"weight", getWeight()}})))
      return failure();
  }
  // P4: padding.
  return checkPadding(*this, getLengths(), getMask(), in[0], in[2]);
}

/// Pooling a window of one token is the identity when no token is padded.
/// Equal types mean k == n only when n is static: `?` -> `?` may still pool.
OpFoldResult ProjectOp::fold(FoldAdaptor) {
  ProjectionKind kind = getKind();
  if ((kind == ProjectionKind::mean_pool ||
       kind == ProjectionKind::max_pool) &&
      !getLengths() && !getMask() && !ShapedType::isDynamic(getSeqLen()) &&
      getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

void ProjectOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<DropTrivialPadding<ProjectOp>>(context);
}

//===----------------------------------------------------------------------===//
// AttentionCoreOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionCoreOp::verify() {
  // A0: one form, tensors (with a result) or buffers (without one).
  bool onTensors = isa<RankedTensorType>(getInit().getType());
  for (OpOperand &operand : getOperation()->getOpOperands())
    if (isa<RankedTensorType>(operand.get().getType()) != onTensors)
      return emitOpError() << "operands must be all tensors or all memrefs, "
                              "but operand #"
                           << operand.getOperandNumber() << " is "
                           << operand.get().getType() << " and 'init' is "
                           << getInit().getType();
  if (onTensors != static_cast<bool>(getResult()))
    return emitOpError() << (onTensors ? "on tensors must have one result, of "
                                         "the type of 'init'"
                                       : "on memrefs must not have a result "
                                         "(it writes 'init')");
  ShapedType qType = tensorType(getQ());
  // A1: ranks and shapes.
  for (auto [name, value] : {std::pair<StringRef, Value>{"q", getQ()},
                             {"key", getKey()},
                             {"value", getValue()}})
    if (tensorType(value).getRank() != 4)
      return emitOpError() << "operand '" << name
                           << "' must have rank 4 ([batch, heads, length, "
                              "head_dim]), but has shape "
                           << formatShape(tensorType(value).getShape());
  ArrayRef<int64_t> q = qType.getShape();
  ArrayRef<int64_t> key = tensorType(getKey()).getShape();
  ArrayRef<int64_t> value = tensorType(getValue()).getShape();
  if (failed(checkShape(*this, getKey(), "key", {q[0], q[1], key[2], q[3]},
                        "[batch, heads, k, head_dim]: batch, heads and "
                        "head_dim of 'q'")))
    return failure();
  if (failed(checkShape(*this, getValue(), "value",
                        {q[0], q[1], key[2], value[3]},
                        "[batch, heads, k, dv]: batch, heads and k of 'key'")))
    return failure();
  if (failed(checkShape(*this, getInit(), "init", {q[0], q[1], q[2], value[3]},
                        "[batch, heads, n, dv]: the result's")))
    return failure();
  // A2: element types (on buffers each operand may have been narrowed to a
  // 16-bit twin on its own).
  if (onTensors &&
      failed(checkElementTypes(*this, qType.getElementType(), "q",
                               {{"key", getKey()},
                                {"value", getValue()},
                                {"init", getInit()}})))
    return failure();
  // A3: the key mask selects projected slots per sequence.
  if (getKeyMask() &&
      failed(checkShape(*this, getKeyMask(), "key_mask", {q[0], key[2]},
                        "[batch, k]: one flag per projected slot")))
    return failure();
  // A4: a usable scale.
  double scale = getScale().convertToDouble();
  if (!std::isfinite(scale) || scale == 0.0)
    return emitOpError() << "scale must be finite and non-zero, but is "
                         << scale;
  return success();
}

void AttentionCoreOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // On tensors: none. On buffers: it reads its inputs and writes `init`.
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    if (&operand == &getInitMutable())
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

Speculation::Speculatability AttentionCoreOp::getSpeculatability() {
  return hasPureTensorSemantics() ? Speculation::Speculatable
                                  : Speculation::NotSpeculatable;
}

namespace {
/// Drops a key mask that keeps every slot.
struct DropTrivialKeyMask : OpRewritePattern<AttentionCoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionCoreOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getKeyMask() || !isNoPadding({}, op.getKeyMask(), 0))
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.getKeyMaskMutable().clear(); });
    return success();
  }
};
} // namespace

void AttentionCoreOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                  MLIRContext *context) {
  results.add<DropTrivialKeyMask>(context);
}

//===----------------------------------------------------------------------===//
// AttentionCoreOp: TilingInterface
//===----------------------------------------------------------------------===//
// The iteration domain is the result's: (batch, heads, query rows, value
// channels), all parallel. A tile needs its query rows of `q`, every
// projected key, the tile's value channels of every projected value, and the
// tile's batch rows of `key_mask`.

SmallVector<utils::IteratorType> AttentionCoreOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel);
}

SmallVector<Range> AttentionCoreOp::getIterationDomain(OpBuilder &b) {
  Location loc = getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Range> domain;
  SmallVector<OpFoldResult> sizes =
      isa<MemRefType>(getInit().getType())
          ? memref::getMixedSizes(b, loc, getInit())
          : tensor::getMixedSizes(b, loc, getInit());
  for (OpFoldResult size : sizes)
    domain.push_back(Range{zero, size, one});
  return domain;
}

/// A slice of `source` with the given offsets/sizes (unit strides).
static Value sliceOf(OpBuilder &b, Location loc, Value source,
                     ArrayRef<OpFoldResult> offsets,
                     ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes,
                                        strides);
}

FailureOr<TilingResult>
AttentionCoreOp::getTiledImplementation(OpBuilder &b,
                                        ArrayRef<OpFoldResult> offsets,
                                        ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  if (!hasPureTensorSemantics())
    return emitOpError("is tiled on tensors only, not on buffers");
  OpFoldResult zero = b.getIndexAttr(0);
  SmallVector<OpFoldResult> keySizes = tensor::getMixedSizes(b, loc, getKey());
  SmallVector<OpFoldResult> valueSizes =
      tensor::getMixedSizes(b, loc, getValue());
  // offsets/sizes: (b, h, i, c) of the result.
  Value q = sliceOf(b, loc, getQ(), {offsets[0], offsets[1], offsets[2], zero},
                    {sizes[0], sizes[1], sizes[2],
                     tensor::getMixedSize(b, loc, getQ(), 3)});
  Value key = sliceOf(b, loc, getKey(), {offsets[0], offsets[1], zero, zero},
                      {sizes[0], sizes[1], keySizes[2], keySizes[3]});
  Value value =
      sliceOf(b, loc, getValue(), {offsets[0], offsets[1], zero, offsets[3]},
              {sizes[0], sizes[1], valueSizes[2], sizes[3]});
  SmallVector<Operation *> slices = {q.getDefiningOp(), key.getDefiningOp(),
                                     value.getDefiningOp()};
  Value keyMask;
  if (getKeyMask()) {
    keyMask = sliceOf(b, loc, getKeyMask(), {offsets[0], zero},
                      {sizes[0], keySizes[2]});
    slices.push_back(keyMask.getDefiningOp());
  }
  Value init = sliceOf(b, loc, getInit(), offsets, sizes);
  slices.push_back(init.getDefiningOp());
  auto tiled = AttentionCoreOp::create(b, loc, init.getType(), q, key, value,
                                       keyMask, init, getScaleAttr());
  // Its slots' bound (pooled slots, linformer.token_bound) holds for every
  // tile: the tiles keep all the slots of one sequence.
  if (Attribute bound = (*this)->getAttr(kTokenBoundAttrName))
    tiled->setAttr(kTokenBoundAttrName, bound);
  // So do bf16 score products (f16 ones too): each tile's lowering rounds
  // its own.
  for (StringRef name : {kBF16ScoresAttrName, kF16PairsAttrName})
    if (Attribute scores = (*this)->getAttr(name))
      tiled->setAttr(name, scores);
  // And the unit they run on (P's layout on AMX tiles).
  if (Attribute engine = (*this)->getAttr(kBF16EngineAttrName))
    tiled->setAttr(kBF16EngineAttrName, engine);
  return TilingResult{{tiled}, {tiled.getResult()}, slices};
}

LogicalResult AttentionCoreOp::getResultTilePosition(
    OpBuilder &, unsigned, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  resultOffsets.assign(offsets.begin(), offsets.end());
  resultSizes.assign(sizes.begin(), sizes.end());
  return success();
}

FailureOr<TilingResult> AttentionCoreOp::generateResultTileValue(
    OpBuilder &b, unsigned, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes) {
  return getTiledImplementation(b, offsets, sizes);
}

//===----------------------------------------------------------------------===//
// AttentionCoreOp: bufferization
//===----------------------------------------------------------------------===//
// On tensors the core's result is its `init`, written in place (equivalent
// buffers, as linalg's outs); its inputs are read and `init` is not. The op
// on buffers is the same op with memref operands and no result.

namespace {
struct AttentionCoreBufferization
    : bufferization::DstBufferizableOpInterfaceExternalModel<
          AttentionCoreBufferization, AttentionCoreOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const bufferization::AnalysisState &) const {
    return operand.getOperandNumber() !=
           cast<AttentionCoreOp>(op).getInitMutable().getOperandNumber();
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    auto core = cast<AttentionCoreOp>(op);
    if (core.hasPureBufferSemantics())
      return success();
    SmallVector<Value> buffers;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<Value> buffer =
          bufferization::getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    Value init = buffers.back();
    auto onBuffers = AttentionCoreOp::create(
        rewriter, op->getLoc(), Type(), buffers[0], buffers[1], buffers[2],
        core.getKeyMask() ? buffers[3] : Value(), init, core.getScaleAttr());
    onBuffers->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    bufferization::replaceOpWithBufferizedValues(rewriter, op, init);
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verify() {
  Type init = getInit().getType();
  if (isa<MemRefType>(init)) {
    if (getResult())
      return emitOpError() << "on a buffer sums it in place and has no result";
    return success();
  }
  if (!getResult() || getResult().getType() != init)
    return emitOpError() << "on a tensor has one result of its type " << init;
  return success();
}

// On buffers the op reads and writes its buffer (the collective sums every
// rank's copy into it); on tensors it has no effect the IR could see: every
// rank runs the same steps, so CSE or DCE does the same on each.
void AllReduceOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (!isa<MemRefType>(getInit().getType()))
    return;
  effects.emplace_back(MemoryEffects::Read::get(), &getInitMutable());
  effects.emplace_back(MemoryEffects::Write::get(), &getInitMutable());
}

namespace {
/// In place: the result is `init`'s buffer, summed over the ranks.
struct AllReduceBufferization
    : bufferization::DstBufferizableOpInterfaceExternalModel<
          AllReduceBufferization, AllReduceOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const bufferization::AnalysisState &) const {
    return true;
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    auto reduce = cast<AllReduceOp>(op);
    if (reduce.hasPureBufferSemantics())
      return success();
    FailureOr<Value> buffer =
        bufferization::getBuffer(rewriter, reduce.getInit(), options, state);
    if (failed(buffer))
      return failure();
    rewriter.setInsertionPoint(op);
    auto onBuffer = AllReduceOp::create(rewriter, op->getLoc(), Type(),
                                        *buffer, reduce.getRanksAttr());
    onBuffer->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    bufferization::replaceOpWithBufferizedValues(rewriter, op, *buffer);
    return success();
  }
};
} // namespace

bool mlir::linformer::hasCollectiveSteps(Operation *scope) {
  return scope
      ->walk([](Operation *op) {
        return isa<AllReduceOp, AllGatherOp>(op) ? WalkResult::interrupt()
                                                 : WalkResult::advance();
      })
      .wasInterrupted();
}

//===----------------------------------------------------------------------===//
// AllGatherOp
//===----------------------------------------------------------------------===//

LogicalResult AllGatherOp::verify() {
  auto share = cast<ShapedType>(getShare().getType());
  auto init = cast<ShapedType>(getInit().getType());
  bool onBuffers = isa<MemRefType>(init);
  if (onBuffers != isa<MemRefType>(share))
    return emitOpError() << "gathers a tensor into a tensor or a buffer into "
                            "a buffer, not "
                         << share << " into " << init;
  if (onBuffers && getResult())
    return emitOpError() << "on buffers writes 'init' and has no result";
  if (!onBuffers && (!getResult() || getResult().getType() != init))
    return emitOpError() << "on tensors has one result of its type " << init;
  if (share.getElementType() != init.getElementType())
    return emitOpError() << "gathers " << share.getElementType()
                         << " elements into " << init.getElementType()
                         << " ones; both must be one type";
  int64_t axis = getAxis(), ranks = getRanks();
  if (!share.hasStaticShape() || !init.hasStaticShape() ||
      share.getRank() != init.getRank() || axis >= share.getRank())
    return emitOpError() << "needs static shapes of one rank with axis "
                         << axis << " among their dimensions, not "
                         << formatShape(share.getShape()) << " and "
                         << formatShape(init.getShape());
  for (int64_t i = 0; i < share.getRank(); ++i) {
    int64_t want = share.getDimSize(i) * (i == axis ? ranks : 1);
    if (init.getDimSize(i) != want)
      return emitOpError()
             << "'init' must be " << formatShape(share.getShape())
             << " with axis " << axis << " " << ranks
             << " times as long (one block a rank), but is "
             << formatShape(init.getShape());
  }
  return success();
}

int64_t AllGatherOp::getBlocks() {
  auto share = cast<ShapedType>(getShare().getType());
  int64_t blocks = 1;
  for (int64_t i = 0; i < int64_t(getAxis()); ++i)
    blocks *= share.getDimSize(i);
  return blocks;
}

void AllGatherOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (!isa<MemRefType>(getInit().getType()))
    return;
  effects.emplace_back(MemoryEffects::Read::get(), &getShareMutable());
  effects.emplace_back(MemoryEffects::Write::get(), &getInitMutable());
}

namespace {
/// Into `init`'s buffer, which it overwrites whole (never read).
struct AllGatherBufferization
    : bufferization::DstBufferizableOpInterfaceExternalModel<
          AllGatherBufferization, AllGatherOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const bufferization::AnalysisState &) const {
    return &operand == &cast<AllGatherOp>(op).getShareMutable();
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    auto gather = cast<AllGatherOp>(op);
    if (gather.hasPureBufferSemantics())
      return success();
    FailureOr<Value> share =
        bufferization::getBuffer(rewriter, gather.getShare(), options, state);
    FailureOr<Value> init =
        bufferization::getBuffer(rewriter, gather.getInit(), options, state);
    if (failed(share) || failed(init))
      return failure();
    rewriter.setInsertionPoint(op);
    auto onBuffers = AllGatherOp::create(rewriter, op->getLoc(), Type(),
                                         *share, *init, gather.getRanksAttr(),
                                         gather.getAxisAttr());
    onBuffers->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    bufferization::replaceOpWithBufferizedValues(rewriter, op, *init);
    return success();
  }
};
} // namespace

void mlir::linformer::detail::attachAttentionCoreBufferization(
    MLIRContext &context) {
  AttentionCoreOp::attachInterface<AttentionCoreBufferization>(context);
  AllReduceOp::attachInterface<AllReduceBufferization>(context);
  AllGatherOp::attachInterface<AllGatherBufferization>(context);
}
