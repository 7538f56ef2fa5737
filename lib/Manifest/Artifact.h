//===- Artifact.h - The .lfa artifact container -----------------*- C++ -*-===//
//
// An artifact (.lfa) is one file that carries everything the runtime needs
// to run a compiled model except the weights: the manifest (JSON), the CPU
// kernels (an ELF shared object) and, later, device binaries. This header
// has both sides: the compiler writes artifacts with ArtifactWriter, the
// runtime reads them with Artifact.
//
// Layout (all integers little-endian):
//
//   offset 0   char magic[8]            "LFARTIF1"
//   offset 8   u32  format_version      1
//   offset 12  u32  section_count
//   offset 16  section_count entries of 48 bytes:
//                char name[32]          1..31 bytes, NUL-padded
//                u64  offset            from the start of the file
//                u64  size              bytes
//   payloads at their offsets (the writer aligns each to 64 bytes)
//
// Known sections: "manifest" (UTF-8 JSON, required), "cpu.so" (the CPU
// kernels, required for target kind cpu), "cuda.sm_90.cubin" and friends.
// Readers ignore sections they do not know.
//
// No exceptions cross this interface (the compiler builds without them).
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_MANIFEST_ARTIFACT_H
#define LINFORMER_LIB_MANIFEST_ARTIFACT_H

#include "lib/Manifest/Common.h"
#include "lib/Manifest/MappedFile.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace linformer {

inline constexpr char kArtifactMagic[8] = {'L', 'F', 'A', 'R',
                                           'T', 'I', 'F', '1'};
inline constexpr uint32_t kArtifactFormatVersion = 1;
inline constexpr size_t kArtifactHeaderSize = 16;
inline constexpr size_t kArtifactEntrySize = 48;
inline constexpr size_t kArtifactMaxSectionName = 31;
/// Payload alignment the writer uses, so an mmapped section can be used in
/// place by code that wants cache-line-aligned data.
inline constexpr size_t kArtifactAlignment = 64;

inline constexpr const char *kManifestSection = "manifest";
inline constexpr const char *kCpuObjectSection = "cpu.so";

struct ArtifactSection {
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// A validated, read-only artifact. The whole file is mapped; section views
/// stay valid for the lifetime of the Artifact.
class Artifact {
public:
  /// Maps and validates the file at `path`.
  static FileError open(const std::string &path, Artifact &out);
  /// Validates an in-memory image (copied). `what` names it in messages.
  static FileError fromBytes(std::string_view bytes, Artifact &out,
                             const std::string &what = "artifact");

  uint32_t formatVersion() const { return version_; }
  const std::vector<ArtifactSection> &sections() const { return sections_; }
  /// Null when there is no such section.
  const ArtifactSection *find(std::string_view name) const;
  /// The section's bytes; empty view when absent.
  std::string_view section(std::string_view name) const;

private:
  FileError parse(const std::string &what);

  MappedFile file_;
  /// Backing store for fromBytes; a vector because moving it keeps the heap
  /// pointer data_ refers to (a std::string's small buffer would move).
  std::vector<uint8_t> owned_;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  uint32_t version_ = 0;
  std::vector<ArtifactSection> sections_;
};

/// Builds an artifact image section by section. The compiler's side of the
/// format: addSection() checks names, write()/serialize() lay the payloads out
/// 64-byte aligned in insertion order.
class ArtifactWriter {
public:
  /// Returns "" or why the section cannot be added (bad or duplicate name).
  std::string addSection(std::string name, std::string payload);
  /// The complete file image.
  std::string serialize() const;
  /// Writes the image atomically (temp file + rename); "" or an error.
  std::string write(const std::string &path) const;

private:
  std::vector<std::pair<std::string, std::string>> sections_;
};

} // namespace linformer

#endif // LINFORMER_LIB_MANIFEST_ARTIFACT_H
