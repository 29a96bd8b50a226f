// Whether a generic kernel's register tiles fit a shape's loop extents (db/GenericFit.h), on
// schedule points written by hand: equal fits, one axis wider does not, and what is not known
// (an unparsable schedule, a variable without an extent, an axis without a register tile) fits.
#include <gtest/gtest.h>

#include "db/GenericFit.h"

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

}  // namespace
}  // namespace opgen::db
