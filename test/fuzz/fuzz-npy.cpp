//===- fuzz-npy.cpp - libFuzzer harness: .npy files -----------------------===//
//
// parseNpy on any bytes: an error, or an array whose bytes match its dtype
// and shape exactly.
//
//===----------------------------------------------------------------------===//

#include "lib/Npy/Npy.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace linformer;
  NpyArray a;
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  if (FileError err = parseNpy(bytes, a)) {
    if (err.message.empty())
      std::abort();
    return 0;
  }
  if (int64_t(a.bytes.size()) != shapeByteSize(a.shape, a.dtype))
    std::abort();
  std::string again;
  if (!serializeNpy(a, again).empty())
    std::abort();
  return 0;
}
