//===- Safetensors.h - Read and write safetensors files ---------*- C++ -*-===//
//
// Weights live in safetensors files
// (https://github.com/huggingface/safetensors):
//
//   u64 (little-endian) N | N bytes of JSON header | data
//   header: {"name": {"dtype": "F32", "shape": [512, 512],
//                     "data_offsets": [begin, end]}, ...,
//            "__metadata__": {"key": "value", ...}}
//
// with offsets relative to the start of the data. The reader maps the file and
// hands out pointers into the mapping (zero-copy: the runtime binds weights in
// place). It accepts the dtypes a Linformer artifact can name (F32, F16, BF16,
// I32, I64, U8) and validates every entry: known dtype, non-negative shape,
// data size = elements x element size, range inside the data, no two tensors
// overlapping. Errors name the tensor.
//
// The writer (used by `--random-weights` and tests) lays tensors out by
// descending element size then name, with the header padded with spaces to a
// multiple of 64 bytes, so every tensor is naturally aligned in a mapping and
// the data has no holes (as the format requires).
//
// No exceptions cross this interface.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_SAFETENSORS_SAFETENSORS_H
#define LINFORMER_LIB_SAFETENSORS_SAFETENSORS_H

#include "lib/Manifest/Common.h"
#include "lib/Manifest/MappedFile.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace linformer {

/// "F32", "F16", "BF16", "I32", "I64", "U8".
const char *safetensorsDTypeName(DType t);

struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const uint8_t *data = nullptr; ///< into the file mapping
  uint64_t size = 0;             ///< bytes
};

/// A validated, mapped safetensors file. Tensor data stays valid for the
/// object's lifetime (moving it keeps pointers valid).
class SafetensorsFile {
public:
  static FileError open(const std::string &path, SafetensorsFile &out);
  /// Validates an in-memory image; `bytes` must outlive the object.
  static FileError fromBytes(std::string_view bytes, SafetensorsFile &out,
                             const std::string &what = "safetensors");

  /// Tensors in file order of their data offsets.
  const std::vector<SafetensorsTensor> &tensors() const { return tensors_; }
  /// Null when absent.
  const SafetensorsTensor *find(std::string_view name) const;
  /// For files opened with open(): whether the file still holds every mapped
  /// byte (see MappedFile::checkIntact).
  FileError checkIntact() const { return file_.checkIntact(); }
  /// Lets resident pages of tensor data at [p, p + bytes) go (see
  /// MappedFile::release); nothing for data not in the mapping.
  void release(const void *p, size_t bytes) const { file_.release(p, bytes); }
  const std::map<std::string, std::string> &metadata() const {
    return metadata_;
  }

private:
  FileError parse(const uint8_t *data, size_t size, const std::string &what);

  MappedFile file_;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

/// A tensor to write: the bytes are copied into the file as they are
/// (little-endian, row-major).
struct SafetensorsEntry {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string bytes;
};

/// Serializes `tensors` (and optional string metadata) into a file image.
/// Returns "" or why (a size that does not match the shape, names it).
std::string
serializeSafetensors(const std::map<std::string, SafetensorsEntry> &tensors,
                     std::string &out,
                     const std::map<std::string, std::string> &metadata = {});

/// serializeSafetensors + an atomic write to `path`.
std::string
writeSafetensors(const std::string &path,
                 const std::map<std::string, SafetensorsEntry> &tensors,
                 const std::map<std::string, std::string> &metadata = {});

} // namespace linformer

#endif // LINFORMER_LIB_SAFETENSORS_SAFETENSORS_H
