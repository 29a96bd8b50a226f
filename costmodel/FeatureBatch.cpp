#include "costmodel/CostModel.h"

#include <limits>
#include <sstream>

namespace opgen::costmodel {

void FeatureBatch::add_candidate(const float *data, int num_rows) {
    if (num_rows < 0) {
        std::ostringstream message;
        message << "feature batch: candidate " << num_candidates() << " has " << num_rows
                << " rows, the count must not be negative";
        throw ModelError(message.str());
    }
    if (num_rows > 0 && num_features <= 0) {
        std::ostringstream message;
        message << "feature batch: num_features " << num_features
                << " must be positive before adding rows";
        throw ModelError(message.str());
    }
    if (num_rows > 0 && data == nullptr) {
        throw ModelError("feature batch: candidate data is null");
    }
    if (row_begin.empty()) {
        // A default-constructed batch starts with {0}; tolerate one whose vector was cleared.
        row_begin.push_back(0);
    }
    // row_begin is int32: refuse to wrap around rather than corrupt every later candidate.
    if (int64_t(row_begin.back()) + num_rows > std::numeric_limits<int32_t>::max()) {
        std::ostringstream message;
        message << "feature batch: adding " << num_rows << " rows to " << row_begin.back()
                << " would overflow the int32 row index";
        throw ModelError(message.str());
    }
    rows.insert(rows.end(), data, data + size_t(num_rows) * size_t(num_features));
    row_begin.push_back(row_begin.back() + num_rows);
}

} // namespace opgen::costmodel
