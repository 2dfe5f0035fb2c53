// Placeholder replaced by the CUDA op-by-op suite.
#include <gtest/gtest.h>
