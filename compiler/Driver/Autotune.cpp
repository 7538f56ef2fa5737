//===- Autotune.cpp - timing candidates through the runtime ---------------===//
//
// --autotune: the search itself is compiler/Schedule/Autotune.cpp; here a
// candidate is compiled to an artifact and timed by linformer-run on this
// machine (seeded random weights and input), and the tuning cache is read
// and written. --backend=best times its artifacts the same way.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/DriverImpl.h"

#include "compiler/Schedule/Autotune.h"
#include "compiler/Schedule/ScheduleAttrs.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace mlir;
using namespace mlir::linformer;
using namespace mlir::linformer::driver;

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

std::string mlir::linformer::driver::forEachProfiledKernel(
    const std::string &path,
    llvm::function_ref<void(const llvm::json::Object &)> each) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return "no profile was written";
  llvm::Expected<llvm::json::Value> value =
      llvm::json::parse((*buffer)->getBuffer());
  if (!value) {
    llvm::consumeError(value.takeError());
    return "the profile is not JSON";
  }
  const llvm::json::Object *root = value->getAsObject();
  const llvm::json::Array *kernels =
      root ? root->getArray("kernels") : nullptr;
  if (!kernels)
    return "the profile has no kernels";
  for (const llvm::json::Value &k : *kernels)
    if (const llvm::json::Object *o = k.getAsObject())
      each(*o);
  return "";
}

/// Per kernel, the median milliseconds of a linformer-run --profile-json
/// file, summed under `field` ("key": the kernel's shape, several kernels
/// share one; "symbol": the kernel). Initializers, which run once when a
/// session is created, are no part of a run's time and are left out.
static std::string readProfile(const std::string &path, StringRef field,
                               std::map<std::string, double> &ms) {
  return forEachProfiledKernel(path, [&](const llvm::json::Object &o) {
    std::optional<StringRef> name = o.getString(field);
    std::optional<double> median = o.getNumber("median_ms");
    if (o.getBoolean("initializer").value_or(false))
      return;
    if (name && median && !name->empty())
      ms[name->str()] += *median;
  });
}

std::string Compile::findRunner() {
  if (!options.runnerPath.empty())
    return options.runnerPath;
  if (const char *env = std::getenv("LINFORMER_RUN"); env && *env)
    return env;
  if (!options.toolPath.empty()) {
    llvm::SmallString<256> sibling(
        llvm::sys::path::parent_path(options.toolPath));
    llvm::sys::path::append(sibling, "linformer-run");
    if (llvm::sys::fs::can_execute(sibling))
      return sibling.str().str();
  }
  llvm::ErrorOr<std::string> onPath =
      llvm::sys::findProgramByName("linformer-run");
  return onPath ? *onPath : std::string();
}

/// Times `artifact` with linformer-run on this machine (random weights and
/// input, of one sequence of `length` real tokens when given; one warm-up,
/// `autotuneRuns` timed runs) and reads every kernel's median into `ms`,
/// summed under `by` (see readProfile).
std::string Compile::timeArtifact(const std::string &runner,
                                  const std::string &artifact,
                                  const std::string &weights,
                                  const std::string &base, int64_t threads,
                                  StringRef by,
                                  std::map<std::string, double> &ms,
                                  bool check, std::optional<int64_t> length) {
  std::string threadText = std::to_string(threads);
  std::string runs = std::to_string(std::max(1u, options.autotuneRuns));
  std::string profile = base + ".profile.json";
  std::string log = base + ".log";
  SmallVector<StringRef> args = {runner,     artifact,  "--weights",
                                 weights,    "--random-input", "--threads",
                                 threadText, "--warmup", "1",
                                 "--repeat", runs,      "--profile-json",
                                 profile};
  if (check)
    args.push_back("--check");
  std::string lengthText = length ? std::to_string(*length) : "";
  if (length)
    args.append({"--lengths", lengthText});
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(log),
                                          StringRef(log)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(runner, args, std::nullopt, redirects,
                                     /*secondsToWait=*/600, 0, &message);
  if (rc != 0)
    return "linformer-run failed (exit " + std::to_string(rc) + ")" +
           (message.empty() ? "" : ": " + message) + "; see " + log;
  return readProfile(profile, by, ms);
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
    std::string runner = findRunner();
    if (runner.empty())
      return makeError("--autotune needs linformer-run to time candidates; "
                       "none was found next to linformer-compile (use "
                       "--runner PATH)");
    llvm::SmallString<128> weightsPath(workDir);
    llvm::sys::path::append(weightsPath, "weights.safetensors");
    // Random weights: timing does not depend on the values.
    if (llvm::Error err =
            writeRandomWeights(weightsPath.str().str(), /*quiet=*/true))
      return err;
    int variant = 0;
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
        std::string runBase =
            length ? base + ".L" + std::to_string(*length) : base;
        err = timeArtifact(runner, artifact, weightsPath.str().str(), runBase,
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
