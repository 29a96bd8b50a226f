// FeatureBatch::add_candidate: layout of the rows and rejection of malformed candidates.
#include "costmodel/CostModel.h"

#include <gtest/gtest.h>

namespace opgen::costmodel {
namespace {

TEST(FeatureBatch, AppendsRowsAndOffsets) {
    FeatureBatch batch;
    batch.num_features = 2;
    const float first[] = {1, 2, 3, 4, 5, 6};
    const float second[] = {7, 8};
    batch.add_candidate(first, 3);
    batch.add_candidate(second, 1);
    batch.add_candidate(nullptr, 0);
    EXPECT_EQ(batch.num_candidates(), 3u);
    EXPECT_EQ(batch.row_begin, (std::vector<int32_t>{0, 3, 4, 4}));
    EXPECT_EQ(batch.rows, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(FeatureBatch, RejectsNegativeRowCount) {
    FeatureBatch batch;
    batch.num_features = 2;
    const float data[] = {1, 2};
    try {
        batch.add_candidate(data, -1);
        FAIL() << "expected ModelError";
    } catch (const ModelError &e) {
        EXPECT_STREQ(e.what(),
                     "feature batch: candidate 0 has -1 rows, the count must not be negative");
    }
    EXPECT_EQ(batch.num_candidates(), 0u);
}

TEST(FeatureBatch, RejectsRowsWithoutFeatureCount) {
    FeatureBatch batch;
    const float data[] = {1, 2};
    EXPECT_THROW(batch.add_candidate(data, 1), ModelError);
    EXPECT_TRUE(batch.rows.empty());
}

TEST(FeatureBatch, RejectsNullData) {
    FeatureBatch batch;
    batch.num_features = 4;
    EXPECT_THROW(batch.add_candidate(nullptr, 2), ModelError);
}

} // namespace
} // namespace opgen::costmodel
