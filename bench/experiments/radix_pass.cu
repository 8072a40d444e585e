// Session 40's experiment for open question 8 (not part of arrc): can one pass of
// arrc's radix sort, in the shape arrc emits, run near the copy's rate on the H200,
// or does the shape itself cost what the pass takes there (about 1.1 ms for 2^26
// 4-byte keys with 4-byte indices, a quarter of the copy's rate; `arrc bench
// --workloads grade --sizes 26 --types f32 --profile`)?  The same question, asked
// of the chained scan in `pipe_scan.cu`, found that arrc's scan shape ran at the
// copy's rate in CUDA and that arrc lost its time to one instruction choice.
//
// Kernels, over the same 2^lg random 32-bit keys and their indices (8-bit digit at
// bit `shift`), each checked against a stable partition on the CPU:
//   copy      - keys and indices copied (the bytes a pass moves: 8 in, 8 out);
//   count     - a 256-bin count per tile, digit-major (`radix_count`);
//   scan      - cub::DeviceScan::ExclusiveSum of the counts (arrc: its chained scan);
//   scatter   - arrc's `radix_scatter`: a block of 256 threads per tile of
//               256 x ITEMS keys; warp w ranks its run of 32 x ITEMS keys round by
//               round (nine ballots a round: the valid lanes, then one a digit bit;
//               or __match_any_sync with MATCH), a counter per digit and warp in
//               shared memory (MINB: __launch_bounds__' blocks a multiprocessor,
//               1 or 2, to see what occupancy costs); the counts summed
//               across warps and digits place every key in the tile sorted by digit
//               in shared memory, and the tile goes out in that order;
//   cub pass  - cub::DeviceRadixSort::SortPairs over bits [shift, shift+8): CUB's
//               one pass (a histogram, then its one-sweep kernel);
//   cub sort  - SortPairs over all 32 bits (four passes), what torch's stable
//               argsort runs.
// Not arrc code and not part of its build; written in session 40, first run in
// session 41 (PERFORMANCE.md, "Session 41": the shape scatters 2^26 in 889 us at one
// block a multiprocessor, 672 at two; arrc took 1095-1141; CUB's whole pass 537).
// On the device machine, from the repository root:
//   nvcc -O3 -arch=sm_90 -Xptxas -v -o /tmp/radix_pass bench/experiments/radix_pass.cu
//   /tmp/radix_pass 24; /tmp/radix_pass 26
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <random>
#include <cuda_runtime.h>
#include <cub/cub.cuh>
#include "common.cuh"


constexpr int WG = 256;
constexpr int SUBS = WG / 32;

__host__ __device__ __forceinline__ unsigned digit(unsigned k, int shift) { return (k >> shift) & 255u; }

// Loads in batches of 4 before their counts, as arrc's count kernel does.
template <int ITEMS>
__global__ void __launch_bounds__(WG) count_k(const unsigned* __restrict__ keys, unsigned* __restrict__ counts,
                                              unsigned n, unsigned ntiles, int shift) {
  constexpr unsigned TILE = WG * ITEMS;
  __shared__ unsigned h[256];
  for (int d = threadIdx.x; d < 256; d += WG) h[d] = 0;
  __syncthreads();
  unsigned t = blockIdx.x;
  unsigned start = t * TILE;
  unsigned end = min(start + TILE, n);
  for (unsigned base = start + threadIdx.x; base < end; base += 4 * WG) {
    unsigned d[4];
    bool ok[4];
#pragma unroll
    for (int r = 0; r < 4; r++) {
      unsigned i = base + r * WG;
      ok[r] = i < end;
      d[r] = digit(keys[min(i, end - 1)], shift);
    }
#pragma unroll
    for (int r = 0; r < 4; r++)
      if (ok[r]) atomicAdd(&h[d[r]], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < 256; d += WG) counts[d * ntiles + t] = h[d];
}

// starts[d * ntiles + t]: where tile t's keys of digit d go (exclusive scan of counts).
template <int ITEMS, bool MATCH, int MINB>
__global__ void __launch_bounds__(WG, MINB) scatter_k(const unsigned* __restrict__ keys, const unsigned* __restrict__ idx,
                                                const unsigned* __restrict__ starts, unsigned* __restrict__ keys_out,
                                                unsigned* __restrict__ idx_out, unsigned n, unsigned ntiles, int shift) {
  constexpr unsigned TILE = WG * ITEMS;
  __shared__ unsigned sg_hist[SUBS * 256];
  __shared__ unsigned digit_start[256];
  __shared__ unsigned global_base[256];
  __shared__ unsigned skeys[TILE];
  __shared__ unsigned sidx[TILE];
  unsigned t = blockIdx.x;
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned tile_start = t * TILE;
  unsigned tile_len = min(TILE, n - tile_start);
  for (int k = threadIdx.x; k < SUBS * 256; k += WG) sg_hist[k] = 0;
  for (int d = threadIdx.x; d < 256; d += WG) global_base[d] = starts[d * ntiles + t];
  __syncthreads();
  unsigned key[ITEMS], from[ITEMS], rank[ITEMS];
  unsigned run_start = warp * 32 * ITEMS;
#pragma unroll
  for (int r = 0; r < ITEMS; r++) {
    unsigned le = run_start + r * 32 + lane;
    unsigned at = tile_start + min(le, tile_len - 1);
    key[r] = keys[at];
    from[r] = idx[at];
  }
  unsigned below = (1u << lane) - 1u;
  unsigned* my = sg_hist + warp * 256;
#pragma unroll
  for (int r = 0; r < ITEMS; r++) {
    unsigned le = run_start + r * 32 + lane;
    bool valid = le < tile_len;
    unsigned d = digit(key[r], shift);
    unsigned mask;
    if (MATCH) {
      mask = __match_any_sync(0xffffffffu, valid ? d : 256u + lane);
    } else {
      mask = __ballot_sync(0xffffffffu, valid);
#pragma unroll
      for (int b = 0; b < 8; b++) {
        unsigned bit = (d >> b) & 1u;
        unsigned bal = __ballot_sync(0xffffffffu, bit);
        mask &= bit ? bal : ~bal;
      }
    }
    unsigned rk = __popc(mask & below);
    unsigned cnt = __popc(mask);
    unsigned base = my[d];  // every lane reads before the digit's first lane writes
    __syncwarp();
    if (valid && rk == 0) my[d] = base + cnt;
    __syncwarp();
    rank[r] = base + rk;
  }
  __syncthreads();
  // Per digit: each warp's start among the tile's keys of that digit, and the total.
  for (int d = threadIdx.x; d < 256; d += WG) {
    unsigned acc = 0;
    for (int s = 0; s < SUBS; s++) {
      unsigned v = sg_hist[s * 256 + d];
      sg_hist[s * 256 + d] = acc;
      acc += v;
    }
    digit_start[d] = acc;
  }
  __syncthreads();
  // The digits' starts in the sorted tile: warp 0, 32 digits at a time.
  if (warp == 0) {
    unsigned carry = 0;
    for (int c = 0; c < 256; c += 32) {
      unsigned v = digit_start[c + lane];
      unsigned x = v;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        unsigned y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
      }
      digit_start[c + lane] = carry + x - v;
      carry += __shfl_sync(0xffffffffu, x, 31);
    }
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < ITEMS; r++) {
    unsigned le = run_start + r * 32 + lane;
    if (le < tile_len) {
      unsigned d = digit(key[r], shift);
      unsigned lp = digit_start[d] + my[d] + rank[r];
      skeys[lp] = key[r];
      sidx[lp] = from[r];
    }
  }
  __syncthreads();
  for (unsigned j = threadIdx.x; j < tile_len; j += WG) {
    unsigned k = skeys[j];
    unsigned d = digit(k, shift);
    unsigned pos = global_base[d] + (j - digit_start[d]);
    keys_out[pos] = k;
    idx_out[pos] = sidx[j];
  }
}

__global__ void copy2_k(const uint4* a, const uint4* b, uint4* c, uint4* d, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
    c[i] = a[i];
    d[i] = b[i];
  }
}

int main(int argc, char** argv) {
  int lg = argc > 1 ? atoi(argv[1]) : 24;
  int shift = argc > 2 ? atoi(argv[2]) : 0;
  if (shift < 0 || shift > 24) {
    printf("shift must be 0..24\n");
    return 1;
  }
  unsigned n = 1u << lg;
  std::vector<unsigned> hk(n), hi(n), want_k(n), want_i(n), got_k(n), got_i(n);
  std::mt19937 g(11);
  for (unsigned i = 0; i < n; i++) { hk[i] = g(); hi[i] = i; }
  {
    // Stable partition by digit.
    std::vector<unsigned> cnt(257, 0);
    for (unsigned i = 0; i < n; i++) cnt[digit(hk[i], shift) + 1]++;
    for (int d = 0; d < 256; d++) cnt[d + 1] += cnt[d];
    for (unsigned i = 0; i < n; i++) {
      unsigned p = cnt[digit(hk[i], shift)]++;
      want_k[p] = hk[i];
      want_i[p] = hi[i];
    }
  }
  unsigned *dk, *di, *dko, *dio, *counts, *starts;
  CK(cudaMalloc(&dk, n * 4ull)); CK(cudaMalloc(&di, n * 4ull));
  CK(cudaMalloc(&dko, n * 4ull)); CK(cudaMalloc(&dio, n * 4ull));
  CK(cudaMemcpy(dk, hk.data(), n * 4ull, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(di, hi.data(), n * 4ull, cudaMemcpyHostToDevice));
  unsigned max_tiles = n / (WG * 8) + 1;
  CK(cudaMalloc(&counts, 256ull * max_tiles * 4)); CK(cudaMalloc(&starts, 256ull * max_tiles * 4));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs; n = 2^%d, digit at bit %d\n", prop.name, prop.multiProcessorCount, lg, shift);
  // CUB's temporary storage: the largest of the calls below.
  size_t scan_bytes = 0, sort_bytes = 0;
  CK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, counts, starts, 256 * max_tiles));
  CK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, dk, dko, di, dio, (int)n, 0, 32));
  size_t temp_bytes = std::max(scan_bytes, sort_bytes);
  void* temp;
  CK(cudaMalloc(&temp, temp_bytes));
  auto check = [&](const char* name, bool keys_too) {
    CK(cudaMemcpy(got_k.data(), dko, n * 4ull, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got_i.data(), dio, n * 4ull, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (unsigned i = 0; i < n; i++) bad += (keys_too && got_k[i] != want_k[i]) || got_i[i] != want_i[i];
    printf("    %s: %zu wrong\n", name, bad);
  };
  auto line = [&](const char* name, float us, double bytes) {
    printf("  %-34s %9.1f us  (%.0f GB/s)\n", name, us, bytes / us / 1e3);
  };
  double pass_bytes = 16.0 * n;
  for (int rep = 0; rep < 2; rep++) {
    line("copy keys and indices", median_us([&] {
      copy2_k<<<prop.multiProcessorCount * 8, 512>>>((const uint4*)dk, (const uint4*)di, (uint4*)dko, (uint4*)dio, n / 4);
    }), pass_bytes);
    auto model = [&](auto ITEMS_C, auto MATCH_C, auto MINB_C, const char* name) {
      constexpr int ITEMS = decltype(ITEMS_C)::value;
      constexpr bool MATCH = decltype(MATCH_C)::value;
      constexpr int MINB = decltype(MINB_C)::value;
      int per_sm = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, scatter_k<ITEMS, MATCH, MINB>, WG, 0));
      // Outputs poisoned: a scatter that stores nothing cannot pass on the last one's.
      CK(cudaMemset(dko, 0xff, n * 4ull));
      CK(cudaMemset(dio, 0xff, n * 4ull));
      unsigned ntiles = (n + WG * ITEMS - 1) / (WG * ITEMS);
      float c = median_us([&] { count_k<ITEMS><<<ntiles, WG>>>(dk, counts, n, ntiles, shift); });
      float s = median_us([&] {
        size_t b = temp_bytes;
        CK(cub::DeviceScan::ExclusiveSum(temp, b, counts, starts, 256 * ntiles));
      });
      float x = median_us([&] {
        scatter_k<ITEMS, MATCH, MINB><<<ntiles, WG>>>(dk, di, starts, dko, dio, n, ntiles, shift);
      });
      printf("  %s (%u tiles of %d, %d blocks/SM): count %.1f us, scan %.1f us\n", name, ntiles, WG * ITEMS,
             per_sm, c, s);
      line("    scatter", x, pass_bytes);
      line("    count + scan + scatter", c + s + x, pass_bytes);
      check(name, true);
    };
    using one = std::integral_constant<int, 1>;
    using two = std::integral_constant<int, 2>;
    model(std::integral_constant<int, 16>{}, std::false_type{}, one{}, "arrc's shape, 256 x 16, ballots");
    model(std::integral_constant<int, 16>{}, std::false_type{}, two{}, "256 x 16, ballots, 2 blocks/SM");
    model(std::integral_constant<int, 16>{}, std::true_type{}, one{}, "arrc's shape, 256 x 16, match");
    model(std::integral_constant<int, 8>{}, std::false_type{}, one{}, "arrc's shape, 256 x 8, ballots");
    CK(cudaMemset(dko, 0xff, n * 4ull));
    CK(cudaMemset(dio, 0xff, n * 4ull));
    line("cub pass (8 bits)", median_us([&] {
      size_t b = temp_bytes;
      CK(cub::DeviceRadixSort::SortPairs(temp, b, dk, dko, di, dio, (int)n, shift, shift + 8));
    }), pass_bytes);
    check("cub pass", true);
    line("cub sort (32 bits, 4 passes)", median_us([&] {
      size_t b = temp_bytes;
      CK(cub::DeviceRadixSort::SortPairs(temp, b, dk, dko, di, dio, (int)n, 0, 32));
    }), 4 * pass_bytes);
  }
  return 0;
}
