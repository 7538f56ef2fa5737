//===- RunTest.cpp - runtime/run, in the caller's process -----------------===//
//
// What the compiler's --autotune and --backend=best call to time an
// artifact (linformer::run::timeArtifact): every kernel's time comes back,
// keyed as the artifact's manifest keys it, initializers marked; what the
// run prints goes to the log it is given, not to the caller's stdout; and
// a failure (a missing artifact, a check that cannot run) is a message,
// never an exit or an exception.
//
//===----------------------------------------------------------------------===//

#include "runtime/run/Run.h"

#include "FakeModel.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

using namespace linformer;
using namespace linformer::fake;

namespace {

/// The fake model (FakeKernels.c) with a lengths input, and its weights.
struct FakeRun {
  FakeRun() {
    EXPECT_EQ(writeSafetensors(dir.file("w.safetensors"), makeWeights(7)), "");
    EXPECT_EQ(writeArtifact(dir.file("m.lfa"), makeManifest(Padding::Lengths),
                            LINFORMER_FAKE_KERNELS_PATH),
              "");
    options.artifact = dir.file("m.lfa");
    options.weightsPath = dir.file("w.safetensors");
    options.randomInput = true;
    options.threads = 1;
    options.warmup = 1;
    options.repeat = 3;
  }
  /// timeArtifact with a log file; the log's text in `log`.
  std::string time(std::vector<run::KernelTime> &kernels, std::string &log) {
    std::string path = dir.file("run.log");
    std::FILE *f = std::fopen(path.c_str(), "w");
    EXPECT_NE(f, nullptr);
    std::string err = run::timeArtifact(options, f, kernels);
    std::fclose(f);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    log = text.str();
    return err;
  }
  test::TempDir dir;
  run::Options options;
};

TEST(RunTest, TimesEveryKernelInProcess) {
  FakeRun r;
  r.options.lengthsArg = "5";
  std::vector<run::KernelTime> kernels;
  std::string log;
  ASSERT_EQ(r.time(kernels, log), "") << log;
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].symbol, "fake_add");
  EXPECT_EQ(kernels[0].key, "other/ppp/fake");
  EXPECT_EQ(kernels[1].symbol, "fake_pool_lengths");
  for (const run::KernelTime &k : kernels) {
    EXPECT_GE(k.medianMs, 0.0) << k.symbol;
    EXPECT_FALSE(k.initializer) << k.symbol;
  }
}

TEST(RunTest, FailuresAreMessages) {
  FakeRun r;
  std::vector<run::KernelTime> kernels;
  std::string log;
  r.options.artifact = r.dir.file("missing.lfa");
  std::string err = r.time(kernels, log);
  EXPECT_NE(err.find("missing.lfa"), std::string::npos) << err;
  EXPECT_NE(err.find("LF_"), std::string::npos) << err;
  EXPECT_TRUE(kernels.empty());

  // The fake artifact's model description is none the reference reads:
  // the check cannot run, and says why in the log.
  FakeRun checked;
  checked.options.check = true;
  err = checked.time(kernels, log);
  EXPECT_EQ(err, "the run failed");
  EXPECT_NE(log.find("linformer-run: error: model.json:"), std::string::npos)
      << log;

  // A length past the artifact's n is the option's error, in the log.
  FakeRun tooLong;
  tooLong.options.lengthsArg = "100000";
  err = tooLong.time(kernels, log);
  EXPECT_EQ(err, "the run failed");
  EXPECT_NE(log.find("--lengths: '100000' is not an integer"),
            std::string::npos)
      << log;
}

} // namespace
