//===- SafetensorsTest.cpp - Tests of the safetensors reader/writer -------===//
//
// Round trips, alignment of written files, and the ways a weights file can
// be broken: truncated data, a bad header, unsupported dtypes, sizes that do
// not match the shape, overlapping tensors. Each error must name the tensor.
//
//===----------------------------------------------------------------------===//

#include "lib/Safetensors/Safetensors.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace linformer;

namespace {

std::string bytesOf(std::initializer_list<float> v) {
  return std::string(reinterpret_cast<const char *>(v.begin()),
                     v.size() * sizeof(float));
}

std::map<std::string, SafetensorsEntry> sample() {
  std::map<std::string, SafetensorsEntry> t;
  t["w"] = {DType::F32, {2, 2}, bytesOf({1, 2, 3, 4})};
  t["ids"] = {DType::I64, {3}, std::string(24, '\x01')};
  t["flags"] = {DType::U8, {5}, "abcde"};
  t["half"] = {DType::BF16, {1, 3}, "xxyyzz"};
  t["scalar"] = {DType::I32, {}, std::string("\x07\0\0\0", 4)};
  return t;
}

/// A raw file from a header JSON text and a data blob.
std::string rawFile(const std::string &header, const std::string &data) {
  std::string out(8, '\0');
  test::patchLE(out, 0, header.size());
  return out + header + data;
}

TEST(Safetensors, RoundTripThroughFile) {
  test::TempDir dir;
  std::string path = dir.file("w.safetensors");
  ASSERT_EQ(writeSafetensors(path, sample(), {{"origin", "test"}}), "");
  SafetensorsFile f;
  FileError err = SafetensorsFile::open(path, f);
  ASSERT_TRUE(err.ok()) << err.message;
  ASSERT_EQ(f.tensors().size(), 5u);
  for (const auto &[name, e] : sample()) {
    const SafetensorsTensor *t = f.find(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->dtype, e.dtype) << name;
    EXPECT_EQ(t->shape, e.shape) << name;
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(t->data), t->size),
              e.bytes)
        << name;
    // The writer's layout keeps every tensor naturally aligned in a mapping.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % dtypeSize(t->dtype), 0u)
        << name;
  }
  EXPECT_EQ(f.metadata().at("origin"), "test");
  EXPECT_EQ(f.find("missing"), nullptr);
}

TEST(Safetensors, ReadsAHandWrittenFile) {
  // What Python's safetensors writes: no padding, keys in any order.
  std::string header = R"({"b":{"dtype":"F32","shape":[1],)"
                       R"("data_offsets":[4,8]},)"
                       R"("a":{"dtype":"F32","shape":[1],)"
                       R"("data_offsets":[0,4]}})";
  std::string image = rawFile(header, bytesOf({1.0f, 2.0f}));
  SafetensorsFile f;
  FileError err = SafetensorsFile::fromBytes(image, f);
  ASSERT_TRUE(err.ok()) << err.message;
  float b;
  std::memcpy(&b, f.find("b")->data, 4);
  EXPECT_EQ(b, 2.0f);
}

TEST(Safetensors, TruncatedDataNamesTheTensor) {
  std::string image;
  ASSERT_EQ(serializeSafetensors(sample(), image), "");
  image.resize(image.size() - 2); // U8 tensors are laid out last
  SafetensorsFile f;
  FileError err = SafetensorsFile::fromBytes(image, f);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("tensor 'flags'"), std::string::npos)
      << err.message;
  EXPECT_NE(err.message.find("runs past the end"), std::string::npos);
}

TEST(Safetensors, TruncatedHeader) {
  SafetensorsFile f;
  EXPECT_NE(SafetensorsFile::fromBytes("abc", f).message.find("truncated"),
            std::string::npos);
  std::string image = rawFile("{}", "");
  test::patchLE(image, 0, 1000);
  FileError err = SafetensorsFile::fromBytes(image, f);
  EXPECT_NE(err.message.find("header claims 1000 bytes"), std::string::npos)
      << err.message;
}

TEST(Safetensors, HeaderNotJson) {
  SafetensorsFile f;
  FileError err = SafetensorsFile::fromBytes(rawFile("{nope", ""), f);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("not valid JSON"), std::string::npos);
}

TEST(Safetensors, UnsupportedDtypeNamesTheTensor) {
  std::string header =
      R"({"w":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})";
  SafetensorsFile f;
  FileError err =
      SafetensorsFile::fromBytes(rawFile(header, std::string(8, '\0')), f);
  EXPECT_NE(err.message.find("tensor 'w': unsupported dtype \"F64\""),
            std::string::npos)
      << err.message;
}

TEST(Safetensors, SizeMustMatchShape) {
  std::string header =
      R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";
  SafetensorsFile f;
  FileError err =
      SafetensorsFile::fromBytes(rawFile(header, std::string(8, '\0')), f);
  EXPECT_NE(err.message.find("tensor 'w': holds 8 bytes but F32 [3] needs 12"),
            std::string::npos)
      << err.message;
}

TEST(Safetensors, BadShapeAndOffsets) {
  SafetensorsFile f;
  std::string h1 = R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})";
  EXPECT_NE(SafetensorsFile::fromBytes(rawFile(h1, "1234"), f)
                .message.find("tensor 'w': shape holds"),
            std::string::npos);
  std::string h2 = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4]}})";
  EXPECT_NE(SafetensorsFile::fromBytes(rawFile(h2, "1234"), f)
                .message.find("'data_offsets' must be"),
            std::string::npos);
  std::string h3 = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})";
  EXPECT_NE(SafetensorsFile::fromBytes(rawFile(h3, "12345678"), f)
                .message.find("end before they begin"),
            std::string::npos);
}

TEST(Safetensors, OverlappingTensors) {
  std::string header =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  SafetensorsFile f;
  FileError err =
      SafetensorsFile::fromBytes(rawFile(header, std::string(8, '\0')), f);
  EXPECT_NE(err.message.find("tensors 'a' and 'b' overlap"), std::string::npos)
      << err.message;
}

TEST(Safetensors, WriterChecksSizes) {
  std::map<std::string, SafetensorsEntry> t;
  t["w"] = {DType::F32, {3}, "1234"};
  std::string image;
  EXPECT_EQ(serializeSafetensors(t, image),
            "safetensors: tensor 'w' has 4 bytes but F32 [3] needs 12");
}

TEST(Safetensors, MissingFileIsIOError) {
  SafetensorsFile f;
  EXPECT_EQ(SafetensorsFile::open("/nonexistent.safetensors", f).kind,
            ErrorKind::IO);
}

} // namespace
