//===- ExpandBF16.cpp - bf16 conversions without a runtime helper ---------===//
//
// Expands f32 <-> bf16 conversions into integer arithmetic for CPUs that
// cannot convert in hardware, so that generated kernels never call a
// compiler runtime helper the linking or the running machine may lack
// (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/Passes.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "compiler/Schedule/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUEXPANDBF16PASS
#define GEN_PASS_DEF_LINFORMERCPUSTOREBF16BITSPASS
#include "compiler/Codegen/CPU/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {
/// bf16 -> f32 as what it is, a shift: the bf16's bits are the f32's upper
/// half. No x86 instruction does more (LLVM lowers `fpext` from bfloat to
/// the same shift), but a `<N x bfloat>` value that LLVM's own passes leave
/// live across blocks crashes its instruction selection on AVX512_BF16
/// targets for N = 9, 17, 25, ... ("Do not know how to soft promote this
/// operator's operand", LLVM 22); loaded as i16 it never exists.
struct ExtendBF16ByShift : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type in = op.getIn().getType();
    if (!getElementTypeOrSelf(in).isBF16() ||
        !getElementTypeOrSelf(op.getType()).isF32())
      return rewriter.notifyMatchFailure(op, "not bf16 to f32");
    auto like = [&](Type element) -> Type {
      if (auto shaped = dyn_cast<ShapedType>(in))
        return shaped.clone(element);
      return element;
    };
    Location loc = op.getLoc();
    Type i32 = like(rewriter.getI32Type());
    Value bits = arith::BitcastOp::create(rewriter, loc,
                                          like(rewriter.getI16Type()),
                                          op.getIn());
    Value wide = arith::ExtUIOp::create(rewriter, loc, i32, bits);
    Value upper = arith::ShLIOp::create(
        rewriter, loc, wide, createScalarOrSplatConstant(rewriter, loc, i32, 16));
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), upper);
    return success();
  }
};

struct ExpandBF16Pass
    : mlir::linformer::impl::LinformerCPUExpandBF16PassBase<ExpandBF16Pass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    ::linformer::schedule::CPUTarget target = cpuTargetOf(module);
    RewritePatternSet patterns(&getContext());
    bool native = ::linformer::schedule::convertsBF16Natively(target);
    if (native)
      patterns.add<ExtendBF16ByShift>(&getContext());
    else
      arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
    if (!native)
      return;
    // Even with hardware conversion, a rounding to a bf16 vector whose
    // length is not a power of two becomes integer arithmetic: LLVM 22's
    // own passes forward such a vector's stores into shuffles of bfloat
    // (a register tile's pairs of 12-wide rows), and instruction
    // selection for AVX512_BF16 has no pattern for some of them ("Cannot
    // select: v16bf16 = X86ISD::VPERM2X128": a d_model-12 model with a
    // random schedule file, --seed 20261269 case 99); as 16-bit integers
    // no bfloat value is left to shuffle. Rows whose length is a power of
    // two (every default model's tiles) keep the one instruction, however
    // many rows: an n-D vector reaches LLVM as an array of its rows (a
    // register tile of 14 rows of 32, 448 elements, is 14 conversions of
    // 32; expanded, each took six integer instructions more).
    SmallVector<Operation *> oddLengths;
    module.walk([&](arith::TruncFOp op) {
      auto type = dyn_cast<VectorType>(op.getType());
      if (type && type.getElementType().isBF16() &&
          getElementTypeOrSelf(op.getIn().getType()).isF32() &&
          !llvm::isPowerOf2_64(type.getShape().back()))
        oddLengths.push_back(op);
    });
    if (oddLengths.empty())
      return;
    RewritePatternSet expand(&getContext());
    arith::populateExpandBFloat16Patterns(expand);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyOpPatternsGreedily(oddLengths, std::move(expand), config)))
      signalPassFailure();
  }
};

/// The integer bits a bf16 value (or vector) was bitcast from, if any.
Value bitsOfBF16(Value v) {
  auto cast = v.getDefiningOp<LLVM::BitcastOp>();
  if (!cast || !getElementTypeOrSelf(cast.getType()).isBF16() ||
      !getElementTypeOrSelf(cast.getArg().getType()).isInteger(16))
    return {};
  return cast.getArg();
}

/// `store (bitcast %bits)` stores `%bits`: the same bytes.
struct StoreBits : OpRewritePattern<LLVM::StoreOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::StoreOp op,
                                PatternRewriter &rewriter) const override {
    Value bits = bitsOfBF16(op.getValue());
    if (!bits)
      return rewriter.notifyMatchFailure(op, "not a bf16 made of bits");
    rewriter.modifyOpInPlace(op, [&] { op.getValueMutable().assign(bits); });
    return success();
  }
};

/// An element of `bitcast %bits` is the bitcast of `%bits`'s element.
struct ExtractBits : OpRewritePattern<LLVM::ExtractElementOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::ExtractElementOp op,
                                PatternRewriter &rewriter) const override {
    Value bits = bitsOfBF16(op.getVector());
    if (!bits)
      return rewriter.notifyMatchFailure(op, "not a bf16 made of bits");
    Value element = LLVM::ExtractElementOp::create(rewriter, op.getLoc(), bits,
                                                   op.getPosition());
    rewriter.replaceOpWithNewOp<LLVM::BitcastOp>(op, op.getType(), element);
    return success();
  }
};

/// `bitcast (load %p : bf16s) : i16s` loads the integers: the same bytes.
/// A bf16 load whose value is only reinterpreted (the extension by a shift,
/// linformer-cpu-expand-bf16) would otherwise be legalized, on a CPU
/// without bf16 conversion, by promoting it to f32 and truncating back
/// through __truncsfbf2 (a `<2 x bfloat>` load of a d_model-2 model's
/// weight panel, compiled for haswell with bf16 products).
struct LoadBits : OpRewritePattern<LLVM::BitcastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::BitcastOp op,
                                PatternRewriter &rewriter) const override {
    auto load = op.getArg().getDefiningOp<LLVM::LoadOp>();
    if (!load || !getElementTypeOrSelf(load.getType()).isBF16() ||
        !getElementTypeOrSelf(op.getType()).isInteger(16))
      return rewriter.notifyMatchFailure(op, "not a bf16 load read as bits");
    rewriter.setInsertionPoint(load);
    auto bits = LLVM::LoadOp::create(
        rewriter, load.getLoc(), op.getType(), load.getAddr(),
        load.getAlignment().value_or(0), load.getVolatile_(),
        load.getNontemporal(), load.getInvariant(),
        load.getInvariantGroup(), load.getOrdering());
    rewriter.replaceOp(op, bits.getResult());
    return success();
  }
};

/// A bf16 load whose value is only stored (a copy: a tile's rows moved
/// into a scratch buffer) loads the integers and stores them. LLVM keeps
/// such a `<9 x bfloat>` load in a register across a loop (GVN's partial
/// redundancy elimination) and instruction selection cannot legalize the
/// value then, even with AVX512_BF16 ("Do not know how to soft promote
/// this operator's operand": a d_model-9 model with bf16 products, found by
/// the random-model soak).
struct CopyBits : OpRewritePattern<LLVM::LoadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::LoadOp load,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(load.getType()).isBF16() || load->use_empty() ||
        !llvm::all_of(load->getUses(), [](OpOperand &use) {
          auto store = dyn_cast<LLVM::StoreOp>(use.getOwner());
          return store && use.get() == store.getValue() &&
                 store.getAddr() != use.get();
        }))
      return rewriter.notifyMatchFailure(load, "not a bf16 load only stored");
    Type bits = rewriter.getI16Type();
    if (auto vector = dyn_cast<VectorType>(load.getType()))
      bits = vector.clone(bits);
    auto words = LLVM::LoadOp::create(
        rewriter, load.getLoc(), bits, load.getAddr(),
        load.getAlignment().value_or(0), load.getVolatile_(),
        load.getNontemporal(), load.getInvariant(), load.getInvariantGroup(),
        load.getOrdering());
    // The stores of the bitcast store the words (StoreBits).
    rewriter.replaceOpWithNewOp<LLVM::BitcastOp>(load, load.getType(),
                                                 words.getResult());
    return success();
  }
};

/// A shuffle of bf16 vectors shuffles their 16-bit words: the same bytes.
/// LLVM legalizes a `<N x bfloat>` shuffle on a CPU without bf16
/// conversion by promoting its elements to f32 and truncating back through
/// __truncsfbf2 (a bf16 model's attention core with bf16 score products,
/// compiled for haswell: its 5 x 5 query tile rounded to bf16, reshaped).
struct ShuffleBits : OpRewritePattern<LLVM::ShuffleVectorOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::ShuffleVectorOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(op.getType());
    auto inType = dyn_cast<VectorType>(op.getV1().getType());
    if (!type || !inType || !type.getElementType().isBF16())
      return rewriter.notifyMatchFailure(op, "not a shuffle of bf16");
    Type i16 = rewriter.getI16Type();
    Location loc = op.getLoc();
    Value v1 = LLVM::BitcastOp::create(rewriter, loc, inType.clone(i16),
                                       op.getV1());
    Value v2 = LLVM::BitcastOp::create(rewriter, loc, inType.clone(i16),
                                       op.getV2());
    Value words =
        LLVM::ShuffleVectorOp::create(rewriter, loc, v1, v2, op.getMask());
    rewriter.replaceOpWithNewOp<LLVM::BitcastOp>(op, type, words);
    return success();
  }
};

/// A bf16 vector load whose elements are only extracted loads the 16-bit
/// words and extracts those: the same bytes, and each element then `bitcast
/// %word`, which InsertBits and StoreBits take as they are. LLVM legalizes
/// a `<1 x bfloat>` load's extractelement on a CPU without bf16 conversion
/// through __truncsfbf2 (a k = 1 attention core of a max-pooling model with
/// bf16 products, compiled for haswell: random-model soak, seed 20261299
/// case 84, whose link failed).
struct ExtractedLoadBits : OpRewritePattern<LLVM::LoadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::LoadOp load,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(load.getType());
    if (!type || !type.getElementType().isBF16() || load->use_empty() ||
        !llvm::all_of(load->getUsers(), [](Operation *user) {
          return isa<LLVM::ExtractElementOp>(user);
        }))
      return rewriter.notifyMatchFailure(load, "not a bf16 load extracted");
    Type i16 = rewriter.getI16Type();
    auto words = LLVM::LoadOp::create(
        rewriter, load.getLoc(), type.clone(i16), load.getAddr(),
        load.getAlignment().value_or(0), load.getVolatile_(),
        load.getNontemporal(), load.getInvariant(), load.getInvariantGroup(),
        load.getOrdering());
    for (Operation *user : llvm::make_early_inc_range(load->getUsers())) {
      auto extract = cast<LLVM::ExtractElementOp>(user);
      rewriter.setInsertionPoint(extract);
      Value word = LLVM::ExtractElementOp::create(
          rewriter, extract.getLoc(), words.getResult(), extract.getPosition());
      rewriter.replaceOpWithNewOp<LLVM::BitcastOp>(extract, extract.getType(),
                                                   word);
    }
    rewriter.eraseOp(load);
    return success();
  }
};

/// Inserting `bitcast %word` into a bf16 vector inserts `%word` into the
/// vector's words: the same bytes. LLVM legalizes a `<N x bfloat>`
/// insertelement on a CPU without bf16 conversion by promoting the vector
/// to f32 and truncating it back through __truncsfbf2 (a d_model-4 model's
/// weight, rounded and split per head in a 1 x 2 tile, compiled for
/// haswell with bf16 products: found by the random-model soak).
struct InsertBits : OpRewritePattern<LLVM::InsertElementOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::InsertElementOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(op.getType());
    Value word = bitsOfBF16(op.getValue());
    if (!type || !type.getElementType().isBF16() || !word)
      return rewriter.notifyMatchFailure(op, "not a bf16 made of bits");
    Location loc = op.getLoc();
    VectorType words = type.clone(rewriter.getI16Type());
    Value into;
    if (op.getVector().getDefiningOp<LLVM::PoisonOp>())
      into = LLVM::PoisonOp::create(rewriter, loc, words);
    else
      into = LLVM::BitcastOp::create(rewriter, loc, words, op.getVector());
    Value inserted = LLVM::InsertElementOp::create(rewriter, loc, into, word,
                                                   op.getPosition());
    rewriter.replaceOpWithNewOp<LLVM::BitcastOp>(op, type, inserted);
    return success();
  }
};

struct StoreBF16BitsPass
    : mlir::linformer::impl::LinformerCPUStoreBF16BitsPassBase<
          StoreBF16BitsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StoreBits, ExtractBits, LoadBits, CopyBits, ShuffleBits,
                 InsertBits, ExtractedLoadBits>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Stack buffers and addresses of bf16 count in 16-bit integers (the
    // same sizes and strides): LLVM's SROA types a promoted stack buffer
    // after its alloca, and a `[4 x bfloat]` scratch tile written with
    // rounded bits became bfloat selects that a CPU without bf16
    // conversion legalizes through __truncsfbf2 (a d_model-2 model with
    // bf16 products compiled for haswell).
    Type i16 = IntegerType::get(&getContext(), 16);
    getOperation().walk([&](Operation *op) {
      if (auto alloca = dyn_cast<LLVM::AllocaOp>(op);
          alloca && alloca.getElemType().isBF16())
        alloca.setElemType(i16);
      if (auto gep = dyn_cast<LLVM::GEPOp>(op); gep && gep.getElemType().isBF16())
        gep.setElemType(i16);
    });
  }
};
} // namespace
