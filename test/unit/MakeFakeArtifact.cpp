//===- MakeFakeArtifact.cpp - Test data for the embed example -------------===//
//
// Writes the fake model (FakeModel.h) as files, for tests that drive the
// runtime from outside the test binary (the installed-runtime example):
//
//   linformer-make-fake-artifact <dir> <kernels.so>
//       -> dir/fake.lfa, dir/fake.safetensors, dir/x.npy ([2, 10, 8], so the
//          runtime must pad), dir/expected.npy
//   linformer-make-fake-artifact --compare got.npy want.npy
//       -> exit 0 iff same shape and values within 1e-4 (relative)
//
//===----------------------------------------------------------------------===//

#include "FakeModel.h"

#include "lib/Npy/Npy.h"
#include "lib/Support/Random.h"

#include <cmath>
#include <cstring>
#include <iostream>

using namespace linformer;
using namespace linformer::fake;

static int compare(const std::string &gotPath, const std::string &wantPath) {
  NpyArray got, want;
  for (auto [path, a] : {std::pair{&gotPath, &got}, {&wantPath, &want}})
    if (FileError err = readNpy(*path, *a)) {
      std::cerr << err.message << "\n";
      return 1;
    }
  if (got.shape != want.shape || got.dtype != DType::F32 ||
      want.dtype != DType::F32) {
    std::cerr << "shape/dtype differ: " << shapeString(got.shape) << " vs "
              << shapeString(want.shape) << "\n";
    return 1;
  }
  for (int64_t i = 0; i < got.numElements(); ++i) {
    float g = got.as<float>()[i], w = want.as<float>()[i];
    if (!(std::fabs(g - w) <= 1e-4f * (1 + std::fabs(w)))) {
      std::cerr << "element " << i << ": got " << g << ", want " << w << "\n";
      return 1;
    }
  }
  std::cout << "outputs match (" << got.numElements() << " values)\n";
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && std::strcmp(argv[1], "--compare") == 0)
    return compare(argv[2], argv[3]);
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " <dir> <kernels.so>\n"
              << "       " << argv[0] << " --compare got.npy want.npy\n";
    return 2;
  }
  std::string dir = argv[1];
  if (std::string why = writeArtifact(dir + "/fake.lfa",
                                      makeManifest(Padding::Lengths), argv[2]);
      !why.empty()) {
    std::cerr << why << "\n";
    return 1;
  }
  auto weights = makeWeights(3);
  if (std::string why = writeSafetensors(dir + "/fake.safetensors", weights);
      !why.empty()) {
    std::cerr << why << "\n";
    return 1;
  }
  const int64_t L = 10;
  SplitMix64 rng(5);
  NpyArray x;
  x.shape = {kBatch, L, kDim};
  std::vector<float> xs(size_t(kBatch * L * kDim));
  for (float &v : xs)
    v = float(int64_t(rng.next() % 1000) - 500) / 100.0f;
  x.bytes.assign(reinterpret_cast<const char *>(xs.data()),
                 xs.size() * sizeof(float));
  std::vector<uint8_t> real(size_t(kBatch * L), 1);
  std::vector<float> ys = expectedOutput(xs, L, real, floats(weights["bias"]),
                                         floats(weights["scale"])[0]);
  NpyArray y;
  y.shape = x.shape;
  y.bytes.assign(reinterpret_cast<const char *>(ys.data()),
                 ys.size() * sizeof(float));
  for (auto [name, a] : {std::pair{"/x.npy", &x}, {"/expected.npy", &y}})
    if (std::string why = writeNpy(dir + name, *a); !why.empty()) {
      std::cerr << why << "\n";
      return 1;
    }
  return 0;
}
