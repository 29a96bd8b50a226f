#include "store/Rows.h"

namespace opgen::db {

KernelKey read_key(const SqliteQuery &query, int first_column) {
    KernelKey key;
    key.op_name = query.text(first_column);
    key.op_hash = query.text(first_column + 1);
    key.shape = query.text(first_column + 2);
    key.dtype = query.text(first_column + 3);
    key.target = query.text(first_column + 4);
    key.halide_version = query.text(first_column + 5);
    key.tuner_version = query.text(first_column + 6);
    return key;
}

void read_record(const SqliteQuery &query, int first_column, KernelRecord &record) {
    record.schedule_json = query.text(first_column);
    record.schedule_source = query.text(first_column + 1);
    record.time_ms = query.real(first_column + 2);
    record.gflops = query.real(first_column + 3);
    record.default_time_ms = query.real(first_column + 4);
    record.verified = query.integer(first_column + 5) != 0;
    record.trials = query.integer(first_column + 6);
    record.created_at = query.text(first_column + 7);
}

std::vector<KernelRecord> read_kernels(SqliteQuery &query) {
    std::vector<KernelRecord> records;
    while (query.step()) {
        KernelRecord record;
        record.key = read_key(query, 0);
        read_record(query, 7, record);
        records.push_back(std::move(record));
    }
    return records;
}

void bind_key(SqliteQuery &query, const KernelKey &key) {
    query.bind(1, key.op_name)
        .bind(2, key.op_hash)
        .bind(3, key.shape)
        .bind(4, key.dtype)
        .bind(5, key.target)
        .bind(6, key.halide_version)
        .bind(7, key.tuner_version);
}

void bind_code(SqliteQuery &query, int first, const KernelCode &code, const std::string &created_at) {
    query.bind(first, code.schedule_json)
        .bind(first + 1, code.format)
        .bind(first + 2, code.abi_version)
        .bind(first + 3, code.halide_target)
        .bind(first + 4, code.cpu_features)
        .bind(first + 5, code.halide_version)
        .bind(first + 6, code.function)
        .bind(first + 7, code.signature)
        .bind(first + 8, code.size)
        .bind(first + 9, code.digest)
        .bind(first + 10, created_at)
        .bind(first + 11, code.signed_by)
        .bind(first + 12, code.ed25519_signature)
        .bind_blob(first + 13, code.bytes);
}

KernelCode read_code(const SqliteQuery &query, int first_column) {
    KernelCode code;
    code.format = query.text(first_column);
    code.abi_version = query.integer(first_column + 1);
    code.halide_target = query.text(first_column + 2);
    code.cpu_features = query.text(first_column + 3);
    code.halide_version = query.text(first_column + 4);
    code.function = query.text(first_column + 5);
    code.signature = query.text(first_column + 6);
    code.schedule_json = query.text(first_column + 7);
    code.size = query.integer(first_column + 8);
    code.digest = query.text(first_column + 9);
    code.created_at = query.text(first_column + 10);
    code.signed_by = query.text(first_column + 11);
    code.ed25519_signature = query.text(first_column + 12);
    code.bytes = query.blob(first_column + 13);
    return code;
}

std::string code_columns(const std::string &alias) {
    std::string list;
    std::string all = kCodeColumns;
    size_t start = 0;
    while (start < all.size()) {
        size_t end = all.find(',', start);
        if (end == std::string::npos) {
            end = all.size();
        }
        std::string column = all.substr(start, end - start);
        column.erase(0, column.find_first_not_of(' '));
        list += (list.empty() ? "" : ", ") + alias + "." + column;
        start = end + 1;
    }
    return list;
}

std::string code_of_kernel(const std::string &code, const std::string &kernel) {
    std::string condition;
    for (const char *column : {"target", "op_name", "op_hash", "shape", "dtype", "halide_version",
                               "tuner_version", "schedule_json"}) {
        condition += std::string(condition.empty() ? "" : " AND ") + code + "." + column + " = " +
                     kernel + "." + column;
    }
    return condition;
}

} // namespace opgen::db
