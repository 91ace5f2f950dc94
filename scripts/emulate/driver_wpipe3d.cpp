// Host driver of scripts/emulate/run3d.sh for wpipe3d: launches tb_edge and tb_full (a pass) or
// the rest kernel of an included kernel with the template's tile arithmetic, as the strategy does
// (tuner/codegen/strategies/wpipe3d.cpp), the cell step kernel over the interior, and compares
// with the CPU reference (shim.hpp).
// Shared memory starts as NaN: garbage that reaches an output fails.
#include <array>

#include "shim.hpp"
#include KERNEL
int main(int argc, char** argv) {
  const int nx = atoi(argv[1]), ny = atoi(argv[2]), nz = atoi(argv[3]), steps = atoi(argv[4]);
  const unsigned segs = argc > 5 ? unsigned(atoi(argv[5])) : 1u;  // z segments (the tuner fills waves)
  const int R = TB_RADIUS, D = TB_WARPS * TB_TW, cols = 32 * TB_RX, rows = TB_WY * TB_CY + 2 * R;
  const long n = long(nx) * ny * nz;
  std::vector<real> a = tb_random_input<real>(n), b;
  const std::vector<real> ref = tb_reference<TbStencil>(a, nx, ny, nz, steps, R);
  b = a;  // out starts as a copy (boundary cells are never written)
  // Blocks one at a time, the last first: a block that wrote cells of another would be caught
  // (overwritten later) instead of hidden.
  auto launch = [&](void (*kernel)(const real*, real*, int, int, int, real*), std::array<unsigned, 3> grid,
                    int stages, long smem) {
    const int threads = stages * TB_WY * 32;
    gridDim = {grid[0], grid[1], grid[2]};
    blockDim = {unsigned(threads), 1, 1};
    for (unsigned bz = grid[2]; bz-- > 0;)
      for (unsigned by = grid[1]; by-- > 0;)
        for (unsigned bx = grid[0]; bx-- > 0;) {
          std::vector<unsigned char> sm(smem);
          for (long i = 0; i < smem / long(sizeof(real)); ++i) reinterpret_cast<real*>(sm.data())[i] = real(NAN);
          std::barrier<> bar(threads);
          std::vector<std::unique_ptr<std::barrier<>>> named;
          std::vector<std::barrier<>*> named_ptr(16, nullptr);
          for (int id = 1; id <= stages; ++id) {
            named.push_back(std::make_unique<std::barrier<>>(TB_WY * 32));
            named_ptr[id] = named.back().get();
          }
          std::vector<std::unique_ptr<Warp>> ws;
          for (int w = 0; w < threads / 32; ++w) ws.push_back(std::make_unique<Warp>());
          std::vector<std::thread> th;
          for (int t = 0; t < threads; ++t)
            th.emplace_back([&, t] {
              blockIdx = {bx, by, bz};
              threadIdx = {unsigned(t), 0, 0};
              blk_bar = &bar;
              tb_named = named_ptr.data();
              tb_warp = ws[t / 32].get();
              tb_block_smem = sm.data();
              tb_block_smem_bytes = sm.size();
              tb_input_begin = reinterpret_cast<std::uintptr_t>(a.data());
              tb_input_end = reinterpret_cast<std::uintptr_t>(a.data() + a.size());
              kernel(a.data(), b.data(), nx, ny, nz, nullptr);
            });
          for (auto& t : th) t.join();
        }
  };
  // The rest kernel, where the source has one (built for the same steps: run3d.sh emits with
  // them), takes the last steps % D in one pass, as KernelSet does.
#ifdef TB_REST_WARPS
  const int rest_stages = TB_REST_WARPS, rest_tw = TB_REST_TW, rest_depth = TB_REST_DEPTH;
  auto* const rest_kernel = WP_REST_NAME;
#else
  const int rest_stages = 1, rest_tw = 1, rest_depth = 0;
  auto* const rest_kernel = tb_full;  // never launched
#endif
  for (int done = 0; done < steps;) {
    const bool full = steps - done >= D, rest = !full && rest_depth > 0 && steps - done >= rest_depth;
    const int depth = full ? D : rest ? rest_depth : 1;
    const int stages = full ? TB_WARPS : rest ? rest_stages : 1, tw = full ? TB_TW : rest ? rest_tw : 1;
    // As wpipe3d.cpp: the ring and the stages' exchange areas.
    const long ring = long(stages + TB_PF_MIN + 1) * rows * cols;
    const long exchange = TB_WY > 1 ? long(stages) * (tw - 1) * TB_WY * 2 * R * cols : 0;
    const long smem = (ring + exchange) * long(sizeof(real));
    // The template's own tile arithmetic (w3_axes), as the strategy's launch mirrors it.
    W3Axis x, y;
    if (full) w3_axes<TB_WARPS * TB_TW>(nx, ny, x, y);
#ifdef TB_REST_WARPS
    else if (rest) w3_axes<TB_REST_DEPTH>(nx, ny, x, y);
#endif
    if (full) {
      const unsigned plain_x = unsigned(x.hi - x.lo + 1), plain_y = unsigned(y.hi - y.lo + 1);
      const unsigned frame = unsigned(x.tiles * y.tiles) - plain_x * plain_y;
      if (frame > 0) launch(tb_edge, {frame, 1, segs}, stages, smem);
      launch(tb_full, {plain_x, plain_y, segs}, stages, smem);
    } else if (rest) {
      launch(rest_kernel, {unsigned(x.tiles), unsigned(y.tiles), segs}, stages, smem);
    } else {
      // One step, one thread per interior cell (the host's naive_step_launch).
      const U3 grid{unsigned(nx - 2 * R + TB_STEP_BX - 1) / TB_STEP_BX, unsigned(ny - 2 * R + TB_STEP_BY - 1) / TB_STEP_BY,
                    unsigned(nz - 2 * R + TB_STEP_BZ - 1) / TB_STEP_BZ};
      tb_run_plain(tb_cell_step, grid, U3{TB_STEP_BX, TB_STEP_BY, TB_STEP_BZ}, (const real*)a.data(), b.data(), nx, ny,
                   nz, (real*)nullptr);
    }
    a.swap(b);
    b = a;
    done += depth;
  }
  return tb_verdict(a, ref, nx, ny);
}
