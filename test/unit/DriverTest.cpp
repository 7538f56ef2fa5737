//===- DriverTest.cpp - the compiler library, called as a library ---------===//
//
// compiler/Driver without the tool: the cross-checks of CompileOptions, an
// artifact compiled in memory (and the same bytes as the file compile()
// writes), and a failing compile whose error carries MLIR's diagnostics
// with their locations when the session collects them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Driver.h"
#include "compiler/Pipelines/Pipelines.h"
#include "lib/Manifest/Artifact.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir::linformer::driver;

namespace {

const std::string kInputs = LINFORMER_TEST_INPUTS;

/// The error's message, consumed ("" for success).
std::string messageOf(llvm::Error err) {
  std::string text;
  llvm::handleAllErrors(std::move(err), [&](const llvm::ErrorInfoBase &e) {
    text = e.message();
  });
  return text;
}

struct TempDir {
  llvm::SmallString<128> path;
  TempDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("driver-test", path));
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &name) const {
    return (path + "/" + name).str();
  }
};

CompileOptions smallModel() {
  CompileOptions options;
  options.inputPath = kInputs + "/small.json";
  return options;
}

TEST(DriverTest, VerifyNamesTheBadCombination) {
  CompileOptions options = smallModel();
  options.outputPath = "out.lfa";
  EXPECT_EQ(messageOf(options.verify()), "");

  // A word that names no value is refused when it is parsed, naming the
  // flag and what it takes; every value's spelling parses back to it.
  EXPECT_EQ(messageOf(parseOption<Target>("gpu").takeError()),
            "--target takes cpu, cuda or cpu,cuda, not 'gpu'");
  EXPECT_EQ(messageOf(parseOption<BF16Dot>("vnni").takeError()),
            "--bf16-dot takes auto, emulate, amx or off, not 'vnni'");
  for (CudaMma mma : {CudaMma::Auto, CudaMma::None, CudaMma::TF32,
                      CudaMma::BF16, CudaMma::F16})
    EXPECT_EQ(llvm::cantFail(parseOption<CudaMma>(spelling(mma))), mma);
  EXPECT_EQ(llvm::cantFail(parseOption<Target>("cpu,cuda")),
            Target::CPUAndCUDA);
  CompileOptions kept = options;
  EXPECT_EQ(messageOf(setOption(kept.precision, "fp8")),
            "--precision takes auto, f32, bf16 or f16, not 'fp8'");
  EXPECT_EQ(kept.precision, Precision::Auto);
  EXPECT_EQ(messageOf(setOption(kept.precision, "f16")), "");
  EXPECT_EQ(kept.precision, Precision::F16);

  // The CUDA knobs are checked through the pipeline's own options.
  CompileOptions wgmma = options;
  wgmma.target = Target::CUDA;
  wgmma.sm = 80;
  wgmma.cudaKnobs = [](mlir::linformer::CUDAPipelineOptions &o) {
    o.wgmma = true;
  };
  EXPECT_NE(messageOf(wgmma.verify()).find("--cuda-wgmma needs --sm=90"),
            std::string::npos);

  CompileOptions noOutput = smallModel();
  EXPECT_EQ(messageOf(noOutput.verify()), "");  // a CPU artifact: checked late
  noOutput.target = Target::CUDA;
  EXPECT_EQ(messageOf(noOutput.verify()), "an artifact needs -o FILE.lfa");
  EXPECT_EQ(messageOf(noOutput.verify(/*toMemory=*/true)), "");

  CompileOptions tuneFile = options;
  tuneFile.autotune = true;
  tuneFile.scheduleFile = "s.json";
  EXPECT_NE(messageOf(tuneFile.verify()).find("exclude each other"),
            std::string::npos);

  CompileOptions printAs = options;
  printAs.printSchedule = "yaml";
  EXPECT_NE(messageOf(printAs.verify()).find("not 'yaml'"), std::string::npos);
}

TEST(DriverTest, ArtifactInMemoryIsTheFileCompileWrites) {
  TempDir dir;
  CompilerSession session;
  std::string log;
  llvm::raw_string_ostream logStream(log);
  llvm::Expected<std::string> image =
      session.compileToArtifact(smallModel(), logStream);
  ASSERT_TRUE(bool(image)) << messageOf(image.takeError());

  linformer::Artifact artifact;
  linformer::FileError parsed =
      linformer::Artifact::fromBytes(*image, artifact, "in memory");
  ASSERT_TRUE(parsed.ok()) << parsed.message;
  EXPECT_FALSE(artifact.section(linformer::kManifestSection).empty());
  EXPECT_FALSE(artifact.section(linformer::kCpuObjectSection).empty());

  // The same session compiles again, to a file: the same bytes.
  CompileOptions toFile = smallModel();
  toFile.outputPath = dir.file("small.lfa");
  std::string out;
  llvm::raw_string_ostream outStream(out);
  ASSERT_EQ(messageOf(session.compile(toFile, outStream, logStream)), "");
  EXPECT_NE(out.find("wrote " + toFile.outputPath), std::string::npos);
  auto written = llvm::MemoryBuffer::getFile(toFile.outputPath,
                                             /*IsText=*/false);
  ASSERT_TRUE(bool(written));
  EXPECT_TRUE((*written)->getBuffer() == *image);
}

TEST(DriverTest, CollectedDiagnosticsComeInTheError) {
  TempDir dir;
  CompilerSession session(SessionOptions{/*collectDiagnostics=*/true});
  CompileOptions options;
  auto text = llvm::MemoryBuffer::getFile(kInputs + "/dynamic.mlir");
  ASSERT_TRUE(bool(text));
  options.inputPath = "inline.mlir"; // names the text in the diagnostics
  options.inputText = (*text)->getBuffer().str();
  options.outputPath = dir.file("dyn.lfa");
  std::string log;
  llvm::raw_string_ostream logStream(log);
  llvm::Expected<std::string> image =
      session.compileToArtifact(options, logStream);
  ASSERT_FALSE(bool(image));
  std::string message = messageOf(image.takeError());
  EXPECT_NE(message.find("inline.mlir:2:8: error: 'linformer.attention' op "
                         "cannot be decomposed: code generation needs static "
                         "shapes"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("linformer-opt --run-reproducer " +
                         options.outputPath + ".cpu-pipeline.reproducer.mlir"),
            std::string::npos)
      << message;

  // A signature the runtime cannot bind: the diagnostic is the error.
  options.inputText = "func.func @f(%x: tensor<4xf32>) { return }";
  image = session.compileToArtifact(options, logStream);
  ASSERT_FALSE(bool(image));
  message = messageOf(image.takeError());
  EXPECT_NE(message.find("inline.mlir:1:1: error: returns nothing; an entry "
                         "function must return at least one tensor"),
            std::string::npos)
      << message;
}

} // namespace
