//===- CoreSchedule.h - the attention core's CUDA schedule -*- C++ -*-===//
//
// What linformer-cuda-select-schedules chooses for an attention core on
// tensor cores and linformer-cuda-expand-attention-core applies, as
// Contractions.h is for contractions: the core's shape and key, the
// `#linformer.cuda_core_schedule` chosen from what the target grants
// (block warps, slots a step, staging, query groups a block, ldmatrix,
// wgmma), why a given one does not fit, and the staged keys' and values'
// shared-memory layout both must agree on. Defined in CoreSchedule.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CUDA_CORESCHEDULE_H
#define LINFORMER_COMPILER_CODEGEN_CUDA_CORESCHEDULE_H

#include "dialect/IR/LinformerDialect.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/IR/Builders.h"

#include <array>
#include <string>

namespace mlir::linformer::cuda {

/// What the target and the pipeline's knobs grant a core on tensor cores
/// (linformer-cuda-select-schedules' core-* options and wgmma).
struct CoreSelectionOptions {
  /// Shared memory a block may stage its (b, h)'s keys and values in; 0:
  /// every warp reads them from global memory.
  int64_t sharedBytes = 0;
  /// Warps (16 query rows each) a block, at most.
  int64_t warps = 8;
  /// Slots an online-softmax step takes: 16, 32 or 64.
  int64_t slots = 32;
  /// Query groups a staged block walks after one copy, at most, keeping
  /// at least `minBlocks` blocks.
  int64_t groups = 1, minBlocks = 0;
  bool ldmatrix = false, wgmma = false;
  /// Query tiles a warp takes at once (1 or 2; 1 with wgmma, or where the
  /// query tiles are odd).
  int64_t tiles = 1;
  /// The f32 core (no tensor cores): lanes a query row (0: chosen) and
  /// query rows a thread asked for.
  int64_t lanes = 0, rows = 2;
};

/// The shared-memory copy of one (b, h)'s projected keys and values, in
/// words of two operands: K as [k][d/2 + 4] (a word holds two adjacent
/// head columns of a slot: a B fragment register of S = Q K^T), V as
/// [d][k/2 + 4] (two adjacent slots of a column: a B fragment register
/// of P V). The 4 words of padding make a row stride of 4 x odd words,
/// so the 8 rows x 4 words a fragment load touches fall in 32 distinct
/// banks.
/// With `core` (wgmma), K as d/2-word lines of slots and V's
/// transpose as k/2-word lines of head columns, both in the canonical
/// layout wgmma reads (cuda::coreWord), unpadded.
struct StagedCoreLayout {
  bool core;
  int64_t kStride, vStride, vBase, words;
  StagedCoreLayout(int64_t d, int64_t k, bool core = false)
      : core(core), kStride(core ? d / 2 : d / 2 + 4),
        vStride(core ? k / 2 : k / 2 + 4), vBase(k * kStride),
        words(k * kStride + d * vStride) {}
  /// Word `pair` of line `l` of lines `stride` words long (padded, or in
  /// the core layout).
  Value lineWord(OpBuilder &b, Location loc, Value l, Value pair,
                 int64_t stride) const;
  /// The word of K's slot `slot`, pair `pair` of head columns.
  Value kWord(OpBuilder &b, Location loc, Value slot, Value pair) const {
    return lineWord(b, loc, slot, pair, kStride);
  }
  /// The word of V's column `col`, pair `pair` of slots.
  Value vWord(OpBuilder &b, Location loc, Value col, Value pair) const;
};

/// An attention core's shape on buffers, as its schedule sees it.
struct CoreShape {
  int64_t batch = 0, heads = 0, n = 0, d = 0, k = 0;
  /// q's, the keys', the values' and the output's element types.
  std::array<Type, 4> types;

  /// `op`'s (on buffers).
  static CoreShape of(AttentionCoreOp op);

  /// The key a CUDA schedule file matches this core's record by.
  std::string key() const;

  /// Blocks of 16 slots a step of `slots`: slots / 16, halved until it
  /// divides the k / 16 blocks.
  int64_t slotBlocks(int64_t slots) const;

  /// The schedule of this core on tensor cores: blocks of the most query
  /// tiles up to `o.warps` that divide them, staged when the keys and
  /// values fit `o.sharedBytes`, wgmma when the warps make whole
  /// warpgroups, ldmatrix otherwise, the query groups a block walks from
  /// `o.groups` and `o.minBlocks`.
  CUDACoreScheduleAttr choose(MLIRContext *ctx,
                              const CoreSelectionOptions &o) const;

  /// What in `s` does not fit this core's shape (warps, slots and groups
  /// that do not divide it, wgmma over a head width of 256), or "".
  std::string fitsShape(CUDACoreScheduleAttr s) const;

  /// What in `s` (a schedule file's) does not fit this core or what `o`
  /// grants, or "".
  std::string fits(CUDACoreScheduleAttr s, const CoreSelectionOptions &o) const;

  /// What in `s` (a schedule file's) does not fit this f32 core on TF32
  /// tensor cores (mma=tf32), or "": f32 data of static shapes, query
  /// rows and projected slots in whole 16s and the head width in whole 8s
  /// (m16n8k8 steps), fitsShape, and staging, ldmatrix and wgmma,
  /// which the staged words' two 16-bit operands have but TF32 does not:
  /// every warp reads its fragments from global memory.
  std::string fitsTF32(CUDACoreScheduleAttr s) const;

  /// The schedule of this core with f32 products: `o.rows` query rows a
  /// thread where n is a multiple of 32 of them (else 1); `o.lanes` lanes
  /// a row, or where 0 the chosen ones: 4, or 8 with one row a thread where
  /// 4 would leave fewer than 256 threads for each of `o.minBlocks` blocks;
  /// 1 where the lanes do not divide the head width or n is no multiple
  /// of 32 (whole warps).
  CUDAF32CoreScheduleAttr chooseF32(MLIRContext *ctx,
                                    const CoreSelectionOptions &o) const;

  /// What in `s` (a schedule file's) does not fit this core, or "".
  std::string fitsF32(CUDAF32CoreScheduleAttr s) const;
};

} // namespace mlir::linformer::cuda

#endif // LINFORMER_COMPILER_CODEGEN_CUDA_CORESCHEDULE_H
