//===- RunDetail.h - what Run.cpp's parts share -----------------*- C++ -*-===//
//
// The pieces of linformer-run that its sequence-parallel runs
// (RunRanks.cpp) take from the ordinary ones (Run.cpp): where they print,
// the conversions of input values, and the check against the reference.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_RUNTIME_RUN_RUNDETAIL_H
#define LINFORMER_RUNTIME_RUN_RUNDETAIL_H

#include "lib/Manifest/Common.h"
#include "lib/Npy/Npy.h"
#include "linformer/runtime.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace linformer {
namespace run {
struct Options;

namespace detail {

/// Where a run prints (run()'s and timeArtifact()'s streams).
extern thread_local std::FILE *tOut;
extern thread_local std::FILE *tErr;

/// Prints "linformer-run: error: MSG" and returns 1.
int error(const std::string &msg);

/// f32 values as `dtype` (f32, f16 or bf16) bytes, rounded to nearest even.
std::string floatsAs(const std::vector<float> &values, linformer::DType dtype);

/// What --check compares: the run's input and output ([b, L, ...], or
/// packed [T, ...]), the compiled n, and the padding the caller gave.
struct CheckedRun {
  const linformer::NpyArray &x, &y;
  int64_t batch, n, L;
  const std::vector<int32_t> &lengths; ///< --lengths (empty: none)
  const linformer::NpyArray &maskArray; ///< --mask (no bytes: none)
  bool packed;
};

/// --check: the reference encoder (lib/Reference, on the model description
/// the manifest carries) on the same weights, input and padding, compared
/// with the output. Returns 0 when the check passes, 3 when it fails, 1
/// after an error.
int checkAgainstReference(const lf::Module &module,
                          const std::string &weightsPath, const CheckedRun &run,
                          const std::string &referenceCache, double tolerance);

/// --lengths: a comma-separated list or an .npy file of integers in
/// [1, n], into `lengths`. Returns 0 or the exit status after printing the
/// error.
int parseLengths(const std::string &arg, int64_t n,
                 std::vector<int32_t> &lengths);

/// The ranks the artifact at `path` splits a sequence over, from its
/// manifest: 0 when it is not sequence-parallel, or cannot be read (the
/// runtime's load then says why).
int64_t artifactRanks(const std::string &path);

/// A sequence-parallel artifact's run (RunRanks.cpp): its ranks as threads
/// of this process, each with its session, summing through an all-reduce
/// in memory; the output gathered from the ranks' and checked as a whole.
int runRanks(const Options &options);

} // namespace detail
} // namespace run
} // namespace linformer

#endif // LINFORMER_RUNTIME_RUN_RUNDETAIL_H
