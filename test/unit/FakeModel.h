//===- FakeModel.h - A tiny artifact around the fake kernels ----*- C++ -*-===//
//
// Builds the manifest, artifact, weights and expected outputs of the model
// FakeKernels.c implements, so runtime tests (and the embed example's test)
// exercise real .lfa files without the compiler. The expected values are
// computed here independently of the kernels, in double precision.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_TEST_UNIT_FAKEMODEL_H
#define LINFORMER_TEST_UNIT_FAKEMODEL_H

#include "lib/Manifest/Manifest.h"
#include "lib/Safetensors/Safetensors.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace linformer {
namespace fake {

/// Must match FAKE_BATCH/FAKE_SEQ/FAKE_DIM of the kernels' build.
inline constexpr int64_t kBatch = 2, kSeq = 16, kDim = 8;

/// Which padding input the model takes.
enum class Padding { None, Lengths, Mask };

/// x, [lengths|mask], bias, scale, y, tmp; kernels fake_add then the pool
/// kernel that matches `padding`.
Manifest makeManifest(Padding padding);

/// Wraps `manifest` and the fake kernels' shared object (`soPath`) into an
/// artifact at `path`, recording the object's SHA-256 in the manifest unless
/// `hashCode` is false (then the manifest's own codeSha256 is kept). Returns
/// "" or an error.
std::string writeArtifact(const std::string &path, Manifest manifest,
                          const std::string &soPath, bool hashCode = true);

/// The weights "bias" [kDim] and "scale" [1], seeded.
std::map<std::string, SafetensorsEntry> makeWeights(uint64_t seed);

/// Expected y [kBatch, L, kDim] for x [kBatch, L, kDim]; `real[b*L + t]`
/// says whether token t of sequence b is real.
std::vector<float> expectedOutput(const std::vector<float> &x, int64_t L,
                                  const std::vector<uint8_t> &real,
                                  const std::vector<float> &bias, float scale);

/// Reads a float tensor's values out of a safetensors entry.
std::vector<float> floats(const SafetensorsEntry &entry);

} // namespace fake
} // namespace linformer

#endif // LINFORMER_TEST_UNIT_FAKEMODEL_H
