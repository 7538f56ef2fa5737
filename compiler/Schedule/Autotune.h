//===- Autotune.h - choose schedules by timing them -------------*- C++ -*-===//
//
// The autotuner: starting from the cost model's pick, it tries the
// candidates of Schedule.h round by round (register tile, then reduction
// block, then workgroup rows) and keeps, per kernel shape, the schedule that
// ran fastest. All kernels are tuned at once: variant i gives every shape
// its i-th candidate, so one compile and one timed run measure a candidate
// of every kernel, and kernels of the same shape (one per layer) add up
// their times. Building and timing a variant is the caller's (the driver
// compiles an artifact and runs it through the runtime); this file is the
// search, its bookkeeping and the tuning cache, with no MLIR dependency.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_SCHEDULE_AUTOTUNE_H
#define LINFORMER_COMPILER_SCHEDULE_AUTOTUNE_H

#include "compiler/Schedule/Schedule.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace linformer::schedule {

/// One kernel shape to tune.
struct TuningKernel {
  std::string key;
  KernelShape shape;
  /// Where the search starts (the cost model's pick).
  CPUKernelSchedule start;
};

/// Schedules by shape key.
using ScheduleMap = std::map<std::string, CPUKernelSchedule>;

struct AutotuneOptions {
  /// Builds the model with `schedules` (every tuned key has one), runs it
  /// and fills `msByKey` with the milliseconds each key's kernels took in
  /// one run, summed over the kernels of that key. Returns "" or an error;
  /// an error on a candidate variant discards the variant (reported through
  /// `progress`), an error on the starting point stops the search.
  std::function<std::string(const ScheduleMap &schedules,
                            std::map<std::string, double> &msByKey)>
      measure;
  /// Receives one line per step ("round 1/3, variant 2 of 4: ...").
  std::function<void(const std::string &line)> progress;
  /// A candidate replaces the best only if it is faster by this fraction:
  /// differences below the run-to-run noise are not improvements.
  double minGain = 0.02;
};

struct AutotuneResult {
  ScheduleMap best;
  /// Per key: time of the starting schedule and of the best one.
  std::map<std::string, double> startMs, bestMs;
  /// Variants built and timed, the starting point included.
  int variants = 0;
};

/// Tunes `kernels` on `target`. Returns "" or the error that stopped it.
std::string autotune(const CPUTarget &target,
                     const std::vector<TuningKernel> &kernels,
                     const AutotuneOptions &options, AutotuneResult &result);

/// The tuning cache: one schedule file per target fingerprint and compiler
/// version under `dir`, records with source "tuned" and their times.
/// `defaultTuningCacheDir()` is $LINFORMER_TUNING_CACHE, else
/// $XDG_CACHE_HOME/linformer/tuning, else $HOME/.cache/linformer/tuning.
std::string defaultTuningCacheDir();
std::string tuningCachePath(const std::string &dir, const CPUTarget &target,
                            const std::string &compilerVersion);
/// Reads the cache file (a missing file is an empty cache, not an error).
std::string loadTuningCache(const std::string &path, ScheduleFile &out);
/// Writes it (creating `dir`), through a temporary file and a rename so
/// that concurrent compiles never read half a file.
std::string saveTuningCache(const std::string &path, const ScheduleFile &f);

} // namespace linformer::schedule

#endif // LINFORMER_COMPILER_SCHEDULE_AUTOTUNE_H
