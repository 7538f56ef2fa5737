//===- RuntimeTest.cpp - Tests of the runtime's C and C++ API -------------===//
//
// Loads artifacts built around the fake kernels (FakeKernels.c) and checks
// what an embedder relies on: loading refuses bad artifacts with the right
// status, weights are checked against the module, runs match an independent
// reference for full and padded inputs, 1 and 4 threads agree bit for bit,
// sessions on one module run concurrently, and every bad call returns a
// status with a message instead of crashing.
//
//===----------------------------------------------------------------------===//

#include "linformer/runtime.h"
#include "linformer/runtime.hpp"

#include "FakeModel.h"
#include "TestUtil.h"

#include "lib/Manifest/Artifact.h"
#include "lib/Manifest/MappedFile.h"
#include "lib/Support/Random.h"
#include "lib/Support/Sha256.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <unistd.h>

using namespace linformer;
using namespace linformer::fake;

namespace {

/// Owns a status from a C call so failing assertions do not leak it.
struct Status {
  explicit Status(lf_status s) : s(s) {}
  ~Status() { lf_status_free(s); }
  Status(const Status &) = delete;
  Status &operator=(const Status &) = delete;
  lf_status_code code() const { return lf_status_get_code(s); }
  std::string message() const { return lf_status_get_message(s); }
  lf_status s;
};

#define EXPECT_OK(expr)                                                        \
  do {                                                                         \
    Status st_(expr);                                                          \
    EXPECT_EQ(st_.code(), LF_OK) << st_.message();                             \
  } while (0)
#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    Status st_(expr);                                                          \
    ASSERT_EQ(st_.code(), LF_OK) << st_.message();                             \
  } while (0)

/// Expects `expr` to fail with `code` and a message containing `text`.
#define EXPECT_STATUS(expr, code_, text)                                       \
  do {                                                                         \
    Status st_(expr);                                                          \
    EXPECT_EQ(st_.code(), code_)                                               \
        << lf_status_code_name(st_.code()) << ": " << st_.message();           \
    EXPECT_NE(st_.message().find(text), std::string::npos)                     \
        << "message: " << st_.message();                                       \
  } while (0)

std::vector<float> randomFloats(size_t count, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<float> v(count);
  for (float &f : v)
    f = float(int64_t(rng.next() % 2000) - 1000) / 250.0f;
  return v;
}

class RuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(dir.path().empty());
    weightsMap = makeWeights(7);
    ASSERT_EQ(writeSafetensors(dir.file("w.safetensors"), weightsMap), "");
    bias = floats(weightsMap["bias"]);
    scale = floats(weightsMap["scale"])[0];
    lengthsPath = artifact("lengths.lfa", makeManifest(Padding::Lengths));
    maskPath = artifact("mask.lfa", makeManifest(Padding::Mask));
    nonePath = artifact("none.lfa", makeManifest(Padding::None));
    ASSERT_OK(lf_weights_load(dir.file("w.safetensors").c_str(), &weights));
  }
  void TearDown() override { lf_weights_free(weights); }

  std::string artifact(const std::string &name, const Manifest &m) {
    std::string path = dir.file(name);
    EXPECT_EQ(writeArtifact(path, m, LINFORMER_FAKE_KERNELS_PATH), "");
    return path;
  }

  lf_module *load(const std::string &path) {
    lf_module *m = nullptr;
    Status st(lf_module_load(path.c_str(), &m));
    EXPECT_EQ(st.code(), LF_OK) << st.message();
    return m;
  }

  lf_session *session(lf_module *m, int threads) {
    lf_session_options o;
    lf_session_options_init(&o);
    o.num_threads = threads;
    lf_session *s = nullptr;
    Status st(lf_session_create(m, weights, &o, &s));
    EXPECT_EQ(st.code(), LF_OK) << st.message();
    return s;
  }

  /// Runs x [B, L, D] (optionally with an extra input) into y [B, yL, D].
  lf_status run(lf_session *s, std::vector<float> &x, int64_t L,
                std::vector<float> &y, int64_t yL,
                const lf_tensor *extra = nullptr) {
    int64_t xs[3] = {kBatch, L, kDim}, ys[3] = {kBatch, yL, kDim};
    y.assign(size_t(kBatch * yL * kDim), -777.0f);
    lf_tensor in[2] = {{"x", LF_DTYPE_F32, 3, xs, x.data()}, {}};
    if (extra)
      in[1] = *extra;
    lf_tensor out = {"y", LF_DTYPE_F32, 3, ys, y.data()};
    return lf_session_run(s, in, extra ? 2 : 1, &out, 1);
  }

  /// real[b*L + t] = t < lengths[b].
  static std::vector<uint8_t> prefix(int64_t L, std::vector<int64_t> lengths) {
    std::vector<uint8_t> real(size_t(kBatch * L), 0);
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t t = 0; t < lengths[size_t(b)]; ++t)
        real[size_t(b * L + t)] = 1;
    return real;
  }

  void expectNear(const std::vector<float> &got,
                  const std::vector<float> &want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i])))
          << "element " << i;
  }

  test::TempDir dir;
  std::map<std::string, SafetensorsEntry> weightsMap;
  std::vector<float> bias;
  float scale = 0;
  std::string lengthsPath, maskPath, nonePath;
  lf_weights *weights = nullptr;
};

TEST_F(RuntimeTest, StatusBasics) {
  EXPECT_EQ(lf_status_get_code(nullptr), LF_OK);
  EXPECT_STREQ(lf_status_get_message(nullptr), "");
  lf_status_free(nullptr);
  EXPECT_STREQ(lf_status_code_name(LF_SHAPE_MISMATCH), "LF_SHAPE_MISMATCH");
  EXPECT_STREQ(lf_status_code_name(lf_status_code(99)), "LF_UNKNOWN");
  EXPECT_STREQ(lf_runtime_version(), "0.1.0");
  EXPECT_EQ(lf_dtype_size(LF_DTYPE_BF16), 2u);
  EXPECT_EQ(lf_dtype_size(lf_dtype(42)), 0u);
  EXPECT_STREQ(lf_dtype_name(LF_DTYPE_I64), "i64");
}

TEST_F(RuntimeTest, DescribesTheModule) {
  lf_module *m = load(lengthsPath);
  ASSERT_NE(m, nullptr);
  size_t n = 0;
  EXPECT_OK(lf_module_count(m, LF_IO_INPUT, &n));
  EXPECT_EQ(n, 2u);
  EXPECT_OK(lf_module_count(m, LF_IO_OUTPUT, &n));
  EXPECT_EQ(n, 1u);
  EXPECT_OK(lf_module_count(m, LF_IO_WEIGHT, &n));
  EXPECT_EQ(n, 2u);
  lf_tensor_desc d;
  EXPECT_OK(lf_module_describe(m, LF_IO_INPUT, 1, &d));
  EXPECT_STREQ(d.name, "lengths");
  EXPECT_EQ(d.role, LF_ROLE_LENGTHS);
  EXPECT_EQ(d.dtype, LF_DTYPE_I32);
  ASSERT_EQ(d.rank, 1);
  EXPECT_EQ(d.shape[0], kBatch);
  EXPECT_STATUS(lf_module_describe(m, LF_IO_INPUT, 2, &d), LF_INVALID_ARGUMENT,
                "out of range");
  EXPECT_STATUS(lf_module_count(m, lf_io_kind(7), &n), LF_INVALID_ARGUMENT,
                "lf_io_kind");
  int64_t b = 0, seq = 0;
  EXPECT_OK(lf_module_sequence_shape(m, &b, &seq));
  EXPECT_EQ(b, kBatch);
  EXPECT_EQ(seq, kSeq);
  const char *json = nullptr;
  EXPECT_OK(lf_module_manifest(m, &json));
  EXPECT_NE(std::string(json).find("fake_pool_lengths"), std::string::npos);
  lf_module_free(m);
}

TEST_F(RuntimeTest, OneAndFourThreadsAgreeWithTheReference) {
  lf_module *m = load(lengthsPath);
  std::vector<float> x = randomFloats(size_t(kBatch * kSeq * kDim), 1);
  std::vector<float> want =
      expectedOutput(x, kSeq, prefix(kSeq, {kSeq, kSeq}), bias, scale);
  std::vector<float> y1, y4;
  lf_session *s1 = session(m, 1), *s4 = session(m, 4);
  int32_t threads = 0;
  EXPECT_OK(lf_session_num_threads(s4, &threads));
  EXPECT_EQ(threads, 4);
  ASSERT_OK(run(s1, x, kSeq, y1, kSeq));
  ASSERT_OK(run(s4, x, kSeq, y4, kSeq));
  expectNear(y1, want);
  EXPECT_EQ(0, std::memcmp(y1.data(), y4.data(), y1.size() * sizeof(float)));
  // Again on the same sessions: buffers are reused, results stay the same.
  std::vector<float> again;
  ASSERT_OK(run(s4, x, kSeq, again, kSeq));
  EXPECT_EQ(again, y4);
  lf_session_free(s1);
  lf_session_free(s4);
  lf_module_free(m);
}

/// The all-reduce a sequence-parallel session calls, for the tests: it
/// records each call and doubles the buffer (the sum over two ranks that
/// hold the same partial sums), or fails with `rc`.
struct FakeAllReduce {
  int32_t rc = 0;
  std::vector<int64_t> counts;
  std::vector<lf_dtype> dtypes;
  /// What the last call was given, before it summed.
  std::vector<float> last;
  static int32_t call(void *self, void *data, int64_t count, lf_dtype dtype) {
    auto *f = static_cast<FakeAllReduce *>(self);
    f->counts.push_back(count);
    f->dtypes.push_back(dtype);
    f->last.assign(static_cast<float *>(data),
                   static_cast<float *>(data) + count);
    for (int64_t i = 0; i < count; ++i)
      static_cast<float *>(data)[i] *= 2;
    return f->rc;
  }
};

TEST_F(RuntimeTest, SequenceParallelStepsCallTheAllReduce) {
  // fake_add writes tmp (x + bias), an all-reduce step sums it over two
  // ranks, and the pool reads the sum: the output is the one of x and bias
  // doubled (the kernels are linear in tmp).
  Manifest manifest = makeManifest(Padding::None);
  ManifestKernel step{"fake_all_reduce_0", 1, {4}, "{}"};
  step.allReduce = 2;
  manifest.kernels.insert(manifest.kernels.begin() + 1, step);
  manifest.formatVersion = formatVersionFor(manifest);
  EXPECT_EQ(manifest.formatVersion, kManifestFormatVersionCollectives);
  lf_module *m = load(artifact("parallel.lfa", manifest));
  ASSERT_NE(m, nullptr);
  int64_t ranks = -1;
  EXPECT_OK(lf_module_sequence_parallel(m, &ranks));
  EXPECT_EQ(ranks, 2);
  lf_module *plain = load(nonePath);
  EXPECT_OK(lf_module_sequence_parallel(plain, &ranks));
  EXPECT_EQ(ranks, 0);

  FakeAllReduce fake;
  lf_session_options o;
  lf_session_options_init(&o);
  o.num_threads = 2;
  lf_session *s = nullptr;
  // Each option a sequence-parallel session needs, refused by name.
  EXPECT_STATUS(lf_session_create(m, weights, &o, &s), LF_INVALID_ARGUMENT,
                "splits each sequence over 2 ranks, but the options give "
                "ranks = 0");
  o.ranks = 2;
  o.rank = 2;
  EXPECT_STATUS(lf_session_create(m, weights, &o, &s), LF_INVALID_ARGUMENT,
                "rank 2 is not in [0, 2)");
  o.rank = 1;
  EXPECT_STATUS(lf_session_create(m, weights, &o, &s), LF_INVALID_ARGUMENT,
                "the options give no all_reduce");
  o.all_reduce = &FakeAllReduce::call;
  o.all_reduce_user_data = &fake;
  // A caller built against the header before these fields: no all_reduce.
  lf_session_options old = o;
  old.struct_size = offsetof(lf_session_options, rank);
  EXPECT_STATUS(lf_session_create(m, weights, &old, &s), LF_INVALID_ARGUMENT,
                "ranks = 0");
  // Whole-sequence modules take none of them.
  EXPECT_STATUS(lf_session_create(plain, weights, &o, &s),
                LF_INVALID_ARGUMENT, "is not sequence-parallel");
  ASSERT_OK(lf_session_create(m, weights, &o, &s));

  std::vector<float> x = randomFloats(size_t(kBatch * kSeq * kDim), 3);
  std::vector<float> x2 = x, bias2 = bias, y;
  for (float &v : x2)
    v *= 2;
  for (float &v : bias2)
    v *= 2;
  ASSERT_OK(run(s, x, kSeq, y, kSeq));
  expectNear(y, expectedOutput(x2, kSeq, prefix(kSeq, {kSeq, kSeq}), bias2,
                               scale));
  ASSERT_EQ(fake.counts.size(), 1u);
  EXPECT_EQ(fake.counts[0], kBatch * kSeq * kDim);
  EXPECT_EQ(fake.dtypes[0], LF_DTYPE_F32);
  // The transport's failure fails the run, by name.
  fake.rc = 7;
  EXPECT_STATUS(run(s, x, kSeq, y, kSeq), LF_ABORTED,
                "the all-reduce failed (returned 7) at step "
                "'fake_all_reduce_0' (256 f32 elements), rank 1 of 2");
  EXPECT_STREQ(lf_status_code_name(LF_ABORTED), "LF_ABORTED");
  lf_session_free(s);
  lf_module_free(plain);
  lf_module_free(m);
}

TEST_F(RuntimeTest, SequenceParallelGatherPlacesTheRanksBlocks) {
  // An all-gather of tmp ([batch, n, d]: 2 blocks, a sequence each) into a
  // whole buffer twice its size: rank 1's blocks go to blocks 1 and 3 of
  // the whole, zeros elsewhere, and the all-reduce sums the whole. The pool
  // reads tmp, so the output is the plain one.
  Manifest manifest = makeManifest(Padding::None);
  ManifestBuffer whole;
  whole.name = "whole";
  whole.kind = BufferKind::Intermediate;
  whole.bytes = uint64_t(2 * kBatch * kSeq * kDim * 4);
  manifest.buffers.push_back(whole); // 5
  ManifestKernel step{"fake_all_gather_0", 1, {4, 5}, "{}"};
  step.allReduce = 2;
  step.gatherBlocks = kBatch;
  manifest.kernels.insert(manifest.kernels.begin() + 1, step);
  manifest.formatVersion = formatVersionFor(manifest);
  lf_module *m = load(artifact("gather.lfa", manifest));
  ASSERT_NE(m, nullptr);
  FakeAllReduce fake;
  lf_session_options o;
  lf_session_options_init(&o);
  o.ranks = 2;
  o.rank = 1;
  o.all_reduce = &FakeAllReduce::call;
  o.all_reduce_user_data = &fake;
  lf_session *s = nullptr;
  ASSERT_OK(lf_session_create(m, weights, &o, &s));
  std::vector<float> x = randomFloats(size_t(kBatch * kSeq * kDim), 5);
  std::vector<float> y;
  ASSERT_OK(run(s, x, kSeq, y, kSeq));
  expectNear(y, expectedOutput(x, kSeq, prefix(kSeq, {kSeq, kSeq}), bias,
                               scale));
  const size_t block = size_t(kSeq * kDim);
  ASSERT_EQ(fake.counts.size(), 1u);
  EXPECT_EQ(fake.counts[0], int64_t(2 * kBatch * block));
  ASSERT_EQ(fake.last.size(), 2 * kBatch * block);
  for (size_t i = 0; i < size_t(kBatch); ++i)
    for (size_t j = 0; j < block; ++j) {
      // tmp = x + bias (fake_add).
      float tmp = x[i * block + j] + bias[j % size_t(kDim)];
      EXPECT_EQ(fake.last[(2 * i + 1) * block + j], tmp) << i << ", " << j;
      EXPECT_EQ(fake.last[2 * i * block + j], 0.0f) << i << ", " << j;
    }
  lf_session_free(s);
  lf_module_free(m);
}

TEST_F(RuntimeTest, ShortInputIsPaddedAndLengthsFilled) {
  lf_module *m = load(lengthsPath);
  lf_session *s = session(m, 3);
  const int64_t L = 10;
  std::vector<float> x = randomFloats(size_t(kBatch * L * kDim), 2);
  std::vector<float> y;
  // Default lengths: L for every sequence.
  ASSERT_OK(run(s, x, L, y, L));
  expectNear(y, expectedOutput(x, L, prefix(L, {L, L}), bias, scale));
  // Caller lengths (i32 and i64).
  int32_t len32[2] = {10, 3};
  int64_t lshape[1] = {kBatch};
  lf_tensor lengths = {"lengths", LF_DTYPE_I32, 1, lshape, len32};
  ASSERT_OK(run(s, x, L, y, L, &lengths));
  std::vector<float> want =
      expectedOutput(x, L, prefix(L, {10, 3}), bias, scale);
  expectNear(y, want);
  int64_t len64[2] = {10, 3};
  lf_tensor lengths64 = {"lengths", LF_DTYPE_I64, 1, lshape, len64};
  ASSERT_OK(run(s, x, L, y, L, &lengths64));
  expectNear(y, want);
  // A prefix mask converts to lengths.
  std::vector<uint8_t> mask = prefix(L, {10, 3});
  int64_t mshape[2] = {kBatch, L};
  lf_tensor maskT = {"mask", LF_DTYPE_U8, 2, mshape, mask.data()};
  ASSERT_OK(run(s, x, L, y, L, &maskT));
  expectNear(y, want);
  mask[1] = 0; // a hole: not expressible as lengths
  EXPECT_STATUS(run(s, x, L, y, L, &maskT), LF_INVALID_ARGUMENT,
                "not a prefix mask");
  // Output of the full compiled length: the first L rows match, the padding
  // rows are whatever the kernels wrote (zeros for these kernels).
  std::vector<float> full;
  ASSERT_OK(run(s, x, L, full, kSeq));
  std::vector<float> firstRows;
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t t = 0; t < L; ++t)
      for (int64_t c = 0; c < kDim; ++c)
        firstRows.push_back(full[size_t((b * kSeq + t) * kDim + c)]);
  expectNear(firstRows, expectedOutput(x, L, prefix(L, {L, L}), bias, scale));
  EXPECT_EQ(full[size_t((0 * kSeq + L) * kDim)], 0.0f);
  lf_session_free(s);
  lf_module_free(m);
}

TEST_F(RuntimeTest, MaskModel) {
  lf_module *m = load(maskPath);
  lf_session *s = session(m, 2);
  const int64_t L = 12;
  std::vector<float> x = randomFloats(size_t(kBatch * L * kDim), 3);
  std::vector<float> y;
  ASSERT_OK(run(s, x, L, y, L));
  expectNear(y, expectedOutput(x, L, prefix(L, {L, L}), bias, scale));
  // An arbitrary (non-prefix) caller mask.
  std::vector<uint8_t> mask(size_t(kBatch * L));
  for (size_t i = 0; i < mask.size(); ++i)
    mask[i] = (i % 3) != 1;
  int64_t mshape[2] = {kBatch, L};
  lf_tensor maskT = {"mask", LF_DTYPE_U8, 2, mshape, mask.data()};
  ASSERT_OK(run(s, x, L, y, L, &maskT));
  expectNear(y, expectedOutput(x, L, mask, bias, scale));
  // Lengths convert to a prefix mask.
  int32_t len[2] = {5, 12};
  int64_t lshape[1] = {kBatch};
  lf_tensor lengths = {"lengths", LF_DTYPE_I32, 1, lshape, len};
  ASSERT_OK(run(s, x, L, y, L, &lengths));
  expectNear(y, expectedOutput(x, L, prefix(L, {5, 12}), bias, scale));
  // A row without any real token.
  std::fill(mask.begin(), mask.begin() + L, 0);
  EXPECT_STATUS(run(s, x, L, y, L, &maskT), LF_INVALID_ARGUMENT,
                "row 0 has no real token");
  int64_t badShape[2] = {kBatch, kSeq};
  lf_tensor wrongMask = {"mask", LF_DTYPE_U8, 2, badShape, mask.data()};
  EXPECT_STATUS(run(s, x, L, y, L, &wrongMask), LF_SHAPE_MISMATCH,
                "expected [2, 12]");
  lf_session_free(s);
  lf_module_free(m);
}

TEST_F(RuntimeTest, ModelWithoutPaddingInputNeedsFullLength) {
  lf_module *m = load(nonePath);
  lf_session *s = session(m, 2);
  std::vector<float> x = randomFloats(size_t(kBatch * kSeq * kDim), 4), y;
  ASSERT_OK(run(s, x, kSeq, y, kSeq));
  expectNear(y,
             expectedOutput(x, kSeq, prefix(kSeq, {kSeq, kSeq}), bias, scale));
  std::vector<float> shortX = randomFloats(size_t(kBatch * 9 * kDim), 4);
  EXPECT_STATUS(run(s, shortX, 9, y, 9), LF_SHAPE_MISMATCH,
                "has no lengths or mask input");
  int32_t len[2] = {3, 3};
  int64_t lshape[1] = {kBatch};
  lf_tensor lengths = {"lengths", LF_DTYPE_I32, 1, lshape, len};
  EXPECT_STATUS(run(s, x, kSeq, y, kSeq, &lengths), LF_INVALID_ARGUMENT,
                "unknown input 'lengths'");
  lf_session_free(s);
  lf_module_free(m);
}

TEST_F(RuntimeTest, BadInputsGiveStatuses) {
  lf_module *m = load(lengthsPath);
  lf_session *s = session(m, 2);
  std::vector<float> x = randomFloats(size_t(kBatch * (kSeq + 1) * kDim), 5);
  std::vector<float> y(size_t(kBatch * (kSeq + 1) * kDim));
  auto call = [&](std::vector<int64_t> xs, lf_dtype dt = LF_DTYPE_F32,
                  std::vector<int64_t> ys = {kBatch, kSeq, kDim},
                  const char *name = "x") {
    lf_tensor in = {name, dt, int32_t(xs.size()), xs.data(), x.data()};
    lf_tensor out = {"y", LF_DTYPE_F32, int32_t(ys.size()), ys.data(),
                     y.data()};
    return lf_session_run(s, &in, 1, &out, 1);
  };
  EXPECT_STATUS(call({kBatch, kSeq}), LF_SHAPE_MISMATCH,
                "rank 2, the model expects rank 3");
  EXPECT_STATUS(call({kBatch, kSeq + 1, kDim}), LF_SHAPE_MISMATCH,
                "sequence length 17 exceeds the compiled n = 16");
  EXPECT_STATUS(call({kBatch + 1, kSeq, kDim}), LF_SHAPE_MISMATCH,
                "batch 3, the model was compiled for batch 2");
  EXPECT_STATUS(call({kBatch, kSeq, kDim + 1}), LF_SHAPE_MISMATCH,
                "dimension 2 must be 8");
  EXPECT_STATUS(call({kBatch, 0, kDim}), LF_SHAPE_MISMATCH, "empty");
  EXPECT_STATUS(call({kBatch, -3, kDim}), LF_SHAPE_MISMATCH, "negative");
  EXPECT_STATUS(call({kBatch, kSeq, kDim}, LF_DTYPE_F16), LF_INVALID_ARGUMENT,
                "input 'x' is f16, the model expects f32");
  EXPECT_STATUS(call({kBatch, kSeq, kDim}, lf_dtype(17)), LF_INVALID_ARGUMENT,
                "unknown dtype 17");
  EXPECT_STATUS(call({kBatch, kSeq, kDim}, LF_DTYPE_F32, {kBatch, 5, kDim}),
                LF_SHAPE_MISMATCH,
                "output 'y' has shape [2, 5, 8], expected [2, 16, 8]");
  EXPECT_STATUS(
      call({kBatch, kSeq, kDim}, LF_DTYPE_F32, {kBatch, kSeq, kDim}, "z"),
      LF_INVALID_ARGUMENT, "unknown input 'z'");
  EXPECT_STATUS(
      call({kBatch, kSeq, kDim}, LF_DTYPE_F32, {kBatch, kSeq, kDim}, "bias"),
      LF_INVALID_ARGUMENT, "'bias' is a weight of the model");
  EXPECT_STATUS(lf_session_run(s, nullptr, 0, nullptr, 0), LF_INVALID_ARGUMENT,
                "missing input 'x'");
  EXPECT_STATUS(lf_session_run(s, nullptr, 1, nullptr, 0), LF_INVALID_ARGUMENT,
                "inputs is null");
  EXPECT_STATUS(lf_session_run(nullptr, nullptr, 0, nullptr, 0),
                LF_INVALID_ARGUMENT, "session is null");
  // Lengths out of [1, L].
  for (int32_t bad : {0, -1, 11}) {
    std::vector<float> xs = randomFloats(size_t(kBatch * 10 * kDim), 6), ys;
    int32_t len[2] = {5, bad};
    int64_t lshape[1] = {kBatch};
    lf_tensor lengths = {"lengths", LF_DTYPE_I32, 1, lshape, len};
    EXPECT_STATUS(run(s, xs, 10, ys, 10, &lengths), LF_INVALID_ARGUMENT,
                  "lengths[1] = " + std::to_string(bad) +
                      " is outside [1, 10]");
  }
  int32_t len[3] = {1, 1, 1};
  int64_t lshape[1] = {3};
  lf_tensor lengths = {"lengths", LF_DTYPE_I32, 1, lshape, len};
  std::vector<float> xs = randomFloats(size_t(kBatch * 10 * kDim), 6), ys;
  EXPECT_STATUS(run(s, xs, 10, ys, 10, &lengths), LF_SHAPE_MISMATCH,
                "input 'lengths' has shape [3], expected [2]");
  // Same input twice.
  int64_t shape[3] = {kBatch, kSeq, kDim};
  lf_tensor twice[2] = {{"x", LF_DTYPE_F32, 3, shape, x.data()},
                        {"x", LF_DTYPE_F32, 3, shape, x.data()}};
  EXPECT_STATUS(lf_session_run(s, twice, 2, nullptr, 0), LF_INVALID_ARGUMENT,
                "given twice");
  lf_tensor nullData = {"x", LF_DTYPE_F32, 3, shape, nullptr};
  EXPECT_STATUS(lf_session_run(s, &nullData, 1, nullptr, 0),
                LF_INVALID_ARGUMENT, "null data");
  // After all that the session still works.
  std::vector<float> good = randomFloats(size_t(kBatch * kSeq * kDim), 8), out;
  EXPECT_OK(run(s, good, kSeq, out, kSeq));
  lf_session_free(s);
  lf_module_free(m);
}

/// Runs x `xs` (packed, with cu_seqlens `offsets` as `offsetType`: i32
/// values for I32, else the i64 values as they are) and `extra` into y `ys`.
lf_status runPacked(lf_session *s, std::vector<int64_t> offsets,
                    lf_dtype offsetType, std::vector<int64_t> xs, float *x,
                    std::vector<int64_t> ys, float *y,
                    const lf_tensor *extra = nullptr) {
  std::vector<int32_t> o32(offsets.begin(), offsets.end());
  int64_t os[1] = {int64_t(offsets.size())};
  lf_tensor in[3] = {
      {"x", LF_DTYPE_F32, int32_t(xs.size()), xs.data(), x},
      {"cu_seqlens", offsetType, 1, os,
       offsetType == LF_DTYPE_I32 ? static_cast<void *>(o32.data())
                                  : static_cast<void *>(offsets.data())},
      {}};
  if (extra)
    in[2] = *extra;
  lf_tensor out = {"y", LF_DTYPE_F32, int32_t(ys.size()), ys.data(), y};
  return lf_session_run(s, in, extra ? 3 : 2, &out, 1);
}

/// A packed run of `lengths` (x [T, kDim] from the padded [kBatch, kSeq,
/// kDim] `padded`: each sequence's first lengths[i] rows), into y [T, kDim].
struct Packed {
  std::vector<int64_t> lengths;
  std::vector<int64_t> offsets; ///< [b + 1]
  std::vector<float> x, y;
  Packed(const std::vector<float> &padded, std::vector<int64_t> lens)
      : lengths(std::move(lens)), x(realRows(padded)) {
    offsets.push_back(0);
    for (int64_t len : lengths)
      offsets.push_back(offsets.back() + len);
    y.assign(x.size(), -777.0f);
  }
  /// The rows of a padded [b, kSeq, kDim] tensor that are real.
  std::vector<float> realRows(const std::vector<float> &padded) const {
    std::vector<float> out;
    for (size_t i = 0; i < lengths.size(); ++i) {
      auto row = padded.begin() + int64_t(i) * kSeq * kDim;
      out.insert(out.end(), row, row + lengths[i] * kDim);
    }
    return out;
  }
  lf_status run(lf_session *s, lf_dtype offsetType = LF_DTYPE_I32,
                const lf_tensor *extra = nullptr) {
    int64_t total = offsets.back();
    return runPacked(s, offsets, offsetType, {total, kDim}, x.data(),
                     {total, kDim}, y.data(), extra);
  }
};

TEST_F(RuntimeTest, PackedInputGivesThePaddedRunsRealRows) {
  for (const std::string &path : {lengthsPath, maskPath}) {
    SCOPED_TRACE(path);
    lf_module *m = load(path);
    lf_session *s = session(m, 3);
    std::vector<float> x = randomFloats(size_t(kBatch * kSeq * kDim), 21);
    for (std::vector<int64_t> lens :
         {std::vector<int64_t>{5, 16}, {16, 1}, {16, 16}, {7, 9}}) {
      SCOPED_TRACE(::testing::PrintToString(lens));
      // The padded run with the same lengths: its real rows, bit for bit.
      std::vector<float> padded;
      int32_t len[2] = {int32_t(lens[0]), int32_t(lens[1])};
      int64_t lshape[1] = {kBatch};
      lf_tensor lengths = {"lengths", LF_DTYPE_I32, 1, lshape, len};
      ASSERT_OK(run(s, x, kSeq, padded, kSeq, &lengths));
      expectNear(padded,
                 expectedOutput(x, kSeq, prefix(kSeq, lens), bias, scale));
      for (lf_dtype type : {LF_DTYPE_I32, LF_DTYPE_I64}) {
        Packed p(x, lens);
        ASSERT_OK(p.run(s, type));
        EXPECT_EQ(p.y, p.realRows(padded));
      }
    }
    lf_session_free(s);
    lf_module_free(m);
  }
}

TEST_F(RuntimeTest, PackedRunOfFewerSequencesThanCompiled) {
  // A lengths model's batch is a maximum, packed or not.
  lf_module *m = load(lengthsPath);
  lf_session *s = session(m, 2);
  std::vector<float> x = randomFloats(size_t(kBatch * kSeq * kDim), 22);
  std::vector<float> padded;
  int32_t len[2] = {11, 1};
  int64_t lshape[1] = {kBatch};
  lf_tensor lengths = {"lengths", LF_DTYPE_I32, 1, lshape, len};
  ASSERT_OK(run(s, x, kSeq, padded, kSeq, &lengths));
  Packed p(x, {11});
  ASSERT_OK(p.run(s));
  std::vector<float> first = Packed(x, {11, 1}).realRows(padded);
  first.resize(size_t(11 * kDim));
  EXPECT_EQ(p.y, first);
  // A mask model takes exactly its batch.
  lf_module *mm = load(maskPath);
  lf_session *ms = session(mm, 2);
  EXPECT_STATUS(p.run(ms), LF_SHAPE_MISMATCH,
                "input 'cu_seqlens' has 2 entries: 1 sequences, and the model "
                "was compiled for batch 2 (exactly that many)");
  lf_session_free(ms);
  lf_module_free(mm);
  lf_session_free(s);
  lf_module_free(m);
}

TEST_F(RuntimeTest, BadPackedInputsGiveStatusesAndLeaveOutputsAlone) {
  lf_module *m = load(lengthsPath);
  lf_session *s = session(m, 2);
  std::vector<float> x = randomFloats(size_t(kBatch * kSeq * kDim), 23);
  std::vector<float> y(size_t(kBatch * kSeq * kDim), -777.0f);
  auto call = [&](std::vector<int64_t> offsets, std::vector<int64_t> xs,
                  std::vector<int64_t> ys, const lf_tensor *extra = nullptr,
                  lf_dtype offsetType = LF_DTYPE_I64) {
    return runPacked(s, offsets, offsetType, xs, x.data(), ys, y.data(),
                     extra);
  };
  EXPECT_STATUS(call({1, 5, 9}, {9, kDim}, {9, kDim}), LF_SHAPE_MISMATCH,
                "cu_seqlens[0] = 1, expected 0");
  EXPECT_STATUS(call({0, 5, 5}, {5, kDim}, {5, kDim}), LF_SHAPE_MISMATCH,
                "sequence 1 has no tokens (cu_seqlens[2] = 5, cu_seqlens[1] "
                "= 5; offsets must increase)");
  EXPECT_STATUS(call({0, 9, 4}, {4, kDim}, {4, kDim}), LF_SHAPE_MISMATCH,
                "sequence 1 has no tokens");
  EXPECT_STATUS(call({0, 5, INT64_MIN}, {4, kDim}, {4, kDim}),
                LF_SHAPE_MISMATCH, "sequence 1 has no tokens");
  EXPECT_STATUS(call({0, 17, 20}, {20, kDim}, {20, kDim}), LF_SHAPE_MISMATCH,
                "sequence 0 has 17 tokens (cu_seqlens[1] = 17, cu_seqlens[0] "
                "= 0), more than the compiled n = 16");
  EXPECT_STATUS(call({0}, {0, kDim}, {0, kDim}), LF_SHAPE_MISMATCH,
                "input 'cu_seqlens' has shape [1], expected [b + 1]");
  EXPECT_STATUS(call({0, 1, 2, 3}, {3, kDim}, {3, kDim}), LF_SHAPE_MISMATCH,
                "3 sequences, and the model was compiled for batch 2 (at "
                "most 2 sequences)");
  EXPECT_STATUS(call({0, 5, 9}, {10, kDim}, {9, kDim}), LF_SHAPE_MISMATCH,
                "input 'x' has shape [10, 8], and packed inputs must be [9, 8] "
                "(the 9 tokens cu_seqlens ends at");
  EXPECT_STATUS(call({0, 5, 9}, {kBatch, kSeq, kDim}, {9, kDim}),
                LF_SHAPE_MISMATCH, "packed inputs must be [9, 8]");
  EXPECT_STATUS(call({0, 5, 9}, {9, kDim}, {kBatch, kSeq, kDim}),
                LF_SHAPE_MISMATCH,
                "output 'y' has shape [2, 16, 8], expected [9, 8] (packed, "
                "as the input with cu_seqlens)");
  EXPECT_STATUS(call({0, 5, 9}, {9, kDim}, {9, kDim}, nullptr, LF_DTYPE_F32),
                LF_INVALID_ARGUMENT, "input 'cu_seqlens' is f32, expected i32 "
                                     "or i64");
  int32_t len[2] = {5, 4};
  int64_t lshape[1] = {kBatch};
  lf_tensor lengths = {"lengths", LF_DTYPE_I32, 1, lshape, len};
  EXPECT_STATUS(call({0, 5, 9}, {9, kDim}, {9, kDim}, &lengths),
                LF_INVALID_ARGUMENT,
                "'cu_seqlens' and 'lengths' are both given");
  for (float v : y)
    ASSERT_EQ(v, -777.0f) << "a refused run wrote to its output";
  // A model that cannot tell padding has no packed form.
  lf_module *nm = load(nonePath);
  lf_session *ns = session(nm, 2);
  Packed p(x, {16, 16});
  EXPECT_STATUS(p.run(ns), LF_SHAPE_MISMATCH,
                "needs a model with a lengths or mask input");
  lf_session_free(ns);
  lf_module_free(nm);
  // Still usable.
  Packed good(x, {3, 12});
  EXPECT_OK(good.run(s));
  lf_session_free(s);
  lf_module_free(m);
}

TEST_F(RuntimeTest, CallerBuffersOffAlignmentRun) {
  lf_module *m = load(lengthsPath);
  lf_session *s = session(m, 2);
  size_t count = size_t(kBatch * kSeq * kDim);
  std::vector<float> x = randomFloats(count, 9);
  std::vector<float> want =
      expectedOutput(x, kSeq, prefix(kSeq, {kSeq, kSeq}), bias, scale);
  // Storage offset by one float (aligned to its elements, not to 64
  // bytes: bound in place, as the kernels assume natural alignment only)
  // and by two bytes (misaligned for a float: copied in and out).
  for (size_t offset : {sizeof(float), size_t(2)}) {
    std::vector<float> xStore(count + 16), yStore(count + 16);
    auto *xp = reinterpret_cast<char *>(xStore.data()) + offset;
    auto *yp = reinterpret_cast<char *>(yStore.data()) + offset;
    std::memcpy(xp, x.data(), count * sizeof(float));
    int64_t shape[3] = {kBatch, kSeq, kDim};
    lf_tensor in = {"x", LF_DTYPE_F32, 3, shape, xp};
    lf_tensor out = {"y", LF_DTYPE_F32, 3, shape, yp};
    ASSERT_OK(lf_session_run(s, &in, 1, &out, 1));
    std::vector<float> y(count);
    std::memcpy(y.data(), yp, count * sizeof(float));
    expectNear(y, want);
  }
  lf_session_free(s);
  lf_module_free(m);
}

TEST_F(RuntimeTest, SessionsThatDoNotSpinGiveTheSameBytes) {
  // spin_us = 0: the workers sleep between kernels at once (every kernel
  // wakes them); the outputs are those of the spinning default.
  lf_module *m = load(lengthsPath);
  lf_session_options o;
  lf_session_options_init(&o);
  EXPECT_EQ(o.spin_us, -1);
  o.num_threads = 3;
  lf_session *spinning = nullptr, *sleeping = nullptr;
  ASSERT_OK(lf_session_create(m, weights, &o, &spinning));
  o.spin_us = 0;
  ASSERT_OK(lf_session_create(m, weights, &o, &sleeping));
  for (int i = 0; i < 20; ++i) {
    int64_t L = 1 + i % kSeq;
    std::vector<float> x = randomFloats(size_t(kBatch * L * kDim), 40 + i), a,
                       b;
    ASSERT_OK(run(spinning, x, L, a, L));
    ASSERT_OK(run(sleeping, x, L, b, L));
    ASSERT_EQ(a, b) << "L = " << L;
  }
  lf_session_free(spinning);
  lf_session_free(sleeping);
  lf_module_free(m);
}

TEST_F(RuntimeTest, SessionsOnOneModuleRunConcurrently) {
  lf_module *m = load(lengthsPath);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      lf_session *s = session(m, 2);
      for (int i = 0; i < 25; ++i) {
        int64_t L = 1 + (t * 25 + i) % kSeq;
        std::vector<float> x = randomFloats(size_t(kBatch * L * kDim),
                                            uint64_t(t * 100 + i)),
                           y;
        Status st(run(s, x, L, y, L));
        std::vector<float> want =
            expectedOutput(x, L, prefix(L, {L, L}), bias, scale);
        bool ok = st.code() == LF_OK;
        for (size_t k = 0; ok && k < y.size(); ++k)
          ok = std::abs(y[k] - want[k]) <= 1e-4f * (1 + std::abs(want[k]));
        if (!ok)
          ++failures;
      }
      lf_session_free(s);
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
  lf_module_free(m);
}

TEST_F(RuntimeTest, OneSessionFromSeveralThreadsIsSerialised) {
  lf_module *m = load(lengthsPath);
  lf_session *s = session(m, 2);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        int64_t L = kSeq - (t + i) % 5;
        std::vector<float> x = randomFloats(size_t(kBatch * L * kDim),
                                            uint64_t(t * 50 + i)),
                           y;
        Status st(run(s, x, L, y, L));
        std::vector<float> want =
            expectedOutput(x, L, prefix(L, {L, L}), bias, scale);
        bool ok = st.code() == LF_OK;
        for (size_t k = 0; ok && k < y.size(); ++k)
          ok = std::abs(y[k] - want[k]) <= 1e-4f * (1 + std::abs(want[k]));
        if (!ok)
          ++failures;
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
  lf_session_free(s);
  lf_module_free(m);
}

TEST_F(RuntimeTest, KernelsRunInOrderWithABarrierBetween) {
  // fake_clear -> fake_mark (slow workgroups) -> fake_check: without a
  // barrier, fake_check sees unset marks; without ordering, cleared ones.
  const int64_t marks = 64;
  Manifest probe;
  probe.compilerVersion = "test";
  probe.entry = "probe";
  ManifestBuffer m;
  m.name = "marks";
  m.kind = BufferKind::Intermediate;
  m.bytes = uint64_t(marks * 4);
  ManifestBuffer ok;
  ok.name = "ok";
  ok.kind = BufferKind::Output;
  ok.dtype = DType::I32;
  ok.shape = {marks};
  probe.buffers = {m, ok};
  probe.kernels = {{"fake_clear", marks, {0}, "{}"},
                   {"fake_mark", marks, {0}, "{}"},
                   {"fake_check", marks, {0, 1}, "{}"}};
  lf_module *mod = load(artifact("probe.lfa", probe));
  lf_session *s = session(mod, 4);
  for (int i = 0; i < 10; ++i) {
    std::vector<int32_t> result(size_t(marks), -1);
    int64_t shape[1] = {marks};
    lf_tensor out = {"ok", LF_DTYPE_I32, 1, shape, result.data()};
    ASSERT_OK(lf_session_run(s, nullptr, 0, &out, 1));
    for (int64_t r = 0; r < marks; ++r)
      ASSERT_EQ(result[size_t(r)], 1) << "run " << i << " workgroup " << r;
  }
  lf_session_free(s);
  lf_module_free(mod);
}

TEST_F(RuntimeTest, HandlesMayBeFreedBeforeTheSession) {
  lf_module *m = load(lengthsPath);
  lf_weights *w = nullptr;
  ASSERT_OK(lf_weights_load(dir.file("w.safetensors").c_str(), &w));
  lf_session *s = nullptr;
  ASSERT_OK(lf_session_create(m, w, nullptr, &s));
  lf_module_free(m);
  lf_weights_free(w);
  std::vector<float> x = randomFloats(size_t(kBatch * kSeq * kDim), 10), y;
  ASSERT_OK(run(s, x, kSeq, y, kSeq));
  expectNear(y,
             expectedOutput(x, kSeq, prefix(kSeq, {kSeq, kSeq}), bias, scale));
  lf_session_free(s);
}

TEST_F(RuntimeTest, ModuleLoadErrors) {
  lf_module *m = nullptr;
  EXPECT_STATUS(lf_module_load("/nonexistent/model.lfa", &m), LF_IO_ERROR,
                "/nonexistent/model.lfa");
  EXPECT_EQ(m, nullptr);
  EXPECT_STATUS(lf_module_load(nullptr, &m), LF_INVALID_ARGUMENT,
                "path is null");
  EXPECT_STATUS(lf_module_load(lengthsPath.c_str(), nullptr),
                LF_INVALID_ARGUMENT, "out_module is null");

  // A kernel whose dispatch symbol the object does not export.
  Manifest missing = makeManifest(Padding::Lengths);
  missing.kernels[1].symbol = "fake_pool_nowhere";
  EXPECT_STATUS(lf_module_load(artifact("missing.lfa", missing).c_str(), &m),
                LF_FORMAT_ERROR,
                "kernel 'fake_pool_nowhere' has no function "
                "'fake_pool_nowhere_dispatch'");

  // Not an artifact at all.
  std::ofstream(dir.file("junk.lfa")) << "hello";
  EXPECT_STATUS(lf_module_load(dir.file("junk.lfa").c_str(), &m),
                LF_FORMAT_ERROR, "truncated header");

  // A container version from the future.
  std::string image;
  ASSERT_TRUE(readWholeFile(lengthsPath, image).ok());
  test::patchLE(image, 8, 2, 4);
  ASSERT_TRUE(
      writeWholeFile(dir.file("v2.lfa"), image.data(), image.size()).ok());
  EXPECT_STATUS(lf_module_load(dir.file("v2.lfa").c_str(), &m),
                LF_VERSION_MISMATCH, "format_version 2 is not supported");

  // A manifest version from the future.
  ArtifactWriter w;
  ASSERT_EQ(w.addSection("manifest", R"({"format": "linformer-artifact",
                                         "format_version": 8})"),
            "");
  ASSERT_EQ(w.write(dir.file("m8.lfa")), "");
  EXPECT_STATUS(lf_module_load(dir.file("m8.lfa").c_str(), &m),
                LF_VERSION_MISMATCH,
                "manifest: format_version 8 is not supported");

  // A broken manifest.
  ArtifactWriter bad;
  ASSERT_EQ(bad.addSection("manifest", "{"), "");
  ASSERT_EQ(bad.write(dir.file("bad.lfa")), "");
  EXPECT_STATUS(lf_module_load(dir.file("bad.lfa").c_str(), &m),
                LF_FORMAT_ERROR, "invalid JSON");

  // A CPU artifact without its kernels.
  std::string json;
  ASSERT_EQ(serializeManifest(makeManifest(Padding::Lengths), json), "");
  ArtifactWriter noSo;
  ASSERT_EQ(noSo.addSection("manifest", json), "");
  ASSERT_EQ(noSo.write(dir.file("noso.lfa")), "");
  EXPECT_STATUS(lf_module_load(dir.file("noso.lfa").c_str(), &m),
                LF_FORMAT_ERROR, "no 'cpu.so' section");

  // A cpu.so section that is not a shared object (with its right hash).
  Manifest garbageManifest = makeManifest(Padding::Lengths);
  garbageManifest.codeSha256 = {{"cpu.so", sha256Hex("not an ELF file")}};
  ASSERT_EQ(serializeManifest(garbageManifest, json), "");
  ArtifactWriter garbage;
  ASSERT_EQ(garbage.addSection("manifest", json), "");
  ASSERT_EQ(garbage.addSection("cpu.so", "not an ELF file"), "");
  ASSERT_EQ(garbage.write(dir.file("garbage.lfa")), "");
  EXPECT_STATUS(lf_module_load(dir.file("garbage.lfa").c_str(), &m),
                LF_FORMAT_ERROR, "cpu.so: not an ELF object");

  // A cuda artifact: checked like any other (its PTX must be there, with
  // the hash the manifest records) before the driver is asked; without a
  // driver it is LF_UNAVAILABLE. (This process never opens a real driver:
  // LF_CUDA_DRIVER points nowhere before the first cuda load.)
  ASSERT_EQ(::setenv("LF_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1), 0);
  Manifest cuda = makeManifest(Padding::Lengths);
  cuda.target = {"cuda", "sm_90", "+ptx80", ""};
  for (ManifestKernel &k : cuda.kernels) {
    k.grid = {k.workgroups, 1, 1};
    k.block = {32, 1, 1};
  }
  const std::string ptx = ".version 8.0\n.target sm_90\n";
  cuda.codeSha256 = {{"cuda.ptx", sha256Hex(ptx)}};
  ASSERT_EQ(serializeManifest(cuda, json), "");
  ArtifactWriter cudaOk, cudaNoPtx, cudaEdited;
  ASSERT_EQ(cudaOk.addSection("manifest", json), "");
  ASSERT_EQ(cudaOk.addSection("cuda.ptx", ptx), "");
  ASSERT_EQ(cudaOk.write(dir.file("cuda.lfa")), "");
  EXPECT_STATUS(lf_module_load(dir.file("cuda.lfa").c_str(), &m),
                LF_UNAVAILABLE,
                "cannot load the CUDA driver /nonexistent/libcuda.so.1");
  ASSERT_EQ(cudaNoPtx.addSection("manifest", json), "");
  ASSERT_EQ(cudaNoPtx.write(dir.file("cuda-noptx.lfa")), "");
  EXPECT_STATUS(lf_module_load(dir.file("cuda-noptx.lfa").c_str(), &m),
                LF_FORMAT_ERROR, "targets cuda but has no 'cuda.ptx' section");
  ASSERT_EQ(cudaEdited.addSection("manifest", json), "");
  ASSERT_EQ(cudaEdited.addSection("cuda.ptx", ptx + "// edited\n"), "");
  ASSERT_EQ(cudaEdited.addSection("cuda.sm_90.cubin", "\x7f" "ELF"), "");
  ASSERT_EQ(cudaEdited.write(dir.file("cuda-edited.lfa")), "");
  EXPECT_STATUS(lf_module_load(dir.file("cuda-edited.lfa").c_str(), &m),
                LF_FORMAT_ERROR, "the 'cuda.ptx' section's SHA-256 is");

  // Role buffers that do not fit the sequence inputs.
  Manifest wrongLengths = makeManifest(Padding::Lengths);
  wrongLengths.buffers[5].shape = {kBatch + 1};
  EXPECT_STATUS(lf_module_load(artifact("wl.lfa", wrongLengths).c_str(), &m),
                LF_FORMAT_ERROR, "lengths buffer 'lengths' has shape [3]");
  EXPECT_EQ(m, nullptr);
}

// The manifest edits of the hardening issue: each used to corrupt memory or
// crash inside a kernel; now the load names the disagreement with the code.
// Which outputs are sequences is the manifest's to say (the compiler's token
// analysis), not their shape's: an output of the inputs' [b, n] that holds
// no tokens (E X with k = n) has no padding rows, so a shorter run still
// takes it whole; and an output said to be a sequence must have their
// [b, n].
TEST_F(RuntimeTest, OutputsAreSequencesWhereTheManifestSays) {
  Manifest notTokens = makeManifest(Padding::Lengths);
  size_t yi = size_t(notTokens.findBuffer("y"));
  notTokens.buffers[yi].sequence = false;
  lf_module *m = load(artifact("not-tokens.lfa", notTokens));
  lf_session *s = session(m, 2);
  const int64_t L = 10;
  std::vector<float> x = randomFloats(size_t(kBatch * L * kDim), 3);
  std::vector<float> y;
  EXPECT_STATUS(run(s, x, L, y, L), LF_SHAPE_MISMATCH,
                "output 'y' has shape [2, 10, 8], expected [2, 16, 8]");
  ASSERT_OK(run(s, x, L, y, kSeq));
  lf_session_free(s);
  lf_module_free(m);
  // Said to be one (as every compiler now says of a model's output), it
  // takes [b, L, ...] as before.
  Manifest tokens = makeManifest(Padding::Lengths);
  tokens.buffers[yi].sequence = true;
  m = load(artifact("tokens.lfa", tokens));
  s = session(m, 2);
  ASSERT_OK(run(s, x, L, y, L));
  expectNear(y, expectedOutput(x, L, prefix(L, {L, L}), bias, scale));
  lf_session_free(s);
  lf_module_free(m);
  Manifest transposed = tokens;
  transposed.buffers[yi].shape = {kSeq, kBatch, kDim};
  lf_module *bad = nullptr;
  EXPECT_STATUS(
      lf_module_load(artifact("transposed.lfa", transposed).c_str(), &bad),
      LF_FORMAT_ERROR,
      "output 'y' is a sequence but has shape [16, 2, 8], not the sequence "
      "inputs' [2, 16, ...]");
  EXPECT_EQ(bad, nullptr);
}

TEST_F(RuntimeTest, ManifestMustAgreeWithTheCompiledKernels) {
  lf_module *m = nullptr;
  // An intermediate shrunk from 1024 to 4 bytes (was a heap overflow).
  Manifest shrunk = makeManifest(Padding::Lengths);
  shrunk.buffers[4].bytes = 4;
  EXPECT_STATUS(lf_module_load(artifact("shrunk.lfa", shrunk).c_str(), &m),
                LF_FORMAT_ERROR,
                "kernel 0 ('fake_add') binds intermediate 'tmp' (4 bytes in "
                "the manifest) as buffer 2, but its code uses 1024 bytes there");
  // Workgroups 32 -> 100000 (was SIGSEGV inside the dispatch function).
  Manifest many = makeManifest(Padding::Lengths);
  many.kernels[0].workgroups = 100000;
  EXPECT_STATUS(lf_module_load(artifact("many.lfa", many).c_str(), &m),
                LF_FORMAT_ERROR,
                "kernel 0 ('fake_add') has 100000 workgroups in the manifest, "
                "but its code was compiled for 32");
  // One buffer bound instead of three (was a read past the argument vector).
  Manifest few = makeManifest(Padding::Lengths);
  few.kernels[0].buffers = {0};
  EXPECT_STATUS(lf_module_load(artifact("few.lfa", few).c_str(), &m),
                LF_FORMAT_ERROR,
                "kernel 0 ('fake_add') binds 1 buffers in the manifest, but "
                "its code takes 3");
  // Buffers swapped: the sizes give it away.
  Manifest swapped = makeManifest(Padding::Lengths);
  std::swap(swapped.kernels[0].buffers[0], swapped.kernels[0].buffers[1]);
  EXPECT_STATUS(lf_module_load(artifact("swapped.lfa", swapped).c_str(), &m),
                LF_FORMAT_ERROR, "binds weight 'bias' (32 bytes in the "
                                 "manifest) as buffer 0");
  EXPECT_EQ(m, nullptr);
}

TEST_F(RuntimeTest, CodeIsCheckedBeforeItIsLoaded) {
  lf_module *m = nullptr;
  // A hash that does not match the object (a corrupt or edited artifact).
  Manifest wrongHash = makeManifest(Padding::Lengths);
  wrongHash.codeSha256 = {{"cpu.so", std::string(64, 'a')}};
  std::string path = dir.file("hash.lfa");
  ASSERT_EQ(writeArtifact(path, wrongHash, LINFORMER_FAKE_KERNELS_PATH,
                          /*hashCode=*/false),
            "");
  EXPECT_STATUS(lf_module_load(path.c_str(), &m), LF_FORMAT_ERROR,
                "the 'cpu.so' section's SHA-256 is ");
  // An object with a constructor: refused, and the constructor never ran
  // (it used to run inside lf_module_load even when the load then failed).
  ::unsetenv("LINFORMER_FAKE_CONSTRUCTOR_RAN");
  path = dir.file("ctor.lfa");
  ASSERT_EQ(writeArtifact(path, makeManifest(Padding::Lengths),
                          LINFORMER_FAKE_KERNELS_CTOR_PATH),
            "");
  EXPECT_STATUS(lf_module_load(path.c_str(), &m), LF_FORMAT_ERROR,
                "it would run code when loaded");
  EXPECT_EQ(std::getenv("LINFORMER_FAKE_CONSTRUCTOR_RAN"), nullptr);
  EXPECT_EQ(m, nullptr);
}

TEST_F(RuntimeTest, WeightsTruncatedAfterLoadingAreAnErrorNotSIGBUS) {
  std::string file = dir.file("shrinking.safetensors");
  std::map<std::string, SafetensorsEntry> big = weightsMap;
  // Large enough that the weights lie pages past the new end.
  big["padding"] = {DType::U8, {1 << 16}, std::string(1 << 16, 'p')};
  ASSERT_EQ(writeSafetensors(file, big), "");
  lf_weights *w = nullptr;
  ASSERT_OK(lf_weights_load(file.c_str(), &w));
  lf_module *m = load(lengthsPath);
  lf_session_options o;
  lf_session_options_init(&o);
  lf_session *s = nullptr;
  ASSERT_OK(lf_session_create(m, w, &o, &s));
  std::vector<float> x = randomFloats(size_t(kBatch * kSeq * kDim), 5), y;
  EXPECT_OK(run(s, x, kSeq, y, kSeq));
  ASSERT_EQ(::truncate(file.c_str(), 64), 0);
  EXPECT_STATUS(run(s, x, kSeq, y, kSeq), LF_IO_ERROR,
                "bytes after it was loaded");
  lf_session_free(s);
  lf_module_free(m);
  lf_weights_free(w);
}

TEST_F(RuntimeTest, MissingCpuFeatureIsUnavailable) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string text((std::istreambuf_iterator<char>(cpuinfo)),
                   std::istreambuf_iterator<char>());
#if !defined(__x86_64__)
  GTEST_SKIP() << "the feature check is x86-only";
#endif
  // Pick a feature from the checked list that this machine lacks.
  const char *candidates[][2] = {{"amx-int8", "amx_int8"},
                                 {"avx512fp16", "avx512_fp16"},
                                 {"avx512vp2intersect", "avx512_vp2intersect"}};
  const char *lacking = nullptr;
  for (auto &c : candidates)
    if (c[1] && text.find(c[1]) == std::string::npos) {
      lacking = c[0];
      break;
    }
  if (!lacking)
    GTEST_SKIP() << "this CPU has every candidate feature";
  Manifest m = makeManifest(Padding::Lengths);
  m.target.features = std::string("+sse2,+") + lacking + ",-avx512f";
  lf_module *mod = nullptr;
  EXPECT_STATUS(lf_module_load(artifact("feat.lfa", m).c_str(), &mod),
                LF_UNAVAILABLE, std::string("needs ") + lacking);
}

TEST_F(RuntimeTest, WeightsAreCheckedAgainstTheModule) {
  lf_module *m = load(lengthsPath);
  EXPECT_OK(lf_weights_check(m, weights));

  // Extra tensors are fine.
  auto extra = weightsMap;
  extra["unused"] = {DType::U8, {3}, "abc"};
  ASSERT_EQ(writeSafetensors(dir.file("extra.safetensors"), extra), "");
  lf_weights *w = nullptr;
  ASSERT_OK(lf_weights_load(dir.file("extra.safetensors").c_str(), &w));
  EXPECT_OK(lf_weights_check(m, w));
  lf_weights_free(w);

  // Missing, wrong shape, wrong dtype: all named in one message.
  auto broken = weightsMap;
  broken.erase("scale");
  broken["bias"] = {
      DType::F32, {kDim + 1}, std::string(size_t(kDim + 1) * 4, '\0')};
  ASSERT_EQ(writeSafetensors(dir.file("broken.safetensors"), broken), "");
  ASSERT_OK(lf_weights_load(dir.file("broken.safetensors").c_str(), &w));
  {
    Status st(lf_weights_check(m, w));
    EXPECT_EQ(st.code(), LF_WEIGHTS_MISMATCH);
    EXPECT_NE(st.message().find("weight 'bias' has shape [9] in the file, the "
                                "module expects [8]"),
              std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find("weight 'scale' is missing"), std::string::npos)
        << st.message();
  }
  lf_session *s = nullptr;
  EXPECT_STATUS(lf_session_create(m, w, nullptr, &s), LF_WEIGHTS_MISMATCH,
                "weight 'scale' is missing");
  EXPECT_EQ(s, nullptr);
  lf_weights_free(w);

  auto wrongType = weightsMap;
  wrongType["bias"] = {DType::I32, {kDim}, std::string(size_t(kDim) * 4, '\0')};
  ASSERT_EQ(writeSafetensors(dir.file("i32.safetensors"), wrongType), "");
  ASSERT_OK(lf_weights_load(dir.file("i32.safetensors").c_str(), &w));
  EXPECT_STATUS(lf_weights_check(m, w), LF_WEIGHTS_MISMATCH,
                "weight 'bias' is i32 in the file, the module expects f32");
  lf_weights_free(w);

  // A file that is not safetensors.
  std::ofstream(dir.file("junk.safetensors")) << "junk";
  EXPECT_STATUS(lf_weights_load(dir.file("junk.safetensors").c_str(), &w),
                LF_FORMAT_ERROR, "truncated");
  EXPECT_STATUS(lf_weights_load("/nonexistent.safetensors", &w), LF_IO_ERROR,
                "/nonexistent.safetensors");

  // Bad session options.
  lf_session_options o;
  lf_session_options_init(&o);
  o.num_threads = -2;
  EXPECT_STATUS(lf_session_create(m, weights, &o, &s), LF_INVALID_ARGUMENT,
                "num_threads is -2");
  lf_session_options_init(&o);
  o.spin_us = -2;
  EXPECT_STATUS(lf_session_create(m, weights, &o, &s), LF_INVALID_ARGUMENT,
                "spin_us is -2");
  o.spin_us = 2000000;
  EXPECT_STATUS(lf_session_create(m, weights, &o, &s), LF_INVALID_ARGUMENT,
                "spin_us is 2000000");
  o.struct_size = 0;
  EXPECT_STATUS(lf_session_create(m, weights, &o, &s), LF_INVALID_ARGUMENT,
                "lf_session_options_init");
  lf_module_free(m);
}

TEST_F(RuntimeTest, ProfilingTimesEveryKernel) {
  lf_module *m = load(lengthsPath);
  std::vector<float> x = randomFloats(size_t(kBatch * kSeq * kDim), 3), y;
  // Without profiling: the kernel count, but no times.
  lf_session *plain = session(m, 2);
  size_t count = 0;
  EXPECT_OK(lf_session_kernel_count(plain, &count));
  EXPECT_EQ(count, 2u);
  lf_kernel_profile p;
  EXPECT_STATUS(lf_session_profile(plain, 0, &p), LF_INVALID_ARGUMENT,
                "without profiling");
  // Which kernels are initializers (none here), without profiling too.
  int initializer = -1;
  EXPECT_OK(lf_session_kernel_initializer(plain, 1, &initializer));
  EXPECT_EQ(initializer, 0);
  EXPECT_STATUS(lf_session_kernel_initializer(plain, 2, &initializer),
                LF_INVALID_ARGUMENT,
                "kernel index 2 is out of range (2 kernels)");
  EXPECT_STATUS(lf_session_kernel_initializer(plain, 0, nullptr),
                LF_INVALID_ARGUMENT, "out_initializer");
  lf_session_free(plain);

  lf_session_options o;
  lf_session_options_init(&o);
  o.num_threads = 2;
  o.profile = 1;
  lf_session *s = nullptr;
  ASSERT_OK(lf_session_create(m, weights, &o, &s));
  ASSERT_OK(lf_session_profile(s, 1, &p));
  EXPECT_EQ(p.runs, 0);
  for (int r = 0; r < 3; ++r)
    ASSERT_OK(run(s, x, kSeq, y, kSeq));
  ASSERT_OK(lf_session_profile(s, 0, &p));
  EXPECT_STREQ(p.symbol, "fake_add");
  EXPECT_STREQ(p.key, "other/ppp/fake"); // from the manifest's schedule
  EXPECT_DOUBLE_EQ(p.flops, 128);
  EXPECT_EQ(p.workgroups, kBatch * kSeq);
  EXPECT_EQ(p.runs, 3);
  EXPECT_GE(p.min_ms, 0);
  EXPECT_LE(p.min_ms, p.median_ms);
  ASSERT_OK(lf_session_profile(s, 1, &p));
  EXPECT_STREQ(p.symbol, "fake_pool_lengths");
  EXPECT_STREQ(p.key, ""); // no key in its schedule
  EXPECT_EQ(p.flops, 0);
  EXPECT_STATUS(lf_session_profile(s, 2, &p), LF_INVALID_ARGUMENT,
                "kernel index 2 is out of range (2 kernels)");
  EXPECT_STATUS(lf_session_profile(s, 0, nullptr), LF_INVALID_ARGUMENT,
                "out_profile");
  ASSERT_OK(lf_session_profile_reset(s));
  ASSERT_OK(lf_session_profile(s, 0, &p));
  EXPECT_EQ(p.runs, 0);
  lf_session_free(s);

  // A caller built against the older options struct (no `profile`): its
  // struct_size stops before the field, which is then not read.
  struct OldOptions {
    uint32_t struct_size;
    int32_t num_threads;
  } old = {sizeof(OldOptions), 1};
  ASSERT_OK(lf_session_create(
      m, weights, reinterpret_cast<const lf_session_options *>(&old), &s));
  EXPECT_STATUS(lf_session_profile(s, 0, &p), LF_INVALID_ARGUMENT,
                "without profiling");
  lf_session_free(s);
  lf_module_free(m);
}

TEST_F(RuntimeTest, CppWrapper) {
  lf::Module module = lf::Module::load(lengthsPath);
  lf::Weights w = lf::Weights::load(dir.file("w.safetensors"));
  w.checkAgainst(module);
  EXPECT_EQ(module.sequenceShape(), std::make_pair(kBatch, kSeq));
  ASSERT_EQ(module.inputs().size(), 2u);
  EXPECT_EQ(module.inputs()[1].role, LF_ROLE_LENGTHS);
  EXPECT_EQ(module.weights()[0].name, "bias");
  lf::Session session(module, w, 2);
  EXPECT_EQ(session.numThreads(), 2);
  const int64_t L = 7;
  std::vector<float> x = randomFloats(size_t(kBatch * L * kDim), 11);
  std::vector<float> y(x.size());
  session.run({lf::TensorRef("x", LF_DTYPE_F32, {kBatch, L, kDim}, x.data())},
              {lf::TensorRef("y", LF_DTYPE_F32, {kBatch, L, kDim}, y.data())});
  expectNear(y, expectedOutput(x, L, prefix(L, {L, L}), bias, scale));
  try {
    session.run(
        {lf::TensorRef("x", LF_DTYPE_F32, {kBatch, kSeq + 4, kDim}, x.data())},
        {});
    FAIL() << "expected lf::Error";
  } catch (const lf::Error &e) {
    EXPECT_EQ(e.code(), LF_SHAPE_MISMATCH);
    EXPECT_NE(std::string(e.what()).find("exceeds"), std::string::npos);
  }
  EXPECT_THROW(lf::Module::load("/nonexistent.lfa"), lf::Error);
  EXPECT_THROW(session.kernelProfiles(), lf::Error);
  lf::Session profiled(module, w, 1, /*profile=*/true);
  profiled.run(
      {lf::TensorRef("x", LF_DTYPE_F32, {kBatch, L, kDim}, x.data())}, {});
  std::vector<lf_kernel_profile> kernels = profiled.kernelProfiles();
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].runs, 1);
  profiled.resetProfile();
  EXPECT_EQ(profiled.kernelProfiles()[1].runs, 0);
}

} // namespace

// Device memory and device runs belong to cuda modules; a cpu module says so
// instead of treating host pointers as device ones.
TEST_F(RuntimeTest, DeviceMemoryNeedsACudaModule) {
  lf_module *m = load(lengthsPath);
  void *p = reinterpret_cast<void *>(uintptr_t(1));
  EXPECT_STATUS(lf_device_alloc(m, 64, &p), LF_INVALID_ARGUMENT,
                "device memory needs a cuda module");
  EXPECT_EQ(p, nullptr);
  float host[4] = {0};
  EXPECT_STATUS(lf_device_copy_to(m, host, host, sizeof(host)),
                LF_INVALID_ARGUMENT, "runs on the cpu");
  lf_session *s = session(m, 1);
  std::vector<float> x = randomFloats(size_t(kBatch * kSeq * kDim), 3);
  std::vector<float> y(x.size());
  int64_t shape[3] = {kBatch, kSeq, kDim};
  lf_tensor in = {"x", LF_DTYPE_F32, 3, shape, x.data()};
  lf_tensor out = {"y", LF_DTYPE_F32, 3, shape, y.data()};
  EXPECT_STATUS(lf_session_run_device(s, &in, 1, &out, 1),
                LF_INVALID_ARGUMENT, "device tensors need a cuda module");
  lf_session_free(s);
  lf_module_free(m);
}
