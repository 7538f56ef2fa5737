//===- Autotune.cpp - choose schedules by timing them -----------*- C++ -*-===//
//
// See Autotune.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Schedule/Autotune.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace linformer::schedule {

static const char *kRoundNames[kTuningRounds] = {
    "register tile", "reduction block and packing", "workgroup rows"};

static std::string describeSchedule(const CPUKernelSchedule &s) {
  std::string w;
  for (size_t i = 0; i < s.workgroup.size(); ++i)
    w += (i ? "," : "") + std::to_string(s.workgroup[i]);
  return "wg [" + w + "] reg " + std::to_string(s.rows) + "x" +
         std::to_string(s.columns) + " red " + std::to_string(s.reduction);
}

static double total(const std::map<std::string, double> &ms) {
  double t = 0;
  for (const auto &[key, v] : ms)
    t += v;
  return t;
}

static std::string fmtMs(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

std::string autotune(const CPUTarget &target,
                     const std::vector<TuningKernel> &kernels,
                     const AutotuneOptions &options, AutotuneResult &result) {
  auto progress = [&](const std::string &line) {
    if (options.progress)
      options.progress(line);
  };
  result = AutotuneResult();
  std::map<std::string, const TuningKernel *> byKey;
  for (const TuningKernel &k : kernels) {
    byKey[k.key] = &k;
    result.best[k.key] = k.start;
  }
  if (kernels.empty())
    return "";

  std::map<std::string, double> ms;
  if (std::string err = options.measure(result.best, ms); !err.empty())
    return "the starting schedules could not be measured: " + err;
  ++result.variants;
  for (const auto &[key, k] : byKey) {
    auto it = ms.find(key);
    if (it == ms.end())
      return "no time was measured for kernel '" + key + "'";
    result.startMs[key] = result.bestMs[key] = it->second;
  }
  progress("start (cost model): " + fmtMs(total(result.startMs)) + " in " +
           std::to_string(kernels.size()) + " kernel shape(s)");

  for (int round = 0; round < kTuningRounds; ++round) {
    std::map<std::string, std::vector<CPUKernelSchedule>> cands;
    size_t count = 0;
    for (const auto &[key, k] : byKey) {
      cands[key] = candidates(target, k->shape, result.best[key], round);
      count = std::max(count, cands[key].size());
    }
    // The best within this round, compared against the round's start.
    ScheduleMap roundBest = result.best;
    std::map<std::string, double> roundMs = result.bestMs;
    for (size_t i = 0; i < count; ++i) {
      ScheduleMap variant = result.best;
      for (const auto &[key, list] : cands)
        if (i < list.size())
          variant[key] = list[i];
      std::map<std::string, double> vms;
      std::string err = options.measure(variant, vms);
      ++result.variants;
      std::string head = "round " + std::to_string(round + 1) + "/" +
                         std::to_string(kTuningRounds) + " (" +
                         kRoundNames[round] + "), candidate " +
                         std::to_string(i + 1) + " of " +
                         std::to_string(count) + ": ";
      if (!err.empty()) {
        progress(head + "discarded (" + err + ")");
        continue;
      }
      int improved = 0;
      for (const auto &[key, list] : cands) {
        if (i >= list.size())
          continue;
        auto it = vms.find(key);
        if (it == vms.end())
          continue;
        if (it->second < roundMs[key] * (1 - options.minGain)) {
          roundMs[key] = it->second;
          roundBest[key] = list[i];
          ++improved;
        }
      }
      progress(head + std::to_string(improved) + " kernel shape(s) improved;" +
               " best so far " + fmtMs(total(roundMs)) + " (start " +
               fmtMs(total(result.startMs)) + ")");
    }
    result.best = roundBest;
    result.bestMs = roundMs;
  }
  for (const auto &[key, k] : byKey)
    if (result.best[key] != k->start)
      progress("  " + key + ": " + describeSchedule(k->start) + " -> " +
               describeSchedule(result.best[key]) + ", " +
               fmtMs(result.startMs[key]) + " -> " +
               fmtMs(result.bestMs[key]));
  return "";
}

std::string defaultTuningCacheDir() {
  if (const char *dir = std::getenv("LINFORMER_TUNING_CACHE"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/linformer/tuning";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/linformer/tuning";
  return ".linformer-tuning";
}

std::string tuningCachePath(const std::string &dir, const CPUTarget &target,
                            const std::string &compilerVersion) {
  std::string name = fingerprint(target) + "-v" + compilerVersion + ".json";
  for (char &c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
          c == '_' || c == '.'))
      c = '_';
  return dir + "/" + name;
}

std::string loadTuningCache(const std::string &path, ScheduleFile &out) {
  out = ScheduleFile();
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return errno == ENOENT ? "" : "cannot read the tuning cache '" + path +
                                      "': " + std::strerror(errno);
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    text.append(buf, n);
    if (text.size() > (64u << 20)) {
      std::fclose(f);
      return "the tuning cache '" + path + "' is larger than 64 MiB";
    }
  }
  std::fclose(f);
  if (std::string err = parseScheduleFile(text, out); !err.empty())
    return "the tuning cache '" + path + "' is not a schedule file (" + err +
           "); delete it to start over";
  return "";
}

/// mkdir -p, 0700 for what it creates.
static bool makeDirs(const std::string &dir) {
  std::string partial;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      if (!partial.empty() && mkdir(partial.c_str(), 0700) != 0 &&
          errno != EEXIST)
        return false;
    }
    if (i < dir.size())
      partial += dir[i];
  }
  return true;
}

std::string saveTuningCache(const std::string &path, const ScheduleFile &f) {
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (!makeDirs(dir))
    return "cannot create the tuning cache directory '" + dir +
           "': " + std::strerror(errno);
  std::string tmp = path + ".XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  int fd = mkstemp(name.data()); // O_EXCL, 0600: never follows a planted link
  if (fd < 0)
    return "cannot write the tuning cache '" + path +
           "': " + std::strerror(errno);
  std::string text = scheduleFileToJson(f);
  const char *p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      std::string err = std::strerror(errno);
      close(fd);
      unlink(name.data());
      return "cannot write the tuning cache '" + path + "': " + err;
    }
    p += w;
    left -= size_t(w);
  }
  close(fd);
  if (rename(name.data(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    unlink(name.data());
    return "cannot write the tuning cache '" + path + "': " + err;
  }
  return "";
}

} // namespace linformer::schedule
