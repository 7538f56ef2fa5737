//===- Manifest.cpp - The artifact manifest: schema, parse, write ---------===//
//
// JSON <-> Manifest with nlohmann::ordered_json (ordered so that schedules
// and model descriptions round-trip with their key order). Parsing checks
// field types here and leaves cross-field invariants to validateManifest,
// which the writer runs too: one set of rules for both directions.
//
// nlohmann throws on malformed text and type errors; every entry point
// catches and turns that into a FileError/string, since the compiler calls
// these functions from code built without exceptions.
//
//===----------------------------------------------------------------------===//

#include "lib/Manifest/Manifest.h"
#include "lib/Support/Sha256.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <set>

namespace linformer {

using json = nlohmann::ordered_json;

static constexpr EnumName<BufferKind> kBufferKindNames[] = {
    {BufferKind::Input, "input"},
    {BufferKind::Weight, "weight"},
    {BufferKind::Output, "output"},
    {BufferKind::Intermediate, "intermediate"},
    {BufferKind::Constant, "constant"},
    {BufferKind::TensorMap, "tensor_map"}};

static constexpr EnumName<BufferRole> kBufferRoleNames[] = {
    {BufferRole::None, ""},
    {BufferRole::Lengths, "lengths"},
    {BufferRole::Mask, "mask"}};

const char *bufferKindName(BufferKind kind) {
  return enumName(kBufferKindNames, kind);
}

const char *bufferRoleName(BufferRole role) {
  return enumName(kBufferRoleNames, role);
}

uint64_t ManifestTensorMap::extentBytes() const {
  if (dims.empty())
    return 0;
  // Every dimension is >= 1: the last element's end.
  uint64_t end = uint64_t(dims[0]) * dtypeSize(dtype);
  for (size_t i = 1; i < dims.size() && i - 1 < strides.size(); ++i)
    end += uint64_t(dims[i] - 1) * uint64_t(strides[i - 1]);
  return end;
}

uint64_t ManifestBuffer::byteSize() const {
  if (kind == BufferKind::TensorMap)
    return kTensorMapBytes;
  if (sizedInBytes())
    return bytes;
  int64_t n = shapeByteSize(shape, dtype);
  return n < 0 ? 0 : uint64_t(n);
}

std::string Manifest::sha256Of(std::string_view name) const {
  for (const auto &[section, hash] : codeSha256)
    if (section == name)
      return hash;
  return "";
}

int64_t Manifest::viewedBuffer(int64_t id) const {
  const ManifestBuffer &b = buffers[size_t(id)];
  return b.kind == BufferKind::TensorMap ? b.tensorMap.source : id;
}

int64_t Manifest::findBuffer(std::string_view name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name)
      return int64_t(i);
  return -1;
}

namespace {

/// Thrown inside this file only, to unwind out of nested field parsing with
/// a message; parseManifest catches it.
struct ParseError {
  std::string message;
};

[[noreturn]] void fail(std::string message) {
  throw ParseError{"manifest: " + std::move(message)};
}

const json &field(const json &obj, const char *key, const std::string &where) {
  auto it = obj.find(key);
  if (it == obj.end())
    fail(where + "missing '" + key + "'");
  return *it;
}

std::string getString(const json &obj, const char *key,
                      const std::string &where) {
  const json &v = field(obj, key, where);
  if (!v.is_string())
    fail(where + "'" + key + "' must be a string");
  return v.get<std::string>();
}

std::string getOptionalString(const json &obj, const char *key,
                              const std::string &where) {
  if (!obj.contains(key))
    return "";
  return getString(obj, key, where);
}

int64_t getInt(const json &obj, const char *key, const std::string &where) {
  const json &v = field(obj, key, where);
  if (!v.is_number_integer())
    fail(where + "'" + key + "' must be an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
    fail(where + "'" + key + "' is too large");
  return v.get<int64_t>();
}

std::vector<int64_t> getIntArray(const json &obj, const char *key,
                                 const std::string &where) {
  const json &v = field(obj, key, where);
  if (!v.is_array())
    fail(where + "'" + key + "' must be an array of integers");
  std::vector<int64_t> out;
  for (const json &e : v) {
    if (!e.is_number_integer() ||
        (e.is_number_unsigned() && e.get<uint64_t>() > uint64_t(INT64_MAX)))
      fail(where + "'" + key + "' must be an array of integers");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

std::string getObjectText(const json &obj, const char *key,
                          const std::string &where) {
  if (!obj.contains(key))
    return "";
  const json &v = obj.at(key);
  if (!v.is_object())
    fail(where + "'" + key + "' must be an object");
  return v.dump();
}

std::string bufferWhere(size_t i, const std::string &name) {
  std::string s = "buffer " + std::to_string(i);
  if (!name.empty())
    s += " ('" + name + "')";
  return s + ": ";
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

bool isJsonObjectText(const std::string &text) {
  json v = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return v.is_object();
}

Manifest parseJson(const json &root) {
  if (!root.is_object())
    fail("the top level must be a JSON object");
  Manifest m;
  // Version first: a future manifest may break every other rule below, and
  // the useful message then is the version, not the first missing field.
  std::string format = getString(root, "format", "");
  if (format != kManifestFormat)
    fail("'format' is \"" + format + "\", expected \"" + kManifestFormat +
         "\"");
  int64_t version = getInt(root, "format_version", "");
  if (version < kManifestFormatVersion ||
      version > kManifestFormatVersionTensorMaps)
    throw ParseError{"manifest: format_version " + std::to_string(version) +
                     " is not supported (this runtime reads " +
                     std::to_string(kManifestFormatVersion) + " to " +
                     std::to_string(kManifestFormatVersionTensorMaps) + ")"};
  m.formatVersion = int(version);
  m.compilerVersion = getString(root, "compiler_version", "");

  const json &target = field(root, "target", "");
  if (!target.is_object())
    fail("'target' must be an object");
  m.target.kind = getString(target, "kind", "target: ");
  m.target.cpu = getOptionalString(target, "cpu", "target: ");
  m.target.features = getOptionalString(target, "features", "target: ");
  m.target.descriptionJson = getObjectText(target, "description", "target: ");
  m.entry = getString(root, "entry", "");

  const json &buffers = field(root, "buffers", "");
  if (!buffers.is_array())
    fail("'buffers' must be an array");
  for (size_t i = 0; i < buffers.size(); ++i) {
    const json &b = buffers[i];
    if (!b.is_object())
      fail(bufferWhere(i, "") + "must be an object");
    ManifestBuffer buf;
    buf.name = getString(b, "name", bufferWhere(i, ""));
    std::string where = bufferWhere(i, buf.name);
    std::string kind = getString(b, "kind", where);
    if (!parseEnum(kBufferKindNames, kind, buf.kind))
      fail(where + "unknown kind \"" + kind +
           "\" (expected input, weight, output, intermediate, constant or "
           "tensor_map)");
    if (buf.kind == BufferKind::TensorMap) {
      const json &t = field(b, "tensor_map", where);
      if (!t.is_object())
        fail(where + "'tensor_map' must be an object");
      std::string tw = where + "tensor_map: ";
      ManifestTensorMap &map = buf.tensorMap;
      map.source = getInt(t, "source", tw);
      std::string dtype = getString(t, "dtype", tw);
      if (!parseDType(dtype, map.dtype))
        fail(tw + "unknown dtype \"" + dtype +
             "\" (expected f32, f16, bf16, i32, i64 or u8)");
      int64_t offset = t.contains("offset") ? getInt(t, "offset", tw) : 0;
      if (offset < 0)
        fail(tw + "'offset' is negative");
      map.offset = uint64_t(offset);
      map.dims = getIntArray(t, "dims", tw);
      map.strides = getIntArray(t, "strides", tw);
      map.box = getIntArray(t, "box", tw);
      if (t.contains("swizzle"))
        map.swizzle = getInt(t, "swizzle", tw);
    } else if (buf.sizedInBytes()) {
      int64_t bytes = getInt(b, "bytes", where);
      if (bytes < 0)
        fail(where + "'bytes' is negative");
      buf.bytes = uint64_t(bytes);
    } else {
      std::string dtype = getString(b, "dtype", where);
      if (!parseDType(dtype, buf.dtype))
        fail(where + "unknown dtype \"" + dtype +
             "\" (expected f32, f16, bf16, i32, i64 or u8)");
      buf.shape = getIntArray(b, "shape", where);
    }
    std::string role = getOptionalString(b, "role", where);
    if (!parseEnum(kBufferRoleNames, role, buf.role))
      fail(where + "unknown role \"" + role + "\" (expected lengths or mask)");
    if (b.contains("sequence")) {
      if (!b.at("sequence").is_boolean())
        fail(where + "'sequence' must be true or false");
      if (buf.kind != BufferKind::Output)
        fail(where + "'sequence' says whether an output holds tokens; this "
                     "buffer is " +
             kind);
      buf.sequence = b.at("sequence").get<bool>();
    }
    if (b.contains("sequence_split"))
      buf.sequenceSplit = getInt(b, "sequence_split", where);
    if (!buf.sizedInBytes())
      buf.bytes = buf.byteSize();
    m.buffers.push_back(std::move(buf));
  }

  const json &kernels = field(root, "kernels", "");
  if (!kernels.is_array())
    fail("'kernels' must be an array");
  for (size_t i = 0; i < kernels.size(); ++i) {
    const json &k = kernels[i];
    std::string where = "kernel " + std::to_string(i) + ": ";
    if (!k.is_object())
      fail(where + "must be an object");
    ManifestKernel kernel;
    kernel.symbol = getString(k, "symbol", where);
    kernel.workgroups = getInt(k, "workgroups", where);
    kernel.buffers = getIntArray(k, "buffers", where);
    kernel.scheduleJson = getObjectText(k, "schedule", where);
    if (kernel.scheduleJson.empty())
      kernel.scheduleJson = "{}";
    if (k.contains("grid"))
      kernel.grid = getIntArray(k, "grid", where);
    if (k.contains("block"))
      kernel.block = getIntArray(k, "block", where);
    if (k.contains("shared_bytes"))
      kernel.sharedBytes = getInt(k, "shared_bytes", where);
    if (k.contains("generator"))
      kernel.generator = getString(k, "generator", where);
    if (k.contains("rows")) {
      const json &rows = k.at("rows");
      std::string rw = where + "rows: ";
      if (!rows.is_object())
        fail(rw + "must be an object");
      kernel.rowsGrid = getIntArray(rows, "grid", rw);
      kernel.rowsBatch = getInt(rows, "batch", rw);
      kernel.rowsRow = getInt(rows, "row", rw);
      kernel.rowsTile = getInt(rows, "tile", rw);
      if (kernel.rowsGrid.empty())
        fail(rw + "'grid' must not be empty");
    }
    if (k.contains("max_length"))
      kernel.maxLength = getIntArray(k, "max_length", where);
    if (k.contains("writes")) {
      kernel.writes = getIntArray(k, "writes", where);
      kernel.hasWrites = true;
    }
    if (k.contains("initializer")) {
      if (!k.at("initializer").is_boolean())
        fail(where + "'initializer' must be true or false");
      kernel.initializer = k.at("initializer").get<bool>();
    }
    if (k.contains("all_reduce")) {
      const json &reduce = k.at("all_reduce");
      std::string rw = where + "all_reduce: ";
      if (!reduce.is_object())
        fail(rw + "must be an object");
      kernel.allReduce = getInt(reduce, "ranks", rw);
      std::string dtype = getString(reduce, "dtype", rw);
      if (!parseDType(dtype, kernel.allReduceDtype))
        fail(rw + "unknown dtype \"" + dtype + "\"");
      if (reduce.contains("gather_blocks"))
        kernel.gatherBlocks = getInt(reduce, "gather_blocks", rw);
    }
    m.kernels.push_back(std::move(kernel));
  }
  if (root.contains("code_sha256")) {
    const json &code = root.at("code_sha256");
    if (!code.is_object())
      fail("'code_sha256' must be an object");
    for (auto it = code.begin(); it != code.end(); ++it) {
      if (!it.value().is_string())
        fail("code_sha256: '" + it.key() + "' must be a string");
      m.codeSha256.emplace_back(it.key(), it.value().get<std::string>());
    }
  }
  m.modelJson = getObjectText(root, "model", "");
  std::string layout = getOptionalString(root, "sequence_layout", "");
  if (!layout.empty() && layout != "padded" && layout != "packed")
    fail("'sequence_layout' is \"" + layout +
         "\", expected \"padded\" or \"packed\"");
  m.packedSequences = layout == "packed";
  m.products = getOptionalString(root, "products", "");
  if (m.products.empty())
    m.products = "f32";
  if (m.products != "f32" && m.products != "bf16" && m.products != "f16")
    fail("'products' is \"" + m.products +
         "\", expected \"f32\", \"bf16\" or \"f16\"");
  return m;
}

} // namespace

std::string cudaCubinSection(const std::string &sm) {
  return "cuda." + sm + ".cubin";
}

/// A CUDA launch shape within what any CUDA device accepts (the device's
/// own limits, shared memory above all, are checked when it is opened).
static std::string checkLaunch(const ManifestKernel &k) {
  if (k.grid.size() != 3 || k.block.size() != 3)
    return "a cuda kernel needs 'grid' and 'block' of 3 dimensions each";
  const int64_t gridMax[3] = {(int64_t(1) << 31) - 1, 65535, 65535};
  const int64_t blockMax[3] = {1024, 1024, 64};
  for (int d = 0; d < 3; ++d) {
    if (k.grid[size_t(d)] < 1 || k.grid[size_t(d)] > gridMax[d])
      return "grid " + shapeString(k.grid) + " is not a CUDA grid (x up to 2^31-1, "
             "y and z up to 65535, each >= 1)";
    if (k.block[size_t(d)] < 1 || k.block[size_t(d)] > blockMax[d])
      return "block " + shapeString(k.block) + " is not a CUDA block (x, y up to "
             "1024, z up to 64, each >= 1)";
  }
  if (k.block[0] * k.block[1] * k.block[2] > 1024)
    return "block " + shapeString(k.block) + " has more than 1024 threads";
  if (k.grid[0] * k.grid[1] * k.grid[2] != k.workgroups)
    return "workgroups is " + std::to_string(k.workgroups) +
           " but the grid " + shapeString(k.grid) + " has " +
           std::to_string(k.grid[0] * k.grid[1] * k.grid[2]) + " blocks";
  if (k.sharedBytes < 0 || k.sharedBytes > 227 * 1024)
    return "shared_bytes is " + std::to_string(k.sharedBytes) +
           ", outside [0, 232448] (227 KiB, the most any CUDA device has)";
  return "";
}

bool hasTensorMaps(const Manifest &m) {
  return std::any_of(
      m.buffers.begin(), m.buffers.end(),
      [](const ManifestBuffer &b) { return b.kind == BufferKind::TensorMap; });
}

int cudaTargetSm(const ManifestTarget &target) {
  const std::string &cpu = target.cpu;
  if (cpu.rfind("sm_", 0) != 0)
    return 0;
  int sm = 0;
  for (size_t i = 3;
       i < cpu.size() && std::isdigit(static_cast<unsigned char>(cpu[i])); ++i)
    sm = std::min(sm * 10 + (cpu[i] - '0'), 10000);
  return sm;
}

int64_t sequenceParallelRanks(const Manifest &m) {
  for (const ManifestKernel &k : m.kernels)
    if (k.isCollective())
      return k.allReduce;
  for (const ManifestBuffer &b : m.buffers)
    if (b.sequenceSplit)
      return b.sequenceSplit;
  return 0;
}

int formatVersionFor(const Manifest &m) {
  if (hasTensorMaps(m))
    return kManifestFormatVersionTensorMaps;
  if (sequenceParallelRanks(m))
    return kManifestFormatVersionCollectives;
  for (const ManifestKernel &k : m.kernels)
    if (k.initializer)
      return kManifestFormatVersionInitializers;
  if (m.packedSequences)
    return kManifestFormatVersionPacked;
  for (const ManifestKernel &k : m.kernels)
    if (!k.maxLength.empty())
      return kManifestFormatVersionVariants;
  return kManifestFormatVersion;
}

/// validateManifest's checks, each returning what is wrong ("" when
/// nothing is), without the "manifest: " prefix.
/// The format version against what the manifest has; the target and entry.
static std::string checkFormat(const Manifest &m) {
  if (m.formatVersion < kManifestFormatVersion ||
      m.formatVersion > kManifestFormatVersionTensorMaps)
    return std::string("format_version " + std::to_string(m.formatVersion) +
                       " is not supported (this runtime reads " +
                       std::to_string(kManifestFormatVersion) + " to " +
                       std::to_string(kManifestFormatVersionTensorMaps) + ")");
  // A feature that needs version `v` (which only manifests with it say):
  // the message for a manifest that has it (`needs`: "X needs") without a
  // version that reads it, or says `v` without it.
  auto versionRule = [&](bool has, bool versionOk, int v,
                         const std::string &needs, const std::string &older,
                         const std::string &without) -> std::string {
    if (versionOk)
      return "";
    return has ? needs + " format_version " + std::to_string(v) +
                     ": an older runtime would " + older
               : "format_version " + std::to_string(v) + " is for " + without;
  };
  bool initializers =
      std::any_of(m.kernels.begin(), m.kernels.end(),
                  [](const ManifestKernel &k) { return k.initializer; });
  bool collectives = sequenceParallelRanks(m) != 0;
  bool maps = hasTensorMaps(m);
  for (const std::string &why :
       {versionRule(m.packedSequences,
                    m.packedSequences
                        ? m.formatVersion >= kManifestFormatVersionPacked
                        : m.formatVersion != kManifestFormatVersionPacked,
                    kManifestFormatVersionPacked,
                    "sequence_layout \"packed\" needs", "bind padded tensors",
                    "sequence_layout \"packed\", which this manifest does "
                    "not have"),
        versionRule(initializers && !collectives && !maps,
                    collectives || maps ||
                        initializers == (m.formatVersion ==
                                         kManifestFormatVersionInitializers),
                    kManifestFormatVersionInitializers,
                    "initializer kernels need", "not run them",
                    "manifests with initializer kernels, and this one has "
                    "none"),
        versionRule(collectives,
                    collectives ==
                        (m.formatVersion == kManifestFormatVersionCollectives),
                    kManifestFormatVersionCollectives,
                    "all-reduce steps and split weights need",
                    "look for the steps' code and bind whole weights",
                    "sequence-parallel manifests (all-reduce steps, split "
                    "weights), and this one has neither"),
        versionRule(
            maps, maps == (m.formatVersion == kManifestFormatVersionTensorMaps),
            kManifestFormatVersionTensorMaps, "tensor maps need",
            "refuse the buffer kind",
            "manifests with tensor maps, and this one has none")})
    if (!why.empty())
      return std::string(why);
  if (m.target.kind != "cpu" && m.target.kind != "cuda")
    return std::string("unknown target kind \"" + m.target.kind +
               "\" (expected cpu or cuda)");
  if (m.entry.empty())
    return std::string("'entry' is empty");
  return "";
}

/// Tensor map `b` (buffer `i`): what cuTensorMapEncodeTiled accepts, of a
/// view inside its source.
static std::string checkTensorMap(const Manifest &m, const ManifestBuffer &b,
                                  const std::string &where) {
  const ManifestTensorMap &t = b.tensorMap;
  std::string w = where + "tensor_map: ";
  if (m.target.kind != "cuda")
    return where +
           "tensor maps are for cuda kernels' TMA copies, and the "
           "target is " +
           m.target.kind;
  // TMA came with sm_90.
  if (cudaTargetSm(m.target) < 90)
    return where +
           "tensor maps need sm_90 or later (TMA copies), and the "
           "target is " +
           m.target.cpu;
  if (t.source < 0 || uint64_t(t.source) >= m.buffers.size())
    return w + "source " + std::to_string(t.source) + " is not a buffer (" +
           std::to_string(m.buffers.size()) + " buffers)";
  const ManifestBuffer &src = m.buffers[size_t(t.source)];
  if (src.kind == BufferKind::TensorMap)
    return w + "source " + std::to_string(t.source) + " ('" + src.name +
           "') is a tensor map itself";
  size_t rank = t.dims.size();
  if (rank < 1 || rank > 5 || t.box.size() != rank ||
      t.strides.size() != rank - 1)
    return w +
           "needs 1 to 5 dims, as many box sizes and one stride fewer, "
           "not dims " +
           shapeString(t.dims) + ", strides " + shapeString(t.strides) +
           ", box " + shapeString(t.box);
  uint64_t size = dtypeSize(t.dtype);
  for (size_t i = 0; i < rank; ++i) {
    if (t.dims[i] < 1 || t.dims[i] > (int64_t(1) << 32))
      return w + "dims " + shapeString(t.dims) +
             " has a size outside [1, 2^32]";
    if (t.box[i] < 1 || t.box[i] > 256)
      return w + "box " + shapeString(t.box) + " has a size outside [1, 256]";
  }
  for (int64_t stride : t.strides)
    if (stride < 16 || stride % 16 != 0 || stride >= (int64_t(1) << 40))
      return w + "strides " + shapeString(t.strides) +
             " must be multiples of 16 bytes below 2^40";
  uint64_t inner = uint64_t(t.box[0]) * size;
  if (inner % 16 != 0)
    return w + "the box's innermost " + std::to_string(t.box[0]) + " " +
           dtypeName(t.dtype) + " are " + std::to_string(inner) +
           " bytes, not a multiple of 16";
  if (t.swizzle != 0 && t.swizzle != 32 && t.swizzle != 64 && t.swizzle != 128)
    return w + "swizzle " + std::to_string(t.swizzle) +
           " is not 0, 32, 64 or 128 (bytes)";
  if (t.swizzle != 0 && inner > uint64_t(t.swizzle))
    return w + "the box's innermost " + std::to_string(inner) +
           " bytes exceed its swizzle span of " + std::to_string(t.swizzle);
  // The device address is 16-byte aligned where the source's is (every
  // allocation is; a caller's device buffer is checked as it is bound).
  if (t.offset % 16 != 0)
    return w + "offset " + std::to_string(t.offset) +
           " is not a multiple of 16 bytes";
  if (t.offset > src.byteSize() || t.extentBytes() > src.byteSize() - t.offset)
    return w + "the view (" + std::to_string(t.extentBytes()) +
           " bytes from offset " + std::to_string(t.offset) +
           ") reaches past source '" + src.name + "' (" +
           std::to_string(src.byteSize()) + " bytes)";
  return "";
}

/// Every buffer, and what the session allocates for them.
static std::string checkBuffers(const Manifest &m) {
  if (m.buffers.empty())
    return std::string("there are no buffers");
  std::set<std::string> names;
  int outputs = 0, lengthsBuffers = 0, maskBuffers = 0;
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const ManifestBuffer &b = m.buffers[i];
    std::string where = bufferWhere(i, b.name);
    if (b.name.empty())
      return std::string(where + "the name is empty");
    if (!names.insert(b.name).second)
      return std::string(where + "the name is used by an earlier buffer");
    if (b.kind == BufferKind::TensorMap) {
      // Below, once every buffer a map may view has been checked.
    } else if (b.sizedInBytes()) {
      if (b.bytes == 0)
        return std::string(where +
                           (b.kind == BufferKind::Constant
                                ? "a constant"
                                : "an intermediate") +
                           " needs 'bytes' > 0");
      if (b.bytes > uint64_t(kMaxTensorBytes))
        return std::string(where + "'bytes' " + std::to_string(b.bytes) +
                   " exceeds the limit of 2^62");
    } else {
      if (b.shape.empty() && b.kind != BufferKind::Weight)
        return std::string(where + "an " + std::string(bufferKindName(b.kind)) +
                   " needs a shape of rank >= 1");
      for (int64_t d : b.shape)
        if (d <= 0)
          return std::string(where + "shape " + shapeString(b.shape) +
                     " has a dimension <= 0");
      if (shapeByteSize(b.shape, b.dtype) < 0)
        return std::string(where + "shape " + shapeString(b.shape) + " of " +
                   dtypeName(b.dtype) + " exceeds the limit of 2^62 bytes");
    }
    if (b.sequenceSplit != 0 &&
        (b.kind != BufferKind::Weight || b.shape.empty() ||
         b.sequenceSplit < 2 || b.sequenceSplit > (int64_t(1) << 20)))
      return std::string(where + "'sequence_split' " +
                         std::to_string(b.sequenceSplit) +
                         " must be the ranks (2 to 2^20) a weight of rank >= "
                         "1 is split over");
    if (b.sequence && b.kind != BufferKind::Output)
      return std::string(where + "'sequence' says whether an output holds tokens; "
                         "this buffer is " +
                 bufferKindName(b.kind));
    if (b.sequence.value_or(false) && b.shape.size() < 2)
      return std::string(where + "a sequence output has shape [b, n, ...], not " +
                 shapeString(b.shape));
    if (b.kind == BufferKind::Output)
      ++outputs;
    if (b.role != BufferRole::None) {
      if (b.kind != BufferKind::Input)
        return std::string(where + "only inputs have a role");
      if (b.role == BufferRole::Lengths) {
        if (++lengthsBuffers > 1)
          return std::string(where + "a second buffer with role \"lengths\"");
        if (b.dtype != DType::I32 || b.shape.size() != 1)
          return std::string(where + "a lengths buffer must be i32 of shape [b], not " +
                     dtypeName(b.dtype) + " " + shapeString(b.shape));
      } else {
        if (++maskBuffers > 1)
          return std::string(where + "a second buffer with role \"mask\"");
        if (b.dtype != DType::U8 || b.shape.size() != 2)
          return std::string(where + "a mask buffer must be u8 of shape [b, n], not " +
                     dtypeName(b.dtype) + " " + shapeString(b.shape));
      }
    }
  }
  for (size_t i = 0; i < m.buffers.size(); ++i)
    if (m.buffers[i].kind == BufferKind::TensorMap)
      if (std::string why = checkTensorMap(m, m.buffers[i],
                                           bufferWhere(i, m.buffers[i].name));
          !why.empty())
        return why;
  if (outputs == 0)
    return std::string("there is no output buffer");
  if (m.packedSequences && lengthsBuffers == 0)
    return std::string("sequence_layout \"packed\" needs a lengths input (the "
               "kernels find each sequence's rows through it)");
  // What a session allocates: every buffer but the weights, each rounded up
  // to 64 bytes. Each term is <= 2^62 + 63, so the running sum is checked
  // before it could wrap.
  uint64_t sessionBytes = 0;
  for (const ManifestBuffer &b : m.buffers) {
    if (b.kind == BufferKind::Weight)
      continue;
    sessionBytes += (b.byteSize() + 63) / 64 * 64;
    if (sessionBytes > uint64_t(kMaxTensorBytes))
      return std::string("the buffers other than weights need more than 2^62 bytes "
                 "together");
  }
  return "";
}

/// An all-reduce step: one intermediate of whole elements, on the cpu,
/// and the same ranks as every other step and split weight.
static std::string checkCollective(const Manifest &m, const ManifestKernel &k,
                                   const std::string &where) {
  if (k.allReduce < 2 || k.allReduce > (int64_t(1) << 20))
    return where + "all_reduce: ranks " + std::to_string(k.allReduce) +
           " is not in [2, 2^20]";
  for (const ManifestKernel &other : m.kernels)
    if (other.isCollective() && other.allReduce != k.allReduce)
      return where + "all_reduce: ranks " + std::to_string(k.allReduce) +
             ", but step '" + other.symbol + "' has " +
             std::to_string(other.allReduce);
  for (const ManifestBuffer &b : m.buffers)
    if (b.sequenceSplit && b.sequenceSplit != k.allReduce)
      return where + "all_reduce: ranks " + std::to_string(k.allReduce) +
             ", but weight '" + b.name + "' is split over " +
             std::to_string(b.sequenceSplit);
  if (m.target.kind != "cpu")
    return where + "all-reduce steps are cpu steps, and the target is " +
           m.target.kind;
  size_t buffers = k.gatherBlocks != 0 ? 2 : 1;
  if (k.workgroups != 1 || k.buffers.size() != buffers || k.initializer ||
      k.hasRows() || !k.maxLength.empty() || k.generator != "mlir")
    return where + "an all-reduce step has one workgroup and one buffer (an "
                   "all-gather two), and no initializer, length rule, "
                   "variant or generator";
  size_t size = dtypeSize(k.allReduceDtype);
  for (int64_t id : k.buffers) {
    const ManifestBuffer &b = m.buffers[size_t(id)];
    if (b.kind != BufferKind::Intermediate ||
        (k.allReduceDtype != DType::F32 && k.allReduceDtype != DType::F16 &&
         k.allReduceDtype != DType::BF16) ||
        b.bytes % size != 0)
      return where + "an all-reduce step sums an intermediate of whole f32, "
                     "f16 or bf16 elements, not buffer " +
             std::to_string(id) + " ('" + b.name + "': " +
             bufferKindName(b.kind) + ", " + std::to_string(b.bytes) +
             " bytes)";
  }
  if (k.gatherBlocks == 0)
    return "";
  // The share: whole blocks of elements; the whole: P shares.
  uint64_t share = m.buffers[size_t(k.buffers[0])].bytes;
  uint64_t whole = m.buffers[size_t(k.buffers[1])].bytes;
  uint64_t blocks = uint64_t(k.gatherBlocks);
  if (k.gatherBlocks < 0 || k.buffers[0] == k.buffers[1] ||
      share % blocks != 0 || (share / blocks) % size != 0 ||
      whole / uint64_t(k.allReduce) != share ||
      whole % uint64_t(k.allReduce) != 0)
    return where + "all_reduce: an all-gather of " +
           std::to_string(k.gatherBlocks) + " blocks needs a share of whole "
           "blocks of elements and a whole buffer ranks (" +
           std::to_string(k.allReduce) + ") times its size, not " +
           std::to_string(share) + " and " + std::to_string(whole) +
           " bytes";
  return "";
}

/// Kernel `i`: its symbol, bindings, generator, and the length rule,
/// length variant and launch shape its target allows (or, for an
/// all-reduce step, checkCollective's rules).
static std::string checkKernel(const Manifest &m, size_t i) {
  const ManifestKernel &k = m.kernels[i];
  std::string where = "kernel " + std::to_string(i) + ": ";
  if (!isIdentifier(k.symbol))
    return std::string(where + "symbol \"" + k.symbol + "\" is not a C identifier");
  if (k.workgroups < 1)
    return std::string(where + "workgroups is " + std::to_string(k.workgroups) +
               ", must be >= 1");
  if (k.buffers.empty())
    return std::string(where + "binds no buffers");
  for (int64_t id : k.buffers)
    if (id < 0 || uint64_t(id) >= m.buffers.size())
      return std::string("kernel " + std::to_string(i) + " binds buffer " +
                 std::to_string(id) + " but there are " +
                 std::to_string(m.buffers.size()) + " buffers");
  if (k.isCollective())
    return checkCollective(m, k, where);
  for (int64_t id : k.writes)
    if (std::find(k.buffers.begin(), k.buffers.end(), id) == k.buffers.end())
      return std::string(where + "writes buffer " + std::to_string(id) +
                         ", which is not one of the buffers it binds");
  for (int64_t id : k.buffers)
    if (m.buffers[size_t(id)].kind == BufferKind::TensorMap && k.mayWrite(id))
      return std::string(where + "binds tensor map " + std::to_string(id) +
                         " ('" + m.buffers[size_t(id)].name +
                         "') as written: kernels only read tensor maps (a "
                         "kernel binding one lists the buffers it writes)");
  if (!isJsonObjectText(k.scheduleJson))
    return std::string(where + "the schedule is not a JSON object");
  if (k.generator != "mlir" && k.generator != "halide")
    return std::string(where + "generator \"" + k.generator +
               "\" is not mlir or halide");
  if (k.initializer) {
    if (k.hasRows() || !k.maxLength.empty())
      return std::string(where + "an initializer runs once per session, for no "
                         "run's lengths: it takes no length rule or "
                         "length variant");
    for (int64_t bound : k.buffers) {
      // Through a tensor map, the initializer reads its source.
      int64_t id = m.viewedBuffer(bound);
      bool viewed = id != bound;
      const ManifestBuffer &map = m.buffers[size_t(bound)];
      const ManifestBuffer &b = m.buffers[size_t(id)];
      if (b.kind != BufferKind::Weight && b.kind != BufferKind::Constant)
        return std::string(
            where +
            "an initializer binds weights and constants "
            "(or their tensor maps) only, and buffer " +
            std::to_string(id) + " ('" + b.name + "'" +
            (viewed ? ", through tensor map '" + map.name + "'" : "") +
            ") is an " + bufferKindName(b.kind));
    }
  }
  if (k.generator == "halide" && m.target.kind != "cpu")
    return std::string(where + "Halide kernels are cpu kernels, and the target is " +
               m.target.kind);
  if (k.hasRows()) {
    int64_t rank = int64_t(k.rowsGrid.size()), total = 1;
    for (int64_t g : k.rowsGrid) {
      if (g < 1 || g > k.workgroups)
        return std::string(where + "rows: grid " + shapeString(k.rowsGrid) +
                   " has a size outside [1, workgroups]");
      total *= g;
    }
    if (total != k.workgroups)
      return std::string(where + "rows: grid " + shapeString(k.rowsGrid) + " has " +
                 std::to_string(total) + " workgroups, the kernel " +
                 std::to_string(k.workgroups));
    if (k.rowsBatch < 0 || k.rowsRow <= k.rowsBatch || k.rowsRow >= rank)
      return std::string(where + "rows: needs 0 <= batch < row < " +
                 std::to_string(rank) + ", got batch " +
                 std::to_string(k.rowsBatch) + ", row " +
                 std::to_string(k.rowsRow));
    if (k.rowsTile < 1)
      return std::string(where + "rows: tile is " + std::to_string(k.rowsTile) +
                 ", must be >= 1");
    // On CUDA the rule numbers block x: the grid is x alone.
    if (m.target.kind == "cuda" &&
        (k.grid.size() != 3 || k.grid[1] != 1 || k.grid[2] != 1))
      return std::string(where + "rows: a cuda kernel's length rule numbers "
                         "block x, and its grid " + shapeString(k.grid) +
                 " is not [workgroups, 1, 1]");
  }
  if (!k.maxLength.empty()) {
    if (m.formatVersion < kManifestFormatVersionVariants)
      return std::string(where +
                 "max_length (a length variant) needs "
                 "format_version " +
                 std::to_string(kManifestFormatVersionVariants) +
                 " or later: a runtime that reads " +
                 std::to_string(kManifestFormatVersion) +
                 " would launch every variant");
    if (m.target.kind != "cuda")
      return std::string(where + "max_length (a length variant) is for cuda "
                         "kernels, and the target is " + m.target.kind);
    if (k.maxLength.size() != 2 || k.maxLength[0] < 0 ||
        k.maxLength[1] <= k.maxLength[0])
      return std::string(where + "max_length " + shapeString(k.maxLength) +
                 " is not [lo, hi] with 0 <= lo < hi");
  }
  if (m.target.kind == "cuda") {
    if (std::string e = checkLaunch(k); !e.empty())
      return std::string(where + e);
  } else if (!k.grid.empty() || !k.block.empty() || k.sharedBytes) {
    return std::string(where + "grid, block and shared_bytes are for cuda kernels, "
                       "and the target is " + m.target.kind);
  }
  return "";
}

/// Every constant is made: some initializer binds it.
static std::string checkConstantsMade(const Manifest &m) {
  // A constant no initializer binds would never be written.
  for (size_t i = 0; i < m.buffers.size(); ++i)
    if (m.buffers[i].kind == BufferKind::Constant &&
        std::none_of(
            m.kernels.begin(), m.kernels.end(), [&](const ManifestKernel &k) {
              return k.initializer &&
                     std::count(k.buffers.begin(), k.buffers.end(), int64_t(i));
            }))
      return std::string(bufferWhere(i, m.buffers[i].name) +
                 "a constant that no initializer kernel binds: nothing "
                 "would make it");
  return "";
}

/// The JSON texts it carries and the code's hashes.
static std::string checkDescriptionsAndHashes(const Manifest &m) {
  if (!m.target.descriptionJson.empty() &&
      !isJsonObjectText(m.target.descriptionJson))
    return std::string("the target description is not a JSON object");
  if (!m.modelJson.empty() && !isJsonObjectText(m.modelJson))
    return std::string("'model' is not a JSON object");
  std::set<std::string> hashed;
  for (const auto &[section, hash] : m.codeSha256) {
    if (!hashed.insert(section).second)
      return std::string("code_sha256: section '" + section + "' appears twice");
    if (!isSha256Hex(hash))
      return std::string("code_sha256: '" + section +
                 "' is not 64 lower-case hex digits");
  }
  if (m.target.kind == "cpu" && !hashed.count("cpu.so"))
    return std::string("code_sha256 has no hash of section 'cpu.so'");
  if (m.target.kind == "cuda" && !hashed.count(kCudaPtxSection))
    return std::string(std::string("code_sha256 has no hash of section '") +
               kCudaPtxSection + "'");
  return "";
}

std::string validateManifest(const Manifest &m) {
  auto err = [](std::string s) { return "manifest: " + s; };
  for (auto check : {checkFormat, checkBuffers})
    if (std::string why = check(m); !why.empty())
      return err(why);
  if (m.kernels.empty())
    return err("there are no kernels");
  for (size_t i = 0; i < m.kernels.size(); ++i)
    if (std::string why = checkKernel(m, i); !why.empty())
      return err(why);
  for (auto check : {checkConstantsMade, checkDescriptionsAndHashes})
    if (std::string why = check(m); !why.empty())
      return err(why);
  return "";
}

FileError parseManifest(std::string_view text, Manifest &out) {
  try {
    json root = json::parse(text.begin(), text.end());
    Manifest m = parseJson(root);
    if (std::string why = validateManifest(m); !why.empty())
      return FileError::format(why);
    out = std::move(m);
    return {};
  } catch (const ParseError &e) {
    if (e.message.find("format_version") != std::string::npos &&
        e.message.find("is not supported") != std::string::npos)
      return FileError::version(e.message);
    return FileError::format(e.message);
  } catch (const json::parse_error &e) {
    return FileError::format(std::string("manifest: invalid JSON: ") +
                             e.what());
  } catch (const std::exception &e) {
    return FileError::format(std::string("manifest: ") + e.what());
  }
}

std::string serializeManifest(const Manifest &m, std::string &out) {
  if (std::string why = validateManifest(m); !why.empty())
    return why;
  try {
    json root;
    root["format"] = kManifestFormat;
    root["format_version"] = m.formatVersion;
    root["compiler_version"] = m.compilerVersion;
    root["target"] = {{"kind", m.target.kind},
                      {"cpu", m.target.cpu},
                      {"features", m.target.features}};
    if (!m.target.descriptionJson.empty())
      root["target"]["description"] = json::parse(m.target.descriptionJson);
    root["entry"] = m.entry;
    json buffers = json::array();
    for (const ManifestBuffer &b : m.buffers) {
      json jb;
      jb["name"] = b.name;
      jb["kind"] = bufferKindName(b.kind);
      if (b.kind == BufferKind::TensorMap) {
        const ManifestTensorMap &t = b.tensorMap;
        json jt;
        jt["source"] = t.source;
        jt["dtype"] = dtypeName(t.dtype);
        if (t.offset)
          jt["offset"] = t.offset;
        jt["dims"] = t.dims;
        jt["strides"] = t.strides;
        jt["box"] = t.box;
        if (t.swizzle)
          jt["swizzle"] = t.swizzle;
        jb["tensor_map"] = std::move(jt);
      } else if (b.sizedInBytes()) {
        jb["bytes"] = b.bytes;
      } else {
        jb["dtype"] = dtypeName(b.dtype);
        jb["shape"] = b.shape;
      }
      if (b.role != BufferRole::None)
        jb["role"] = bufferRoleName(b.role);
      if (b.sequence)
        jb["sequence"] = *b.sequence;
      if (b.sequenceSplit)
        jb["sequence_split"] = b.sequenceSplit;
      buffers.push_back(std::move(jb));
    }
    root["buffers"] = std::move(buffers);
    json kernels = json::array();
    for (const ManifestKernel &k : m.kernels) {
      json jk;
      jk["symbol"] = k.symbol;
      jk["workgroups"] = k.workgroups;
      jk["buffers"] = k.buffers;
      jk["schedule"] = json::parse(k.scheduleJson);
      if (k.generator != "mlir")
        jk["generator"] = k.generator;
      if (k.hasRows())
        jk["rows"] = {{"grid", k.rowsGrid},
                      {"batch", k.rowsBatch},
                      {"row", k.rowsRow},
                      {"tile", k.rowsTile}};
      if (!k.maxLength.empty())
        jk["max_length"] = k.maxLength;
      if (k.hasWrites)
        jk["writes"] = k.writes;
      if (k.initializer)
        jk["initializer"] = true;
      if (k.isCollective())
        jk["all_reduce"] = {{"ranks", k.allReduce},
                            {"dtype", dtypeName(k.allReduceDtype)}};
      if (k.isCollective() && k.gatherBlocks != 0)
        jk["all_reduce"]["gather_blocks"] = k.gatherBlocks;
      if (m.target.kind == "cuda") {
        jk["grid"] = k.grid;
        jk["block"] = k.block;
        jk["shared_bytes"] = k.sharedBytes;
      }
      kernels.push_back(std::move(jk));
    }
    root["kernels"] = std::move(kernels);
    json code = json::object();
    for (const auto &[section, hash] : m.codeSha256)
      code[section] = hash;
    root["code_sha256"] = std::move(code);
    if (!m.modelJson.empty())
      root["model"] = json::parse(m.modelJson);
    if (m.packedSequences)
      root["sequence_layout"] = "packed";
    if (m.products != "f32")
      root["products"] = m.products;
    out = root.dump(2) + "\n";
    return "";
  } catch (const std::exception &e) {
    return std::string("manifest: cannot serialize: ") + e.what();
  }
}

} // namespace linformer
