// A tuned kernel's compiled code as the cache keeps it beside its schedule (table kernel_code):
// a position-independent ELF shared object holding one Halide ahead-of-time pipeline, compiled
// with Target::NoRuntime, so that its halide_* calls resolve against the one Halide runtime the
// lookup library carries (opgen_cache). The code was compiled elsewhere (codegen/CompiledCode.h);
// db only stores, checks and loads bytes, and never includes Halide.
//
// A shared object rather than a bare object file: the system's dynamic loader then does the
// relocation, symbol binding and initialisation it is built and tested for, and our own code only
// checks bytes and hands them over (CodeLoader.h). The digest covers every field below but itself,
// so a row edited after it was stored (bytes, size, required features, target) no longer matches.
#ifndef OPGEN_STORE_KERNEL_CODE_H
#define OPGEN_STORE_KERNEL_CODE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace opgen::db {

// The code ABI this build writes and loads: an ELF x86-64 shared object exporting
// `<function>_argv(void **)` that takes one halide_buffer_t * per argument of `signature`, in
// order, and calls the Halide 14 runtime for everything else. A change to any of that is a new
// number; code of another number is refused.
inline constexpr int kKernelCodeAbi = 1;
inline constexpr const char *kKernelCodeFormat = "elf-shared-object";
// The most arguments a kernel's signature may have (parse_signature).
inline constexpr size_t kMaxCallArguments = 64;

struct KernelCode {
    std::string format = kKernelCodeFormat;
    int64_t abi_version = kKernelCodeAbi;
    std::string halide_target;   // the Halide target it was compiled for, e.g. "x86-64-linux-avx2-fma-no_runtime"
    std::string cpu_features;    // the Halide features it needs from the CPU, comma-separated, e.g. "avx,avx2,fma"
    std::string halide_version;  // of the Halide that compiled it
    std::string function;        // the pipeline's name; the entry point is <function>_argv
    std::string signature;       // its arguments, see CodeArgument
    std::string schedule_json;   // the winner's schedule it was compiled from
    int64_t size = 0;            // bytes.size() when stored: a shorter blob was truncated
    std::string digest;          // code_digest() when stored
    std::vector<uint8_t> bytes;
    std::string created_at;      // ISO-8601 UTC; filled by put_code when empty
    // Who vouches for it (CodeSignature.h): the signer's public key ("ed25519:<hex>") and the
    // Ed25519 signature (hex) over the row's key and `digest`; both empty for unsigned code. Not
    // covered by the digest: signing adds them to code already stored.
    std::string signed_by;
    std::string ed25519_signature;
    // A shape-generic kernel (GenericCode.h) serves every shape of its op that has its `fixed`
    // values: its signature's dims are expressions of `symbols` ("M,K"), which the call's buffers
    // carry. An exact kernel leaves these empty and its dims are numbers.
    bool generic = false;
    std::string symbols;         // the parameters a call gives, comma-separated: "K,M,N"
    std::string fixed;           // the others' values it was compiled for: "KH=3,KW=3,pad=1"
    std::string defaults;        // the op's defaults, for requests that leave them out
};

// One argument of a kernel: "name:in:f32:64,128" (dims outermost first, as the op file's tensor
// is indexed; the data is dense and row-major). The output comes last.
struct CodeArgument {
    std::string name;
    bool is_output = false;
    std::string dtype;           // "f32"
    std::vector<int64_t> dims;   // outermost first
    int64_t elements() const;
};

// `text` split at every `separator` (an empty text gives one empty part).
std::vector<std::string> split_fields(const std::string &text, char separator);
// A dtype a kernel's argument may have: "f32", "i32", "i8", "f16".
bool is_code_dtype(const std::string &dtype);
// One argument of a signature, "name:in|out:dtype:dims", split into its fields, the first three
// checked: nullopt unless there are four fields, a name, a direction and a code dtype. `dims` is
// the fourth field as written (its parsing differs between exact and generic code).
struct ArgumentFields {
    std::string name;
    bool is_output = false;
    std::string dtype;
    std::string dims;
};
std::optional<ArgumentFields> split_argument(const std::string &text);

// The SHA-256 (hex) over a code's fields and bytes, all but `digest` and `created_at` (the generic
// fields only for generic code, so that exact code keeps the digest it was stored with).
std::string code_digest(const KernelCode &code);

// Whether `code` matches its own size and digest: what every cache checks before storing code.
bool code_matches_itself(const KernelCode &code);

// Parses a signature: arguments separated by ';'. nullopt when it is not one (empty, a bad field,
// a dimension not in 1..2^31-1, a tensor of 2^31 elements or more, more than 16 dimensions or
// 64 arguments, not exactly one output, the output not last, a dtype other than f32, i32, i8, f16).
std::optional<std::vector<CodeArgument>> parse_signature(const std::string &signature);
std::string signature_text(const std::vector<CodeArgument> &arguments);

} // namespace opgen::db

#endif
