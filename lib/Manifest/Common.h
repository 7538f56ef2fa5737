//===- Common.h - Element types and file errors shared by lib/ --*- C++ -*-===//
//
// The vocabulary the artifact, manifest, safetensors and npy readers share:
// the element types a Linformer artifact can name (DType) and the error value
// every loader returns (FileError). It lives beside the manifest because the
// manifest is the format that defines the dtype spellings; the safetensors and
// npy readers map their own spellings onto the same enum so that the runtime
// compares a weight's dtype against the manifest's without translation tables.
//
// Header-only, standard library only, no exceptions in the interface: the
// compiler includes it from code built with -fno-exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_MANIFEST_COMMON_H
#define LINFORMER_LIB_MANIFEST_COMMON_H

#include "lib/Support/EnumNames.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace linformer {

/// Element types of buffers, weights and tensor files. The order is part of
/// the runtime's C ABI (lf_dtype mirrors it), so only append.
enum class DType { F32 = 0, F16 = 1, BF16 = 2, I32 = 3, I64 = 4, U8 = 5 };

/// One element type as every format spells it: the manifest (and the
/// runtime's messages), its bytes, safetensors' dtype, and numpy's type
/// code after the byte-order character (null: numpy has no bf16; a bool
/// array reads as u8, lib/Npy). One row a type, read in both directions by
/// the manifest, lib/Safetensors and lib/Npy.
struct DTypeSpelling {
  DType dtype;
  const char *manifest;
  size_t bytes;
  const char *safetensors;
  const char *npy;
};
inline constexpr DTypeSpelling kDTypes[] = {
    {DType::F32, "f32", 4, "F32", "f4"}, {DType::F16, "f16", 2, "F16", "f2"},
    {DType::BF16, "bf16", 2, "BF16", nullptr},
    {DType::I32, "i32", 4, "I32", "i4"}, {DType::I64, "i64", 8, "I64", "i8"},
    {DType::U8, "u8", 1, "U8", "u1"}};

/// `t`'s row of kDTypes (the first row for a value outside the enum).
inline const DTypeSpelling &dtypeSpelling(DType t) {
  for (const DTypeSpelling &s : kDTypes)
    if (s.dtype == t)
      return s;
  return kDTypes[0];
}

/// The manifest spelling: "f32", "f16", "bf16", "i32", "i64", "u8".
inline const char *dtypeName(DType t) {
  for (const DTypeSpelling &s : kDTypes)
    if (s.dtype == t)
      return s.manifest;
  return "?";
}

/// Bytes per element (0 for a value outside the enum).
inline size_t dtypeSize(DType t) {
  for (const DTypeSpelling &s : kDTypes)
    if (s.dtype == t)
      return s.bytes;
  return 0;
}

/// Parses the manifest spelling; false for anything else.
inline bool parseDType(std::string_view s, DType &out) {
  for (const DTypeSpelling &d : kDTypes)
    if (s == d.manifest) {
      out = d.dtype;
      return true;
    }
  return false;
}

/// "[1, 4096, 512]": shapes appear in almost every error message.
inline std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

/// Number of elements, or -1 when a dimension is negative or the product
/// overflows 2^62: callers treat -1 as "this shape is invalid" rather than
/// silently allocating a wrapped-around size.
inline int64_t shapeNumElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return -1;
    if (d != 0 && n > (int64_t(1) << 62) / d)
      return -1;
    n *= d;
  }
  return n;
}

/// The largest tensor or buffer any file or manifest may describe: 2^62
/// bytes. Far above real memory, and low enough that sums of a few such
/// sizes and 64-byte roundings cannot wrap a uint64_t.
inline constexpr int64_t kMaxTensorBytes = int64_t(1) << 62;

/// Bytes of a tensor of `shape` and `dtype`, or -1 when a dimension is
/// negative or the size exceeds kMaxTensorBytes. Every loader computes sizes
/// through this, never as numel * dtypeSize (which wraps for huge shapes).
inline int64_t shapeByteSize(const std::vector<int64_t> &shape, DType dtype) {
  int64_t n = shapeNumElements(shape);
  int64_t elem = int64_t(dtypeSize(dtype));
  if (n < 0 || elem == 0 || n > kMaxTensorBytes / elem)
    return -1;
  return n * elem;
}

/// Why a load failed. The runtime maps the kinds onto its status codes
/// (IO -> LF_IO_ERROR, Format -> LF_FORMAT_ERROR, Version ->
/// LF_VERSION_MISMATCH), so loaders must pick the kind carefully: Version
/// only when the file is well formed but written for another format version.
enum class ErrorKind { None, IO, Format, Version };

/// The result of every loader and writer in lib/: empty on success, else a
/// kind and a message that names the file part at fault. A value type rather
/// than an exception because the compiler is built without exceptions.
struct FileError {
  ErrorKind kind = ErrorKind::None;
  std::string message;

  FileError() = default;
  FileError(ErrorKind kind, std::string message)
      : kind(kind), message(std::move(message)) {}
  static FileError io(std::string m) { return {ErrorKind::IO, std::move(m)}; }
  static FileError format(std::string m) {
    return {ErrorKind::Format, std::move(m)};
  }
  static FileError version(std::string m) {
    return {ErrorKind::Version, std::move(m)};
  }

  bool ok() const { return kind == ErrorKind::None; }
  explicit operator bool() const { return !ok(); }
};

} // namespace linformer

#endif // LINFORMER_LIB_MANIFEST_COMMON_H
