#include "db/Rows.h"

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

} // namespace opgen::db
