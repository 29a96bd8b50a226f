#include "store/VariantStore.h"

#include <cmath>

namespace opgen::db {

void check_variant_time(const std::string &path, const VariantRecord &record) {
    if (!(record.time_ms > 0) || !std::isfinite(record.time_ms)) {
        throw DbError("database '" + path + "': variant at level " + std::to_string(record.level) +
                      " has time " + std::to_string(record.time_ms) + " ms; it must be positive");
    }
}

void put_variant(const std::string &path, const VariantRecord &record) {
    check_variant_time(path, record);  // before the file is made
    // Opening through the cache creates or migrates the schema (which has the table since
    // version 3) and reports a foreign file.
    open_kernel_cache(path, OpenMode::ReadWrite)->put_variant(record);
}

std::vector<VariantRecord> variants_for(const std::string &path, const KernelKey &key) {
    // Opening through the cache checks the file is a kernel cache of a version we read.
    return open_kernel_cache(path, OpenMode::ReadOnly)->variants_for(key);
}

}  // namespace opgen::db
