//===- Run.h - run an artifact: inputs, timed runs, check -------*- C++ -*-===//
//
// What linformer-run does, as a library on the runtime's C++ API: load an
// artifact and its weights, run it on .npy inputs (or a seeded random
// input) --repeat times, and report, profile, write and check (against
// the C++ reference encoder, lib/Reference) what the options ask. The tool
// (tools/linformer-run) parses the command line into Options and calls
// run(); the compiler's --autotune and --backend=best time their
// candidates in process with timeArtifact(). Nothing here throws past its
// functions, so -fno-exceptions code may call them.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_RUNTIME_RUN_RUN_H
#define LINFORMER_RUNTIME_RUN_RUN_H

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace linformer {
namespace run {

struct Options {
  std::string artifact, weightsPath, output, lengthsArg, maskPath;
  std::map<std::string, std::string> inputs;
  bool poisonPadding = false;
  bool check = false, randomInput = false, profile = false,
       makeWeights = false, deviceIo = false, packed = false;
  /// lf_session_options::cuda_graphs: -1 (for --device-io runs), 0 or 1.
  int cudaGraphs = -1;
  /// lf_session_options::cuda_graph_branches.
  int cudaGraphBranches = 0;
  int64_t deviceIoOffset = 0;
  int64_t ioOffset = -1;
  int spinUs = -1;
  std::string profileJson, device;
  double tolerance = -1; // -1: defaultTolerance's
  std::string referenceCache;
  int repeat = 1, threads = 0, warmup = 0, sessions = 1;
  int64_t seqLen = -1, runBatch = -1;
  /// --rank R: rank R of a sequence-parallel artifact alone, its
  /// all-reduce summing nothing: one rank's time, memory and profile (its
  /// kernels do the same work whatever the sums are), not the sequence's
  /// values. -1: every rank (runRanks), or a whole-sequence artifact.
  int rank = -1;
  uint64_t seed = 1;

  /// --make-weights: seeded random weights for the artifact's model, from
  /// its manifest alone: no code is loaded (and no device needed).
  int writeWeights() const;
};

/// Runs the artifact as `options` ask, printing to `out` (what ran, the
/// profile, the check) and `err` (errors). The exit status: 0 ok, 1 a
/// runtime or input error, 3 --check found an error above the tolerance.
int run(Options options, std::FILE *out = stdout, std::FILE *err = stderr);

/// A whole decimal integer in [lo, hi].
bool parseInteger(const std::string &s, long long lo, long long hi,
                  long long &out);

/// One kernel's time over a run's timed repeats.
struct KernelTime {
  std::string symbol, key;
  double medianMs = 0;
  /// An initializer runs once, when the session is created: no part of a
  /// run's time.
  bool initializer = false;
};

/// Runs `options` (with the kernel profile on) in this process, writing
/// what it prints to `log`, and returns every kernel's time in `kernels`;
/// an error message where it failed (the runtime's, the check's), else "".
std::string timeArtifact(Options options, std::FILE *log,
                         std::vector<KernelTime> &kernels);

} // namespace run
} // namespace linformer

#endif // LINFORMER_RUNTIME_RUN_RUN_H
