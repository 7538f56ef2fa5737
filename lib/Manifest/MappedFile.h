//===- MappedFile.h - Read-only memory-mapped files -------------*- C++ -*-===//
//
// A move-only owner of a read-only mmap of a whole file. The artifact reader
// and the safetensors reader both sit on it: weights are used in place
// (zero-copy) for as long as the runtime holds the mapping, and an artifact's
// sections are sliced out of it without reading the file twice.
//
// POSIX only (the runtime targets Linux). Errors come back as FileError.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_MANIFEST_MAPPEDFILE_H
#define LINFORMER_LIB_MANIFEST_MAPPEDFILE_H

#include "lib/Manifest/Common.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace linformer {

class MappedFile {
public:
  MappedFile() = default;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;
  ~MappedFile();

  /// Maps `path` read-only. An empty file maps to a valid, empty view so
  /// that format readers report "truncated" instead of an mmap error.
  static FileError open(const std::string &path, MappedFile &out);

  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }

  /// Whether the file still holds every mapped byte. Someone truncating a
  /// mapped file turns reads past the new end into SIGBUS; callers that use
  /// a mapping long after opening it (the runtime, once per run) ask this
  /// first. It cannot close the race with a truncation during the use.
  FileError checkIntact() const;

  /// Lets the kernel drop the resident pages wholly inside [p, p + bytes)
  /// (a range of this mapping), and keeps reads beside the range from
  /// mapping them back: read-only and file-backed, they come back from
  /// the file if read again. For data read once (weights packed into
  /// panels when a session starts), so that it stops counting twice.
  void release(const void *p, size_t bytes) const;

private:
  void reset();

  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  void *mapping_ = nullptr;
  int fd_ = -1; ///< kept open (O_CLOEXEC) for checkIntact
  std::string path_;
};

/// Reads a whole file into `out` (for small files and tests).
FileError readWholeFile(const std::string &path, std::string &out);

/// Writes `size` bytes to `path` via a temporary file and rename(), so that
/// a reader never sees a half-written artifact or weights file.
FileError writeWholeFile(const std::string &path, const void *data,
                         size_t size);

} // namespace linformer

#endif // LINFORMER_LIB_MANIFEST_MAPPEDFILE_H
