//===- HardeningTest.cpp - Loaders against hostile and careless files -----===//
//
// Regression tests for the defects of the hardening issue, below the
// runtime: SHA-256 against the FIPS 180-4 examples, the kernel object
// inspector on real (fake-kernel) shared objects, size products that used
// to wrap past 2^64 in .npy and safetensors headers, the atomic writer
// against planted symlinks, and the truncated-while-mapped check.
//
//===----------------------------------------------------------------------===//

#include "lib/Manifest/KernelObject.h"
#include "lib/Manifest/MappedFile.h"
#include "lib/Npy/Npy.h"
#include "lib/Safetensors/Safetensors.h"
#include "lib/Support/Random.h"
#include "lib/Support/Sha256.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace linformer;

namespace {

TEST(Sha256, FipsExamples) {
  EXPECT_EQ(sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(
      sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // One million 'a', fed in uneven pieces to exercise the block buffering.
  Sha256 h;
  std::string chunk(997, 'a');
  size_t left = 1000000;
  while (left) {
    size_t n = std::min(left, chunk.size());
    h.update(chunk.data(), n);
    left -= n;
  }
  std::array<uint8_t, 32> d = h.finish();
  EXPECT_EQ(d[0], 0xcd);
  EXPECT_EQ(d[1], 0xc7);
  EXPECT_EQ(d[31], 0xd0);
  EXPECT_TRUE(isSha256Hex(sha256Hex("x")));
  EXPECT_FALSE(isSha256Hex("ABC"));
}

std::string readFile(const char *path) {
  std::string image;
  EXPECT_TRUE(readWholeFile(path, image).ok()) << path;
  return image;
}

FileError inspect(const std::string &image,
                  const std::vector<std::string> &kernels,
                  std::vector<KernelAbi> &abis) {
  return inspectKernelObject(image, kernels, abis, "cpu.so");
}

TEST(KernelObject, ReadsTheRecordsOfTheFakeKernels) {
  std::string image = readFile(LINFORMER_FAKE_KERNELS_PATH);
  std::vector<KernelAbi> abis;
  FileError err = inspect(image, {"fake_add", "fake_pool_mask"}, abis);
  ASSERT_TRUE(err.ok()) << err.message;
  ASSERT_EQ(abis.size(), 2u);
  // FakeKernels.c with B=2, N=16, D=8.
  EXPECT_EQ(abis[0].workgroups, 32);
  EXPECT_EQ(abis[0].bufferBytes, (std::vector<uint64_t>{1024, 32, 1024}));
  EXPECT_EQ(abis[1].bufferBytes, (std::vector<uint64_t>{1024, 4, 32, 1024}));
  EXPECT_EQ(abis[1].raw.size(), 8u * 7);
}

TEST(KernelObject, RefusesCodeThatRunsAtLoad) {
  std::string image = readFile(LINFORMER_FAKE_KERNELS_CTOR_PATH);
  std::vector<KernelAbi> abis;
  FileError err = inspect(image, {"fake_add"}, abis);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("it would run code when loaded"),
            std::string::npos)
      << err.message;
}

TEST(KernelObject, RefusesAnUndefinedHelper) {
  // The fake kernels themselves need nothing or glibc's versioned symbols;
  // the helper is unversioned, so no allowed library provides it.
  std::string image = readFile(LINFORMER_FAKE_KERNELS_HELPER_PATH);
  std::vector<KernelAbi> abis;
  FileError err = inspect(image, {"fake_add"}, abis);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("needs symbol 'linformer_fake_missing_helper', "
                             "which no version of libc, libm or libmvec "
                             "provides"),
            std::string::npos)
      << err.message;
}

TEST(KernelObject, NamesWhatIsWrong) {
  std::string image = readFile(LINFORMER_FAKE_KERNELS_PATH);
  std::vector<KernelAbi> abis;
  auto message = [&](const std::string &bytes,
                     const std::vector<std::string> &kernels) {
    return inspect(bytes, kernels, abis).message;
  };
  EXPECT_EQ(message("not an object", {"fake_add"}),
            "cpu.so: not an ELF object");
  EXPECT_EQ(message(image, {"fake_nowhere"}),
            "cpu.so: kernel 'fake_nowhere' has no function "
            "'fake_nowhere_dispatch'");
  std::string otherMachine = image;
  test::patchLE(otherMachine, 18, 183 /* EM_AARCH64 */, 2);
  EXPECT_NE(message(otherMachine, {"fake_add"}).find("built for ELF machine"),
            std::string::npos);
  // The record's magic, found in the object's bytes.
  std::string magic(8, '\0');
  test::patchLE(magic, 0, kKernelAbiMagic);
  size_t at = image.find(magic);
  ASSERT_NE(at, std::string::npos);
  std::string badMagic = image;
  badMagic[at] ^= 1;
  // Every kernel in the object, so whichever record comes first is read.
  std::string m = message(badMagic, {"fake_add", "fake_pool_lengths",
                                     "fake_pool_mask", "fake_pool_all",
                                     "fake_clear", "fake_mark", "fake_check"});
  EXPECT_NE(m.find("has a bad magic number"), std::string::npos) << m;
}

// An "LFKABI02" record: the packed flags follow the bytes, one per buffer,
// each 0 or 1; a record short of them, or with another value, is refused.
TEST(KernelObject, PackedFlags) {
  std::string image = readFile(LINFORMER_FAKE_KERNELS_PATH);
  std::vector<KernelAbi> abis;
  FileError err = inspect(image, {"fake_packed", "fake_add"}, abis);
  ASSERT_TRUE(err.ok()) << err.message;
  EXPECT_EQ(abis[0].packedBuffers, (std::vector<bool>{true, false}));
  EXPECT_EQ(abis[0].bufferBytes.size(), 2u);
  EXPECT_TRUE(abis[0].rowsGrid.empty());
  EXPECT_EQ(abis[1].packedBuffers, (std::vector<bool>{false, false, false}));
  err = inspect(image, {"fake_packed_short"}, abis);
  EXPECT_EQ(err.message,
            "cpu.so: 'fake_packed_short_abi' is not a valid kernel record");
  // The first flag of fake_packed's record (1 workgroup; the short one has
  // 2) becomes 2.
  std::string record(8 * 7, '\0');
  const uint64_t words[] = {kKernelAbiMagicPacked, 1, 2, 0, 0, 1, 0};
  size_t at = std::string::npos;
  for (size_t i = 0; i + record.size() <= image.size(); i += 8) {
    uint64_t w[7];
    std::memcpy(w, image.data() + i, sizeof w);
    if (w[0] == words[0] && w[1] == 1 && w[2] == 2 && w[5] == 1 && w[6] == 0) {
      at = i;
      break;
    }
  }
  ASSERT_NE(at, std::string::npos);
  std::string bad = image;
  test::patchLE(bad, at + 8 * 5, 2);
  err = inspect(bad, {"fake_packed"}, abis);
  EXPECT_EQ(err.message,
            "cpu.so: 'fake_packed_abi' is not a valid kernel record");
}

TEST(KernelObject, CorruptObjectsNeverCrashTheInspector) {
  std::string image = readFile(LINFORMER_FAKE_KERNELS_PATH);
  SplitMix64 rng(7);
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string bad = image;
    // The structure the inspector reads lies in the first pages.
    size_t span = std::min<size_t>(bad.size(), 16384);
    switch (rng.next() % 3) {
    case 0:
      bad[rng.next() % span] ^= char(1u << (rng.next() % 8));
      break;
    case 1:
      for (size_t k = rng.next() % span, e = k + 8; k < e && k < bad.size();
           ++k)
        bad[k] = '\xff';
      break;
    case 2:
      bad.resize(rng.next() % bad.size());
      break;
    }
    std::vector<KernelAbi> abis;
    FileError err = inspect(bad, {"fake_add", "fake_pool_all"}, abis);
    if (err)
      ++rejected;
    else
      EXPECT_EQ(abis.size(), 2u);
  }
  EXPECT_GT(rejected, 100);
}

TEST(SizeProducts, NpyShapeWhoseBytesWrap) {
  // (2^31, 2^30) of i8: 2^64 bytes, which wrapped to 0 and was accepted
  // with no data at all.
  std::string header = "{'descr': '<i8', 'fortran_order': False, "
                       "'shape': (2147483648, 1073741824), }";
  while ((10 + header.size() + 1) % 64)
    header.push_back(' ');
  header.push_back('\n');
  std::string image = "\x93NUMPY\x01";
  image.push_back('\0');
  image.push_back(char(header.size() & 0xff));
  image.push_back(char(header.size() >> 8));
  image += header;
  NpyArray a;
  FileError err = parseNpy(image, a);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("is too large"), std::string::npos)
      << err.message;
}

TEST(SizeProducts, SafetensorsTensorWhoseBytesWrap) {
  // I64 [2^61] with offsets [0, 0]: 2^64 bytes wrapped to 0.
  std::string header = R"({"t":{"dtype":"I64","shape":[2305843009213693952],)"
                       R"("data_offsets":[0,0]}})";
  std::string image(8, '\0');
  test::patchLE(image, 0, header.size());
  image += header;
  SafetensorsFile f;
  FileError err = SafetensorsFile::fromBytes(image, f);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("too large"), std::string::npos) << err.message;
}

TEST(Files, WriterReplacesAPlantedSymlinkInsteadOfFollowingIt) {
  test::TempDir dir;
  std::string victim = dir.file("victim"), out = dir.file("out.npy");
  std::ofstream(victim) << "precious";
  ASSERT_EQ(::symlink(victim.c_str(), out.c_str()), 0);
  // The temporary name used to be predictable (out.npy.tmp.<pid>).
  std::string planted = out + ".tmp." + std::to_string(::getpid());
  ASSERT_EQ(::symlink(victim.c_str(), planted.c_str()), 0);
  ASSERT_TRUE(writeWholeFile(out, "new", 3).ok());
  std::string text;
  ASSERT_TRUE(readWholeFile(victim, text).ok());
  EXPECT_EQ(text, "precious");
  struct stat st;
  ASSERT_EQ(::lstat(out.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  ASSERT_TRUE(readWholeFile(out, text).ok());
  EXPECT_EQ(text, "new");
}

TEST(Files, MappingNoticesATruncatedFile) {
  test::TempDir dir;
  std::string path = dir.file("w.bin");
  std::string data(8192, 'w');
  ASSERT_TRUE(writeWholeFile(path, data.data(), data.size()).ok());
  MappedFile f;
  ASSERT_TRUE(MappedFile::open(path, f).ok());
  EXPECT_TRUE(f.checkIntact().ok());
  ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  FileError err = f.checkIntact();
  EXPECT_EQ(err.kind, ErrorKind::IO);
  EXPECT_NE(err.message.find("shrank from 8192 to 100 bytes"),
            std::string::npos)
      << err.message;
}

} // namespace
