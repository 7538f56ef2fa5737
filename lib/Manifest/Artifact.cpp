//===- Artifact.cpp - The .lfa artifact container -------------------------===//
//
// Reading validates every byte the header claims before any section is
// handed out: magic, version, that the entry table fits, that each name is
// NUL-padded and unique, and that every payload lies inside the file after
// the table and overlaps no other. A corrupt or truncated artifact is thus
// reported with the section at fault instead of crashing a later stage.
//
//===----------------------------------------------------------------------===//

#include "lib/Manifest/Artifact.h"

#include <algorithm>
#include <cstring>

namespace linformer {

static uint32_t readU32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

static uint64_t readU64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

static void appendU32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(char((v >> (8 * i)) & 0xff));
}

static void appendU64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(char((v >> (8 * i)) & 0xff));
}

/// Printable section names in messages even when the file holds garbage.
static std::string quoteName(std::string_view name) {
  std::string s = "'";
  for (char c : name)
    s += (c >= 0x20 && c < 0x7f) ? c : '?';
  return s + "'";
}

static std::string validateSectionName(std::string_view name) {
  if (name.empty())
    return "section name is empty";
  if (name.size() > kArtifactMaxSectionName)
    return "section name " + quoteName(name) + " is longer than " +
           std::to_string(kArtifactMaxSectionName) + " bytes";
  for (char c : name)
    if (c < 0x21 || c > 0x7e)
      return "section name " + quoteName(name) +
             " has a character outside printable ASCII";
  return "";
}

FileError Artifact::open(const std::string &path, Artifact &out) {
  out = Artifact();
  if (FileError err = MappedFile::open(path, out.file_))
    return err;
  out.data_ = out.file_.data();
  out.size_ = out.file_.size();
  return out.parse("artifact '" + path + "'");
}

FileError Artifact::fromBytes(std::string_view bytes, Artifact &out,
                              const std::string &what) {
  out = Artifact();
  out.owned_.assign(bytes.begin(), bytes.end());
  static const uint8_t empty = 0;
  out.data_ = out.owned_.empty() ? &empty : out.owned_.data();
  out.size_ = out.owned_.size();
  return out.parse(what);
}

FileError Artifact::parse(const std::string &what) {
  if (size_ < kArtifactHeaderSize)
    return FileError::format(what + ": truncated header (" +
                             std::to_string(size_) + " bytes, need " +
                             std::to_string(kArtifactHeaderSize) + ")");
  if (std::memcmp(data_, kArtifactMagic, sizeof(kArtifactMagic)) != 0)
    return FileError::format(what + ": bad magic (not a linformer artifact; "
                                    "expected \"LFARTIF1\")");
  version_ = readU32(data_ + 8);
  if (version_ != kArtifactFormatVersion)
    return FileError::version(what + ": format_version " +
                              std::to_string(version_) +
                              " is not supported (this runtime reads " +
                              std::to_string(kArtifactFormatVersion) + ")");
  uint64_t count = readU32(data_ + 12);
  uint64_t tableEnd = kArtifactHeaderSize + count * kArtifactEntrySize;
  if (tableEnd > size_)
    return FileError::format(what + ": truncated section table (" +
                             std::to_string(count) + " sections need " +
                             std::to_string(tableEnd) + " bytes, file has " +
                             std::to_string(size_) + ")");
  sections_.clear();
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t *e = data_ + kArtifactHeaderSize + i * kArtifactEntrySize;
    const char *rawName = reinterpret_cast<const char *>(e);
    size_t len = strnlen(rawName, 32);
    std::string_view name(rawName, len);
    std::string prefix = what + ": section " + std::to_string(i) + " ";
    if (len == 32)
      return FileError::format(prefix + "name is not NUL-terminated");
    for (size_t j = len; j < 32; ++j)
      if (rawName[j] != 0)
        return FileError::format(prefix + quoteName(name) +
                                 " name is not NUL-padded");
    if (std::string why = validateSectionName(name); !why.empty())
      return FileError::format(prefix + why);
    ArtifactSection s{std::string(name), readU64(e + 32), readU64(e + 40)};
    if (s.offset < tableEnd || s.offset > size_ || s.size > size_ - s.offset)
      return FileError::format(
          prefix + quoteName(name) + " [" + std::to_string(s.offset) + ", +" +
          std::to_string(s.size) + ") is out of bounds (payloads lie in [" +
          std::to_string(tableEnd) + ", " + std::to_string(size_) + "))");
    for (const ArtifactSection &o : sections_)
      if (o.name == s.name)
        return FileError::format(prefix + quoteName(name) + " appears twice");
    sections_.push_back(std::move(s));
  }
  // Overlap check on offset-sorted copies; empty payloads overlap nothing.
  std::vector<const ArtifactSection *> sorted;
  for (const ArtifactSection &s : sections_)
    if (s.size)
      sorted.push_back(&s);
  std::sort(sorted.begin(), sorted.end(),
            [](auto *a, auto *b) { return a->offset < b->offset; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i - 1]->offset + sorted[i - 1]->size > sorted[i]->offset)
      return FileError::format(what + ": sections " +
                               quoteName(sorted[i - 1]->name) + " and " +
                               quoteName(sorted[i]->name) + " overlap");
  if (!find(kManifestSection))
    return FileError::format(what + ": no 'manifest' section");
  return {};
}

const ArtifactSection *Artifact::find(std::string_view name) const {
  for (const ArtifactSection &s : sections_)
    if (s.name == name)
      return &s;
  return nullptr;
}

std::string_view Artifact::section(std::string_view name) const {
  const ArtifactSection *s = find(name);
  if (!s)
    return {};
  return std::string_view(reinterpret_cast<const char *>(data_) + s->offset,
                          size_t(s->size));
}

std::string ArtifactWriter::addSection(std::string name, std::string payload) {
  if (std::string why = validateSectionName(name); !why.empty())
    return "artifact: " + why;
  for (const auto &s : sections_)
    if (s.first == name)
      return "artifact: section " + quoteName(name) + " added twice";
  sections_.emplace_back(std::move(name), std::move(payload));
  return "";
}

std::string ArtifactWriter::serialize() const {
  std::string out(kArtifactMagic, sizeof(kArtifactMagic));
  appendU32(out, kArtifactFormatVersion);
  appendU32(out, uint32_t(sections_.size()));
  auto align = [](uint64_t v) {
    return (v + kArtifactAlignment - 1) / kArtifactAlignment *
           kArtifactAlignment;
  };
  uint64_t offset =
      align(kArtifactHeaderSize + sections_.size() * kArtifactEntrySize);
  std::vector<uint64_t> offsets;
  for (const auto &[name, payload] : sections_) {
    std::string padded = name;
    padded.resize(32, '\0');
    out += padded;
    appendU64(out, offset);
    appendU64(out, payload.size());
    offsets.push_back(offset);
    offset = align(offset + payload.size());
  }
  for (size_t i = 0; i < sections_.size(); ++i) {
    out.resize(offsets[i], '\0');
    out += sections_[i].second;
  }
  return out;
}

std::string ArtifactWriter::write(const std::string &path) const {
  std::string image = serialize();
  FileError err = writeWholeFile(path, image.data(), image.size());
  return err.message;
}

} // namespace linformer
