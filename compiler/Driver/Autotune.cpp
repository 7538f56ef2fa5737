//===- Autotune.cpp - timing candidates through the runtime ---------------===//
//
// --autotune: the search itself is compiler/Schedule/Autotune.cpp; here a
// candidate is compiled to an artifact and timed on this machine, in this
// process, through the runtime (runtime/run, as linformer-run runs it:
// seeded random weights and input), and the tuning cache is read and
// written. --backend=best times its artifacts the same way.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/DriverImpl.h"

#include "compiler/Schedule/Autotune.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "runtime/run/Run.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::linformer;
using namespace mlir::linformer::driver;
namespace lfrun = ::linformer::run;

/// The keys of `plan`'s parts of split reductions, each with its source's
/// ", split S" (how a schedule file marks a record its split applies).
static std::map<std::string, std::string> splitParts(const Plan &plan) {
  std::map<std::string, std::string> parts;
  for (const sched::ScheduleRecord &r : plan.schedules.kernels)
    if (isSplitPartRecord(r))
      parts[r.key] = r.source.substr(r.source.find(", split "));
  return parts;
}

/// Writes `schedules` (key -> schedule) as a schedule file at `path`, with
/// `source` as every record's source, marked as a split's part for the
/// keys of `parts` (else the selection would warn that no kernel has
/// them: the parts exist only once the split applies them).
static std::string
writeScheduleMap(const sched::ScheduleMap &schedules,
                 const std::string &source, const std::string &path,
                 const std::map<std::string, std::string> &parts) {
  sched::ScheduleFile f;
  for (const auto &[key, s] : schedules) {
    sched::ScheduleRecord r;
    r.key = key;
    r.schedule = s;
    auto part = parts.find(key);
    r.source = part == parts.end() ? source : source + part->second;
    f.kernels.push_back(r);
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return "cannot write '" + path + "': " + ec.message();
  os << sched::scheduleFileToJson(f);
  return "";
}

/// Times `artifact` on this machine, in this process, through the runtime
/// (runtime/run: random input, of one sequence of `length` real tokens
/// when given; one warm-up, `autotuneRuns` timed runs; with `check`, the
/// output against the reference; a sequence-parallel artifact's rank 0
/// alone, unchecked) and adds every kernel's median into `ms`
/// under `by` ("key": the kernel's shape, several kernels share one;
/// "symbol": the kernel). Initializers, which run once when a session is
/// created, are no part of a run's time and are left out. What the run
/// prints goes to BASE.log, whose last line an error quotes.
std::string Compile::timeArtifact(const std::string &artifact,
                                  const std::string &weights,
                                  const std::string &base, int64_t threads,
                                  StringRef by,
                                  std::map<std::string, double> &ms,
                                  bool check, std::optional<int64_t> length) {
  lfrun::Options o;
  o.artifact = artifact;
  o.weightsPath = weights;
  o.randomInput = true;
  o.threads = static_cast<int>(threads);
  o.warmup = 1;
  o.repeat = static_cast<int>(std::max(1u, options.autotuneRuns));
  o.check = check;
  // A sequence-parallel artifact runs rank 0 alone (lfrun::timeArtifact):
  // the first n / P tokens of a hinted length.
  if (length && src.config.sequenceParallel > 1)
    length = std::min(*length, src.config.rankSeqLen());
  if (length)
    o.lengthsArg = std::to_string(*length);
  std::string logPath = base + ".log";
  std::FILE *logFile = std::fopen(logPath.c_str(), "w");
  if (!logFile)
    return "cannot write '" + logPath + "'";
  std::vector<lfrun::KernelTime> kernels;
  std::string err = lfrun::timeArtifact(std::move(o), logFile, kernels);
  std::fclose(logFile);
  if (!err.empty()) {
    // The run's last words (the check's error, the runtime's message).
    std::string last;
    if (auto text = llvm::MemoryBuffer::getFile(logPath)) {
      StringRef rest = (*text)->getBuffer().rtrim();
      last = rest.substr(rest.rfind('\n') + 1).str();
    }
    return "timing " + llvm::sys::path::filename(artifact).str() +
           " failed: " + err + (last.empty() ? "" : " (" + last + ")");
  }
  for (const lfrun::KernelTime &k : kernels) {
    const std::string &name = by == "key" ? k.key : k.symbol;
    if (!k.initializer && !name.empty())
      ms[name] += k.medianMs;
  }
  return "";
}

/// Tunes the kernel shapes not in the tuning cache and returns, in
/// `scheduleFilePath`, a schedule file with a tuned schedule for every
/// shape, and their times in `times`.
llvm::Error Compile::autotune(const sched::CPUTarget &target,
                              llvm::SmallString<128> &workDir,
                              std::string &scheduleFilePath,
                              std::map<std::string, TunedTimes> &times) {
  // The cost model's picks, from one pass through the pipeline.
  OwningOpRef<ModuleOp> module = buildModule();
  if (!module)
    return diagnosed("the input could not be built");
  if (llvm::Error err = lowerModule(*module, target, ""))
    return err;
  Plan plan;
  if (!readPlan(*module, target, {}, plan))
    return makeError("the pipeline produced no dispatch plan for @" +
                     src.entry.name);

  std::map<std::string, std::string> parts = splitParts(plan);
  // --lengths-hint: each candidate runs once per hinted length, one
  // sequence of that many real tokens; what the kernels cost at those
  // lengths is what is compared, and what the tuning cache keeps apart.
  // (checkLengthsHint has vetted them.)
  const std::vector<int64_t> &lengths = options.lengthsHint;
  std::string lengthsText;
  for (int64_t length : lengths)
    lengthsText += (lengthsText.empty() ? "" : ",") + std::to_string(length);
  // The runs that time a candidate: one per hinted length, else one of the
  // compiled batch at full length.
  std::vector<std::optional<int64_t>> runs(lengths.begin(), lengths.end());
  if (runs.empty())
    runs.push_back(std::nullopt);
  std::string cacheDir = options.tuningCache.empty()
                             ? sched::defaultTuningCacheDir()
                             : options.tuningCache;
  std::string cachePath = sched::tuningCachePath(
      cacheDir, target,
      kCompilerVersion +
          (lengths.empty() ? std::string() : "-lengths-" + lengthsText));
  sched::ScheduleFile cache;
  if (std::string err = sched::loadTuningCache(cachePath, cache); !err.empty())
    return makeError(err);
  std::map<std::string, sched::ScheduleRecord> cached;
  for (const sched::ScheduleRecord &r : cache.kernels)
    cached[r.key] = r;

  std::vector<sched::TuningKernel> toTune;
  std::set<std::string> seen;
  sched::ScheduleMap fixed; // from the cache
  for (const sched::ScheduleRecord &r : plan.schedules.kernels) {
    if (!seen.insert(r.key).second)
      continue;
    if (auto it = cached.find(r.key); it != cached.end()) {
      fixed[r.key] = it->second.schedule;
      times[r.key] = {it->second.modelMs, it->second.tunedMs};
      continue;
    }
    if (r.shape.kind == sched::KernelKind::Other)
      continue; // elementwise and row reductions: nothing to tune
    toTune.push_back({r.key, r.shape, r.schedule});
  }
  log << "autotune: target " << sched::describe(target) << "\n";
  if (!lengths.empty())
    log << "autotune: timing at real lengths " << lengthsText
        << " (one sequence each, times added; --lengths-hint)\n";
  log
      << "autotune: " << seen.size() << " kernel shape(s), " << fixed.size()
      << " from the tuning cache (" << cachePath << "), " << toTune.size()
      << " to tune\n";

  sched::AutotuneResult result;
  if (!toTune.empty()) {
    llvm::SmallString<128> weightsPath(workDir);
    llvm::sys::path::append(weightsPath, "weights.safetensors");
    // Random weights: timing does not depend on the values.
    if (llvm::Error err =
            writeRandomWeights(weightsPath.str().str(), /*quiet=*/true))
      return err;
    int variant = 0;
    // Timing runs by real length (0: the compiled batch at full length).
    std::map<int64_t, int> timingRuns;
    sched::AutotuneOptions tuning;
    tuning.progress = [&](const std::string &line) {
      log << "autotune: " << line << "\n";
    };
    tuning.measure = [&](const sched::ScheduleMap &schedules,
                         std::map<std::string, double> &msByKey)
        -> std::string {
      std::string base =
          (workDir + "/variant" + std::to_string(variant++)).str();
      sched::ScheduleMap all = fixed;
      for (const auto &[key, s] : schedules)
        all[key] = s;
      if (std::string err = writeScheduleMap(all, "file", base + ".json", parts);
          !err.empty())
        return err;
      OwningOpRef<ModuleOp> m = buildModule();
      if (!m)
        return "the variant did not compile";
      if (llvm::Error err = lowerModule(*m, target, base + ".json")) {
        llvm::consumeError(std::move(err));
        return "the variant did not compile";
      }
      Plan p;
      if (!readPlan(*m, target, {}, p))
        return "the variant has no dispatch plan";
      std::string artifact = base + ".lfa";
      if (llvm::Error err = writeArtifact(*m, target, p, artifact)) {
        llvm::consumeError(std::move(err));
        return "the variant's artifact could not be written";
      }
      std::string err;
      for (std::optional<int64_t> length : runs) {
        ++timingRuns[length.value_or(0)];
        std::string runBase =
            length ? base + ".L" + std::to_string(*length) : base;
        err = timeArtifact(artifact, weightsPath.str().str(), runBase,
                           target.cores, "key", msByKey, /*check=*/false,
                           length);
        if (!err.empty())
          break;
      }
      llvm::sys::fs::remove(artifact);
      return err;
    };
    if (std::string err = sched::autotune(target, toTune, tuning, result);
        !err.empty())
      return makeError("autotune: " + err);
    log << "autotune: " << result.variants << " variants built and timed\n";
    log << "autotune: timing runs in this process:";
    for (auto [length, count] : timingRuns)
      log << " " << count
          << (length ? " at " + std::to_string(length) + " tokens"
                     : std::string(" at full length"));
    log << "\n";
    for (const sched::TuningKernel &k : toTune) {
      fixed[k.key] = result.best[k.key];
      times[k.key] = {result.startMs[k.key], result.bestMs[k.key]};
      sched::ScheduleRecord r;
      for (const sched::ScheduleRecord &p : plan.schedules.kernels)
        if (p.key == k.key) {
          r = p;
          break;
        }
      r.kernel.clear();
      r.schedule = result.best[k.key];
      r.source = "tuned";
      r.hasModelSchedule = true;
      r.modelSchedule = k.start;
      r.modelMs = result.startMs[k.key];
      r.tunedMs = result.bestMs[k.key];
      cached[k.key] = r;
    }
    cache.target = target;
    cache.hasTarget = true;
    cache.kernels.clear();
    for (auto &[key, r] : cached)
      cache.kernels.push_back(r);
    if (std::string err = sched::saveTuningCache(cachePath, cache);
        !err.empty())
      return makeError(err);
    log << "autotune: wrote the tuning cache " << cachePath << "\n";
  }
  scheduleFilePath = (workDir + "/tuned.json").str();
  if (std::string err = writeScheduleMap(fixed, "tuned", scheduleFilePath, parts);
      !err.empty())
    return makeError(err);
  return llvm::Error::success();
}

llvm::Error Compile::checkLengthsHint() {
  const std::vector<int64_t> &lengths = options.lengthsHint;
  if (lengths.empty())
    return llvm::Error::success();
  if (!src.fromModel)
    return makeError("--lengths-hint needs a model.json input: it states "
                     "the real lengths of the model's sequences");
  if (src.config.padding != lf::PaddingInput::Lengths)
    return makeError("--lengths-hint needs a model whose sequences carry "
                     "their lengths (\"padding\": \"lengths\"); this one's "
                     "kernels run all " +
                     std::to_string(src.config.maxSeqLen) +
                     " tokens whatever a run is given");
  for (int64_t length : lengths)
    if (length > src.config.maxSeqLen)
      return makeError("--lengths-hint: " + std::to_string(length) +
                       " tokens exceed the model's max_seq_len " +
                       std::to_string(src.config.maxSeqLen));
  return llvm::Error::success();
}
