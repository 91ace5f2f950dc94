// What a stored CUBIN names, read without a GPU (kernel_set.hpp, cubin_names_kernel): a lookup
// asks it before loading a winner, so that an image whose step kernel an earlier tbtune built
// (wpipe2d's and wpipe3d's one-warp `tb_step`) is a miss, not a kernel launched with the cell
// step kernel's geometry. NVRTC compiles without a GPU, so this runs in CI.
#include "tuner/gpu/kernel_set.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tests/test_util.hpp"
#include "tuner/gpu/nvrtc.hpp"

namespace tbtune {
namespace {

// The names in a module built now: the full pass, the edge kernel and the cell step kernel,
// whole names only (not a prefix or a suffix of one).
TEST(KernelSet, CubinNamesItsKernelsWhole) {
  const Problem p = test::small_problem(test::source_dir() + "/configs/j2d5pt.yaml", DType::Double, {301, 67, 1}, 7);
  const Strategy* s = find_strategy("wpipe2d");
  const Params k = s->complete(p, {{"rx", 2}, {"warps", 2}, {"tw", 1}});
  const std::string cubin = compile_cuda(s->source(p, k), "sm_90").cubin;
  EXPECT_TRUE(cubin_names_kernel(cubin, kFullKernel));
  EXPECT_TRUE(cubin_names_kernel(cubin, kEdgeKernel));
  EXPECT_TRUE(cubin_names_kernel(cubin, kCellStepKernel));
  EXPECT_TRUE(cubin_names_kernel(cubin, s->step_kernel()));
  EXPECT_FALSE(cubin_names_kernel(cubin, kStepKernel));
  EXPECT_FALSE(cubin_names_kernel(cubin, "tb_cell"));
  EXPECT_FALSE(cubin_names_kernel(cubin, "cell_step"));
  EXPECT_FALSE(cubin_names_kernel("", kFullKernel));

  // The same source with the step kernel under the earlier name, as an earlier tbtune's image
  // holds it: the lookup's question tells the two apart.
  std::string earlier = s->source(p, k);
  for (std::size_t at; (at = earlier.find(kCellStepKernel)) != std::string::npos;)
    earlier.replace(at, std::strlen(kCellStepKernel), kStepKernel);
  const std::string old = compile_cuda(earlier, "sm_90").cubin;
  EXPECT_TRUE(cubin_names_kernel(old, kStepKernel));
  EXPECT_FALSE(cubin_names_kernel(old, s->step_kernel()));

  // A strategy with its own step kernel names it so.
  const Strategy* cmq = find_strategy("cmq2d");
  const std::string own = compile_cuda(cmq->source(p, cmq->complete(p, {})), "sm_90").cubin;
  EXPECT_TRUE(cubin_names_kernel(own, cmq->step_kernel()));
}

}  // namespace
}  // namespace tbtune
