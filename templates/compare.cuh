// templates/compare.cuh: compares a candidate's result with the reference on the GPU
// (tuner/device_compare.cpp launches it). A default 3D result is 2.8 GB in double: on the GPU
// the comparison is one read of it and of the reference at memory bandwidth (a few ms), where
// the host had to download it and walk it. Plain CUDA, compiled by NVRTC as it is.
//
// The rule is tuner/verify.cpp's max_error, cell by cell: a reference that is not finite (it
// overflowed) is skipped; a non-finite result against a finite reference is an infinite
// error; otherwise |result - reference| / max(|reference|, 1). The largest error is returned in
// *worst_bits as the bits of a double: non-negative doubles order as their bit patterns do
// as unsigned integers, so an integer atomicMax finds the largest. The host zeroes it first.

template <class T>
__device__ void tb_max_error(const T* __restrict__ result, const T* __restrict__ reference,
                             long long n, unsigned long long* worst_bits) {
  double worst = 0.0;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double x = double(result[i]), y = double(reference[i]);
    if (!isfinite(y)) continue;
    const double e = isfinite(x) ? fabs(x - y) / fmax(fabs(y), 1.0) : __longlong_as_double(0x7ff0000000000000LL);
    worst = fmax(worst, e);
  }
  for (int lane = 16; lane > 0; lane /= 2) worst = fmax(worst, __shfl_xor_sync(0xffffffffu, worst, lane));
  if ((threadIdx.x & 31) == 0) atomicMax(worst_bits, (unsigned long long)__double_as_longlong(worst));
}

extern "C" __global__ void tb_max_error_float(const float* result, const float* reference,
                                              long long n, unsigned long long* worst_bits) {
  tb_max_error(result, reference, n, worst_bits);
}

extern "C" __global__ void tb_max_error_double(const double* result, const double* reference,
                                               long long n, unsigned long long* worst_bits) {
  tb_max_error(result, reference, n, worst_bits);
}
