// The element types of the op language and the one table of their names and sizes. The op language
// (core/Parser.h), the cache store (a key's dtype, a code row's arguments) and the lookup all read
// this table, so a type is added in one place (docs/design.md §6.1).
#ifndef OPGEN_BASE_DTYPE_H
#define OPGEN_BASE_DTYPE_H

#include <optional>
#include <string>
#include <vector>

namespace opgen {

enum class DType { F32, F16, I8, I32 };

struct DTypeInfo {
    DType type;
    const char *name;  // as written in op files and stored in cache keys
    int bytes;
};

// Every element type, in the order the language lists them.
inline const std::vector<DTypeInfo> &dtype_table() {
    static const std::vector<DTypeInfo> table = {
        {DType::F32, "f32", 4},
        {DType::F16, "f16", 2},
        {DType::I8, "i8", 1},
        {DType::I32, "i32", 4},
    };
    return table;
}

// The table's name of `t`: "f32", "f16", "i8", "i32".
inline const char *dtype_name(DType t) {
    for (const DTypeInfo &d : dtype_table()) {
        if (d.type == t) return d.name;
    }
    return "?";
}

// Bytes of one element of `t`.
inline int dtype_bytes(DType t) {
    for (const DTypeInfo &d : dtype_table()) {
        if (d.type == t) return d.bytes;
    }
    return 4;
}

// The type named `name`, or nullopt when the table has no such name.
inline std::optional<DType> dtype_from_name(const std::string &name) {
    for (const DTypeInfo &d : dtype_table()) {
        if (name == d.name) return d.type;
    }
    return std::nullopt;
}

// The names of every type, comma-separated with "or" before the last ("f32, f16, i8 or i32"), for
// messages.
inline std::string dtype_names_listed() {
    std::string s;
    const std::vector<DTypeInfo> &t = dtype_table();
    for (size_t i = 0; i < t.size(); i++) {
        if (i > 0) s += i + 1 == t.size() ? " or " : ", ";
        s += t[i].name;
    }
    return s;
}

}  // namespace opgen

#endif
