// GENERATED from minitorch/cuda/reduce.cu by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
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
// ---- float16 / bfloat16 sums: half loaded, float accumulated, float written ----------------------
// The same two strategies as sum_blocks and sum_threads, with float running sums (a half running
// sum stops growing at 2048 when adding ones: float16 has 11 significant bits). They write FLOAT:
// slices' partial sums are then added by sum_blocks_f32, and Python rounds the final float sums to
// half once with the cast kernel (copy.cu), as PyTorch does.
template <typename T>
__device__ __forceinline__ void sum_blocks_half(const T* __restrict__ a, float* __restrict__ out, long long R,
                                                const Layout& kept, const Layout& red, float scale) {
    const RowSlice<T> slice = row_slice(a, kept);
    const T* row = slice.row;
    const long long step = slice.nt;
    long long r = slice.t;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (; r + 3 * step < R; r += 4 * step) {
        long long k0[1], k1[1], k2[1], k3[1];
        layout_offsets<1>(red, r, k0);
        layout_offsets<1>(red, r + step, k1);
        layout_offsets<1>(red, r + 2 * step, k2);
        layout_offsets<1>(red, r + 3 * step, k3);
        s0 += to_opmath(row[k0[0]]);
        s1 += to_opmath(row[k1[0]]);
        s2 += to_opmath(row[k2[0]]);
        s3 += to_opmath(row[k3[0]]);
    }
    for (; r < R; r += step) {
        long long k[1];
        layout_offsets<1>(red, r, k);
        s0 += to_opmath(row[k[0]]);
    }
    const float total = block_reduce((s0 + s1) + (s2 + s3), 0.0f, [](float x, float y) { return x + y; });
    if (threadIdx.x == 0) out[(long long)blockIdx.x * gridDim.y + blockIdx.y] = total * scale;
}

template <typename T>
__device__ __forceinline__ void sum_threads_half(const T* __restrict__ a, float* __restrict__ out, long long n_out,
                                                 long long R, const Layout& kept, const Layout& red, float scale) {
    GRID_STRIDE_LOOP(o, n_out) {
        long long base[1];
        layout_offsets<1>(kept, o, base);
        const T* row = a + base[0];
        float acc = 0.0f;
        for (long long r = 0; r < R; ++r) {
            long long k[1];
            layout_offsets<1>(red, r, k);
            acc += to_opmath(row[k[0]]);
        }
        out[o] = acc * scale;
    }
}

#define SUM_HALF(T, SUF) MT_IF_##SUF(                                                                \
    extern "C" __global__ void sum_blocks_##SUF(const T* __restrict__ a, float* __restrict__ out, long long R, \
                                                const Layout kept, const Layout red, float scale) { \
        sum_blocks_half(a, out, R, kept, red, scale);                                               \
    }                                                                                               \
    extern "C" __global__ void sum_threads_##SUF(const T* __restrict__ a, float* __restrict__ out,  \
                                                 long long n_out, long long R, const Layout kept,   \
                                                 const Layout red, float scale) {                   \
        sum_threads_half(a, out, n_out, R, kept, red, scale);                                       \
    })

SUM_HALF(__half, f16)
SUM_HALF(__nv_bfloat16, bf16)

// =================================================================================================
// Phase 04: a bandwidth-bound contiguous sum, max/min with indices (argmax/argmin), var/std.
//
// All of them keep the picture above: `a` is a matrix [n_out, R] described by the `kept` Layout
// (where row o starts) and the `red` Layout (where element r of a row lies), and the same two
// strategies: one BLOCK per output (rows cut into `splits` slices along gridDim.y when there are
// few rows, and a second launch combining the slices' partial results in a fixed order: no
// atomics, deterministic), or one THREAD per output (short rows, reductions over outer dims).
//
// ---- why a new sum kernel for contiguous rows (sum_rows) --------------------------------------
// sum_blocks reached ~68% of the copy bandwidth summing 64M floats on an H100. Three reasons:
//   * 4-byte loads: a warp-wide load instruction moves 128 bytes, and each thread has only 4
//     loads (16 bytes) in flight; HBM needs many more bytes in flight per SM to stay busy.
//   * 64-bit index arithmetic per element (layout_offsets), even when the row is contiguous.
//   * the grid was sized as SMs x 8 blocks, assuming 8 resident blocks per SM; a kernel whose
//     registers allow fewer leaves a partial last "wave" of blocks running on a half-empty GPU.
// sum_rows, used when every row is contiguous (a full sum of a contiguous tensor, or a sum over
// trailing dimensions), reads each row with 16-byte vector loads (LDG.128), UNROLL = 4 vectors
// issued before the first is used (64 bytes in flight per thread); the few elements before the
// first 16-byte boundary (a view like x[1:]) and after the last whole vector go one by one. Python
// sizes the grid to exactly the blocks the GPU holds at once (the occupancy calculator), so all
// slices run in one wave, and the partial sums are added by sum_blocks in a second launch, in
// index order: the result is the same bits every run.
//
// ---- max / min with indices ------------------------------------------------------------------
// Each thread keeps its best (value, index) pair; pairs merge by a TOTAL order, so the result does
// not depend on which thread saw what: NaN beats every number (the first NaN wins, NaN propagates
// as in PyTorch and NumPy), then the larger (max) or smaller (min) value, then, on ties, the
// SMALLER index: the first maximum, as PyTorch and NumPy return. Indices count elements of a row
// in row-major order of the reduced dimensions (a flat index when every dimension is reduced).
//
// ---- var / std: Welford and Chan ----------------------------------------------------------------
// The textbook formula E[x^2] - E[x]^2 cancels catastrophically in floating point (data around
// 1e4 with spread 1 loses every digit of the variance in float32). Instead each thread keeps
// (n, mean, M2 = sum of squared deviations from the mean) and:
//   * adds one element with Welford's update (B. P. Welford, "Note on a method for calculating
//     corrected sums of squares and products", Technometrics 4(3), 1962):
//         n += 1;  d = x - mean;  mean += d / n;  M2 += d * (x - mean)
//   * adds a 16-byte vector of N elements as a group: its own mean and M2 by two passes over the N
//     registers (exact up to rounding), merged in with one division instead of N;
//   * merges two partial results (across threads, warps, blocks, slices) with the parallel
//     formula of Chan, Golub & LeVeque, "Updating formulae and a pairwise algorithm for computing
//     sample variances" (1979/1983):
//         n = na + nb;  d = mean_b - mean_a;  mean = mean_a + d * nb / n;
//         M2 = M2a + M2b + d^2 * na * nb / n
// One kernel (plus the combine launch when rows are split) reads the data once; the result is
// var = M2 / max(R - correction, 0) (0/0 = NaN, x/0 = inf, as PyTorch), std = sqrt(var), and the
// mean comes out too (the gradient needs it).
// =================================================================================================

namespace r4 {

// true when element r of a row lies at row[r]: the reduced dimensions merged into one of stride
// 1 (or none are left: rows of one element)
__device__ __forceinline__ bool row_is_contiguous(const Layout& red) {
    return red.ndim == 0 || (red.ndim == 1 && red.strides[0][0] == 1);
}

// Thread t of nt threads visits its share of a contiguous row[0..R): one(r, x) for single
// elements, vec(r0, v) for 16-byte vectors v holding row[r0 .. r0 + N). Each thread sees its
// elements in increasing r. Elements before the first 16-byte boundary and after the last whole
// vector are visited one by one.
template <typename T, class One, class Many>
__device__ __forceinline__ void visit_contiguous(const T* __restrict__ row, long long R, long long t, long long nt,
                                                 One one, Many vec) {
    constexpr int N = 16 / sizeof(T);
    long long head = (long long)(((16 - (reinterpret_cast<unsigned long long>(row) & 15)) & 15) / sizeof(T));
    if (head > R) head = R;
    for (long long r = t; r < head; r += nt) one(r, row[r]);
    const long long nvec = (R - head) / N;
    const Vec<T, N>* __restrict__ v = reinterpret_cast<const Vec<T, N>*>(row + head);
    scan(v, nvec, t, nt, [&](long long k, const Vec<T, N>& x) { vec(head + k * N, x); });   // scan: common.cuh
    for (long long r = head + nvec * N + t; r < R; r += nt) one(r, row[r]);
}

// The same walk for a row of any strides: element r at row[offset of r in red], 4 loads in flight.
template <typename T, class One>
__device__ __forceinline__ void visit_strided(const T* row, long long R, const Layout& red, long long t, long long nt,
                                              One one) {
    long long r = t;
    for (; r + 3 * nt < R; r += 4 * nt) {
        long long k0[1], k1[1], k2[1], k3[1];
        layout_offsets<1>(red, r, k0);
        layout_offsets<1>(red, r + nt, k1);
        layout_offsets<1>(red, r + 2 * nt, k2);
        layout_offsets<1>(red, r + 3 * nt, k3);
        const T x0 = row[k0[0]], x1 = row[k1[0]], x2 = row[k2[0]], x3 = row[k3[0]];
        one(r, x0);
        one(r + nt, x1);
        one(r + 2 * nt, x2);
        one(r + 3 * nt, x3);
    }
    for (; r < R; r += nt) {
        long long k[1];
        layout_offsets<1>(red, r, k);
        one(r, row[k[0]]);
    }
}

// ---- sum of contiguous rows -----------------------------------------------------------------
template <typename T>
__device__ __forceinline__ void sum_rows(const T* __restrict__ a, T* __restrict__ out, long long R,
                                         const Layout& kept, T scale) {
    constexpr int N = 16 / sizeof(T);
    const RowSlice<T> s = row_slice(a, kept);
    T acc = T(0);
    visit_contiguous(s.row, R, s.t, s.nt, [&](long long, T x) { acc += x; },
                     [&](long long, const Vec<T, N>& v) {
                         T p = v.v[0];
#pragma unroll
                         for (int j = 1; j < N; ++j) p += v.v[j];
                         acc += p;
                     });
    const T total = block_reduce(acc, T(0), [](T x, T y) { return x + y; });
    if (threadIdx.x == 0) out[(long long)blockIdx.x * gridDim.y + blockIdx.y] = total * scale;
}

// ---- max / min --------------------------------------------------------------------------------
template <typename T>
struct Best {
    T v;
    long long i;            // index in the row; -1: nothing seen yet
};

template <typename T>
__device__ __forceinline__ Best<T> shfl_down(Best<T> p, int d) {
    return {__shfl_down_sync(FULL_MASK, p.v, d), __shfl_down_sync(FULL_MASK, p.i, d)};
}

// Is a strictly better than b? The total order described at the top of this section.
template <typename T>
__device__ __forceinline__ bool better(const Best<T>& a, const Best<T>& b, bool largest) {
    if (b.i < 0) return a.i >= 0;
    if (a.i < 0) return false;
    const bool an = is_nan(a.v), bn = is_nan(b.v);
    if (an || bn) return an && (!bn || a.i < b.i);
    if (a.v != b.v) return largest ? a.v > b.v : a.v < b.v;
    return a.i < b.i;
}

template <typename T>
__device__ __forceinline__ Best<T> pick(const Best<T>& a, const Best<T>& b, bool largest) {
    return better(b, a, largest) ? b : a;
}

// Block (o, s): the best pair of slice s of row o. With one slice (final) it writes vals[o] and
// idx[o]; otherwise the pair goes to part[o * splits + s] for extreme_combine.
template <typename T>
__device__ __forceinline__ void extreme_blocks(const T* __restrict__ a, T* __restrict__ vals, long long* __restrict__ idx,
                                               Best<T>* __restrict__ part, long long R, const Layout& kept,
                                               const Layout& red, bool largest, bool final) {
    constexpr int N = 16 / sizeof(T);
    const RowSlice<T> s = row_slice(a, kept);
    Best<T> best = {T(0), -1};
    auto one = [&](long long r, T x) {
        const Best<T> c = {x, r};
        if (better(c, best, largest)) best = c;
    };
    if (row_is_contiguous(red)) {
        visit_contiguous(s.row, R, s.t, s.nt, one, [&](long long r0, const Vec<T, N>& v) {
#pragma unroll
            for (int j = 0; j < N; ++j) one(r0 + j, v.v[j]);
        });
    } else {
        visit_strided(s.row, R, red, s.t, s.nt, one);
    }
    best = block_reduce(best, Best<T>{T(0), -1}, [&](Best<T> x, Best<T> y) { return pick(x, y, largest); });
    if (threadIdx.x == 0) {
        const long long o = blockIdx.x;
        if (final) {
            vals[o] = best.v;
            idx[o] = best.i;
        } else {
            part[o * gridDim.y + blockIdx.y] = best;
        }
    }
}

// Block o merges the `splits` partial pairs of row o (in index order) into vals[o], idx[o].
template <typename T>
__device__ __forceinline__ void extreme_combine(const Best<T>* __restrict__ part, T* __restrict__ vals,
                                                long long* __restrict__ idx, long long splits, bool largest) {
    const long long o = blockIdx.x;
    Best<T> best = {T(0), -1};
    for (long long k = threadIdx.x; k < splits; k += blockDim.x) best = pick(best, part[o * splits + k], largest);
    best = block_reduce(best, Best<T>{T(0), -1}, [&](Best<T> x, Best<T> y) { return pick(x, y, largest); });
    if (threadIdx.x == 0) {
        vals[o] = best.v;
        idx[o] = best.i;
    }
}

// Thread o scans row o alone (R >= 1).
template <typename T>
__device__ __forceinline__ void extreme_threads(const T* __restrict__ a, T* __restrict__ vals, long long* __restrict__ idx,
                                                long long n_out, long long R, const Layout& kept, const Layout& red,
                                                bool largest) {
    GRID_STRIDE_LOOP(o, n_out) {
        long long base[1];
        layout_offsets<1>(kept, o, base);
        const T* row = a + base[0];
        Best<T> best = {T(0), -1};
        for (long long r = 0; r < R; ++r) {
            long long k[1];
            layout_offsets<1>(red, r, k);
            const Best<T> c = {row[k[0]], r};
            if (better(c, best, largest)) best = c;
        }
        vals[o] = best.v;
        idx[o] = best.i;
    }
}

// ---- var / std ----------------------------------------------------------------------------------
template <typename T>
struct Moments {
    T mean, m2;              // running mean, sum of squared deviations from it
    long long n;             // elements seen (exact: float counts stop being exact at 2^24)
};

template <typename T>
__device__ __forceinline__ Moments<T> shfl_down(Moments<T> p, int d) {
    return {__shfl_down_sync(FULL_MASK, p.mean, d), __shfl_down_sync(FULL_MASK, p.m2, d),
            __shfl_down_sync(FULL_MASK, p.n, d)};
}

// Chan et al.: the moments of the union of two disjoint sets from the moments of each.
template <typename T>
__device__ __forceinline__ Moments<T> chan(const Moments<T>& a, const Moments<T>& b) {
    if (b.n == 0) return a;
    if (a.n == 0) return b;
    const long long n = a.n + b.n;
    const T d = b.mean - a.mean;
    const T wb = T(b.n) / T(n);                 // b's share of the union
    return {a.mean + d * wb, a.m2 + b.m2 + d * d * T(a.n) * wb, n};
}

// Welford: one more element.
template <typename T>
__device__ __forceinline__ void welford_add(Moments<T>& s, T x) {
    // >>> exercise 04.2: Welford's update
    // hint: one more element x: n += 1, mean += (x - mean) / n, m2 += (x - old mean) * (x - new mean)
    s.n += 1;
    const T d = x - s.mean;
    s.mean += d / T(s.n);
    s.m2 += d * (x - s.mean);
    // <<< exercise
}

// The moments of the N elements of one vector: mean by one pass (1/N is a power of two: exact),
// squared deviations from it by a second pass over the same registers.
template <typename T, int N>
__device__ __forceinline__ Moments<T> moments_of(const Vec<T, N>& v) {
    T sum = v.v[0];
#pragma unroll
    for (int j = 1; j < N; ++j) sum += v.v[j];
    const T m = sum * (T(1) / T(N));
    T q = T(0);
#pragma unroll
    for (int j = 0; j < N; ++j) q += (v.v[j] - m) * (v.v[j] - m);
    return {m, q, N};
}

// var (or std) and mean of one output from its moments; dof = max(R - correction, 0).
template <typename T>
__device__ __forceinline__ void finish(const Moments<T>& m, T dof, bool take_sqrt, T* out, T* mean, long long o) {
    const T var = m.m2 / dof;
    out[o] = take_sqrt ? m_sqrt(var) : var;
    mean[o] = m.n ? m.mean : T(0) / T(0);
}

template <typename T>
__device__ __forceinline__ void welford_blocks(const T* __restrict__ a, T* __restrict__ out, T* __restrict__ mean,
                                               Moments<T>* __restrict__ part, long long R, const Layout& kept,
                                               const Layout& red, T dof, bool take_sqrt, bool final) {
    constexpr int N = 16 / sizeof(T);
    const RowSlice<T> s = row_slice(a, kept);
    Moments<T> m = {T(0), T(0), 0};
    auto one = [&](long long, T x) { welford_add(m, x); };
    if (row_is_contiguous(red)) {
        visit_contiguous(s.row, R, s.t, s.nt, one, [&](long long, const Vec<T, N>& v) { m = chan(m, moments_of(v)); });
    } else {
        visit_strided(s.row, R, red, s.t, s.nt, one);
    }
    m = block_reduce(m, Moments<T>{T(0), T(0), 0}, [](Moments<T> x, Moments<T> y) { return chan(x, y); });
    if (threadIdx.x == 0) {
        const long long o = blockIdx.x;
        if (final) finish(m, dof, take_sqrt, out, mean, o);
        else part[o * gridDim.y + blockIdx.y] = m;
    }
}

template <typename T>
__device__ __forceinline__ void welford_combine(const Moments<T>* __restrict__ part, T* __restrict__ out,
                                                T* __restrict__ mean, long long splits, T dof, bool take_sqrt) {
    const long long o = blockIdx.x;
    Moments<T> m = {T(0), T(0), 0};
    for (long long k = threadIdx.x; k < splits; k += blockDim.x) m = chan(m, part[o * splits + k]);
    m = block_reduce(m, Moments<T>{T(0), T(0), 0}, [](Moments<T> x, Moments<T> y) { return chan(x, y); });
    if (threadIdx.x == 0) finish(m, dof, take_sqrt, out, mean, o);
}

template <typename T>
__device__ __forceinline__ void welford_threads(const T* __restrict__ a, T* __restrict__ out, T* __restrict__ mean,
                                                long long n_out, long long R, const Layout& kept, const Layout& red,
                                                T dof, bool take_sqrt) {
    GRID_STRIDE_LOOP(o, n_out) {
        long long base[1];
        layout_offsets<1>(kept, o, base);
        const T* row = a + base[0];
        Moments<T> m = {T(0), T(0), 0};
        for (long long r = 0; r < R; ++r) {
            long long k[1];
            layout_offsets<1>(red, r, k);
            welford_add(m, row[k[0]]);
        }
        finish(m, dof, take_sqrt, out, mean, o);
    }
}

}  // namespace r4

// ---- entry points ---------------------------------------------------------------------------------
// Partial results travel between the two launches as arrays of r4::Best<T> (16 bytes: value, then
// the int64 index at byte 8) and r4::Moments<T> (float: 16 bytes, double: 24); reduce.py allocates
// them as raw bytes of those sizes.
#define SUM_ROWS(T, SUF) MT_IF_##SUF(                                                                \
    extern "C" __global__ void sum_rows_##SUF(const T* __restrict__ a, T* __restrict__ out, long long R, \
                                              const Layout kept, T scale) {                         \
        r4::sum_rows(a, out, R, kept, scale);                                                       \
    })

#define EXTREME(T, SUF) MT_IF_##SUF(                                                                 \
    extern "C" __global__ void extreme_blocks_##SUF(const T* __restrict__ a, T* __restrict__ vals,  \
                                                    long long* __restrict__ idx, r4::Best<T>* __restrict__ part, \
                                                    long long R, const Layout kept, const Layout red, \
                                                    bool largest, bool final) {                     \
        r4::extreme_blocks(a, vals, idx, part, R, kept, red, largest, final);                       \
    }                                                                                               \
    extern "C" __global__ void extreme_combine_##SUF(const r4::Best<T>* __restrict__ part, T* __restrict__ vals, \
                                                     long long* __restrict__ idx, long long splits, bool largest) { \
        r4::extreme_combine(part, vals, idx, splits, largest);                                      \
    }                                                                                               \
    extern "C" __global__ void extreme_threads_##SUF(const T* __restrict__ a, T* __restrict__ vals, \
                                                     long long* __restrict__ idx, long long n_out, long long R, \
                                                     const Layout kept, const Layout red, bool largest) { \
        r4::extreme_threads(a, vals, idx, n_out, R, kept, red, largest);                            \
    })

#define WELFORD(T, SUF) MT_IF_##SUF(                                                                 \
    extern "C" __global__ void welford_blocks_##SUF(const T* __restrict__ a, T* __restrict__ out,   \
                                                    T* __restrict__ mean, r4::Moments<T>* __restrict__ part, \
                                                    long long R, const Layout kept, const Layout red, T dof, \
                                                    bool take_sqrt, bool final) {                   \
        r4::welford_blocks(a, out, mean, part, R, kept, red, dof, take_sqrt, final);                \
    }                                                                                               \
    extern "C" __global__ void welford_combine_##SUF(const r4::Moments<T>* __restrict__ part, T* __restrict__ out, \
                                                     T* __restrict__ mean, long long splits, T dof, bool take_sqrt) { \
        r4::welford_combine(part, out, mean, splits, dof, take_sqrt);                               \
    }                                                                                               \
    extern "C" __global__ void welford_threads_##SUF(const T* __restrict__ a, T* __restrict__ out,  \
                                                     T* __restrict__ mean, long long n_out, long long R, \
                                                     const Layout kept, const Layout red, T dof, bool take_sqrt) { \
        r4::welford_threads(a, out, mean, n_out, R, kept, red, dof, take_sqrt);                     \
    })

SUM_ROWS(float, f32)
SUM_ROWS(double, f64)
SUM_ROWS(long long, i64)
EXTREME(float, f32)
EXTREME(double, f64)
EXTREME(long long, i64)
WELFORD(float, f32)
WELFORD(double, f64)

// ---- float16 / bfloat16 max/min and var/std: half loaded, float compared and accumulated ------------
// The same walks, the same total order and the same Welford/Chan merges as above, with the storage
// type S (__half, __nv_bfloat16) read 8 to a 16-byte vector and every value turned into a float
// (exact) as it is loaded. Partial results between the two launches are r4::Best<float> (16 bytes)
// and r4::Moments<float> (16 bytes), as for float32. Outputs are rounded to S once when stored: a
// max/min is a value of the input, so its rounding is exact; var, std and the mean are the float
// results rounded once (PyTorch accumulates half in float32 too).
namespace r4 {

template <typename S>
__device__ __forceinline__ void extreme_blocks_half(const S* __restrict__ a, S* __restrict__ vals,
                                                    long long* __restrict__ idx, Best<float>* __restrict__ part,
                                                    long long R, const Layout& kept, const Layout& red, bool largest,
                                                    bool final) {
    constexpr int N = 16 / sizeof(S);
    const RowSlice<S> s = row_slice(a, kept);
    Best<float> best = {0.0f, -1};
    auto one = [&](long long r, S x) {
        const Best<float> c = {to_opmath(x), r};
        if (better(c, best, largest)) best = c;
    };
    if (row_is_contiguous(red)) {
        visit_contiguous(s.row, R, s.t, s.nt, one, [&](long long r0, const Vec<S, N>& v) {
#pragma unroll
            for (int j = 0; j < N; ++j) one(r0 + j, v.v[j]);
        });
    } else {
        visit_strided(s.row, R, red, s.t, s.nt, one);
    }
    best = block_reduce(best, Best<float>{0.0f, -1}, [&](Best<float> x, Best<float> y) { return pick(x, y, largest); });
    if (threadIdx.x == 0) {
        const long long o = blockIdx.x;
        if (final) {
            vals[o] = narrow<S>(best.v);
            idx[o] = best.i;
        } else {
            part[o * gridDim.y + blockIdx.y] = best;
        }
    }
}

template <typename S>
__device__ __forceinline__ void extreme_combine_half(const Best<float>* __restrict__ part, S* __restrict__ vals,
                                                     long long* __restrict__ idx, long long splits, bool largest) {
    const long long o = blockIdx.x;
    Best<float> best = {0.0f, -1};
    for (long long k = threadIdx.x; k < splits; k += blockDim.x) best = pick(best, part[o * splits + k], largest);
    best = block_reduce(best, Best<float>{0.0f, -1}, [&](Best<float> x, Best<float> y) { return pick(x, y, largest); });
    if (threadIdx.x == 0) {
        vals[o] = narrow<S>(best.v);
        idx[o] = best.i;
    }
}

template <typename S>
__device__ __forceinline__ void extreme_threads_half(const S* __restrict__ a, S* __restrict__ vals,
                                                     long long* __restrict__ idx, long long n_out, long long R,
                                                     const Layout& kept, const Layout& red, bool largest) {
    GRID_STRIDE_LOOP(o, n_out) {
        long long base[1];
        layout_offsets<1>(kept, o, base);
        const S* row = a + base[0];
        Best<float> best = {0.0f, -1};
        for (long long r = 0; r < R; ++r) {
            long long k[1];
            layout_offsets<1>(red, r, k);
            const Best<float> c = {to_opmath(row[k[0]]), r};
            if (better(c, best, largest)) best = c;
        }
        vals[o] = narrow<S>(best.v);
        idx[o] = best.i;
    }
}

// var (or std) and mean from float moments, each rounded once to S; dof = max(R - correction, 0)
template <typename S>
__device__ __forceinline__ void finish_half(const Moments<float>& m, float dof, bool take_sqrt, S* out, S* mean,
                                            long long o) {
    const float var = m.m2 / dof;
    out[o] = narrow<S>(take_sqrt ? sqrtf(var) : var);
    mean[o] = narrow<S>(m.n ? m.mean : 0.0f / 0.0f);
}

// the float moments of 8 halves (one 16-byte vector): convert, then moments_of as for float
template <typename S, int N>
__device__ __forceinline__ Moments<float> moments_of_half(const Vec<S, N>& v) {
    Vec<float, N> f;
#pragma unroll
    for (int j = 0; j < N; ++j) f.v[j] = to_opmath(v.v[j]);
    return moments_of(f);
}

template <typename S>
__device__ __forceinline__ void welford_blocks_half(const S* __restrict__ a, S* __restrict__ out, S* __restrict__ mean,
                                                    Moments<float>* __restrict__ part, long long R, const Layout& kept,
                                                    const Layout& red, float dof, bool take_sqrt, bool final) {
    constexpr int N = 16 / sizeof(S);
    const RowSlice<S> s = row_slice(a, kept);
    Moments<float> m = {0.0f, 0.0f, 0};
    auto one = [&](long long, S x) { welford_add(m, to_opmath(x)); };
    if (row_is_contiguous(red)) {
        visit_contiguous(s.row, R, s.t, s.nt, one,
                         [&](long long, const Vec<S, N>& v) { m = chan(m, moments_of_half(v)); });
    } else {
        visit_strided(s.row, R, red, s.t, s.nt, one);
    }
    m = block_reduce(m, Moments<float>{0.0f, 0.0f, 0}, [](Moments<float> x, Moments<float> y) { return chan(x, y); });
    if (threadIdx.x == 0) {
        const long long o = blockIdx.x;
        if (final) finish_half(m, dof, take_sqrt, out, mean, o);
        else part[o * gridDim.y + blockIdx.y] = m;
    }
}

template <typename S>
__device__ __forceinline__ void welford_combine_half(const Moments<float>* __restrict__ part, S* __restrict__ out,
                                                     S* __restrict__ mean, long long splits, float dof, bool take_sqrt) {
    const long long o = blockIdx.x;
    Moments<float> m = {0.0f, 0.0f, 0};
    for (long long k = threadIdx.x; k < splits; k += blockDim.x) m = chan(m, part[o * splits + k]);
    m = block_reduce(m, Moments<float>{0.0f, 0.0f, 0}, [](Moments<float> x, Moments<float> y) { return chan(x, y); });
    if (threadIdx.x == 0) finish_half(m, dof, take_sqrt, out, mean, o);
}

template <typename S>
__device__ __forceinline__ void welford_threads_half(const S* __restrict__ a, S* __restrict__ out, S* __restrict__ mean,
                                                     long long n_out, long long R, const Layout& kept,
                                                     const Layout& red, float dof, bool take_sqrt) {
    GRID_STRIDE_LOOP(o, n_out) {
        long long base[1];
        layout_offsets<1>(kept, o, base);
        const S* row = a + base[0];
        Moments<float> m = {0.0f, 0.0f, 0};
        for (long long r = 0; r < R; ++r) {
            long long k[1];
            layout_offsets<1>(red, r, k);
            welford_add(m, to_opmath(row[k[0]]));
        }
        finish_half(m, dof, take_sqrt, out, mean, o);
    }
}

}  // namespace r4

// Entry points with the float32 kernels' argument lists; partials are r4::Best<float> and
// r4::Moments<float> (16 bytes each), dof a C float.
#define EXTREME_HALF(S, SUF) MT_IF_##SUF(                                                            \
    extern "C" __global__ void extreme_blocks_##SUF(const S* __restrict__ a, S* __restrict__ vals,  \
                                                    long long* __restrict__ idx, r4::Best<float>* __restrict__ part, \
                                                    long long R, const Layout kept, const Layout red, \
                                                    bool largest, bool final) {                     \
        r4::extreme_blocks_half(a, vals, idx, part, R, kept, red, largest, final);                  \
    }                                                                                               \
    extern "C" __global__ void extreme_combine_##SUF(const r4::Best<float>* __restrict__ part, S* __restrict__ vals, \
                                                     long long* __restrict__ idx, long long splits, bool largest) { \
        r4::extreme_combine_half(part, vals, idx, splits, largest);                                 \
    }                                                                                               \
    extern "C" __global__ void extreme_threads_##SUF(const S* __restrict__ a, S* __restrict__ vals, \
                                                     long long* __restrict__ idx, long long n_out, long long R, \
                                                     const Layout kept, const Layout red, bool largest) { \
        r4::extreme_threads_half(a, vals, idx, n_out, R, kept, red, largest);                       \
    })

#define WELFORD_HALF(S, SUF) MT_IF_##SUF(                                                            \
    extern "C" __global__ void welford_blocks_##SUF(const S* __restrict__ a, S* __restrict__ out,   \
                                                    S* __restrict__ mean, r4::Moments<float>* __restrict__ part, \
                                                    long long R, const Layout kept, const Layout red, float dof, \
                                                    bool take_sqrt, bool final) {                   \
        r4::welford_blocks_half(a, out, mean, part, R, kept, red, dof, take_sqrt, final);           \
    }                                                                                               \
    extern "C" __global__ void welford_combine_##SUF(const r4::Moments<float>* __restrict__ part, S* __restrict__ out, \
                                                     S* __restrict__ mean, long long splits, float dof, bool take_sqrt) { \
        r4::welford_combine_half(part, out, mean, splits, dof, take_sqrt);                          \
    }                                                                                               \
    extern "C" __global__ void welford_threads_##SUF(const S* __restrict__ a, S* __restrict__ out,  \
                                                     S* __restrict__ mean, long long n_out, long long R, \
                                                     const Layout kept, const Layout red, float dof, bool take_sqrt) { \
        r4::welford_threads_half(a, out, mean, n_out, R, kept, red, dof, take_sqrt);                \
    })

EXTREME_HALF(__half, f16)
EXTREME_HALF(__nv_bfloat16, bf16)
WELFORD_HALF(__half, f16)
WELFORD_HALF(__nv_bfloat16, bf16)

// =================================================================================================
// Phase 04, more reductions: one generic FOLD for prod, amax/amin, all/any, count_nonzero, the
// vector norms (p = 1, 2, inf) and logsumexp.
//
// A reduction is three things: a starting value (init), a way to take in one element (add), and a
// way to merge two partial results (merge); a last step turns the merged result into the output
// (finish). Each op below is a small struct with exactly those four functions, and ONE set of
// kernels (fold_blocks / fold_combine / fold_threads) runs any of them with the machinery above:
// the same [n_out, R] picture, 16-byte loads on contiguous rows (visit_contiguous), rows cut into
// slices whose partial results a second launch merges in index order (deterministic: no atomics),
// and one thread per output for short rows or reductions over outer dimensions.
//
//   op              Acc (partial result)   add(acc, x)                      finish
//   prod            T                      acc * x                          acc
//   amax / amin     T                      the larger / smaller, NaN wins   acc
//   all / any       int                    acc & (x != 0) / acc | (x != 0)  bool
//   count_nonzero   long long              acc + (x != 0)                   acc
//   norm1           T                      acc + |x|                        acc
//   norm2           T                      acc + x * x                      sqrt(acc)
//   norminf         T                      max(acc, |x|), NaN wins          acc
//   logsumexp       (m, s): running max m  online form, below               m + log(s)
//                   and s = sum exp(x - m)
//
// logsumexp in one read (the "online" form of Milakov & Gimelshein, "Online normalizer calculation
// for softmax", 2018): keep the largest element m seen so far and s = sum of exp(x - m). A new x
// larger than m rescales s by exp(m - x) and becomes m; otherwise s += exp(x - m). Two partial
// results merge by rescaling the one with the smaller m. log(sum exp) is then m + log(s), never
// exp of a large number (no overflow). Infinities: x == m counts 1 (so -inf, -inf, ... gives
// m + log(count) = -inf, and +inf stays +inf, where exp(inf - inf) would be NaN); a NaN element
// makes s NaN, and NaN propagates, as in PyTorch.
// =================================================================================================

namespace fold {

template <typename T> __device__ __forceinline__ T lowest();
template <> __device__ __forceinline__ float lowest<float>() { return -__int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double lowest<double>() { return -__longlong_as_double(0x7ff0000000000000ll); }
template <> __device__ __forceinline__ long long lowest<long long>() { return (long long)0x8000000000000000ull; }
template <typename T> __device__ __forceinline__ T highest();
template <> __device__ __forceinline__ float highest<float>() { return __int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double highest<double>() { return __longlong_as_double(0x7ff0000000000000ll); }
template <> __device__ __forceinline__ long long highest<long long>() { return 0x7fffffffffffffffll; }

template <typename T>
__device__ __forceinline__ T absolute(T x) { return x < T(0) ? -x : x; }      // NaN stays NaN

// the larger (smaller) of the running value and x; a NaN on either side wins and stays
template <typename T>
__device__ __forceinline__ T max_nan(T acc, T x) { return (is_nan(acc) || acc >= x) ? acc : x; }
template <typename T>
__device__ __forceinline__ T min_nan(T acc, T x) { return (is_nan(acc) || acc <= x) ? acc : x; }

template <typename T> struct Prod {
    using Acc = T; using Out = T;
    __device__ static T init() { return T(1); }
    __device__ static T add(T acc, T x) { return acc * x; }
    __device__ static T merge(T a, T b) { return a * b; }
    __device__ static T finish(T a) { return a; }
};
template <typename T> struct Amax {
    using Acc = T; using Out = T;
    __device__ static T init() { return lowest<T>(); }
    __device__ static T add(T acc, T x) { return max_nan(acc, x); }
    __device__ static T merge(T a, T b) { return max_nan(a, b); }
    __device__ static T finish(T a) { return a; }
};
template <typename T> struct Amin {
    using Acc = T; using Out = T;
    __device__ static T init() { return highest<T>(); }
    __device__ static T add(T acc, T x) { return min_nan(acc, x); }
    __device__ static T merge(T a, T b) { return min_nan(a, b); }
    __device__ static T finish(T a) { return a; }
};
template <typename T> struct All {
    using Acc = int; using Out = bool;
    __device__ static int init() { return 1; }
    __device__ static int add(int acc, T x) { return acc & (int)(x != T(0)); }
    __device__ static int merge(int a, int b) { return a & b; }
    __device__ static bool finish(int a) { return a != 0; }
};
template <typename T> struct Any {
    using Acc = int; using Out = bool;
    __device__ static int init() { return 0; }
    __device__ static int add(int acc, T x) { return acc | (int)(x != T(0)); }
    __device__ static int merge(int a, int b) { return a | b; }
    __device__ static bool finish(int a) { return a != 0; }
};
template <typename T> struct CountNonzero {
    using Acc = long long; using Out = long long;
    __device__ static long long init() { return 0; }
    __device__ static long long add(long long acc, T x) { return acc + (long long)(x != T(0)); }
    __device__ static long long merge(long long a, long long b) { return a + b; }
    __device__ static long long finish(long long a) { return a; }
};
template <typename T> struct Norm1 {
    using Acc = T; using Out = T;
    __device__ static T init() { return T(0); }
    __device__ static T add(T acc, T x) { return acc + absolute(x); }
    __device__ static T merge(T a, T b) { return a + b; }
    __device__ static T finish(T a) { return a; }
};
template <typename T> struct Norm2 {
    using Acc = T; using Out = T;
    __device__ static T init() { return T(0); }
    __device__ static T add(T acc, T x) { return acc + x * x; }
    __device__ static T merge(T a, T b) { return a + b; }
    __device__ static T finish(T a) { return m_sqrt(a); }
};
template <typename T> struct NormInf {
    using Acc = T; using Out = T;
    __device__ static T init() { return T(0); }
    __device__ static T add(T acc, T x) { return max_nan(acc, absolute(x)); }
    __device__ static T merge(T a, T b) { return max_nan(a, b); }
    __device__ static T finish(T a) { return a; }
};

template <typename T>
struct MaxSum {
    T m, s;                 // the largest element seen, sum of exp(x - m) over the elements seen
};
template <typename T>
__device__ __forceinline__ MaxSum<T> shfl_down(MaxSum<T> p, int d) {
    return {__shfl_down_sync(FULL_MASK, p.m, d), __shfl_down_sync(FULL_MASK, p.s, d)};
}
template <typename T> struct LogSumExp {
    using Acc = MaxSum<T>; using Out = T;
    __device__ static Acc init() { return {lowest<T>(), T(0)}; }
    __device__ static Acc add(Acc a, T x) {
        if (x > a.m) return {x, a.s * m_exp(a.m - x) + T(1)};     // a.m = -inf: exp(-inf) = 0
        if (x == a.m) return {a.m, a.s + T(1)};                   // also -inf == -inf, inf == inf
        return {a.m, a.s + m_exp(x - a.m)};                       // x NaN: s becomes NaN
    }
    __device__ static Acc merge(Acc a, Acc b) {
        if (a.m == b.m) return {a.m, a.s + b.s};
        if (a.m > b.m) return {a.m, a.s + b.s * m_exp(b.m - a.m)};
        return {b.m, b.s + a.s * m_exp(a.m - b.m)};
    }
    __device__ static T finish(Acc a) { return a.m + m_log(a.s); }   // s = 0 (empty): -inf
};

// Block (o, s) of an (n_out, splits) grid folds slice s of row o; with one slice (final) it writes
// out[o], otherwise its partial result goes to part[o * splits + s] for fold_combine.
template <typename T, class Op>
__device__ __forceinline__ void blocks(const T* __restrict__ a, typename Op::Out* __restrict__ out,
                                       typename Op::Acc* __restrict__ part, long long R, const Layout& kept,
                                       const Layout& red, bool final) {
    using Acc = typename Op::Acc;
    constexpr int N = 16 / sizeof(T);
    const RowSlice<T> s = row_slice(a, kept);
    Acc acc = Op::init();
    auto one = [&](long long, T x) { acc = Op::add(acc, x); };
    if (r4::row_is_contiguous(red)) {
        r4::visit_contiguous(s.row, R, s.t, s.nt, one, [&](long long, const Vec<T, N>& v) {
#pragma unroll
            for (int j = 0; j < N; ++j) acc = Op::add(acc, v.v[j]);
        });
    } else {
        r4::visit_strided(s.row, R, red, s.t, s.nt, one);
    }
    acc = block_reduce(acc, Op::init(), [](Acc x, Acc y) { return Op::merge(x, y); });
    if (threadIdx.x == 0) {
        const long long o = blockIdx.x;
        if (final) out[o] = Op::finish(acc);
        else part[o * gridDim.y + blockIdx.y] = acc;
    }
}

// Block o merges the `splits` partial results of row o (in index order) into out[o].
template <class Op>
__device__ __forceinline__ void combine(const typename Op::Acc* __restrict__ part, typename Op::Out* __restrict__ out,
                                        long long splits) {
    using Acc = typename Op::Acc;
    const long long o = blockIdx.x;
    Acc acc = Op::init();
    for (long long k = threadIdx.x; k < splits; k += blockDim.x) acc = Op::merge(acc, part[o * splits + k]);
    acc = block_reduce(acc, Op::init(), [](Acc x, Acc y) { return Op::merge(x, y); });
    if (threadIdx.x == 0) out[o] = Op::finish(acc);
}

// Thread o folds row o alone, in order.
template <typename T, class Op>
__device__ __forceinline__ void threads(const T* __restrict__ a, typename Op::Out* __restrict__ out, long long n_out,
                                        long long R, const Layout& kept, const Layout& red) {
    GRID_STRIDE_LOOP(o, n_out) {
        long long base[1];
        layout_offsets<1>(kept, o, base);
        const T* row = a + base[0];
        typename Op::Acc acc = Op::init();
        for (long long r = 0; r < R; ++r) {
            long long k[1];
            layout_offsets<1>(red, r, k);
            acc = Op::add(acc, row[k[0]]);
        }
        out[o] = Op::finish(acc);
    }
}

}  // namespace fold

// fold_blocks_<op>_<suf>, fold_combine_<op>_<suf>, fold_threads_<op>_<suf>: partial results travel
// between launches as Op::Acc (at most 16 bytes: reduce.py allocates 16 bytes per partial).
#define FOLD(NAME, OP, T, SUF) MT_IF_##SUF(                                                          \
    static_assert(sizeof(fold::OP<T>::Acc) <= 16, "partials are 16-byte slots");                    \
    extern "C" __global__ void fold_blocks_##NAME##_##SUF(const T* __restrict__ a,                  \
                                                          fold::OP<T>::Out* __restrict__ out,       \
                                                          fold::OP<T>::Acc* __restrict__ part, long long R, \
                                                          const Layout kept, const Layout red, bool final) { \
        fold::blocks<T, fold::OP<T>>(a, out, part, R, kept, red, final);                            \
    }                                                                                               \
    extern "C" __global__ void fold_combine_##NAME##_##SUF(const fold::OP<T>::Acc* __restrict__ part, \
                                                           fold::OP<T>::Out* __restrict__ out, long long splits) { \
        fold::combine<fold::OP<T>>(part, out, splits);                                              \
    }                                                                                               \
    extern "C" __global__ void fold_threads_##NAME##_##SUF(const T* __restrict__ a,                 \
                                                           fold::OP<T>::Out* __restrict__ out, long long n_out, \
                                                           long long R, const Layout kept, const Layout red) { \
        fold::threads<T, fold::OP<T>>(a, out, n_out, R, kept, red);                                 \
    })

#define FOLD_NUMBERS(NAME, OP) FOLD(NAME, OP, float, f32) FOLD(NAME, OP, double, f64) FOLD(NAME, OP, long long, i64)
#define FOLD_FLOATS(NAME, OP) FOLD(NAME, OP, float, f32) FOLD(NAME, OP, double, f64)
#define FOLD_ALL_TYPES(NAME, OP) FOLD_NUMBERS(NAME, OP) FOLD(NAME, OP, bool, bool)

FOLD_NUMBERS(prod, Prod)
FOLD_NUMBERS(amax, Amax)
FOLD_NUMBERS(amin, Amin)
FOLD_ALL_TYPES(all, All)
FOLD_ALL_TYPES(any, Any)
FOLD_ALL_TYPES(count_nonzero, CountNonzero)
FOLD_FLOATS(norm1, Norm1)
FOLD_FLOATS(norm2, Norm2)
FOLD_FLOATS(norminf, NormInf)
FOLD_FLOATS(logsumexp, LogSumExp)
