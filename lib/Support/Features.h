//===- Features.h - reading an LLVM feature string --------------*- C++ -*-===//
//
// One reading of an LLVM target feature string ("+avx2,+fma,-avx512f"),
// for the compiler's target description and the runtime's loader alike.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_SUPPORT_FEATURES_H
#define LINFORMER_LIB_SUPPORT_FEATURES_H

#include <string_view>

namespace linformer {

/// Whether `features` turns `feature` on: its last mention decides, as LLVM
/// reads the string ("+avx512f,...,-avx512f" is off; never mentioned: off).
inline bool featureOn(std::string_view features, std::string_view feature) {
  bool on = false;
  while (!features.empty()) {
    size_t comma = features.find(',');
    std::string_view item = features.substr(0, comma);
    if (item.size() >= 2 && (item[0] == '+' || item[0] == '-') &&
        item.substr(1) == feature)
      on = item[0] == '+';
    if (comma == std::string_view::npos)
      break;
    features.remove_prefix(comma + 1);
  }
  return on;
}

} // namespace linformer

#endif // LINFORMER_LIB_SUPPORT_FEATURES_H
