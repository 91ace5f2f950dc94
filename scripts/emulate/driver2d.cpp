// Host driver of scripts/emulate/run2d.sh: launches tb_full and tb_edge (a pass; with split 0
// tb_full alone) or the rest kernel of an included wpipe2d kernel with given block counts (the
// tiles' shares: tb_share), the cell step kernel over the interior, and compares with a CPU
// reference. Shared memory starts as NaN: garbage that reaches an output fails.
#include <array>

#include "shim.hpp"
#include KERNEL
#include "tuner/codegen/strategies/wpipe2d_grid.hpp"
int main(int argc, char** argv) {
  const int nx = atoi(argv[1]), ny = atoi(argv[2]), steps = atoi(argv[3]);
  // Blocks: tb_full's and, with split, tb_edge's (the tuner gives them one wave of the GPU's
  // slots); the rest and step kernels take the first number.
  const long blocks = argc > 4 ? atol(argv[4]) : 1, edge_blocks = argc > 5 ? atol(argv[5]) : blocks;
  const int R = TB_RADIUS, D = TB_WARPS * TB_TW, cols = 32 * TB_RX;
  const long n = long(nx) * ny;
  std::vector<real> a = tb_random_input<real>(n), b;
  const std::vector<real> ref = tb_reference<TbStencil>(a, nx, ny, 1, steps, R);
  b = a;  // out starts as a copy (boundary cells are never written)
  // One kernel's blocks one at a time, the last first: a block that wrote cells of another
  // would be caught (overwritten later) instead of hidden.
  auto launch = [&](void (*kernel)(const real*, real*, int, int, int, real*), std::array<unsigned, 3> grid,
                    int warps, long smem) {
    gridDim = {grid[0], grid[1], 1};
    blockDim = {unsigned(warps * 32), 1, 1};
    for (unsigned by = grid[1]; by-- > 0;)
      for (unsigned bx = grid[0]; bx-- > 0;) {
        std::vector<unsigned char> sm(smem);
        for (long i = 0; i < smem / long(sizeof(real)); ++i) reinterpret_cast<real*>(sm.data())[i] = real(NAN);
        std::barrier<> bar(warps * 32);
        std::vector<std::unique_ptr<Warp>> ws;
        for (int w = 0; w < warps; ++w) ws.push_back(std::make_unique<Warp>());
        std::vector<std::thread> th;
        for (int t = 0; t < warps * 32; ++t)
          th.emplace_back([&, t] {
            blockIdx = {bx, by, 0};
            threadIdx = {unsigned(t), 0, 0};
            blk_bar = &bar;
            tb_warp = ws[t / 32].get();
            tb_block_smem = sm.data();
            tb_block_smem_bytes = sm.size();
            tb_input_begin = reinterpret_cast<std::uintptr_t>(a.data());
            tb_input_end = reinterpret_cast<std::uintptr_t>(a.data() + a.size());
            kernel(a.data(), b.data(), nx, ny, 1, nullptr);
          });
        for (auto& t : th) t.join();
      }
  };
  // The rest kernel, where the source has one (built for the same steps: run2d.sh emits with
  // them), takes the last steps % D in one pass, as KernelSet does.
#ifdef TB_REST_WARPS
  const int rest_warps = TB_REST_WARPS, rest_depth = TB_REST_DEPTH;
  auto* const rest_kernel = WP_REST_NAME;
#else
  const int rest_warps = 1, rest_depth = 0;
  auto* const rest_kernel = tb_full;  // never launched
#endif
  for (int done = 0; done < steps;) {
    const bool full = steps - done >= D, rest = !full && rest_depth > 0 && steps - done >= rest_depth;
    const int depth = full ? D : rest ? rest_depth : 1, warps = full ? TB_WARPS : rest_warps;
    const long smem = long(wp_ring_groups(warps)) * TB_ROWS * cols * long(sizeof(real));  // as the template
    if (!full && !rest) {
      // One step, one thread per interior cell (the host's naive_step_launch).
      const U3 grid{unsigned(nx - 2 * R + TB_STEP_BX - 1) / TB_STEP_BX, unsigned(ny - 2 * R + TB_STEP_BY - 1) / TB_STEP_BY, 1};
      tb_run_plain(tb_cell_step, grid, U3{TB_STEP_BX, TB_STEP_BY, 1}, (const real*)a.data(), b.data(), nx, ny, 1,
                   (real*)nullptr);
    } else
#if TB_WP_SPLIT
    if (full) {
      launch(tb_edge, {unsigned(edge_blocks), 1, 1}, warps, smem);
      if (tbtune::wpipe2d_tiles(nx, R, TB_RX, depth) > 2) launch(tb_full, {unsigned(blocks), 1, 1}, warps, smem);
    } else
#endif
    launch(full ? tb_full : rest_kernel, {unsigned(blocks), 1, 1}, warps, smem);
    a.swap(b);
    b = a;
    done += depth;
  }
  return tb_verdict(a, ref, nx, ny);
}
