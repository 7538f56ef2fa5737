//===- FakeModel.cpp - A tiny artifact around the fake kernels ------------===//
//
// See FakeModel.h.
//
//===----------------------------------------------------------------------===//

#include "FakeModel.h"

#include "lib/Manifest/Artifact.h"
#include "lib/Manifest/MappedFile.h"
#include "lib/Support/Random.h"
#include "lib/Support/Sha256.h"

#include <cstring>

namespace linformer {
namespace fake {

Manifest makeManifest(Padding padding) {
  Manifest m;
  m.compilerVersion = "test";
  m.target = {"cpu", "generic", ""};
  m.entry = "fake";
  auto buf = [](std::string name, BufferKind kind, DType dtype,
                std::vector<int64_t> shape,
                BufferRole role = BufferRole::None) {
    ManifestBuffer b;
    b.name = std::move(name);
    b.kind = kind;
    b.dtype = dtype;
    b.shape = std::move(shape);
    b.role = role;
    return b;
  };
  m.buffers.push_back(
      buf("x", BufferKind::Input, DType::F32, {kBatch, kSeq, kDim})); // 0
  m.buffers.push_back(buf("bias", BufferKind::Weight, DType::F32, {kDim}));
  m.buffers.push_back(buf("scale", BufferKind::Weight, DType::F32, {1}));
  m.buffers.push_back(
      buf("y", BufferKind::Output, DType::F32, {kBatch, kSeq, kDim})); // 3
  ManifestBuffer tmp;
  tmp.name = "tmp";
  tmp.kind = BufferKind::Intermediate;
  tmp.bytes = uint64_t(kBatch * kSeq * kDim * 4);
  m.buffers.push_back(tmp); // 4
  ManifestKernel add{"fake_add", kBatch * kSeq, {0, 1, 4},
                     "{\"key\": \"other/ppp/fake\", \"flops\": 128}"};
  m.kernels.push_back(add);
  switch (padding) {
  case Padding::None:
    m.kernels.push_back({"fake_pool_all", kBatch * kSeq, {4, 2, 3}, "{}"});
    break;
  case Padding::Lengths:
    m.buffers.push_back(buf("lengths", BufferKind::Input, DType::I32, {kBatch},
                            BufferRole::Lengths)); // 5
    m.kernels.push_back(
        {"fake_pool_lengths", kBatch * kSeq, {4, 2, 5, 3}, "{}"});
    break;
  case Padding::Mask:
    m.buffers.push_back(buf("mask", BufferKind::Input, DType::U8,
                            {kBatch, kSeq}, BufferRole::Mask)); // 5
    m.kernels.push_back({"fake_pool_mask", kBatch * kSeq, {4, 2, 5, 3}, "{}"});
    break;
  }
  m.modelJson = "{\"kind\": \"fake\"}";
  // A placeholder; writeArtifact records the real hash of the object.
  m.codeSha256 = {{kCpuObjectSection, std::string(64, '0')}};
  return m;
}

std::string writeArtifact(const std::string &path, Manifest manifest,
                          const std::string &soPath, bool hashCode) {
  std::string so;
  if (FileError err = readWholeFile(soPath, so))
    return err.message;
  if (hashCode)
    manifest.codeSha256 = {{kCpuObjectSection, sha256Hex(so)}};
  std::string json;
  if (std::string why = serializeManifest(manifest, json); !why.empty())
    return why;
  ArtifactWriter writer;
  if (std::string why = writer.addSection(kManifestSection, json); !why.empty())
    return why;
  if (std::string why = writer.addSection(kCpuObjectSection, so); !why.empty())
    return why;
  return writer.write(path);
}

static std::string floatBytes(const std::vector<float> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()),
                     v.size() * sizeof(float));
}

std::vector<float> floats(const SafetensorsEntry &entry) {
  std::vector<float> v(entry.bytes.size() / sizeof(float));
  std::memcpy(v.data(), entry.bytes.data(), entry.bytes.size());
  return v;
}

std::map<std::string, SafetensorsEntry> makeWeights(uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<float> bias(kDim);
  for (float &b : bias)
    b = float(int64_t(rng.next() % 200) - 100) / 50.0f;
  std::map<std::string, SafetensorsEntry> w;
  w["bias"] = {DType::F32, {kDim}, floatBytes(bias)};
  w["scale"] = {DType::F32, {1}, floatBytes({1.5f})};
  return w;
}

std::vector<float> expectedOutput(const std::vector<float> &x, int64_t L,
                                  const std::vector<uint8_t> &real,
                                  const std::vector<float> &bias, float scale) {
  std::vector<float> y(size_t(kBatch * L * kDim), 0.0f);
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t c = 0; c < kDim; ++c) {
      double sum = 0;
      int count = 0;
      for (int64_t s = 0; s < L; ++s)
        if (real[size_t(b * L + s)]) {
          sum += double(x[size_t((b * L + s) * kDim + c)]) + bias[size_t(c)];
          ++count;
        }
      for (int64_t t = 0; t < L; ++t)
        if (real[size_t(b * L + t)])
          y[size_t((b * L + t) * kDim + c)] =
              float(scale * (double(x[size_t((b * L + t) * kDim + c)]) +
                             bias[size_t(c)] + sum / count));
    }
  return y;
}

} // namespace fake
} // namespace linformer
