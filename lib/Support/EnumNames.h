//===- EnumNames.h - an enum's spellings as one table -----------*- C++ -*-===//
//
// An enum that is written to and read from text (manifests, schedule files,
// model descriptions) keeps its spellings in one table, which both
// directions read: the name of a value and the value of a name can then
// never disagree, and a new value is one line.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_SUPPORT_ENUMNAMES_H
#define LINFORMER_LIB_SUPPORT_ENUMNAMES_H

#include <cstddef>
#include <string_view>

namespace linformer {

template <typename E> struct EnumName {
  E value;
  const char *name;
};

/// The spelling of `value` in `table`, or `fallback` when it has none.
template <typename E, size_t N>
constexpr const char *enumName(const EnumName<E> (&table)[N], E value,
                               const char *fallback = "?") {
  for (const EnumName<E> &e : table)
    if (e.value == value)
      return e.name;
  return fallback;
}

/// The value spelled `name` in `table`; false (and `out` untouched) when no
/// entry is spelled so.
template <typename E, size_t N>
constexpr bool parseEnum(const EnumName<E> (&table)[N], std::string_view name,
                         E &out) {
  for (const EnumName<E> &e : table)
    if (name == e.name) {
      out = e.value;
      return true;
    }
  return false;
}

} // namespace linformer

#endif // LINFORMER_LIB_SUPPORT_ENUMNAMES_H
