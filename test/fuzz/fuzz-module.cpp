//===- fuzz-module.cpp - libFuzzer harness: artifact validation -----------===//
//
// A fuzzed manifest around the real fake-kernel object, through everything
// lf_module_load checks before the object reaches the dynamic loader
// (Module::validate): geometry, hash, the object's structure, and the
// kernel records against the manifest. A manifest that parses gets the
// object's true hash, so mutations reach the checks behind the hash.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "lib/Manifest/MappedFile.h"
#include "lib/Support/Sha256.h"

#include <cstdlib>

namespace {
const std::string &kernels() {
  static const std::string so = [] {
    std::string s;
    if (linformer::readWholeFile(FUZZ_FAKE_KERNELS, s))
      std::abort();
    return s;
  }();
  return so;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace linformer;
  std::string text(reinterpret_cast<const char *>(data), size);
  Manifest m;
  if (!parseManifest(text, m)) {
    m.codeSha256 = {{kCpuObjectSection, sha256Hex(kernels())}};
    if (!serializeManifest(m, text).empty())
      std::abort();
  }
  ArtifactWriter w;
  if (!w.addSection(kManifestSection, text).empty() ||
      !w.addSection(kCpuObjectSection, kernels()).empty())
    std::abort();
  Artifact artifact;
  if (Artifact::fromBytes(w.serialize(), artifact))
    std::abort();
  try {
    runtime::Module::validate(artifact, "fuzz.lfa");
  } catch (const runtime::Error &e) {
    if (std::string(e.what()).empty())
      std::abort();
  }
  return 0;
}
