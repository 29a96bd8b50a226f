#include "codegen/GenericBuild.h"

#include "codegen/CompiledCode.h"
#include "base/Error.h"
#include "codegen/GenericCode.h"
#include "codegen/ObjectCompile.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace opgen {

GenericObject compile_generic_object(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                     const std::string &schedule_json, const std::string &function,
                                     const std::string &object) {
    // The worker loads the target from a file: the caller's may be a JSON file of its own, and
    // its cores decide the parallel loops.
    const std::string target_file = object + ".target.json";
    std::ofstream(target_file) << target.to_json().dump();
    ObjectJob job;
    job.op_source = def.source;
    job.op_file = def.filename;
    job.shape = shape.canonical;
    job.target = target_file;
    job.point_json = schedule_json;
    job.function = function;
    job.path = object;
    job.generic = true;
    compile_objects({job}, 1);
    try {
        std::ifstream in(object + ".generic.json");
        nlohmann::json j = nlohmann::json::parse(in);
        return {j.at("checked").get<std::string>(), j.at("halide_target").get<std::string>()};
    } catch (const std::exception &e) {
        throw UserError("the generic kernel of op '" + def.name + "' from " + shape.canonical +
                        ": its worker's report '" + object + ".generic.json' is unreadable: " + e.what());
    }
}

db::KernelCode build_generic_code(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                  const std::string &schedule_json, std::string &checked) {
    ScratchFolder scratch;
    db::KernelCode code = generic_code_header(def, shape, schedule_json);
    const std::string object = scratch.file("kernel.o");
    GenericObject built = compile_generic_object(def, shape, target, schedule_json, code.function, object);
    checked = built.checked;
    link_kernel_code(object, built.halide_target, code);
    return code;
}

}  // namespace opgen
