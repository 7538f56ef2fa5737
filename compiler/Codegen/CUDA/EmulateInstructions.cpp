//===- EmulateInstructions.cpp - GPU instructions on the host -*- C++ -*-===//
//
// The host's lowering of the GPU instructions the CUDA kernels call that
// have no CPU counterpart in LLVM (see LinformerCUDAEmulateInstructionsPass
// in Passes.td): each becomes the arithmetic it performs, so the on-host
// pipeline runs the kernels' own code.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAEMULATEINSTRUCTIONSPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kEx2 = "llvm.nvvm.ex2.approx.ftz.f32";

/// `cvt.rna.tf32.f32` (no saturation, no relu): the TF32 bits in integer
/// ops, half a TF32 ulp (bit 12) added to the magnitude and the 13 low bits
/// cleared (to nearest, ties away from zero); a NaN kept as it is.
Value tf32Bits(OpBuilder &b, Location loc, Value v) {
  Type i32 = b.getI32Type();
  auto constant = [&](int32_t x) {
    return arith::ConstantIntOp::create(b, loc, i32, x);
  };
  Value bits = arith::BitcastOp::create(b, loc, i32, v);
  Value up = arith::AddIOp::create(b, loc, bits, constant(0x1000));
  Value cleared = arith::AndIOp::create(b, loc, up, constant(~0x1fff));
  Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
  return arith::SelectOp::create(b, loc, nan, bits, cleared);
}

struct CUDAEmulateInstructionsPass
    : mlir::linformer::impl::LinformerCUDAEmulateInstructionsPassBase<
          CUDAEmulateInstructionsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    WalkResult r = getOperation().walk([&](Operation *op) {
      rewriter.setInsertionPoint(op);
      Location loc = op->getLoc();
      if (auto cvt = dyn_cast<NVVM::ConvertFloatToTF32Op>(op)) {
        if (cvt.getRnd() != NVVM::FPRoundingMode::RNA ||
            cvt.getSat() != NVVM::SaturationMode::NONE || cvt.getRelu()) {
          cvt.emitOpError("is emulated on the host only as cvt.rna.tf32.f32 "
                          "(no saturation, no relu)");
          return WalkResult::interrupt();
        }
        rewriter.replaceOp(cvt, tf32Bits(rewriter, loc, cvt.getSrc()));
        return WalkResult::advance();
      }
      auto call = dyn_cast<LLVM::CallIntrinsicOp>(op);
      if (call && call.getIntrin() == kEx2) {
        // The host's exp2 keeps the results below 2^-126 that ftz makes
        // 0: such a p adds nothing to a sum of at least 1.
        rewriter.replaceOp(
            call, math::Exp2Op::create(rewriter, loc, call.getArgs()[0]));
        return WalkResult::advance();
      }
      if (isa<NVVM::NVVMDialect>(op->getDialect()) ||
          (call && call.getIntrin().starts_with("llvm.nvvm."))) {
        op->emitOpError("is a GPU instruction the host has no lowering for "
                        "(linformer-cuda-emulate-instructions lowers "
                        "cvt.rna.tf32.f32 and ex2.approx.ftz.f32)");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
