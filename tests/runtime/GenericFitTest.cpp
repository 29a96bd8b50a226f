// Whether a generic kernel's register tiles fit a shape's loop extents (runtime/GenericFit.h), on
// schedule points written by hand: equal fits, one axis wider does not, and what is not known
// (an unparsable schedule, a variable without an extent, an axis without a register tile) fits.
// And the work the tiles waste at a ragged edge, counted by hand.
#include <gtest/gtest.h>

#include "runtime/GenericFit.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace opgen::db {
namespace {

const char *kConvPoint = R"({"axes":[{"var":"x","tile":28,"reg":16},{"var":"y","tile":4,"reg":2},)"
                         R"({"var":"f","tile":32,"reg":8},{"var":"n","tile":1,"reg":1}],"vector_width":16})";

TEST(GenericFit, RegisterTilesFitWhenNoWiderThanTheExtents) {
    EXPECT_TRUE(register_tiles_fit(kConvPoint, {{"x", 16}, {"y", 2}, {"f", 8}, {"n", 1}}));
    EXPECT_TRUE(register_tiles_fit(kConvPoint, {{"x", 28}, {"y", 28}, {"f", 32}, {"n", 1}}));
    EXPECT_FALSE(register_tiles_fit(kConvPoint, {{"x", 7}, {"y", 7}, {"f", 96}, {"n", 1}}));
    EXPECT_FALSE(register_tiles_fit(kConvPoint, {{"x", 28}, {"y", 28}, {"f", 4}, {"n", 1}}));
}

TEST(GenericFit, WhatIsNotKnownFits) {
    EXPECT_TRUE(register_tiles_fit(kConvPoint, {}));
    EXPECT_TRUE(register_tiles_fit(kConvPoint, {{"y", 7}, {"f", 96}}));  // x unknown
    EXPECT_TRUE(register_tiles_fit("not json", {{"x", 1}}));
    EXPECT_TRUE(register_tiles_fit(R"({"vector_width":16})", {{"x", 1}}));
    EXPECT_TRUE(register_tiles_fit(R"({"axes":[{"var":"x","tile":28}]})", {{"x", 1}}));
    EXPECT_FALSE(register_tiles_fit(R"({"axes":[{"var":"x","tile":28},{"var":"y","reg":4}]})", {{"x", 1}, {"y", 3}}));
}

TEST(GenericFit, RegisterTilesAreReadInnermostFirst) {
    EXPECT_EQ(register_tiles(kConvPoint), (std::vector<int64_t>{16, 2, 8, 1}));
    EXPECT_EQ(register_tiles(R"({"axes":[{"var":"x","tile":28},{"var":"y","reg":4}]})"), (std::vector<int64_t>{1, 4}));
    EXPECT_TRUE(register_tiles("not json").empty());
    EXPECT_TRUE(register_tiles(R"({"vector_width":16})").empty());
}

TEST(GenericFit, OverworkCountsWholeRegisterTilesAtARaggedEdge) {
    const std::vector<int64_t> tiles{16, 2, 8, 1};  // x, y, f, n
    // Every tile divides its extent: no overwork.
    EXPECT_DOUBLE_EQ(register_tile_overwork(tiles, {32, 4, 64, 3}), 0.0);
    // x 28 in two tiles of 16 (32 columns), y 7 in four of 2 (8 rows), f 20 in three of 8 (24).
    EXPECT_NEAR(register_tile_overwork(tiles, {28, 7, 20, 1}), std::log(32.0 / 28 * 8 / 7 * 24 / 20), 1e-12);
    // Narrower than the tile: the whole tile is computed.
    EXPECT_NEAR(register_tile_overwork(tiles, {7, 1, 8, 1}), std::log(16.0 / 7 * 2), 1e-12);
    // Axes missing from either side count as dividing.
    EXPECT_NEAR(register_tile_overwork(tiles, {28}), std::log(32.0 / 28), 1e-12);
    EXPECT_DOUBLE_EQ(register_tile_overwork({}, {28, 7}), 0.0);
    // A corrupt row's tile of any size: finite, no overflow.
    EXPECT_NEAR(register_tile_overwork({INT64_MAX}, {28}), std::log(double(INT64_MAX) / 28), 1e-9);
}

TEST(GenericFit, FitByOutputDimsMatchesFitByExtents) {
    const std::vector<int64_t> tiles = register_tiles(kConvPoint);
    EXPECT_TRUE(register_tiles_fit_dims(tiles, {16, 2, 8, 1}));
    EXPECT_TRUE(register_tiles_fit_dims(tiles, {28, 28, 32, 1}));
    EXPECT_FALSE(register_tiles_fit_dims(tiles, {7, 7, 96, 1}));
    EXPECT_FALSE(register_tiles_fit_dims(tiles, {28, 28, 4, 1}));
    EXPECT_TRUE(register_tiles_fit_dims(tiles, {28}));
}

}  // namespace
}  // namespace opgen::db
