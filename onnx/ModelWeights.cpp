#include "onnx/ModelWeights.h"

#include "base/Error.h"

#include <cstring>

namespace opgen::onnx_import {

namespace {

void put_u64(std::string &out, size_t at, uint64_t v) {
    for (int i = 0; i < 8; i++) out[at + size_t(i)] = char((v >> (8 * i)) & 0xff);
}

}  // namespace

uint64_t fnv1a64(const void *data, size_t size) {
    const auto *p = static_cast<const unsigned char *>(data);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

std::string weights_file_bytes(const CompiledModel &m, const BufferPlan &plan) {
    std::string out(size_t(weights_header_bytes + plan.weight_bytes), '\0');
    char *payload = out.data() + weights_header_bytes;
    for (const std::string &name : plan.weights) {
        const GraphTensor &t = m.graph.tensor(name);
        const bool is_float = t.elem_type == 1;
        const int64_t have = is_float ? int64_t(t.data.size()) * 4 : int64_t(t.raw.size());
        user_check(have == t.bytes()) << "model '" << m.graph.path << "': weight '" << name << "' has " << have
                                      << " of its " << t.bytes() << " bytes";
        std::memcpy(payload + plan.place.at(name).offset, is_float ? static_cast<const void *>(t.data.data()) : t.raw.data(),
                    size_t(t.bytes()));
    }
    std::memcpy(out.data(), "OPGENWT1", 8);
    put_u64(out, 8, uint64_t(plan.weight_bytes));
    put_u64(out, 16, fnv1a64(payload, size_t(plan.weight_bytes)));
    return out;
}

}  // namespace opgen::onnx_import
