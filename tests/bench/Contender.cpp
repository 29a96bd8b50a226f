#include "tests/bench/Contender.h"

#include <utility>

namespace opgen::bench {

Problem::Problem(std::string label_, const ComputeDef &def_, const BoundShape &shape_,
                 const Target &target_, uint64_t seed)
    : label(std::move(label_)), def(&def_), shape(shape_), target(target_) {
    inputs = random_inputs(def_, shape_, seed);
    reference = reference_sample(def_, shape_, inputs);
    flops = flop_count(def_, shape_);
    bytes = min_bytes_moved(def_, shape_);
}

HostTensor Problem::make_output() const {
    HostTensor t;
    t.dims = shape.dims.at(def->output().name);
    t.data.assign(size_t(t.elements()), 0.0f);
    return t;
}

int64_t Problem::value(const std::string &name) const {
    // The shape as given: an anchor computes the op there, whatever shape a view keys opgen's kernel by.
    const std::map<std::string, int64_t> &values = shape.given.empty() ? shape.values : shape.given;
    auto it = values.find(name);
    internal_check(it != values.end())
        << "op '" << def->name << "' has no parameter " << name;
    return it->second;
}

Entrant Entrant::failed(std::string name, std::string family, std::string status,
                        std::string detail) {
    Entrant e;
    e.name = std::move(name);
    e.family = std::move(family);
    e.status = std::move(status);
    e.detail = std::move(detail);
    return e;
}

} // namespace opgen::bench
