#include "store/KernelCode.h"

#include "base/DType.h"

#include <climits>

#include "store/Sha256.h"

namespace opgen::db {

namespace {

constexpr size_t kMaxDims = 16;

// A positive decimal extent below 2^31 (Halide's extents are int32), digits only.
std::optional<int64_t> extent(const std::string &text) {
    if (text.empty() || text.size() > 10) {
        return std::nullopt;
    }
    int64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        value = value * 10 + (c - '0');
    }
    if (value < 1 || value > INT_MAX) {
        return std::nullopt;
    }
    return value;
}

std::optional<CodeArgument> parse_argument(const std::string &text) {
    std::optional<ArgumentFields> fields = split_argument(text);
    if (!fields) {
        return std::nullopt;
    }
    CodeArgument argument{fields->name, fields->is_output, fields->dtype, {}};
    // A zero-dimensional tensor (a scalar) has an empty list.
    std::vector<std::string> dims = fields->dims.empty() ? std::vector<std::string>{} : split_fields(fields->dims, ',');
    if (dims.size() > kMaxDims) {
        return std::nullopt;
    }
    for (const std::string &d : dims) {
        std::optional<int64_t> value = extent(d);
        if (!value) {
            return std::nullopt;
        }
        argument.dims.push_back(*value);
        // Halide's strides and the kernel's indices are int32: the whole tensor must fit.
        if (argument.elements() > INT_MAX) {
            return std::nullopt;
        }
    }
    return argument;
}

} // namespace

std::vector<std::string> split_fields(const std::string &text, char separator) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) {
            return parts;
        }
        start = end + 1;
    }
}

bool is_code_dtype(const std::string &dtype) {
    return dtype_from_name(dtype).has_value();
}

std::optional<ArgumentFields> split_argument(const std::string &text) {
    std::vector<std::string> fields = split_fields(text, ':');
    if (fields.size() != 4 || fields[0].empty() || (fields[1] != "in" && fields[1] != "out")) {
        return std::nullopt;
    }
    if (!is_code_dtype(fields[2])) {
        return std::nullopt;
    }
    return ArgumentFields{fields[0], fields[1] == "out", fields[2], fields[3]};
}

int64_t CodeArgument::elements() const {
    int64_t n = 1;
    for (int64_t d : dims) {
        n *= d;
    }
    return n;
}

std::string code_digest(const KernelCode &code) {
    Sha256 hash;
    // Each field ends in a NUL, which none contains, so no two codes hash the same text.
    for (const std::string &field :
         {std::string("opgen-kernel-code"), code.format, std::to_string(code.abi_version),
          code.halide_target, code.cpu_features, code.halide_version, code.function,
          code.signature, code.schedule_json, std::to_string(code.size)}) {
        hash.add(field.data(), field.size() + 1);
    }
    if (code.generic) {
        for (const std::string &field :
             {std::string("generic"), code.symbols, code.fixed, code.defaults}) {
            hash.add(field.data(), field.size() + 1);
        }
    }
    hash.add(code.bytes.data(), code.bytes.size());
    return hash.hex();
}

bool code_matches_itself(const KernelCode &code) {
    return code.size >= 0 && uint64_t(code.size) == code.bytes.size() && code_digest(code) == code.digest;
}

std::optional<std::vector<CodeArgument>> parse_signature(const std::string &signature) {
    if (signature.empty()) {
        return std::nullopt;
    }
    std::vector<std::string> parts = split_fields(signature, ';');
    if (parts.size() > kMaxCallArguments) {
        return std::nullopt;
    }
    std::vector<CodeArgument> arguments;
    for (const std::string &part : parts) {
        std::optional<CodeArgument> argument = parse_argument(part);
        if (!argument) {
            return std::nullopt;
        }
        arguments.push_back(std::move(*argument));
    }
    for (size_t i = 0; i + 1 < arguments.size(); i++) {
        if (arguments[i].is_output) {
            return std::nullopt;
        }
    }
    if (!arguments.back().is_output) {
        return std::nullopt;
    }
    return arguments;
}

std::string signature_text(const std::vector<CodeArgument> &arguments) {
    std::string text;
    for (const CodeArgument &a : arguments) {
        text += text.empty() ? "" : ";";
        text += a.name + (a.is_output ? ":out:" : ":in:") + a.dtype + ":";
        for (size_t i = 0; i < a.dims.size(); i++) {
            text += (i ? "," : "") + std::to_string(a.dims[i]);
        }
    }
    return text;
}

} // namespace opgen::db
