// libFuzzer target for the model compiler's front half (docs/design.md §3.1): ONNX files are
// untrusted input. Whatever bytes a model file holds, reading it (protobuf, ONNX's checks and shape
// inference), folding its shape sub-graphs, partitioning it into opgen ops and binding each op at
// its shape (onnx_import::compile_model) either succeeds or raises one UserError; it never crashes,
// hangs, trips a sanitizer, or throws anything else (which `opgen compile` would print as an
// internal error). The input goes to an anonymous memory file, read through its /proc path as a
// model file is. Symbolic dimensions named batch, N, seq, sequence_length and unk__* get small
// values; others are a UserError like any unknown dimension. The tensors may take at most 256 MiB
// (compile_model checks before it allocates). A model that compiles is compiled again with seq as
// the range 2..6 (onnx/DynamicDims.h), which must hold to the same rule. Seeds: the test models and the conformance cases
// (scripts/fuzz.sh onnx). Build and run with scripts/fuzz.sh SECONDS onnx.
#include "base/Error.h"
#include "core/OpLibrary.h"
#include "onnx/DynamicDims.h"
#include "onnx/ModelCompile.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace {

constexpr int64_t kMaxTensorBytes = int64_t(256) << 20;

const opgen::OpLibrary &library() {
    static const opgen::OpLibrary lib = opgen::OpLibrary::standard({});
    return lib;
}

const std::map<std::string, int64_t> &dims() {
    static const std::map<std::string, int64_t> d = {
        {"batch", 2}, {"N", 2}, {"seq", 4}, {"sequence_length", 4}, {"unk__0", 2}, {"unk__1", 2}};
    return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int fd = ::memfd_create("onnx-model", MFD_CLOEXEC);
    if (fd < 0) return 0;
    size_t written = 0;
    while (written < size) {
        ssize_t n = ::write(fd, data + written, size - written);
        if (n <= 0) break;
        written += size_t(n);
    }
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    try {
        opgen::onnx_import::compile_model(path, dims(), library(), kMaxTensorBytes);
        // A model that compiles at one seq is compiled again with seq as a range (docs/design.md
        // §3.6): the probes, the comparison of their graphs and the affine sizes.
        std::map<std::string, int64_t> fixed = dims();
        fixed.erase("seq");
        opgen::onnx_import::compile_dynamic_model(path, fixed, {{"seq", 2, 6, {6}}}, library(), kMaxTensorBytes,
                                                  true, {});
    } catch (const opgen::UserError &) {
        // One clear error: what bad input must give.
    }
    ::close(fd);
    return 0;
}
