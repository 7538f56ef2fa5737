//===- NpyTest.cpp - Tests of the .npy reader/writer ----------------------===//
//
// Round trips for every supported dtype, headers as numpy writes them
// (versions 1.0 and 2.0), and refusals with a message for what is not
// supported: bad magic, Fortran order, big-endian, other dtypes, truncation.
//
//===----------------------------------------------------------------------===//

#include "lib/Npy/Npy.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace linformer;

namespace {

/// A .npy image with a hand-written header, as numpy would lay it out.
std::string npyImage(const std::string &dict, const std::string &data,
                     int major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + char(major) + '\0';
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    out += char((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

TEST(Npy, RoundTripEveryDtype) {
  test::TempDir dir;
  struct Case {
    DType dtype;
    bool isBool;
    std::vector<int64_t> shape;
  };
  for (const Case &c :
       {Case{DType::F32, false, {2, 3, 4}}, Case{DType::F16, false, {3}},
        Case{DType::I32, false, {5}}, Case{DType::I64, false, {}},
        Case{DType::U8, false, {2, 2}}, Case{DType::U8, true, {4}},
        Case{DType::F32, false, {0, 3}}}) {
    NpyArray a;
    a.dtype = c.dtype;
    a.isBool = c.isBool;
    a.shape = c.shape;
    a.bytes.resize(size_t(a.numElements()) * dtypeSize(c.dtype));
    for (size_t i = 0; i < a.bytes.size(); ++i)
      a.bytes[i] = char(i * 7 + 1);
    std::string path = dir.file("a.npy");
    ASSERT_EQ(writeNpy(path, a), "");
    NpyArray b;
    FileError err = readNpy(path, b);
    ASSERT_TRUE(err.ok()) << err.message;
    EXPECT_EQ(b.dtype, a.dtype);
    EXPECT_EQ(b.isBool, a.isBool);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.bytes, a.bytes);
    std::string image;
    ASSERT_EQ(serializeNpy(a, image), "");
    EXPECT_EQ((image.size() - a.bytes.size()) % 64, 0u);
  }
}

TEST(Npy, ReadsNumpyHeaders) {
  NpyArray a;
  std::string data(24, '\0');
  FileError err = parseNpy(
      npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
               data),
      a);
  ASSERT_TRUE(err.ok()) << err.message;
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  err = parseNpy(npyImage("{'descr': '<i8', 'fortran_order': False, "
                          "'shape': (3,), }",
                          data, /*major=*/2),
                 a);
  ASSERT_TRUE(err.ok()) << err.message;
  EXPECT_EQ(a.dtype, DType::I64);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3}));
  err = parseNpy(npyImage("{\"descr\": \"|b1\", \"shape\": (), "
                          "\"fortran_order\": False}",
                          "\x01"),
                 a);
  ASSERT_TRUE(err.ok()) << err.message;
  EXPECT_TRUE(a.isBool);
  EXPECT_TRUE(a.shape.empty());
}

TEST(Npy, BadMagic) {
  NpyArray a;
  FileError err = parseNpy("NOTNUMPYATALL", a);
  EXPECT_EQ(err.kind, ErrorKind::Format);
  EXPECT_NE(err.message.find("bad magic"), std::string::npos);
}

TEST(Npy, UnsupportedVersion) {
  std::string image = npyImage(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "abcd");
  image[6] = 9;
  NpyArray a;
  EXPECT_EQ(parseNpy(image, a).kind, ErrorKind::Version);
}

TEST(Npy, RefusesWhatItDoesNotSupport) {
  struct Case {
    std::string dict;
    std::string expected;
  };
  for (const Case &c : {
           Case{"{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
                "Fortran-order arrays are not supported"},
           Case{"{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
                "big-endian dtype '>f4'"},
           Case{"{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                "unsupported dtype '<c8'"},
           Case{"{'descr': [('a', '<f4')], 'fortran_order': False, "
                "'shape': (1,), }",
                "value of 'descr'"},
           Case{"{'fortran_order': False, 'shape': (1,), }",
                "no string 'descr'"},
           Case{"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
                "non-negative integer"},
           Case{"{'descr': '<f4', 'fortran_order': False", "bad header"},
       }) {
    NpyArray a;
    FileError err = parseNpy(npyImage(c.dict, "abcd"), a);
    EXPECT_EQ(err.kind, ErrorKind::Format) << c.dict;
    EXPECT_NE(err.message.find(c.expected), std::string::npos)
        << c.dict << " -> " << err.message;
  }
}

TEST(Npy, DataSizeMustMatchShape) {
  NpyArray a;
  FileError err = parseNpy(
      npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
               std::string(20, '\0')),
      a);
  EXPECT_NE(err.message.find("data is 20 bytes but <f4 [2, 3] needs 24 "
                             "(truncated)"),
            std::string::npos)
      << err.message;
  // A header length past the end of the file.
  std::string image = npyImage(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "abcd");
  image.resize(40);
  EXPECT_NE(parseNpy(image, a).message.find("truncated header"),
            std::string::npos);
}

} // namespace
