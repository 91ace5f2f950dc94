// Host driver of scripts/emulate/run2d.sh: launches tb_full / tb_step of an included wpipe2d
// kernel the way tuner/codegen/strategies/wpipe2d.cpp does (its geometry mirrored here) and
// compares with a CPU reference. Shared memory starts as NaN: garbage that reaches an output fails.
#include "shim.hpp"
#include KERNEL
struct HostAcc {
  const real* c;
  long sy;
  real operator()(int dx, int dy, int) const { return c[dx + dy * sy]; }
};
int main(int argc, char** argv) {
  const int nx = atoi(argv[1]), ny = atoi(argv[2]), steps = atoi(argv[3]);
  const unsigned segs = argc > 4 ? unsigned(atoi(argv[4])) : 1u;  // y segments (gridDim.y)
  const int R = TB_RADIUS, RX = TB_RX, D = TB_WARPS * TB_TW, cols = 32 * RX;
  const long n = long(nx) * ny;
  std::vector<real> a(n), b(n), ref(n), next(n);
  unsigned s = 12345;
  for (long i = 0; i < n; ++i) { s = s * 1664525u + 1013904223u; a[i] = real((s >> 8) % 1000) / 1000; }
  ref = a;
  for (int st = 0; st < steps; ++st) {
    next = ref;
    for (int y = R; y < ny - R; ++y)
      for (int x = R; x < nx - R; ++x) next[x + long(nx) * y] = TbStencil::apply(HostAcc{&ref[x + long(nx) * y], nx});
    ref.swap(next);
  }
  b = a;  // out starts as a copy (boundary cells are never written)
  for (int done = 0; done < steps;) {
    const bool full = steps - done >= D;
    const int depth = full ? D : 1, warps = full ? TB_WARPS : 1;
    const unsigned gx = unsigned((nx - 2 * R + cols - 2 * depth * R - 1) / (cols - 2 * depth * R));
    const long smem = long(wp_ring_groups(warps)) * TB_ROWS * cols * long(sizeof(real));  // as the template
    gridDim = {gx, segs, 1};
    blockDim = {unsigned(warps * 32), 1, 1};
    // Blocks one at a time, last segment first: a block that wrote rows of another would be
    // caught (overwritten later) instead of hidden.
    for (unsigned by = segs; by-- > 0;)
      for (unsigned bx = 0; bx < gx; ++bx) {
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
            if (full) tb_full(a.data(), b.data(), nx, ny, 1, nullptr);
            else tb_step(a.data(), b.data(), nx, ny, 1, nullptr);
          });
        for (auto& t : th) t.join();
      }
    a.swap(b);
    b = a;
    done += depth;
  }
  const double tol = sizeof(real) == 8 ? 1e-10 : 1e-4;
  long bad = 0, first = -1;
  double err = 0;
  for (long i = 0; i < n; ++i) {
    const double e = std::fabs(double(a[i]) - double(ref[i])) / std::max(1.0, std::fabs(double(ref[i])));
    if (!(e <= tol)) { if (first < 0) first = i; ++bad; }
    err = std::isnan(e) ? INFINITY : std::max(err, e);
  }
  if (bad) std::printf("FAIL bad=%ld first=(%ld,%ld) got %g want %g\n", bad, first % nx, first / nx, double(a[first]), double(ref[first]));
  else std::printf("OK max rel error %g\n", err);
  return bad != 0;
}
