//===- TestUtil.h - Helpers shared by the unit tests ------------*- C++ -*-===//
//
// A self-deleting temporary directory and byte-patching helpers, so tests
// that corrupt files say which bytes they corrupt without repeating the
// boilerplate.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_TEST_UNIT_TESTUTIL_H
#define LINFORMER_TEST_UNIT_TESTUTIL_H

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace linformer {
namespace test {

/// mkdtemp under $TMPDIR (or /tmp), removed with its contents on scope exit.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(base && *base ? base : "/tmp") + "/linformer-test-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()))
      path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

/// Overwrites bytes [offset, offset + 8) with little-endian `value` (for
/// u32 fields pass size 4).
inline void patchLE(std::string &bytes, size_t offset, uint64_t value,
                    size_t size = 8) {
  for (size_t i = 0; i < size; ++i)
    bytes[offset + i] = char((value >> (8 * i)) & 0xff);
}

} // namespace test
} // namespace linformer

#endif // LINFORMER_TEST_UNIT_TESTUTIL_H
