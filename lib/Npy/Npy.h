//===- Npy.h - Read and write NumPy .npy files ------------------*- C++ -*-===//
//
// Inputs and outputs of `linformer-run` and the examples travel as .npy
// files, the format numpy.save writes:
//
//   "\x93NUMPY" | u8 major | u8 minor | header length (u16 for 1.0, u32 for
//   2.0/3.0) | header: a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
//   spaces and a newline | row-major data
//
// Supported: little-endian '<f4', '<f2', '<i4', '<i8', '|u1' and '|b1' (read
// as u8 with isBool set), C order only. Anything else (big-endian, Fortran
// order, object arrays, structured dtypes) is rejected with a message that
// says what was found. The writer emits version 1.0 (2.0 when the header does
// not fit in 64 KiB) with the header padded to a multiple of 64 bytes.
//
// No exceptions cross this interface.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_NPY_NPY_H
#define LINFORMER_LIB_NPY_NPY_H

#include "lib/Manifest/Common.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace linformer {

struct NpyArray {
  DType dtype = DType::F32;
  /// '|b1' arrays read as U8 with this set; writing with it set emits '|b1'.
  bool isBool = false;
  std::vector<int64_t> shape;
  std::string bytes; ///< row-major, little-endian

  int64_t numElements() const { return shapeNumElements(shape); }
  template <typename T> const T *as() const {
    return reinterpret_cast<const T *>(bytes.data());
  }
  template <typename T> T *as() { return reinterpret_cast<T *>(bytes.data()); }
};

/// Parses a whole .npy image. `what` names it in messages.
FileError parseNpy(std::string_view image, NpyArray &out,
                   const std::string &what = "npy");
FileError readNpy(const std::string &path, NpyArray &out);

/// Serializes `a`; "" or why (bytes that do not match the shape).
std::string serializeNpy(const NpyArray &a, std::string &out);
std::string writeNpy(const std::string &path, const NpyArray &a);

} // namespace linformer

#endif // LINFORMER_LIB_NPY_NPY_H
