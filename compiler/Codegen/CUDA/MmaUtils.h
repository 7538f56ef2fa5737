//===- MmaUtils.h - warp-level mma.sync pieces shared by the CUDA passes ===//
//
// What the tensor-core contractions and the tensor-core attention core
// share: rounding f32 operands to the mma's input type, packing two of them
// into one register, and one m16n8k16 mma.sync on bf16 or f16 pairs with f32
// accumulation (nvvm.mma.sync directly: nvgpu's conversion has no bf16 in
// MLIR 22).
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16";
// g = lane / 4, t = lane % 4; two elements a register, the lower k in the
// low half):
//   A (16x16): r0 = A[g][2t, 2t+1], r1 = A[g+8][2t, 2t+1],
//              r2 = A[g][2t+8, 2t+9], r3 = A[g+8][2t+8, 2t+9]
//   B (16x8):  r0 = B[2t, 2t+1][g], r1 = B[2t+8, 2t+9][g]
//   C (16x8):  c0 = C[g][2t], c1 = C[g][2t+1], c2 = C[g+8][2t],
//              c3 = C[g+8][2t+1]   (vector<2x2xf32>: [row half][column])
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CUDA_MMAUTILS_H
#define LINFORMER_COMPILER_CODEGEN_CUDA_MMAUTILS_H

#include "dialect/IR/LinformerDialect.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/Support/raw_ostream.h"

#include <array>
#include <string>

namespace mlir::linformer::cuda {

/// Whether the host replays a tensor-core tile or attention core (the same
/// loops, each lane's results in scalars) rather than running its GPU code,
/// whose mma.sync, ldmatrix, cp.async, barriers and wgmma
/// linformer-cuda-emulate-warps lowers: under exact emulation alone (f32
/// operands, which no 16-bit register holds).
inline bool hostReplays(bool emulate, bool exact) { return emulate && exact; }

/// Whether `op` touches no buffer outside its block (no device memory)
/// although it says nothing of its effects, or says it has some without
/// saying where: a block's barrier, a shuffle, a warp's MMA on registers,
/// the cp.async and wgmma group bookkeeping and fences, a memory barrier
/// (it orders this thread's accesses, touching none), a warpgroup MMA
/// (registers and shared memory through its descriptors; also ours in
/// inline assembly, wgmmaRS below, which says it has side effects), an
/// approximate math intrinsic. Other inline assembly stays unknown.
inline bool touchesNoBuffer(Operation *op) {
  if (isa<LLVM::InlineAsmOp>(op))
    return op->hasAttr(mlir::linformer::kCUDAHostWgmmaAttrName);
  if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op))
    return llvm::any_of(
        ArrayRef<StringRef>{"llvm.nvvm.ex2.approx", "llvm.nvvm.lg2.approx",
                            "llvm.nvvm.rcp.approx", "llvm.nvvm.rsqrt.approx"},
        [&](StringRef math) { return call.getIntrin().starts_with(math); });
  return isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::ReturnOp, nvgpu::MmaSyncOp,
             NVVM::MmaOp, nvgpu::DeviceAsyncCreateGroupOp,
             nvgpu::DeviceAsyncWaitOp, NVVM::FenceProxyOp,
             NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp,
             NVVM::WgmmaWaitGroupSyncOp, NVVM::WgmmaMmaAsyncOp, NVVM::MembarOp>(
      op);
}

/// The element type products use for a precision (f32 for tf32).
inline Type mmaOperandType(MLIRContext *ctx, StringRef precision) {
  if (precision == "bf16")
    return BFloat16Type::get(ctx);
  if (precision == "f16")
    return Float16Type::get(ctx);
  return Float32Type::get(ctx);
}

/// The attention core `op`'s q, key, value and output (not its mask).
inline std::array<Value, 4> coreData(AttentionCoreOp op) {
  return {op.getQ(), op.getKey(), op.getValue(), op.getInit()};
}

/// Whether the attention core `op` (on buffers) expands on
/// tensor cores at `precision`: query rows, projected slots and head width
/// in whole 16s, and q, key, value and out each f32 or the operand type
/// (16-bit buffers that linformer-cuda-narrow-intermediates narrowed:
/// the tensor-core core rounds q, key and value to that type as it loads
/// them anyway, and its output feeds contractions that do).
inline bool coreOnTensorCores(AttentionCoreOp op, StringRef precision) {
  if (precision != "bf16" && precision != "f16")
    return false;
  Type operand = mmaOperandType(op.getContext(), precision);
  std::array<Value, 4> data = coreData(op);
  for (Value v : data) {
    Type e = cast<MemRefType>(v.getType()).getElementType();
    if (!e.isF32() && e != operand)
      return false;
  }
  auto q = cast<MemRefType>(data[0].getType()),
       key = cast<MemRefType>(data[1].getType());
  return q.hasStaticShape() && key.hasStaticShape() &&
         q.getDimSize(2) % 16 == 0 && q.getDimSize(3) % 16 == 0 &&
         key.getDimSize(2) % 16 == 0;
}

/// `v` (f32) rounded to the operand type; with `backToF32`, extended back
/// (the value the tensor core multiplies, for emulation).
inline Value roundToOperand(OpBuilder &b, Location loc, Value v,
                            StringRef precision, bool backToF32) {
  Type t = mmaOperandType(b.getContext(), precision);
  if (t.isF32())
    return v;
  Value r = arith::TruncFOp::create(b, loc, t, v);
  return backToF32 ? arith::ExtFOp::create(b, loc, b.getF32Type(), r) : r;
}

/// `fence.proxy.async.shared::cta`: this thread's shared-memory writes
/// through the generic proxy (st.shared, cp.async once waited for) made
/// visible to the async proxy that wgmma reads through (PTX ISA,
/// "Proxies"); a barrier after it makes them the block's.
inline void fenceSharedForAsyncProxy(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKindAttr::get(b.getContext(),
                                       NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

/// `v` (f32) rounded to TF32 as `cvt.rna.tf32.f32` rounds it (10 mantissa
/// bits, to nearest, ties away from zero), as an f32: what a .tf32 mma
/// multiplies. The cvt itself (nvvm.convert.float.to.tf32); on the host,
/// linformer-cuda-emulate-instructions lowers it to integer ops.
inline Value roundToTF32(OpBuilder &b, Location loc, Value v) {
  Value r = NVVM::ConvertFloatToTF32Op::create(
      b, loc, b.getI32Type(), v, NVVM::FPRoundingMode::RNA,
      NVVM::SaturationMode::NONE, /*relu=*/false);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), r);
}

/// `v` (f32) as a TF32 head and tail, head + tail = v to about 21 bits
/// (3xTF32, as CUTLASS's fast accurate f32 GEMMs split it): the head is
/// `v` rounded to TF32, the tail the rest (exact in f32) rounded again. A
/// product a b is then a_h b_t + a_t b_h + a_h b_h on TF32 tensor cores,
/// the a_t b_t term (about 2^-22 of the product) dropped.
inline std::pair<Value, Value> splitTF32(OpBuilder &b, Location loc, Value v) {
  Value head = roundToTF32(b, loc, v);
  Value tail = roundToTF32(b, loc, arith::SubFOp::create(b, loc, v, head));
  return {head, tail};
}

/// A TF32 fragment (vector<Nx1xf32>, as nvgpu.mma.sync takes it) of f32
/// `values`, each rounded with cvt.rna.tf32.f32 (the mma reads only their
/// top 19 bits; the PTX ISA leaves what it makes of the rest unspecified),
/// and with `x3` (3xTF32) the fragment of their tails (splitTF32), else a
/// null one.
inline std::pair<Value, Value> tf32Fragments(OpBuilder &b, Location loc,
                                             ArrayRef<Value> values, bool x3) {
  SmallVector<Value, 4> heads, tails;
  for (Value v : values) {
    if (!x3) {
      heads.push_back(roundToTF32(b, loc, v));
      continue;
    }
    auto [head, tail] = splitTF32(b, loc, v);
    heads.push_back(head);
    tails.push_back(tail);
  }
  auto type = VectorType::get({int64_t(values.size()), 1}, b.getF32Type());
  return {vector::FromElementsOp::create(b, loc, type, heads),
          x3 ? vector::FromElementsOp::create(b, loc, type, tails).getResult()
             : Value()};
}

/// Two f32 values rounded to the 16-bit operand type and packed into one
/// register, the first in the low half: vector<2xf16> for f16 (what
/// nvvm.mma.sync takes), an i32 for bf16 (LLVM's NVPTX mma intrinsics take
/// bf16 pairs as i32).
inline Value packOperandPair(OpBuilder &b, Location loc, Value lo, Value hi,
                             StringRef precision) {
  Type half = mmaOperandType(b.getContext(), precision);
  Value pair = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, half),
      ValueRange{roundToOperand(b, loc, lo, precision, false),
                 roundToOperand(b, loc, hi, precision, false)});
  if (half.isF16())
    return pair;
  Value word = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
}

/// The word a staged operand pair is kept in: i32 (two 16-bit operands),
/// or i64 when `exact` keeps the f32 values unrounded (emulation only).
inline Type stagedWordType(MLIRContext *ctx, bool exact) {
  return IntegerType::get(ctx, exact ? 64 : 32);
}

/// A block's staging buffer on the GPU: `words` words of type `word` at
/// the start of the kernel's dynamic shared memory (its launch is sized
/// from this view, linformer-cuda-plan-launches).
inline Value sharedWords(OpBuilder &b, Location loc, int64_t words,
                         Type word) {
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value raw = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), workgroup));
  return memref::ViewOp::create(
      b, loc,
      MemRefType::get({words}, word, MemRefLayoutAttrInterface(), workgroup),
      raw, arith::ConstantIndexOp::create(b, loc, 0), ValueRange{});
}

/// A 16-bit view of a staging buffer `words` (a view sharedWords made),
/// of element type `half` (default i16): the same bytes, word w's halves
/// at 2w (low) and 2w + 1. What ldmatrix.trans reads (nvgpu's verifier
/// wants 16-bit elements there) and cp.async writes (in the source's
/// element type).
inline Value sharedHalves(OpBuilder &b, Location loc, Value words,
                          Type half = {}) {
  auto view = words.getDefiningOp<memref::ViewOp>();
  auto type = cast<MemRefType>(words.getType());
  int64_t halves = type.getNumElements() * type.getElementTypeBitWidth() / 16;
  return memref::ViewOp::create(
      b, loc,
      MemRefType::get({halves}, half ? half : b.getI16Type(),
                      MemRefLayoutAttrInterface(), type.getMemorySpace()),
      view.getSource(), view.getByteShift(), ValueRange{});
}

/// Two f32 values as one staged word: rounded to `precision` and packed
/// (the first in the low half), or with `exact` the f32 pair itself.
inline Value packWord(OpBuilder &b, Location loc, Value lo, Value hi,
                      StringRef precision, bool exact) {
  Value pair;
  if (exact)
    pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, b.getF32Type()), ValueRange{lo, hi});
  else
    pair = packOperandPair(b, loc, lo, hi, precision);
  if (!isa<VectorType>(pair.getType()))
    return pair; // bf16: already an i32
  Type word = stagedWordType(b.getContext(), exact);
  Value bits =
      vector::BitCastOp::create(b, loc, VectorType::get({1}, word), pair);
  return vector::ExtractOp::create(b, loc, bits, ArrayRef<int64_t>{0});
}

/// A staged i32 word as the register nvvm.mma.sync takes for `precision`:
/// the i32 itself (bf16) or vector<2xf16>.
inline Value wordToOperand(OpBuilder &b, Location loc, Value word,
                           StringRef precision) {
  if (precision != "f16")
    return word;
  Value v = vector::BroadcastOp::create(
      b, loc, VectorType::get({1}, word.getType()), word);
  return vector::BitCastOp::create(
      b, loc, VectorType::get({2}, b.getF16Type()), v);
}

/// Element `idx` (0: low half) of a staged word, as the f32 the tensor
/// core multiplies.
inline Value wordElement(OpBuilder &b, Location loc, Value word, int64_t idx,
                         StringRef precision, bool exact) {
  Type elem = exact ? b.getF32Type()
                    : mmaOperandType(b.getContext(), precision);
  Value v = vector::BroadcastOp::create(
      b, loc, VectorType::get({1}, word.getType()), word);
  Value pair =
      vector::BitCastOp::create(b, loc, VectorType::get({2}, elem), v);
  Value e = vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{idx});
  return elem.isF32() ? e : arith::ExtFOp::create(b, loc, b.getF32Type(), e);
}

/// One `ldmatrix` of `n` (2 or 4) 8 x 8 matrices of 16-bit values from
/// the staged words `smem` (of type `word`), this lane pointing at word
/// `at`: lanes 8q .. 8q + 7 give matrix q's rows (4 words each), and lane
/// (g, t) receives word t of row g of matrix q as its register q, returned
/// as the mma operand for `precision` (see wordToOperand).
///
/// With `transpose` (ldmatrix.trans), `smem` is the buffer's 16-bit view
/// (sharedHalves) and `at` a half index; lane (g, t) receives values
/// (2t, g) and (2t + 1, g) of matrix q (row, column), the first in the low
/// half: a B fragment register of rows 2t, 2t + 1 when matrix rows run
/// along k.
inline SmallVector<Value, 4>
ldmatrixOperands(OpBuilder &b, Location loc, Value smem, Value at, int64_t n,
                 Type word, StringRef precision, bool transpose = false) {
  Type i32 = b.getI32Type();
  Value v = nvgpu::LdMatrixOp::create(
      b, loc,
      transpose ? VectorType::get({n, 2}, b.getI16Type())
                : VectorType::get({n, 1}, word),
      smem, ValueRange{at}, transpose, n);
  SmallVector<Value, 4> regs;
  for (int64_t q = 0; q < n; ++q) {
    Value reg;
    if (transpose) {
      Value pair = vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{q});
      Value bits = vector::BitCastOp::create(
          b, loc, VectorType::get({1}, i32), pair);
      reg = vector::ExtractOp::create(b, loc, bits, ArrayRef<int64_t>{0});
    } else {
      reg = vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{q, 0});
    }
    regs.push_back(wordToOperand(b, loc, reg, precision));
  }
  return regs;
}

/// acc (vector<2x2xf32>) + A (4 packed registers) x B (2 packed registers)
/// with mma.sync m16n8k16 on `precision` (bf16 or f16) pairs.
inline Value mmaM16N8K16(OpBuilder &b, Location loc, ValueRange a,
                         ValueRange bFrag, Value acc, StringRef precision) {
  Type f32 = b.getF32Type();
  SmallVector<Value> cIn;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t o = 0; o < 2; ++o)
      cIn.push_back(
          vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{h, o}));
  NVVM::MMATypes ptxType =
      precision == "bf16" ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  auto resultType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  Value d = NVVM::MmaOp::create(
      b, loc, resultType, a, bFrag, cIn, ArrayRef<int64_t>{16, 8, 16},
      /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
      std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> out;
  for (int64_t e = 0; e < 4; ++e)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, d, e));
  return vector::FromElementsOp::create(b, loc, VectorType::get({2, 2}, f32),
                                        out);
}

/// The word of line `l`, word `at` of a staged operand (lines of `words`
/// words) in the unswizzled canonical ("core matrix") layout wgmma reads.
/// A core matrix is 8 lines x 4 words, 128 contiguous bytes; core matrices
/// follow each other along a line (128 bytes apart) and then from one
/// group of 8 lines to the next (32 `words` bytes). For a k-major operand
/// (lines along m or n, two k-adjacent values a word) those are the
/// leading and the stride byte offsets; for a natural one (lines along k)
/// the other way round.
inline Value coreWord(OpBuilder &b, Location loc, Value l, Value at,
                      int64_t words) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto mul = [&](Value x, int64_t v) -> Value {
    return arith::MulIOp::create(b, loc, x, c(v));
  };
  Value l8 = arith::DivUIOp::create(b, loc, l, c(8));
  Value lr = arith::RemUIOp::create(b, loc, l, c(8));
  Value a4 = arith::DivUIOp::create(b, loc, at, c(4));
  Value ar = arith::RemUIOp::create(b, loc, at, c(4));
  Value sum = arith::AddIOp::create(b, loc, mul(l8, 8 * words), mul(a4, 32));
  sum = arith::AddIOp::create(b, loc, sum, mul(lr, 4));
  return arith::AddIOp::create(b, loc, sum, ar);
}

/// The word of line `l`, word `at` of a staged operand of `lines` lines
/// in a swizzled core layout of `swizzle` bytes (see StagedBuffer): byte
/// c * lines * S + l * S + u * 16 + (at % 4) * 4 for unit at / 4 = c
/// (S / 16) + u, its bits 4 .. XOR its bits 7 .. (log2(S / 16) of each).
inline Value swizzledCoreWord(OpBuilder &b, Location loc, Value l, Value at,
                              int64_t lines, int64_t swizzle) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto mul = [&](Value x, int64_t v) -> Value {
    return arith::MulIOp::create(b, loc, x, c(v));
  };
  int64_t units = swizzle / 16;
  Value unit = arith::DivUIOp::create(b, loc, at, c(4));
  Value column = arith::DivUIOp::create(b, loc, unit, c(units));
  Value inUnit = arith::RemUIOp::create(b, loc, at, c(4));
  // Before swizzling, in units: column, line, unit within the line.
  Value u = arith::AddIOp::create(
      b, loc, mul(column, lines * units),
      arith::AddIOp::create(b, loc, mul(l, units),
                            arith::RemUIOp::create(b, loc, unit, c(units))));
  // Byte bits 7 .. are unit bits 3 ..; bits 4 .. unit bits 0 ...
  Value row = arith::RemUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, u, c(8)), c(units));
  u = arith::XOrIOp::create(b, loc, u, row);
  return arith::AddIOp::create(b, loc, mul(u, 4), inUnit);
}

/// A wgmma matrix descriptor (PTX ISA, "Matrix Descriptor Format") of the
/// operand starting `word` 4-byte words into shared buffer `smem`: bits
/// 0-13 the start address >> 4 (a shared address is below 2^18), 16-29
/// the leading byte offset >> 4, 32-45 the stride byte offset >> 4, base
/// offset 0 (a swizzled buffer is 1024-byte aligned), bits 62-63 the
/// swizzle `mode` (0 none, 1 128 bytes, 2 64, 3 32).
inline Value wgmmaDescriptor(OpBuilder &b, Location loc, Value smem, Value word,
                             int64_t leadingBytes, int64_t strideBytes,
                             int64_t mode = 0) {
  Type i64 = b.getI64Type();
  auto i64c = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  Value addr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
  Value start = arith::AddIOp::create(
      b, loc, addr,
      arith::MulIOp::create(b, loc, word,
                            arith::ConstantIndexOp::create(b, loc, 4)));
  start = arith::IndexCastUIOp::create(b, loc, i64, start);
  start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, start, i64c(0x3FFFF)), i64c(4));
  // Unsigned: mode 2 or 3 sets bit 63.
  uint64_t fields = uint64_t(leadingBytes >> 4) << 16 |
                    uint64_t(strideBytes >> 4) << 32 | uint64_t(mode) << 62;
  return arith::OrIOp::create(b, loc, start, i64c(int64_t(fields)));
}

/// D (`d`: 64 x n / 128 f32 a thread) += A x B with one
/// `wgmma.mma_async` m64nNk16 whose A comes from registers (`a`: the 4
/// packed registers of the thread's warp's m16n8k16 A fragment, rows 16 w
/// .. of the warpgroup) and B from shared memory (`descB`, k-major).
/// NVVM's op takes A from shared memory only, so this is inline PTX (as
/// CUTLASS's SM90 RS atoms): D registers tied in and out; without
/// `accumulate` (scale-d 0) D = A x B and `d` only gives the count (pass
/// poison: nothing is read or initialized). The caller fences
/// (wgmma.fence), commits and waits. D register 4j + 2h + o is row
/// 16 w + g + 8h, column 8j + 2t + o: the m16n8 C layout, tile j.
inline SmallVector<Value> wgmmaRS(OpBuilder &b, Location loc, ValueRange d,
                                  ValueRange a, Value descB, int64_t n,
                                  StringRef precision,
                                  bool accumulate = true) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  int64_t r = static_cast<int64_t>(d.size());
  SmallVector<Value> operands(d.begin(), d.end());
  for (Value reg : a) {
    if (auto vec = dyn_cast<VectorType>(reg.getType())) {
      Value w = vector::BitCastOp::create(b, loc, VectorType::get({1}, i32),
                                          reg);
      reg = vector::ExtractOp::create(b, loc, w, ArrayRef<int64_t>{0});
    }
    operands.push_back(reg);
  }
  operands.push_back(descB);
  std::string type = precision == "bf16" ? "bf16" : "f16";
  std::string ptx, constraints;
  llvm::raw_string_ostream os(ptx), cs(constraints);
  os << "{\n.reg .pred p;\nsetp.ne.b32 p, " << (accumulate ? 1 : 0)
     << ", 0;\nwgmma.mma_async.sync."
        "aligned.m64n"
     << n << "k16.f32." << type << "." << type << " {";
  for (int64_t i = 0; i < r; ++i)
    os << (i ? ", " : "") << "$" << i;
  os << "}, {$" << 2 * r << ", $" << 2 * r + 1 << ", $" << 2 * r + 2
     << ", $" << 2 * r + 3 << "}, $" << 2 * r + 4 << ", p, 1, 1, 0;\n}";
  for (int64_t i = 0; i < r; ++i)
    cs << "=f,";
  for (int64_t i = 0; i < r; ++i)
    cs << i << ",";
  cs << "r,r,r,r,l";
  auto resultType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(r, b.getF32Type()));
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, resultType, operands, ptx, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  // What the PTX says, for linformer-cuda-emulate-warps (the host cannot
  // read PTX); the GPU's translation ignores it.
  asmOp->setAttr(mlir::linformer::kCUDAHostWgmmaAttrName,
                 b.getDenseI64ArrayAttr(
                     {n, accumulate ? 1 : 0, precision == "bf16" ? 1 : 0}));
  Value res = asmOp.getResult(0);
  SmallVector<Value> out;
  for (int64_t i = 0; i < r; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, res, i));
  return out;
}

} // namespace mlir::linformer::cuda

#endif // LINFORMER_COMPILER_CODEGEN_CUDA_MMAUTILS_H
