#include "runtime/CodeLoader.h"

#include <cerrno>
#include <cstring>

#include <HalideRuntime.h>
#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/DType.h"
#include "runtime/GenericSignature.h"
#include "runtime/HostCpu.h"
#include "store/KernelCache.h"

namespace opgen::db {

namespace {

// The Halide target prefix (architecture, bits, operating system) of the code this host runs.
#if defined(__x86_64__) && defined(__linux__)
constexpr const char *kHostTargetPrefix = "x86-64-linux";
#else
constexpr const char *kHostTargetPrefix = "";
#endif

std::string join(const std::vector<std::string> &names) {
    std::string text;
    for (const std::string &n : names) {
        text += (text.empty() ? "" : ", ") + n;
    }
    return text;
}

// Reads a T at `offset` of `bytes` without alignment assumptions; false when it does not fit.
template <typename T>
bool read_at(const std::vector<uint8_t> &bytes, uint64_t offset, T &value) {
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) {
        return false;
    }
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return true;
}

// A table of `count` entries of `entry_size` bytes at `offset` lies inside the blob.
bool table_fits(const std::vector<uint8_t> &bytes, uint64_t offset, uint64_t count,
                uint64_t entry_size) {
    if (count == 0) {
        return true;
    }
    if (entry_size == 0 || count > bytes.size() / entry_size) {
        return false;
    }
    return offset <= bytes.size() && bytes.size() - offset >= count * entry_size;
}

// "" when the bytes are an x86-64 ELF shared object whose headers and loadable segments lie
// inside the blob, else what is wrong.
std::string elf_problem(const std::vector<uint8_t> &bytes) {
    Elf64_Ehdr header;
    if (!read_at(bytes, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
        return "it is not an ELF file";
    }
    if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB ||
        header.e_machine != EM_X86_64) {
        return "it is ELF code for another machine (class " +
               std::to_string(header.e_ident[EI_CLASS]) + ", machine " +
               std::to_string(header.e_machine) + "), not x86-64";
    }
    if (header.e_type != ET_DYN) {
        return "it is an ELF file of type " + std::to_string(header.e_type) +
               ", not a shared object";
    }
    if (header.e_phentsize != sizeof(Elf64_Phdr) ||
        !table_fits(bytes, header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr)) ||
        !table_fits(bytes, header.e_shoff, header.e_shnum, header.e_shentsize)) {
        return "its ELF header tables lie outside its " + std::to_string(bytes.size()) + " bytes";
    }
    for (uint64_t i = 0; i < header.e_phnum; i++) {
        Elf64_Phdr segment;
        read_at(bytes, header.e_phoff + i * sizeof(Elf64_Phdr), segment);
        if (segment.p_type == PT_LOAD &&
            (segment.p_offset > bytes.size() || bytes.size() - segment.p_offset < segment.p_filesz)) {
            return "its loadable segment " + std::to_string(i) + " lies outside its " +
                   std::to_string(bytes.size()) + " bytes";
        }
    }
    return "";
}

// The Halide target's architecture, bits and operating system: its first three fields.
std::string target_prefix(const std::string &halide_target) {
    size_t end = std::string::npos, from = 0;
    for (int field = 0; field < 3; field++) {
        end = halide_target.find('-', from);
        if (end == std::string::npos) {
            return halide_target;
        }
        from = end + 1;
    }
    return halide_target.substr(0, end);
}

halide_type_t halide_type_of(const std::string &dtype) {
    const DType t = dtype_from_name(dtype).value_or(DType::F32);
    return {halide_type_code_t(dtype_code(t)), uint8_t(8 * dtype_bytes(t)), 1};
}

// The dynamic loader's view of the code: an anonymous memory file, never a path others can
// replace between our check and the load. The file stays open (`fd`) as long as the library is
// loaded: the loader knows a library by its path name, and a closed descriptor's number, reused
// for the next kernel's file, would make that kernel's dlopen return this one.
void *open_from_memory(const KernelCode &code, const std::string &what, int &fd_out) {
    int fd = ::memfd_create("opgen-kernel", MFD_CLOEXEC);
    if (fd < 0) {
        throw DbError(what + ": cannot create a memory file: " + std::strerror(errno));
    }
    size_t written = 0;
    while (written < code.bytes.size()) {
        ssize_t n = ::write(fd, code.bytes.data() + written, code.bytes.size() - written);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            int reason = errno;
            ::close(fd);
            throw DbError(what + ": cannot write the code to a memory file: " + std::strerror(reason));
        }
        written += size_t(n);
    }
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    // RTLD_LOCAL: two kernels' symbols of one name never meet. RTLD_NOW: a missing runtime symbol
    // fails here, not at the first call.
    void *library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = ::dlerror();
        ::close(fd);
        throw DbError(what + ": the dynamic loader refused the code: " +
                      (reason ? reason : "no reason given"));
    }
    fd_out = fd;
    return library;
}

// The signature parses: numeric dims for exact code; for generic code, expressions of its symbols,
// with its fixed values and defaults readable too.
bool signature_readable(const KernelCode &code) {
    if (!code.generic) {
        return parse_signature(code.signature).has_value();
    }
    return parse_generic_signature(code.signature, split_names(code.symbols)) &&
           !code.symbols.empty() && parse_values(code.fixed) && parse_values(code.defaults);
}

} // namespace

struct LoadedKernel::Image {
    void *library = nullptr;
    int fd = -1;  // the memory file the library was loaded from, open while it is loaded
    ~Image() {
        if (library) {
            ::dlclose(library);
        }
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

std::string code_header_refusal(const KernelCode &code) {
    if (code.format != kKernelCodeFormat) {
        return "its code is in format '" + code.format + "', not '" + kKernelCodeFormat + "'";
    }
    if (code.abi_version != kKernelCodeAbi) {
        return "its code has ABI version " + std::to_string(code.abi_version) +
               ", this build loads version " + std::to_string(kKernelCodeAbi);
    }
    if (target_prefix(code.halide_target) != kHostTargetPrefix) {
        return "its code was built for target '" + code.halide_target + "', not for this host (" +
               kHostTargetPrefix + ")";
    }
    if (!signature_readable(code)) {
        return "its " + std::string(code.generic ? "generic " : "") + "signature '" +
               code.signature + "' cannot be read";
    }
    if (std::vector<std::string> missing = missing_cpu_features(code.cpu_features);
        !missing.empty()) {
        return "its code needs CPU features this host lacks: " + join(missing);
    }
    return "";
}

std::string code_refusal(const KernelCode &code) {
    if (code.size < 0 || uint64_t(code.size) != code.bytes.size()) {
        return "its code is truncated or padded: " + std::to_string(code.bytes.size()) +
               " bytes stored, " + std::to_string(code.size) + " written";
    }
    std::string digest = code_digest(code);
    if (digest != code.digest) {
        return "its digest does not match: the row says " + code.digest + ", its contents hash to " +
               digest;
    }
    // The header is checked before the image is parsed: a foreign target's image is not ours to read.
    if (std::string header = code_header_refusal(code); !header.empty()) {
        return header;
    }
    return elf_problem(code.bytes);
}

std::shared_ptr<const LoadedKernel> load_kernel_code(const KernelCode &code,
                                                     const std::string &what) {
    if (std::string refusal = code_refusal(code); !refusal.empty()) {
        throw DbError(what + ": refused: " + refusal);
    }
    return load_checked_kernel_code(code, what);
}

std::shared_ptr<const LoadedKernel> load_checked_kernel_code(const KernelCode &code,
                                                             const std::string &what) {
    std::shared_ptr<LoadedKernel> kernel(new LoadedKernel());
    if (!code.generic) {
        kernel->arguments_ = *parse_signature(code.signature);
    }
    kernel->make_templates();
    kernel->digest_ = code.digest;
    kernel->function_ = code.function;
    kernel->generic_ = code.generic;
    auto image = std::make_shared<LoadedKernel::Image>();
    image->library = open_from_memory(code, what, image->fd);
    kernel->image_ = image;
    std::string entry = code.function + "_argv";
    void *symbol = ::dlsym(image->library, entry.c_str());
    if (!symbol) {
        throw DbError(what + ": its code has no entry point '" + entry + "'");
    }
    kernel->entry_ = reinterpret_cast<int (*)(void **)>(symbol);
    return kernel;
}

struct LoadedKernel::Templates {
    std::vector<halide_buffer_t> buffers;
    std::vector<halide_dimension_t> dims;
};

void LoadedKernel::make_templates() {
    templates_ = std::make_unique<Templates>();
    std::vector<halide_buffer_t> &templates = templates_->buffers;
    std::vector<halide_dimension_t> &dims = templates_->dims;
    size_t total = 0;
    for (const CodeArgument &a : arguments_) {
        total += a.dims.size();
    }
    dims.resize(total);
    templates.resize(arguments_.size());
    halide_dimension_t *next = dims.data();
    for (size_t i = 0; i < arguments_.size(); i++) {
        const CodeArgument &a = arguments_[i];
        halide_buffer_t &b = templates[i];
        b = halide_buffer_t{};
        b.type = halide_type_of(a.dtype);
        b.dimensions = int32_t(a.dims.size());
        b.dim = next;
        int32_t stride = 1; // parse_signature keeps every tensor below 2^31 elements
        for (size_t d = 0; d < a.dims.size(); d++) {
            int32_t extent = int32_t(a.dims[a.dims.size() - 1 - d]);
            next[d] = halide_dimension_t{0, extent, stride, 0};
            stride *= extent;
        }
        next += a.dims.size();
    }
}

std::shared_ptr<const LoadedKernel> bind_generic_kernel(
    const std::shared_ptr<const LoadedKernel> &loaded, const KernelCode &code,
    const std::string &shape, std::string *why) {
    if (!loaded || !loaded->generic_ || !code.generic || loaded->digest_ != code.digest) {
        if (why) *why = "the loaded kernel is not the generic code of digest " + code.digest;
        return nullptr;
    }
    std::optional<GenericBinding> binding = bind_generic(code, shape, why);
    if (!binding) {
        return nullptr;
    }
    std::shared_ptr<LoadedKernel> kernel(new LoadedKernel());
    kernel->arguments_ = std::move(binding->arguments);
    kernel->make_templates();
    kernel->digest_ = loaded->digest_;
    kernel->function_ = loaded->function_;
    kernel->generic_ = true;
    kernel->shape_ = binding->canonical;
    kernel->image_ = loaded->image_;
    kernel->entry_ = loaded->entry_;
    return kernel;
}

LoadedKernel::~LoadedKernel() = default;

int LoadedKernel::call(halide_buffer_t *const *buffers, size_t count, std::string *error) const {
    auto fail = [&](const std::string &why) {
        if (error) {
            *error = "kernel '" + function_ + "': " + why;
        }
        return -1;
    };
    if (generic_ && shape_.empty()) {
        return fail("generic code must be bound to a shape before it is called");
    }
    if (count != arguments_.size()) {
        return fail("takes " + std::to_string(arguments_.size()) + " buffers, got " +
                    std::to_string(count));
    }
    for (size_t i = 0; i < count; i++) {
        const CodeArgument &a = arguments_[i];
        const halide_buffer_t *b = buffers ? buffers[i] : nullptr;
        if (!b || !b->host) {
            return fail("buffer '" + a.name + "' is NULL or has no host data");
        }
        halide_type_t type = halide_type_of(a.dtype);
        if (b->type.code != type.code || b->type.bits != type.bits || b->type.lanes != 1) {
            return fail("buffer '" + a.name + "' is not of type " + a.dtype);
        }
        if (size_t(b->dimensions) != a.dims.size()) {
            return fail("buffer '" + a.name + "' has " + std::to_string(b->dimensions) +
                        " dimensions, not " + std::to_string(a.dims.size()));
        }
        for (size_t d = 0; d < a.dims.size(); d++) {
            // Halide's dimension 0 is the innermost: the signature's last.
            if (b->dim[d].extent != a.dims[a.dims.size() - 1 - d]) {
                return fail("buffer '" + a.name + "' has extent " + std::to_string(b->dim[d].extent) +
                            " in dimension " + std::to_string(d) + ", not " +
                            std::to_string(a.dims[a.dims.size() - 1 - d]));
            }
        }
    }
    // The entry point takes void ** but never writes the array; at most kMaxCallArguments entries
    // (parse_signature), so it lives on the stack.
    void *argv[kMaxCallArguments];
    for (size_t i = 0; i < count; i++) {
        argv[i] = buffers[i];
    }
    return entry_(argv);
}

int LoadedKernel::call(void *const *data, size_t count, std::string *error) const {
    if (count != arguments_.size() || (generic_ && shape_.empty())) {
        return call(static_cast<halide_buffer_t *const *>(nullptr), count, error);
    }
    for (size_t i = 0; i < count; i++) {
        if (!data || !data[i]) {
            if (error) {
                *error = "kernel '" + function_ + "': buffer '" + arguments_[i].name + "' is NULL";
            }
            return -1;
        }
    }
    // Copies of the dense buffers made at load time, on the stack: the hot path allocates
    // nothing. The dims are shared: a kernel given host data never writes them.
    halide_buffer_t buffers[kMaxCallArguments];
    void *argv[kMaxCallArguments];
    for (size_t i = 0; i < count; i++) {
        buffers[i] = templates_->buffers[i];
        buffers[i].host = static_cast<uint8_t *>(data[i]);
        argv[i] = &buffers[i];
    }
    return entry_(argv);
}

} // namespace opgen::db
