// The element types of the op language and the one table of their names and sizes. The op language
// (core/Parser.h), the cache store (a key's dtype, a code row's arguments) and the lookup all read
// this table, so a type is added in one place (docs/design.md §6.1).
#ifndef OPGEN_BASE_DTYPE_H
#define OPGEN_BASE_DTYPE_H

#include <optional>
#include <string>
#include <vector>

namespace opgen {

enum class DType { F32, F16, I8, I32, U8, BF16, I64 };

// How a type's bits are read, as Halide's halide_type_code_t numbers them (base/ has no Halide).
enum class DTypeCode { Int = 0, UInt = 1, Float = 2, BFloat = 4 };

struct DTypeInfo {
    DType type;
    const char *name;  // as written in op files and stored in cache keys
    int bytes;
    DTypeCode code;
};

// Every element type, in the order the language lists them.
inline const std::vector<DTypeInfo> &dtype_table() {
    static const std::vector<DTypeInfo> table = {
        {DType::F32, "f32", 4, DTypeCode::Float},
        {DType::F16, "f16", 2, DTypeCode::Float},
        {DType::I8, "i8", 1, DTypeCode::Int},
        {DType::I32, "i32", 4, DTypeCode::Int},
        {DType::U8, "u8", 1, DTypeCode::UInt},
        {DType::BF16, "bf16", 2, DTypeCode::BFloat},
        {DType::I64, "i64", 8, DTypeCode::Int},
    };
    return table;
}

// The table's name of `t`: "f32", "f16", "i8", "i32", "u8", "bf16", "i64".
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

// How the bits of `t` are read (Int for an unknown type).
inline DTypeCode dtype_code(DType t) {
    for (const DTypeInfo &d : dtype_table()) {
        if (d.type == t) return d.code;
    }
    return DTypeCode::Int;
}

// Whether `t` is an integer type (i8, u8, i32, i64): computed and compared exactly.
inline bool dtype_is_integer(DType t) {
    return dtype_code(t) == DTypeCode::Int || dtype_code(t) == DTypeCode::UInt;
}

// The type named `name`, or nullopt when the table has no such name.
inline std::optional<DType> dtype_from_name(const std::string &name) {
    for (const DTypeInfo &d : dtype_table()) {
        if (name == d.name) return d.type;
    }
    return std::nullopt;
}

// The names of every type, comma-separated with "or" before the last ("f32, f16, i8, i32, u8, bf16 or i64"), for
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
