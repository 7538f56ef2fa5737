//===- fuzz-artifact.cpp - libFuzzer harness: the .lfa container ----------===//
//
// Any byte string through Artifact::fromBytes: either an error, or sections
// that lie inside the input (every byte of each is read, so ASan sees an
// out-of-bounds view).
//
//===----------------------------------------------------------------------===//

#include "lib/Manifest/Artifact.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace linformer;
  Artifact a;
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  if (FileError err = Artifact::fromBytes(bytes, a)) {
    if (err.message.empty())
      std::abort();
    return 0;
  }
  unsigned sum = 0;
  for (const ArtifactSection &s : a.sections())
    for (char c : a.section(s.name))
      sum += static_cast<unsigned char>(c);
  volatile unsigned sink = sum;
  (void)sink;
  return 0;
}
