//===- Schedule.h - CPU kernel schedules and their cost model ---*- C++ -*-===//
//
// A schedule says how one kernel is tiled: its workgroup tile (one size per
// loop of the kernel's root op), its register tile (rows x elements of the
// accumulator block a contraction keeps in vector registers), its reduction
// block (how many steps of the reduction loops one cache block covers) and
// whether the streamed operand is packed. This file holds the schedule as
// plain data, the shape facts a schedule is chosen from, the cost model that
// chooses it from a CPUTarget, the candidates the autotuner tries around that
// choice, and the schedule file (JSON) that --print-schedule writes and
// --schedule / the tuning cache read. No MLIR: the compiler fills KernelShape
// from the IR (SelectSchedules.cpp) and turns schedules into attributes.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_SCHEDULE_SCHEDULE_H
#define LINFORMER_COMPILER_SCHEDULE_SCHEDULE_H

#include "compiler/Schedule/Target.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace linformer::schedule {

/// What kind of work a kernel's root does.
enum class KernelKind {
  /// out[...] += a * b over one or more reduction loops (projections).
  Contraction,
  /// linformer.attention_core: scores, softmax, weighted sum per query tile.
  AttentionCore,
  /// Everything else (elementwise, row reductions, pooling, LayerNorm).
  Other,
};
const char *kernelKindName(KernelKind kind);
/// The kind spelled `name` (as kernelKindName spells it); false if none.
bool parseKernelKind(std::string_view name, KernelKind &out);

/// The facts about a kernel's root op that its schedule depends on.
struct KernelShape {
  KernelKind kind = KernelKind::Other;
  /// Static trip count of each loop of the root (the iteration domain; for
  /// the attention core: [b, h, n, d] of its result).
  std::vector<int64_t> ranges;
  /// Per loop: true for a reduction loop.
  std::vector<bool> reduction;
  /// The loops that index the root's result, outermost first.
  std::vector<int> outputDims;
  /// Attention core: the projected length k (the scores' width).
  int64_t coreK = 0;
  /// Contractions: the M loop (rows of a register tile) and the N loop
  /// (its columns) as inferred from the indexing maps; -1 = take the
  /// result's second-innermost and innermost loops.
  int mLoop = -1, nLoop = -1;
  /// Contractions: every loop on the columns' side (the N loops: in the
  /// streamed operand and the result, not in the broadcast operand).
  /// Workgroups keep them whole.
  std::vector<int> columnLoops;
  /// A parallel loop over tokens whose padded part the kernel may skip (its
  /// result's padding is read by no one): workgroups tile it, so that the
  /// runtime's length rule can leave the tiles past the lengths out; -1 =
  /// none.
  int tokenLoop = -1;
  /// Loops over the sequences and over their rows (tokens, or pooled slots
  /// of several tokens) whose workgroups past the lengths the runtime
  /// leaves out (the manifest's rows rule); -1 = none. A short run keeps
  /// the first row tiles only.
  int lengthBatchLoop = -1, lengthRowLoop = -1;
  /// Rows of the short run planned for (0: a 16th of the rows).
  int64_t shortRows = 0;
  /// A reduction over tokens that stops at each sequence's length (E X):
  /// the loop over its sequences, whose lengths differ, so that each takes
  /// a share of the cores; -1 = none.
  int boundedBatchLoop = -1;
  /// Contractions: the streamed operand is a `[K, N]` weight that the
  /// pipeline packs once per session when the schedule packs it
  /// (linformer-cpu-prepack-weights): its panels cost a run nothing. Read
  /// split per head (`[K, H, C]`: a column loop besides N), it is packed
  /// even where one panel spans a head's C columns, whose rows lie N apart
  /// in the weight.
  bool streamedWeight = false;
  /// Bytes per element of the operands.
  int64_t elementBytes = 4;
  /// bf16 products: the unit they run on ("fma", "dot", "amx", with
  /// ", emulated" where the target lacks it; linformer.bf16_engine); empty
  /// for f32 products.
  std::string engine;
  /// Multiply-add FLOPs (2 per multiply-add) the kernel executes.
  double flops = 0;

  /// The output's innermost and second-innermost loops (N and M of a
  /// contraction), or -1.
  int nDim() const;
  int mDim() const;
  /// Product of the reduction loops' trip counts.
  int64_t reductionSteps() const;
};

/// How one kernel is tiled.
struct CPUKernelSchedule {
  /// Workgroup tile per loop of the root; 0 = the whole loop. Reduction
  /// loops are always whole (0).
  std::vector<int64_t> workgroup;
  /// Register tile: rows x columns (elements, a multiple of the vector
  /// lanes where the columns allow).
  int64_t rows = 8;
  int64_t columns = 32;
  /// Steps of all reduction loops together in one cache block; 0 = none.
  int64_t reduction = 64;
  /// Pack the streamed operand: the register tiles' column loop goes
  /// outside their row loop, and each tile of columns first copies its
  /// block of the streamed operand (reduction block x columns) into a
  /// contiguous panel that all row tiles read from L1 (GotoBLAS's packed B).
  bool pack = false;
  /// Split the (single) reduction loop into this many parts computed by
  /// separate workgroups, then add the partial results (split-K): for long
  /// reductions over operands larger than the caches (E X at large n).
  int64_t split = 1;

  bool operator==(const CPUKernelSchedule &o) const {
    return workgroup == o.workgroup && rows == o.rows &&
           columns == o.columns && reduction == o.reduction &&
           pack == o.pack && split == o.split;
  }
  bool operator!=(const CPUKernelSchedule &o) const { return !(*this == o); }
};

/// What the cost model expects of a schedule.
struct ScheduleEstimate {
  /// Vector registers a register tile keeps live: accumulators, the
  /// streamed operand's vectors and one broadcast.
  int64_t registers = 0;
  /// Accumulator registers.
  int64_t accumulators = 0;
  /// Workgroups the kernel launches.
  int64_t workgroups = 0;
  /// Bytes of the operand blocks one reduction block touches in L1, and of
  /// the streamed operand's block kept in L2.
  int64_t l1Bytes = 0;
  int64_t l2Bytes = 0;
  /// Modelled fraction of the FMA peak the register tile can reach (FMA
  /// latency hidden, loads within the load ports).
  double efficiency = 0;
};

/// The estimate for `s` on `t`.
ScheduleEstimate estimate(const CPUTarget &t, const KernelShape &shape,
                          const CPUKernelSchedule &s);

/// The largest divisor of `size` that is at most `bound`: at least 1, and 1
/// for a size <= 0 (MLIR's dynamic size included). The one copy: the CPU
/// tiling, the CUDA mapping and the Halide generator call it too.
int64_t largestDivisorAtMost(int64_t size, int64_t bound);

/// The workgroup tile: leading output loops one at a time, the rows in
/// `rowTile`s, the innermost output loop whole, reductions whole; then,
/// while that gives fewer than `minWorkgroups`, rows and then the innermost
/// loop (not below `minInner`) are halved. Where rows are bounded by the
/// lengths (`lengthRowLoop`) and a short run of one sequence (1/16 of the
/// rows, as the token tiles assume) would get fewer than
/// `minShortWorkgroups`, the rows are halved (not below `minShortRows`),
/// then the columns split: the leading column-side loops (heads), then the
/// innermost loop (not below `minInner`). Sizes divide their loops.
std::vector<int64_t> workgroupTiles(const KernelShape &shape, int64_t rowTile,
                                    int64_t minWorkgroups, int64_t minInner,
                                    int64_t minShortWorkgroups = 0,
                                    int64_t minShortRows = 8);

/// The cost model: the schedule for `shape` on `t`. Register tiles keep
/// accumulators + streamed vectors + 1 within the vector registers and at
/// least fma_units x fma_latency accumulators where the shape allows; the
/// reduction block keeps the operand blocks of a register tile within half
/// of L1; workgroup tiles give at least 4 workgroups per core.
CPUKernelSchedule chooseSchedule(const CPUTarget &t, const KernelShape &shape);

/// Register tiles for `shape` on `t`, best first by the model: every
/// (rows, columns) whose rows divide the workgroup's rows and whose columns
/// divide the innermost output extent, within the register file.
std::vector<std::pair<int64_t, int64_t>>
registerTileCandidates(const CPUTarget &t, const KernelShape &shape,
                       const std::vector<int64_t> &workgroup);

/// The autotuner's search around `base`, in rounds: round 0 varies the
/// register tile, round 1 the reduction block, round 2 the workgroup rows
/// (each height also with the two register tiles the cost model ranks first
/// for it, but on AMX). Each round's candidates keep the other fields of
/// `base`; `base` itself is not repeated. Empty when a round has nothing to
/// vary.
std::vector<CPUKernelSchedule> candidates(const CPUTarget &t,
                                          const KernelShape &shape,
                                          const CPUKernelSchedule &base,
                                          int round);
inline constexpr int kTuningRounds = 3;

/// Why `s` cannot be used for `shape` ("" if it can): sizes per loop,
/// positive tiles, reductions whole at workgroup level.
std::string validate(const KernelShape &shape, const CPUKernelSchedule &s);

/// One kernel's entry in a schedule file.
struct ScheduleRecord {
  /// Shape key (SelectSchedules.cpp): the same for kernels of the same
  /// shape, independent of names and of the sequence length of a run.
  std::string key;
  /// The kernel symbol in the artifact (informative).
  std::string kernel;
  /// The shape facts the schedule was chosen from (a file does not carry
  /// the element size: 4 bytes when read from one).
  KernelShape shape;
  int64_t workgroups = 0;
  CPUKernelSchedule schedule;
  /// "cost-model", "tuned", "file" (--schedule), "forced" (pipeline knobs).
  std::string source = "cost-model";
  /// The model's pick (when a tuned or file schedule replaced it).
  bool hasModelSchedule = false;
  CPUKernelSchedule modelSchedule;
  /// Measured milliseconds (autotuning): of the model's pick and of the
  /// schedule kept; negative = not measured.
  double modelMs = -1, tunedMs = -1;
  ScheduleEstimate estimate;
};

/// A shape's loops as a schedule file writes them: "p" (parallel) or "R"
/// (reduction) each.
std::string iteratorString(const KernelShape &shape);

/// A schedule file: the target it was made for and one record per kernel.
struct ScheduleFile {
  CPUTarget target;
  bool hasTarget = false;
  std::vector<ScheduleRecord> kernels;
};

inline constexpr const char *kScheduleFormat = "linformer-schedules";
inline constexpr int kScheduleFormatVersion = 1;

/// JSON text of one schedule: {"workgroup": [...], "register": [r, c],
/// "reduction": k, "pack": b}.
std::string scheduleToJson(const CPUKernelSchedule &s);
/// JSON text of a record (the manifest's per-kernel "schedule").
std::string recordToJson(const ScheduleRecord &r);
/// The whole file, pretty-printed.
std::string scheduleFileToJson(const ScheduleFile &f);
/// Parses a schedule file. Each record needs "key" and "schedule"; the
/// schedule's fields that are present replace the defaults. Returns "" or an
/// error that names the record and field.
std::string parseScheduleFile(const std::string &text, ScheduleFile &out);

/// Human-readable table of a file's records (--print-schedule).
std::string formatScheduleTable(const ScheduleFile &f);

} // namespace linformer::schedule

#endif // LINFORMER_COMPILER_SCHEDULE_SCHEDULE_H
