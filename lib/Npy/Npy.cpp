//===- Npy.cpp - Read and write NumPy .npy files --------------------------===//
//
// The header is a Python literal, so it gets a small hand-written parser for
// exactly the subset numpy writes: a dict of string keys whose values are
// strings, True/False, or tuples of integers. Anything outside that subset
// is a format error, never undefined behaviour.
//
//===----------------------------------------------------------------------===//

#include "lib/Npy/Npy.h"
#include "lib/Manifest/MappedFile.h"

#include <cctype>
#include <cstring>
#include <map>

namespace linformer {

namespace {

/// One value of the header dict.
struct PyValue {
  enum Kind { String, Bool, Tuple } kind = String;
  std::string str;
  bool boolean = false;
  std::vector<int64_t> ints;
};

class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : s(text) {}

  /// Fills `dict`; returns "" or what is wrong.
  std::string parse(std::map<std::string, PyValue> &dict) {
    skip();
    if (!eat('{'))
      return "the header does not start with '{'";
    while (true) {
      skip();
      if (eat('}'))
        break;
      std::string key;
      if (!parseString(key))
        return "expected a quoted key at header offset " + std::to_string(i);
      skip();
      if (!eat(':'))
        return "expected ':' after key '" + key + "'";
      skip();
      PyValue v;
      if (std::string why = parseValue(v); !why.empty())
        return "value of '" + key + "': " + why;
      dict[key] = std::move(v);
      skip();
      if (eat(','))
        continue;
      skip();
      if (eat('}'))
        break;
      return "expected ',' or '}' at header offset " + std::to_string(i);
    }
    skip();
    if (i != s.size())
      return "trailing characters after the header dict";
    return "";
  }

private:
  void skip() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
      ++i;
  }
  bool eat(char c) {
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out) {
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"'))
      return false;
    char q = s[i++];
    size_t end = s.find(q, i);
    if (end == std::string_view::npos)
      return false;
    out = std::string(s.substr(i, end - i));
    i = end + 1;
    return true;
  }
  std::string parseValue(PyValue &v) {
    if (i < s.size() && (s[i] == '\'' || s[i] == '"')) {
      v.kind = PyValue::String;
      return parseString(v.str) ? "" : "unterminated string";
    }
    if (s.substr(i, 4) == "True") {
      i += 4;
      v.kind = PyValue::Bool;
      v.boolean = true;
      return "";
    }
    if (s.substr(i, 5) == "False") {
      i += 5;
      v.kind = PyValue::Bool;
      v.boolean = false;
      return "";
    }
    if (eat('(')) {
      v.kind = PyValue::Tuple;
      while (true) {
        skip();
        if (eat(')'))
          return "";
        size_t start = i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
          ++i;
        if (i == start)
          return "expected a non-negative integer in the tuple";
        if (i - start > 18)
          return "dimension too large";
        v.ints.push_back(std::stoll(std::string(s.substr(start, i - start))));
        // numpy may write "3L" in old Python 2 files.
        eat('L');
        skip();
        if (eat(','))
          continue;
        skip();
        if (eat(')'))
          return "";
        return "expected ',' or ')' in the tuple";
      }
    }
    return "expected a string, True, False or a tuple";
  }

  std::string_view s;
  size_t i = 0;
};

/// The descr numpy writes for a type of kDTypes: its byte order ('|' for
/// one byte, else little-endian '<') and code; "" for bf16.
std::string descrOf(const DTypeSpelling &d) {
  if (!d.npy)
    return "";
  return std::string(d.bytes == 1 ? "|" : "<") + d.npy;
}

/// numpy descr -> dtype. '=' (native) is little-endian on every host we run
/// on; '>' is refused rather than byte-swapped.
std::string parseDescr(const std::string &descr, NpyArray &a) {
  if (descr.size() < 3)
    return "unsupported dtype descr '" + descr + "'";
  char order = descr[0];
  std::string t = descr.substr(1);
  bool oneByte = (t == "u1" || t == "b1" || t == "i1");
  if (order == '>' && !oneByte)
    return "big-endian dtype '" + descr +
           "' is not supported (save with '<' byte order)";
  if (order != '<' && order != '=' && order != '|' && order != '>')
    return "unsupported dtype descr '" + descr + "'";
  a.isBool = t == "b1";
  if (a.isBool) {
    a.dtype = DType::U8;
    return "";
  }
  std::string supported;
  for (const DTypeSpelling &d : kDTypes) {
    if (!d.npy)
      continue;
    if (t == d.npy) {
      a.dtype = d.dtype;
      return "";
    }
    supported += (supported.empty() ? "" : ", ") + descrOf(d);
  }
  return "unsupported dtype '" + descr + "' (supported: " + supported +
         ", |b1)";
}

/// The descr numpy writes for `a`'s type ("" for bf16, which numpy lacks).
std::string descrFor(const NpyArray &a) {
  if (a.dtype == DType::U8 && a.isBool)
    return "|b1";
  return descrOf(dtypeSpelling(a.dtype));
}

} // namespace

FileError parseNpy(std::string_view image, NpyArray &out,
                   const std::string &what) {
  auto bad = [&](const std::string &m) {
    return FileError::format(what + ": " + m);
  };
  try {
    static const char magic[] = "\x93NUMPY";
    if (image.size() < 10 || std::memcmp(image.data(), magic, 6) != 0)
      return bad("not an .npy file (bad magic or shorter than 10 bytes)");
    unsigned major = static_cast<unsigned char>(image[6]);
    size_t headerLen, headerStart;
    auto byte = [&](size_t k) {
      return size_t(static_cast<unsigned char>(image[k]));
    };
    if (major == 1) {
      headerLen = byte(8) | (byte(9) << 8);
      headerStart = 10;
    } else if (major == 2 || major == 3) {
      if (image.size() < 12)
        return bad("truncated header length");
      headerLen =
          byte(8) | (byte(9) << 8) | (byte(10) << 16) | (byte(11) << 24);
      headerStart = 12;
    } else {
      return FileError::version(
          what + ": .npy format version " + std::to_string(major) + "." +
          std::to_string(byte(7)) + " is not supported (1.0, 2.0 and 3.0 are)");
    }
    if (headerLen > image.size() - headerStart)
      return bad("truncated header (claims " + std::to_string(headerLen) +
                 " bytes)");
    std::map<std::string, PyValue> dict;
    HeaderParser parser(image.substr(headerStart, headerLen));
    if (std::string why = parser.parse(dict); !why.empty())
      return bad("bad header: " + why);
    NpyArray a;
    auto d = dict.find("descr");
    if (d == dict.end() || d->second.kind != PyValue::String)
      return bad("header has no string 'descr'");
    if (std::string why = parseDescr(d->second.str, a); !why.empty())
      return bad(why);
    auto f = dict.find("fortran_order");
    if (f == dict.end() || f->second.kind != PyValue::Bool)
      return bad("header has no boolean 'fortran_order'");
    if (f->second.boolean)
      return bad("Fortran-order arrays are not supported (save a C-order "
                 "copy: np.ascontiguousarray)");
    auto sh = dict.find("shape");
    if (sh == dict.end() || sh->second.kind != PyValue::Tuple)
      return bad("header has no tuple 'shape'");
    a.shape = sh->second.ints;
    int64_t bytes = shapeByteSize(a.shape, a.dtype);
    if (bytes < 0)
      return bad("shape " + shapeString(a.shape) + " of " + d->second.str +
                 " is too large (over 2^62 bytes)");
    uint64_t need = uint64_t(bytes);
    size_t dataStart = headerStart + headerLen;
    if (image.size() - dataStart != need)
      return bad("data is " + std::to_string(image.size() - dataStart) +
                 " bytes but " + d->second.str + " " + shapeString(a.shape) +
                 " needs " + std::to_string(need) +
                 (image.size() - dataStart < need ? " (truncated)" : ""));
    a.bytes.assign(image.data() + dataStart, need);
    out = std::move(a);
    return {};
  } catch (const std::exception &e) {
    return bad(e.what());
  }
}

FileError readNpy(const std::string &path, NpyArray &out) {
  MappedFile file;
  if (FileError err = MappedFile::open(path, file))
    return err;
  return parseNpy(std::string_view(reinterpret_cast<const char *>(file.data()),
                                   file.size()),
                  out, "npy '" + path + "'");
}

std::string serializeNpy(const NpyArray &a, std::string &out) {
  std::string descr = descrFor(a);
  if (descr.empty())
    return std::string("npy: dtype ") + dtypeName(a.dtype) +
           " has no .npy spelling";
  int64_t bytes = shapeByteSize(a.shape, a.dtype);
  if (bytes < 0 || uint64_t(bytes) != a.bytes.size())
    return "npy: " + std::to_string(a.bytes.size()) + " bytes do not match " +
           dtypeName(a.dtype) + " " + shapeString(a.shape);
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape.size(); ++i)
    header += (i ? ", " : "") + std::to_string(a.shape[i]);
  // A one-element Python tuple needs its trailing comma: (3,).
  if (a.shape.size() == 1)
    header += ",";
  header += "), }";
  bool v2 = header.size() + 1 + 10 > 65535;
  size_t prefix = v2 ? 12 : 10;
  while ((prefix + header.size() + 1) % 64 != 0)
    header.push_back(' ');
  header.push_back('\n');
  out.assign("\x93NUMPY", 6);
  out.push_back(char(v2 ? 2 : 1));
  out.push_back(0);
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i)
    out.push_back(char((header.size() >> (8 * i)) & 0xff));
  out += header;
  out += a.bytes;
  return "";
}

std::string writeNpy(const std::string &path, const NpyArray &a) {
  std::string image;
  if (std::string why = serializeNpy(a, image); !why.empty())
    return why;
  return writeWholeFile(path, image.data(), image.size()).message;
}

} // namespace linformer
