// GENERATED from minitorch/cuda/reduce.cu by tools/sync_phases.py (phase 03 snapshot): edit the source and re-run, not this file.
// phase: 03
// reduce.cu - out = scale * (sum of a over some dimensions): sum(), mean() (scale = 1/n, so no
// second pass over the output), and the gradient of broadcasting (summing over broadcast dims).
//
// The picture: put the reduced dimensions last. Then a is a matrix [n_out, R]: one row per output
// element, R = product of the reduced sizes per row. Python describes the two halves with two
// Layouts (common.cuh): `kept` turns an output index o into where row o starts, `red` turns
// r = 0..R-1 into the offset of the r-th element of that row. No data moves to make this so;
// only the strides are reordered, so any set of axes of any view works.
//
// Two kernels, chosen by Python (native/cuda/reduce.py):
//
//   sum_blocks_f32    one BLOCK per output element (per slice of it, see below). Its threads
//                     stride through the row, each keeping 4 running sums (4 loads in flight, not
//                     1), then the block adds its threads' sums as a tree: warp shuffles
//                     (__shfl_down_sync, registers to registers, no memory) within each warp of
//                     32, then one partial per warp through shared memory, then one warp again.
//                     When there are few outputs but long rows (a full sum of 10M elements) one
//                     block per output would leave the GPU idle, so each row is cut into `splits`
//                     slices (gridDim.y): block (o, s) writes partial sum s of row o, and a second
//                     launch of the same kernel sums the partials (rows of length `splits`).
//                     Deterministic: no atomics, the same order every run.
//
//   sum_threads_f32   one THREAD per output element, adding its row in order. For short rows
//                     (R <= 32: a block of 256 threads per 3 numbers would waste 253) and for
//                     reductions over an outer dimension (sum over axis 0 of [B, N]): neighbouring
//                     threads then read neighbouring elements, so reads stay coalesced.
//
// Precision: float32 sums in float32. The tree (and slicing) order is close to pairwise
// summation, whose error grows like log(R) rather than R; sum_threads adds in order but is only
// used for rows Python keeps short (<= 4096). Rounding differs from NumPy's (also pairwise) sum in
// the last bits; tests compare with a tolerance. int64 sums exactly (wrapping on overflow).

#include "common.cuh"

// Where block (o, s) of a (n_out, splits) grid stands: its row's first element, and its threads'
// place t among the nt threads that share the row.
template <typename T>
struct RowSlice {
    const T* row;
    long long t, nt;
};

template <typename T>
__device__ __forceinline__ RowSlice<T> row_slice(const T* a, const Layout& kept) {
    long long base[1];
    layout_offsets<1>(kept, (long long)blockIdx.x, base);
    return {a + base[0], (long long)blockIdx.y * blockDim.x + threadIdx.x, (long long)gridDim.y * blockDim.x};
}

// Block (o, s) of a grid (n_out, splits): sums elements r = s*B + t, s*B + t + splits*B, ... of
// row o (B = blockDim.x, t = threadIdx.x) and writes out[o * splits + s] = scale * that sum.
template <typename T>
__device__ __forceinline__ void sum_blocks(const T* __restrict__ a, T* __restrict__ out, long long R,
                                           const Layout& kept, const Layout& red, T scale) {
    const RowSlice<T> slice = row_slice(a, kept);
    const T* row = slice.row;
    const long long step = slice.nt;
    long long r = slice.t;
    // four independent sums: four loads in flight per thread before any add waits for one
    T s0 = T(0), s1 = T(0), s2 = T(0), s3 = T(0);
    for (; r + 3 * step < R; r += 4 * step) {
        long long k0[1], k1[1], k2[1], k3[1];
        layout_offsets<1>(red, r, k0);
        layout_offsets<1>(red, r + step, k1);
        layout_offsets<1>(red, r + 2 * step, k2);
        layout_offsets<1>(red, r + 3 * step, k3);
        s0 += row[k0[0]];
        s1 += row[k1[0]];
        s2 += row[k2[0]];
        s3 += row[k3[0]];
    }
    for (; r < R; r += step) {
        long long k[1];
        layout_offsets<1>(red, r, k);
        s0 += row[k[0]];
    }
    const T total = block_reduce((s0 + s1) + (s2 + s3), T(0), [](T x, T y) { return x + y; });
    if (threadIdx.x == 0) out[(long long)blockIdx.x * gridDim.y + blockIdx.y] = total * scale;
}

// Thread o sums row o in order: out[o] = scale * sum.
template <typename T>
__device__ __forceinline__ void sum_threads(const T* __restrict__ a, T* __restrict__ out, long long n_out,
                                            long long R, const Layout& kept, const Layout& red, T scale) {
    GRID_STRIDE_LOOP(o, n_out) {
        long long base[1];
        layout_offsets<1>(kept, o, base);
        const T* row = a + base[0];
        T acc = T(0);
        for (long long r = 0; r < R; ++r) {
            long long k[1];
            layout_offsets<1>(red, r, k);
            acc += row[k[0]];
        }
        out[o] = acc * scale;
    }
}

#define SUM(T, SUF) MT_IF_##SUF(                                                                     \
    extern "C" __global__ void sum_blocks_##SUF(const T* __restrict__ a, T* __restrict__ out, long long R, \
                                                const Layout kept, const Layout red, T scale) {     \
        sum_blocks(a, out, R, kept, red, scale);                                                    \
    }                                                                                               \
    extern "C" __global__ void sum_threads_##SUF(const T* __restrict__ a, T* __restrict__ out,      \
                                                 long long n_out, long long R, const Layout kept,   \
                                                 const Layout red, T scale) {                       \
        sum_threads(a, out, n_out, R, kept, red, scale);                                            \
    })

SUM(float, f32)
SUM(double, f64)
SUM(long long, i64)
