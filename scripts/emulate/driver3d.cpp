// Host driver of scripts/emulate/run3d.sh: launches tb_full / tb_step of the included kernel the
// way tuner/strategies/tile3d.cpp does (grids mirrored here) and checks against a CPU reference.
#include "shim.hpp"
#include KERNEL
int main(int argc, char** argv) {
  int nx = atoi(argv[1]), ny = atoi(argv[2]), nz = atoi(argv[3]), steps = atoi(argv[4]);
  const unsigned segs = argc > 5 ? unsigned(atoi(argv[5])) : 1u;  // smtile3d's z segments
  const int R = TB_RADIUS, D = TB_DEPTH, TX = TB_TX, TY = TB_TY, NTY = TB_TY / TB_CY;
  long n = (long)nx * ny * nz;
  std::vector<real> a = tb_random_input<real>(n), b;
  const std::vector<real> ref = tb_reference<TbStencil>(a, nx, ny, nz, steps, R);
  b = a;  // out starts as a copy (boundary cells are never written)
  int done = 0;
  while (done < steps) {
    const bool full = steps - done >= D;
    const int depth = full ? D : 1;
    unsigned gx, gy;
#if TB_DEVTILE
    gx = (nx + TX - 1) / TX; gy = (ny + TY - 1) / TY;
#else
    gx = (nx - 2 * R + TX - 2 * (depth - 1) * R - 1) / (TX - 2 * (depth - 1) * R);
    gy = (ny - 2 * R + TY - 2 * (depth - 1) * R - 1) / (TY - 2 * (depth - 1) * R);
#endif
    const long smem = (long)(TB_RING0 + (depth - 1) * TB_RING) * (TX + 2 * R) * (TY + 2 * R) * sizeof(real);
    const long scratch_n = (long)gx * gy * 2 * std::max(depth - 1, 0) * TB_Z * (TX + 2 * R) * (TY + 2 * R);
    std::vector<real> scratch(scratch_n + 1, real(NAN));
    gridDim = {gx, gy, TB_DEVTILE ? 1u : segs}; blockDim = {(unsigned)TX, (unsigned)NTY, 1};
    const int nt = TX * NTY;
    auto run_blocks = [&](std::vector<U3> blocks) {
      std::vector<std::vector<unsigned char>> sm(blocks.size());
      std::vector<std::unique_ptr<std::barrier<>>> bars;
      for (auto& m : sm) {
        m.resize(smem);
        real* r = (real*)m.data();
        for (long i = 0; i < smem / (long)sizeof(real); ++i) r[i] = real(NAN);  // garbage must not reach the output
        bars.push_back(std::make_unique<std::barrier<>>(nt));
      }
      std::barrier<> gb((long)blocks.size() * nt);
      grid_bar = &gb;
      std::vector<std::thread> th;
      for (size_t bi = 0; bi < blocks.size(); ++bi)
        for (int t = 0; t < nt; ++t)
          th.emplace_back([&, bi, t] {
            blockIdx = blocks[bi];
            threadIdx = {(unsigned)(t % TX), (unsigned)(t / TX), 0};
            blk_bar = bars[bi].get();
            tb_block_smem = sm[bi].data();
            tb_block_smem_bytes = sm[bi].size();
            if (full) tb_full(a.data(), b.data(), nx, ny, nz, scratch.data());
            else tb_step(a.data(), b.data(), nx, ny, nz, scratch.data());
          });
      for (auto& t : th) t.join();
    };
#if TB_DEVTILE
    std::vector<U3> all;
    for (unsigned y = 0; y < gy; ++y) for (unsigned x = 0; x < gx; ++x) all.push_back({x, y, 0});
    run_blocks(all);
#else
    // Blocks one at a time, segments from the last: a segment that wrote planes of the next one
    // would be caught instead of overwritten (on a GPU that would be a race).
    for (unsigned z = segs; z-- > 0;)
      for (unsigned y = 0; y < gy; ++y) for (unsigned x = 0; x < gx; ++x) run_blocks({{x, y, z}});
#endif
    a.swap(b);
    b = a;
    done += depth;
  }
  double err = 0; long bad = 0, first = -1;
  for (long i = 0; i < n; ++i) {
    double e = std::fabs(double(a[i]) - double(ref[i]));
    if (!(e <= 1e-4 * (1 + std::fabs(double(ref[i]))))) { if (first < 0) first = i; ++bad; }
    if (!(e <= err)) err = std::isnan(e) ? INFINITY : std::max(err, e);
  }
  if (bad) printf("FAIL bad=%ld first=(%ld,%ld,%ld) got %g want %g\n", bad, first % nx, first / nx % ny, first / nx / ny, double(a[first]), double(ref[first]));
  else printf("OK maxerr %g\n", err);
  return bad != 0;
}
