//===- fuzz-manifest.cpp - libFuzzer harness: manifest JSON ---------------===//
//
// parseManifest on any text: an error with a "manifest: " message, or a
// manifest that serializes and parses back to the same text.
//
//===----------------------------------------------------------------------===//

#include "lib/Manifest/Manifest.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace linformer;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Manifest m;
  if (FileError err = parseManifest(text, m)) {
    if (err.message.rfind("manifest: ", 0) != 0)
      std::abort();
    return 0;
  }
  for (const ManifestBuffer &b : m.buffers)
    (void)b.byteSize();
  std::string once, twice;
  if (!serializeManifest(m, once).empty())
    std::abort(); // parse accepted what validation refuses
  Manifest again;
  if (parseManifest(once, again) || !serializeManifest(again, twice).empty() ||
      once != twice)
    std::abort();
  return 0;
}
