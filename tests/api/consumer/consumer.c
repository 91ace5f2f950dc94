/* The installed C API on a machine without a GPU: a miss with its reason, and bad input as
 * status codes with a message, never a crash.
 *   consumer_c SPEC MISSING_DB */
#include <stdio.h>
#include <string.h>

#include "tbtune/tbtune.h"

static int failures = 0;

static void expect(int ok, const char* what) {
  printf("%s %s (%s)\n", ok ? "ok  " : "FAIL", what, tbtune_last_message());
  if (!ok) ++failures;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  tbtune_options o;
  tbtune_options_init(&o);
  o.db = argv[2];
  tbtune_kernel* k = (tbtune_kernel*)&o; /* must be reset to NULL */
  int reason = -1;
  expect(tbtune_lookup(argv[1], &o, &k, &reason) == TBTUNE_OK && k == NULL && reason == TBTUNE_MISS_NO_CACHE,
         "missing cache: no kernel, reason no_cache");
  expect(strcmp(tbtune_reason_name(reason), "no_cache") == 0, "reason name");
  expect(tbtune_lookup(NULL, &o, &k, &reason) == TBTUNE_ERR_BAD_ARGUMENT, "null spec path");
  expect(tbtune_lookup(argv[1], &o, NULL, &reason) == TBTUNE_ERR_BAD_ARGUMENT, "null kernel pointer");
  expect(tbtune_lookup("/no/such/spec.yaml", &o, &k, &reason) == TBTUNE_ERR_BAD_SPEC, "missing spec file");
  expect(tbtune_lookup_text("name: x\nexpr: \"u[0,0\"\n", &o, &k, &reason) == TBTUNE_ERR_BAD_SPEC, "bad spec text");
  o.db = argv[1]; /* a YAML file is no SQLite cache */
  expect(tbtune_lookup(argv[1], &o, &k, &reason) == TBTUNE_ERR_CACHE, "corrupt cache");
  o.db = argv[2];
  o.dtype = 7;
  expect(tbtune_lookup(argv[1], &o, &k, &reason) == TBTUNE_ERR_BAD_ARGUMENT, "wrong dtype");
  o.dtype = TBTUNE_DTYPE_SPEC;
  o.nx = 2;
  o.ny = 2;
  expect(tbtune_lookup(argv[1], &o, &k, &reason) == TBTUNE_ERR_BAD_ARGUMENT, "domain too small");
  void* result = NULL;
  expect(tbtune_run(NULL, NULL, NULL, 10, NULL, &result) == TBTUNE_ERR_NO_KERNEL, "run without a kernel");
  long domain[3];
  int dtype = 0;
  expect(tbtune_kernel_shape(NULL, domain, &dtype) == TBTUNE_ERR_NO_KERNEL, "shape without a kernel");
  tbtune_kernel_free(NULL);
  if (failures == 0) printf("consumer_c: ok\n");
  return failures == 0 ? 0 : 1;
}
