//===- ModelBuilder.cpp - model.json to a Linformer encoder in IR ---------===//
//
// See ModelBuilder.h. The non-attention parts are written as linalg ops
// whose last op per block is marked as a kernel root, so that the CPU
// pipeline tiles them like the attention parts: LayerNorm (with the residual
// add before it) is one kernel over row tiles, each FFN matmul another, and
// GELU is fused into the second matmul's tiles.
//
//===----------------------------------------------------------------------===//

#include "compiler/Model/ModelBuilder.h"

#include "compiler/Conversion/LinalgBuilders.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::linformer;
namespace lf = ::linformer;

namespace {

class EncoderBuilder {
public:
  EncoderBuilder(OpBuilder &b, Location loc, const lf::ModelConfig &c)
      : b(b), loc(loc), c(c), et(b.getF32Type()) {}

  /// x + y, elementwise over [b, n, dm] (not a root: fused into its user).
  Value add(Value x, Value y) {
    return buildGeneric(b, loc, 3, {x, y}, {DimList{0, 1, 2}, DimList{0, 1, 2}},
                        emptyTensor(b, loc, shape(), et), DimList{0, 1, 2}, {},
                        [](OpBuilder &nb, Location l, ValueRange a) {
                          return arith::AddFOp::create(nb, l, a[0], a[1])
                              .getResult();
                        });
  }

  /// LayerNorm over d_model, one kernel (mean and variance fused per tile).
  Value layerNorm(Value x, Value gamma, Value beta) {
    int64_t dm = c.dModel;
    SmallVector<int64_t> rowShape = {c.batch, c.maxSeqLen};
    Value zeros = filledTensor(b, loc, rowShape, et, b.getZeroAttr(et));
    auto inv = [&](OpBuilder &nb, Location l) {
      return arith::ConstantOp::create(
          nb, l, nb.getFloatAttr(et, 1.0 / static_cast<double>(dm)));
    };
    // mean[b, i] = sum_c x / dm; loops (b, i, c).
    Value sum = buildGeneric(b, loc, 3, x, {DimList{0, 1, 2}}, zeros,
                             DimList{0, 1}, {2},
                             [](OpBuilder &nb, Location l, ValueRange a) {
                               return arith::AddFOp::create(nb, l, a[1], a[0])
                                   .getResult();
                             });
    Value mean = buildGeneric(b, loc, 2, sum, {DimList{0, 1}},
                              emptyTensor(b, loc, rowShape, et), DimList{0, 1},
                              {}, [&](OpBuilder &nb, Location l, ValueRange a) {
                                return arith::MulFOp::create(nb, l, a[0],
                                                             inv(nb, l))
                                    .getResult();
                              });
    // var[b, i] = sum_c (x - mean)^2 / dm.
    Value sq = buildGeneric(
        b, loc, 3, {x, mean}, {DimList{0, 1, 2}, DimList{0, 1}}, zeros,
        DimList{0, 1}, {2}, [](OpBuilder &nb, Location l, ValueRange a) {
          Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
          Value d2 = arith::MulFOp::create(nb, l, d, d);
          return arith::AddFOp::create(nb, l, a[2], d2).getResult();
        });
    double eps = c.layerNormEps;
    Value rstd = buildGeneric(
        b, loc, 2, sq, {DimList{0, 1}}, emptyTensor(b, loc, rowShape, et),
        DimList{0, 1}, {}, [&](OpBuilder &nb, Location l, ValueRange a) {
          Value var = arith::MulFOp::create(nb, l, a[0], inv(nb, l));
          Value e = arith::ConstantOp::create(nb, l, nb.getFloatAttr(et, eps));
          Value ve = arith::AddFOp::create(nb, l, var, e);
          return math::RsqrtOp::create(nb, l, ve).getResult();
        });
    return markRoot(buildGeneric(
        b, loc, 3, {x, mean, rstd, gamma, beta},
        {DimList{0, 1, 2}, DimList{0, 1}, DimList{0, 1}, DimList{2},
         DimList{2}},
        emptyTensor(b, loc, shape(), et), DimList{0, 1, 2}, {},
        [](OpBuilder &nb, Location l, ValueRange a) {
          Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
          Value n = arith::MulFOp::create(nb, l, d, a[2]);
          Value g = arith::MulFOp::create(nb, l, n, a[3]);
          return arith::AddFOp::create(nb, l, g, a[4]).getResult();
        }));
  }

  /// x [b, n, in] * W [in, out] + bias (if any); loops (b, i, m, o),
  /// reduction m.
  Value linear(Value x, Value w, Value bias, int64_t in, int64_t out) {
    (void)in;
    SmallVector<int64_t> outShape = {c.batch, c.maxSeqLen, out};
    Value init =
        bias ? buildGeneric(b, loc, 3, bias, {DimList{2}},
                            emptyTensor(b, loc, outShape, et),
                            DimList{0, 1, 2}, {},
                            [](OpBuilder &, Location, ValueRange a) {
                              return a[0];
                            })
             : filledTensor(b, loc, outShape, et, b.getZeroAttr(et));
    return markRoot(buildContraction(b, loc, 4, x, DimList{0, 1, 2}, w,
                                     DimList{2, 3}, init, DimList{0, 1, 3},
                                     {2}));
  }

  /// GELU (erf form), elementwise; fused into the consumer's tiles.
  Value gelu(Value x) {
    auto type = cast<RankedTensorType>(x.getType());
    return buildGeneric(
        b, loc, 3, x, {DimList{0, 1, 2}},
        emptyTensor(b, loc, type.getShape(), et), DimList{0, 1, 2}, {},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          Value half = arith::ConstantOp::create(nb, l, nb.getFloatAttr(et, 0.5));
          Value one = arith::ConstantOp::create(nb, l, nb.getFloatAttr(et, 1.0));
          Value invSqrt2 = arith::ConstantOp::create(
              nb, l, nb.getFloatAttr(et, 1.0 / std::sqrt(2.0)));
          Value s = arith::MulFOp::create(nb, l, a[0], invSqrt2);
          Value erf = math::ErfOp::create(nb, l, s);
          Value p = arith::AddFOp::create(nb, l, one, erf);
          Value hx = arith::MulFOp::create(nb, l, half, a[0]);
          return arith::MulFOp::create(nb, l, hx, p).getResult();
        });
  }

  SmallVector<int64_t> shape() const {
    return {c.batch, c.maxSeqLen, c.dModel};
  }

private:
  OpBuilder &b;
  Location loc;
  const lf::ModelConfig &c;
  Type et;
};

RankedTensorType f32Tensor(ArrayRef<int64_t> shape, MLIRContext *ctx) {
  return RankedTensorType::get(shape, Float32Type::get(ctx));
}

/// The model's storage element type (f32, f16, bf16).
Type storageType(const lf::ModelConfig &c, MLIRContext *ctx) {
  switch (lf::storageType(c)) {
  case lf::DType::F16:
    return Float16Type::get(ctx);
  case lf::DType::BF16:
    return BFloat16Type::get(ctx);
  default:
    return Float32Type::get(ctx);
  }
}

/// `v` converted elementwise to element type `to` (extf or truncf, round
/// to nearest even); `v` itself when it has that type already.
Value convert(OpBuilder &b, Location loc, Value v, Type to) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == to)
    return v;
  bool widen = to.getIntOrFloatBitWidth() >
               type.getElementType().getIntOrFloatBitWidth();
  unsigned rank = type.getRank();
  DimList all;
  for (unsigned d = 0; d < rank; ++d)
    all.push_back(d);
  return buildGeneric(b, loc, rank, v, {all},
                      emptyTensor(b, loc, type.getShape(), to), all, {},
                      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        if (widen)
                          return arith::ExtFOp::create(nb, l, to, a[0]);
                        return arith::TruncFOp::create(nb, l, to, a[0]);
                      });
}

} // namespace

/// Whether `name` is the E or F weight of some layer.
static bool isProjectionWeight(const lf::ModelConfig &c,
                               const std::string &name) {
  for (int64_t i = 0; i < c.layers; ++i)
    for (bool value : {false, true})
      if (name == lf::projectionWeightName(c, i, value))
        return true;
  return false;
}

OwningOpRef<ModuleOp>
mlir::linformer::buildEncoderModule(MLIRContext *ctx,
                                    const lf::ModelConfig &model,
                                    EncoderSignature &sig) {
  // A sequence-parallel model is built for one rank: its n / P tokens and
  // its n / P columns of E and F (the entry marks those arguments, so that
  // the runtime takes the rank's columns of the whole weight).
  lf::ModelConfig c = model;
  c.maxSeqLen = model.rankSeqLen();
  ctx->loadDialect<LinformerDialect, func::FuncDialect, linalg::LinalgDialect,
                   arith::ArithDialect, math::MathDialect,
                   tensor::TensorDialect>();
  Location loc = FileLineColLoc::get(ctx, "model.json", 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module->getBody());

  int64_t batch = c.batch, n = c.maxSeqLen, dm = c.dModel;
  SmallVector<Type> argTypes;
  sig = EncoderSignature();
  // Weights, input and output in the storage type; the layers compute in
  // f32 on values extended once at the entry (each extension is fused into
  // the kernels that read it) and round the output once at the end.
  Type st = storageType(c, ctx);
  auto xType = f32Tensor({batch, n, dm}, ctx);
  auto ioType = RankedTensorType::get({batch, n, dm}, st);
  argTypes.push_back(ioType);
  sig.argNames.push_back("x");
  if (c.padding == lf::PaddingInput::Lengths) {
    sig.paddingArg = argTypes.size();
    argTypes.push_back(RankedTensorType::get({batch}, b.getI32Type()));
    sig.argNames.push_back("lengths");
  } else if (c.padding == lf::PaddingInput::Mask) {
    sig.paddingArg = argTypes.size();
    argTypes.push_back(RankedTensorType::get({batch, n}, b.getI8Type()));
    sig.argNames.push_back("mask");
  }
  // The whole model's weights, of which a sequence-parallel rank takes its
  // n / P columns of a learned E and F (a convolution's kernel spans a
  // window, which no rank splits).
  std::vector<lf::WeightSpec> weights = lf::modelWeights(model);
  auto splitAcrossRanks = [&](const lf::WeightSpec &w) {
    return c.sequenceParallel > 1 &&
           c.projection == lf::ref::ProjectionKind::Learned &&
           isProjectionWeight(c, w.name);
  };
  for (lf::WeightSpec &w : weights)
    if (splitAcrossRanks(w))
      w.shape.back() /= c.sequenceParallel;
  size_t firstWeight = argTypes.size();
  for (const lf::WeightSpec &w : weights) {
    argTypes.push_back(RankedTensorType::get(w.shape, st));
    sig.argNames.push_back(w.name);
  }
  auto fn = func::FuncOp::create(b, loc, sig.entry,
                                 b.getFunctionType(argTypes, {ioType}));
  // What the length-aware code generation starts from: x holds tokens,
  // lengths says how many are real.
  fn.setArgAttr(0, kSequenceArgAttrName, b.getUnitAttr());
  if (c.padding == lf::PaddingInput::Lengths)
    fn.setArgAttr(sig.paddingArg, kLengthsArgAttrName, b.getUnitAttr());
  IntegerAttr ranks;
  if (c.sequenceParallel > 1) {
    ranks = b.getI64IntegerAttr(c.sequenceParallel);
    for (size_t i = 0; i < weights.size(); ++i)
      if (splitAcrossRanks(weights[i]))
        fn.setArgAttr(firstWeight + i, kSequenceSplitArgAttrName, ranks);
  }
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  std::map<std::string, Value> byName;
  Type f32 = b.getF32Type();
  for (size_t i = 0; i < weights.size(); ++i)
    byName[weights[i].name] =
        convert(b, loc, body->getArgument(firstWeight + i), f32);
  Value lengths, mask;
  if (c.padding == lf::PaddingInput::Lengths)
    lengths = body->getArgument(sig.paddingArg);
  else if (c.padding == lf::PaddingInput::Mask)
    mask = body->getArgument(sig.paddingArg);

  EncoderBuilder eb(b, loc, c);
  bool hasParams = c.projection == lf::ref::ProjectionKind::Learned ||
                   c.projection == lf::ref::ProjectionKind::Conv;
  Value h = convert(b, loc, body->getArgument(0), f32);
  for (int64_t i = 0; i < c.layers; ++i) {
    auto w = [&](const char *leaf) {
      return byName.at(lf::layerWeightName(i, leaf));
    };
    // Biases are absent with "bias": false.
    auto bias = [&](const char *leaf) {
      return c.bias ? w(leaf) : Value();
    };
    Location layerLoc =
        NameLoc::get(b.getStringAttr("layers." + std::to_string(i)), loc);
    Value e, f;
    if (hasParams) {
      e = byName.at(lf::projectionWeightName(c, i, false));
      if (!c.shareKV)
        f = byName.at(lf::projectionWeightName(c, i, true));
    }
    Value attnIn =
        c.norm == lf::NormPlacement::Pre && !c.attentionOnly()
            ? eb.layerNorm(h, w("ln1.gamma"), w("ln1.beta"))
            : h;
    auto attn = AttentionOp::create(
        b, layerLoc, xType, attnIn, w("attn.wq"), w("attn.wk"), w("attn.wv"),
        w("attn.wo"), bias("attn.bq"), bias("attn.bk"), bias("attn.bv"),
        bias("attn.bo"),
        e, f, lengths, mask, b.getI64IntegerAttr(c.heads),
        b.getI64IntegerAttr(c.k[i]),
        ProjectionKindAttr::get(ctx, static_cast<ProjectionKind>(c.projection)),
        SharingAttr::get(ctx, c.shareHeads, c.shareKV, c.shareLayers),
        BoolAttr(), ranks);
    if (c.attentionOnly()) {
      h = attn;
      continue;
    }
    Value sum = eb.add(h, attn);
    if (c.norm == lf::NormPlacement::Post)
      h = eb.layerNorm(sum, w("ln1.gamma"), w("ln1.beta"));
    else
      h = markRoot(sum);
    Value ffnIn = c.norm == lf::NormPlacement::Pre
                      ? eb.layerNorm(h, w("ln2.gamma"), w("ln2.beta"))
                      : h;
    Value mid = eb.linear(ffnIn, w("ffn.w1"), bias("ffn.b1"), dm, c.ffnDim);
    Value ffnOut = eb.linear(eb.gelu(mid), w("ffn.w2"), bias("ffn.b2"),
                             c.ffnDim, dm);
    Value sum2 = eb.add(h, ffnOut);
    h = c.norm == lf::NormPlacement::Post
            ? eb.layerNorm(sum2, w("ln2.gamma"), w("ln2.beta"))
            : markRoot(sum2);
  }
  // The output rounds once, in a kernel of its own.
  if (st != f32)
    h = markRoot(convert(b, loc, h, st));
  func::ReturnOp::create(b, loc, h);
  return module;
}
