#include "runtime/GenericSignature.h"

#include <algorithm>
#include <cctype>
#include <climits>

namespace opgen::db {

namespace {

constexpr size_t kMaxDims = 16;
constexpr size_t kMaxExpressionLength = 256;

// Recursive descent over one size expression; any failure makes the whole value nullopt.
class SizeParser {
public:
    SizeParser(const std::string &text, const std::map<std::string, int64_t> *values)
        : text_(text), values_(values) {}

    std::optional<int64_t> whole() {
        std::optional<int64_t> v = sum();
        if (!v || pos_ != text_.size()) {
            return std::nullopt;
        }
        return v;
    }

private:
    const std::string &text_;
    const std::map<std::string, int64_t> *values_;  // nullptr: names parse but have value 1
    size_t pos_ = 0;
    int depth_ = 0;

    bool eat(char c) {
        if (pos_ < text_.size() && text_[pos_] == c) {
            pos_++;
            return true;
        }
        return false;
    }

    std::optional<int64_t> sum() {
        std::optional<int64_t> a = product();
        while (a && pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
            char op = text_[pos_++];
            std::optional<int64_t> b = product();
            int64_t r = 0;
            if (!b || (op == '+' ? __builtin_add_overflow(*a, *b, &r)
                                 : __builtin_sub_overflow(*a, *b, &r))) {
                return std::nullopt;
            }
            a = r;
        }
        return a;
    }

    std::optional<int64_t> product() {
        std::optional<int64_t> a = factor();
        while (a && pos_ < text_.size() && (text_[pos_] == '*' || text_[pos_] == '/')) {
            char op = text_[pos_++];
            std::optional<int64_t> b = factor();
            if (!b) {
                return std::nullopt;
            }
            int64_t r = 0;
            if (op == '*') {
                if (__builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
            } else {
                // Halide's division: rounds down for a positive divisor.
                if (*b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
                r = *a / *b;
                if ((*a % *b != 0) && ((*a < 0) != (*b < 0))) r--;
            }
            a = r;
        }
        return a;
    }

    std::optional<int64_t> factor() {
        if (++depth_ > 64) {
            return std::nullopt;
        }
        std::optional<int64_t> v = atom();
        depth_--;
        return v;
    }

    std::optional<int64_t> atom() {
        if (eat('-')) {
            std::optional<int64_t> a = factor();
            if (!a || *a == INT64_MIN) return std::nullopt;
            return -*a;
        }
        if (eat('(')) {
            std::optional<int64_t> a = sum();
            if (!a || !eat(')')) return std::nullopt;
            return a;
        }
        if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
            return number();
        }
        return name_or_call();
    }

    std::optional<int64_t> number() {
        int64_t v = 0;
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
            if (__builtin_mul_overflow(v, int64_t(10), &v) ||
                __builtin_add_overflow(v, int64_t(text_[pos_] - '0'), &v)) {
                return std::nullopt;
            }
            pos_++;
        }
        return v;
    }

    std::optional<int64_t> name_or_call() {
        size_t start = pos_;
        while (pos_ < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
            pos_++;
        }
        std::string name = text_.substr(start, pos_ - start);
        if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
            return std::nullopt;
        }
        if ((name == "max" || name == "min") && eat('(')) {
            std::optional<int64_t> a = sum();
            if (!a || !eat(',')) return std::nullopt;
            std::optional<int64_t> b = sum();
            if (!b || !eat(')')) return std::nullopt;
            return name == "max" ? std::max(*a, *b) : std::min(*a, *b);
        }
        if (!values_) {
            return 1;
        }
        auto it = values_->find(name);
        if (it == values_->end()) return std::nullopt;
        return it->second;
    }
};

// The names an expression reads (not max/min), for checking them against the symbols.
std::vector<std::string> names_in(const std::string &text) {
    std::vector<std::string> names;
    size_t i = 0;
    while (i < text.size()) {
        if (!std::isalpha(static_cast<unsigned char>(text[i])) && text[i] != '_') {
            i++;
            continue;
        }
        size_t start = i;
        while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
            i++;
        }
        std::string name = text.substr(start, i - start);
        if (!((name == "max" || name == "min") && i < text.size() && text[i] == '(')) {
            names.push_back(name);
        }
    }
    return names;
}

bool contains(const std::vector<std::string> &names, const std::string &name) {
    for (const std::string &n : names) {
        if (n == name) return true;
    }
    return false;
}

std::optional<GenericArgument> parse_generic_argument(const std::string &text,
                                                      const std::vector<std::string> &symbols) {
    std::optional<ArgumentFields> fields = split_argument(text);
    if (!fields) {
        return std::nullopt;
    }
    GenericArgument argument{fields->name, fields->is_output, fields->dtype, {}};
    argument.dims = fields->dims.empty() ? std::vector<std::string>{} : split_fields(fields->dims, ',');
    // A comma inside max(a,b) split the dim: join the parts back while parentheses are open.
    std::vector<std::string> dims;
    for (const std::string &part : argument.dims) {
        bool open = !dims.empty() && std::count(dims.back().begin(), dims.back().end(), '(') >
                                         std::count(dims.back().begin(), dims.back().end(), ')');
        if (open) {
            dims.back() += "," + part;
        } else {
            dims.push_back(part);
        }
    }
    if (dims.size() > kMaxDims) {
        return std::nullopt;
    }
    for (const std::string &d : dims) {
        if (d.size() > kMaxExpressionLength || !SizeParser(d, nullptr).whole()) {
            return std::nullopt;
        }
        for (const std::string &name : names_in(d)) {
            if (!contains(symbols, name)) return std::nullopt;
        }
    }
    argument.dims = dims;
    return argument;
}

// The request's values with the fixed names filled from the defaults; "" when it fits, else why.
std::string complete_shape(const KernelCode &code, std::map<std::string, int64_t> &values) {
    std::optional<std::map<std::string, int64_t>> fixed = parse_values(code.fixed);
    std::optional<std::map<std::string, int64_t>> defaults = parse_values(code.defaults);
    if (!fixed || !defaults) {
        return "its fixed values '" + code.fixed + "' or defaults '" + code.defaults + "' cannot be read";
    }
    std::vector<std::string> symbols = split_names(code.symbols);
    for (const auto &[name, value] : values) {
        if (!contains(symbols, name) && !fixed->count(name)) {
            return "it takes no size '" + name + "'";
        }
    }
    for (const std::string &s : symbols) {
        auto it = values.find(s);
        if (it == values.end() || it->second < 1 || it->second > INT_MAX) {
            return "the shape must give '" + s + "' from 1 to 2147483647";
        }
    }
    for (const auto &[name, value] : *fixed) {
        auto given = values.find(name);
        auto fallback = defaults->find(name);
        int64_t want = given != values.end() ? given->second
                       : fallback != defaults->end() ? fallback->second : value - 1;
        if (want != value) {
            return "it was compiled for " + name + "=" + std::to_string(value) + ", not " +
                   std::to_string(want);
        }
        values[name] = value;
    }
    return "";
}

} // namespace

std::vector<std::string> split_names(const std::string &text) {
    if (text.empty()) {
        return {};
    }
    return split_fields(text, ',');
}

std::optional<std::map<std::string, int64_t>> parse_values(const std::string &text) {
    std::map<std::string, int64_t> values;
    for (const std::string &raw : split_names(text)) {
        std::string part;
        for (char c : raw) {
            if (c != ' ') part += c;
        }
        size_t eq = part.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == part.size()) {
            return std::nullopt;
        }
        std::string digits = part.substr(eq + 1);
        bool negative = digits[0] == '-';
        if (negative) digits.erase(0, 1);
        if (digits.empty() || digits.size() > 12 ||
            digits.find_first_not_of("0123456789") != std::string::npos) {
            return std::nullopt;
        }
        int64_t value = std::stoll(digits);
        if (!values.emplace(part.substr(0, eq), negative ? -value : value).second) {
            return std::nullopt;
        }
    }
    return values;
}

std::optional<int64_t> eval_size_expression(const std::string &text,
                                            const std::map<std::string, int64_t> &values) {
    if (text.size() > kMaxExpressionLength) {
        return std::nullopt;
    }
    return SizeParser(text, &values).whole();
}

std::optional<std::vector<GenericArgument>> parse_generic_signature(
    const std::string &signature, const std::vector<std::string> &symbols) {
    if (signature.empty()) {
        return std::nullopt;
    }
    std::vector<std::string> parts = split_fields(signature, ';');
    if (parts.size() > kMaxCallArguments) {
        return std::nullopt;
    }
    std::vector<GenericArgument> arguments;
    for (const std::string &part : parts) {
        std::optional<GenericArgument> argument = parse_generic_argument(part, symbols);
        if (!argument) {
            return std::nullopt;
        }
        arguments.push_back(std::move(*argument));
    }
    for (size_t i = 0; i + 1 < arguments.size(); i++) {
        if (arguments[i].is_output) return std::nullopt;
    }
    if (!arguments.back().is_output) {
        return std::nullopt;
    }
    return arguments;
}

std::optional<GenericBinding> bind_generic(const KernelCode &code, const std::string &shape,
                                           std::string *why) {
    auto fail = [&](const std::string &reason) -> std::optional<GenericBinding> {
        if (why) *why = reason;
        return std::nullopt;
    };
    std::optional<std::map<std::string, int64_t>> values = parse_values(shape);
    if (!values) {
        return fail("shape '" + shape + "' is not NAME=INT pairs");
    }
    if (std::string problem = complete_shape(code, *values); !problem.empty()) {
        return fail(problem);
    }
    std::optional<std::vector<GenericArgument>> generic =
        parse_generic_signature(code.signature, split_names(code.symbols));
    if (!generic) {
        return fail("its signature '" + code.signature + "' cannot be read");
    }
    GenericBinding binding;
    for (const auto &[name, value] : *values) {
        binding.canonical += (binding.canonical.empty() ? "" : ",") + name + "=" + std::to_string(value);
    }
    for (const GenericArgument &g : *generic) {
        CodeArgument a{g.name, g.is_output, g.dtype, {}};
        for (const std::string &d : g.dims) {
            std::optional<int64_t> extent = eval_size_expression(d, *values);
            if (!extent || *extent < 1 || *extent > INT_MAX) {
                return fail("tensor '" + g.name + "' would have extent '" + d + "' = " +
                            (extent ? std::to_string(*extent) : "?") + " at " + binding.canonical);
            }
            a.dims.push_back(*extent);
            if (a.elements() > INT_MAX) {
                return fail("tensor '" + g.name + "' has 2^31 elements or more at " + binding.canonical);
            }
        }
        binding.arguments.push_back(std::move(a));
    }
    return binding;
}

} // namespace opgen::db
