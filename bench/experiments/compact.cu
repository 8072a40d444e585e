// Session 40's experiment for open question 5 (not part of arrc): how fast can a
// one-pass compaction `(x>0.5)/x` of f32 run on the H200 in the shape arrc emits
// (a chained scan of the kept counts with decoupled lookback that stores the kept
// values in the same pass), against a copy and CUB's DeviceSelect::If?  arrc's
// kernel took 676 us at 2^28 (session 40), 60% of the copy's rate over the bytes it
// reads and writes; its `⌈\` (the same scan without the compaction) took 603.
//
// Kernels, over the same 2^lg floats uniform in [0, 1) (about half kept), each
// checked against the CPU:
//   copy     - float4 grid-stride copy of the whole array;
//   staged   - arrc's shape: blocks of 384 threads, tiles of 384 x 4·ROUNDS floats
//              claimed in order, each thread's rounds read as float4 and held; per
//              round a warp scan of the lanes' kept counts; warp 0 looks back for
//              the tile's prefix (status words packed, published by atomicExch);
//              each warp round's kept values staged in shared memory in order and
//              stored from there as one run, a lane a value;
//   direct   - the same, each lane storing its own kept values where they go;
//   cub      - cub::DeviceSelect::If with the same predicate (its count to device
//              memory), the reference a vendor library gives.
// Not arrc code and not part of its build; written in session 40, first run in
// session 41 (PERFORMANCE.md, "Session 41": staged 384 x 24 455 us at 2^28, 90% of
// the copy rate; direct stores 639; CUB 598; arrc then 676, now 593).
// On the device machine, from the repository root:
//   nvcc -O3 -arch=sm_90 -Xptxas -v -o /tmp/compact bench/experiments/compact.cu
//   /tmp/compact 26; /tmp/compact 28
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <random>
#include <cuda_runtime.h>
#include <cub/cub.cuh>
#include "common.cuh"


constexpr int WG = 384;
constexpr int WARPS = WG / 32;

struct Keep {
  __host__ __device__ __forceinline__ bool operator()(float v) const { return v > 0.5f; }
};

__device__ __forceinline__ unsigned long long pack(unsigned v, unsigned flag) {
  return ((unsigned long long)v << 32) | flag;
}

// Warp 0's lookback from tile t-1 (sums of kept counts): a window of 32 tiles, stops
// at the first inclusive prefix nearer than any unpublished tile.
__device__ __forceinline__ unsigned look_back(const unsigned long long* st, unsigned t, int lane) {
  long j = (long)t - 1;
  unsigned prefix = 0;
  while (true) {
    long tj = j - lane;
    unsigned long long w = tj >= 0 ? *(volatile const unsigned long long*)(st + tj) : pack(0, 2);
    unsigned flag = (unsigned)(w & 3);
    unsigned val = (unsigned)(w >> 32);
    unsigned im = __ballot_sync(0xffffffffu, flag == 2);
    unsigned um = __ballot_sync(0xffffffffu, flag == 0);
    int fi = im ? __ffs(im) - 1 : 32;
    int fu = um ? __ffs(um) - 1 : 32;
    if (fi < fu) {
      prefix += __reduce_add_sync(0xffffffffu, lane <= fi ? val : 0u);
      break;
    }
    prefix += __reduce_add_sync(0xffffffffu, lane < fu ? val : 0u);
    j -= fu;
  }
  return prefix;
}

// MINB: __launch_bounds__' blocks a multiprocessor (3 is arrc's 56 registers; the
// 384 x 32 tile spills there, so it runs at 2).
template <int ROUNDS, bool STAGED, int MINB>
__global__ void __launch_bounds__(WG, MINB) compact_k(const float4* __restrict__ in, float* __restrict__ out,
                                                   unsigned long long* st, unsigned* counter,
                                                   unsigned* total, unsigned ntiles) {
  __shared__ unsigned sh_tile;
  __shared__ unsigned sh_tot[WARPS];
  __shared__ unsigned sh_prefix;
  __shared__ float stage[WARPS][128];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) sh_tile = atomicAdd(counter, 1);
  __syncthreads();
  unsigned t = sh_tile;
  float4 x[ROUNDS];
#pragma unroll
  for (int r = 0; r < ROUNDS; r++)
    x[r] = in[(size_t)t * (WG * ROUNDS) + warp * (ROUNDS * 32) + r * 32 + lane];
  Keep keep;
  // Per round: this lane's place among the round's kept values, the round's start
  // within the warp's run, and the round's count.
  // roff[ROUNDS] is the warp's whole count; round r keeps roff[r+1] - roff[r].
  unsigned ex[ROUNDS], roff[ROUNDS + 1];
  unsigned run = 0;
#pragma unroll
  for (int r = 0; r < ROUNDS; r++) {
    unsigned c = keep(x[r].x) + keep(x[r].y) + keep(x[r].z) + keep(x[r].w);
    unsigned inc = c;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      unsigned o = __shfl_up_sync(0xffffffffu, inc, d);
      if (lane >= d) inc += o;
    }
    ex[r] = inc - c;
    roff[r] = run;
    run += __shfl_sync(0xffffffffu, inc, 31);
  }
  roff[ROUNDS] = run;
  if (lane == 0) sh_tot[warp] = run;
  __syncthreads();
  unsigned carry = 0, agg = 0;
  for (int k = 0; k < WARPS; k++) {
    unsigned v = sh_tot[k];
    if (k < warp) carry += v;
    agg += v;
  }
  if (warp == 0) {
    unsigned prefix = 0;
    if (t == 0) {
      if (lane == 0) atomicExch(st, pack(agg, 2));
    } else {
      if (lane == 0) atomicExch(st + t, pack(agg, 1));
      prefix = look_back(st, t, lane);
      if (lane == 0) atomicExch(st + t, pack(prefix + agg, 2));
    }
    if (lane == 0) sh_prefix = prefix;
    if (t == ntiles - 1 && lane == 0) *total = prefix + agg;
  }
  __syncthreads();
  unsigned p = sh_prefix + carry;
#pragma unroll
  for (int r = 0; r < ROUNDS; r++) {
    float v[4] = {x[r].x, x[r].y, x[r].z, x[r].w};
    unsigned at = ex[r];
    if (STAGED) {
#pragma unroll
      for (int k = 0; k < 4; k++)
        if (keep(v[k])) stage[warp][at++] = v[k];
      __syncwarp();
      unsigned base = p + roff[r];
#pragma unroll
      for (int k = 0; k < 4; k++) {
        unsigned i = k * 32 + lane;
        if (i < roff[r + 1] - roff[r]) out[base + i] = stage[warp][i];
      }
      __syncwarp();
    } else {
#pragma unroll
      for (int k = 0; k < 4; k++)
        if (keep(v[k])) out[p + roff[r] + at++] = v[k];
    }
  }
}

__global__ void copy_k(const float4* in, float4* out, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x)
    out[i] = in[i];
}

int main(int argc, char** argv) {
  int lg = argc > 1 ? atoi(argv[1]) : 26;
  // Whole tiles of both sizes modelled (384 x 32 and 384 x 24: lcm 36864 floats).
  size_t n = ((size_t)1 << lg) / 36864 * 36864;
  std::vector<float> h(n), want, got(n);
  std::mt19937 g(5);
  for (auto& v : h) v = (float)(g() >> 8) / 16777216.0f;
  for (float v : h)
    if (v > 0.5f) want.push_back(v);
  size_t kept = want.size();
  float *din, *dout;
  unsigned long long* st;
  unsigned *counter, *total;
  CK(cudaMalloc(&din, n * 4)); CK(cudaMalloc(&dout, n * 4));
  CK(cudaMalloc(&counter, 4)); CK(cudaMalloc(&total, 4));
  CK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
  size_t max_tiles = n / (WG * 4 * 4) + 1;
  CK(cudaMalloc(&st, max_tiles * 8));
  size_t cub_bytes = 0;
  CK(cub::DeviceSelect::If(nullptr, cub_bytes, din, dout, total, (int)n, Keep()));
  void* temp;
  CK(cudaMalloc(&temp, cub_bytes));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs; n = %zu (2^%d in whole tiles), %zu kept\n", prop.name, prop.multiProcessorCount, n, lg, kept);
  double moved = 4.0 * n + 4.0 * kept;
  auto check = [&](const char* name) {
    unsigned c = 0;
    CK(cudaMemcpy(&c, total, 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got.data(), dout, kept * 4, cudaMemcpyDeviceToHost));
    size_t bad = c != kept;
    for (size_t i = 0; i < kept; i++) bad += got[i] != want[i];
    printf("    %s: count %u, %zu wrong\n", name, c, bad);
  };
  auto line = [&](const char* name, float us, double bytes) {
    printf("  %-30s %9.1f us  (%.0f GB/s)\n", name, us, bytes / us / 1e3);
  };
  auto model = [&](auto ROUNDS_C, auto STAGED_C, const char* name) {
    constexpr int ROUNDS = decltype(ROUNDS_C)::value;
    constexpr bool STAGED = decltype(STAGED_C)::value;
    constexpr int MINB = ROUNDS > 6 ? 2 : 3;
    size_t tile = (size_t)WG * ROUNDS * 4;
    unsigned ntiles = (unsigned)(n / tile);
    // Outputs poisoned, so that a kernel that stores nothing cannot pass on what the
    // one before it stored; the status words and the tile counter reset untimed.
    CK(cudaMemset(dout, 0xff, n * 4));
    CK(cudaMemset(total, 0xff, 4));
    line(name, median_us([&] {
      compact_k<ROUNDS, STAGED, MINB><<<ntiles, WG>>>((const float4*)din, dout, st, counter, total, ntiles);
    }, [&] {
      CK(cudaMemsetAsync(st, 0, ntiles * 8ull));
      CK(cudaMemsetAsync(counter, 0, 4));
    }), moved);
    check(name);
  };
  for (int rep = 0; rep < 2; rep++) {
    line("copy", median_us([&] {
      copy_k<<<prop.multiProcessorCount * 8, 512>>>((const float4*)din, (float4*)dout, n / 4);
    }), 8.0 * n);
    model(std::integral_constant<int, 8>{}, std::true_type{}, "staged, 384 x 32 (2 blocks/SM)");
    model(std::integral_constant<int, 8>{}, std::false_type{}, "direct, 384 x 32 (2 blocks/SM)");
    model(std::integral_constant<int, 6>{}, std::true_type{}, "staged, 384 x 24");
    model(std::integral_constant<int, 6>{}, std::false_type{}, "direct, 384 x 24");
    CK(cudaMemset(dout, 0xff, n * 4));
    CK(cudaMemset(total, 0xff, 4));
    line("cub DeviceSelect::If", median_us([&] {
      size_t b = cub_bytes;
      CK(cub::DeviceSelect::If(temp, b, din, dout, total, (int)n, Keep()));
    }), moved);
    check("cub");
  }
  return 0;
}
