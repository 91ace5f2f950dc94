// TunedKernel::run() refuses arrays smaller than the domain the kernel was built for (an error
// with a message, not a kernel writing past them), through the C++ and the C API. Needs a GPU
// (and NVRTC, for the naive kernel); skips without one.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "tbtune/tbtune.h"
#include "tbtune/tbtune.hpp"
#include "tests/test_util.hpp"

namespace tbtune {
namespace {

constexpr long kNx = 256, kNy = 128;
constexpr std::size_t kBytes = std::size_t(kNx * kNy) * sizeof(double);

class RunCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.domain = std::array<long, 3>{kNx, kNy, 1};
    options_.dtype = Precision::Double;
    try {
      kernel_.emplace(naive_kernel(StencilSpec::from_file(spec_path()), options_));
    } catch (const ApiError& e) {
      if (e.code() == ErrorCode::Cuda) GTEST_SKIP() << "no GPU: " << e.what();
      throw;
    }
    ASSERT_EQ(tbtune_device_alloc(kBytes, &a_), TBTUNE_OK) << tbtune_last_message();
    ASSERT_EQ(tbtune_device_alloc(kBytes, &b_), TBTUNE_OK) << tbtune_last_message();
    ASSERT_EQ(tbtune_device_alloc(kBytes / 2, &small_), TBTUNE_OK) << tbtune_last_message();
  }
  void TearDown() override {
    for (void* p : {a_, b_, small_})
      if (p) (void)tbtune_device_free(p);
  }
  static std::string spec_path() { return test::source_dir() + "/configs/j2d5pt.yaml"; }

  /// The code and message of the ApiError that kernel_->run(a, b, 3) throws; Internal if none.
  std::pair<ErrorCode, std::string> run_error(void* a, void* b) {
    try {
      (void)kernel_->run(a, b, 3);
      EXPECT_EQ(tbtune_synchronize(), TBTUNE_OK) << tbtune_last_message();
      return {ErrorCode::Internal, "no error"};
    } catch (const ApiError& e) {
      return {e.code(), e.what()};
    }
  }

  LookupOptions options_;
  std::optional<TunedKernel> kernel_;
  void *a_ = nullptr, *b_ = nullptr, *small_ = nullptr;
};

TEST_F(RunCheck, ArraysOfTheDomainRun) {
  EXPECT_EQ(run_error(a_, b_).second, "no error");
  EXPECT_EQ(run_error(b_, a_).second, "no error");  // the time loop's usual swap
}

TEST_F(RunCheck, ASmallerArrayIsRefusedWithTheDomain) {
  auto [code, message] = run_error(small_, b_);
  EXPECT_EQ(code, ErrorCode::BadArgument);
  EXPECT_NE(message.find("array a has room for"), std::string::npos) << message;
  EXPECT_NE(message.find("256x128x1 double"), std::string::npos) << message;
  std::tie(code, message) = run_error(a_, small_);
  EXPECT_EQ(code, ErrorCode::BadArgument);
  EXPECT_NE(message.find("array b has room for"), std::string::npos) << message;
}

TEST_F(RunCheck, AnArrayStartingInsideAnAllocationCountsTheRoomLeft) {
  void* inside = static_cast<char*>(a_) + 64;
  const auto [code, message] = run_error(inside, b_);
  EXPECT_EQ(code, ErrorCode::BadArgument) << message;
}

TEST_F(RunCheck, AfterAGoodRunANewSmallerArrayIsStillChecked) {
  EXPECT_EQ(run_error(a_, b_).second, "no error");
  EXPECT_EQ(run_error(a_, small_).first, ErrorCode::BadArgument);
}

TEST_F(RunCheck, TheCApiSaysTheSame) {
  tbtune_options o;
  tbtune_options_init(&o);
  o.nx = kNx;
  o.ny = kNy;
  o.dtype = TBTUNE_DTYPE_DOUBLE;
  tbtune_kernel* k = nullptr;
  ASSERT_EQ(tbtune_naive(spec_path().c_str(), &o, &k), TBTUNE_OK) << tbtune_last_message();
  void* result = nullptr;
  EXPECT_EQ(tbtune_run(k, small_, b_, 3, nullptr, &result), TBTUNE_ERR_BAD_ARGUMENT);
  EXPECT_NE(std::string(tbtune_last_message()).find("room for"), std::string::npos) << tbtune_last_message();
  EXPECT_EQ(tbtune_run(k, a_, b_, 3, nullptr, &result), TBTUNE_OK) << tbtune_last_message();
  EXPECT_EQ(tbtune_synchronize(), TBTUNE_OK);
  tbtune_kernel_free(k);
}

}  // namespace
}  // namespace tbtune
