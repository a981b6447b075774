// GENERATED from minitorch/cuda/scan.cu by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
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
// Rows are independent, so many rows keep the GPU busy with one tile (the whole row) per block.
//
// One long row (64M elements) would leave all but one SM idle, so it is cut into `tiles` tiles
// scanned in three passes (reduce, then scan; Merrill & Garland, "Single-pass Parallel Prefix
// Scan with Decoupled Look-back", 2016, describe it and the single-pass method that would save
// the first read):
//   pass 1  scan_reduce_*  block (o, s) reduces tile s of row o to part[o * tiles + s];
//   pass 2  scan_tiles_*   scans each row of part (tiles values): the total of tiles 0..s;
//   pass 3  scan_tiles_*   block (o, s) scans tile s starting from the total of tiles 0..s-1.
// The input is read twice and the output written once (3 passes of memory where a copy makes 2).
// The order of additions is fixed: the same bits every run.

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

// Block (o, s): scans elements [s * tile, min(L, (s + 1) * tile)) of row o into out. It starts
// from carry_in[o * tiles + s - 1] (the total of the tiles before) when carry_in is given and
// s > 0, else from the identity.
template <typename T, class Op>
__device__ __forceinline__ void scan_tiles(const T* __restrict__ a, T* __restrict__ out, const T* __restrict__ carry_in,
                                           long long L, long long tile, const Layout& kept, long long in_stride,
                                           long long out_stride) {
    __shared__ T sums[32];
    const long long o = blockIdx.x, s = blockIdx.y, tiles = gridDim.y;
    long long base[2];
    layout_offsets<2>(kept, o, base);
    const T* row = a + base[0];
    T* dst = out + base[1];
    const long long start = s * tile;
    const long long end = start + tile < L ? start + tile : L;
    T carry = (carry_in != nullptr && s > 0) ? carry_in[o * tiles + s - 1] : Op::identity();
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

// Block (o, s): part[o * tiles + s] = the combination of tile s of row o (pass 1).
template <typename T, class Op>
__device__ __forceinline__ void scan_reduce(const T* __restrict__ a, T* __restrict__ part, long long L, long long tile,
                                            const Layout& kept, long long in_stride) {
    const long long o = blockIdx.x, s = blockIdx.y;
    long long base[2];
    layout_offsets<2>(kept, o, base);
    const T* row = a + base[0];
    const long long start = s * tile;
    const long long end = start + tile < L ? start + tile : L;
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
    v = block_reduce(v, Op::identity(), [](T x, T y) { return Op::op(x, y); });
    if (threadIdx.x == 0) part[o * gridDim.y + s] = v;
}

}  // namespace sc

#define SCAN(NAME, OP, T, SUF)                                                                       \
    extern "C" __global__ void scan_tiles_##NAME##_##SUF(const T* __restrict__ a, T* __restrict__ out, \
                                                         const T* __restrict__ carry_in, long long L, long long tile, \
                                                         const Layout kept, long long in_stride, long long out_stride) { \
        sc::scan_tiles<T, sc::OP<T>>(a, out, carry_in, L, tile, kept, in_stride, out_stride);       \
    }                                                                                               \
    extern "C" __global__ void scan_reduce_##NAME##_##SUF(const T* __restrict__ a, T* __restrict__ part, long long L, \
                                                          long long tile, const Layout kept, long long in_stride) { \
        sc::scan_reduce<T, sc::OP<T>>(a, part, L, tile, kept, in_stride);                           \
    }

SCAN(cumsum, Sum, float, f32)
SCAN(cumsum, Sum, double, f64)
SCAN(cumsum, Sum, long long, i64)
SCAN(cumprod, Prod, float, f32)
SCAN(cumprod, Prod, double, f64)
SCAN(cumprod, Prod, long long, i64)
