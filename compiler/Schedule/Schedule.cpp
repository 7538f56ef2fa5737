//===- Schedule.cpp - CPU kernel schedules and their cost model -*- C++ -*-===//
//
// See Schedule.h. The cost model is deliberately small: a register tile is
// scored by how well it can keep the FMA pipes busy (enough independent
// accumulators to cover the FMA latency, few enough loads per FMA for the
// load ports), the reduction block by what fits in L1, the workgroup tile by
// how many workgroups the cores get. What it cannot see (prefetchers, cache
// associativity, the quality of the generated loop) is the autotuner's job.
//
//===----------------------------------------------------------------------===//

#include "compiler/Schedule/Schedule.h"
#include "lib/Support/EnumNames.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>
#include <sstream>

namespace linformer::schedule {

using Json = nlohmann::ordered_json;

static constexpr EnumName<KernelKind> kKernelKindNames[] = {
    {KernelKind::Contraction, "contraction"},
    {KernelKind::AttentionCore, "attention_core"},
    {KernelKind::Other, "other"}};

const char *kernelKindName(KernelKind kind) {
  return enumName(kKernelKindNames, kind, "other");
}

bool parseKernelKind(std::string_view name, KernelKind &out) {
  return parseEnum(kKernelKindNames, name, out);
}

int KernelShape::nDim() const {
  if (nLoop >= 0)
    return nLoop;
  return outputDims.empty() ? -1 : outputDims.back();
}

int KernelShape::mDim() const {
  if (mLoop >= 0)
    return mLoop;
  return outputDims.size() < 2 ? -1 : outputDims[outputDims.size() - 2];
}

int64_t KernelShape::reductionSteps() const {
  int64_t steps = 1;
  for (size_t i = 0; i < ranges.size(); ++i)
    if (i < reduction.size() && reduction[i])
      steps *= ranges[i];
  return steps;
}

int64_t largestDivisorAtMost(int64_t size, int64_t bound) {
  if (size <= 0)
    return 1;
  for (int64_t t = std::min(size, bound); t > 1; --t)
    if (size % t == 0)
      return t;
  return 1;
}

/// The extent a register tile's columns sweep: the innermost output loop
/// (its workgroup tile when it is split); for the attention core the
/// tile's query rows and the value width alike (S^T has the queries as
/// columns, P V the value channels).
static int64_t columnExtent(const KernelShape &shape,
                            const std::vector<int64_t> &workgroup) {
  int n = shape.nDim();
  if (n < 0)
    return 1;
  int64_t extent = shape.ranges[n];
  if (n < static_cast<int>(workgroup.size()) && workgroup[n] > 0)
    extent = workgroup[n];
  if (shape.kind == KernelKind::AttentionCore) {
    int m = shape.mDim();
    int64_t rows = shape.ranges[m];
    if (m < static_cast<int>(workgroup.size()) && workgroup[m] > 0)
      rows = workgroup[m];
    extent = std::gcd(extent, rows);
  }
  return extent;
}

/// The extent a register tile's rows sweep: the workgroup's rows.
static int64_t rowExtent(const KernelShape &shape,
                         const std::vector<int64_t> &workgroup) {
  int m = shape.mDim();
  if (m < 0)
    return 1;
  int64_t extent = shape.ranges[m];
  if (m < static_cast<int>(workgroup.size()) && workgroup[m] > 0)
    extent = workgroup[m];
  return extent;
}

/// What fraction of the FMA peak one register tile of rows x columns can
/// reach, and the registers it keeps live. `streamed`: the tile's streamed
/// operand is read from L2 (see below).
static double tileEfficiency(const CPUTarget &t, int64_t rows, int64_t columns,
                             bool streamed, int64_t *registers = nullptr,
                             int64_t *accumulators = nullptr) {
  int64_t lanes = std::max<int64_t>(1, t.lanes());
  int64_t vectors = (columns + lanes - 1) / lanes;
  int64_t acc = rows * vectors;
  int64_t regs = acc + vectors + 1;
  if (registers)
    *registers = regs;
  if (accumulators)
    *accumulators = acc;
  // Per reduction step: `acc` vector FMAs, `vectors` loads of the streamed
  // operand and `rows` broadcasts; two load ports is the common x86
  // minimum, and a datapath narrower than the vectors (Zen 4's 512-bit
  // operations) takes as many passes for both. Hiding the FMA latency takes
  // fma_units x fma_latency independent accumulators, with half as many
  // again as slack for the loads feeding them (measured: on Zen 4 with AVX2,
  // 8 accumulators ran at ~55% of peak, 12 higher; in AVX2 mode on Zen 5,
  // E X's 128-row workgroups ran 2-4% faster with 6 x 16 tiles (12) and a
  // 2-row peel than with 5 x 16 (10), which a quarter of slack had
  // preferred).
  double passes = double(t.vectorPasses());
  double fmaCycles = double(acc) * passes / double(t.fmaUnits);
  double loadCycles = double(vectors + rows) * passes / 2.0;
  double needed = 1.5 * double(std::max<int64_t>(1, t.minAccumulators()));
  double latency = std::min(1.0, double(acc) / needed);
  double lanesUsed = std::min(1.0, double(columns) / double(lanes * vectors));
  // An unpacked streamed operand's block (reduction block x columns, its
  // rows a row of the operand apart: 2 KiB for 512 floats) maps onto few L1
  // sets and is refilled from L2 as the tile steps through it: its vectors
  // at l2_bytes_per_cycle, with the same quarter of slack. Where the FMA
  // datapath is as wide as the vectors this bounds wide tiles: on Zen 5
  // (2 x 512-bit FMA) the bench layer's Q projection ran 4 x 64 tiles at
  // 0.74 of the peak and 8 x 32 at 0.88 (the model: 0.8 and 1); on Zen 4
  // (256-bit halves) both take twice the FMA cycles and 4 x 64 stays ahead.
  double streamCycles =
      streamed ? 1.25 * double(vectors * t.vectorBits / 8) /
                     double(std::max<int64_t>(1, t.l2BytesPerCycle))
               : 0.0;
  double e = latency * lanesUsed * fmaCycles /
             std::max({fmaCycles, loadCycles, streamCycles});
  if (regs > t.vectorRegisters)
    e *= 0.25; // spills: accumulators go through the stack
  return e;
}

/// The efficiency of covering rowsExtent x colsExtent with rows x columns
/// tiles, the partial last tiles (peeled) at their own efficiency.
static double coverEfficiency(const CPUTarget &t, int64_t rows, int64_t columns,
                              int64_t rowsExtent, int64_t colsExtent,
                              bool streamed) {
  rows = std::min(rows, rowsExtent);
  columns = std::min(columns, colsExtent);
  int64_t rowsFull = rowsExtent / rows * rows, rowsRem = rowsExtent - rowsFull;
  int64_t colsFull = colsExtent / columns * columns,
          colsRem = colsExtent - colsFull;
  double time = 0;
  auto add = [&](int64_t r, int64_t c, double area) {
    if (area > 0)
      time += area / std::max(1e-6, tileEfficiency(t, r, c, streamed));
  };
  add(rows, columns, double(rowsFull) * double(colsFull));
  add(rows, colsRem, double(rowsFull) * double(colsRem));
  add(rowsRem, columns, double(rowsRem) * double(colsFull));
  add(rowsRem, colsRem, double(rowsRem) * double(colsRem));
  return time > 0 ? double(rowsExtent) * double(colsExtent) / time : 0;
}

/// Reduction steps one cache block of `s` covers.
static int64_t blockSteps(const KernelShape &shape,
                          const CPUKernelSchedule &s) {
  return s.reduction > 0
             ? std::min<int64_t>(s.reduction, shape.reductionSteps())
             : shape.reductionSteps();
}

ScheduleEstimate estimate(const CPUTarget &t, const KernelShape &shape,
                          const CPUKernelSchedule &s) {
  ScheduleEstimate e;
  // A contraction's streamed operand, unless packed into a contiguous
  // panel that stays in L1, comes from L2 (the attention core's K and V
  // tiles are contiguous).
  bool streamed = shape.kind == KernelKind::Contraction && !s.pack;
  tileEfficiency(t, s.rows, s.columns, streamed, &e.registers, &e.accumulators);
  e.efficiency =
      coverEfficiency(t, s.rows, s.columns, rowExtent(shape, s.workgroup),
                      columnExtent(shape, s.workgroup), streamed);
  int64_t kc = blockSteps(shape, s);
  e.l1Bytes = (s.rows + s.columns) * kc * shape.elementBytes;
  int64_t n = shape.nDim();
  int64_t nExtent = n >= 0 ? shape.ranges[n] : 1;
  if (n >= 0 && n < static_cast<int>(s.workgroup.size()) && s.workgroup[n] > 0)
    nExtent = s.workgroup[n];
  e.l2Bytes = kc * nExtent * shape.elementBytes;
  e.workgroups = 1;
  for (size_t i = 0; i < shape.ranges.size() && i < s.workgroup.size(); ++i)
    if (s.workgroup[i] > 0)
      e.workgroups *= shape.ranges[i] / s.workgroup[i];
  return e;
}

/// Loads (broadcasts and streamed vectors) per vector FMA of a register
/// tile: (rows + vectors) / (rows x vectors).
static double loadsPerFma(const CPUTarget &t, int64_t rows, int64_t cols) {
  double lanes = double(std::max<int64_t>(1, t.lanes()));
  double vectors = std::max(1.0, std::ceil(double(cols) / lanes));
  return (double(rows) + vectors) / (double(std::max<int64_t>(1, rows)) * vectors);
}

/// Bytes between an L1 line and the next one in the same set: 64 sets of
/// 64-byte lines, as in every x86 L1D the targets name (32 KiB 8-way, 48
/// KiB 12-way).
static constexpr int64_t kL1SetSpan = 4096;

/// Whether a contraction's streamed operand, unpacked, has its rows (one a
/// reduction step) at least kL1SetSpan apart: every row of a block then
/// lands in the same few L1 sets, and each step's vectors come from L2.
static bool streamedRowsAlias(const KernelShape &shape) {
  if (shape.kind != KernelKind::Contraction)
    return false;
  int64_t row = shape.elementBytes;
  if (shape.columnLoops.empty()) {
    int n = shape.nDim();
    row *= n >= 0 ? shape.ranges[n] : 1;
  }
  for (int l : shape.columnLoops)
    row *= shape.ranges[l];
  return row >= kL1SetSpan;
}

std::vector<std::pair<int64_t, int64_t>>
registerTileCandidates(const CPUTarget &t, const KernelShape &shape,
                       const std::vector<int64_t> &workgroup) {
  int64_t lanes = std::max<int64_t>(1, t.lanes());
  int64_t rowsMax = rowExtent(shape, workgroup);
  int64_t colsMax = columnExtent(shape, workgroup);
  struct Scored {
    int64_t rows, cols;
    ScheduleEstimate e;
    bool exact;
  };
  std::vector<Scored> all;
  std::vector<int64_t> colOptions;
  // Columns: 1, 2 or 4 whole vectors. (3 vectors would fit some register
  // files better, but LLVM legalizes a <24 x float> accumulator poorly:
  // measured 14 GFLOP/s on AVX2.) Rows may leave a partial tile, which the
  // register tiling peels.
  if (colsMax < lanes) {
    colOptions.push_back(colsMax);
  } else {
    for (int64_t v : {1, 2, 4})
      if (v * lanes <= colsMax)
        colOptions.push_back(v * lanes);
  }
  for (int64_t cols : colOptions)
    for (int64_t rows = 1; rows <= std::min<int64_t>(rowsMax, 16); ++rows) {
      CPUKernelSchedule s;
      s.workgroup = workgroup;
      s.rows = rows;
      s.columns = cols;
      ScheduleEstimate e = estimate(t, shape, s);
      if (e.registers > t.vectorRegisters)
        continue;
      all.push_back({rows, cols, e, rowsMax % rows == 0 && colsMax % cols == 0});
    }
  // Best modelled efficiency first; among equals, no partial tiles (no
  // peeled copies), then more accumulators, then fewer loads per
  // multiply-add (rows broadcasts + vectors of columns for rows x vectors
  // FMAs: 4 x 64 loads 8 per 16 FMAs where 8 x 32 loads 10; on Zen 4 it
  // ran every GEMM of the encoder 1-2% faster, and E X, whose broadcast
  // rows are 16 KiB apart and share L1 sets, 10%), then taller tiles.
  // Where the streamed operand's rows alias in L1 (streamedRowsAlias), more
  // accumulators come before an exact cover: each vector brought from L2
  // serves more rows. Zen 5, AVX-512, 2 threads, the default encoder's FFN
  // up-projection (512 x 2048 weights, rows 8 KiB apart; 128-row
  // workgroups), alternated: 8 x 32 tiles 81.3-81.9 ms for the four layers,
  // 12 x 32 (10 and an 8-row peel) 75.6-75.7, 13 x 32 (9 and an 11-row
  // peel; this order's pick, 26 accumulators) 75.3-75.5; with 2 KiB rows
  // (the down-projection, the Q and output projections) 12 x 32 was 0-6%
  // slower, and they keep 8 x 32. Not where the datapath takes the
  // vectors in halves (Zen 4): twice the FMA cycles a step hide the
  // stream, and 4 x 64 was measured best there.
  bool aliased = streamedRowsAlias(shape) && t.vectorPasses() == 1;
  std::stable_sort(all.begin(), all.end(), [&](const Scored &a,
                                               const Scored &b) {
    if (std::fabs(a.e.efficiency - b.e.efficiency) > 1e-3)
      return a.e.efficiency > b.e.efficiency;
    if (aliased && a.e.accumulators != b.e.accumulators)
      return a.e.accumulators > b.e.accumulators;
    if (a.exact != b.exact)
      return a.exact;
    if (a.e.accumulators != b.e.accumulators)
      return a.e.accumulators > b.e.accumulators;
    double la = loadsPerFma(t, a.rows, a.cols),
           lb = loadsPerFma(t, b.rows, b.cols);
    if (std::fabs(la - lb) > 1e-9)
      return la < lb;
    return a.rows > b.rows;
  });
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Scored &s : all)
    out.push_back({s.rows, s.cols});
  if (out.empty())
    out.push_back({1, std::min(colsMax, lanes)});
  return out;
}

std::vector<int64_t> workgroupTiles(const KernelShape &shape, int64_t rowTile,
                                    int64_t minWorkgroups, int64_t minInner,
                                    int64_t minShortWorkgroups,
                                    int64_t minShortRows) {
  std::vector<int64_t> tiles(shape.ranges.size(), 0);
  const std::vector<int> &out = shape.outputDims;
  int m = shape.mDim(), n = shape.nDim();
  for (int d : out)
    if (d != m && d != n &&
        std::find(shape.columnLoops.begin(), shape.columnLoops.end(), d) ==
            shape.columnLoops.end())
      tiles[d] = 1;
  if (m >= 0)
    tiles[m] = largestDivisorAtMost(shape.ranges[m], rowTile);
  if (out.size() == 1 && n >= 0)
    tiles[n] = shape.ranges[n]; // a vector: split below if needed
  // Tokens whose padding no one reads: 16 tiles (of at least 32 tokens),
  // so that a short run writes about its length (E' at n = 4096: tiles of
  // 256; L = 256 writes 1 of 16).
  if (shape.tokenLoop >= 0 && shape.tokenLoop < int(tiles.size()) &&
      tiles[shape.tokenLoop] == 0 && !shape.reduction[shape.tokenLoop]) {
    int64_t tokens = shape.ranges[shape.tokenLoop];
    tiles[shape.tokenLoop] = largestDivisorAtMost(
        tokens, std::max<int64_t>(tokens / 16, 32));
  }
  auto count = [&] {
    int64_t c = 1;
    for (int d : out)
      c *= tiles[d] == 0 ? 1 : shape.ranges[d] / tiles[d];
    return c;
  };
  // Loop d's tile halved (to a divisor), if that leaves at least `floor`.
  auto halve = [&](int d, int64_t floor) {
    int64_t cur = tiles[d] == 0 ? shape.ranges[d] : tiles[d];
    int64_t smaller = largestDivisorAtMost(shape.ranges[d], cur / 2);
    if (smaller >= cur || smaller < floor)
      return false;
    tiles[d] = smaller;
    return true;
  };
  // The attention core's innermost loop is its value width, which a query
  // tile's softmax covers whole: only its rows are split (a core of 2
  // queries once split 32 value columns in two, and validate refused it).
  int splitN = shape.kind == KernelKind::AttentionCore ? -1 : n;
  while (count() < minWorkgroups)
    if (!(m >= 0 && halve(m, 1)) && !(splitN >= 0 && halve(splitN, minInner)))
      break;
  // A short run: the first ceil(rows / 16) rows of one sequence. Too few
  // workgroups for the cores there: rows in smaller tiles (not below
  // `minShortRows`), then the columns split (the leading column-side loops,
  // heads, then the innermost loop). The mean-pooled bench layer (n = 4096, k =
  // 256) at 256 tokens has 16 real slots, one 32-slot tile of its K and V
  // projections and window sums: on one core. Kernel minima on AMD Zen 4, 2
  // threads, at 256 / 4096 tokens: the K projection 0.19 / 0.85 ms with 32-slot
  // tiles, 0.095 / 0.84 with heads in two, 0.071 / 0.76 with 8-slot tiles; the
  // window sums 0.053 / 0.43 with 32, 0.043 / 0.53 with columns in two,
  // 0.016 / 0.40 with 8.
  int l = shape.lengthRowLoop, b = shape.lengthBatchLoop;
  if (minShortWorkgroups <= 1 || l < 0 || l >= int(tiles.size()) ||
      tiles[l] == 0)
    return tiles;
  auto shortCount = [&] {
    int64_t rows =
        shape.shortRows > 0 ? shape.shortRows : (shape.ranges[l] + 15) / 16;
    int64_t c = 1;
    for (int d : out)
      if (d == l)
        c *= (rows + tiles[d] - 1) / tiles[d];
      else if (d != b)
        c *= tiles[d] == 0 ? 1 : shape.ranges[d] / tiles[d];
    return c;
  };
  while (shortCount() < minShortWorkgroups && halve(l, minShortRows)) {
  }
  // The attention core keeps its value width whole (a query tile's
  // softmax covers every column).
  if (shape.kind == KernelKind::AttentionCore)
    return tiles;
  std::vector<int> columns;
  for (int d : shape.columnLoops)
    if (d != n && d != l)
      columns.push_back(d);
  if (n >= 0 && n != l)
    columns.push_back(n);
  for (int d : columns)
    while (shortCount() < minShortWorkgroups &&
           halve(d, d == n ? minInner : 1)) {
    }
  return tiles;
}

/// The largest power of two <= x (at least 1).
static int64_t floorPow2(int64_t x) {
  int64_t p = 1;
  while (p * 2 <= x)
    p *= 2;
  return p;
}

static int64_t chooseReduction(const CPUTarget &t, const KernelShape &shape,
                               int64_t rows, int64_t cols) {
  // The register tile's two operand blocks (rows x kc broadcast, kc x cols
  // streamed) within half of L1 (10% slack: a 4 x 64 tile's 64-step
  // blocks, 17 KiB of a 32 KiB L1, ran Zen 4's projections 3-5% faster
  // than 32-step ones), a power of two between 16 and 512 steps.
  int64_t bound =
      t.l1Bytes / (2 * shape.elementBytes * std::max<int64_t>(1, rows + cols));
  int64_t kc = floorPow2(std::max<int64_t>(bound, 1));
  if (10 * bound >= 9 * 2 * kc)
    kc *= 2;
  return std::clamp<int64_t>(kc, 16, 512);
}

/// The longest reduction block of a streamed operand read in place (not
/// packed). Each step of the block reads a row of it, so a block of kc steps
/// touches kc cache lines at the operand's row stride (with the projections'
/// 2 KiB rows, a 4 KiB page every two steps), which the L1 bound above does
/// not see. AVX2's 6 x 16 tiles, whose L1 bound is 128 steps, ran the bench
/// layer's E X 4-5%, its attention core 1% and its projections 0.5% faster
/// with 64 steps on Zen 4 (32 steps: 5-8% slower); a packed operand's block
/// is contiguous, and the default encoder's packed FFN GEMM ran 10% slower
/// with 64 steps than with 128: packed blocks are panelReduction's.
static constexpr int64_t kMaxUnpackedReduction = 64;

/// The bytes of the streamed operand one workgroup sweeps: the reduction
/// steps of a part (all of them without split-K) times the columns' loops
/// (whole, or their workgroup tiles).
static double sweptBytes(const KernelShape &shape, const CPUKernelSchedule &s) {
  auto extent = [&](int d) {
    return d < static_cast<int>(s.workgroup.size()) && s.workgroup[d] > 0
               ? s.workgroup[d]
               : shape.ranges[d];
  };
  double columns = 1;
  for (int d : shape.columnLoops)
    columns *= double(extent(d));
  if (shape.columnLoops.empty() && shape.nDim() >= 0)
    columns = double(extent(shape.nDim()));
  return double(shape.reductionSteps()) /
         double(std::max<int64_t>(1, s.split)) * columns *
         double(shape.elementBytes);
}

/// Split-K: a single long reduction whose streamed operand (reduction x the
/// columns' side, all of which every row tile of a workgroup sweeps) is
/// larger than half of L3 is cut into parts whose operand blocks fit in a
/// quarter of L3; the row tiles of a part then share its block in L3
/// instead of each reading the whole operand from memory. Parts keep at
/// least 256 reduction steps; at most 64 parts.
static int64_t chooseSplit(const CPUTarget &t, const KernelShape &shape) {
  int reductionLoops = 0;
  for (bool r : shape.reduction)
    reductionLoops += r;
  if (shape.kind != KernelKind::Contraction || reductionLoops != 1)
    return 1;
  int64_t steps = shape.reductionSteps();
  // All of it: the columns' loops whole, one part.
  double streamed = sweptBytes(shape, CPUKernelSchedule{});
  if (t.l3Bytes <= 0 || streamed <= double(t.l3Bytes) / 2)
    return 1;
  int64_t split = 1;
  while (split < 64 && streamed / double(split) > double(t.l3Bytes) / 4 &&
         steps % (split * 2) == 0 && steps / (split * 2) >= 256)
    split *= 2;
  return split;
}

/// A contraction with fewer rows than reduction steps whose workgroups each
/// sweep more of the streamed operand than L2 holds: E X, 256 rows of E
/// over n = 4096 tokens of X, 8 MiB at d = 512. Every workgroup reads the
/// whole operand from L3 again, for few rows, so such a kernel takes its
/// rows in as few workgroups as give every core a share (see
/// chooseSchedule). The projections' rows are tokens, more than their
/// reduction steps: they keep short row tiles (the length rules need them).
static bool sweepsFromL3(const CPUTarget &t, const KernelShape &shape,
                         const CPUKernelSchedule &s) {
  int m = shape.mDim();
  return shape.kind == KernelKind::Contraction && m >= 0 &&
         shape.ranges[m] < shape.reductionSteps() &&
         sweptBytes(shape, s) > double(t.l2Bytes);
}

/// The row tile that gives each core one workgroup of a short run (see
/// workgroupTiles), where the kernel's rows are tokens on its M loop, the
/// short run has fewer rows than reduction steps and each workgroup sweeps
/// more of the streamed operand than L2 holds (what sweepsFromL3 asks of
/// the whole kernel); 0 where that is not so or the tile is no larger than
/// `s`'s. A power of two that divides the rows, and no more rows than L2
/// holds of the broadcast operand and the output together: every panel of
/// the streamed operand sweeps that block again, and the output's lines pass
/// through L2 on their way out. AMD Zen 4 (1 MiB L2), 2 threads, the default
/// encoder's FFN GEMMs (512 x 2048 and 2048 x 512, 1.25 MiB a 128-row block)
/// in AVX2 mode at 4096 tokens, three rounds alternated: 128-row workgroups
/// 161 + 168 ms, 64-row 156 + 162.5 (the encoder 497 -> 488 ms); at 256
/// tokens within 1.5% either way; natively (4 x 64 tiles, a quarter of the
/// sweeps) within noise at both lengths.
static int64_t shortRunSweepRows(const CPUTarget &t, const KernelShape &shape,
                                 const CPUKernelSchedule &s) {
  int l = shape.lengthRowLoop, m = shape.mDim();
  if (shape.kind != KernelKind::Contraction || l < 0 || l != m ||
      l >= int(s.workgroup.size()) || s.workgroup[l] <= 0 || s.split > 1)
    return 0;
  int64_t range = shape.ranges[l];
  int64_t shortRows = shape.shortRows > 0 ? shape.shortRows : (range + 15) / 16;
  if (shortRows >= shape.reductionSteps() ||
      sweptBytes(shape, s) <= double(t.l2Bytes))
    return 0;
  int64_t rows = floorPow2(std::max<int64_t>(1, shortRows / t.cores));
  int64_t rowBytes =
      (shape.reductionSteps() + columnExtent(shape, s.workgroup)) *
      shape.elementBytes;
  rows = std::min(rows, floorPow2(std::max<int64_t>(1, t.l2Bytes / rowBytes)));
  if (rows <= s.workgroup[l] || range % rows != 0)
    return 0;
  return rows;
}

/// Packing (see CPUKernelSchedule::pack): worth it when the streamed block
/// one reduction block covers across the workgroup's columns (what every row
/// tile sweeps unpacked) takes at least half of L2, the packed panel of one
/// register tile's columns stays within half of L1, and the workgroup has
/// several row tiles to reuse it. Measured on AVX2 (AMD EPYC Zen 1, 2
/// threads, default encoder at n = 4096): the FFN GEMMs (128 x 2048 and
/// 128 x 512 blocks of 1 MiB and 256 KiB, 8 KiB panels) went from 48 and
/// 54 to 68 and 62 GFLOP/s of an 80 GFLOP/s peak, the encoder 15% faster;
/// the 512-wide projections stayed within noise. AVX2 only for now: no
/// AVX-512 machine was there to measure it on (its 4 x 64 tiles' panels are
/// too wide for the L1 bound anyway; --autotune tries the other choice).
static bool choosePack(const CPUTarget &t, const KernelShape &shape,
                       const CPUKernelSchedule &s) {
  if (shape.kind != KernelKind::Contraction)
    return false;
  // With AVX-512 only a sweep from L3 (E X) was measured: packed, its
  // panels in half of L1 (2 workgroups by columns), 2.66-2.72 -> 2.39-2.43
  // ms on Zen 5 (8 x 32); on Zen 4 (4 x 64 in 256-bit halves, 64-step
  // panels) 5.63-5.70 -> 5.36-5.53 ms, three rounds alternated.
  if (t.isa != "avx2" && !(t.isa == "avx512" && sweepsFromL3(t, shape, s)))
    return false;
  ScheduleEstimate e = estimate(t, shape, s);
  int64_t panel = blockSteps(shape, s) * s.columns * shape.elementBytes;
  return rowExtent(shape, s.workgroup) >= 2 * s.rows &&
         (2 * e.l2Bytes >= t.l2Bytes || sweepsFromL3(t, shape, s)) &&
         2 * panel <= t.l1Bytes;
}

/// The reduction block of a packed panel that takes half of L1: `columns`
/// wide, a power of two between 16 and 512 steps.
static int64_t panelReduction(const CPUTarget &t, const KernelShape &shape,
                              int64_t columns) {
  int64_t bound =
      t.l1Bytes / (2 * shape.elementBytes * std::max<int64_t>(1, columns));
  return std::clamp<int64_t>(floorPow2(std::max<int64_t>(bound, 1)), 16, 512);
}

/// A weight packed once per session (KernelShape::streamedWeight): packed
/// wherever its panels tile it (the columns a multiple of the register
/// tile's, each workgroup's starting at a panel), its panels cost a run
/// nothing, and they are contiguous: a register tile then takes the whole
/// reduction at once where a panel fits half of L2 (a power-of-two block of
/// it otherwise), so that its accumulators stay in registers from their
/// init (the bias, broadcast) to the end. Zen 5, 2 threads, the bench
/// encoder (n = 4096, k = 256), three rounds alternated: AVX-512 (13 x 32
/// tiles, FFN otherwise unpacked in 64-step blocks) 224-225 -> 213-218 ms,
/// its FFN GEMMs 463 -> 492-508 GFLOP/s (90-93% of the peak); AVX2 mode
/// (6 x 16, packed in 256-step blocks per workgroup) 444-445 -> 427-432.
static void prepackedWeight(const CPUTarget &t, const KernelShape &shape,
                            CPUKernelSchedule &s) {
  int n = shape.nDim();
  if (!shape.streamedWeight || n < 0 || s.columns <= 0 ||
      n >= static_cast<int>(s.workgroup.size()))
    return;
  int64_t columns = shape.ranges[n], wg = s.workgroup[n];
  // A head's columns in one panel are still worth packing: contiguous
  // there, a row of the whole weight apart in it.
  bool heads =
      std::any_of(shape.columnLoops.begin(), shape.columnLoops.end(),
                  [&](int d) { return d != n && shape.ranges[d] > 1; });
  if (columns < s.columns || (columns == s.columns && !heads) ||
      columns % s.columns != 0 || (wg != 0 && wg % s.columns != 0))
    return;
  s.pack = true;
  int64_t steps = shape.reductionSteps();
  int64_t panelBytes = steps * s.columns * shape.elementBytes;
  if (2 * panelBytes <= t.l2Bytes) {
    s.reduction = 0;
    return;
  }
  s.reduction = floorPow2(
      std::max<int64_t>(1, t.l2Bytes / (2 * s.columns * shape.elementBytes)));
}

/// The columns one workgroup covers: the product of the column loops'
/// workgroup tiles (a whole loop where it is not tiled).
static int64_t workgroupColumns(const KernelShape &shape,
                                const CPUKernelSchedule &s) {
  int64_t columns = 1;
  for (int d : shape.columnLoops)
    columns *= d < int(s.workgroup.size()) && s.workgroup[d] > 0
                   ? s.workgroup[d]
                   : shape.ranges[d];
  return columns;
}

/// AMX row blocks: a contraction on AMX tiles over a prepacked weight takes
/// its rows in workgroups of up to 256 (from 32), so that every panel of
/// the weight a workgroup sweeps from L3 serves that many rows. AMX reads
/// the weight about eight times as fast as FMAs do, and a tile load cannot
/// run ahead of the products that read its register, so 32-row workgroups
/// left the tiles waiting on L3. Bounded by L2 (the rows of the broadcast
/// operand and of the f32 results, every panel sweeps them). An attention
/// core on AMX takes 128 queries a workgroup (from 64): each workgroup
/// copies its head's values into pairs of slots once, and the copy is the
/// same for every workgroup of the head. Both bounded by the workgroups
/// the cores need (minWorkgroups) and, where rows are tokens, by the short
/// run's share of a core (its cost still follows the real tokens). Xeon
/// with AMX (2 MiB L2), 2 threads, the default bf16 encoder, per layer:
/// FFN down 4.4 -> 3.9 ms (128 rows; 3.8 with 256, 5.2 with 512), Q
/// projection 1.8 -> 1.5, output projection 1.8 -> 1.6; the core 5.75 ->
/// 4.4 ms (128 and 256 queries alike, 4.8 with 512).
static void amxRowBlocks(const CPUTarget &t, const KernelShape &shape,
                         CPUKernelSchedule &s, int64_t minWorkgroups) {
  int m = shape.mDim();
  if (shape.engine.rfind("amx", 0) != 0 || s.split > 1 || m < 0 ||
      m >= int(s.workgroup.size()) || s.workgroup[m] <= 0)
    return;
  int64_t rows = 0;
  if (shape.kind == KernelKind::Contraction && shape.streamedWeight &&
      s.pack) {
    int64_t rowBytes = shape.reductionSteps() * shape.elementBytes +
                       workgroupColumns(shape, s) * int64_t(4);
    rows = std::min<int64_t>(
        256, floorPow2(std::max<int64_t>(1, t.l2Bytes / rowBytes)));
  } else if (shape.kind == KernelKind::AttentionCore) {
    rows = 128;
  } else {
    return;
  }
  // The workgroups the other loops make, times the rows' tiles.
  int64_t range = shape.ranges[m], others = 1;
  for (size_t d = 0; d < s.workgroup.size(); ++d)
    if (int(d) != m && s.workgroup[d] > 0)
      others *= (shape.ranges[d] + s.workgroup[d] - 1) / s.workgroup[d];
  rows = std::min(rows, floorPow2(std::max<int64_t>(
                            1, range * others / minWorkgroups)));
  if (shape.lengthRowLoop == m) {
    int64_t shortRows = shape.shortRows > 0 ? shape.shortRows : range / 16;
    rows = std::min(rows,
                    floorPow2(std::max<int64_t>(1, shortRows / t.cores)));
  }
  if (rows <= s.workgroup[m] || rows % 32 != 0 || range % rows != 0)
    return;
  s.workgroup[m] = rows;
}

/// AMX reduction blocks: a contraction on AMX tiles whose streamed operand
/// is not packed (E X's tokens) takes 256 reduction steps a block (from
/// kMaxUnpackedReduction's 64), bounded by half of L2 for the block's pairs
/// of the streamed operand. Each block loads its register tiles'
/// accumulators and stores them again, four tiles of 1 KiB each per two
/// steps of 16 pairs at 64 steps, eight times fewer at 256; the block's
/// pairs (copied once a block) stay in L2. Xeon with AMX, 2 threads, the
/// default bf16 encoder's E X per layer: 1.85 ms with 64 steps, 1.64 with
/// 128, 1.40-1.45 with 256 and 512, 1.65 with 1024.
///
/// The attention core on AMX likewise: its blocks cut `P V`'s reduction
/// over the slots (and `Q K^T`'s over the channels, 64 or fewer), each
/// loading and storing the output tile's accumulators and copying its
/// values into pairs, so its k slots in one block up to 256 (in blocks of
/// 256 where they divide k; else 64 as on the FMA path). Same Xeon, the
/// default bf16 encoder (k = 256), four layers' cores, rounds in turn:
/// 4.28-4.49 ms a core with 64 slots a block, 4.19-4.37 with 128, 4.03-4.26
/// with 256.
static void amxReductionBlocks(const CPUTarget &t, const KernelShape &shape,
                               CPUKernelSchedule &s) {
  if (shape.engine.rfind("amx", 0) != 0 || s.reduction <= 0)
    return;
  if (shape.kind == KernelKind::AttentionCore) {
    int64_t block = shape.coreK <= 256 ? shape.coreK : 256;
    if (block > s.reduction && shape.coreK % block == 0)
      s.reduction = block;
    return;
  }
  if (shape.kind != KernelKind::Contraction || s.pack)
    return;
  int64_t steps = shape.reductionSteps() / std::max<int64_t>(1, s.split);
  int64_t bound = floorPow2(std::max<int64_t>(
      1, t.l2Bytes / (2 * workgroupColumns(shape, s) * shape.elementBytes)));
  int64_t block = std::min<int64_t>(256, bound);
  if (block <= s.reduction || steps % block != 0)
    return;
  s.reduction = block;
}

CPUKernelSchedule chooseSchedule(const CPUTarget &t, const KernelShape &shape) {
  CPUKernelSchedule s;
  int64_t lanes = std::max<int64_t>(1, t.lanes());
  int64_t minWorkgroups = std::max<int64_t>(8, 4 * t.cores);
  s.workgroup = workgroupTiles(shape, /*rowTile=*/32, minWorkgroups,
                               /*minInner=*/std::min<int64_t>(16, lanes),
                               /*minShortWorkgroups=*/t.cores);
  if (shape.kind == KernelKind::Other) {
    // Elementwise work and row reductions: a few rows of two vectors.
    int64_t colsMax = columnExtent(shape, s.workgroup);
    s.columns = largestDivisorAtMost(colsMax, 2 * lanes);
    s.rows = largestDivisorAtMost(rowExtent(shape, s.workgroup), 4);
    s.reduction = 0;
    return s;
  }
  // The workgroup rows and the register tile together: 32-row workgroups
  // unless another height lets the best register tile cover the rows with
  // less of a partial tile (6-row AVX2 tiles: 30 + 2 rows of 32, 60 + 4 of
  // 64) and still gives enough workgroups.
  double bestEff = -1;
  CPUKernelSchedule best = s;
  // Rows bounded by the lengths: a short run spread over the cores by
  // smaller row tiles (first) or by columns alone, where that keeps a
  // better register tile (AVX2's 6 x 16 needs more than 8 rows).
  for (auto [rowTile, minShortRows] : {std::pair<int64_t, int64_t>{32, 8},
                                       {32, 32},
                                       {64, 8},
                                       {64, 64},
                                       {16, 8},
                                       {16, 16}}) {
    CPUKernelSchedule c = s;
    c.workgroup =
        workgroupTiles(shape, rowTile, minWorkgroups,
                       std::min<int64_t>(16, lanes), t.cores, minShortRows);
    if (rowTile != 32 && estimate(t, shape, c).workgroups < minWorkgroups)
      continue;
    auto tiles = registerTileCandidates(t, shape, c.workgroup);
    c.rows = tiles.front().first;
    c.columns = tiles.front().second;
    double eff = estimate(t, shape, c).efficiency;
    // Equal efficiency: the register tile with fewer loads per FMA (the
    // attention core's query tile bounds its columns: 64-row workgroups
    // allow 4 x 64 tiles, 4% faster on Zen 4 than 32 rows' 8 x 32).
    bool fewerLoads =
        std::fabs(eff - bestEff) <= 0.01 &&
        loadsPerFma(t, c.rows, c.columns) <
            loadsPerFma(t, best.rows, best.columns) - 1e-9;
    if (eff > bestEff + 0.01 || fewerLoads) {
      bestEff = std::max(eff, bestEff);
      best = c;
    }
  }
  s = best;
  s.reduction = chooseReduction(t, shape, s.rows, s.columns);
  s.split = chooseSplit(t, shape);
  // A kernel that sweeps its streamed operand from L3 (E X): each core's
  // rows in one workgroup (with split-K, the parts share the cores), so
  // that the operand is read once a core (a part), not once for every 16
  // or 32 rows; on AVX2 packed, each panel then serving every row tile of
  // the workgroup, in blocks of half of L1. AMD Zen 4, 2 threads, the
  // bench layer's E X (256 x 512 over 4096 tokens), minima of 4 x 10 runs
  // alternated: in AVX2 mode 16 workgroups unpacked (64 steps) 8.0 ms, 2
  // unpacked 7.4, 2 packed 128 steps 5.7, 256 steps 5.5 (195 GFLOP/s, 85%
  // of the FMA peak; the layer 42.9 -> 40.6 ms); AVX-512 8 -> 2 workgroups
  // 5.65 -> 5.43 ms.
  // Sequences of different lengths (E X's reduction stops at each one's):
  // every sequence its share of the cores, not one sequence a core. Zen 5,
  // 2 threads, the bench layer for batch 4 at lengths 4096, 512, 512, 256:
  // E X 5.26 ms in 4 workgroups (the long sequence on one core), 3.33 ms
  // for the four run alone.
  //
  // The cores share the kernel by its columns where it has at least as
  // many columns as rows: each core then sweeps (and packs) only its
  // columns of the streamed operand and reads the whole broadcast one, K
  // (M + N / cores) against K (M / cores + N) by rows, and no two cores
  // pack the same panel. Zen 5, 2 threads, the bench layer's E X (256 rows,
  // 512 columns), two rounds: AVX2 mode 4.73 -> 4.45-4.46 ms (227 -> 241
  // GFLOP/s), AVX-512 (also packed, below) 2.69-2.72 -> 2.39-2.42 ms.
  bool widened = false;
  if (sweepsFromL3(t, shape, s)) {
    int m = shape.mDim(), n = shape.nDim();
    int64_t parts = std::max<int64_t>(1, s.split);
    int b = shape.boundedBatchLoop;
    int64_t sequences =
        b >= 0 && b < int(shape.ranges.size()) && b != m ? shape.ranges[b] : 1;
    int64_t minInner = std::min<int64_t>(16, lanes);
    s.workgroup = workgroupTiles(shape, /*rowTile=*/shape.ranges[m],
                                 /*minWorkgroups=*/sequences *
                                     ((t.cores + parts - 1) / parts),
                                 minInner);
    // The rows' split, if any, becomes the columns'.
    int64_t rows = s.workgroup[m] == 0 ? shape.ranges[m] : s.workgroup[m];
    int64_t factor = shape.ranges[m] / rows;
    if (factor > 1 && n >= 0 && n != m && s.workgroup[n] == 0 &&
        shape.ranges[n] >= shape.ranges[m] &&
        shape.ranges[n] % (factor * minInner) == 0) {
      s.workgroup[m] = 0;
      s.workgroup[n] = shape.ranges[n] / factor;
    }
    widened = true;
  } else if (int64_t rows = shortRunSweepRows(t, shape, s)) {
    // The same for a short run: a kernel over tokens whose short run (see
    // workgroupTiles) has fewer rows than reduction steps and sweeps more
    // than L2 for each of them (the FFN's 4 MiB weights at 256 of 4096
    // tokens) takes the short run's rows a core in a workgroup. Zen 5, 2
    // threads, the default encoder's FFN GEMMs at 256 of 4096 tokens: 6.54-
    // 6.63 ms with 32-row workgroups, 5.83-5.93 with 128 (the n = 256
    // artifact's 2 workgroups: 5.85); at 4096 tokens 80-85 ms either way.
    s.workgroup[shape.lengthRowLoop] = rows;
    widened = true;
  }
  // Wider workgroups: the register tile and its block chosen again for them.
  if (widened) {
    auto tiles = registerTileCandidates(t, shape, s.workgroup);
    s.rows = tiles.front().first;
    s.columns = tiles.front().second;
    s.reduction = chooseReduction(t, shape, s.rows, s.columns);
  }
  s.pack = choosePack(t, shape, s);
  // A packed panel is contiguous and read from L1 by every row tile: its
  // blocks take half of L1 (AVX2 6 x 16: 256 steps). The default encoder's
  // FFN up-projection in AVX2 mode on Zen 4, 4 pairs alternated: the
  // encoder 0.6-2.2% faster than with 128 steps (the L1 bound of both
  // operands), which in turn was 10% faster than 64.
  s.reduction = s.pack ? panelReduction(t, shape, s.columns)
                       : std::min(s.reduction, kMaxUnpackedReduction);
  prepackedWeight(t, shape, s);
  amxRowBlocks(t, shape, s, minWorkgroups);
  amxReductionBlocks(t, shape, s);
  return s;
}

std::vector<CPUKernelSchedule> candidates(const CPUTarget &t,
                                          const KernelShape &shape,
                                          const CPUKernelSchedule &base,
                                          int round) {
  std::vector<CPUKernelSchedule> out;
  auto add = [&](const CPUKernelSchedule &c) {
    if (c == base || !validate(shape, c).empty())
      return;
    for (const CPUKernelSchedule &o : out)
      if (o == c)
        return;
    out.push_back(c);
  };
  if (shape.kind == KernelKind::Other)
    return out;
  if (round == 0) {
    auto tiles = registerTileCandidates(t, shape, base.workgroup);
    for (size_t i = 0; i < tiles.size() && out.size() < 4; ++i) {
      CPUKernelSchedule c = base;
      c.rows = tiles[i].first;
      c.columns = tiles[i].second;
      add(c);
    }
  } else if (round == 1) {
    for (int64_t kc : {base.reduction / 2, base.reduction * 2}) {
      if (kc < 8 || kc > 1024)
        continue;
      CPUKernelSchedule c = base;
      c.reduction = kc;
      add(c);
    }
    // Packing changes which block stays in which cache, as the reduction
    // block does: the other choice for contractions.
    if (shape.kind == KernelKind::Contraction) {
      CPUKernelSchedule c = base;
      c.pack = !base.pack;
      add(c);
    }
  } else if (round == 2) {
    int m = shape.mDim();
    if (m < 0 || m >= static_cast<int>(base.workgroup.size()))
      return out;
    int64_t cur = base.workgroup[m] == 0 ? shape.ranges[m] : base.workgroup[m];
    // Each height with the base's register tile, then with the register
    // tiles the cost model ranks first for it (its rows cover the height
    // differently): the two rounds one at a time missed the pair. Xeon VM
    // with AMX, f32 encoder, 2 threads: the Q and output projections' 8 x 32
    // tiles in 32-row workgroups -> 64 rows kept 8 x 32 (round 0 had tried
    // 13 and 14 rows in 32: peeled, 3% at best); 64 rows with 13 x 32 (4
    // tiles and a 12-row one) ran them 8-10% faster, alternated.
    for (int64_t rows : {cur / 2, cur * 2}) {
      if (rows < base.rows || rows > shape.ranges[m] ||
          shape.ranges[m] % rows != 0)
        continue;
      CPUKernelSchedule c = base;
      c.workgroup[m] = rows;
      if (estimate(t, shape, c).workgroups < 2 * t.cores)
        continue;
      add(c);
      // (Not on AMX, whose tiles its instructions fix.)
      if (shape.kind != KernelKind::Contraction ||
          shape.engine.rfind("amx", 0) == 0)
        continue;
      auto tiles = registerTileCandidates(t, shape, c.workgroup);
      for (size_t i = 0; i < tiles.size() && i < 2; ++i) {
        CPUKernelSchedule r = c;
        r.rows = tiles[i].first;
        r.columns = tiles[i].second;
        if (r.rows <= rows &&
            estimate(t, shape, r).registers <= t.vectorRegisters)
          add(r);
      }
    }
  }
  return out;
}

std::string validate(const KernelShape &shape, const CPUKernelSchedule &s) {
  if (s.workgroup.size() != shape.ranges.size())
    return "the workgroup tile has " + std::to_string(s.workgroup.size()) +
           " sizes but the kernel has " + std::to_string(shape.ranges.size()) +
           " loops";
  for (size_t i = 0; i < s.workgroup.size(); ++i) {
    int64_t tile = s.workgroup[i], range = shape.ranges[i];
    if (tile < 0 || tile > range)
      return "workgroup tile " + std::to_string(tile) + " of loop " +
             std::to_string(i) + " is outside [0, " + std::to_string(range) +
             "]";
    if (tile > 0 && range % tile != 0)
      return "workgroup tile " + std::to_string(tile) + " of loop " +
             std::to_string(i) + " does not divide its " +
             std::to_string(range) + " iterations";
    if (i < shape.reduction.size() && shape.reduction[i] && tile != 0 &&
        tile != range)
      return "loop " + std::to_string(i) +
             " is a reduction: its workgroup tile must be 0 (whole)";
  }
  // A query tile's softmax covers every value column: the core's
  // workgroups keep its value width whole.
  if (shape.kind == KernelKind::AttentionCore && !s.workgroup.empty() &&
      s.workgroup.back() != 0 && s.workgroup.back() != shape.ranges.back())
    return "workgroup tile " + std::to_string(s.workgroup.back()) +
           " of loop " + std::to_string(s.workgroup.size() - 1) +
           " splits the attention core's value width (" +
           std::to_string(shape.ranges.back()) +
           "): its workgroups keep every column (0)";
  if (s.rows < 1 || s.rows > 64)
    return "register rows " + std::to_string(s.rows) + " outside [1, 64]";
  if (s.columns < 1 || s.columns > 256)
    return "register columns " + std::to_string(s.columns) +
           " outside [1, 256]";
  if (s.reduction < 0 || s.reduction > (int64_t(1) << 20))
    return "reduction block " + std::to_string(s.reduction) +
           " outside [0, 2^20]";
  if (s.split < 1 || s.split > 4096)
    return "split " + std::to_string(s.split) + " outside [1, 4096]";
  if (s.split > 1) {
    int reductionLoops = 0;
    for (bool r : shape.reduction)
      reductionLoops += r;
    if (reductionLoops != 1)
      return "split " + std::to_string(s.split) +
             " needs exactly one reduction loop; the kernel has " +
             std::to_string(reductionLoops);
    if (shape.reductionSteps() % s.split != 0)
      return "split " + std::to_string(s.split) + " does not divide the " +
             std::to_string(shape.reductionSteps()) + " reduction steps";
  }
  return "";
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

static Json scheduleJson(const CPUKernelSchedule &s) {
  Json j;
  j["workgroup"] = s.workgroup;
  j["register"] = {s.rows, s.columns};
  j["reduction"] = s.reduction;
  j["pack"] = s.pack;
  if (s.split != 1)
    j["split"] = s.split;
  return j;
}

std::string scheduleToJson(const CPUKernelSchedule &s) {
  return scheduleJson(s).dump();
}

static Json recordJson(const ScheduleRecord &r) {
  Json j;
  j["key"] = r.key;
  if (!r.kernel.empty())
    j["kernel"] = r.kernel;
  const KernelShape &shape = r.shape;
  j["kind"] = kernelKindName(shape.kind);
  j["loops"] = shape.ranges;
  j["iterators"] = iteratorString(shape);
  j["output_dims"] = shape.outputDims;
  if (shape.coreK > 0)
    j["core_k"] = shape.coreK;
  if (shape.mLoop >= 0)
    j["m_loop"] = shape.mLoop;
  if (shape.nLoop >= 0)
    j["n_loop"] = shape.nLoop;
  if (!shape.columnLoops.empty())
    j["column_loops"] = shape.columnLoops;
  j["flops"] = shape.flops;
  if (!shape.engine.empty())
    j["engine"] = shape.engine;
  j["workgroups"] = r.workgroups;
  j["schedule"] = scheduleJson(r.schedule);
  j["source"] = r.source;
  if (r.hasModelSchedule)
    j["model_schedule"] = scheduleJson(r.modelSchedule);
  if (r.modelMs >= 0)
    j["model_ms"] = r.modelMs;
  if (r.tunedMs >= 0)
    j["tuned_ms"] = r.tunedMs;
  Json e;
  e["registers"] = r.estimate.registers;
  e["accumulators"] = r.estimate.accumulators;
  e["l1_bytes"] = r.estimate.l1Bytes;
  e["l2_bytes"] = r.estimate.l2Bytes;
  e["efficiency"] = std::round(r.estimate.efficiency * 1000) / 1000;
  j["estimate"] = e;
  return j;
}

std::string recordToJson(const ScheduleRecord &r) {
  return recordJson(r).dump();
}

std::string scheduleFileToJson(const ScheduleFile &f) {
  Json j;
  j["format"] = kScheduleFormat;
  j["version"] = kScheduleFormatVersion;
  if (f.hasTarget)
    j["target"] = Json::parse(toJson(f.target));
  j["kernels"] = Json::array();
  for (const ScheduleRecord &r : f.kernels)
    j["kernels"].push_back(recordJson(r));
  return j.dump(2) + "\n";
}

static std::string parseSchedule(const nlohmann::json &j,
                                 const std::string &where,
                                 CPUKernelSchedule &s) {
  if (!j.is_object())
    return where + ": 'schedule' must be an object";
  auto intArray = [&](const char *key,
                      std::vector<int64_t> &out) -> std::string {
    const nlohmann::json &a = j[key];
    if (!a.is_array())
      return where + ": '" + key + "' must be an array of integers";
    out.clear();
    for (const nlohmann::json &v : a) {
      if (!v.is_number_integer())
        return where + ": '" + key + "' must be an array of integers";
      out.push_back(v.get<int64_t>());
    }
    return "";
  };
  if (j.contains("workgroup"))
    if (std::string err = intArray("workgroup", s.workgroup); !err.empty())
      return err;
  if (j.contains("register")) {
    std::vector<int64_t> reg;
    if (std::string err = intArray("register", reg); !err.empty())
      return err;
    if (reg.size() != 2)
      return where + ": 'register' must be [rows, columns]";
    s.rows = reg[0];
    s.columns = reg[1];
  }
  if (j.contains("reduction")) {
    if (!j["reduction"].is_number_integer())
      return where + ": 'reduction' must be an integer";
    s.reduction = j["reduction"].get<int64_t>();
  }
  if (j.contains("pack")) {
    if (!j["pack"].is_boolean())
      return where + ": 'pack' must be true or false";
    s.pack = j["pack"].get<bool>();
  }
  if (j.contains("split")) {
    if (!j["split"].is_number_integer())
      return where + ": 'split' must be an integer";
    s.split = j["split"].get<int64_t>();
  }
  return "";
}

std::string parseScheduleFile(const std::string &text, ScheduleFile &out) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error &e) {
    // "[json.exception.parse_error.101] parse error at line L, column C:
    // ...": where, and what the parser expected (say, a second document
    // after the first, as when other output was redirected into the file).
    std::string why = e.what();
    if (size_t at = why.find("] "); at != std::string::npos)
      why = why.substr(at + 2);
    // The bytes it last read, newlines escaped, say less than the line.
    if (size_t from = why.find("; last read: '"); from != std::string::npos)
      if (size_t to = why.find("'; ", from + 14); to != std::string::npos)
        why.erase(from, to + 1 - from);
    return "schedule file: not valid JSON (" + why + ")";
  }
  if (!j.is_object())
    return "schedule file: the top level must be an object";
  if (j.contains("format") &&
      (!j["format"].is_string() || j["format"] != kScheduleFormat))
    return std::string("schedule file: 'format' must be \"") +
           kScheduleFormat + "\"";
  if (j.contains("version") &&
      (!j["version"].is_number_integer() ||
       j["version"].get<int64_t>() != kScheduleFormatVersion))
    return "schedule file: 'version' must be " +
           std::to_string(kScheduleFormatVersion);
  ScheduleFile f;
  if (j.contains("target")) {
    if (std::string err = fromJson(j["target"].dump(), f.target);
        !err.empty())
      return "schedule file: " + err;
    f.hasTarget = true;
  }
  if (!j.contains("kernels") || !j["kernels"].is_array())
    return "schedule file: 'kernels' must be an array";
  size_t index = 0;
  for (const nlohmann::json &k : j["kernels"]) {
    std::string where = "schedule file: kernels[" + std::to_string(index++) +
                        "]";
    if (!k.is_object())
      return where + ": must be an object";
    ScheduleRecord r;
    if (!k.contains("key") || !k["key"].is_string() ||
        k["key"].get<std::string>().empty())
      return where + ": 'key' (a non-empty string) is required";
    r.key = k["key"].get<std::string>();
    where += " ('" + r.key + "')";
    if (k.contains("kernel") && k["kernel"].is_string())
      r.kernel = k["kernel"].get<std::string>();
    if (k.contains("kind") && k["kind"].is_string() &&
        !parseKernelKind(k["kind"].get<std::string>(), r.shape.kind))
      return where + ": unknown 'kind'";
    if (!k.contains("schedule"))
      return where + ": 'schedule' is required";
    r.schedule.workgroup.clear();
    if (std::string err = parseSchedule(k["schedule"], where, r.schedule);
        !err.empty())
      return err;
    if (k.contains("source") && k["source"].is_string())
      r.source = k["source"].get<std::string>();
    if (k.contains("model_ms") && k["model_ms"].is_number())
      r.modelMs = k["model_ms"].get<double>();
    if (k.contains("tuned_ms") && k["tuned_ms"].is_number())
      r.tunedMs = k["tuned_ms"].get<double>();
    if (k.contains("model_schedule")) {
      r.modelSchedule.workgroup.clear();
      if (std::string err =
              parseSchedule(k["model_schedule"], where, r.modelSchedule);
          !err.empty())
        return err;
      r.hasModelSchedule = true;
    }
    KernelShape &shape = r.shape;
    if (k.contains("loops") && k["loops"].is_array())
      for (const nlohmann::json &v : k["loops"])
        if (v.is_number_integer())
          shape.ranges.push_back(v.get<int64_t>());
    // One flag per loop; loops the iterators leave out are parallel.
    if (k.contains("iterators") && k["iterators"].is_string())
      for (char c : k["iterators"].get<std::string>())
        shape.reduction.push_back(c == 'R');
    shape.reduction.resize(shape.ranges.size(), false);
    if (k.contains("output_dims") && k["output_dims"].is_array())
      for (const nlohmann::json &v : k["output_dims"])
        if (v.is_number_integer())
          shape.outputDims.push_back(v.get<int>());
    if (k.contains("core_k") && k["core_k"].is_number_integer())
      shape.coreK = k["core_k"].get<int64_t>();
    if (k.contains("m_loop") && k["m_loop"].is_number_integer())
      shape.mLoop = k["m_loop"].get<int>();
    if (k.contains("n_loop") && k["n_loop"].is_number_integer())
      shape.nLoop = k["n_loop"].get<int>();
    if (k.contains("column_loops") && k["column_loops"].is_array())
      for (const nlohmann::json &v : k["column_loops"])
        if (v.is_number_integer())
          shape.columnLoops.push_back(v.get<int>());
    if (k.contains("flops") && k["flops"].is_number())
      shape.flops = k["flops"].get<double>();
    if (k.contains("engine") && k["engine"].is_string())
      shape.engine = k["engine"].get<std::string>();
    if (k.contains("workgroups") && k["workgroups"].is_number_integer())
      r.workgroups = k["workgroups"].get<int64_t>();
    f.kernels.push_back(std::move(r));
  }
  out = std::move(f);
  return "";
}

std::string iteratorString(const KernelShape &shape) {
  std::string s;
  for (bool r : shape.reduction)
    s += r ? 'R' : 'p';
  return s;
}

static std::string joinInts(const std::vector<int64_t> &v,
                            const char *sep = ",") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

std::string formatScheduleTable(const ScheduleFile &f) {
  std::ostringstream os;
  if (f.hasTarget)
    os << "target: " << describe(f.target) << "\n";
  char line[512];
  std::snprintf(line, sizeof line,
                "%-22s %-15s %-24s %-16s %-7s %5s %4s %-10s %-8s %s\n",
                "kernel", "kind", "loops", "workgroup", "reg", "red", "wgs",
                "source", "regs/eff", "engine");
  os << line;
  for (const ScheduleRecord &r : f.kernels) {
    // "+p": the streamed operand is packed.
    std::string reg = std::to_string(r.schedule.rows) + "x" +
                      std::to_string(r.schedule.columns) +
                      (r.schedule.pack ? "+p" : "");
    std::string est = std::to_string(r.estimate.registers) + "/" +
                      std::to_string(int(std::lround(r.estimate.efficiency * 100))) +
                      "%";
    // The unit bf16 products run on ("-": f32 products).
    std::string engine = r.shape.engine.empty() ? "-" : r.shape.engine;
    std::snprintf(line, sizeof line,
                  "%-22s %-15s %-24s %-16s %-7s %5lld %4lld %-10s %-8s %s\n",
                  // A kernel split into the parts listed after it.
                  r.kernel.empty() && r.schedule.split > 1
                      ? "(split in parts)"
                      : r.kernel.c_str(),
                  kernelKindName(r.shape.kind),
                  joinInts(r.shape.ranges, "x").c_str(),
                  joinInts(r.schedule.workgroup).c_str(), reg.c_str(),
                  static_cast<long long>(r.schedule.reduction),
                  static_cast<long long>(r.workgroups), r.source.c_str(),
                  est.c_str(), engine.c_str());
    os << line;
    if (r.hasModelSchedule && r.modelSchedule != r.schedule) {
      os << "    model pick: workgroup " << joinInts(r.modelSchedule.workgroup)
         << ", register " << r.modelSchedule.rows << "x"
         << r.modelSchedule.columns << (r.modelSchedule.pack ? " packed" : "")
         << ", reduction " << r.modelSchedule.reduction;
      if (r.modelMs >= 0 && r.tunedMs >= 0) {
        char t[96];
        std::snprintf(t, sizeof t, "; %.3f ms -> %.3f ms", r.modelMs,
                      r.tunedMs);
        os << t;
      }
      os << "\n";
    }
  }
  return os.str();
}

} // namespace linformer::schedule
