// query: the cache's answer for an op at a shape, as JSON: the exact winner, else one derived from
// the nearest tuned shape, else the cost model's prediction (the lookup library, runtime/Lookup.h, with
// the tuner's extension, tuner/Predict.h). "answer" says which.
#include "runtime/Lookup.h"
#include "core/OpLibrary.h"
#include "cli/Cli.h"
#include "tuner/Predict.h"
#include "tuner/Tuner.h"

#include <iostream>
#include <memory>

namespace opgen::cli {

namespace {

void add_query(CLI::App &app) {
    struct Args {
        Common common;
        std::string op, shape;
        bool exact = false;
    };
    auto a = std::make_shared<Args>();
    auto *cmd = app.add_subcommand(
        "query", "print the cache's kernel for an op and shape as JSON: exact, derived or predicted");
    cmd->add_option("--op", a->op, "op name")->required();
    cmd->add_option("--shape", a->shape, "shape, e.g. M=512,N=512,K=512")->required();
    cmd->add_flag("--exact", a->exact, "only an exact hit; no derived or predicted answer");
    add_common_options(cmd, a->common, true);
    cmd->callback([a] {
        OpLibrary lib = OpLibrary::standard(a->common.ops_dirs);
        ComputeDef def = lib.load(a->op);
        BoundShape shape = bind_shape(def, a->shape);  // a bad shape is the user's error, named here
        Target t = load_target(a->common.target);
        int threads = threads_of(a->common, t);
        db::KernelKey key = opgen::kernel_key(def, shape, t, threads);
        auto lookup = db::open_kernel_lookup(a->common.db_path);
        db::LookupRequest request;
        request.op_name = key.op_name;
        request.shape = key.shape;
        request.target = key.target;
        request.dtype = key.dtype;
        request.op_hash = key.op_hash;
        request.halide_version = key.halide_version;
        request.tuner_version = key.tuner_version;
        db::LookupAnswer answer;
        if (a->exact) {
            if (auto hit = lookup->exact(request)) {
                answer.kind = db::AnswerKind::Exact;
                answer.kernel = *hit;
            }
        } else {
            lookup->set_extension(tuner::make_lookup_extension(lib, t, threads, a->common.db_path));
            answer = lookup->find(request);
        }
        user_check(answer.kind != db::AnswerKind::None)
            << "no kernel for op '" << def.name << "' at " << shape.canonical << " on target " << key.target
            << " in " << a->common.db_path << (answer.reason.empty() ? "" : ": " + answer.reason);
        nlohmann::json j = record_json(answer.kernel, db::answer_kind_name(answer.kind));
        if (answer.kind == db::AnswerKind::Derived) {
            j["from_shape"] = answer.from_shape;
            j["distance"] = answer.distance;
        }
        if (answer.kind == db::AnswerKind::Exact) {
            std::vector<db::VariantRecord> variants = db::variants_for(a->common.db_path, key);
            if (!variants.empty()) j["variants"] = variants_json(variants);
        }
        j["time_is_estimate"] = answer.kind != db::AnswerKind::Exact;
        std::cout << j.dump(2) << "\n";
    });
}

}  // namespace

void add_query_commands(CLI::App &app) { add_query(app); }

}  // namespace opgen::cli
