// The signature of a shape-generic kernel (KernelCode::generic) and its binding to one shape.
//
// A generic signature is an exact one (KernelCode.h) whose dims are integer expressions of the
// kernel's symbols instead of numbers: "X:in:f32:N,C,H,W;Wt:in:f32:F,C,3,3;Y:out:f32:N,F,((H+2)-2-1)/1+1,W".
// An expression has decimal integers, symbol names, + - * / (division rounds down, as Halide's),
// unary minus, parentheses and max(a, b), min(a, b). db knows no op definitions: everything a
// runtime needs to call the kernel at a shape (each tensor's dims) is in the row itself.
#ifndef OPGEN_RUNTIME_GENERIC_SIGNATURE_H
#define OPGEN_RUNTIME_GENERIC_SIGNATURE_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/KernelCode.h"

namespace opgen::db {

// A generic signature's argument: the name, direction, dtype and one expression per dim.
struct GenericArgument {
    std::string name;
    bool is_output = false;
    std::string dtype;
    std::vector<std::string> dims;  // outermost first
};

// Parses a generic signature; nullopt when it is not one (as parse_signature, with every dim an
// expression whose names are all in `symbols`).
std::optional<std::vector<GenericArgument>> parse_generic_signature(
    const std::string &signature, const std::vector<std::string> &symbols);

// Evaluates an expression at `values`; nullopt when it does not parse, names something missing,
// divides by zero or overflows 64 bits.
std::optional<int64_t> eval_size_expression(const std::string &text,
                                            const std::map<std::string, int64_t> &values);

// A generic kernel bound to one shape: the canonical shape (symbols and fixed values, names
// sorted: "K=5,M=7,N=9") and the arguments with numeric dims.
struct GenericBinding {
    std::string canonical;
    std::vector<CodeArgument> arguments;
};

// Binds generic `code` to `shape` ("M=7,N=9,K=5"). The shape must give every symbol (1 to
// 2^31-1) and nothing else but the fixed names, each with the fixed value (a fixed name left out
// takes the op's default, which must be the fixed value); every dim must come out in 1..2^31-1
// and every tensor below 2^31 elements. nullopt, with `why` set when given, when it cannot serve
// the shape or its fields do not parse.
std::optional<GenericBinding> bind_generic(const KernelCode &code, const std::string &shape,
                                           std::string *why = nullptr);

// Splits "a,b" into names and "A=1,B=2" into values (nullopt for malformed text).
std::vector<std::string> split_names(const std::string &text);
std::optional<std::map<std::string, int64_t>> parse_values(const std::string &text);

} // namespace opgen::db

#endif
