#include "opgen/Parser.h"
#include <gtest/gtest.h>
TEST(Parser, Placeholder) { EXPECT_TRUE(true); }
