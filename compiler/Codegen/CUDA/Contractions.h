//===- Contractions.h - a contraction's warp, staging and mma plan -*- C++ -*-===//
//
// What linformer-cuda-select-schedules chooses for a contraction and
// linformer-cuda-tensor-core-contractions applies, and the facts both (and
// linformer-cuda-narrow-intermediates) must agree on: whether a contraction
// is mapped at all, the ops it may absorb (the init before it, the epilogue
// after it: linformer-cuda-absorb-init-epilogue records which it does;
// guarded extensions that wrote its operands), its warp tiles,
// split-K and shared-memory staging (`Plan`), and the
// `#linformer.cuda_schedule` that records the choices. Defined in
// Contractions.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CUDA_CONTRACTIONS_H
#define LINFORMER_COMPILER_CODEGEN_CUDA_CONTRACTIONS_H

#include "dialect/IR/LinformerDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <array>
#include <map>
#include <string>

namespace mlir::linformer::cuda {

/// An mma tile's rows and columns, and a warp's lanes.
constexpr int64_t kTileM = 16, kTileN = 8, kWarp = 32;

/// A staged operand's chunk in shared memory: `rows` rows (of C's m or n)
/// by `chunk` k values, in words of two k-adjacent values (a fragment
/// register). k-major (the operand's k is contiguous in memory):
/// word (r, p) at r * stride + p with stride chunk / 2 + 4; otherwise at
/// p * stride + r with stride rows + 8. Either way consecutive copy threads
/// store consecutive words after reading consecutive addresses, and the 8 x
/// 4 words a fragment load takes (rows g, pairs t) fall in 32 distinct banks
/// (stride = 4 mod 8 words along rows; 8 or 24 mod 32 along pairs).
///
/// `natural` (a B operand whose rows are contiguous, read with
/// ldmatrix.trans): the operand's own [k][rows] layout instead, 16-bit
/// values two rows to a word, k row kk's rows r, r + 1 at word
/// kk * stride + r / 2 with stride rows / 2 + 4: the same size as the
/// pair-major buffer, rows 16-byte aligned, the 8 k rows of an 8 x 8
/// matrix in distinct banks, and a copy stores the values as it loads them
/// (no pairs of k rows to interleave).
///
/// Each layout is `lines` lines of `line` contiguous words (a k-major
/// row's pairs, a pair-major pair's rows, a natural k row's words), `stride`
/// words apart: word `at` of line `l` is at l * stride + at.
///
/// `core` (wgmma, k-major or natural): the same lines in wgmma's canonical
/// layout without swizzling instead, unpadded: core matrices of 8 lines x
/// 4 words (16 bytes), 128 contiguous bytes each; word `at` of line `l` at
/// (l / 8) * 8 line + (at / 4) * 32 + (l % 8) * 4 + at % 4 (a line's
/// 16-byte units one core matrix apart, groups of 8 lines 8 line words).
///
/// `swizzle` S (bytes: 32, 64 or 128, at most a line's bytes; a core
/// layout's) instead: the lines in atom columns of S bytes each, line `l`
/// of column `c` at byte c * lines * S + l * S, and within the whole
/// buffer (1024-byte aligned) each 16-byte unit's address bits 4.. XOR
/// bits 7.. (log2(S / 16) of them: CUTLASS's Swizzle<3, 4, 3> for 128),
/// so that 8 consecutive lines of an atom put a given unit in 8 distinct
/// bank groups. wgmma's descriptors for such a layout (PTX ISA, "Shared
/// Memory Matrix Layout"): K-major, the stride byte offset between groups
/// of 8 lines (8 S), the leading one unused; MN-major (natural), the
/// leading byte offset between atom columns (lines * S), the stride one
/// between groups of 8 k rows (8 S).
struct StagedBuffer {
  bool kMajor = true, natural = false;
  /// Copied with cp.async: the operand's bytes straight into the buffer
  /// (a prefetched chunk, see Staging).
  bool async = false;
  bool core = false;
  int64_t swizzle = 0;
  int64_t rows = 0, line = 0, lines = 0, stride = 0, base = 0, words = 0;
  StagedBuffer() = default;
  StagedBuffer(bool kMajor, int64_t rows, int64_t chunk, int64_t base,
               bool natural = false, bool core = false)
      : kMajor(kMajor), natural(natural), core(core), rows(rows),
        line(kMajor ? chunk / 2 : natural ? rows / 2 : rows),
        lines(kMajor ? rows : natural ? chunk : chunk / 2),
        stride(line + (core ? 0 : kMajor || natural ? 4 : 8)), base(base),
        words(lines * stride) {}
  /// Core layout: the byte distances wgmma's descriptor gives, between
  /// core matrices adjacent along k (leading) and along m / n (stride).
  int64_t leadingBytes() const {
    if (swizzle)
      return kMajor ? 16 : lines * swizzle;
    return kMajor ? 128 : 32 * line;
  }
  int64_t strideBytes() const {
    if (swizzle)
      return 8 * swizzle;
    return kMajor ? 32 * line : 128;
  }
  /// Core layout: the bytes from the buffer's start to k step `st` (16 k
  /// values) of the lines a descriptor starts at, before swizzling (the
  /// address a descriptor gives; the hardware swizzles what it reads).
  int64_t kStepBytes(int64_t st) const {
    if (!swizzle)
      return st * 2 * leadingBytes();
    if (!kMajor)
      return st * 16 * swizzle;
    return st * 32 / swizzle * lines * swizzle + st * 32 % swizzle;
  }
  /// wgmma's descriptor bits 62-63 for the swizzle: 0 none, 1 128 bytes,
  /// 2 64, 3 32.
  int64_t swizzleMode() const {
    return swizzle == 128 ? 1 : swizzle == 64 ? 2 : swizzle == 32 ? 3 : 0;
  }
  /// A line's bytes (16-bit values or pairs of them).
  int64_t lineBytes() const { return 4 * line; }
  /// Whether a copy unit's words come from one contiguous run of the
  /// operand (two values a word), rather than from two k rows.
  bool runs() const { return kMajor || natural; }
};

/// How a block of warps shares a contraction's operands through shared
/// memory: `warpsM` x `warpsN` warps (each a warp block of the plan) over
/// one block tile of C, its A rows and B columns copied `chunk` k values at
/// a time.
struct Staging {
  int64_t warpsM = 0, warpsN = 0, chunk = 0;
  StagedBuffer a, b;
  bool prefetch = false; ///< two buffers, the next chunk in registers
  /// Buffers when prefetching: 2, or more when every operand is copied
  /// with cp.async (chunks up to stages - 1 ahead in flight).
  int64_t stages = 2;
  /// The buffers the block keeps.
  int64_t buffers() const { return prefetch ? stages : 1; }
  /// A's fragments read with ldmatrix (one x4 a tile and k step; its
  /// buffer is k-major).
  bool ldmatrixA = false;
  /// Warpgroup MMAs (wgmma) from core-layout buffers: every warp along m
  /// (warpsN 1), one row tile each, 4 consecutive warps a warpgroup.
  bool wgmma = false;
  /// With wgmma: batches a warpgroup leaves running past its chunk (0 or
  /// 1; CUDAScheduleAttr's in_flight).
  int64_t inFlight = 0;
  /// With wgmma: the widest swizzle (CUDAScheduleAttr's swizzle; 0 none),
  /// each operand's own in its StagedBuffer (see swizzleBuffers).
  int64_t swizzle = 0;
  /// B's fragments read with ldmatrix.trans (one x4 two column tiles and
  /// a k step; its buffer is natural).
  bool ldmatrixB() const { return b.natural && !wgmma; }
};

/// Swizzles the core-layout buffers of `s` up to `widest` bytes (0 none):
/// each operand the widest of 128, 64 and 32 within `widest` that
/// divides its lines, none where none does; when any is swizzled, both
/// buffers padded to whole KiB (B's then starts at a multiple of 1024
/// bytes, and so does every further stage) and `s.swizzle` is `widest`
/// (else 0).
inline void swizzleBuffers(Staging &s, int64_t widest) {
  bool any = false;
  for (StagedBuffer *buf : {&s.a, &s.b}) {
    buf->swizzle = 0;
    if (!buf->core)
      continue;
    for (int64_t bytes = widest; bytes >= 32 && !buf->swizzle; bytes /= 2)
      if (buf->lineBytes() % bytes == 0)
        buf->swizzle = bytes;
    any |= buf->swizzle != 0;
  }
  s.swizzle = any ? widest : 0;
  if (!any)
    return;
  for (StagedBuffer *buf : {&s.a, &s.b})
    buf->words = llvm::alignTo(buf->words, 256);
  s.b.base = s.a.base + s.a.words;
}

/// Each of `threads` threads' share of `count` copied items, when they
/// divide evenly and are few enough (32) to unroll; else 0 (a loop).
inline int64_t evenShare(int64_t count, int64_t threads) {
  return count % threads == 0 && count / threads <= 32 ? count / threads : 0;
}

/// The words of `buf`'s chunk each of `threads` threads copies, unrolled
/// (see evenShare).
inline int64_t unrolledWords(const StagedBuffer &buf, int64_t chunk,
                      int64_t threads) {
  return evenShare(buf.rows * (chunk / 2), threads);
}

/// The words a copy thread moves at once for `buf` (a chunk of `chunk` k
/// values over `threads` threads; elements of `bytes` bytes, loaded in
/// vectors): the most, up to 4 (one 16-byte shared store), whose loads
/// stay within 16 bytes (2 vw values of a run, vw of the others) and
/// divide the buffer's lines, and whose units every thread has as many
/// of; else 1. An async buffer's units hold no registers: fewer units than
/// threads are fine there when they divide them (some threads copy
/// nothing), so 16-byte copies (cp.async.cg) win over narrower ones.
inline int64_t copyWidth(const StagedBuffer &buf, int64_t chunk, int64_t threads,
                  int64_t bytes) {
  for (int64_t vw = 4; vw >= 2; vw /= 2) {
    int64_t loadBytes = (buf.runs() ? 2 * vw : vw) * bytes;
    int64_t units = buf.rows * (chunk / 2) / vw;
    if (loadBytes <= 16 && buf.line % vw == 0 &&
        (units % threads == 0 || (buf.async && threads % units == 0)))
      return vw;
  }
  return 1;
}

/// A thread prefetches at most this many words (two f32 registers each
/// while they are in flight, next to the 64 accumulators).
constexpr int64_t kMaxPrefetchWords = 16;

/// What the rewrite needs of a contraction, or failure (left to the plain
/// path).
struct Plan {
  unsigned mDim, nDim, kDim; ///< innermost m, n, k loop dimensions
  SmallVector<unsigned> rowDims, colDims, outerK; ///< folded / looped
  unsigned aOperand, bOperand;                    ///< inputs holding m / n
  int64_t tilesM, tilesN; ///< mma tiles a warp computes along m and n
  int64_t rows, cols;     ///< warp tiles along rows and columns (folded)
  int64_t split = 1;      ///< parts of the k loop, each its own warps
  Staging staging;        ///< a block's shared copy (warpsM == 0: none)
  /// Staged: the block tiles along rows and columns (a split-K part's).
  int64_t blockRows() const { return rows / staging.warpsM; }
  int64_t blockCols() const { return cols / staging.warpsN; }
  /// A lane's two adjacent columns of C stored as one 2-element vector
  /// where C's layout allows (pairedColumns); off: one store an element
  /// (CUDAScheduleAttr's pair_stores).
  bool pairStores = true;
  /// The op that wrote C's initial values (a bias broadcast, a fill), when
  /// the accumulators compute them instead of loading them (null: loaded).
  Operation *initFrom = nullptr;
  /// The input of the elementwise op right after that reads C, when C's
  /// values go through that op on their way out (GELU after the FFN's
  /// first projection; null: none).
  OpOperand *epilogueRead = nullptr;
  /// Per input: the guarded extension that wrote it, when the operand's
  /// values are recomputed from that op's inputs as they are loaded (the
  /// op and its buffer go); null: loaded.
  std::array<linalg::GenericOp, 2> operandFrom;
  /// Where the results go: C, the epilogue's output, or a 16-bit copy of
  /// either when every reader rounds them to that anyway (its element type
  /// says which).
  Value out;

  /// The op of `epilogueRead`, or null.
  linalg::GenericOp epilogue() const {
    return epilogueRead ? cast<linalg::GenericOp>(epilogueRead->getOwner())
                        : linalg::GenericOp();
  }
};

/// The largest of `options` that divides `extent`.
inline int64_t largestDividing(int64_t extent, ArrayRef<int64_t> options) {
  for (int64_t o : options)
    if (o <= extent && extent % o == 0)
      return o;
  return 1;
}

/// Whether `precision` multiplies TF32 operands: tf32 (each f32 operand
/// rounded once) or tf32x3 (each split into a TF32 head and a TF32 tail,
/// three products a pair, MmaUtils.h's splitTF32).
inline bool isTF32(StringRef precision) {
  return precision == "tf32" || precision == "tf32x3";
}

/// The depth of one mma step at `precision`: 4 (tf32, tf32x3: m16n8k4) or
/// 16 (bf16, f16 and f32 SIMT words: m16n8k16).
inline int64_t mmaDepth(StringRef precision) {
  return isTF32(precision) ? 4 : 16;
}

/// The plan of contraction `op` with steps of `tileK` and warp blocks of
/// the most tiles up to `maxTilesM` x `maxTilesN` that divide, split-K
/// up to `splitWarps` warps (0: none), unstaged; or failure (the plain
/// path keeps it).
FailureOr<Plan> planFor(linalg::GenericOp op, int64_t tileK,
                        int64_t maxTilesM, int64_t maxTilesN,
                        int64_t splitWarps);

/// The split-K planFor chooses for plan `p` (its columns, its grid limit)
/// when `rows` of its warp rows hold work, over `steps` k steps.
int64_t splitFor(const Plan &p, int64_t steps, int64_t rows,
                 int64_t splitWarps);

/// Whether the rows of contraction `op` planned as `p` are one sequence's
/// tokens: a `linformer.token_loops` op whose batch loop is the only folded
/// row dimension and whose token loop is the innermost m (its blocks can
/// have a length rule).
bool rowsAreTokens(linalg::GenericOp op, const Plan &p);

/// For a staged contraction `op` whose rows are tokens (rowsAreTokens)
/// planned as `p`: the splits
/// for runs whose longest sequence is shorter, as pairs [T, S], T
/// decreasing (at most 3): when it has at most T tokens the length rule
/// leaves fewer blocks, and split-K S fills the GPU again. Empty for any
/// other contraction, or when no length changes the split.
SmallVector<int64_t> lengthSplits(linalg::GenericOp op, const Plan &p,
                                  int64_t tileK, int64_t splitWarps);

/// What is wrong with `splits` ([T, S] pairs, as lengthSplits makes them,
/// e.g. from a schedule file) for `op` planned as `p`, or "": a staged
/// contraction whose rows are tokens (not wgmma, no outer k loop), T
/// decreasing within [1, n), each split S a power of two up to 64 that
/// divides the k steps into whole chunks.
std::string checkLengthSplits(linalg::GenericOp op, const Plan &p,
                              ArrayRef<int64_t> splits, int64_t tileK);

/// Whether linformer-cuda-tensor-core-contractions maps `op` onto warp
/// tiles (tensor cores, or SIMT tiles where a block stages it) with steps
/// of `tileK` (4: tf32; 16: bf16 / f16) and warp blocks of at most
/// `maxTilesM` x `maxTilesN` tiles: an f32 contraction whose innermost m,
/// n and k extents divide into mma tiles and whose folded tiles fit a grid
/// dimension. Readers of such an op's operands round them as they load them.
bool mapsContraction(linalg::GenericOp op, int64_t tileK, int64_t maxTilesM,
                     int64_t maxTilesN);

/// `op` when it is an elementwise linalg.generic that writes its one
/// output at its own loop indices without reading it, reads its inputs at
/// projected permutations of them, and has a body that can be cloned into
/// a kernel. Null otherwise.
linalg::GenericOp clonableElementwise(Operation *op);

/// The op right before contraction `op` when it only writes `op`'s C,
/// elementwise from operands other than C (a bias broadcast, a constant
/// fill): the accumulators start from the values it would have written,
/// and it goes. Null otherwise.
Operation *absorbableInit(linalg::GenericOp op);

/// The op right after contraction `op` when it is elementwise over C's
/// shape and reads C only at the element it produces: the stores run its
/// body on the accumulators, and it goes. Its output is C itself or a
/// buffer of C's shape; then C's values must be read by it alone: C has no
/// users but `op`, it and `initFrom` (and the ops of `op`'s other length
/// variants), or the op is marked `linformer.narrowed`; and its output is
/// none of `op`'s operands (it would overwrite them while they are read).
/// Returns its operand that reads C, or null.
OpOperand *absorbableEpilogue(linalg::GenericOp op, Operation *initFrom);

/// What contraction `op`'s warp tiles take over, as its
/// `linformer.cuda_absorbs` says (linformer-cuda-absorb-init-epilogue chose
/// it; none without one): the init writer right before it and the
/// epilogue's operand that reads C right after it, null where not absorbed.
struct Absorbed {
  Operation *init = nullptr;
  OpOperand *epilogueRead = nullptr;
};
/// Failure, with an error at `op` that names the op, when the attribute
/// names an op that is not there to absorb (the IR changed in between).
FailureOr<Absorbed> absorbedBy(linalg::GenericOp op);

/// The outermost `linformer.length_guard` scf.if around `op` (one of the
/// variants linformer-cuda-length-variants makes), or null.
Operation *outermostLengthGuard(Operation *op);

/// The guarded extension that wrote `operand` of a contraction, when the
/// loads can compute its values instead; null otherwise.
linalg::GenericOp absorbableOperand(OpOperand *operand);

/// Whether loop dimension `dim` is `operand`'s innermost (contiguous) one.
bool innermost(linalg::GenericOp op, OpOperand *operand, unsigned dim);

/// Whether a staged copy of `src` (computed by `from`, or loaded) reads
/// runs of values as vectors along k (`kMajor`) or loop dim `rowDim`.
bool vectorCopy(linalg::GenericOp op, OpOperand *src, linalg::GenericOp from,
                bool kMajor, unsigned rowDim);

/// What a contraction's schedule is chosen from: the precision, the
/// target's numbers and the pipeline's knobs
/// (linformer-cuda-select-schedules' options, which say more).
struct SelectionOptions {
  std::string precision = "tf32";
  bool exact = false; ///< f32 words (the exact emulation)
  int64_t warpTilesM = 4, warpTilesN = 4, splitKWarps = 1024;
  int64_t sharedBytes = 0, blockWarps = 8, chunkK = 16;
  bool prefetch = false, ldmatrix = false, ldmatrixTrans = false;
  bool asyncCopy = false, wgmma = false;
  int64_t asyncStages = 2;
  /// wgmma batches left running past a chunk (0 or 1), where the buffers
  /// allow.
  int64_t wgmmaInFlight = 0;
  /// wgmma's widest swizzle in bytes (Staging::swizzle; 0 none).
  int64_t wgmmaSwizzle = 128;
  /// wgmma's widest warpgroup tile n (64, 128 or 256).
  int64_t wgmmaTileN = 128;
  /// C's adjacent column pairs stored as one vector (Plan::pairStores).
  bool pairStores = true;

  bool tf32() const { return isTF32(precision); }
  bool simt() const { return precision == "f32"; }
  /// Staged words of f32 pairs (SIMT, TF32, exact emulation).
  bool f32Words() const { return simt() || tf32() || exact; }
  int64_t tileK() const { return mmaDepth(precision); }
};

/// A contraction's shape key, what CUDA schedule files match records by:
/// its iterators, loop extents, indexing maps and operand element types,
/// e.g. "contraction/ppR/128x64x64/(d0,d2)(d2,d1)(d0,d1)/bf16,bf16".
std::string contractionKey(linalg::GenericOp op);

/// The `format` of a CUDA schedule file (`--print-schedule`, `--schedule`
/// with --target=cuda): `{"format": ..., "kernels": [{"key": ...,
/// "schedule": "#linformer.cuda_schedule<...>"}, ...]}`.
constexpr llvm::StringLiteral kCUDAScheduleFormat = "linformer-cuda-schedules";

/// A CUDA schedule file's record: a `#linformer.cuda_schedule` (key
/// "contraction/...") or `#linformer.cuda_core_schedule` (key
/// "attention_core/..."), its index in the file, and whether an op took it.
struct ScheduleFileRecord {
  Attribute schedule;
  size_t index = 0;
  bool used = false;
  /// A contraction's split-K for shorter runs ("length_splits": [[T, S],
  /// ...]), flattened; empty: none.
  SmallVector<int64_t> lengthSplits;
};

/// Reads CUDA schedule file `path` into `out` by key (a later record of a
/// key replaces an earlier one); errors at `loc` name the file, the record
/// and what is wrong.
LogicalResult readCUDAScheduleFile(Location loc, StringRef path,
                                   std::map<std::string, ScheduleFileRecord> &out);

/// Warns at `loc` of each record of `records` whose key starts with
/// `prefix` that no op of `fn` took.
void warnUnusedRecords(Location loc, StringRef path, StringRef fn,
                       StringRef prefix,
                       const std::map<std::string, ScheduleFileRecord> &records);

/// One entry of `linformer.cuda_schedules`: `{key, schedule, source}`, and
/// `length_splits` where a contraction has variants for shorter runs.
DictionaryAttr scheduleRecord(MLIRContext *ctx, StringRef key,
                              Attribute schedule, StringRef source,
                              ArrayRef<int64_t> lengthSplits = {});

/// Appends `records` (a pass's, in order) to `fn`'s
/// `linformer.cuda_schedules`.
void appendScheduleRecords(Operation *fn, ArrayRef<Attribute> records);

/// Erases `buffer`'s allocation (and its deallocations) when nothing else
/// uses it; returns whether it did.
bool eraseIfUnused(RewriterBase &rewriter, Value buffer);

/// Whether `precision` is one the warp tiles have (tf32, tf32x3, bf16, f16,
/// f32);
/// an error on `op` that lists them if not.
LogicalResult checkPrecision(Operation *op, StringRef precision);

/// The plan chosen for contraction `op` (its absorbed operands found), or
/// failure: not mapped (or SIMT without a staged block).
FailureOr<Plan> selectPlan(linalg::GenericOp op, const SelectionOptions &o);

/// The choices of plan `p` as an attribute.
CUDAScheduleAttr scheduleOf(MLIRContext *ctx, const Plan &p);

/// The plan of contraction `op` under `schedule` at `precision` (`exact`:
/// the exact emulation's f32 words), its absorbed operands found; or
/// failure with `why` saying what does not fit.
FailureOr<Plan> planOf(linalg::GenericOp op, CUDAScheduleAttr schedule,
                       StringRef precision, bool exact, std::string &why);

} // namespace mlir::linformer::cuda

#endif // LINFORMER_COMPILER_CODEGEN_CUDA_CONTRACTIONS_H
