// Loading a kernel's compiled code (KernelCode.h) out of the cache into executable memory and
// calling it, with no compiler in the process: the bytes go into an anonymous memory file
// (memfd_create) that the system's dynamic loader maps (dlopen of /proc/self/fd/N). The kernel's
// halide_* calls bind to the Halide runtime built into opgen_cache; in a process without it
// (a program linking only the static opgen_db) loading fails with a DbError naming the symbol.
//
// Nothing foreign runs: before a byte is mapped, code_refusal checks, in this order, that the
// blob is whole (its stored size), matches its digest, is of this build's format and ABI version,
// was compiled for this host's architecture and operating system, has a readable signature, needs
// no CPU feature this host lacks, and is an ELF shared object for x86-64 whose headers lie inside
// it.
//
// A shape-generic kernel is loaded once and bound to each shape it serves (bind_generic_kernel):
// each binding is a LoadedKernel of its own with the shape's dims, sharing the mapped code.
//
// Thread safety and lifetime: a LoadedKernel is immutable once loaded; call() may run on any
// number of threads at once (each call uses only its own buffers; the Halide runtime's thread
// pool is shared). The code stays mapped as long as any shared_ptr to its LoadedKernel lives,
// whatever happens to the lookup or the file it came from. Each loaded kernel holds one file
// descriptor (its memory file, which must stay open while it is loaded; see CodeLoader.cpp), so a
// process loading more kernels than its descriptor limit gets a DbError for the rest.
#ifndef OPGEN_RUNTIME_CODE_LOADER_H
#define OPGEN_RUNTIME_CODE_LOADER_H

#include <memory>
#include <string>
#include <vector>

#include "store/KernelCode.h"

struct halide_buffer_t;

namespace opgen::db {

// Why `code` may not run on this host, as the tail of an error message ("its digest does not
// match: ..."), or "" when it may.
std::string code_refusal(const KernelCode &code);

// The checks of code_refusal that read no code bytes (format, ABI version, target, signature, CPU
// features), for ruling rows out before one is chosen; "" when they pass. A row that passes still
// needs code_refusal (size, digest, ELF image) before it is loaded.
std::string code_header_refusal(const KernelCode &code);

class LoadedKernel {
public:
    LoadedKernel(const LoadedKernel &) = delete;
    LoadedKernel &operator=(const LoadedKernel &) = delete;
    ~LoadedKernel();

    // The arguments in call order: the inputs, then the output.
    const std::vector<CodeArgument> &arguments() const { return arguments_; }
    const std::string &digest() const { return digest_; }
    const std::string &function() const { return function_; }
    // A shape-generic kernel (KernelCode::generic): true, and shape() is the canonical shape it is
    // bound to (bind_generic_kernel); "" for an exact kernel and for generic code not yet bound,
    // which has no arguments and refuses every call.
    bool generic() const { return generic_; }
    const std::string &shape() const { return shape_; }

    // Calls the kernel on one buffer per argument. Each must have the argument's type, number of
    // dimensions and extents (innermost first, as Halide orders them); strides are the kernel's
    // to check. Returns 0 on success; -1 when the buffers do not match the signature (then, when
    // `error` is given, says why), else Halide's (negative) error code.
    int call(halide_buffer_t *const *buffers, size_t count, std::string *error = nullptr) const;
    // Calls the kernel on one pointer per argument, each to dense row-major data of the
    // argument's dims (arguments()). Returns as the buffer call does; -1 for a NULL pointer.
    int call(void *const *data, size_t count, std::string *error = nullptr) const;

private:
    friend std::shared_ptr<const LoadedKernel> load_checked_kernel_code(const KernelCode &,
                                                                        const std::string &);
    friend std::shared_ptr<const LoadedKernel> bind_generic_kernel(
        const std::shared_ptr<const LoadedKernel> &, const KernelCode &, const std::string &,
        std::string *);
    LoadedKernel() = default;
    // The mapped library (CodeLoader.cpp), shared by generic code and its bindings.
    struct Image;
    // The dense buffers of the pointer call, made once at load (CodeLoader.cpp).
    struct Templates;
    void make_templates();

    std::shared_ptr<const Image> image_;
    int (*entry_)(void **) = nullptr;
    bool generic_ = false;
    std::string shape_;
    std::vector<CodeArgument> arguments_;
    std::unique_ptr<Templates> templates_;
    std::string digest_;
    std::string function_;
};

// Checks `code` (code_refusal) and loads it. Raises DbError "<what>: <reason>" when it is refused
// or the dynamic loader fails; no byte of refused code is mapped executable. Generic code comes
// back unbound: bind it to a shape with bind_generic_kernel before calling it.
std::shared_ptr<const LoadedKernel> load_kernel_code(const KernelCode &code,
                                                     const std::string &what);

// load_kernel_code for a caller that has just had code_refusal(code) return "" for this very
// code (GenericKernels keeps each row's verdict): the digest of a large blob is computed once, not
// twice. Raises DbError "<what>: <reason>" when the dynamic loader fails.
std::shared_ptr<const LoadedKernel> load_checked_kernel_code(const KernelCode &code,
                                                             const std::string &what);

// Generic code loaded by load_kernel_code (`loaded`, from `code`) bound to `shape`
// (GenericSignature.h, bind_generic): a kernel whose arguments have that shape's dims, sharing
// the loaded code. nullptr, with `why` set when given, when the shape is not one it serves or
// `loaded` is not generic code of `code`'s digest.
std::shared_ptr<const LoadedKernel> bind_generic_kernel(
    const std::shared_ptr<const LoadedKernel> &loaded, const KernelCode &code,
    const std::string &shape, std::string *why = nullptr);

} // namespace opgen::db

#endif
