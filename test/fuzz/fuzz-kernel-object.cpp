//===- fuzz-kernel-object.cpp - libFuzzer harness: kernel objects ---------===//
//
// inspectKernelObject on any bytes (seeded with the fake kernels' object):
// an error, or records whose sizes are consistent. The inspector never
// executes the object; this checks that it never reads outside it either.
//
//===----------------------------------------------------------------------===//

#include "lib/Manifest/KernelObject.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace linformer;
  std::string_view image(reinterpret_cast<const char *>(data), size);
  std::vector<KernelAbi> abis;
  if (FileError err = inspectKernelObject(
          image, {"fake_add", "fake_pool_lengths", "fake_clear"}, abis,
          "cpu.so")) {
    if (err.message.empty())
      std::abort();
    return 0;
  }
  if (abis.size() != 3)
    std::abort();
  for (const KernelAbi &k : abis)
    if (k.raw.size() != 8 * (kKernelAbiHeaderWords + k.bufferBytes.size()) ||
        k.workgroups < 1)
      std::abort();
  return 0;
}
