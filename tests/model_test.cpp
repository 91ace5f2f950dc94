#include <gtest/gtest.h>
// placeholder: to be written
