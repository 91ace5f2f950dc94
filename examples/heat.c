/* A heat-equation application in C: look the tuned kernel up at start-up (with a miss policy),
 * run the time loop, print GCells/s, and check the result against the naive kernel.
 *   heat_c SPEC [fail|naive|nearest|model]
 * Exit: 0 matches the naive kernel, 1 differs, 2 error, 3 no kernel (a miss under fail, no GPU). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tbtune/tbtune.h"

#define CHECK(call)                                                       \
  do {                                                                    \
    if ((call) != TBTUNE_OK) {                                            \
      fprintf(stderr, "heat_c: %s: %s\n", #call, tbtune_last_message()); \
      exit(2);                                                            \
    }                                                                     \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Runs `k` for `steps` from `init` into `out`; returns the seconds it took. */
static double simulate(tbtune_kernel* k, const double* init, double* out, size_t n, long steps) {
  void *a = NULL, *b = NULL, *result = NULL;
  const size_t bytes = n * sizeof(double);
  CHECK(tbtune_device_alloc(bytes, &a));
  CHECK(tbtune_device_alloc(bytes, &b));
  CHECK(tbtune_copy_to_device(a, init, bytes));
  CHECK(tbtune_copy_to_device(b, init, bytes)); /* both hold the fixed boundary ring */
  const double start = now();
  CHECK(tbtune_run(k, a, b, steps, NULL, &result));
  CHECK(tbtune_synchronize());
  const double seconds = now() - start;
  CHECK(tbtune_copy_to_host(out, result, bytes));
  CHECK(tbtune_device_free(a));
  CHECK(tbtune_device_free(b));
  return seconds;
}

int main(int argc, char** argv) {
  static const char* policies[] = {"fail", "naive", "nearest", "model"};
  if (argc < 2) {
    fprintf(stderr, "usage: heat_c SPEC [fail|naive|nearest|model]\n");
    return 2;
  }
  tbtune_options o;
  tbtune_options_init(&o);
  for (int p = 0; argc > 2 && p < 4; ++p)
    if (strcmp(argv[2], policies[p]) == 0) o.policy = p;
  if (argc > 2 && o.policy == TBTUNE_POLICY_DEFAULT) {
    fprintf(stderr, "heat_c: policy '%s': expected fail, naive, nearest or model\n", argv[2]);
    return 2;
  }
  tbtune_kernel* k = NULL;
  int reason = 0;
  CHECK(tbtune_lookup(argv[1], &o, &k, &reason));
  printf("lookup (%s): %s\n", tbtune_reason_name(reason), tbtune_last_message());
  if (!k) return 3;

  long domain[3];
  int dtype = 0;
  CHECK(tbtune_kernel_shape(k, domain, &dtype));
  if (dtype != TBTUNE_DTYPE_DOUBLE) {
    fprintf(stderr, "heat_c: this example runs double precision only\n");
    return 2;
  }
  const long nx = domain[0], ny = domain[1];
  const size_t n = (size_t)(nx * ny * domain[2]);
  double* field = malloc(n * sizeof(double));
  double* tuned = malloc(n * sizeof(double));
  double* expected = malloc(n * sizeof(double));
  for (long y = 0; y < ny; ++y) /* a hot square in a cold plate */
    for (long x = 0; x < nx; ++x)
      field[y * nx + x] = (labs(x - nx / 2) < nx / 8 && labs(y - ny / 2) < ny / 8) ? 1.0 : 0.0;

  const long steps = 1000;
  const double seconds = simulate(k, field, tuned, n, steps);
  const double cells = (double)(nx - 2) * (double)(ny - 2); /* heat2d: radius 1 */
  printf("heat2d: %s, %ld steps of %ldx%ld in %.3f s: %.1f GCells/s\n", tbtune_kernel_strategy(k), steps,
         nx, ny, seconds, cells * (double)steps / seconds / 1e9);

  tbtune_options same = o;
  same.nx = nx;
  same.ny = ny;
  same.nz = domain[2];
  tbtune_kernel* naive = NULL;
  CHECK(tbtune_naive(argv[1], &same, &naive));
  simulate(naive, field, expected, n, steps);
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = fabs(tuned[i] - expected[i]) / fmax(fabs(expected[i]), 1.0);
    if (d > worst) worst = d;
  }
  printf("%s: max relative difference to the naive kernel %.3g\n", worst <= 1e-9 ? "PASS" : "FAIL", worst);
  tbtune_kernel_free(naive);
  tbtune_kernel_free(k);
  free(field);
  free(tuned);
  free(expected);
  return worst <= 1e-9 ? 0 : 1;
}
