// What session 40's CUDA models (radix_pass.cu, compact.cu) share: error checks and
// a median time. Not arrc code and not part of its build.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

// Keeps the device busy for about `cycles` clocks, so that what is queued after it
// is queued before the device reaches it (the host's time to queue is not timed).
__global__ void hold_k(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// The median of 21 timed calls of `f` (after 3 untimed), in microseconds, by events
// around each call on the default stream; `pre` runs before each, untimed.
template <class F, class P> float median_us(F f, P pre) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int i = 0; i < 24; i++) {
    pre();
    hold_k<<<1, 1>>>(200000);
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (i >= 3) t.push_back(ms * 1000.f);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
template <class F> float median_us(F f) { return median_us(f, [] {}); }
