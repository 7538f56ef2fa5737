//===- MappedFile.cpp - Read-only memory-mapped files ---------------------===//
//
// mmap/munmap plumbing behind MappedFile, and whole-file read/write helpers
// with errno-based messages that name the path.
//
//===----------------------------------------------------------------------===//

#include "lib/Manifest/MappedFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

namespace linformer {

static std::string errnoMessage(const std::string &what,
                                const std::string &path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

MappedFile::MappedFile(MappedFile &&other) noexcept {
  *this = std::move(other);
}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    size_ = other.size_;
    mapping_ = other.mapping_;
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.data_ = nullptr;
    other.size_ = 0;
    other.mapping_ = nullptr;
    other.fd_ = -1;
  }
  return *this;
}

MappedFile::~MappedFile() { reset(); }

void MappedFile::reset() {
  if (mapping_)
    ::munmap(mapping_, size_);
  if (fd_ >= 0)
    ::close(fd_);
  data_ = nullptr;
  size_ = 0;
  mapping_ = nullptr;
  fd_ = -1;
}

FileError MappedFile::checkIntact() const {
  if (fd_ < 0)
    return {};
  struct stat st;
  if (::fstat(fd_, &st) != 0)
    return FileError::io(errnoMessage("cannot stat", path_));
  if (st.st_size < 0 || uint64_t(st.st_size) < size_)
    return FileError::io("'" + path_ + "' shrank from " +
                         std::to_string(size_) + " to " +
                         std::to_string(st.st_size) +
                         " bytes after it was loaded (truncated while in "
                         "use?); load it again");
  return {};
}

void MappedFile::release(const void *p, size_t bytes) const {
  auto begin = reinterpret_cast<uintptr_t>(p);
  auto base = reinterpret_cast<uintptr_t>(data_);
  if (!mapping_ || begin < base || begin + bytes > base + size_)
    return;
  uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  uintptr_t first = (begin + page - 1) / page * page;
  uintptr_t last = (begin + bytes) / page * page;
  if (first >= last)
    return;
  // The range becomes a mapping (VMA) of its own first (any flag does
  // it; "random" also says what is true: not read in order again). A
  // fault maps the file's pages around it, a whole large folio of the
  // page cache where it can, but never past its mapping: reads of the
  // data beside the range (the biases that runs read lie between the
  // packed weights) would otherwise map its pages back.
  ::madvise(reinterpret_cast<void *>(first), last - first, MADV_RANDOM);
  ::madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
}

FileError MappedFile::open(const std::string &path, MappedFile &out) {
  out.reset();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return FileError::io(errnoMessage("cannot open", path));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    FileError err = FileError::io(errnoMessage("cannot stat", path));
    ::close(fd);
    return err;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return FileError::io("cannot map '" + path + "': not a regular file");
  }
  out.path_ = path;
  if (st.st_size == 0) {
    ::close(fd);
    static const uint8_t empty = 0;
    out.data_ = &empty;
    return {};
  }
  void *p = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    FileError err = FileError::io(errnoMessage("cannot mmap", path));
    ::close(fd);
    return err;
  }
  out.fd_ = fd;
  out.mapping_ = p;
  out.data_ = static_cast<const uint8_t *>(p);
  out.size_ = size_t(st.st_size);
  return {};
}

FileError readWholeFile(const std::string &path, std::string &out) {
  MappedFile file;
  if (FileError err = MappedFile::open(path, file))
    return err;
  out.assign(reinterpret_cast<const char *>(file.data()), file.size());
  return {};
}

/// Writes `size` bytes to the open `fd`; false when a write fails.
static bool writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  size_t left = size;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    left -= size_t(n);
  }
  return true;
}

/// Whether `path` is written through rather than replaced: a device, a
/// pipe or a socket (-o /dev/null), or a link into /proc (-o /dev/stdout,
/// a link to /proc/self/fd/1): an open file of this process, wherever it
/// points. Renaming a file over either would replace the device node or
/// the link.
static bool writesThrough(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return false;
  if (!S_ISREG(st.st_mode))
    return true;
  char target[8];
  ssize_t n = ::readlink(path.c_str(), target, sizeof(target));
  return n >= 6 && std::memcmp(target, "/proc/", 6) == 0;
}

FileError writeWholeFile(const std::string &path, const void *data,
                         size_t size) {
  if (writesThrough(path)) {
    int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
      return FileError::io(errnoMessage("cannot open", path));
    bool ok = writeAll(fd, data, size);
    if (::close(fd) != 0 || !ok)
      return FileError::io(errnoMessage("cannot write", path));
    return {};
  }
  // A fresh temporary beside the target (so that rename is atomic), created
  // exclusively by mkostemp (O_CREAT|O_EXCL: a planted file or symlink of
  // the same name makes it pick another name, never write through it), then
  // renamed over the target, which replaces a symlink rather than following
  // it.
  std::vector<char> name(path.begin(), path.end());
  static const char suffix[] = ".tmp.XXXXXX";
  name.insert(name.end(), suffix, suffix + sizeof(suffix));
  int fd = ::mkostemp(name.data(), O_CLOEXEC);
  std::string tmp(name.data());
  if (fd < 0)
    return FileError::io(errnoMessage("cannot create", tmp));
  // mkostemp creates 0600; outputs are ordinary files.
  (void)::fchmod(fd, 0644);
  if (!writeAll(fd, data, size)) {
    FileError err = FileError::io(errnoMessage("cannot write", tmp));
    ::close(fd);
    ::unlink(tmp.c_str());
    return err;
  }
  if (::close(fd) != 0) {
    FileError err = FileError::io(errnoMessage("cannot write", tmp));
    ::unlink(tmp.c_str());
    return err;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    FileError err = FileError::io(errnoMessage("cannot rename to", path));
    ::unlink(tmp.c_str());
    return err;
  }
  return {};
}

} // namespace linformer
