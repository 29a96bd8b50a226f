#include "codegen/CodeStore.h"

#include "codegen/CompiledCode.h"
#include "codegen/KernelKeys.h"
#include "base/Error.h"
#include "codegen/GenericCode.h"
#include "core/Parser.h"
#include "codegen/GenericBuild.h"

#include <nlohmann/json.hpp>

#include <optional>

namespace opgen {

namespace {

std::string describe(const db::KernelKey &key) {
    return "op '" + key.op_name + "' at " + key.shape + " on '" + key.target + "'";
}

// The generic code of `record` compiled, checked and stored; "" when stored, else why not.
std::string store_generic_code(db::KernelCache &cache, const ComputeDef &def, const Target &target,
                               const db::KernelRecord &record) {
    try {
        // Read here, so that a schedule that does not parse is reported without starting a worker.
        (void)SchedulePoint::from_json(nlohmann::json::parse(record.schedule_json));
        db::GenericCodeRecord row;
        row.key = record.key;
        row.code = build_generic_code(def, bind_shape(def, record.key.shape), target, record.schedule_json,
                                      row.checked_shapes);
        cache.put_generic_code(row);
        return "";
    } catch (const db::DbError &) {
        throw;
    } catch (const std::exception &e) {
        return e.what();
    }
}

// The kernel already has generic code compiled from its current schedule.
bool has_generic_code(const std::vector<db::GenericCodeRecord> &rows, const db::KernelRecord &record) {
    for (const db::GenericCodeRecord &row : rows) {
        if (row.key.shape == record.key.shape && row.key.op_hash == record.key.op_hash &&
            row.key.dtype == record.key.dtype && row.key.halide_version == record.key.halide_version &&
            row.key.tuner_version == record.key.tuner_version && row.code.schedule_json == record.schedule_json)
            return true;
    }
    return false;
}

}  // namespace

bool is_on_target(const db::KernelKey &key, const Target &target) {
    return names_target(key.target, target) && key.target.find(":load") == std::string::npos;
}

std::optional<ComputeDef> definition_of(db::KernelCache &cache, const OpLibrary &library,
                                        const db::KernelKey &key, std::string &why) {
    if (std::optional<std::string> source = cache.op_source(key.op_name, key.op_hash);
        source && !source->empty()) {
        return parse_compute(*source, key.op_name + ".op");
    }
    ComputeDef def = library.load(key.op_name);
    if (definition_hash(def.source) == key.op_hash) return def;
    why = "the cache has no definition of op hash " + key.op_hash +
          " and the op library's is another (" + definition_hash(def.source) + ")";
    return std::nullopt;
}

std::string store_winner_code(const ComputeDef &def, const BoundShape &shape, const Target &target,
                              const db::KernelRecord &record, db::KernelCache &cache) {
    try {
        SchedulePoint point = SchedulePoint::from_json(nlohmann::json::parse(record.schedule_json));
        db::KernelCode code = compile_kernel_code(def, shape, point, target, record.schedule_json);
        if (!cache.put_code(record.key, code)) return "a faster kernel replaced it meanwhile";
        return "";
    } catch (const db::DbError &) {
        throw;
    } catch (const std::exception &e) {
        return e.what();
    }
}

bool store_winner(const ComputeDef &def, const BoundShape &shape, const Target &target,
                  const db::KernelRecord &record, db::KernelCache &cache,
                  const std::function<void(const std::string &)> &log) {
    if (!cache.put_kernel(record)) return false;
    std::string why = store_winner_code(def, shape, target, record, cache);
    if (!why.empty() && log) log("code: " + describe(record.key) + ": " + why);
    return true;
}

CodeFillReport fill_missing_code(db::KernelCache &cache, const OpLibrary &library,
                                 const Target &target,
                                 const std::function<void(const std::string &)> &log) {
    CodeFillReport report;
    for (const db::KernelRecord &record : cache.kernels_without_code()) {
        if (!is_on_target(record.key, target)) {
            report.other_targets++;
            continue;
        }
        std::string why;
        try {
            std::optional<ComputeDef> def = definition_of(cache, library, record.key, why);
            if (def) why = store_winner_code(*def, bind_shape(*def, record.key.shape), target, record, cache);
        } catch (const UserError &e) {
            why = e.what();
        }
        if (why.empty()) {
            report.compiled++;
            if (log) log("compiled " + describe(record.key));
            continue;
        }
        report.failed++;
        report.errors.push_back(describe(record.key) + ": " + why);
        if (log) log("failed " + report.errors.back());
    }
    return report;
}

CodeFillReport fill_generic_code(db::KernelCache &cache, const OpLibrary &library,
                                 const Target &target, const std::vector<std::string> &ops,
                                 const std::function<void(const std::string &)> &log) {
    CodeFillReport report;
    for (const std::string &op : ops.empty() ? library.list() : ops) {
        for (const db::KernelRecord &record : cache.kernels_of_op(op)) {
            if (!is_on_target(record.key, target)) {
                report.other_targets++;
                continue;
            }
            if (has_generic_code(cache.generic_code_for(op, record.key.target), record)) continue;
            std::string why;
            try {
                std::optional<ComputeDef> def = definition_of(cache, library, record.key, why);
                if (def) why = store_generic_code(cache, *def, target, record);
            } catch (const UserError &e) {
                why = e.what();
            }
            if (why.empty()) {
                report.compiled++;
                if (log) log("compiled generic " + describe(record.key));
                continue;
            }
            report.failed++;
            report.errors.push_back(describe(record.key) + ": " + why);
            if (log) log("failed generic " + report.errors.back());
        }
    }
    return report;
}

}  // namespace opgen
