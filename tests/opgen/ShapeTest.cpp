#include "opgen/Shape.h"
#include <gtest/gtest.h>
