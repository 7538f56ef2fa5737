//===- RunRanks.cpp - a sequence-parallel artifact's ranks in one process -===//
//
// linformer-run on an artifact compiled with "sequence_parallel": P. Each
// rank is a thread of this process with a session of its own (rank r of P,
// --threads threads each), on tokens [r n, (r + 1) n) of every sequence; the
// sessions' all-reduce sums in memory. The output is gathered from the
// ranks' and checked as a whole against the reference encoder, which runs
// the whole sequence in one piece: the test of the split. Across processes
// and hosts the same artifact runs under torch.distributed
// (python/linformer_mlir/torch.py), whose all_reduce the sessions call
// instead.
//
//===----------------------------------------------------------------------===//

#include "runtime/run/Run.h"
#include "runtime/run/RunDetail.h"

#include "lib/Npy/Npy.h"
#include "lib/Support/Random.h"
#include "linformer/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace linformer {
namespace run {
namespace detail {
namespace {

/// The ranks' all-reduce within one process. Every rank leaves its buffer,
/// and once all have, each sums them in rank order (the same bits whichever
/// thread came first). A rank that fails aborts the group: the others'
/// calls then return an error instead of waiting for it, and so does a
/// call that waits longer than `timeout`.
class LocalAllReduce {
public:
  LocalAllReduce(int ranks, std::chrono::seconds timeout)
      : parts_(size_t(ranks)), timeout_(timeout) {}

  /// What a rank's session gets as the all-reduce's user data.
  struct Rank {
    LocalAllReduce *group;
    int rank;
  };

  static int32_t call(void *userData, void *data, int64_t count,
                      lf_dtype dtype) {
    auto *r = static_cast<Rank *>(userData);
    if (dtype != LF_DTYPE_F32)
      return r->group->abort(), 2;
    return r->group->reduce(r->rank, static_cast<float *>(data), count);
  }

  void abort() {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    cv_.notify_all();
  }

  /// The bytes summed so far, per rank.
  int64_t bytes() const { return bytes_; }

private:
  int32_t reduce(int rank, float *data, int64_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto waitFor = [&](auto ready) {
      return cv_.wait_for(lock, timeout_,
                          [&] { return aborted_ || ready(); }) &&
             !aborted_;
    };
    // The last round's sums are read before this one's parts are written.
    if (!waitFor([&] { return !reading_; }))
      return abortLocked(), 3;
    if (arrived_ == 0)
      count_ = count;
    else if (count != count_)
      return abortLocked(), 4;
    parts_[size_t(rank)].assign(data, data + count);
    if (++arrived_ == int(parts_.size())) {
      reading_ = true;
      readers_ = arrived_;
      bytes_ += count * int64_t(sizeof(float));
      cv_.notify_all();
    } else if (!waitFor([&] { return reading_; })) {
      return abortLocked(), 3;
    }
    lock.unlock();
    for (int64_t i = 0; i < count; ++i) {
      float sum = 0;
      for (const std::vector<float> &part : parts_)
        sum += part[size_t(i)];
      data[i] = sum;
    }
    lock.lock();
    if (--readers_ == 0) {
      arrived_ = 0;
      reading_ = false;
      cv_.notify_all();
    }
    return 0;
  }

  void abortLocked() {
    aborted_ = true;
    cv_.notify_all();
  }

  std::vector<std::vector<float>> parts_;
  std::chrono::seconds timeout_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0, readers_ = 0;
  int64_t count_ = 0; ///< this round's elements, as the first rank gave
  bool reading_ = false, aborted_ = false;
  int64_t bytes_ = 0;
};

/// The options a sequence-parallel run cannot honour, by name.
std::string unsupported(const Options &o) {
  std::vector<std::pair<bool, const char *>> options = {
      {!o.maskPath.empty(), "--mask"},
      {o.poisonPadding, "--poison-padding"},
      {o.profile || !o.profileJson.empty(), "--profile"},
      {o.deviceIo, "--device-io"},
      {o.ioOffset >= 0, "--io-offset"},
      {o.sessions != 1, "--sessions"},
      {o.cudaGraphs == 1, "--cuda-graphs"},
      {o.cudaGraphBranches > 1, "--cuda-graph-branches"},
      {!o.device.empty() && o.device != "cpu", "--device"}};
  for (auto [set, name] : options)
    if (set)
      return name;
  return "";
}

struct Ranks {
  const Options &o;
  lf::Module module;
  lf::Weights weights;
  int64_t P, batch, n, dm = 0, L = 0;
  lf_dtype dtype = LF_DTYPE_F32;
  linformer::NpyArray x, y;
  std::vector<int32_t> lengths;
  /// Each rank's tokens of x and of y, [b, share, d_model].
  std::vector<std::string> xs, ys;

  explicit Ranks(const Options &options)
      : o(options), module(lf::Module::load(options.artifact, "cpu")),
        weights(lf::Weights::load(options.weightsPath)),
        P(module.sequenceParallel()), batch(module.sequenceShape().first),
        n(module.sequenceShape().second) {}

  /// x for the whole sequence: [b, L, d_model], L <= n P.
  int readInput() {
    for (const lf::TensorInfo &info : module.inputs()) {
      if (info.role != LF_ROLE_NONE)
        continue;
      if (info.name != "x" || info.shape.size() != 3)
        return error("a sequence-parallel run takes one input, x [b, n, "
                     "d_model]; the artifact has '" +
                     info.name + "'");
      dtype = info.dtype;
      dm = info.shape[2];
    }
    if (int rc = parseLengths(o.lengthsArg, n * P, lengths))
      return rc;
    auto given = o.inputs.find("x");
    if (given != o.inputs.end()) {
      if (linformer::FileError e = linformer::readNpy(given->second, x))
        return error(e.message);
      if (x.dtype != linformer::DType(dtype) || x.shape.size() != 3 ||
          x.shape[2] != dm)
        return error("--input x: expected " +
                     std::string(lf_dtype_name(dtype)) + " [b, L, " +
                     std::to_string(dm) + "], got " +
                     linformer::dtypeName(x.dtype) + " " +
                     linformer::shapeString(x.shape));
    } else if (o.randomInput) {
      int64_t whole = o.seqLen < 0 ? n * P : o.seqLen;
      x.dtype = linformer::DType(dtype);
      // As many sequences as --batch, else as --lengths lists, else the
      // compiled batch (as linformer-run's other runs).
      int64_t sequences = o.runBatch > 0         ? o.runBatch
                          : !lengths.empty() ? int64_t(lengths.size())
                                             : batch;
      x.shape = {sequences, whole, dm};
      x.bytes = floatsAs(linformer::uniformVector(
                             linformer::shapeNumElements(x.shape), o.seed,
                             -1, 1),
                         x.dtype);
    } else {
      return error("the model needs input 'x': pass --input x=FILE.npy or "
                   "--random-input");
    }
    batch = x.shape[0];
    L = x.shape[1];
    if (L < 1 || L > n * P)
      return error("x has " + std::to_string(L) +
                   " tokens; the " + std::to_string(P) +
                   " ranks hold 1 to " + std::to_string(n * P));
    for (int32_t length : lengths)
      if (length > L)
        return error("--lengths: " + std::to_string(length) +
                     " is more than the input's " + std::to_string(L) +
                     " tokens");
    if (!lengths.empty() && int64_t(lengths.size()) != batch)
      return error("--lengths lists " + std::to_string(lengths.size()) +
                   " sequences, x has " + std::to_string(batch));
    return 0;
  }

  /// Tokens of a sequence of `length` that rank `r` holds.
  int64_t share(int64_t r, int64_t length) const {
    return std::clamp<int64_t>(length - r * n, 0, n);
  }
  /// Rows of rank `r`'s tensors: its share of L, at least one (a rank that
  /// holds no token of any sequence still runs, with lengths 0, to take
  /// its part in every all-reduce).
  int64_t rows(int64_t r) const { return std::max<int64_t>(1, share(r, L)); }

  /// The ranks' sessions, summing through `group` (`handles`: each one's
  /// rank in it).
  std::vector<lf::Session> sessions;
  std::vector<LocalAllReduce::Rank> handles;
  int threads = 1;

  void openSessions(LocalAllReduce &group) {
    threads = o.threads > 0
                  ? o.threads
                  : std::max(1, int(std::thread::hardware_concurrency() /
                                    unsigned(P)));
    for (int64_t r = 0; r < P; ++r)
      handles.push_back({&group, int(r)});
    for (int64_t r = 0; r < P; ++r) {
      lf_session_options options;
      lf_session_options_init(&options);
      options.num_threads = threads;
      options.spin_us = o.spinUs;
      options.rank = int32_t(r);
      options.ranks = int32_t(P);
      options.all_reduce = &LocalAllReduce::call;
      options.all_reduce_user_data = &handles[size_t(r)];
      sessions.emplace_back(module, weights, options);
    }
  }

  /// Each rank's tokens of x (zero rows past its share), its lengths (of
  /// the sequences' given or whole L), and room for its output. --packed:
  /// each rank's real rows end to end and its cu_seqlens instead.
  std::vector<std::vector<int32_t>> rankLengths;
  std::vector<std::vector<int64_t>> rankOffsets;
  void splitInput(size_t row) {
    if (o.packed)
      return packInput(row);
    xs.assign(size_t(P), std::string());
    ys.assign(size_t(P), std::string());
    rankLengths.assign(size_t(P), {});
    for (int64_t r = 0; r < P; ++r) {
      int64_t Lr = share(r, L), R = rows(r);
      std::string &xr = xs[size_t(r)];
      xr.assign(size_t(batch * R) * row, '\0');
      for (int64_t s = 0; s < batch; ++s)
        std::memcpy(&xr[size_t(s * R) * row],
                    x.bytes.data() + size_t(s * L + r * n) * row,
                    size_t(Lr) * row);
      ys[size_t(r)].assign(size_t(batch * R) * row, '\0');
      for (int64_t s = 0; s < batch; ++s)
        rankLengths[size_t(r)].push_back(int32_t(
            share(r, lengths.empty() ? L : lengths[size_t(s)])));
    }
  }

  void packInput(size_t row) {
    xs.assign(size_t(P), std::string());
    ys.assign(size_t(P), std::string());
    rankOffsets.assign(size_t(P), {0});
    for (int64_t r = 0; r < P; ++r) {
      std::vector<int64_t> &offsets = rankOffsets[size_t(r)];
      for (int64_t s = 0; s < batch; ++s) {
        int64_t real = share(r, lengths[size_t(s)]);
        xs[size_t(r)].append(x.bytes.data() + size_t(s * L + r * n) * row,
                             size_t(real) * row);
        offsets.push_back(offsets.back() + real);
      }
      ys[size_t(r)].assign(size_t(offsets.back()) * row, '\0');
    }
  }

  /// Rank `r`'s tensors: x and y, [b, rows, d_model] (packed: [T_r,
  /// d_model]), and its lengths or cu_seqlens.
  std::vector<int64_t> xShape(int64_t r) const {
    if (o.packed)
      return {rankOffsets[size_t(r)].back(), dm};
    return {batch, rows(r), dm};
  }

  /// One run of every rank, each on a thread; a rank that fails aborts the
  /// group, so that the others stop waiting for it.
  int runAll(LocalAllReduce &group) {
    std::vector<std::string> failures(static_cast<size_t>(P));
    std::vector<std::thread> workers;
    for (int64_t r = 0; r < P; ++r)
      workers.emplace_back([&, r] {
        std::vector<int64_t> shape = xShape(r), lShape = {batch},
                             oShape = {batch + 1};
        std::vector<lf::TensorRef> in = {
            lf::TensorRef("x", dtype, shape, xs[size_t(r)].data())};
        if (o.packed)
          in.emplace_back("cu_seqlens", LF_DTYPE_I64, oShape,
                          rankOffsets[size_t(r)].data());
        else if (hasLengths)
          in.emplace_back("lengths", LF_DTYPE_I32, lShape,
                          rankLengths[size_t(r)].data());
        try {
          sessions[size_t(r)].run(
              in, {lf::TensorRef("y", dtype, shape, ys[size_t(r)].data())});
        } catch (const std::exception &e) {
          failures[size_t(r)] = e.what();
          group.abort();
        }
      });
    for (std::thread &w : workers)
      w.join();
    for (int64_t r = 0; r < P; ++r)
      if (!failures[size_t(r)].empty())
        return error("rank " + std::to_string(r) + " of " +
                     std::to_string(P) + ": " + failures[size_t(r)]);
    return 0;
  }

  /// Whether the model takes lengths (or a mask, which the runtime makes
  /// from them).
  bool hasLengths = false;

  int run() {
    if (int rc = readInput())
      return rc;
    // A mask model takes the lengths as a prefix mask.
    for (const lf::TensorInfo &info : module.inputs())
      hasLengths |= info.role == LF_ROLE_LENGTHS || info.role == LF_ROLE_MASK;
    if (o.packed && lengths.empty())
      return error("--packed needs --lengths (where each sequence ends)");
    if (!hasLengths && (!lengths.empty() || L < n * P))
      return error("the model has no lengths or mask input: its " +
                   std::to_string(P) +
                   " ranks take " + std::to_string(n) +
                   " tokens each of every sequence, " +
                   std::to_string(n * P) + " in all");
    LocalAllReduce group(int(P), std::chrono::seconds(600));
    openSessions(group);
    size_t row = size_t(dm) * lf_dtype_size(dtype);
    splitInput(row);
    for (int i = 0; i < o.warmup; ++i)
      if (int rc = runAll(group))
        return rc;
    std::vector<double> ms;
    int64_t bytesBefore = group.bytes();
    for (int i = 0; i < std::max(1, o.repeat); ++i) {
      auto start = std::chrono::steady_clock::now();
      if (int rc = runAll(group))
        return rc;
      ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count());
    }
    std::sort(ms.begin(), ms.end());
    std::fprintf(tOut,
                 "ranks: %lld of %lld tokens each (threads %d each), "
                 "%lld tokens of %lld sequence(s); all-reduced %lld bytes "
                 "a run\n",
                 static_cast<long long>(P), static_cast<long long>(n), threads,
                 static_cast<long long>(L), static_cast<long long>(batch),
                 static_cast<long long>((group.bytes() - bytesBefore) /
                                        std::max(1, o.repeat)));
    std::fprintf(tOut, "median %.3f ms over %zu runs\n", ms[ms.size() / 2],
                 ms.size());
    gather(row);
    return finish();
  }

  /// y [b, L, d_model] from the ranks' rows (packed: their real rows; the
  /// padding stays zero).
  void gather(size_t row) {
    y.dtype = x.dtype;
    y.shape = x.shape;
    y.bytes.assign(x.bytes.size(), '\0');
    for (int64_t r = 0; r < P; ++r)
      for (int64_t s = 0; s < batch; ++s) {
        int64_t from = o.packed ? rankOffsets[size_t(r)][size_t(s)]
                                : s * rows(r);
        int64_t count = o.packed ? rankOffsets[size_t(r)][size_t(s) + 1] - from
                                 : share(r, L);
        std::memcpy(y.bytes.data() + size_t(s * L + r * n) * row,
                    ys[size_t(r)].data() + size_t(from) * row,
                    size_t(count) * row);
      }
  }

  /// --output and --check, on the whole sequence.
  int finish() {
    if (!o.output.empty()) {
      if (std::string e = linformer::writeNpy(o.output, y); !e.empty())
        return error(e);
      std::fprintf(tOut, "wrote %s\n", o.output.c_str());
    }
    if (!o.check)
      return 0;
    linformer::NpyArray noMask;
    return checkAgainstReference(
        module, o.weightsPath,
        CheckedRun{x, y, batch, n * P, L, lengths, noMask, o.packed},
        o.referenceCache, o.tolerance);
  }
};

} // namespace

int runRanks(const Options &options) {
  if (std::string name = unsupported(options); !name.empty())
    return error(name + " is not available for a sequence-parallel artifact "
                        "(its ranks run as threads of one process; --rank R "
                        "runs one alone)");
  Ranks ranks(options);
  return ranks.run();
}

} // namespace detail
} // namespace run
} // namespace linformer
