// GENERATED from minitorch/cuda/scan.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 04
// scan.cu - inclusive scans along one dimension: cumsum (out[i] = x[0] + ... + x[i]) and cumprod.
//
// The picture: the scanned dimension is a row of length L; every other index picks a row (o).
// Python describes where row o starts in the input and in the (contiguous) output with one Layout
// of two operands (`kept`), and the element step along the row with in_stride / out_stride, so any
// view is read in place.
//
// Mapping of threads to data: a BLOCK walks a stretch of one row (a "tile") in chunks of
// ITEMS * blockDim.x elements. Thread t loads elements base + k * blockDim.x + t (k < ITEMS: ITEMS
// loads in flight, and neighbouring threads read neighbouring elements when in_stride is 1); each
// of the ITEMS rows of blockDim.x values is then scanned by the whole block:
//   1. within each warp, 5 rounds of __shfl_up_sync (lane l adds the value of lane l - d, d = 1, 2,
//      4, 8, 16: a Hillis-Steele scan in registers),
//   2. the last lane of each warp writes the warp's total to shared memory; warp 0 scans those
//      totals the same way, and each warp adds the total of the warps before it,
//   3. the running `carry` (everything of the tile before this chunk) is combined in front.
// Rows are independent, so many rows keep the GPU busy with one whole row per block (scan_rows).
//
// One long row (64M elements) would leave all but one SM idle, so it is cut into tiles of TILE
// elements, one block each, scanned in ONE pass with "decoupled look-back" (D. Merrill and
// M. Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA, 2016):
//   1. a block takes the next tile number from a counter (atomicAdd), so tiles start in order and
//      a block only ever waits for blocks that are already running (no deadlock);
//   2. it reduces its tile and publishes that AGGREGATE with flag 1 (it needs nothing else for it);
//   3. thread 0 looks back over the tiles before it: a tile with flag 2 has published its
//      INCLUSIVE prefix (everything up to its end): add it and stop; a tile with flag 1 gives its
//      aggregate: add it and look further back; flag 0: wait for it. The row's first tile publishes
//      its inclusive prefix at once, so every look-back ends;
//   4. it publishes its own inclusive prefix (flag 2), then scans its tile again, starting from the
//      prefix, and writes it. The second read of the tile comes from the L2 cache (the tiles
//      in flight, 132 SMs x 8 blocks x 16 KB, fit in the H100's 50 MB), so memory sees one read and
//      one write per element, as a copy.
// A value is published before its flag, with __threadfence() between, and read after the flag,
// through volatile loads (not cached in L1): whoever sees the flag sees the value. A wait that
// never ends (a bug) stops the kernel with __trap() instead of hanging the GPU. The order of the
// additions depends on timing (a tile adds aggregates or an inclusive prefix): float results may
// differ in the last bits between runs.

#include "common.cuh"

namespace sc {

constexpr int ITEMS = 4;            // elements per thread per chunk (loads in flight)

template <typename T> struct Sum {
    __device__ static T identity() { return T(0); }
    __device__ static T op(T a, T b) { return a + b; }
};
template <typename T> struct Prod {
    __device__ static T identity() { return T(1); }
    __device__ static T op(T a, T b) { return a * b; }
};

// Inclusive scan of one value per thread over the block (blockDim.x a multiple of 32, at most
// 1024), in thread order; `total` gets the combination of all of them. Every thread of the block
// must call it (it holds __syncthreads); `sums` is shared memory for 32 values.
template <typename T, class Op>
__device__ __forceinline__ T block_scan(T x, T* sums, T& total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const T y = __shfl_up_sync(FULL_MASK, x, d);
        if (lane >= d) x = Op::op(y, x);
    }
    if (lane == 31) sums[warp] = x;
    __syncthreads();                            // every warp's total is in sums
    if (warp == 0) {                            // lane l reads and writes only sums[l]
        T w = lane < warps ? sums[lane] : Op::identity();
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const T y = __shfl_up_sync(FULL_MASK, w, d);
            if (lane >= d) w = Op::op(y, w);
        }
        if (lane < warps) sums[lane] = w;       // total of warps 0..lane
    }
    __syncthreads();                            // the scanned totals are visible
    if (warp > 0) x = Op::op(sums[warp - 1], x);
    total = sums[warps - 1];
    __syncthreads();                            // all have read sums before the next call writes it
    return x;
}

// Scans elements [start, end) of `row` into `dst` (element steps in_stride, out_stride), starting
// from `carry`, in chunks of ITEMS * blockDim.x. Every thread of the block must call it.
template <typename T, class Op>
__device__ __forceinline__ void scan_range(const T* __restrict__ row, T* __restrict__ dst, long long start,
                                           long long end, long long in_stride, long long out_stride, T carry) {
    __shared__ T sums[32];
    const long long B = blockDim.x;
    for (long long c = start; c < end; c += ITEMS * B) {       // the same trip count in every thread
        T x[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const long long i = c + k * B + threadIdx.x;
            x[k] = i < end ? row[i * in_stride] : Op::identity();
        }
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            T total;
            const T y = block_scan<T, Op>(x[k], sums, total);
            const long long i = c + k * B + threadIdx.x;
            if (i < end) dst[i * out_stride] = Op::op(carry, y);
            carry = Op::op(carry, total);
        }
    }
}

// The combination of elements [start, end) of `row`, valid in thread 0 (ITEMS loads in flight).
template <typename T, class Op>
__device__ __forceinline__ T reduce_range(const T* __restrict__ row, long long start, long long end,
                                          long long in_stride) {
    const long long B = blockDim.x;
    T acc[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) acc[k] = Op::identity();
    long long i = start + threadIdx.x;
    for (; i + (ITEMS - 1) * B < end; i += ITEMS * B) {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) acc[k] = Op::op(acc[k], row[(i + k * B) * in_stride]);
    }
    for (; i < end; i += B) acc[0] = Op::op(acc[0], row[i * in_stride]);
    T v = acc[0];
#pragma unroll
    for (int k = 1; k < ITEMS; ++k) v = Op::op(v, acc[k]);
    return block_reduce(v, Op::identity(), [](T x, T y) { return Op::op(x, y); });
}

// Block o scans row o whole.
template <typename T, class Op>
__device__ __forceinline__ void scan_rows(const T* __restrict__ a, T* __restrict__ out, long long L, const Layout& kept,
                                          long long in_stride, long long out_stride) {
    long long base[2];
    layout_offsets<2>(kept, (long long)blockIdx.x, base);
    scan_range<T, Op>(a + base[0], out + base[1], 0, L, in_stride, out_stride, Op::identity());
}

constexpr long long AGGREGATE = 1, INCLUSIVE = 2;     // a tile's flag; 0: nothing published yet
constexpr long long MAX_SPINS = 1ll << 24;            // ~10 s of waiting: a bug, not a slow tile

// value (at values[2 * tile + which]) first, then the flag
template <typename T>
__device__ __forceinline__ void publish(long long* flags, T* values, long long tile, long long which, T v) {
    values[2 * tile + which - 1] = v;
    __threadfence();
    *(volatile long long*)(flags + tile) = which;
}

// Tile number `ticket` (in start order) = tile s of row o, over the n_rows x tiles tiles of TILE
// elements. state[0] is the ticket counter, state[1 + t] tile t's flag (all 0 before the launch);
// values[2 t] its aggregate, values[2 t + 1] its inclusive prefix.
template <typename T, class Op>
__device__ __forceinline__ void scan_lookback(const T* __restrict__ a, T* __restrict__ out, long long L,
                                              long long tile, long long tiles, const Layout& kept, long long in_stride,
                                              long long out_stride, long long* state, T* values) {
    __shared__ long long ticket_s;
    __shared__ T prefix_s;
    if (threadIdx.x == 0) ticket_s = (long long)atomicAdd((unsigned long long*)state, 1ull);
    __syncthreads();
    const long long t = ticket_s, o = t / tiles, s = t - o * tiles;
    long long* flags = state + 1;
    long long base[2];
    layout_offsets<2>(kept, o, base);
    const T* row = a + base[0];
    const long long start = s * tile;
    const long long end = start + tile < L ? start + tile : L;
    const T aggregate = reduce_range<T, Op>(row, start, end, in_stride);     // valid in thread 0
    if (threadIdx.x == 0) {
        T prefix = Op::identity();
        if (s > 0) {
            publish(flags, values, t, AGGREGATE, aggregate);
            for (long long p = t - 1;; --p) {               // tile p is in row o: tile o * tiles ends it
                long long f, spins = 0;
                while ((f = *(volatile long long*)(flags + p)) == 0)
                    if (++spins > MAX_SPINS) __trap();
                __threadfence();
                const T v = *(volatile T*)(values + 2 * p + f - 1);
                prefix = Op::op(v, prefix);
                if (f == INCLUSIVE) break;
            }
        }
        publish(flags, values, t, INCLUSIVE, Op::op(prefix, aggregate));
        prefix_s = prefix;
    }
    __syncthreads();
    scan_range<T, Op>(row, out + base[1], start, end, in_stride, out_stride, prefix_s);
}

}  // namespace sc

#define SCAN(NAME, OP, T, SUF)                                                                       \
    extern "C" __global__ void scan_rows_##NAME##_##SUF(const T* __restrict__ a, T* __restrict__ out, long long L, \
                                                        const Layout kept, long long in_stride, long long out_stride) { \
        sc::scan_rows<T, sc::OP<T>>(a, out, L, kept, in_stride, out_stride);                        \
    }                                                                                               \
    extern "C" __global__ void scan_lookback_##NAME##_##SUF(const T* __restrict__ a, T* __restrict__ out, long long L, \
                                                            long long tile, long long tiles, const Layout kept, \
                                                            long long in_stride, long long out_stride, \
                                                            long long* state, T* values) {          \
        sc::scan_lookback<T, sc::OP<T>>(a, out, L, tile, tiles, kept, in_stride, out_stride, state, values); \
    }

SCAN(cumsum, Sum, float, f32)
SCAN(cumsum, Sum, double, f64)
SCAN(cumsum, Sum, long long, i64)
SCAN(cumprod, Prod, float, f32)
SCAN(cumprod, Prod, double, f64)
SCAN(cumprod, Prod, long long, i64)
