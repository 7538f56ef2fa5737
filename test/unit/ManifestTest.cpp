//===- ManifestTest.cpp - Tests of the manifest schema --------------------===//
//
// The manifest is the compiler/runtime contract, so each validation rule
// gets a case that breaks exactly that rule and checks the message names
// the problem. Plus a round trip that keeps schedules verbatim.
//
//===----------------------------------------------------------------------===//

#include "lib/Manifest/Manifest.h"
#include "lib/Safetensors/Safetensors.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>

using namespace linformer;
using json = nlohmann::ordered_json;

namespace {

const char *kValid = R"({
  "format": "linformer-artifact", "format_version": 2,
  "compiler_version": "0.1.0",
  "target": {"kind": "cpu", "cpu": "emeraldrapids", "features": "+avx512f"},
  "entry": "encoder",
  "buffers": [
    {"name": "x", "kind": "input", "dtype": "f32", "shape": [1, 4096, 512]},
    {"name": "lengths", "kind": "input", "dtype": "i32", "shape": [1],
     "role": "lengths"},
    {"name": "layers.0.attn.wq", "kind": "weight", "dtype": "f32",
     "shape": [512, 512]},
    {"name": "y", "kind": "output", "dtype": "f32", "shape": [1, 4096, 512]},
    {"name": "tmp3", "kind": "intermediate", "bytes": 8388608}
  ],
  "kernels": [
    {"symbol": "encoder_kernel_0", "workgroups": 384, "buffers": [2, 0, 4],
     "schedule": {"tile": [64, 128], "parallel": true, "aaa": 1}},
    {"symbol": "encoder_kernel_1", "workgroups": 1, "buffers": [4, 1, 3]}
  ],
  "code_sha256": {
    "cpu.so": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
  "model": {"layers": 1, "heads": 8}
})";

// Every dtype's spellings parse back to it, and nothing else parses: one
// table (kDTypes, lib/Manifest/Common.h) serves the manifest, safetensors
// and npy in both directions.
TEST(Manifest, DTypeNamesRoundTrip) {
  for (const linformer::DTypeSpelling &e : linformer::kDTypes) {
    linformer::DType parsed = linformer::DType::U8;
    EXPECT_TRUE(linformer::parseDType(linformer::dtypeName(e.dtype), parsed))
        << e.manifest;
    EXPECT_EQ(parsed, e.dtype) << e.manifest;
    EXPECT_EQ(linformer::dtypeSize(e.dtype), e.bytes) << e.manifest;
    EXPECT_STREQ(linformer::safetensorsDTypeName(e.dtype), e.safetensors);
  }
  linformer::DType untouched = linformer::DType::I64;
  EXPECT_FALSE(linformer::parseDType("f64", untouched));
  EXPECT_FALSE(linformer::parseDType("", untouched));
  EXPECT_EQ(untouched, linformer::DType::I64);
  EXPECT_STREQ(linformer::dtypeName(static_cast<linformer::DType>(99)), "?");
}

TEST(Manifest, ParsesTheDocumentedExample) {
  Manifest m;
  FileError err = parseManifest(kValid, m);
  ASSERT_TRUE(err.ok()) << err.message;
  EXPECT_EQ(m.compilerVersion, "0.1.0");
  EXPECT_EQ(m.target.cpu, "emeraldrapids");
  ASSERT_EQ(m.buffers.size(), 5u);
  EXPECT_EQ(m.buffers[1].role, BufferRole::Lengths);
  EXPECT_EQ(m.buffers[0].byteSize(), 4096u * 512 * 4);
  EXPECT_EQ(m.buffers[4].byteSize(), 8388608u);
  EXPECT_EQ(m.findBuffer("y"), 3);
  EXPECT_EQ(m.findBuffer("nope"), -1);
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0].workgroups, 384);
  EXPECT_EQ(m.kernels[0].buffers, (std::vector<int64_t>{2, 0, 4}));
  // Verbatim, key order included.
  EXPECT_EQ(m.kernels[0].scheduleJson,
            R"({"tile":[64,128],"parallel":true,"aaa":1})");
  EXPECT_EQ(m.kernels[1].scheduleJson, "{}");
  EXPECT_EQ(m.modelJson, R"({"layers":1,"heads":8})");
}

TEST(Manifest, RoundTrip) {
  Manifest m;
  ASSERT_TRUE(parseManifest(kValid, m).ok());
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  Manifest again;
  FileError err = parseManifest(text, again);
  ASSERT_TRUE(err.ok()) << err.message;
  std::string text2;
  ASSERT_EQ(serializeManifest(again, text2), "");
  EXPECT_EQ(text, text2);
  EXPECT_EQ(again.kernels[0].scheduleJson, m.kernels[0].scheduleJson);
  EXPECT_EQ(again.modelJson, m.modelJson);
  EXPECT_EQ(again.buffers[2].shape, m.buffers[2].shape);
  EXPECT_EQ(again.buffers[1].role, BufferRole::Lengths);
}

TEST(Manifest, SerializeValidatesFirst) {
  Manifest m;
  ASSERT_TRUE(parseManifest(kValid, m).ok());
  m.kernels[0].buffers.push_back(9);
  std::string text;
  EXPECT_EQ(serializeManifest(m, text),
            "manifest: kernel 0 binds buffer 9 but there are 5 buffers");
  m.kernels[0].buffers.pop_back();
  m.kernels[0].scheduleJson = "[1]";
  EXPECT_NE(serializeManifest(m, text).find("schedule is not a JSON object"),
            std::string::npos);
}

TEST(Manifest, InvalidJson) {
  Manifest m;
  FileError err = parseManifest("{\"format\": ", m);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("manifest: invalid JSON"), std::string::npos);
  err = parseManifest("[1, 2]", m);
  EXPECT_NE(err.message.find("top level must be a JSON object"),
            std::string::npos);
}

TEST(Manifest, NewerVersionIsAVersionError) {
  json j = json::parse(kValid);
  j["format_version"] = 8;
  j.erase("buffers"); // a newer schema may lack anything; version wins
  Manifest m;
  FileError err = parseManifest(j.dump(), m);
  EXPECT_EQ(err.kind, ErrorKind::Version);
  EXPECT_EQ(err.message,
            "manifest: format_version 8 is not supported (this runtime reads "
            "2 to 7)");
  // Version 1 predates code hashes and kernel records: also refused.
  j["format_version"] = 1;
  err = parseManifest(j.dump(), m);
  EXPECT_EQ(err.kind, ErrorKind::Version);
}

struct BadCase {
  const char *label;
  std::function<void(json &)> mutate;
  const char *expected; ///< substring of the message
};

class ManifestInvalid : public ::testing::TestWithParam<BadCase> {};

TEST_P(ManifestInvalid, IsRejectedWithAMessage) {
  json j = json::parse(kValid);
  GetParam().mutate(j);
  Manifest m;
  FileError err = parseManifest(j.dump(), m);
  EXPECT_EQ(err.kind, ErrorKind::Format) << err.message;
  EXPECT_NE(err.message.find(GetParam().expected), std::string::npos)
      << "message: " << err.message;
  EXPECT_EQ(err.message.rfind("manifest: ", 0), 0u) << err.message;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, ManifestInvalid,
    ::testing::Values(
        BadCase{"WrongFormat", [](json &j) { j["format"] = "onnx"; },
                "'format' is \"onnx\", expected \"linformer-artifact\""},
        BadCase{"MissingBuffers", [](json &j) { j.erase("buffers"); },
                "missing 'buffers'"},
        BadCase{"KernelBindsMissingBuffer",
                [](json &j) { j["kernels"][1]["buffers"][2] = 17; },
                "manifest: kernel 1 binds buffer 17 but there are 5 buffers"},
        BadCase{"NegativeBufferId",
                [](json &j) { j["kernels"][0]["buffers"][0] = -1; },
                "kernel 0 binds buffer -1"},
        BadCase{"UnknownDtype",
                [](json &j) { j["buffers"][0]["dtype"] = "f64"; },
                "buffer 0 ('x'): unknown dtype \"f64\""},
        BadCase{"UnknownKind",
                [](json &j) { j["buffers"][3]["kind"] = "result"; },
                "buffer 3 ('y'): unknown kind \"result\""},
        BadCase{"DuplicateName", [](json &j) { j["buffers"][3]["name"] = "x"; },
                "buffer 3 ('x'): the name is used by an earlier buffer"},
        BadCase{"ZeroDimension",
                [](json &j) { j["buffers"][0]["shape"][1] = 0; },
                "shape [1, 0, 512] has a dimension <= 0"},
        BadCase{"ShapeNotInts",
                [](json &j) { j["buffers"][0]["shape"] = "1x2"; },
                "'shape' must be an array of integers"},
        BadCase{"IntermediateWithoutBytes",
                [](json &j) { j["buffers"][4].erase("bytes"); },
                "buffer 4 ('tmp3'): missing 'bytes'"},
        BadCase{"IntermediateZeroBytes",
                [](json &j) { j["buffers"][4]["bytes"] = 0; },
                "an intermediate needs 'bytes' > 0"},
        BadCase{"RoleOnWeight",
                [](json &j) { j["buffers"][2]["role"] = "mask"; },
                "only inputs have a role"},
        BadCase{"UnknownRole",
                [](json &j) { j["buffers"][1]["role"] = "positions"; },
                "unknown role \"positions\""},
        BadCase{"LengthsNotI32",
                [](json &j) { j["buffers"][1]["dtype"] = "f32"; },
                "a lengths buffer must be i32 of shape [b]"},
        BadCase{"NoOutput",
                [](json &j) {
                  j["buffers"][3]["kind"] = "intermediate";
                  j["buffers"][3]["bytes"] = 4;
                },
                "there is no output buffer"},
        BadCase{"NoKernels", [](json &j) { j["kernels"] = json::array(); },
                "there are no kernels"},
        BadCase{"ZeroWorkgroups",
                [](json &j) { j["kernels"][0]["workgroups"] = 0; },
                "kernel 0: workgroups is 0, must be >= 1"},
        BadCase{"WorkgroupsNotInt",
                [](json &j) { j["kernels"][0]["workgroups"] = 1.5; },
                "kernel 0: 'workgroups' must be an integer"},
        BadCase{"SymbolNotIdentifier",
                [](json &j) { j["kernels"][0]["symbol"] = "bad-name"; },
                "symbol \"bad-name\" is not a C identifier"},
        BadCase{"ScheduleNotObject",
                [](json &j) { j["kernels"][0]["schedule"] = 3; },
                "kernel 0: 'schedule' must be an object"},
        BadCase{"NoCodeHash", [](json &j) { j.erase("code_sha256"); },
                "code_sha256 has no hash of section 'cpu.so'"},
        BadCase{"CodeHashNotHex",
                [](json &j) { j["code_sha256"]["cpu.so"] = "abc"; },
                "code_sha256: 'cpu.so' is not 64 lower-case hex digits"},
        BadCase{"CodeHashNotString",
                [](json &j) { j["code_sha256"]["cpu.so"] = 7; },
                "code_sha256: 'cpu.so' must be a string"},
        BadCase{"IntermediateTooLarge",
                [](json &j) {
                  j["buffers"][4]["bytes"] = INT64_MAX; // once wrapped the arena
                },
                "buffer 4 ('tmp3'): 'bytes' 9223372036854775807 exceeds the "
                "limit of 2^62"},
        BadCase{"IntermediatesTooLargeTogether",
                [](json &j) {
                  j["buffers"][4]["bytes"] = int64_t(1) << 61;
                  j["buffers"].push_back({{"name", "tmp4"},
                                          {"kind", "intermediate"},
                                          {"bytes", int64_t(1) << 61}});
                },
                "the buffers other than weights need more than 2^62 bytes "
                "together"},
        BadCase{"ShapeBytesTooLarge",
                [](json &j) {
                  // 2^61 elements of 8 bytes: 2^64 bytes, which wrapped to 0.
                  j["buffers"][0]["dtype"] = "i64";
                  j["buffers"][0]["shape"] = {int64_t(1) << 31, int64_t(1) << 30};
                },
                "exceeds the limit of 2^62 bytes"},
        BadCase{"UnknownTarget", [](json &j) { j["target"]["kind"] = "tpu"; },
                "unknown target kind \"tpu\""},
        BadCase{"TargetNotObject", [](json &j) { j["target"] = "cpu"; },
                "'target' must be an object"},
        BadCase{"EntryEmpty", [](json &j) { j["entry"] = ""; },
                "'entry' is empty"},
        BadCase{"ModelNotObject", [](json &j) { j["model"] = 1; },
                "'model' must be an object"}),
    [](const ::testing::TestParamInfo<BadCase> &info) {
      return std::string(info.param.label);
    });

} // namespace

namespace {

/// kValid as a cuda manifest: both kernels with a launch shape, the PTX
/// hashed.
Manifest cudaManifest() {
  Manifest m;
  EXPECT_TRUE(parseManifest(kValid, m).ok());
  m.target = {"cuda", "sm_90", "+ptx80", ""};
  m.kernels[0].grid = {8, 16, 3};
  m.kernels[0].block = {32, 8, 1};
  m.kernels[0].sharedBytes = 49152;
  m.kernels[1].grid = {1, 1, 1};
  m.kernels[1].block = {1024, 1, 1};
  m.codeSha256 = {{"cuda.ptx", std::string(64, 'a')}};
  return m;
}

std::string cudaError(const std::function<void(Manifest &)> &edit) {
  Manifest m = cudaManifest();
  edit(m);
  return validateManifest(m);
}

} // namespace

TEST(Manifest, CudaLaunchShapesRoundTrip) {
  Manifest m = cudaManifest();
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  Manifest again;
  FileError err = parseManifest(text, again);
  ASSERT_TRUE(err.ok()) << err.message;
  EXPECT_EQ(again.kernels[0].grid, (std::vector<int64_t>{8, 16, 3}));
  EXPECT_EQ(again.kernels[0].block, (std::vector<int64_t>{32, 8, 1}));
  EXPECT_EQ(again.kernels[0].sharedBytes, 49152);
  EXPECT_EQ(again.kernels[1].block, (std::vector<int64_t>{1024, 1, 1}));
}

TEST(Manifest, CudaLaunchShapesAreChecked) {
  EXPECT_EQ(cudaError([](Manifest &m) { m.kernels[1].grid.clear(); }),
            "manifest: kernel 1: a cuda kernel needs 'grid' and 'block' of 3 "
            "dimensions each");
  EXPECT_EQ(cudaError([](Manifest &m) { m.kernels[0].grid = {8, 0, 48}; }),
            "manifest: kernel 0: grid [8, 0, 48] is not a CUDA grid (x up to "
            "2^31-1, y and z up to 65535, each >= 1)");
  EXPECT_EQ(cudaError([](Manifest &m) {
              m.kernels[0].grid = {1, 70000, 1};
              m.kernels[0].workgroups = 70000;
            }),
            "manifest: kernel 0: grid [1, 70000, 1] is not a CUDA grid (x up "
            "to 2^31-1, y and z up to 65535, each >= 1)");
  EXPECT_EQ(cudaError([](Manifest &m) { m.kernels[0].block = {64, 32, 1}; }),
            "manifest: kernel 0: block [64, 32, 1] has more than 1024 threads");
  EXPECT_EQ(cudaError([](Manifest &m) { m.kernels[0].block = {1, 1, 65}; }),
            "manifest: kernel 0: block [1, 1, 65] is not a CUDA block (x, y "
            "up to 1024, z up to 64, each >= 1)");
  EXPECT_EQ(cudaError([](Manifest &m) { m.kernels[0].workgroups = 383; }),
            "manifest: kernel 0: workgroups is 383 but the grid [8, 16, 3] "
            "has 384 blocks");
  EXPECT_EQ(cudaError([](Manifest &m) { m.kernels[0].sharedBytes = 1 << 20; }),
            "manifest: kernel 0: shared_bytes is 1048576, outside [0, 232448] "
            "(227 KiB, the most any CUDA device has)");
  EXPECT_EQ(cudaError([](Manifest &m) { m.codeSha256.clear(); }),
            "manifest: code_sha256 has no hash of section 'cuda.ptx'");
  // Launch shapes belong to cuda kernels only.
  Manifest cpu;
  ASSERT_TRUE(parseManifest(kValid, cpu).ok());
  cpu.kernels[0].block = {32, 1, 1};
  EXPECT_EQ(validateManifest(cpu),
            "manifest: kernel 0: grid, block and shared_bytes are for cuda "
            "kernels, and the target is cpu");
}

// What a cuda kernel may write: recorded, kept through a round trip, one
// of its buffers; without the record every buffer it binds may be written.
TEST(Manifest, CudaKernelWrites) {
  Manifest m = cudaManifest();
  EXPECT_TRUE(m.kernels[0].mayWrite(m.kernels[0].buffers[0]));
  m.kernels[0].writes = {m.kernels[0].buffers.back()};
  m.kernels[0].hasWrites = true;
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  Manifest again;
  FileError err = parseManifest(text, again);
  ASSERT_TRUE(err.ok()) << err.message;
  EXPECT_TRUE(again.kernels[0].hasWrites);
  EXPECT_EQ(again.kernels[0].writes, m.kernels[0].writes);
  EXPECT_FALSE(again.kernels[0].mayWrite(again.kernels[0].buffers[0]));
  EXPECT_TRUE(again.kernels[0].mayWrite(again.kernels[0].buffers.back()));
  EXPECT_FALSE(again.kernels[1].hasWrites);
  EXPECT_EQ(cudaError([](Manifest &m) {
              m.kernels[0].writes = {3};
              m.kernels[0].hasWrites = true;
            }),
            "manifest: kernel 0: writes buffer 3, which is not one of the "
            "buffers it binds");
}

// A cuda kernel's length rule numbers block x: its grid must be x alone.
TEST(Manifest, CudaLengthRuleNumbersBlockX) {
  auto rule = [](Manifest &m) {
    m.kernels[0].rowsGrid = {1, 3, 128};
    m.kernels[0].rowsBatch = 0;
    m.kernels[0].rowsRow = 2;
    m.kernels[0].rowsTile = 32;
  };
  EXPECT_EQ(cudaError(rule),
            "manifest: kernel 0: rows: a cuda kernel's length rule numbers "
            "block x, and its grid [8, 16, 3] is not [workgroups, 1, 1]");
  EXPECT_EQ(cudaError([&](Manifest &m) {
              rule(m);
              m.kernels[0].grid = {384, 1, 1};
              m.kernels[0].block = {256, 1, 1};
            }),
            "");
}

// A length variant (max_length) is a cuda kernel's, in a manifest of
// format_version 3 or 4 (a runtime that reads 2 would launch every variant),
// with 0 <= lo < hi; it round-trips.
TEST(Manifest, CudaLengthVariants) {
  auto variant = [](Manifest &m) {
    m.formatVersion = kManifestFormatVersionVariants;
    m.kernels[0].maxLength = {0, 512};
  };
  EXPECT_EQ(cudaError(variant), "");
  EXPECT_EQ(cudaError([&](Manifest &m) {
              variant(m);
              m.formatVersion = kManifestFormatVersion;
            }),
            "manifest: kernel 0: max_length (a length variant) needs "
            "format_version 3 or later: a runtime that reads 2 would launch "
            "every variant");
  EXPECT_EQ(cudaError([&](Manifest &m) {
              variant(m);
              m.kernels[0].maxLength = {512, 512};
            }),
            "manifest: kernel 0: max_length [512, 512] is not [lo, hi] with "
            "0 <= lo < hi");
  EXPECT_EQ(cudaError([&](Manifest &m) {
              variant(m);
              m.kernels[0].maxLength = {-1, 5, 7};
            }),
            "manifest: kernel 0: max_length [-1, 5, 7] is not [lo, hi] with "
            "0 <= lo < hi");
  Manifest m = cudaManifest();
  variant(m);
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  EXPECT_NE(text.find("\"format_version\": 3"), std::string::npos) << text;
  Manifest again;
  ASSERT_TRUE(parseManifest(text, again).ok());
  EXPECT_EQ(again.kernels[0].maxLength, (std::vector<int64_t>{0, 512}));
  EXPECT_TRUE(again.kernels[1].maxLength.empty());
  // A cpu kernel has no variants.
  Manifest cpu;
  ASSERT_TRUE(parseManifest(kValid, cpu).ok());
  cpu.formatVersion = kManifestFormatVersionVariants;
  cpu.kernels[0].maxLength = {0, 512};
  EXPECT_EQ(validateManifest(cpu),
            "manifest: kernel 0: max_length (a length variant) is for cuda "
            "kernels, and the target is cpu");
}

// Packed sequence buffers (sequence_layout "packed") are a manifest's
// with a lengths input (cpu or cuda), of format_version 4 (a runtime that reads
// 2 or 3 would bind padded tensors), and only such a manifest says 4; the
// layout round-trips.
TEST(Manifest, PackedSequences) {
  Manifest m;
  ASSERT_TRUE(parseManifest(kValid, m).ok());
  m.packedSequences = true;
  m.formatVersion = kManifestFormatVersionPacked;
  EXPECT_EQ(validateManifest(m), "");
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  EXPECT_NE(text.find("\"sequence_layout\": \"packed\""), std::string::npos)
      << text;
  Manifest again;
  ASSERT_TRUE(parseManifest(text, again).ok());
  EXPECT_TRUE(again.packedSequences);
  EXPECT_EQ(again.formatVersion, kManifestFormatVersionPacked);

  Manifest old = m;
  old.formatVersion = kManifestFormatVersion;
  EXPECT_EQ(validateManifest(old),
            "manifest: sequence_layout \"packed\" needs format_version 4: "
            "an older runtime would bind padded tensors");
  Manifest padded = m;
  padded.packedSequences = false;
  EXPECT_EQ(validateManifest(padded),
            "manifest: format_version 4 is for sequence_layout \"packed\", "
            "which this manifest does not have");
  Manifest noLengths = m;
  for (ManifestBuffer &b : noLengths.buffers)
    b.role = BufferRole::None;
  EXPECT_EQ(validateManifest(noLengths),
            "manifest: sequence_layout \"packed\" needs a lengths input (the "
            "kernels find each sequence's rows through it)");
  // A cuda manifest's kernels may index them packed too, and version 4
  // also covers its length variants.
  Manifest cuda = cudaManifest();
  cuda.packedSequences = true;
  cuda.formatVersion = kManifestFormatVersionPacked;
  EXPECT_EQ(validateManifest(cuda), "");
  cuda.kernels[0].maxLength = {0, 512};
  EXPECT_EQ(validateManifest(cuda), "");
  std::string bad = text;
  bad.replace(bad.find("\"packed\""), 8, "\"ragged\"");
  FileError err = parseManifest(bad, again);
  EXPECT_FALSE(err.ok());
  EXPECT_NE(err.message.find(
                "'sequence_layout' is \"ragged\", expected \"padded\" or "
                "\"packed\""),
            std::string::npos)
      << err.message;
}

// Which outputs hold tokens is the compiler's to say (its token analysis):
// `sequence` round-trips on outputs, absent means "decide by the shape"
// (older compilers), and anything else is refused by name.
TEST(Manifest, SequenceOutputs) {
  Manifest m;
  ASSERT_TRUE(parseManifest(kValid, m).ok());
  EXPECT_FALSE(m.buffers[3].sequence.has_value());
  m.buffers[3].sequence = false; // [1, 4096, 512] and yet no tokens
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  EXPECT_NE(text.find("\"sequence\": false"), std::string::npos) << text;
  Manifest again;
  ASSERT_TRUE(parseManifest(text, again).ok());
  ASSERT_TRUE(again.buffers[3].sequence.has_value());
  EXPECT_FALSE(*again.buffers[3].sequence);
  m.buffers[3].sequence = true;
  ASSERT_EQ(serializeManifest(m, text), "");
  ASSERT_TRUE(parseManifest(text, again).ok());
  EXPECT_TRUE(again.buffers[3].sequence.value_or(false));

  Manifest onInput = m;
  onInput.buffers[0].sequence = true;
  EXPECT_EQ(validateManifest(onInput),
            "manifest: buffer 0 ('x'): 'sequence' says whether an output "
            "holds tokens; this buffer is input");
  Manifest flat = m;
  flat.buffers[3].shape = {4096};
  EXPECT_EQ(validateManifest(flat),
            "manifest: buffer 3 ('y'): a sequence output has shape [b, n, "
            "...], not [4096]");
  json j = json::parse(kValid);
  j["buffers"][3]["sequence"] = "yes";
  FileError err = parseManifest(j.dump(), again);
  EXPECT_NE(err.message.find("buffer 3 ('y'): 'sequence' must be true or "
                             "false"),
            std::string::npos)
      << err.message;
  j = json::parse(kValid);
  j["buffers"][2]["sequence"] = false;
  err = parseManifest(j.dump(), again);
  EXPECT_NE(err.message.find("'sequence' says whether an output holds "
                             "tokens; this buffer is weight"),
            std::string::npos)
      << err.message;
}

// The version a manifest's contents need: 2, 3 with a length variant, 4
// when packed (with or without variants), 5 with initializers.
TEST(Manifest, FormatVersionFor) {
  Manifest m = cudaManifest();
  EXPECT_EQ(formatVersionFor(m), kManifestFormatVersion);
  m.kernels[0].maxLength = {0, 512};
  EXPECT_EQ(formatVersionFor(m), kManifestFormatVersionVariants);
  m.packedSequences = true;
  EXPECT_EQ(formatVersionFor(m), kManifestFormatVersionPacked);
  m.kernels[0].maxLength.clear();
  EXPECT_EQ(formatVersionFor(m), kManifestFormatVersionPacked);
  m.kernels[0].initializer = true;
  EXPECT_EQ(formatVersionFor(m), kManifestFormatVersionInitializers);
}

/// `expect(edit, message)`: `m` edited by `edit` fails validation with
/// "manifest: " + message.
static auto refusalsOf(const Manifest &m) {
  return [&m](const std::function<void(Manifest &)> &edit,
              const std::string &message) {
    Manifest bad = m;
    edit(bad);
    EXPECT_EQ(validateManifest(bad), "manifest: " + message);
  };
}

// Initializers (kernels run once per session) and the constants they write:
// format_version 5, and only such a manifest says 5; each rule of theirs
// is checked, and both round-trip.
TEST(Manifest, Initializers) {
  Manifest m;
  ASSERT_TRUE(parseManifest(kValid, m).ok());
  ManifestBuffer panels;
  panels.name = "panels";
  panels.kind = BufferKind::Constant;
  panels.bytes = 1048576;
  m.buffers.push_back(panels); // 5
  ManifestKernel pack{"encoder_kernel_2", 64, {2, 5}, "{}"};
  pack.initializer = true;
  m.kernels.insert(m.kernels.begin(), pack);
  m.kernels[1].buffers = {5, 0, 4};
  m.formatVersion = kManifestFormatVersionInitializers;
  EXPECT_EQ(formatVersionFor(m), kManifestFormatVersionInitializers);
  ASSERT_EQ(validateManifest(m), "");
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  EXPECT_NE(text.find("\"initializer\": true"), std::string::npos) << text;
  EXPECT_NE(text.find("\"kind\": \"constant\""), std::string::npos) << text;
  Manifest again;
  ASSERT_TRUE(parseManifest(text, again).ok());
  EXPECT_TRUE(again.kernels[0].initializer);
  EXPECT_FALSE(again.kernels[1].initializer);
  EXPECT_EQ(again.buffers[5].kind, BufferKind::Constant);
  EXPECT_EQ(again.buffers[5].byteSize(), 1048576u);

  auto expect = refusalsOf(m);
  expect([](Manifest &b) { b.formatVersion = kManifestFormatVersionVariants; },
         "initializer kernels need format_version 5: an older runtime would "
         "not run them");
  expect(
      [](Manifest &b) {
        b.kernels[0].initializer = false;
        b.buffers[5].kind = BufferKind::Intermediate;
      },
      "format_version 5 is for manifests with initializer kernels, and this "
      "one has none");
  expect(
      [](Manifest &b) {
        b.kernels[0].buffers = {0, 5};
      },
      "kernel 0: an initializer binds weights and constants (or their "
      "tensor maps) only, and buffer 0 ('x') is an input");
  expect(
      [](Manifest &b) {
        b.kernels[0].rowsGrid = {1, 64};
        b.kernels[0].rowsBatch = 0;
        b.kernels[0].rowsRow = 1;
        b.kernels[0].rowsTile = 64;
      },
      "kernel 0: an initializer runs once per session, for no run's "
      "lengths: it takes no length rule or length variant");
  expect([](Manifest &b) { b.kernels[0].buffers = {2}; },
         "buffer 5 ('panels'): a constant that no initializer kernel binds: "
         "nothing would make it");
  expect([](Manifest &b) { b.buffers[5].bytes = 0; },
         "buffer 5 ('panels'): a constant needs 'bytes' > 0");
  json j = json::parse(text);
  j["kernels"][0]["initializer"] = 1;
  FileError err = parseManifest(j.dump(), again);
  EXPECT_NE(err.message.find("kernel 0: 'initializer' must be true or false"),
            std::string::npos)
      << err.message;
}

// A sequence-parallel manifest: all-reduce steps and split weights, format
// version 6 and only such a manifest says 6; each rule of theirs checked,
// and both round-trip.
TEST(Manifest, SequenceParallelSteps) {
  Manifest m;
  ASSERT_TRUE(parseManifest(kValid, m).ok());
  m.buffers[2].sequenceSplit = 2;
  ManifestKernel step{"encoder_all_reduce_0", 1, {4}, "{}"};
  step.allReduce = 2;
  m.kernels.insert(m.kernels.begin() + 1, step);
  EXPECT_EQ(formatVersionFor(m), kManifestFormatVersionCollectives);
  m.formatVersion = kManifestFormatVersionCollectives;
  ASSERT_EQ(validateManifest(m), "");
  EXPECT_EQ(sequenceParallelRanks(m), 2);
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  json j = json::parse(text);
  EXPECT_EQ(j["kernels"][1]["all_reduce"],
            json::parse(R"({"ranks": 2, "dtype": "f32"})"));
  EXPECT_EQ(j["buffers"][2]["sequence_split"], 2);
  Manifest again;
  ASSERT_TRUE(parseManifest(text, again).ok());
  EXPECT_EQ(again.kernels[1].allReduce, 2);
  EXPECT_EQ(again.kernels[1].allReduceDtype, DType::F32);
  EXPECT_EQ(again.buffers[2].sequenceSplit, 2);

  auto expect = refusalsOf(m);
  expect([](Manifest &b) { b.formatVersion = kManifestFormatVersionInitializers; },
         "all-reduce steps and split weights need format_version 6: an older "
         "runtime would look for the steps' code and bind whole weights");
  expect(
      [](Manifest &b) {
        b.kernels.erase(b.kernels.begin() + 1);
        b.buffers[2].sequenceSplit = 0;
      },
      "format_version 6 is for sequence-parallel manifests (all-reduce "
      "steps, split weights), and this one has neither");
  expect([](Manifest &b) { b.kernels[1].buffers = {2}; },
         "kernel 1: an all-reduce step sums an intermediate of whole f32, f16 "
         "or bf16 elements, not buffer 2 ('layers.0.attn.wq': weight, 1048576 "
         "bytes)");
  expect([](Manifest &b) { b.buffers[2].sequenceSplit = 4; },
         "kernel 1: all_reduce: ranks 2, but weight 'layers.0.attn.wq' is "
         "split over 4");
  expect([](Manifest &b) { b.kernels[1].workgroups = 2; },
         "kernel 1: an all-reduce step has one workgroup and one buffer (an "
         "all-gather two), and no initializer, length rule, variant or "
         "generator");
  expect([](Manifest &b) { b.buffers[0].sequenceSplit = 2; },
         "buffer 0 ('x'): 'sequence_split' 2 must be the ranks (2 to 2^20) a "
         "weight of rank >= 1 is split over");
}

// An all-gather step: [share, whole], the whole P shares, the share whole
// blocks; it round-trips as all_reduce.gather_blocks.
TEST(Manifest, SequenceParallelGather) {
  Manifest m;
  ASSERT_TRUE(parseManifest(kValid, m).ok());
  ManifestBuffer whole;
  whole.name = "whole";
  whole.kind = BufferKind::Intermediate;
  whole.bytes = 2 * m.buffers[4].bytes;
  m.buffers.push_back(whole); // 5
  ManifestKernel step{"encoder_all_gather_0", 1, {4, 5}, "{}"};
  step.allReduce = 2;
  step.gatherBlocks = 2;
  m.kernels.insert(m.kernels.begin() + 1, step);
  m.formatVersion = formatVersionFor(m);
  ASSERT_EQ(validateManifest(m), "");
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  EXPECT_EQ(json::parse(text)["kernels"][1]["all_reduce"],
            json::parse(R"({"ranks": 2, "dtype": "f32", "gather_blocks": 2})"));
  Manifest again;
  ASSERT_TRUE(parseManifest(text, again).ok());
  EXPECT_EQ(again.kernels[1].gatherBlocks, 2);

  auto expect = refusalsOf(m);
  expect([](Manifest &b) { b.buffers[5].bytes = 3 * b.buffers[4].bytes; },
         "kernel 1: all_reduce: an all-gather of 2 blocks needs a share of "
         "whole blocks of elements and a whole buffer ranks (2) times its "
         "size, not 8388608 and 25165824 bytes");
  expect([](Manifest &b) { b.kernels[1].gatherBlocks = 3; },
         "kernel 1: all_reduce: an all-gather of 3 blocks needs a share of "
         "whole blocks of elements and a whole buffer ranks (2) times its "
         "size, not 8388608 and 16777216 bytes");
  expect([](Manifest &b) { b.kernels[1].buffers = {4}; },
         "kernel 1: an all-reduce step has one workgroup and one buffer (an "
         "all-gather two), and no initializer, length rule, variant or "
         "generator");
}

// A cuda manifest's initializers (E's row sums of a model without lengths,
// made once per session on the device) launch as its other kernels do, and
// bind weights and constants only, as the cpu's.
TEST(Manifest, CudaInitializers) {
  Manifest m = cudaManifest();
  ManifestBuffer sums;
  sums.name = "sums";
  sums.kind = BufferKind::Constant;
  sums.bytes = 4096;
  m.buffers.push_back(sums); // 5
  ManifestKernel init{"encoder_kernel_2", 8, {2, 5}, "{}"};
  init.grid = {8, 1, 1};
  init.block = {32, 4, 1};
  init.initializer = true;
  m.kernels.insert(m.kernels.begin(), init);
  m.kernels[1].buffers = {5, 0, 4};
  m.formatVersion = kManifestFormatVersionInitializers;
  ASSERT_EQ(validateManifest(m), "");
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  Manifest again;
  ASSERT_TRUE(parseManifest(text, again).ok());
  EXPECT_TRUE(again.kernels[0].initializer);
  EXPECT_EQ(again.kernels[0].grid, (std::vector<int64_t>{8, 1, 1}));
  EXPECT_EQ(again.buffers[5].kind, BufferKind::Constant);
  auto expect = refusalsOf(m);
  expect(
      [](Manifest &b) {
        b.kernels[0].buffers = {0, 5};
      },
      "kernel 0: an initializer binds weights and constants (or their "
      "tensor maps) only, and buffer 0 ('x') is an input");
  expect(
      [](Manifest &b) {
        b.kernels[0].maxLength = {0, 512};
      },
      "kernel 0: an initializer runs once per session, for no run's "
      "lengths: it takes no length rule or length variant");
}

// Tensor maps (cuda buffers the runtime encodes for TMA copies): format
// version 7, and only such a manifest says 7; a map round-trips, and each
// rule cuTensorMapEncodeTiled documents (and the view inside its source) is
// checked before any driver sees it.
TEST(Manifest, TensorMaps) {
  Manifest m = cudaManifest();
  ManifestBuffer map;
  map.name = "map";
  map.kind = BufferKind::TensorMap;
  // tmp3 (8 MiB) as 8192 rows of 512 bf16, copied in 64 x 64 boxes.
  map.tensorMap.source = 4;
  map.tensorMap.dtype = DType::BF16;
  map.tensorMap.dims = {512, 8192};
  map.tensorMap.strides = {1024};
  map.tensorMap.box = {64, 64};
  map.tensorMap.swizzle = 128;
  m.buffers.push_back(map); // 5
  m.kernels[1].buffers = {5, 1, 3};
  m.kernels[1].writes = {3};
  m.kernels[1].hasWrites = true;
  m.formatVersion = kManifestFormatVersionTensorMaps;
  ASSERT_EQ(validateManifest(m), "");
  EXPECT_EQ(formatVersionFor(m), kManifestFormatVersionTensorMaps);
  EXPECT_EQ(m.buffers[5].byteSize(), kTensorMapBytes);
  EXPECT_EQ(m.buffers[5].tensorMap.extentBytes(), 8388608u);
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  Manifest again;
  FileError err = parseManifest(text, again);
  ASSERT_TRUE(err.ok()) << err.message;
  const ManifestTensorMap &t = again.buffers[5].tensorMap;
  EXPECT_EQ(again.buffers[5].kind, BufferKind::TensorMap);
  EXPECT_EQ(t.source, 4);
  EXPECT_EQ(t.dtype, DType::BF16);
  EXPECT_EQ(t.dims, (std::vector<int64_t>{512, 8192}));
  EXPECT_EQ(t.strides, (std::vector<int64_t>{1024}));
  EXPECT_EQ(t.box, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(t.swizzle, 128);
  EXPECT_EQ(t.offset, 0u);
  // A map without its description is a parse error naming the buffer.
  json j = json::parse(text);
  j["buffers"][5].erase("tensor_map");
  Manifest parsed;
  err = parseManifest(j.dump(), parsed);
  EXPECT_FALSE(err.ok());
  EXPECT_NE(err.message.find("buffer 5 ('map'): missing 'tensor_map'"),
            std::string::npos)
      << err.message;

  auto expect = refusalsOf(m);
  expect(
      [](Manifest &b) { b.formatVersion = kManifestFormatVersionInitializers; },
      "tensor maps need format_version 7: an older runtime would refuse "
      "the buffer kind");
  expect(
      [](Manifest &b) {
        b.buffers.pop_back();
        b.kernels[1].buffers = {4, 1, 3};
      },
      "format_version 7 is for manifests with tensor maps, and this one has "
      "none");
  expect([](Manifest &b) { b.target.kind = "cpu"; },
         "buffer 5 ('map'): tensor maps are for cuda kernels' TMA copies, and "
         "the target is cpu");
  expect([](Manifest &b) { b.target.cpu = "sm_80"; },
         "buffer 5 ('map'): tensor maps need sm_90 or later (TMA copies), and "
         "the target is sm_80");
  expect([](Manifest &b) { b.buffers[5].tensorMap.source = 6; },
         "buffer 5 ('map'): tensor_map: source 6 is not a buffer (6 buffers)");
  // A map of a later buffer that is itself malformed: that buffer's own
  // error, not the map's view of it.
  expect(
      [](Manifest &b) {
        ManifestBuffer late;
        late.name = "late";
        late.kind = BufferKind::Intermediate;
        b.buffers.push_back(late); // 6, 0 bytes
        b.buffers[5].tensorMap.source = 6;
      },
      "buffer 6 ('late'): an intermediate needs 'bytes' > 0");
  expect([](Manifest &b) { b.buffers[5].tensorMap.source = 5; },
         "buffer 5 ('map'): tensor_map: source 5 ('map') is a tensor map "
         "itself");
  expect([](Manifest &b) { b.buffers[5].tensorMap.strides = {}; },
         "buffer 5 ('map'): tensor_map: needs 1 to 5 dims, as many box sizes "
         "and one stride fewer, not dims [512, 8192], strides [], box [64, "
         "64]");
  expect(
      [](Manifest &b) {
        b.buffers[5].tensorMap.box = {64, 257};
      },
      "buffer 5 ('map'): tensor_map: box [64, 257] has a size outside [1, "
      "256]");
  expect([](Manifest &b) { b.buffers[5].tensorMap.strides = {1000}; },
         "buffer 5 ('map'): tensor_map: strides [1000] must be multiples of "
         "16 bytes below 2^40");
  expect(
      [](Manifest &b) {
        b.buffers[5].tensorMap.box = {4, 64};
      },
      "buffer 5 ('map'): tensor_map: the box's innermost 4 bf16 are 8 "
      "bytes, not a multiple of 16");
  expect([](Manifest &b) { b.buffers[5].tensorMap.swizzle = 48; },
         "buffer 5 ('map'): tensor_map: swizzle 48 is not 0, 32, 64 or 128 "
         "(bytes)");
  expect([](Manifest &b) { b.buffers[5].tensorMap.swizzle = 64; },
         "buffer 5 ('map'): tensor_map: the box's innermost 128 bytes exceed "
         "its swizzle span of 64");
  expect([](Manifest &b) { b.buffers[5].tensorMap.offset = 8; },
         "buffer 5 ('map'): tensor_map: offset 8 is not a multiple of 16 "
         "bytes");
  expect([](Manifest &b) { b.buffers[5].tensorMap.offset = 16; },
         "buffer 5 ('map'): tensor_map: the view (8388608 bytes from offset "
         "16) reaches past source 'tmp3' (8388608 bytes)");
  expect([](Manifest &b) { b.kernels[1].hasWrites = false; },
         "kernel 1: binds tensor map 5 ('map') as written: kernels only read "
         "tensor maps (a kernel binding one lists the buffers it writes)");
  expect(
      [](Manifest &b) {
        b.kernels[1].initializer = true;
        b.kernels[1].buffers = {5};
        b.kernels[1].writes = {};
      },
      "kernel 1: an initializer binds weights and constants (or their tensor "
      "maps) only, and buffer 4 ('tmp3', through tensor map 'map') is an "
      "intermediate");
}

// A kernel's length rule round-trips and each of its rules is checked.
TEST(Manifest, LengthRules) {
  Manifest m;
  ASSERT_TRUE(parseManifest(kValid, m).ok());
  // 384 workgroups = 1 sequence x 3 x 128 row tiles of 32 tokens.
  m.kernels[0].rowsGrid = {1, 3, 128};
  m.kernels[0].rowsBatch = 0;
  m.kernels[0].rowsRow = 2;
  m.kernels[0].rowsTile = 32;
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  Manifest again;
  ASSERT_TRUE(parseManifest(text, again).ok());
  EXPECT_EQ(again.kernels[0].rowsGrid, (std::vector<int64_t>{1, 3, 128}));
  EXPECT_EQ(again.kernels[0].rowsRow, 2);
  EXPECT_EQ(again.kernels[0].rowsTile, 32);
  EXPECT_FALSE(again.kernels[1].hasRows());

  auto error = [&](const std::function<void(ManifestKernel &)> &edit) {
    Manifest bad = m;
    edit(bad.kernels[0]);
    return validateManifest(bad);
  };
  EXPECT_EQ(error([](ManifestKernel &k) { k.rowsGrid = {1, 3, 64}; }),
            "manifest: kernel 0: rows: grid [1, 3, 64] has 192 workgroups, "
            "the kernel 384");
  EXPECT_EQ(error([](ManifestKernel &k) { k.rowsGrid = {1, 0, 128}; }),
            "manifest: kernel 0: rows: grid [1, 0, 128] has a size outside "
            "[1, workgroups]");
  EXPECT_EQ(error([](ManifestKernel &k) { k.rowsBatch = 2; }),
            "manifest: kernel 0: rows: needs 0 <= batch < row < 3, got batch "
            "2, row 2");
  EXPECT_EQ(error([](ManifestKernel &k) { k.rowsRow = 3; }),
            "manifest: kernel 0: rows: needs 0 <= batch < row < 3, got batch "
            "0, row 3");
  EXPECT_EQ(error([](ManifestKernel &k) { k.rowsTile = 0; }),
            "manifest: kernel 0: rows: tile is 0, must be >= 1");
  // A rule that is not an object is a parse error naming the kernel.
  json j = json::parse(text);
  j["kernels"][0]["rows"] = 3;
  Manifest parsed;
  FileError err = parseManifest(j.dump(), parsed);
  EXPECT_FALSE(err.ok());
  EXPECT_NE(err.message.find("kernel 0: rows: must be an object"),
            std::string::npos)
      << err.message;
}
