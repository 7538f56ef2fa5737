//===- fuzz-safetensors.cpp - libFuzzer harness: safetensors --------------===//
//
// SafetensorsFile::fromBytes on any bytes: an error, or tensors whose data
// lies inside the input and matches dtype x shape (first and last byte of
// each are read).
//
//===----------------------------------------------------------------------===//

#include "lib/Safetensors/Safetensors.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace linformer;
  SafetensorsFile f;
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  if (FileError err = SafetensorsFile::fromBytes(bytes, f)) {
    if (err.message.empty())
      std::abort();
    return 0;
  }
  unsigned sum = 0;
  for (const SafetensorsTensor &t : f.tensors()) {
    if (int64_t(t.size) != shapeByteSize(t.shape, t.dtype))
      std::abort();
    if (t.size)
      sum += t.data[0] + t.data[t.size - 1];
  }
  volatile unsigned sink = sum;
  (void)sink;
  return 0;
}
