//===- Sha256.h - SHA-256 digests (FIPS 180-4) ------------------*- C++ -*-===//
//
// The content hash an artifact's manifest records for each code section and
// that the runtime checks before it hands the code to the dynamic loader.
// A self-contained implementation: the runtime links no crypto library, and
// this is a checksum against corruption and mix-ups, not a signature (an
// artifact is code and must come from a trusted source; docs/Runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_SUPPORT_SHA256_H
#define LINFORMER_LIB_SUPPORT_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace linformer {

class Sha256 {
public:
  Sha256();
  void update(const void *data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// The 32-byte digest; the object must not be updated afterwards.
  std::array<uint8_t, 32> finish();

private:
  void block(const uint8_t *p);

  uint32_t h_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t length_ = 0; ///< bytes hashed so far
};

/// Lower-case hex SHA-256 of `data` (64 characters).
std::string sha256Hex(std::string_view data);

/// Whether `s` is 64 lower-case hex digits.
bool isSha256Hex(std::string_view s);

} // namespace linformer

#endif // LINFORMER_LIB_SUPPORT_SHA256_H
