//===- CoreSchedule.cpp - the attention core's CUDA schedule -*- C++ -*-===//
//
// See CoreSchedule.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/CoreSchedule.h"
#include "compiler/Codegen/CUDA/LoopMapping.h"
#include "compiler/Codegen/CUDA/MmaUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::linformer;

namespace mlir::linformer::cuda {

Value StagedCoreLayout::lineWord(OpBuilder &b, Location loc, Value l,
                                 Value pair, int64_t stride) const {
  if (core)
    return coreWord(b, loc, l, pair, stride);
  return arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, l,
                            arith::ConstantIndexOp::create(b, loc, stride)),
      pair);
}

Value StagedCoreLayout::vWord(OpBuilder &b, Location loc, Value col,
                              Value pair) const {
  return arith::AddIOp::create(b, loc, lineWord(b, loc, col, pair, vStride),
                               arith::ConstantIndexOp::create(b, loc, vBase));
}

CoreShape CoreShape::of(AttentionCoreOp op) {
  CoreShape c;
  auto qType = cast<MemRefType>(op.getQ().getType());
  c.batch = qType.getDimSize(0);
  c.heads = qType.getDimSize(1);
  c.n = qType.getDimSize(2);
  c.d = qType.getDimSize(3);
  c.k = cast<MemRefType>(op.getKey().getType()).getDimSize(2);
  Value data[] = {op.getQ(), op.getKey(), op.getValue(), op.getInit()};
  for (auto [t, v] : llvm::zip_equal(c.types, data))
    t = cast<MemRefType>(v.getType()).getElementType();
  return c;
}

std::string CoreShape::key() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "attention_core/" << batch << 'x' << heads << 'x' << n << 'x' << d
     << 'x' << k << '/';
  llvm::interleave(
      types, os, [&](Type t) { os << t; }, ",");
  return text;
}

int64_t CoreShape::slotBlocks(int64_t slots) const {
  int64_t blocks = std::max<int64_t>(1, slots / 16);
  while (blocks > 1 && (k / 16) % blocks)
    blocks /= 2;
  return blocks;
}

CUDACoreScheduleAttr CoreShape::choose(MLIRContext *ctx,
                                       const CoreSelectionOptions &o) const {
  int64_t tiles = n / 16;
  // Query tiles a warp: as asked where they pair up, 1 with wgmma (a
  // warpgroup's m64 is one tile a warp).
  int64_t perWarp =
      o.tiles > 1 && !o.wgmma && tiles % o.tiles == 0 ? o.tiles : 1;
  int64_t warps = largestDivisorAtMost(tiles / perWarp, o.warps);
  int64_t slots = 16 * slotBlocks(o.slots);
  // wgmma: warps in whole warpgroups (4 consecutive query tiles), the
  // step's slots and the head width a valid n (at most 256).
  bool core = o.wgmma && warps % 4 == 0 && slots <= 256 && d <= 256;
  // The plan is the GPU's: emulation stages whenever the GPU would (its
  // i64 words of `exact` are not what the budget counts).
  bool fits = o.sharedBytes > 0 &&
              StagedCoreLayout(d, k, core).words * 4 <= o.sharedBytes;
  // Query groups (warps x tiles x 16 rows) a staged block walks after one
  // copy of its (b, h)'s keys and values: the largest divisor of the
  // groups a head up to `o.groups` that leaves at least `o.minBlocks`
  // blocks.
  int64_t groups = 1;
  if (fits) {
    int64_t groupsPerHead = tiles / (warps * perWarp);
    for (int64_t r = 2; r <= o.groups; ++r)
      if (groupsPerHead % r == 0 &&
          batch * heads * (groupsPerHead / r) >= o.minBlocks)
        groups = r;
  }
  return CUDACoreScheduleAttr::get(ctx, warps, slots, fits, groups,
                                   fits && o.ldmatrix && !core, fits && core,
                                   perWarp);
}

CUDAF32CoreScheduleAttr
CoreShape::chooseF32(MLIRContext *ctx, const CoreSelectionOptions &o) const {
  int64_t rows = n % (32 * o.rows) == 0 ? o.rows : 1;
  // On an H200 4 and 8 lanes were within 4% where the grid is large; 1 was
  // 1.4x slower (182 registers a thread, 8 warps an SM); 8 where 4 would
  // leave fewer than 256 threads for each of `minBlocks` blocks (the f32
  // layer at B=1, n=4096 was 14% faster). With 2 or 4 rows a lane always
  // 4: on an H200 (2026-12-04) 2 rows x 4 lanes beat 2 x 8 by 2-5% at B=1
  // n=4096, B=16 n=4096 and in the encoder, and beat 1 x 8 at B=1 n=4096
  // by 14%.
  int64_t lanes = o.lanes;
  if (lanes == 0)
    lanes = rows > 1 || batch * heads * n * 4 >= o.minBlocks * 256 ? 4 : 8;
  if (d % lanes != 0 || n % (32 * rows) != 0)
    lanes = 1;
  return CUDAF32CoreScheduleAttr::get(ctx, lanes, rows);
}

std::string CoreShape::fitsF32(CUDAF32CoreScheduleAttr s) const {
  int64_t lanes = s.getLanes(), rows = s.getRows();
  if (rows > 1 && n % (32 * rows) != 0)
    return "rows " + std::to_string(rows) + " need n a multiple of " +
           std::to_string(32 * rows) + " (whole warps of row groups), not " +
           std::to_string(n);
  if (lanes > 1 && d % lanes != 0)
    return "lanes " + std::to_string(lanes) +
           " do not divide its head width " + std::to_string(d);
  if (lanes > 1 && n % 32 != 0)
    return "lanes " + std::to_string(lanes) +
           " need n a multiple of 32 (whole warps), not " + std::to_string(n);
  return "";
}

std::string CoreShape::fitsShape(CUDACoreScheduleAttr s) const {
  int64_t tiles = n / 16;
  int64_t group = s.getWarps() * s.getTiles();
  if (tiles % group)
    return "warps " + std::to_string(s.getWarps()) +
           (s.getTiles() > 1 ? " x tiles " + std::to_string(s.getTiles())
                             : std::string()) +
           " do not divide its " + std::to_string(tiles) + " query tiles";
  if ((k / 16) % (s.getSlots() / 16))
    return "slots " + std::to_string(s.getSlots()) +
           " do not divide its k = " + std::to_string(k);
  if (!s.getStaged())
    return "";
  if ((tiles / group) % s.getGroups())
    return "groups " + std::to_string(s.getGroups()) + " do not divide its " +
           std::to_string(tiles / group) + " query groups a head";
  if (s.getWgmma() && d > 256)
    return "wgmma takes a head width of at most 256, not " + std::to_string(d);
  return "";
}

std::string CoreShape::fitsTF32(CUDACoreScheduleAttr s) const {
  if (!llvm::all_of(types, [](Type t) { return t && t.isF32(); }))
    return "on TF32 tensor cores q, key, value and the output are f32";
  if (llvm::any_of(std::array<int64_t, 5>{batch, heads, n, d, k},
                   ShapedType::isDynamic))
    return "on TF32 tensor cores its shapes must be static";
  if (n % 16 || k % 16 || d % 8)
    return "on TF32 tensor cores n and k must be multiples of 16 and the "
           "head width of 8, not n = " +
           std::to_string(n) + ", k = " + std::to_string(k) +
           ", d = " + std::to_string(d);
  if (s.getStaged() || s.getLdmatrix() || s.getWgmma())
    return "on TF32 tensor cores the core is not staged (no ldmatrix, no "
           "wgmma): every warp reads its fragments from global memory";
  return fitsShape(s);
}

std::string CoreShape::fits(CUDACoreScheduleAttr s,
                            const CoreSelectionOptions &o) const {
  if (std::string why = fitsShape(s); !why.empty())
    return why;
  if (!s.getStaged())
    return "";
  if (o.sharedBytes <= 0)
    return "it stages the keys and values in shared memory, which is off "
           "here";
  int64_t bytes = StagedCoreLayout(d, k, s.getWgmma()).words * 4;
  if (bytes > o.sharedBytes)
    return "its keys and values take " + std::to_string(bytes) +
           " bytes of shared memory, more than the " +
           std::to_string(o.sharedBytes) + " a block has here";
  if (s.getWarps() > o.warps)
    return "its " + std::to_string(s.getWarps()) +
           " warps a block exceed the " + std::to_string(o.warps) +
           " a block has here";
  if (s.getWgmma() && !o.wgmma)
    return "wgmma needs --cuda-wgmma (sm_90a)";
  if (s.getLdmatrix() && !o.ldmatrix)
    return "ldmatrix is off here (--cuda-ldmatrix-core)";
  return "";
}

} // namespace mlir::linformer::cuda
