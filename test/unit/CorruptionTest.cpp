//===- CorruptionTest.cpp - Corrupt files never crash the readers ---------===//
//
// Every reader in lib/ takes untrusted files. These tests flip, truncate and
// overwrite bytes of valid artifacts, manifests, safetensors and npy images
// (deterministically, from a seed) and require a clean result or an error
// message every time; a crash or sanitizer report fails the run. The bytes
// chosen concentrate on headers, where the structure lives.
//
//===----------------------------------------------------------------------===//

#include "lib/Manifest/Artifact.h"
#include "lib/Manifest/Manifest.h"
#include "lib/Npy/Npy.h"
#include "lib/Safetensors/Safetensors.h"
#include "lib/Support/Random.h"

#include <gtest/gtest.h>

#include <functional>

using namespace linformer;

namespace {

/// Applies `count` random corruptions to copies of `image`, each within
/// the first `span` bytes (or truncating), and runs `parse` on each.
/// `parse` returns true when it accepted the image.
void corrupt(const std::string &image, size_t span, int count, uint64_t seed,
             const std::function<bool(const std::string &)> &parse) {
  SplitMix64 rng(seed);
  int rejected = 0;
  for (int i = 0; i < count; ++i) {
    std::string bad = image;
    switch (rng.next() % 4) {
    case 0: // flip a bit
      bad[rng.next() % std::min(span, bad.size())] ^=
          char(1u << (rng.next() % 8));
      break;
    case 1: // random byte
      bad[rng.next() % std::min(span, bad.size())] = char(rng.next());
      break;
    case 2: // truncate
      bad.resize(rng.next() % bad.size());
      break;
    case 3: // 0xff run (huge lengths and offsets)
      for (size_t k = rng.next() % std::min(span, bad.size()), e = k + 8;
           k < e && k < bad.size(); ++k)
        bad[k] = '\xff';
      break;
    }
    if (!parse(bad))
      ++rejected;
  }
  // Most corruptions must be caught; this also proves the loop did work.
  EXPECT_GT(rejected, count / 4);
}

TEST(Corruption, Artifact) {
  ArtifactWriter w;
  ASSERT_EQ(w.addSection("manifest", "{}"), "");
  ASSERT_EQ(w.addSection("cpu.so", std::string(300, 'x')), "");
  std::string image = w.serialize();
  corrupt(image, 16 + 2 * 48, 2000, 1, [](const std::string &b) {
    Artifact a;
    FileError err = Artifact::fromBytes(b, a);
    EXPECT_TRUE(err.ok() || !err.message.empty());
    return err.ok();
  });
}

TEST(Corruption, Manifest) {
  Manifest m;
  m.compilerVersion = "x";
  m.entry = "e";
  ManifestBuffer in;
  in.name = "x";
  in.shape = {1, 4, 2};
  ManifestBuffer out = in;
  out.name = "y";
  out.kind = BufferKind::Output;
  m.buffers = {in, out};
  m.kernels.push_back({"k", 4, {0, 1}, "{\"a\": [1, 2]}"});
  m.codeSha256 = {{"cpu.so", std::string(64, 'e')}};
  std::string text;
  ASSERT_EQ(serializeManifest(m, text), "");
  corrupt(text, text.size(), 2000, 2, [](const std::string &b) {
    Manifest parsed;
    FileError err = parseManifest(b, parsed);
    EXPECT_TRUE(err.ok() || err.message.rfind("manifest: ", 0) == 0)
        << err.message;
    return err.ok();
  });
}

TEST(Corruption, Safetensors) {
  std::map<std::string, SafetensorsEntry> t;
  t["a"] = {DType::F32, {2, 3}, std::string(24, 'a')};
  t["b"] = {DType::U8, {5}, "bbbbb"};
  std::string image;
  ASSERT_EQ(serializeSafetensors(t, image), "");
  corrupt(image, image.size() - 29, 2000, 3, [](const std::string &b) {
    SafetensorsFile f;
    FileError err = SafetensorsFile::fromBytes(b, f);
    EXPECT_TRUE(err.ok() || !err.message.empty());
    // Whatever is accepted must lie inside the image.
    for (const SafetensorsTensor &x : f.tensors()) {
      EXPECT_GE(x.data, reinterpret_cast<const uint8_t *>(b.data()));
      EXPECT_LE(x.data + x.size,
                reinterpret_cast<const uint8_t *>(b.data()) + b.size());
    }
    return err.ok();
  });
}

TEST(Corruption, Npy) {
  NpyArray a;
  a.shape = {3, 4};
  a.bytes.assign(48, 'z');
  std::string image;
  ASSERT_EQ(serializeNpy(a, image), "");
  corrupt(image, 64, 2000, 4, [](const std::string &b) {
    NpyArray parsed;
    FileError err = parseNpy(b, parsed);
    EXPECT_TRUE(err.ok() || !err.message.empty());
    if (err.ok()) {
      EXPECT_EQ(int64_t(parsed.bytes.size()),
                shapeByteSize(parsed.shape, parsed.dtype));
    }
    return err.ok();
  });
}

} // namespace
