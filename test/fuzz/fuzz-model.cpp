//===- fuzz-model.cpp - libFuzzer harness: model.json ---------------------===//
//
// parseModelConfig on any text: a "model.json: " error, or a configuration
// within the documented bounds whose weight list can be computed and which
// round-trips through modelConfigJson.
//
//===----------------------------------------------------------------------===//

#include "lib/Model/ModelConfig.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace linformer;
  std::string text(reinterpret_cast<const char *>(data), size);
  ModelConfig c;
  std::string err = parseModelConfig(text, c);
  if (!err.empty()) {
    if (err.rfind("model.json: ", 0) != 0)
      std::abort();
    return 0;
  }
  if (modelWeightBytes(c) > kMaxModelBytes)
    std::abort();
  ModelConfig again;
  if (!parseModelConfig(modelConfigJson(c), again).empty())
    std::abort();
  return 0;
}
