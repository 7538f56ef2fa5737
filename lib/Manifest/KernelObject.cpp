//===- KernelObject.cpp - What a kernel object states about itself --------===//
//
// A reader for the part of ELF the dynamic loader uses: the program headers,
// the dynamic section, the dynamic symbol table (sized through DT_GNU_HASH,
// as the loader sees it) and the relocation tables. Every offset and size
// comes from the file, so every read is bounds-checked, every loop is bounded
// by the file size, and addresses are mapped to file offsets only through
// PT_LOAD segments.
//
//===----------------------------------------------------------------------===//

#include "lib/Manifest/KernelObject.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace linformer {

namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
constexpr uint32_t kIrelative = R_X86_64_IRELATIVE;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
constexpr uint32_t kIrelative = R_AARCH64_IRELATIVE;
#else
constexpr uint16_t kHostMachine = EM_NONE;
constexpr uint32_t kIrelative = ~0u;
#endif

/// Libraries a kernel object may depend on: generated code calls memcpy,
/// memset and libm's functions, nothing else.
bool isAllowedDependency(std::string_view name) {
  return name == "libc.so.6" || name == "libm.so.6" || name == "libmvec.so.1";
}

std::string hex(uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

/// The object's image and what the steps of inspectKernelObject have read
/// from it so far, each step a method returning the first problem.
struct Inspector {
  std::string_view img;
  const std::string &what;
  std::vector<Elf64_Phdr> loads;
  Elf64_Phdr dyn{};
  /// The dynamic section's tags (but DT_NEEDED) and its DT_NEEDED names.
  std::map<int64_t, uint64_t> tags;
  std::vector<uint64_t> needed;
  uint64_t strOff = 0, strSize = 0;
  uint64_t symCount = 0, symOff = 0;
  /// The library each version index of DT_VERSYM names.
  std::map<uint16_t, std::string_view> versionFile;
  uint64_t versymOff = 0;
  bool haveVersym = false;
  /// Defined symbols by name.
  std::map<std::string_view, Elf64_Sym> defined;

  Inspector(std::string_view img, const std::string &what)
      : img(img), what(what) {}

  FileError bad(const std::string &m) const {
    return FileError::format(what + ": " + m);
  }

  /// Copies a T from file offset `off`; false when it does not fit.
  template <typename T> bool read(uint64_t off, T &out) const {
    if (off > img.size() || sizeof(T) > img.size() - off)
      return false;
    std::memcpy(&out, img.data() + off, sizeof(T));
    return true;
  }

  /// The file offset of [vaddr, vaddr + size) if one PT_LOAD segment holds
  /// it in its file-backed part.
  bool toOffset(uint64_t vaddr, uint64_t size, uint64_t &off) const {
    for (const Elf64_Phdr &p : loads)
      if (vaddr >= p.p_vaddr && vaddr - p.p_vaddr <= p.p_filesz &&
          size <= p.p_filesz - (vaddr - p.p_vaddr)) {
        off = p.p_offset + (vaddr - p.p_vaddr);
        return true;
      }
    return false;
  }

  /// The NUL-terminated name at `off` of the dynamic string table.
  bool name(uint64_t off, std::string_view &s) const {
    if (off >= strSize)
      return false;
    const char *p = img.data() + strOff + off;
    const void *nul = std::memchr(p, 0, strSize - off);
    if (!nul)
      return false;
    s = std::string_view(p, size_t(static_cast<const char *>(nul) - p));
    return true;
  }

  FileError readHeader(Elf64_Ehdr &eh) const;
  FileError readSegments(const Elf64_Ehdr &eh);
  FileError readDynamicSection();
  FileError checkDependencies();
  FileError checkRelocations(int64_t tableTag, int64_t sizeTag,
                             uint64_t entSize);
  FileError checkAllRelocations();
  FileError countSymbols();
  FileError readVersionNeeds();
  FileError readSymbols();
  FileError readKernelRecord(const std::string &kernel, KernelAbi &k) const;
};

/// An ELF64 little-endian shared object for this machine.
FileError Inspector::readHeader(Elf64_Ehdr &eh) const {
  if (!read(0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return bad("not an ELF object");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return bad("not a 64-bit little-endian ELF object");
  if (eh.e_type != ET_DYN)
    return bad("not a shared object (ELF type " + std::to_string(eh.e_type) +
               ")");
  if (eh.e_machine != kHostMachine)
    return bad("built for ELF machine " + std::to_string(eh.e_machine) +
               ", this runtime runs on machine " +
               std::to_string(kHostMachine));
  if (eh.e_phentsize != sizeof(Elf64_Phdr))
    return bad("unexpected program header size " +
               std::to_string(eh.e_phentsize));
  return {};
}

/// Segments: the loads (for address mapping) and the one dynamic section.
FileError Inspector::readSegments(const Elf64_Ehdr &eh) {
  bool haveDyn = false;
  for (uint64_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr p;
    if (!read(eh.e_phoff + i * sizeof(Elf64_Phdr), p))
      return bad("program header " + std::to_string(i) + " is out of bounds");
    if (p.p_type == PT_LOAD) {
      if (p.p_offset > img.size() || p.p_filesz > img.size() - p.p_offset)
        return bad("segment " + std::to_string(i) + " lies outside the file");
      loads.push_back(p);
    } else if (p.p_type == PT_DYNAMIC) {
      if (haveDyn)
        return bad("two dynamic segments");
      dyn = p;
      haveDyn = true;
    }
  }
  if (!haveDyn)
    return bad("no dynamic segment");
  return {};
}

/// The dynamic section: what the loader will do with the object. No code
/// may run at load or unload, no audit or filter library, and the tables
/// the later steps read must be there.
FileError Inspector::readDynamicSection() {
  const uint64_t maxEntries = dyn.p_filesz / sizeof(Elf64_Dyn);
  for (uint64_t i = 0; i < maxEntries; ++i) {
    Elf64_Dyn d;
    if (!read(dyn.p_offset + i * sizeof(Elf64_Dyn), d))
      return bad("the dynamic section is out of bounds");
    if (d.d_tag == DT_NULL)
      break;
    switch (d.d_tag) {
    case DT_INIT:
    case DT_FINI:
      return bad("has an initializer or finalizer (dynamic tag " +
                 std::to_string(d.d_tag) +
                 "): it would run code when loaded or unloaded");
    case DT_INIT_ARRAYSZ:
    case DT_FINI_ARRAYSZ:
    case DT_PREINIT_ARRAYSZ:
      if (d.d_un.d_val != 0)
        return bad("has constructors or destructors (dynamic tag " +
                   std::to_string(d.d_tag) +
                   "): they would run code when loaded or unloaded");
      break;
    case DT_AUDIT:
    case DT_DEPAUDIT:
    case DT_AUXILIARY:
    case DT_FILTER:
      return bad("names an audit or filter library (dynamic tag " +
                 hex(uint64_t(d.d_tag)) + ")");
    case DT_NEEDED:
      needed.push_back(d.d_un.d_val);
      break;
    default:
      tags[d.d_tag] = d.d_un.d_val;
    }
  }
  for (int64_t required : {int64_t(DT_STRTAB), int64_t(DT_STRSZ),
                           int64_t(DT_SYMTAB), int64_t(DT_GNU_HASH)})
    if (!tags.count(required))
      return bad("the dynamic section lacks tag " + hex(uint64_t(required)));
  if (tags.count(DT_SYMENT) && tags[DT_SYMENT] != sizeof(Elf64_Sym))
    return bad("unexpected symbol entry size " +
               std::to_string(tags[DT_SYMENT]));
  strSize = tags[DT_STRSZ];
  if (!toOffset(tags[DT_STRTAB], strSize, strOff))
    return bad("the string table is out of bounds");
  return {};
}

/// Every DT_NEEDED library is one generated code may call.
FileError Inspector::checkDependencies() {
  for (uint64_t off : needed) {
    std::string_view lib;
    if (!name(off, lib))
      return bad("a DT_NEEDED name is out of bounds");
    if (!isAllowedDependency(lib))
      return bad("depends on '" + std::string(lib) +
                 "'; kernel objects may only depend on libc and libm");
  }
  return {};
}

/// Relocations: IRELATIVE ones call an IFUNC resolver at load.
FileError Inspector::checkRelocations(int64_t tableTag, int64_t sizeTag,
                                      uint64_t entSize) {
  if (!tags.count(tableTag) || !tags.count(sizeTag))
    return {};
  uint64_t size = tags[sizeTag], off = 0;
  if (!toOffset(tags[tableTag], size, off))
    return bad("relocation table " + hex(uint64_t(tableTag)) +
               " is out of bounds");
  for (uint64_t at = 0; at + entSize <= size; at += entSize) {
    uint64_t info = 0;
    read(off + at + 8, info);
    if (uint32_t(info & 0xffffffffu) == kIrelative)
      return bad("has an IFUNC relocation: it would run code when loaded");
  }
  return {};
}

FileError Inspector::checkAllRelocations() {
  if (FileError err = checkRelocations(DT_RELA, DT_RELASZ, sizeof(Elf64_Rela)))
    return err;
  if (FileError err = checkRelocations(DT_REL, DT_RELSZ, sizeof(Elf64_Rel)))
    return err;
  if (tags.count(DT_JMPREL))
    return checkRelocations(DT_JMPREL, DT_PLTRELSZ,
                            tags.count(DT_PLTREL) && tags[DT_PLTREL] == DT_REL
                                ? sizeof(Elf64_Rel)
                                : sizeof(Elf64_Rela));
  return {};
}

/// The symbol count, as the loader's GNU hash lookup bounds it: one past
/// the end of the longest chain.
FileError Inspector::countSymbols() {
  uint64_t hashOff = 0;
  uint32_t header[4];
  if (!toOffset(tags[DT_GNU_HASH], sizeof(header), hashOff) ||
      !read(hashOff, header))
    return bad("the GNU hash table is out of bounds");
  const uint64_t nbuckets = header[0], symoffset = header[1],
                 bloomWords = header[2];
  const uint64_t bucketsOff = hashOff + 16 + bloomWords * 8;
  if (nbuckets == 0 || bloomWords > img.size() || nbuckets > img.size() ||
      bucketsOff > img.size() || nbuckets * 4 > img.size() - bucketsOff)
    return bad("the GNU hash table is malformed");
  const uint64_t chainsOff = bucketsOff + nbuckets * 4;
  symCount = symoffset;
  for (uint64_t b = 0; b < nbuckets; ++b) {
    uint32_t start = 0;
    read(bucketsOff + 4 * b, start);
    if (start == 0)
      continue;
    if (start < symoffset)
      return bad("the GNU hash table is malformed");
    for (uint64_t i = start;; ++i) {
      uint32_t chain = 0;
      if (i - symoffset > img.size() / 4 ||
          !read(chainsOff + 4 * (i - symoffset), chain))
        return bad("the GNU hash table is malformed");
      if (chain & 1) {
        symCount = std::max(symCount, i + 1);
        break;
      }
    }
  }
  if (symCount > img.size() / sizeof(Elf64_Sym))
    return bad("the symbol table is out of bounds");
  if (!toOffset(tags[DT_SYMTAB], symCount * sizeof(Elf64_Sym), symOff))
    return bad("the symbol table is out of bounds");
  return {};
}

/// Version needs: which library each version index of DT_VERSYM names.
/// glibc versions every symbol it exports, so a reference it satisfies
/// carries one of its versions; an unversioned reference could be bound to
/// whatever the process happens to export.
FileError Inspector::readVersionNeeds() {
  if (tags.count(DT_VERNEED)) {
    uint64_t count = tags.count(DT_VERNEEDNUM) ? tags[DT_VERNEEDNUM] : 0;
    uint64_t at = 0;
    if (!toOffset(tags[DT_VERNEED], sizeof(Elf64_Verneed), at))
      return bad("the version needs are out of bounds");
    for (uint64_t n = 0; n < count && n < img.size(); ++n) {
      Elf64_Verneed vn;
      if (!read(at, vn))
        return bad("the version needs are out of bounds");
      std::string_view file;
      if (!name(vn.vn_file, file))
        return bad("a version need names no valid file");
      uint64_t aux = at + vn.vn_aux;
      for (uint64_t a = 0; a < vn.vn_cnt && a < img.size(); ++a) {
        Elf64_Vernaux va;
        if (!read(aux, va))
          return bad("the version needs are out of bounds");
        versionFile[uint16_t(va.vna_other & 0x7fff)] = file;
        if (!va.vna_next)
          break;
        aux += va.vna_next;
      }
      if (!vn.vn_next)
        break;
      at += vn.vn_next;
    }
  }
  haveVersym =
      tags.count(DT_VERSYM) &&
      toOffset(tags[DT_VERSYM], symCount * sizeof(Elf64_Half), versymOff);
  if (tags.count(DT_VERSYM) && !haveVersym)
    return bad("the symbol version table is out of bounds");
  return {};
}

/// Defined symbols by name; IFUNC resolvers run at relocation time.
/// Undefined ones must come from the libraries allowed above.
FileError Inspector::readSymbols() {
  for (uint64_t i = 0; i < symCount; ++i) {
    Elf64_Sym s;
    read(symOff + i * sizeof(Elf64_Sym), s);
    if (s.st_shndx == SHN_UNDEF) {
      if (i == 0 || s.st_name == 0)
        continue;
      std::string_view symName;
      if (!name(s.st_name, symName))
        return bad("symbol " + std::to_string(i) + " has no valid name");
      Elf64_Half version = 0;
      if (haveVersym)
        read(versymOff + i * sizeof(Elf64_Half), version);
      auto file = versionFile.find(uint16_t(version & 0x7fff));
      if (file == versionFile.end())
        return bad("needs symbol '" + std::string(symName) +
                   "', which no version of libc, libm or libmvec provides "
                   "(a compiler runtime helper?): the machine that runs the "
                   "artifact may lack it");
      if (!isAllowedDependency(file->second))
        return bad("needs symbol '" + std::string(symName) + "' from '" +
                   std::string(file->second) +
                   "'; kernel objects may only depend on libc and libm");
      continue;
    }
    std::string_view symName;
    if (!name(s.st_name, symName))
      return bad("symbol " + std::to_string(i) + " has no valid name");
    if (ELF64_ST_TYPE(s.st_info) == STT_GNU_IFUNC)
      return bad("symbol '" + std::string(symName) +
                 "' is an IFUNC: its resolver would run when loaded");
    defined[symName] = s;
  }
  return {};
}

/// `kernel`'s dispatch function and its ABI record: workgroups, buffer
/// sizes, packed flags and the length rule (rank, grid, batch, row, tile).
FileError Inspector::readKernelRecord(const std::string &kernel,
                                      KernelAbi &k) const {
  std::string dispatch = kernel + kDispatchSuffix, abi = kernel + kAbiSuffix;
  auto d = defined.find(dispatch);
  if (d == defined.end() || ELF64_ST_TYPE(d->second.st_info) != STT_FUNC)
    return bad("kernel '" + kernel + "' has no function '" + dispatch + "'");
  auto a = defined.find(abi);
  if (a == defined.end())
    return bad("kernel '" + kernel + "' has no '" + abi +
               "' record (an object from an older compiler?)");
  const Elf64_Sym &s = a->second;
  auto invalid = [&] {
    return bad("'" + abi + "' is not a valid kernel record");
  };
  uint64_t off = 0;
  if (ELF64_ST_TYPE(s.st_info) != STT_OBJECT || s.st_size % 8 != 0 ||
      s.st_size < 8 * kKernelAbiHeaderWords ||
      s.st_size > 8 * (kKernelAbiHeaderWords + kKernelAbiMaxArity) ||
      !toOffset(s.st_value, s.st_size, off))
    return invalid();
  std::vector<uint64_t> words(size_t(s.st_size / 8));
  std::memcpy(words.data(), img.data() + off, size_t(s.st_size));
  bool withFlags = words[0] == kKernelAbiMagicPacked;
  if (words[0] != kKernelAbiMagic && !withFlags)
    return bad("'" + abi + "' has a bad magic number");
  if (words[1] < 1 || words[1] > uint64_t(INT64_MAX) ||
      words[2] > words.size() - kKernelAbiHeaderWords)
    return invalid();
  k.workgroups = int64_t(words[1]);
  size_t bytesEnd = size_t(kKernelAbiHeaderWords + words[2]);
  k.bufferBytes.assign(words.begin() + kKernelAbiHeaderWords,
                       words.begin() + bytesEnd);
  k.packedBuffers.assign(k.bufferBytes.size(), false);
  if (withFlags) {
    if (words[2] > words.size() - bytesEnd)
      return invalid();
    for (size_t j = 0; j < size_t(words[2]); ++j) {
      if (words[bytesEnd + j] > 1)
        return invalid();
      k.packedBuffers[j] = words[bytesEnd + j] == 1;
    }
    bytesEnd += size_t(words[2]);
  }
  // The length rule: rank, grid, batch, row, tile.
  if (bytesEnd < words.size()) {
    uint64_t rank = words[bytesEnd];
    if (rank < 1 || rank > 16 || words.size() != bytesEnd + 1 + rank + 3)
      return invalid();
    for (uint64_t d = 0; d < rank; ++d) {
      if (words[bytesEnd + 1 + d] > uint64_t(INT64_MAX))
        return invalid();
      k.rowsGrid.push_back(int64_t(words[bytesEnd + 1 + d]));
    }
    size_t at = bytesEnd + 1 + rank;
    if (words[at] >= rank || words[at + 1] >= rank ||
        words[at + 2] > uint64_t(INT64_MAX))
      return invalid();
    k.rowsBatch = int64_t(words[at]);
    k.rowsRow = int64_t(words[at + 1]);
    k.rowsTile = int64_t(words[at + 2]);
  }
  k.raw.assign(img.data() + off, size_t(s.st_size));
  return {};
}

} // namespace

FileError inspectKernelObject(std::string_view image,
                              const std::vector<std::string> &kernels,
                              std::vector<KernelAbi> &out,
                              const std::string &what) {
  Inspector in(image, what);
  Elf64_Ehdr eh;
  if (FileError err = in.readHeader(eh))
    return err;
  if (FileError err = in.readSegments(eh))
    return err;
  if (FileError err = in.readDynamicSection())
    return err;
  if (FileError err = in.checkDependencies())
    return err;
  if (FileError err = in.checkAllRelocations())
    return err;
  if (FileError err = in.countSymbols())
    return err;
  if (FileError err = in.readVersionNeeds())
    return err;
  if (FileError err = in.readSymbols())
    return err;
  out.clear();
  for (const std::string &kernel : kernels) {
    KernelAbi k;
    if (FileError err = in.readKernelRecord(kernel, k))
      return err;
    out.push_back(std::move(k));
  }
  return {};
}

} // namespace linformer
