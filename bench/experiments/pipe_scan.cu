// Session 39's experiment for open question 1 (not part of arrc): does hiding a
// chained scan's lookback behind the next tile's loads bring `⌈\` of i32 near the
// copy's rate on the H200?  Three kernels over the same data:
//   copy   - int4 grid-stride copy (the ceiling);
//   base   - one tile per block, claimed in order, warp 0 looks back (arrc's shape:
//            384 threads x 32 items, packed 64-bit status words);
//   pipe   - persistent blocks (as many as fit), each claims its next tile and
//            issues its loads before looking back for the current one, whose
//            scanned values wait in shared memory (48 KiB at 384 x 32); in one
//            order the block looks back while the loads are in flight and then
//            scans the next tile, in the other (SCAN_FIRST) it scans the next tile
//            and publishes its aggregate first, so that a tile's aggregate never
//            waits for another tile's lookback (what made session 7's persistent
//            scan slow).
// Not arrc code and not part of its build: a CUDA model of a kernel shape, to be
// measured before arrc's emitter gets it. Written in session 39; it checks its own
// answers against the CPU.
// What it showed (session 40, H200, 2^28 items, 384 x 32 tiles, medians of 30):
// copy 548 us, base 531 us (3.1 polls a tile), pipe (look back first) 529 us, pipe
// (scan next first) 612-654 us. The one-tile-a-block shape already runs at the
// copy's rate, so pipelining buys nothing. "base, relaxed atomics" (MODE 1: the
// status words read and written as relaxed device-scope atomics, as arrc's SPIR-V
// did) took 682 us and polled 6.4 times a tile: a relaxed store is seen late. arrc
// now publishes its status words by atomic exchange (emit/lookback.rs,
// `publish_word`), which took its `⌈\` of 2^28 i32 from 720 to 599 us.
// On the device machine, from the repository root:
//   nvcc -O3 -arch=sm_90 -Xptxas -v -o /tmp/pipe_scan bench/experiments/pipe_scan.cu
//   /tmp/pipe_scan 26; /tmp/pipe_scan 28
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <climits>
#include <vector>
#include <algorithm>
#include <random>
#include <cuda_runtime.h>
#include <cuda/atomic>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

constexpr int WG = 384;            // threads a block
constexpr int WARPS = WG / 32;
constexpr unsigned long long NONE = 0;

__device__ __forceinline__ int wscan_incl(int v, int lane) {
  for (int d = 1; d < 32; d <<= 1) {
    int o = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v = max(v, o);
  }
  return v;
}
__device__ __forceinline__ int wreduce(int v) {
  for (int d = 16; d > 0; d >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, d));
  return v;
}
__device__ __forceinline__ unsigned long long pack(int v, unsigned flag) {
  return ((unsigned long long)(unsigned)v << 32) | flag;
}
// Session 40: 0 = volatile polls and atomicExch publishes (the first model);
// 1 = relaxed device-scope atomic loads and stores, what arrc's SPIR-V asks for.
__constant__ int MODE;
using ref64 = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;
__device__ __forceinline__ void publish(unsigned long long* st, unsigned t, int v, unsigned flag) {
  if (MODE == 1) ref64(st[t]).store(pack(v, flag), cuda::memory_order_relaxed);
  else atomicExch(st + t, pack(v, flag));
}

// Vector index of a thread's round r in tile t: warp w owns ROUNDS*32 consecutive int4.
template <int ROUNDS>
__device__ __forceinline__ size_t vidx(unsigned t, int warp, int lane, int r) {
  return (size_t)t * (WG * ROUNDS) + warp * (ROUNDS * 32) + r * 32 + lane;
}

// In-register scan of a thread's rounds; returns the warp's exclusive carry within
// the tile (from sh_tot) and, in agg, the tile's aggregate. Has __syncthreads.
template <int ROUNDS>
__device__ __forceinline__ int local_scan(int4 (&x)[ROUNDS], int* sh_tot, int warp, int lane, int& agg) {
  int run = INT_MIN;
#pragma unroll
  for (int r = 0; r < ROUNDS; r++) {
    x[r].y = max(x[r].x, x[r].y);
    x[r].z = max(x[r].y, x[r].z);
    x[r].w = max(x[r].z, x[r].w);
    int inc = wscan_incl(x[r].w, lane);
    int exc = __shfl_up_sync(0xffffffffu, inc, 1);
    if (lane == 0) exc = INT_MIN;
    int off = max(run, exc);
    x[r].x = max(off, x[r].x); x[r].y = max(off, x[r].y);
    x[r].z = max(off, x[r].z); x[r].w = max(off, x[r].w);
    run = max(run, __shfl_sync(0xffffffffu, inc, 31));
  }
  if (lane == 0) sh_tot[warp] = run;
  __syncthreads();
  int carry = INT_MIN, a = INT_MIN;
  for (int k = 0; k < WARPS; k++) {
    int v = sh_tot[k];
    if (k < warp) carry = max(carry, v);
    a = max(a, v);
  }
  agg = a;
  return carry;
}

// Warp 0's lookback from tile j = t-1: window of 32, stops at the first inclusive
// prefix nearer than any unpublished tile.
__device__ __forceinline__ int look_back(const unsigned long long* st, unsigned t, int lane, int* polls) {
  long j = (long)t - 1;
  int prefix = INT_MIN;
  int n = 0;
  while (true) {
    n++;
    long tj = j - lane;
    unsigned long long w = tj < 0 ? pack(INT_MIN, 2)
        : MODE == 1 ? ref64(*const_cast<unsigned long long*>(st + tj)).load(cuda::memory_order_relaxed)
        : *(volatile const unsigned long long*)(st + tj);
    unsigned flag = (unsigned)(w & 3);
    int val = (int)(w >> 32);
    unsigned im = __ballot_sync(0xffffffffu, flag == 2);
    unsigned um = __ballot_sync(0xffffffffu, flag == 0);
    int fi = im ? __ffs(im) - 1 : 32;
    int fu = um ? __ffs(um) - 1 : 32;
    if (fi < fu) {
      prefix = max(prefix, wreduce(lane <= fi ? val : INT_MIN));
      break;
    }
    prefix = max(prefix, wreduce(lane < fu ? val : INT_MIN));
    j -= fu;  // fu == 0: spin on tile j
  }
  if (polls && lane == 0) atomicAdd(polls, n);
  return prefix;
}

template <int ROUNDS>
__global__ void __launch_bounds__(WG, 3) scan_base(const int4* in, int4* out, unsigned long long* st,
                                                unsigned* counter, unsigned ntiles, int* polls) {
  __shared__ unsigned sh_tile;
  __shared__ int sh_tot[WARPS];
  __shared__ int sh_prefix;
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) sh_tile = atomicAdd(counter, 1);
  __syncthreads();
  unsigned t = sh_tile;
  int4 x[ROUNDS];
#pragma unroll
  for (int r = 0; r < ROUNDS; r++) x[r] = in[vidx<ROUNDS>(t, warp, lane, r)];
  int agg;
  int carry = local_scan(x, sh_tot, warp, lane, agg);
  if (warp == 0) {
    int prefix = INT_MIN;
    if (t == 0) {
      if (lane == 0) publish(st, 0, agg, 2);
    } else {
      if (lane == 0) publish(st, t, agg, 1);
      prefix = look_back(st, t, lane, polls);
      if (lane == 0) publish(st, t, max(prefix, agg), 2);
    }
    if (lane == 0) sh_prefix = prefix;
  }
  __syncthreads();
  int p = max(sh_prefix, carry);
#pragma unroll
  for (int r = 0; r < ROUNDS; r++) {
    int4 v = x[r];
    v.x = max(p, v.x); v.y = max(p, v.y); v.z = max(p, v.z); v.w = max(p, v.w);
    out[vidx<ROUNDS>(t, warp, lane, r)] = v;
  }
}

// SCAN_FIRST: scan the next tile and publish its aggregate before looking back for
// the parked one (its predecessors then have had the next tile's loads to publish);
// otherwise look back first, while the next tile's loads are in flight.
template <int ROUNDS, bool SCAN_FIRST>
__global__ void __launch_bounds__(WG, 3) scan_pipe(const int4* in, int4* out, unsigned long long* st,
                                                unsigned* counter, unsigned ntiles, int* polls) {
  extern __shared__ int4 park[];  // ROUNDS * WG int4
  __shared__ unsigned sh_tile;
  __shared__ int sh_tot[WARPS];
  __shared__ int sh_prefix;
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) sh_tile = atomicAdd(counter, 1);
  __syncthreads();
  unsigned a = sh_tile;
  if (a >= ntiles) return;
  int4 x[ROUNDS];
#pragma unroll
  for (int r = 0; r < ROUNDS; r++) x[r] = in[vidx<ROUNDS>(a, warp, lane, r)];
  int agg;
  int carry_a = local_scan(x, sh_tot, warp, lane, agg);
  if (warp == 0 && lane == 0) publish(st, a, agg, a == 0 ? 2 : 1);
  int agg_a = agg;
#pragma unroll
  for (int r = 0; r < ROUNDS; r++) park[r * WG + threadIdx.x] = x[r];
  while (true) {
    __syncthreads();  // sh_tile read, park written
    if (threadIdx.x == 0) sh_tile = atomicAdd(counter, 1);
    __syncthreads();
    unsigned b = sh_tile;
    bool has_b = b < ntiles;
    if (has_b) {
#pragma unroll
      for (int r = 0; r < ROUNDS; r++) x[r] = in[vidx<ROUNDS>(b, warp, lane, r)];
    }
    int carry_b = INT_MIN;
    if (SCAN_FIRST && has_b) {
      carry_b = local_scan(x, sh_tot, warp, lane, agg);
      if (warp == 0 && lane == 0) publish(st, b, agg, 1);  // b > a >= 0
    }
    // Tile a's lookback while tile b's loads are in flight.
    if (warp == 0) {
      int prefix = INT_MIN;
      if (a != 0) {
        prefix = look_back(st, a, lane, polls);
        if (lane == 0) publish(st, a, max(prefix, agg_a), 2);
      }
      if (lane == 0) sh_prefix = prefix;
    }
    __syncthreads();
    int p = max(sh_prefix, carry_a);
    if (!SCAN_FIRST && has_b) {
      carry_b = local_scan(x, sh_tot, warp, lane, agg);
      if (warp == 0 && lane == 0) publish(st, b, agg, 1);  // b > a >= 0
    }
#pragma unroll
    for (int r = 0; r < ROUNDS; r++) {
      int4 v = park[r * WG + threadIdx.x];
      v.x = max(p, v.x); v.y = max(p, v.y); v.z = max(p, v.z); v.w = max(p, v.w);
      out[vidx<ROUNDS>(a, warp, lane, r)] = v;
    }
    if (!has_b) break;
    // Only this thread reads and writes its own park slots: no barrier needed here.
#pragma unroll
    for (int r = 0; r < ROUNDS; r++) park[r * WG + threadIdx.x] = x[r];
    a = b;
    carry_a = carry_b;
    agg_a = agg;
  }
}

__global__ void copy_k(const int4* in, int4* out, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x)
    out[i] = in[i];
}

template <int ROUNDS>
void experiment(int lg) {
  constexpr int TILE = WG * ROUNDS * 4;
  size_t n = (size_t)1 << lg;
  n = n / TILE * TILE;  // whole tiles only (the experiment)
  unsigned ntiles = (unsigned)(n / TILE);
  std::vector<int> h(n), ref(n), got(n);
  std::mt19937 g(7);
  for (auto& v : h) v = (int)(g() % 2000000000u) - 1000000000;
  int m = INT_MIN;
  for (size_t i = 0; i < n; i++) { m = std::max(m, h[i]); ref[i] = m; }
  int4 *din, *dout;
  unsigned long long* st;
  unsigned* counter;
  int* polls;
  CK(cudaMalloc(&din, n * 4)); CK(cudaMalloc(&dout, n * 4));
  CK(cudaMalloc(&st, ntiles * 8ull)); CK(cudaMalloc(&counter, 4)); CK(cudaMalloc(&polls, 4));
  CK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  size_t park_bytes = sizeof(int4) * ROUNDS * WG;
  CK(cudaFuncSetAttribute(scan_pipe<ROUNDS, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)park_bytes));
  CK(cudaFuncSetAttribute(scan_pipe<ROUNDS, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)park_bytes));
  int per_sm_base = 0, per_sm_pipe = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_base, scan_base<ROUNDS>, WG, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_pipe, scan_pipe<ROUNDS, false>, WG, park_bytes));
  printf("%s, %d SMs; n = %zu (%u tiles of %d x %d); blocks/SM base %d pipe %d\n", prop.name,
         prop.multiProcessorCount, n, ntiles, WG, ROUNDS * 4, per_sm_base, per_sm_pipe);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  auto run = [&](int which, int grid) -> float {
    CK(cudaMemsetAsync(st, 0, ntiles * 8ull));
    CK(cudaMemsetAsync(counter, 0, 4));
    CK(cudaMemsetAsync(polls, 0, 4));
    CK(cudaEventRecord(e0));
    if (which == 0) copy_k<<<prop.multiProcessorCount * 8, 512>>>(din, dout, n / 4);
    else if (which == 1) scan_base<ROUNDS><<<ntiles, WG>>>(din, dout, st, counter, ntiles, polls);
    else if (which == 2) scan_pipe<ROUNDS, false><<<grid, WG, park_bytes>>>(din, dout, st, counter, ntiles, polls);
    else scan_pipe<ROUNDS, true><<<grid, WG, park_bytes>>>(din, dout, st, counter, ntiles, polls);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms * 1000.f;
  };
  auto check = [&](const char* name) {
    CK(cudaMemcpy(got.data(), dout, n * 4, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += got[i] != ref[i];
    int p = 0;
    CK(cudaMemcpy(&p, polls, 4, cudaMemcpyDeviceToHost));
    printf("  %s: %zu wrong, %.2f polls a tile\n", name, bad, (double)p / ntiles);
  };
  auto bench = [&](const char* name, int which, int grid) {
    std::vector<float> t;
    for (int i = 0; i < 5; i++) run(which, grid);
    for (int i = 0; i < 30; i++) t.push_back(run(which, grid));
    std::sort(t.begin(), t.end());
    printf("%-28s median %9.1f us  min %9.1f  (%.0f GB/s)\n", name, t[15], t[0], 2.0 * n * 4 / t[15] / 1e3);
    if (which) check(name);
  };
  int full = prop.multiProcessorCount * per_sm_pipe;
  for (int rep = 0; rep < 2; rep++) {
    bench("copy", 0, 0);
    bench("base (one tile a block)", 1, 0);
    int one = 1, zero = 0;
    CK(cudaMemcpyToSymbol(MODE, &one, sizeof one));
    bench("base, relaxed atomics", 1, 0);
    CK(cudaMemcpyToSymbol(MODE, &zero, sizeof zero));
    bench("pipe, look back first", 2, std::min<int>(full, ntiles));
    bench("pipe, scan next first", 3, std::min<int>(full, ntiles));
    bench("pipe, scan first, 2 x grid", 3, std::min<int>(2 * full, ntiles));
    bench("pipe, scan first, grid/2", 3, std::min<int>(std::max(full / 2, 1), ntiles));
  }
  CK(cudaFree(din)); CK(cudaFree(dout)); CK(cudaFree(st)); CK(cudaFree(counter)); CK(cudaFree(polls));
}

int main(int argc, char** argv) {
  int lg = argc > 1 ? atoi(argv[1]) : 26;
  experiment<8>(lg);  // 384 x 32, arrc's ⌈\ tile (48 KiB parked: more than Vulkan's 48 KiB with the rest)
  experiment<6>(lg);  // 384 x 24 (36 KiB parked: what a Vulkan kernel could hold)
  return 0;
}
