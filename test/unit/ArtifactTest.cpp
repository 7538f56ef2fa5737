//===- ArtifactTest.cpp - Tests of the .lfa container ---------------------===//
//
// Round trips through ArtifactWriter/Artifact, and every way a corrupt
// artifact must be refused with a message (never a crash): truncation, bad
// magic, a newer version, sections out of bounds or overlapping.
//
//===----------------------------------------------------------------------===//

#include "lib/Manifest/Artifact.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace linformer;
using linformer::test::patchLE;

namespace {

std::string sampleImage() {
  ArtifactWriter w;
  EXPECT_EQ(w.addSection("manifest", "{\"format\": 1}"), "");
  EXPECT_EQ(w.addSection("cpu.so", std::string("\x7f"
                                               "ELF\0\1\2",
                                               7)),
            "");
  EXPECT_EQ(w.addSection("cuda.sm_90.cubin", std::string(100, 'c')), "");
  return w.serialize();
}

/// Offset of entry `i`'s fields in the section table.
size_t entryOffset(size_t i) {
  return kArtifactHeaderSize + i * kArtifactEntrySize;
}

TEST(Artifact, RoundTripInMemory) {
  Artifact a;
  FileError err = Artifact::fromBytes(sampleImage(), a);
  ASSERT_TRUE(err.ok()) << err.message;
  EXPECT_EQ(a.formatVersion(), 1u);
  ASSERT_EQ(a.sections().size(), 3u);
  EXPECT_EQ(a.section("manifest"), "{\"format\": 1}");
  EXPECT_EQ(a.section("cpu.so"), std::string("\x7f"
                                             "ELF\0\1\2",
                                             7));
  EXPECT_EQ(a.section("cuda.sm_90.cubin"), std::string(100, 'c'));
  for (const ArtifactSection &s : a.sections())
    EXPECT_EQ(s.offset % kArtifactAlignment, 0u) << s.name;
  EXPECT_EQ(a.find("nope"), nullptr);
  EXPECT_TRUE(a.section("nope").empty());
}

TEST(Artifact, RoundTripThroughFileAndMove) {
  test::TempDir dir;
  ArtifactWriter w;
  ASSERT_EQ(w.addSection("manifest", "m"), "");
  ASSERT_EQ(w.write(dir.file("a.lfa")), "");
  Artifact a;
  FileError err = Artifact::open(dir.file("a.lfa"), a);
  ASSERT_TRUE(err.ok()) << err.message;
  Artifact moved = std::move(a);
  EXPECT_EQ(moved.section("manifest"), "m");
  // A short in-memory image survives a move too (no small-string pointer).
  Artifact b;
  ASSERT_TRUE(Artifact::fromBytes(w.serialize(), b).ok());
  Artifact movedB = std::move(b);
  EXPECT_EQ(movedB.section("manifest"), "m");
}

TEST(Artifact, MissingFileIsIOError) {
  Artifact a;
  FileError err = Artifact::open("/nonexistent/x.lfa", a);
  EXPECT_EQ(err.kind, ErrorKind::IO);
  EXPECT_NE(err.message.find("/nonexistent/x.lfa"), std::string::npos);
}

TEST(Artifact, TruncatedHeader) {
  Artifact a;
  FileError err = Artifact::fromBytes("LFART", a);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("truncated header"), std::string::npos)
      << err.message;
  err = Artifact::fromBytes("", a);
  EXPECT_EQ(err.kind, ErrorKind::Format);
}

TEST(Artifact, BadMagic) {
  std::string image = sampleImage();
  image[0] = 'X';
  Artifact a;
  FileError err = Artifact::fromBytes(image, a);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("bad magic"), std::string::npos) << err.message;
}

TEST(Artifact, VersionMismatch) {
  std::string image = sampleImage();
  patchLE(image, 8, 2, 4);
  Artifact a;
  FileError err = Artifact::fromBytes(image, a, "artifact");
  EXPECT_EQ(err.kind, ErrorKind::Version);
  EXPECT_EQ(err.message,
            "artifact: format_version 2 is not supported (this runtime reads "
            "1)");
}

TEST(Artifact, TruncatedSectionTable) {
  std::string image = sampleImage();
  patchLE(image, 12, 1000000, 4);
  Artifact a;
  FileError err = Artifact::fromBytes(image, a);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("truncated section table"), std::string::npos)
      << err.message;
}

TEST(Artifact, TruncatedPayloadIsOutOfBounds) {
  std::string image = sampleImage();
  image.resize(image.size() - 10); // cuts into the last section
  Artifact a;
  FileError err = Artifact::fromBytes(image, a);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("'cuda.sm_90.cubin'"), std::string::npos)
      << err.message;
  EXPECT_NE(err.message.find("out of bounds"), std::string::npos);
}

TEST(Artifact, SectionOutOfBounds) {
  std::string image = sampleImage();
  patchLE(image, entryOffset(0) + 40, uint64_t(1) << 62); // huge size
  Artifact a;
  FileError err = Artifact::fromBytes(image, a);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("section 0 'manifest'"), std::string::npos)
      << err.message;
  // An offset pointing into the section table is refused as well.
  image = sampleImage();
  patchLE(image, entryOffset(1) + 32, 0);
  err = Artifact::fromBytes(image, a);
  EXPECT_NE(err.message.find("'cpu.so'"), std::string::npos) << err.message;
}

TEST(Artifact, OverlappingSections) {
  std::string image = sampleImage();
  Artifact ok;
  ASSERT_TRUE(Artifact::fromBytes(image, ok).ok());
  // Point cpu.so at the manifest's payload.
  patchLE(image, entryOffset(1) + 32, ok.find("manifest")->offset);
  Artifact a;
  FileError err = Artifact::fromBytes(image, a);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("overlap"), std::string::npos) << err.message;
}

TEST(Artifact, NamesMustBeNulPaddedAndUnique) {
  std::string image = sampleImage();
  image[entryOffset(0) + 20] = 'x'; // garbage after the NUL
  Artifact a;
  FileError err = Artifact::fromBytes(image, a);
  EXPECT_NE(err.message.find("not NUL-padded"), std::string::npos)
      << err.message;
  image = sampleImage();
  std::memcpy(&image[entryOffset(1)], "manifest\0", 9);
  err = Artifact::fromBytes(image, a);
  EXPECT_NE(err.message.find("appears twice"), std::string::npos)
      << err.message;
}

TEST(Artifact, ManifestSectionRequired) {
  ArtifactWriter w;
  ASSERT_EQ(w.addSection("cpu.so", "x"), "");
  Artifact a;
  FileError err = Artifact::fromBytes(w.serialize(), a);
  EXPECT_NE(err.message.find("no 'manifest' section"), std::string::npos)
      << err.message;
}

TEST(Artifact, WriterRejectsBadNames) {
  ArtifactWriter w;
  EXPECT_NE(w.addSection("", "x"), "");
  EXPECT_NE(w.addSection(std::string(32, 'a'), "x").find("longer than 31"),
            std::string::npos);
  EXPECT_NE(w.addSection("has space", "x"), "");
  EXPECT_EQ(w.addSection(std::string(31, 'a'), "x"), "");
  EXPECT_NE(w.addSection(std::string(31, 'a'), "y").find("added twice"),
            std::string::npos);
  Artifact a;
  ASSERT_EQ(w.addSection("manifest", "{}"), "");
  EXPECT_TRUE(Artifact::fromBytes(w.serialize(), a).ok());
  EXPECT_EQ(a.section(std::string(31, 'a')), "x");
}

} // namespace
