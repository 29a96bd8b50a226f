// libFuzzer target for the code loader (runtime/CodeLoader.h): whatever a corrupt kernel_code row holds,
// the loader refuses it with a DbError or loads it; it never crashes, hangs, trips a sanitizer or
// maps refused bytes. An input is a row: seven lines (format, ABI version, Halide target, CPU
// features, signature, size, digest) and then the code's bytes. When the first byte is odd the
// digest is recomputed over the row, so the checks behind the digest (format, ABI, target,
// signature, ELF headers, CPU features) see the corrupt fields too; such rows are only checked,
// never loaded, since a digest is integrity, not trust. Other rows go through load_kernel_code:
// a mutated blob keeps its seed's digest and must be refused. The seed is a real kernel row
// (scripts/fuzz.sh loader writes it); it loads only as far as the dynamic loader, which refuses
// it here for want of the Halide runtime, so no fuzzed byte ever runs. Build and run with
// scripts/fuzz.sh SECONDS loader.
//
// When the first byte has bit 1 set the row is shape-generic code (runtime/GenericSignature.h): five
// more lines follow the seven (symbols, fixed values, defaults, a shape to bind it to, and the
// schedule it was built from), and the generic signature's parser, the expression evaluator and
// bind_generic see them too; a binding that succeeds must give every dim within 1..2^31-1, and the
// lookup's register-tile overwork at that shape (runtime/GenericFit.h) must come out finite and >= 0.
// The second seed is a real generic row (`opgen db compile --generic` of the seed's matmul).
//
// Signed rows (runtime/CodeTrust.h): with bit 2 set two more lines follow, the signer's public key
// and the signature (as a row stores them); with bit 3 set the row is signed with the fuzzer's own
// key instead. Every row then goes through trust_refusal with that key trusted, as the lookup
// does before it loads anything: a row the fuzzer did not sign must never pass (no signature is
// forged from fuzzed text), one it signed must, and only rows that pass are loaded.
#include "runtime/CodeLoader.h"
#include "runtime/GenericFit.h"
#include "runtime/GenericSignature.h"
#include "runtime/HostCpu.h"
#include "runtime/CodeTrust.h"
#include "store/CodeSignature.h"
#include "store/KernelCache.h"
#include "store/KernelCode.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace opgen::db;

namespace {

void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "code_loader_fuzzer: invariant broken: %s\n", what);
        std::abort();
    }
}

// Reads the next line of the input (without its newline); the rest when there is none.
std::string next_line(const uint8_t *&data, size_t &size) {
    std::string line;
    while (size > 0) {
        char c = char(*data++);
        size--;
        if (c == '\n') break;
        line += c;
    }
    return line;
}

int64_t number(const std::string &text) {
    return std::strtoll(text.c_str(), nullptr, 10);
}

// The fuzzer's signing key, made once per process, and trusted alone.
const SigningKey &fuzzer_key() {
    static const SigningKey key = new_signing_key();
    return key;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const uint8_t flags = data[0];
    bool fix_digest = (flags & 1) != 0;
    bool generic = (flags & 2) != 0;
    data++;
    size--;
    KernelCode code;
    code.format = next_line(data, size);
    code.abi_version = number(next_line(data, size));
    code.halide_target = next_line(data, size);
    code.cpu_features = next_line(data, size);
    code.signature = next_line(data, size);
    code.size = number(next_line(data, size));
    code.digest = next_line(data, size);
    std::string shape;
    if (generic) {
        code.generic = true;
        code.symbols = next_line(data, size);
        code.fixed = next_line(data, size);
        code.defaults = next_line(data, size);
        shape = next_line(data, size);
        code.schedule_json = next_line(data, size);
    }
    bool fuzzed_signature = (flags & 4) != 0;
    bool signed_here = (flags & 8) != 0;
    if (fuzzed_signature) {
        code.signed_by = next_line(data, size);
        code.ed25519_signature = next_line(data, size);
    }
    code.function = "opgen_matmul";
    code.bytes.assign(data, data + size);
    if (code.size < 0 || code.size > int64_t(code.bytes.size()) + 16) code.size = int64_t(code.bytes.size());

    // The pieces the checks use, on their own.
    missing_cpu_features(code.cpu_features);
    if (auto arguments = parse_signature(code.signature)) {
        check(!arguments->empty() && arguments->back().is_output, "a parsed signature ends in its output");
        check(parse_signature(signature_text(*arguments)).has_value(), "a printed signature parses");
    }

    if (generic) {
        parse_generic_signature(code.signature, split_names(code.symbols));
        if (auto values = parse_values(shape)) eval_size_expression(code.signature, *values);
        if (auto binding = bind_generic(code, shape)) {
            for (const CodeArgument &a : binding->arguments) {
                for (int64_t d : a.dims) check(d >= 1 && d <= INT32_MAX, "a bound dim is within 1..2^31-1");
            }
            const std::vector<int64_t> &out = binding->arguments.back().dims;
            const std::vector<int64_t> dims(out.rbegin(), out.rend()), tiles = register_tiles(code.schedule_json);
            double overwork = register_tile_overwork(tiles, dims);
            check(std::isfinite(overwork) && overwork >= 0, "a bound shape's overwork is finite and >= 0");
            register_tiles_fit_dims(tiles, dims);
        }
    }

    if (fix_digest) {
        code.digest = code_digest(code);
    }
    const KernelKey key{"matmul", "fuzz", shape, "f32", "fuzz-target", "14", "fuzz"};
    if (signed_here) sign_code(key, code, fuzzer_key());
    TrustPolicy trust;
    trust.keys = {fuzzer_key().public_key};
    const std::string distrust = trust_refusal(key, code, trust);
    check(distrust.empty() == signed_here, "a row passes trust exactly when the trusted key signed it");
    if (!distrust.empty()) return 0;

    if (fix_digest) {
        std::string refusal = code_refusal(code);
        if (refusal.empty()) {
            check(uint64_t(code.size) == code.bytes.size(), "accepted code has its size");
            check(missing_cpu_features(code.cpu_features).empty(), "accepted code runs on this CPU");
        }
        return 0;
    }
    try {
        std::shared_ptr<const LoadedKernel> kernel = load_kernel_code(code, "fuzzed row");
        check(code_digest(code) == code.digest, "loaded code matches its digest");
        if (generic) bind_generic_kernel(kernel, code, shape);
    } catch (const DbError &) {
    }
    return 0;
}
