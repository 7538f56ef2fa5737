//===- Safetensors.cpp - Read and write safetensors files -----------------===//
//
// The header is parsed with nlohmann::json; every field is type-checked
// before use because the file is untrusted input. Structural problems
// (truncation, bad JSON, bad entries) are Format errors; failing to open or
// map the file is an IO error.
//
//===----------------------------------------------------------------------===//

#include "lib/Safetensors/Safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

namespace linformer {

using json = nlohmann::ordered_json;

const char *safetensorsDTypeName(DType t) {
  for (const DTypeSpelling &s : kDTypes)
    if (s.dtype == t)
      return s.safetensors;
  return "?";
}

static bool parseSafetensorsDType(const std::string &s, DType &out) {
  for (const DTypeSpelling &d : kDTypes)
    if (s == d.safetensors) {
      out = d.dtype;
      return true;
    }
  return false;
}

/// Headers beyond this are certainly corrupt (real ones are kilobytes);
/// the bound keeps a garbage length from driving a huge parse.
static constexpr uint64_t kMaxHeaderSize = uint64_t(100) << 20;

FileError SafetensorsFile::open(const std::string &path, SafetensorsFile &out) {
  out = SafetensorsFile();
  if (FileError err = MappedFile::open(path, out.file_))
    return err;
  try {
    return out.parse(out.file_.data(), out.file_.size(),
                     "safetensors '" + path + "'");
  } catch (const std::exception &e) {
    return FileError::format("safetensors '" + path + "': " + e.what());
  }
}

FileError SafetensorsFile::fromBytes(std::string_view bytes,
                                     SafetensorsFile &out,
                                     const std::string &what) {
  out = SafetensorsFile();
  try {
    return out.parse(reinterpret_cast<const uint8_t *>(bytes.data()),
                     bytes.size(), what);
  } catch (const std::exception &e) {
    return FileError::format(what + ": " + e.what());
  }
}

FileError SafetensorsFile::parse(const uint8_t *data, size_t size,
                                 const std::string &what) {
  auto bad = [&](const std::string &m) {
    tensors_.clear();
    metadata_.clear();
    return FileError::format(what + ": " + m);
  };
  if (size < 8)
    return bad("truncated: " + std::to_string(size) +
               " bytes, the header length alone needs 8");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | data[i];
  if (headerSize > kMaxHeaderSize || headerSize > size - 8)
    return bad("truncated: header claims " + std::to_string(headerSize) +
               " bytes, the file has " + std::to_string(size - 8) +
               " after the length");
  const char *headerBegin = reinterpret_cast<const char *>(data + 8);
  json header = json::parse(headerBegin, headerBegin + headerSize, nullptr,
                            /*allow_exceptions=*/false);
  if (header.is_discarded())
    return bad("the header is not valid JSON");
  if (!header.is_object())
    return bad("the header is not a JSON object");
  const uint8_t *dataBegin = data + 8 + headerSize;
  uint64_t dataSize = size - 8 - headerSize;

  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string &name = it.key();
    const json &v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object())
        return bad("__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string())
          return bad("__metadata__ value '" + m.key() + "' is not a string");
        metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    std::string where = "tensor '" + name + "': ";
    if (!v.is_object())
      return bad(where + "entry is not an object");
    auto dt = v.find("dtype");
    if (dt == v.end() || !dt->is_string())
      return bad(where + "missing string 'dtype'");
    SafetensorsTensor t;
    t.name = name;
    if (!parseSafetensorsDType(dt->get<std::string>(), t.dtype))
      return bad(where + "unsupported dtype \"" + dt->get<std::string>() +
                 "\" (supported: F32, F16, BF16, I32, I64, U8)");
    auto sh = v.find("shape");
    if (sh == v.end() || !sh->is_array())
      return bad(where + "missing array 'shape'");
    for (const json &d : *sh) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        return bad(where + "shape holds something other than a "
                           "non-negative integer");
      t.shape.push_back(d.get<int64_t>());
    }
    int64_t bytes = shapeByteSize(t.shape, t.dtype);
    if (bytes < 0)
      return bad(where + safetensorsDTypeName(t.dtype) + " " +
                 shapeString(t.shape) + " is too large (over 2^62 bytes)");
    auto off = v.find("data_offsets");
    if (off == v.end() || !off->is_array() || off->size() != 2 ||
        !(*off)[0].is_number_unsigned() || !(*off)[1].is_number_unsigned())
      return bad(where + "'data_offsets' must be [begin, end] of "
                         "non-negative integers");
    uint64_t begin = (*off)[0].get<uint64_t>(), end = (*off)[1].get<uint64_t>();
    if (end < begin)
      return bad(where + "data_offsets [" + std::to_string(begin) + ", " +
                 std::to_string(end) + "] end before they begin");
    uint64_t expected = uint64_t(bytes);
    if (end - begin != expected)
      return bad(where + "holds " + std::to_string(end - begin) +
                 " bytes but " + safetensorsDTypeName(t.dtype) + " " +
                 shapeString(t.shape) + " needs " + std::to_string(expected));
    if (end > dataSize)
      return bad(where + "data [" + std::to_string(begin) + ", " +
                 std::to_string(end) + ") runs past the end of the data (" +
                 std::to_string(dataSize) + " bytes; truncated file?)");
    t.data = dataBegin + begin;
    t.size = end - begin;
    tensors_.push_back(std::move(t));
  }
  std::sort(tensors_.begin(), tensors_.end(),
            [](const SafetensorsTensor &a, const SafetensorsTensor &b) {
              return a.data < b.data || (a.data == b.data && a.size < b.size);
            });
  for (size_t i = 1; i < tensors_.size(); ++i) {
    const SafetensorsTensor &a = tensors_[i - 1], &b = tensors_[i];
    if (a.size && b.size && a.data + a.size > b.data)
      return bad("tensors '" + a.name + "' and '" + b.name + "' overlap");
  }
  return {};
}

const SafetensorsTensor *SafetensorsFile::find(std::string_view name) const {
  for (const SafetensorsTensor &t : tensors_)
    if (t.name == name)
      return &t;
  return nullptr;
}

std::string
serializeSafetensors(const std::map<std::string, SafetensorsEntry> &tensors,
                     std::string &out,
                     const std::map<std::string, std::string> &metadata) {
  std::vector<const std::pair<const std::string, SafetensorsEntry> *> order;
  for (const auto &kv : tensors) {
    if (kv.first.empty() || kv.first == "__metadata__")
      return "safetensors: invalid tensor name '" + kv.first + "'";
    int64_t bytes = shapeByteSize(kv.second.shape, kv.second.dtype);
    uint64_t expected = bytes < 0 ? 0 : uint64_t(bytes);
    if (bytes < 0 || kv.second.bytes.size() != expected)
      return "safetensors: tensor '" + kv.first + "' has " +
             std::to_string(kv.second.bytes.size()) + " bytes but " +
             safetensorsDTypeName(kv.second.dtype) + " " +
             shapeString(kv.second.shape) + " needs " +
             std::to_string(expected);
    order.push_back(&kv);
  }
  // Descending element size keeps every tensor naturally aligned without
  // holes; std::map order breaks ties by name, so output is deterministic.
  std::stable_sort(order.begin(), order.end(), [](auto *a, auto *b) {
    return dtypeSize(a->second.dtype) > dtypeSize(b->second.dtype);
  });
  try {
    json header = json::object();
    if (!metadata.empty())
      header["__metadata__"] = metadata;
    uint64_t offset = 0;
    for (auto *kv : order) {
      uint64_t end = offset + kv->second.bytes.size();
      header[kv->first] = {{"dtype", safetensorsDTypeName(kv->second.dtype)},
                           {"shape", kv->second.shape},
                           {"data_offsets", {offset, end}}};
      offset = end;
    }
    std::string text = header.dump();
    // Pad so the data starts 64-byte aligned in a mapping.
    while ((8 + text.size()) % 64 != 0)
      text.push_back(' ');
    out.clear();
    out.reserve(8 + text.size() + offset);
    for (int i = 0; i < 8; ++i)
      out.push_back(char((uint64_t(text.size()) >> (8 * i)) & 0xff));
    out += text;
    for (auto *kv : order)
      out += kv->second.bytes;
    return "";
  } catch (const std::exception &e) {
    return std::string("safetensors: cannot serialize: ") + e.what();
  }
}

std::string
writeSafetensors(const std::string &path,
                 const std::map<std::string, SafetensorsEntry> &tensors,
                 const std::map<std::string, std::string> &metadata) {
  std::string image;
  if (std::string why = serializeSafetensors(tensors, image, metadata);
      !why.empty())
    return why;
  return writeWholeFile(path, image.data(), image.size()).message;
}

} // namespace linformer
