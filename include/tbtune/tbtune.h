/* tbtune.h: the C API over tbtune.hpp, for C and (through tbtune.f90) Fortran applications.
 *
 * Every function returns a tbtune_status; nothing throws across this boundary. After every call,
 * tbtune_last_message() holds one line for the calling thread: the error, or what a lookup found
 * (a hit, or the miss reason and what the miss policy served).
 *
 *   tbtune_options o;
 *   tbtune_options_init(&o);
 *   o.policy = TBTUNE_POLICY_NEAREST;
 *   tbtune_kernel* k = NULL;
 *   int reason = 0;
 *   if (tbtune_lookup("heat.yaml", &o, &k, &reason) != TBTUNE_OK) { puts(tbtune_last_message()); }
 *   else if (!k) { printf("miss: %s\n", tbtune_last_message()); }   // policy fail
 *   else { void* out; tbtune_run(k, d_a, d_b, 1000, NULL, &out); tbtune_kernel_free(k); }
 */
#ifndef TBTUNE_H
#define TBTUNE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a call returned; the values of tbtune::ErrorCode. */
typedef enum tbtune_status {
  TBTUNE_OK = 0,
  TBTUNE_ERR_BAD_SPEC = 1,     /**< the spec does not parse or validate (file:line:col) */
  TBTUNE_ERR_BAD_ARGUMENT = 2, /**< a null pointer, a wrong dtype or policy, a bad domain */
  TBTUNE_ERR_CACHE = 3,        /**< the cache cannot be read (corrupt, newer schema) */
  TBTUNE_ERR_CUDA = 4,         /**< a CUDA call failed, or there is no GPU where one is needed */
  TBTUNE_ERR_COMPILE = 5,      /**< a fallback failed to compile, or NVRTC cannot be loaded */
  TBTUNE_ERR_NO_KERNEL = 6,    /**< a kernel call on a null handle */
  TBTUNE_ERR_INTERNAL = 7
} tbtune_status;

/** Miss policies (tbtune::MissPolicy); DEFAULT reads $TBTUNE_MISS_POLICY, else fail. */
enum {
  TBTUNE_POLICY_DEFAULT = -1,
  TBTUNE_POLICY_FAIL = 0,
  TBTUNE_POLICY_NAIVE = 1,
  TBTUNE_POLICY_NEAREST = 2,
  TBTUNE_POLICY_MODEL = 3
};

/** Precision; SPEC keeps the spec's. */
enum { TBTUNE_DTYPE_SPEC = 0, TBTUNE_DTYPE_FLOAT = 1, TBTUNE_DTYPE_DOUBLE = 2 };

/** Miss reasons, in tbtune::MissReason order (0: a hit); names from tbtune_reason_name(). */
enum {
  TBTUNE_HIT = 0,
  TBTUNE_MISS_NO_CACHE = 1,
  TBTUNE_MISS_STENCIL_UNKNOWN = 2,
  TBTUNE_MISS_NO_GPU = 3,
  TBTUNE_MISS_OTHER_DEVICE = 4,
  TBTUNE_MISS_OTHER_DRIVER = 5,
  TBTUNE_MISS_OTHER_DTYPE = 6,
  TBTUNE_MISS_OTHER_DOMAIN = 7,
  TBTUNE_MISS_OTHER_STEP_CLASS = 8,
  TBTUNE_MISS_STALE_KERNEL = 9
};

/** Where a kernel came from (tbtune::KernelSource). */
enum { TBTUNE_SOURCE_NONE = 0, TBTUNE_SOURCE_CACHE = 1, TBTUNE_SOURCE_NEAREST = 2,
       TBTUNE_SOURCE_MODEL = 3, TBTUNE_SOURCE_NAIVE = 4 };

/** Lookup options; start from tbtune_options_init(). Zero means "the spec's" / "the default". */
typedef struct tbtune_options {
  const char* db; /**< cache file; NULL: $TBTUNE_DB or the default path */
  long nx, ny, nz; /**< domain, boundary ring included (nz = 1 in 2D); 0: the spec's */
  int dtype;       /**< TBTUNE_DTYPE_* */
  long steps;      /**< selects the step class; 0: the spec's */
  int policy;      /**< TBTUNE_POLICY_* */
} tbtune_options;

/** A kernel loaded on the current device (opaque); free with tbtune_kernel_free(). */
typedef struct tbtune_kernel tbtune_kernel;

/** Fills `options` with the defaults. */
void tbtune_options_init(tbtune_options* options);

/** The thread's last message (an error, or what the last lookup found). Never NULL. */
const char* tbtune_last_message(void);
/** "hit", "no_cache", "stencil_unknown", ... ; "unknown" for a value out of range. */
const char* tbtune_reason_name(int reason);

/** Looks up the spec at `spec_path` on the current device. On TBTUNE_OK, `*kernel` is the kernel
 * (or NULL on a miss the policy did not serve: `*reason` says why), and `*reason` a TBTUNE_HIT /
 * TBTUNE_MISS_* value. `options` may be NULL (the defaults); `reason` may be NULL. */
tbtune_status tbtune_lookup(const char* spec_path, const tbtune_options* options,
                            tbtune_kernel** kernel, int* reason);
/** The same from spec text in memory. */
tbtune_status tbtune_lookup_text(const char* spec_text, const tbtune_options* options,
                                 tbtune_kernel** kernel, int* reason);
/** The naive reference kernel for the spec (compiled with NVRTC); needs a GPU. */
tbtune_status tbtune_naive(const char* spec_path, const tbtune_options* options, tbtune_kernel** kernel);

/** Advances `steps` steps on `stream` (a cudaStream_t, NULL: the default one) from `a` (the
 * current field) ping-ponging with `b`; `*result` is whichever holds the result. Asynchronous.
 * TBTUNE_ERR_BAD_ARGUMENT for an array the driver knows to be smaller than the kernel's domain
 * (tbtune_kernel_shape) needs. */
tbtune_status tbtune_run(tbtune_kernel* kernel, void* a, void* b, long steps, void* stream, void** result);

/** The strategy's name ("cmq2d"); the pointer lives as long as the kernel. */
const char* tbtune_kernel_strategy(const tbtune_kernel* kernel);
/** GCells/s when tuned (0: a fallback nobody timed, or a NULL kernel). */
double tbtune_kernel_tuned_gcells(const tbtune_kernel* kernel);
/** TBTUNE_SOURCE_* */
int tbtune_kernel_source(const tbtune_kernel* kernel);
/** The domain and dtype (TBTUNE_DTYPE_FLOAT / _DOUBLE) the kernel was built for. */
tbtune_status tbtune_kernel_shape(const tbtune_kernel* kernel, long domain[3], int* dtype);
/** Frees the kernel (NULL is fine). */
void tbtune_kernel_free(tbtune_kernel* kernel);

/** Device memory helpers for applications that do not use the CUDA runtime themselves
 * (Fortran): allocate, free, copy in and out, wait for the device. */
tbtune_status tbtune_device_alloc(size_t bytes, void** ptr);
tbtune_status tbtune_device_free(void* ptr);
tbtune_status tbtune_copy_to_device(void* device_dst, const void* host_src, size_t bytes);
tbtune_status tbtune_copy_to_host(void* host_dst, const void* device_src, size_t bytes);
tbtune_status tbtune_synchronize(void);

#ifdef __cplusplus
}
#endif

#endif /* TBTUNE_H */
