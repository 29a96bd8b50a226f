// libFuzzer target: any text given to parse_compute either parses or raises a UserError; it never
// crashes, hangs, overflows the stack, trips a sanitizer or raises anything else. What parses is
// pushed further: printed, hashed, parsed again with CRLF line endings, bound to a small shape,
// and evaluated by the reference interpreter at a few points, since those are the passes that walk
// what the parser accepted. Build and run with scripts/fuzz.sh.
#include "core/Parser.h"
#include "core/Reference.h"
#include "core/Shape.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

using namespace opgen;

namespace {

// Aborts with a message: libFuzzer records the input as a crash.
void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "parser_fuzzer: invariant broken: %s\n", what);
        std::abort();
    }
}

std::string printed(const ComputeDef &def) {
    std::string s;
    for (const auto &st : def.statements) {
        s += st.tensor + " " + reduce_name(st.reduce) + " " + to_string(st.body) + "\n";
        for (const auto &r : st.reduce_vars)
            s += r.name + ":" + to_string(r.extent) + "\n";
    }
    for (const auto &l : def.lets)
        s += l.name + "=" + to_string(l.value) + "\n";
    return s;
}

// Binds every parameter without a default to a small value taken from the input, and evaluates
// the output at its first and last points when the work is small.
void evaluate(const ComputeDef &def, const uint8_t *data, size_t size) {
    std::map<std::string, int64_t> given;
    size_t k = 0;
    for (const auto &p : def.params) {
        if (p.default_value)
            continue;
        given[p.name] = 1 + (size ? data[k++ % size] % 4 : 0);
    }
    BoundShape shape;
    try {
        shape = bind_shape(def, given, int64_t(1) << 20);
    } catch (const UserError &) {
        return;
    }
    // Bound the reference's work: every statement's points times its reduction domain.
    double work = 0;
    for (const auto &s : def.statements) {
        double points = double(shape.elements(s.tensor));
        for (const auto &r : s.reduce_vars)
            points *= double(shape.eval(r.extent));
        work += points;
    }
    if (work > 2e5)
        return;
    auto inputs = random_inputs(def, shape, 1);
    ReferenceEvaluator ref(def, shape, inputs);
    const std::string &out = def.output().name;
    std::vector<int64_t> first(shape.dims.at(out).size(), 0), last;
    for (int64_t d : shape.dims.at(out))
        last.push_back(d - 1);
    try {
        ref.value(out, first);
        ref.value(out, last);
    } catch (const UserError &) {
        // Reading a tensor outside its extent is the op's mistake, reported as such.
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string text(reinterpret_cast<const char *>(data), size);
    ComputeDef def;
    try {
        def = parse_compute(text, "fuzz.op");
    } catch (const UserError &e) {
        check(std::string(e.what()).rfind("fuzz.op:", 0) == 0, "a parse error names its file");
        return 0;
    }
    check(!def.statements.empty(), "a parsed op has statements");
    check(def.statements.back().tensor == def.output().name, "the last statement is the output");
    std::string once = printed(def);
    check(definition_hash(text).size() == 16, "the hash is 16 hex digits");

    // The same text with CRLF line endings parses to the same op with the same hash.
    if (text.find('\r') == std::string::npos) {
        std::string crlf;
        for (char c : text)
            crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
        ComputeDef again = parse_compute(crlf, "fuzz.op");
        check(printed(again) == once, "CRLF parses alike");
        check(definition_hash(crlf) == definition_hash(text), "CRLF hashes alike");
    }
    evaluate(def, data, size);
    return 0;
}
