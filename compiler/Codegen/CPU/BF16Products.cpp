//===- BF16Products.cpp - contractions multiply bf16, accumulate f32 ------===//
//
// Every kernel-root contraction of f32 values (`acc + a * b`) multiplies
// factors rounded to bf16 and sums in f32: the operand a register tile
// streams is read as bf16 (its panels half the bytes), the one it
// broadcasts as f32 values rounded to bf16; see LinformerBF16ProductsPass
// in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/TileUtils.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CPU/Passes.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERBF16PRODUCTSPASS
#include "compiler/Codegen/CPU/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

/// The tensor of the pairs' type (bf16, or f16 with the pass's f16) that
/// `v` extends to f32 element by element, if any: a 16-bit model's weight
/// or input as ModelBuilder's entry extends it.
Value extendedFrom(Value v, Type pairType) {
  Value source = convertedFrom(v);
  if (!source || getElementTypeOrSelf(source.getType()) != pairType)
    return {};
  return source;
}

/// Whether `op` is `acc + a * b` on f32 scalars: two inputs, one init, at
/// least one reduction loop, the body a `mulf` of the two inputs and an
/// `addf` of it and the accumulator.
bool isF32Contraction(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 || op->getNumResults() != 1)
    return false;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 3 ||
      llvm::any_of(body.getArgumentTypes(),
                   [](Type t) { return !t.isF32(); }))
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&body.front());
  auto add = dyn_cast<arith::AddFOp>(mul ? mul->getNextNode() : nullptr);
  if (!mul || !add || body.getTerminator()->getOperand(0) != add.getResult())
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1),
        acc = body.getArgument(2);
  bool factors = (mul.getLhs() == a && mul.getRhs() == b) ||
                 (mul.getLhs() == b && mul.getRhs() == a);
  bool sum = (add.getLhs() == acc && add.getRhs() == mul.getResult()) ||
             (add.getRhs() == acc && add.getLhs() == mul.getResult());
  return factors && sum;
}

/// An elementwise generic of `v` (f32) whose body `build` makes, right
/// after `v` is defined, into a new tensor of element type `element`.
Value elementwise(IRRewriter &rewriter, Value v, Type element,
                  function_ref<Value(OpBuilder &, Location, Value)> build) {
  if (Operation *def = v.getDefiningOp())
    rewriter.setInsertionPointAfter(def);
  else
    rewriter.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
  auto type = cast<RankedTensorType>(v.getType());
  unsigned rank = type.getRank();
  DimList all;
  for (unsigned d = 0; d < rank; ++d)
    all.push_back(d);
  return buildGeneric(rewriter, v.getLoc(), rank, v, {all},
                      emptyTensor(rewriter, v.getLoc(), type.getShape(),
                                  element),
                      all, {},
                      [&](OpBuilder &b, Location loc, ValueRange args) {
                        return build(b, loc, args[0]);
                      });
}

/// When `v` is a reshape (`tensor.expand_shape` or `collapse_shape`): the
/// same reshape of `convert(source)`, after the original (`v` itself when
/// `convert` keeps the source). Null for anything else.
Value throughReshape(IRRewriter &rewriter, Value v,
                     function_ref<Value(Value)> convert) {
  Operation *op = v.getDefiningOp();
  if (!isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
    return {};
  Value src = op->getOperand(0);
  Value converted = convert(src);
  if (converted == src)
    return v;
  rewriter.setInsertionPointAfter(op);
  auto type = cast<RankedTensorType>(v.getType())
                  .clone(getElementTypeOrSelf(converted.getType()));
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return tensor::ExpandShapeOp::create(rewriter, op->getLoc(), type,
                                         converted,
                                         expand.getReassociationIndices());
  return tensor::CollapseShapeOp::create(
      rewriter, op->getLoc(), type, converted,
      cast<tensor::CollapseShapeOp>(op).getReassociationIndices());
}

/// Whether `x`, an f32 value in the body of `op` (or captured by it), holds
/// a value of `pairType` (bf16 or f16) whatever the inputs: an input
/// extended from it, a constant it represents exactly, or a select,
/// negation or absolute value of such.
bool holdsPairValue(linalg::GenericOp op, Value x, Type pairType) {
  if (auto arg = dyn_cast<BlockArgument>(x)) {
    if (arg.getOwner() != &op.getRegion().front() ||
        arg.getArgNumber() >= op.getNumDpsInputs())
      return false;
    return arg.getType() == pairType ||
           extendedFrom(op.getDpsInputOperand(arg.getArgNumber())->get(),
                        pairType);
  }
  Operation *def = x.getDefiningOp();
  if (auto constant = dyn_cast_or_null<arith::ConstantFloatOp>(def)) {
    APFloat value = constant.value();
    bool lost = false;
    value.convert(cast<FloatType>(pairType).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &lost);
    return !lost;
  }
  if (auto ext = dyn_cast_or_null<arith::ExtFOp>(def))
    return ext.getIn().getType() == pairType;
  if (auto select = dyn_cast_or_null<arith::SelectOp>(def))
    return holdsPairValue(op, select.getTrueValue(), pairType) &&
           holdsPairValue(op, select.getFalseValue(), pairType);
  if (isa_and_nonnull<arith::NegFOp, math::AbsFOp>(def))
    return holdsPairValue(op, def->getOperand(0), pairType);
  return false;
}

/// Whether `v` is the result of an elementwise generic (a kernel root, E
/// masked at the lengths, most often) that writes f32 values `pairType`
/// holds exactly (holdsPairValue): rounding them loses nothing.
bool yieldsPairValues(Value v, Type pairType) {
  auto op = v.getDefiningOp<linalg::GenericOp>();
  if (!op || op->getNumResults() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !getElementTypeOrSelf(v.getType()).isF32() ||
      op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
    return false;
  return holdsPairValue(
      op, op.getRegion().front().getTerminator()->getOperand(0), pairType);
}

struct BF16ProductsPass
    : mlir::linformer::impl::LinformerBF16ProductsPassBase<BF16ProductsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FailureOr<BF16EngineChoice> engine =
        bf16EngineFor(func, "dot", dot, cpuTargetOf(func), f16);
    if (failed(engine))
      return signalPassFailure();
    pairType = f16 ? Type(Float16Type::get(&getContext()))
                   : Type(BFloat16Type::get(&getContext()));
    pairs = engine->engine != BF16Engine::FMA;
    asBF16.clear();
    rounded.clear();
    SmallVector<linalg::GenericOp> contractions;
    func.walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kRootAttrName) && isF32Contraction(op))
        contractions.push_back(op);
    });
    // An attention core is lowered after workgroup tiling: with pairs, its
    // score contraction (`K Q^T`, the keys broadcast with their channels
    // innermost) and its weighted sum (`P V`, the probabilities transposed
    // back so that a row's pair along the slots is adjacent) take bf16
    // pairs too, its lowering told by the mark. The softmax stays f32, and
    // so does `P V` where the slots stop at a length (a pair could
    // straddle it).
    std::string engineName = bf16EngineName(*engine);
    // With f16, f16 pairs (linformer.f16_pairs).
    if (pairs)
      func.walk([&](AttentionCoreOp core) {
        if (getElementTypeOrSelf(core.getQ().getType()).isF32()) {
          core->setAttr(kBF16ScoresAttrName, UnitAttr::get(&getContext()));
          if (f16)
            core->setAttr(kF16PairsAttrName, UnitAttr::get(&getContext()));
          core->setAttr(kBF16EngineAttrName,
                        StringAttr::get(&getContext(), engineName));
        }
      });
    IRRewriter rewriter(&getContext());
    dead.clear();
    for (linalg::GenericOp op : contractions) {
      // The streamed operand (a weight's panels, mostly) as bf16: its
      // vectors are loaded and extended in the register tile. The
      // broadcast one as f32 values that are bf16's: each of its elements
      // is broadcast to a register as it is, with no extension per step.
      // (A contraction no register tile spans rounds both as f32.)
      // With pairs (bf16 dot products), both as bf16: the register tile
      // broadcasts each row's pair of factors as one 32-bit element.
      std::optional<RegisterTileDims> dims = registerTileDims(op);
      OpOperand *streamed = dims ? streamedOperand(op, *dims) : nullptr;
      bool paired = pairs && pairedReductionDim(op);
      SmallVector<Value> inputs;
      for (OpOperand *in : op.getDpsInputOperands())
        inputs.push_back(in == streamed || paired
                             ? toBF16(rewriter, in->get())
                             : toRounded(rewriter, in->get()));
      rewriter.setInsertionPoint(op);
      auto narrow = linalg::GenericOp::create(
          rewriter, op.getLoc(), op->getResultTypes(), inputs,
          op.getDpsInits(), op.getIndexingMapsArray(),
          op.getIteratorTypesArray(),
          [&](OpBuilder &b, Location loc, ValueRange args) {
            // The original body, bf16 factors extended: bf16 times bf16 is
            // exact in f32, so only the sums round.
            Block &body = op.getRegion().front();
            IRMapping map;
            for (unsigned i = 0; i < 3; ++i) {
              Value arg = args[i];
              if (arg.getType() == pairType)
                arg = arith::ExtFOp::create(b, loc, b.getF32Type(), arg);
              map.map(body.getArgument(i), arg);
            }
            for (Operation &inner : body.getOperations())
              b.clone(inner, map);
          });
      narrow->setDiscardableAttrs(op->getDiscardableAttrDictionary());
      // The unit the schedule records: pairs on the engine, else FMAs on
      // extended factors. (E X, stopped at the lengths, takes AMX tiles
      // for its whole 32 tokens and dot products for the pairs after.)
      std::string name = "fma";
      if (paired)
        name = engineName;
      narrow->setAttr(kBF16EngineAttrName,
                      StringAttr::get(&getContext(), name));
      rewriter.replaceOp(op, narrow->getResults());
    }
    // A paired core's K' and V', which kernels of their own compute (the
    // projections), are rounded there, once, as those kernels' bf16
    // epilogues (linformer-cpu-tile-and-fuse), and the core reads them
    // extended, which its lowering takes as the bf16 values themselves:
    // rounded per workgroup instead, they were rounded again by every query
    // tile of their head. Not where the slots stop at a length (there `P V`
    // stays f32, V' unrounded, and the scores' register tiling lost its loop
    // over the slots when K' was read as it is: random-model soak --seed
    // 20261241 case 161). Q, which each query tile rounds once anyway, stays
    // f32 for dot products: rounded by its projection it gained nothing
    // measurable on Zen 4, and its bf16 tile's copies on AVX2 made LLVM
    // call __truncsfbf2, which Debian 12's libgcc lacks (--seed 20261243
    // cases 120, 264). On AMX tiles its projection rounds it too: the
    // core's query tiles then read half the bytes (its first touch of Q
    // took 10-18% of the transposed core on a Xeon with AMX; four layers'
    // cores 13.8-14.0 -> 13.6-13.8 ms, bit for bit the same results), and
    // the untransposed core (S = Q K^T) reads the bf16 tile in place.
    if (pairs)
      func.walk([&](AttentionCoreOp core) {
        if (!core->hasAttr(kBF16ScoresAttrName) ||
            core->hasAttr(kTokenBoundAttrName))
          return;
        SmallVector<OpOperand *, 3> factors = {&core.getKeyMutable(),
                                               &core.getValueMutable()};
        if (engine->engine == BF16Engine::AMX)
          factors.push_back(&core.getQMutable());
        for (OpOperand *factor : factors) {
          Operation *def = factor->get().getDefiningOp();
          if (!def || !def->hasAttr(kRootAttrName) ||
              !factor->get().hasOneUse())
            continue;
          Value bf16 = toBF16(rewriter, factor->get());
          Type f32 = rewriter.getF32Type();
          Value extended = elementwise(
              rewriter, bf16, f32,
              [&](OpBuilder &b, Location loc, Value x) -> Value {
                return arith::ExtFOp::create(b, loc, f32, x);
              });
          rewriter.modifyOpInPlace(core, [&] { factor->set(extended); });
        }
        if (engine->engine == BF16Engine::AMX)
          transposeKeysOnce(rewriter, core);
      });
    // The f32 ops whose bf16 twins replaced them (erased only now, so that
    // no value the maps hold is freed while they are in use).
    for (Operation *op : dead)
      rewriter.eraseOp(op);
  }

  /// On AMX tiles the core's lowering computes S = Q K^T (its scores'
  /// rows the queries, linformer-lower-to-linalg's CoreLowering), whose
  /// tile products read K^T: transposed once, by a kernel of its own, from
  /// the bf16 K' its projection writes, instead of by every query tile of
  /// the head (32 of them in the default encoder, 12% of the core on a
  /// Xeon with AMX). The core reads the transpose transposed back, which
  /// its lowering takes as K^T itself. Only where the lowering takes that
  /// form (isUntransposedAMXCoreShape; the caller leaves out cores with a
  /// slot bound), and where the core reads K' extended from bf16 (rounded
  /// by its projection, above).
  void transposeKeysOnce(IRRewriter &rewriter, AttentionCoreOp core) {
    auto qType = cast<RankedTensorType>(core.getQ().getType());
    auto kType = cast<RankedTensorType>(core.getKey().getType());
    if (!qType.hasStaticShape() || !kType.hasStaticShape() ||
        kType.getRank() != 4 || qType.getRank() != 4 ||
        !isUntransposedAMXCoreShape(kType.getDimSize(2),
                                    qType.getDimSize(2)) ||
        !core.getKey().hasOneUse())
      return;
    Value keys = extendedFrom(core.getKey(), pairType);
    if (!keys || !keys.getDefiningOp())
      return;
    Location loc = core.getLoc();
    Type f32 = rewriter.getF32Type();
    ArrayRef<int64_t> shape = kType.getShape();
    SmallVector<int64_t> transposedShape = {shape[0], shape[1], shape[3],
                                            shape[2]};
    rewriter.setInsertionPointAfter(keys.getDefiningOp());
    DimList all = {0, 1, 2, 3};
    Value keysT = buildGeneric(
        rewriter, loc, 4, keys, {DimList{0, 1, 3, 2}},
        emptyTensor(rewriter, loc, transposedShape, pairType), all, {},
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    keysT.getDefiningOp()->setAttr(kRootAttrName, rewriter.getUnitAttr());
    Value extended = elementwise(
        rewriter, keysT, f32,
        [&](OpBuilder &b, Location l, Value x) -> Value {
          return arith::ExtFOp::create(b, l, f32, x);
        });
    rewriter.setInsertionPoint(core);
    Value back = linalg::TransposeOp::create(
                     rewriter, loc, extended,
                     emptyTensor(rewriter, loc, shape, f32),
                     ArrayRef<int64_t>{0, 1, 3, 2})
                     .getResult()[0];
    rewriter.modifyOpInPlace(core,
                             [&] { core.getKeyMutable().set(back); });
  }

  /// `v`, whose values the pairs' type holds exactly (yieldsPairValues),
  /// written in that type (bf16, or f16 with the option) by
  /// a twin of the op that writes it (its body, rounded at the end: no
  /// change of value; its marks, so a root stays a kernel of its own);
  /// `v`'s readers read the twin extended, fused into them. E masked at
  /// the lengths is then written once as bf16, and each `E X` reads it,
  /// instead of reading f32 and rounding all of E in every workgroup.
  Value bf16Twin(IRRewriter &rewriter, Value v) {
    auto op = v.getDefiningOp<linalg::GenericOp>();
    Type f32 = rewriter.getF32Type();
    rewriter.setInsertionPointAfter(op);
    auto type = cast<RankedTensorType>(v.getType());
    auto twin = linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{type.clone(pairType)},
        op.getDpsInputs(),
        ValueRange{
            emptyTensor(rewriter, op.getLoc(), type.getShape(), pairType)},
        op.getIndexingMapsArray(), op.getIteratorTypesArray(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Block &body = op.getRegion().front();
          IRMapping map;
          for (auto [from, to] : llvm::zip(body.getArguments(), args))
            map.map(from, to);
          for (Operation &inner : body.without_terminator())
            b.clone(inner, map);
          Value yielded =
              map.lookup(body.getTerminator()->getOperand(0));
          linalg::YieldOp::create(
              b, loc, ValueRange{arith::TruncFOp::create(b, loc, pairType,
                                                         yielded)});
        });
    twin->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    Value extended = elementwise(
        rewriter, twin->getResult(0), f32,
        [&](OpBuilder &b, Location loc, Value x) -> Value {
          return arith::ExtFOp::create(b, loc, f32, x);
        });
    rewriter.replaceAllUsesWith(v, extended);
    dead.push_back(op);
    asBF16[extended] = twin->getResult(0);
    rounded[extended] = extended;
    return twin->getResult(0);
  }

  /// `v` (f32) as a bf16 tensor: the bf16 value it was extended from, a
  /// reshape of one, or `v` rounded to nearest even by an elementwise
  /// generic of its own (one per value, shared by every contraction that
  /// reads it; tiling fuses it into them, the weight packing into the
  /// panels it makes once).
  Value toBF16(IRRewriter &rewriter, Value v) {
    if (Value known = asBF16.lookup(v))
      return known;
    Value result;
    if (Value source = extendedFrom(v, pairType)) {
      result = source;
    } else if (Value reshaped = throughReshape(rewriter, v, [&](Value src) {
                 return toBF16(rewriter, src);
               })) {
      result = reshaped;
    } else if (yieldsPairValues(v, pairType)) {
      return bf16Twin(rewriter, v);
    } else {
      result = elementwise(rewriter, v, pairType,
                           [&](OpBuilder &b, Location loc, Value x) -> Value {
                             return arith::TruncFOp::create(b, loc, pairType,
                                                            x);
                           });
    }
    asBF16[v] = result;
    return result;
  }

  /// `v` (f32) with every element rounded to bf16 and kept in f32: `v`
  /// itself when it was extended from bf16 (or is a reshape of such a
  /// value), else an elementwise generic that rounds and extends back (one
  /// per value, shared; fused into its readers by tiling).
  Value toRounded(IRRewriter &rewriter, Value v) {
    if (Value known = rounded.lookup(v))
      return known;
    Value result;
    if (extendedFrom(v, pairType) || yieldsPairValues(v, pairType)) {
      result = v;
    } else if (Value reshaped = throughReshape(rewriter, v, [&](Value src) {
                 return toRounded(rewriter, src);
               })) {
      result = reshaped;
    } else {
      Type f32 = rewriter.getF32Type();
      result = elementwise(rewriter, v, f32,
                           [&](OpBuilder &b, Location loc, Value x) -> Value {
                             Value r =
                                 arith::TruncFOp::create(b, loc, pairType, x);
                             return arith::ExtFOp::create(b, loc, f32, r);
                           });
    }
    rounded[v] = result;
    return result;
  }

  DenseMap<Value, Value> asBF16, rounded;
  SmallVector<Operation *> dead;
  bool pairs = false;
  /// bf16, or f16 with the option.
  Type pairType;
};
} // namespace
