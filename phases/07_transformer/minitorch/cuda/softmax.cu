// GENERATED from minitorch/cuda/softmax.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 06
// softmax.cu - softmax and log-softmax over the last dimension, their gradients, fused
// cross-entropy and NLL. Every input is a contiguous [rows, n] matrix: the Tensor layer
// moves the reduced dimension last and flattens the others into rows.
//
//   softmax(x)_j     = exp(x_j - M) / D          M = max_j x_j,  D = sum_j exp(x_j - M)
//   log_softmax(x)_j = x_j - M - log D           (M + log D is the row's logsumexp)
//
// Subtracting the row maximum M first (the "max trick") keeps every exp() in (0, 1]: no overflow
// for logits of +-1000, and the result is mathematically unchanged. Gradients, with y the output
// and g the incoming gradient:
//   softmax:      dx = y * (g - sum_j g_j y_j)
//   log-softmax:  dx = g - exp(y) * sum_j g_j
//   cross-entropy loss_r = logsumexp(x_r) - x_r[t_r]:   dx = (softmax(x_r) - onehot(t_r)) * grad_r
//
// Who handles a row (Python picks, native/cuda/softmax.py):
//
//   *_warp<E>_*   rows of n <= 1024 (float64: n <= 512): a group of `lanes` threads per row
//                 (lanes = 32, or the next power of two >= n when n < 32: a warp then holds
//                 32 / lanes rows). Each thread keeps its E = ceil(n / lanes) elements in
//                 REGISTERS (E a template constant, so the array lives in registers, not local
//                 memory): the row is read from memory once, and the reductions are warp shuffles
//                 (__shfl_xor_sync: after log2(lanes) exchanges every lane of the group holds the
//                 total; no shared memory, no __syncthreads).
//
//   *_block_*     longer rows: one block per row. Threads read 16-byte vectors (Vec, common.cuh;
//                 when n and the pointers allow), four loads in flight per thread, and stash the row
//                 in dynamic SHARED memory when it fits (`cache`), so that global memory is read
//                 once and written once: the ideal for an op this memory-bound. The block combines
//                 the threads' partial results with warp shuffles, one value per warp through
//                 shared memory, and one more warp. A row too long for shared memory (more than
//                 CACHE_BYTES) is read twice (the second read often hits L2).
//
// Forward, one reduction not two: each thread keeps a running pair (m, d) = (max so far, sum of
// exp(x - m) so far); two pairs merge as (M, d1 exp(m1 - M) + d2 exp(m2 - M)) with M = max(m1, m2).
// This is the "online normalizer" of Milakov & Gimelshein (2018), "Online normalizer calculation
// for softmax", arXiv:1805.02867: max and sum come out of one pass and one block reduction.
// With the row cached in shared memory a thread first takes the max of its own elements m_t, then
// replaces each of its cached x by e = exp(x - m_t) while summing them: the output is then
// e * (exp(m_t - M) / D), one exp per element instead of two.
//
// Special values, as PyTorch: a NaN anywhere in a row makes the row NaN (it reaches D); a row that
// is all -inf gives NaN (exp(-inf - -inf)); -inf elements next to finite ones give 0 (log: -inf).
//
// Cross-entropy and NLL targets are int64 class indices t_r; a target outside [0, n) is never used
// as an address: its loss is NaN and its whole gradient row NaN (the Tensor layer checks targets
// on cpu, where that is cheap; on cuda checking would need a device-to-host copy).

#include "common.cuh"

namespace smx {     // names of this file only: common.cuh may grow helpers of the same names

// ---- numbers by type ---------------------------------------------------------------------------
// (NVRTC has no <cmath>/<limits>: infinities and NaN from their bit patterns.)
template <typename T> struct Num;
template <> struct Num<float> {
    static __device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }
    static __device__ __forceinline__ float nan() { return __int_as_float(0x7fffffff); }
};
template <> struct Num<double> {
    static __device__ __forceinline__ double neg_inf() { return __longlong_as_double(0xfff0000000000000ull); }
    static __device__ __forceinline__ double nan() { return __longlong_as_double(0x7ff8000000000000ull); }
};

// exp(x - m) where m is a maximum taken over x's row (so x <= m), with exp(-inf - m) = 0 also for
// m = -inf, where the formula would give exp(-inf + inf) = NaN for elements that are absent or
// -inf. A NaN x still gives NaN (NaN is never "below"; it must reach the sum).
template <typename T>
__device__ __forceinline__ T exp_below(T x, T m) { return x == Num<T>::neg_inf() ? T(0) : m_exp(x - m); }

// ---- what a reduction combines ---------------------------------------------------------------------
// Each pair type has an identity (what a thread with no elements holds), a merge, and a shuffle.
template <typename T>
__device__ __forceinline__ T shfl_xor(T v, int mask) { return __shfl_xor_sync(FULL_MASK, v, mask); }

template <typename T>
struct Sum {
    T s;
    static __device__ __forceinline__ Sum identity() { return {T(0)}; }
    __device__ __forceinline__ Sum merge(Sum o) const { return {s + o.s}; }
    __device__ __forceinline__ Sum shfl(int mask) const { return {shfl_xor(s, mask)}; }
};

template <typename T>
struct Max {
    T m;
    static __device__ __forceinline__ Max identity() { return {Num<T>::neg_inf()}; }
    __device__ __forceinline__ Max merge(Max o) const { return {o.m > m ? o.m : m}; }
    __device__ __forceinline__ Max shfl(int mask) const { return {shfl_xor(m, mask)}; }
};

// (running max m, sum d of exp(x - m)): the online normalizer (Milakov & Gimelshein 2018).
template <typename T>
struct MaxSum {
    T m, d;
    static __device__ __forceinline__ MaxSum identity() { return {Num<T>::neg_inf(), T(0)}; }
    // one more element, one exp: if x is a new maximum, rescale the sum to it (d e^(m - x) + 1),
    // else add e^(x - m). NaN is never > m: it lands in the second case and makes d NaN, which
    // is what we want (the row's result is NaN).
    __device__ __forceinline__ void add(T x) {
        const bool up = x > m;
        const T e = exp_below(up ? m : x, up ? x : m);
        d = up ? d * e + T(1) : d + e;
        m = up ? x : m;
    }
    __device__ __forceinline__ MaxSum merge(MaxSum o) const {      // (d is NaN once a NaN was added)
        const T M = o.m > m ? o.m : m;
        return {M, d * exp_below(m, M) + o.d * exp_below(o.m, M)};
    }
    __device__ __forceinline__ MaxSum shfl(int mask) const { return {shfl_xor(m, mask), shfl_xor(d, mask)}; }
};

// ---- reductions over a group of threads --------------------------------------------------------------
// Within aligned groups of `lanes` threads of a warp (lanes a power of two <= 32): butterfly
// exchanges with lane ^ mask, mask = lanes/2 ... 1, stay inside the group, and afterwards every
// lane holds the group's result. All 32 lanes of the warp must call it (the mask is the full warp).
template <class P>
__device__ __forceinline__ P group_allreduce(P v, int lanes) {
    for (int mask = lanes >> 1; mask > 0; mask >>= 1) v = v.merge(v.shfl(mask));
    return v;
}

// Over the whole block (blockDim.x a multiple of 32, at most 1024); every thread gets the result
// and every thread must call it. The leading __syncthreads() makes a second call in the same
// kernel safe (no thread overwrites `part` while another still reads the previous result).
template <class P>
__device__ __forceinline__ P block_allreduce(P v) {
    __shared__ P part[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = group_allreduce(v, 32);
    __syncthreads();
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = group_allreduce(lane < warps ? part[lane] : P::identity(), 32);
        if (lane == 0) part[0] = v;     // the other lanes have read part[] (the shuffles waited for them)
    }
    __syncthreads();
    return part[0];
}

// Where a row-group kernel's thread stands: warp mode (lanes <= 32: blockDim.x / lanes rows per
// block) or block mode (lanes == blockDim.x: one row per block). `valid` is false for the spare
// groups of the last block; they still take part in the shuffles.
struct RowSlot {
    long long row;
    int lane;
    bool valid;
};

__device__ __forceinline__ RowSlot row_slot(long long rows, int lanes) {
    RowSlot s;
    if (lanes <= 32) {
        s.lane = threadIdx.x & (lanes - 1);
        s.row = (long long)blockIdx.x * (blockDim.x / lanes) + threadIdx.x / lanes;
    } else {
        s.lane = threadIdx.x;
        s.row = blockIdx.x;
    }
    s.valid = s.row < rows;
    return s;
}

template <class P>
__device__ __forceinline__ P row_allreduce(P v, int lanes) {
    return lanes <= 32 ? group_allreduce(v, lanes) : block_allreduce(v);   // uniform per block
}

// Run body<V>() with V = 16 / sizeof(T) elements per vector when the row length and every pointer
// allow 16-byte accesses (then every row starts aligned), else with V = 1. Unused pointer
// arguments stay nullptr, which counts as aligned.
template <typename T>
__device__ __forceinline__ bool vectorizable(long long n, const void* a, const void* b = nullptr,
                                             const void* c = nullptr) {
    constexpr int V = 16 / sizeof(T);
    return n % V == 0 && is_aligned<16>(a) && is_aligned<16>(b) && is_aligned<16>(c);
}

// ================================ softmax / log-softmax forward ===================================
template <typename T, int E>
__device__ __forceinline__ void softmax_warp(const T* __restrict__ x, T* __restrict__ y, long long rows,
                                             long long n, int lanes, bool log) {
    // >>> exercise 06.3: the softmax kernel (rows of up to 1024)
    // hint: `lanes` threads share a row, each holding E elements in registers: load, max over the row (group_allreduce)
    // hint: then the sum of exp(v - max), then write v * (1 / sum), or v - max - log(sum) for log-softmax
    const RowSlot s = row_slot(rows, lanes);
    const int len = s.valid ? (int)n : 0;          // n <= 1024 here: 32-bit indices, fewer registers
    const T* xr = x + s.row * n + s.lane;           // this lane's elements: xr[k * lanes], k < E
    const int left = len - s.lane;                  // element k is in the row when k * lanes < left
    T v[E];
    Max<T> mx = Max<T>::identity();
#pragma unroll
    for (int k = 0; k < E; ++k) {           // element lane + k * lanes: each load is coalesced
        v[k] = k * lanes < left ? xr[k * lanes] : Num<T>::neg_inf();
        mx = mx.merge({v[k]});
    }
    const T M = group_allreduce(mx, lanes).m;
    Sum<T> sum = Sum<T>::identity();
#pragma unroll
    for (int k = 0; k < E; ++k) {           // absent elements are -inf: exp(-inf - M) = 0
        const T e = m_exp(v[k] - M);
        sum.s += e;
        if (!log) v[k] = e;
    }
    const T D = group_allreduce(sum, lanes).s;
    T* yr = y + s.row * n + s.lane;
    const T inv = T(1) / D, lse = M + m_log(D);
#pragma unroll
    for (int k = 0; k < E; ++k)
        if (k * lanes < left) yr[k * lanes] = log ? v[k] - lse : v[k] * inv;
    // <<< exercise
}

template <typename T, int V>
__device__ __forceinline__ void softmax_block_row(const T* __restrict__ xr, T* __restrict__ yr, long long n,
                                                  bool log, bool cache, unsigned char* smem) {
    using Vt = Vec<T, V>;
    const Vt* xv = reinterpret_cast<const Vt*>(xr);
    Vt* yv = reinterpret_cast<Vt*>(yr);
    Vt* c = reinterpret_cast<Vt*>(smem);
    const long long nv = n / V;
    const int t = threadIdx.x, B = blockDim.x;
    MaxSum<T> st;
    if (cache) {
        // read once into shared memory, keeping this thread's max
        T m = Num<T>::neg_inf();
        scan(xv, nv, t, B, [&](long long i, Vt a) {
            c[i] = a;
#pragma unroll
            for (int k = 0; k < V; ++k) m = a.v[k] > m ? a.v[k] : m;
        });
        // this thread's own elements only (no __syncthreads needed): d = sum exp(x - m), and for
        // softmax keep e = exp(x - m) in place of x
        T d = T(0);
        for (long long i = t; i < nv; i += B) {
            Vt a = c[i];
#pragma unroll
            for (int k = 0; k < V; ++k) {
                const T e = exp_below(a.v[k], m);
                d += e;
                a.v[k] = e;
            }
            if (!log) c[i] = a;
        }
        st = {m, d};
    } else {
        st = MaxSum<T>::identity();
        scan(xv, nv, t, B, [&](long long, Vt a) {
#pragma unroll
            for (int k = 0; k < V; ++k) st.add(a.v[k]);
        });
    }
    const MaxSum<T> row = block_allreduce(st);
    const T M = row.m, D = row.d, lse = M + m_log(D);
    if (cache) {
        const T scale = exp_below(st.m, M) / D;     // e * exp(m_t - M) / D = exp(x - M) / D
        for (long long i = t; i < nv; i += B) {
            Vt a = c[i];
#pragma unroll
            for (int k = 0; k < V; ++k) a.v[k] = log ? a.v[k] - lse : a.v[k] * scale;
            yv[i] = a;
        }
    } else {
        const T inv = T(1) / D;
        scan(xv, nv, t, B, [&](long long i, Vt a) {
#pragma unroll
            for (int k = 0; k < V; ++k) a.v[k] = log ? a.v[k] - lse : m_exp(a.v[k] - M) * inv;
            yv[i] = a;
        });
    }
}

template <typename T>
__device__ __forceinline__ void softmax_block(const T* __restrict__ x, T* __restrict__ y, long long n,
                                              bool log, bool cache) {
    extern __shared__ __align__(16) unsigned char smem[];      // n * sizeof(T) bytes when cache
    const long long row = blockIdx.x;
    if (vectorizable<T>(n, x, y))
        softmax_block_row<T, 16 / sizeof(T)>(x + row * n, y + row * n, n, log, cache, smem);
    else
        softmax_block_row<T, 1>(x + row * n, y + row * n, n, log, cache, smem);
}

// ================================ softmax / log-softmax backward ==================================
// softmax: dx = y * (g - sum(g * y));  log-softmax (y = log p): dx = g - exp(y) * sum(g)
template <typename T>
__device__ __forceinline__ T softmax_grad(T y, T g, T S, bool log) { return log ? g - m_exp(y) * S : y * (g - S); }

template <typename T, int E>
__device__ __forceinline__ void softmax_backward_warp(const T* __restrict__ y, const T* __restrict__ g,
                                                      T* __restrict__ dx, long long rows, long long n,
                                                      int lanes, bool log) {
    const RowSlot s = row_slot(rows, lanes);
    const long long off = s.row * n + s.lane;
    const int left = (s.valid ? (int)n : 0) - s.lane;
    T yv[E], gv[E];
    Sum<T> sum = Sum<T>::identity();
#pragma unroll
    for (int k = 0; k < E; ++k) {
        const bool in = k * lanes < left;
        yv[k] = in ? y[off + k * lanes] : T(0);
        gv[k] = in ? g[off + k * lanes] : T(0);
        sum.s += log ? gv[k] : gv[k] * yv[k];
    }
    const T S = group_allreduce(sum, lanes).s;
#pragma unroll
    for (int k = 0; k < E; ++k)
        if (k * lanes < left) dx[off + k * lanes] = softmax_grad(yv[k], gv[k], S, log);
}

template <typename T, int V>
__device__ __forceinline__ void softmax_backward_block_row(const T* __restrict__ yr, const T* __restrict__ gr,
                                                           T* __restrict__ dxr, long long n, bool log, bool cache,
                                                           unsigned char* smem) {
    using Vt = Vec<T, V>;
    const Vt* yv = reinterpret_cast<const Vt*>(yr);
    const Vt* gv = reinterpret_cast<const Vt*>(gr);
    Vt* dv = reinterpret_cast<Vt*>(dxr);
    const long long nv = n / V;
    Vt* cy = reinterpret_cast<Vt*>(smem);       // y then g: 2 n sizeof(T) bytes when cache
    Vt* cg = cy + nv;
    const int t = threadIdx.x, B = blockDim.x;
    // one pass: read g (and y), stash them, sum
    T acc = T(0);
    if (log) {
        scan(gv, nv, t, B, [&](long long i, Vt b) {
            if (cache) cg[i] = b;
#pragma unroll
            for (int k = 0; k < V; ++k) acc += b.v[k];
        });
        if (cache)
            for (long long i = t; i < nv; i += B) cy[i] = yv[i];
    } else {
        long long i = t;
        for (; i + (UNROLL - 1) * B < nv; i += UNROLL * B) {
            Vt a[UNROLL], b[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                a[u] = yv[i + u * B];
                b[u] = gv[i + u * B];
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                if (cache) {
                    cy[i + u * B] = a[u];
                    cg[i + u * B] = b[u];
                }
#pragma unroll
                for (int k = 0; k < V; ++k) acc += a[u].v[k] * b[u].v[k];
            }
        }
        for (; i < nv; i += B) {
            const Vt a = yv[i], b = gv[i];
            if (cache) {
                cy[i] = a;
                cg[i] = b;
            }
#pragma unroll
            for (int k = 0; k < V; ++k) acc += a.v[k] * b.v[k];
        }
    }
    const T S = block_allreduce(Sum<T>{acc}).s;
    for (long long i = t; i < nv; i += B) {             // this thread's own elements again
        const Vt a = cache ? cy[i] : yv[i];
        const Vt b = cache ? cg[i] : gv[i];
        Vt o;
#pragma unroll
        for (int k = 0; k < V; ++k) o.v[k] = softmax_grad(a.v[k], b.v[k], S, log);
        dv[i] = o;
    }
}

template <typename T>
__device__ __forceinline__ void softmax_backward_block(const T* __restrict__ y, const T* __restrict__ g,
                                                       T* __restrict__ dx, long long n, bool log, bool cache) {
    extern __shared__ __align__(16) unsigned char smem[];
    const long long off = blockIdx.x * n;
    if (vectorizable<T>(n, y, g, dx))
        softmax_backward_block_row<T, 16 / sizeof(T)>(y + off, g + off, dx + off, n, log, cache, smem);
    else
        softmax_backward_block_row<T, 1>(y + off, g + off, dx + off, n, log, cache, smem);
}

// ================================ cross-entropy and NLL ===========================================
// Forward: loss[r] = logsumexp(x_r) - x_r[t_r] and lse[r] = logsumexp(x_r), from one online pass.
template <typename T, int V>
__device__ __forceinline__ MaxSum<T> row_maxsum(const T* __restrict__ xr, long long n, int lane, int lanes) {
    using Vt = Vec<T, V>;
    MaxSum<T> st = MaxSum<T>::identity();
    scan(reinterpret_cast<const Vt*>(xr), n / V, lane, lanes, [&](long long, Vt a) {
#pragma unroll
        for (int k = 0; k < V; ++k) st.add(a.v[k]);
    });
    return st;
}

template <typename T>
__device__ __forceinline__ void cross_entropy(const T* __restrict__ x, const long long* __restrict__ target,
                                              T* __restrict__ loss, T* __restrict__ lse, long long rows,
                                              long long n, int lanes) {
    const RowSlot s = row_slot(rows, lanes);
    const T* xr = x + s.row * n;
    MaxSum<T> st = MaxSum<T>::identity();
    if (s.valid) {
        if (lanes > 32 && vectorizable<T>(n, x))
            st = row_maxsum<T, 16 / sizeof(T)>(xr, n, s.lane, lanes);
        else
            st = row_maxsum<T, 1>(xr, n, s.lane, lanes);
    }
    st = row_allreduce(st, lanes);
    if (s.valid && s.lane == 0) {
        const T L = st.m + m_log(st.d);
        const long long t = target[s.row];
        lse[s.row] = L;
        loss[s.row] = (t >= 0 && t < n) ? L - xr[t] : Num<T>::nan();
    }
}

// Backward, elementwise given lse: dx = (CE ? exp(x - lse) : 0) - [j == t]) * grad[r * gstride] * scale.
// CE = false is NLL's backward (x and lse unused). gstride 0 broadcasts one gradient to every row
// (reduction 'mean'/'sum'); scale is 1/N for 'mean'. An out-of-range target gives a NaN row.
template <typename T, bool CE, int V>
__device__ __forceinline__ void loss_backward_row(const T* __restrict__ xr, T L, long long t, T gs,
                                                  T* __restrict__ dr, long long n, int lane, int lanes) {
    using Vt = Vec<T, V>;
    const bool ok = t >= 0 && t < n;
    const T nan = Num<T>::nan();
    Vt* dv = reinterpret_cast<Vt*>(dr);
    auto grad = [&](T xj, long long j) {
        if (!ok) return nan;
        const T p = CE ? m_exp(xj - L) : T(0);
        return (p - (j == t ? T(1) : T(0))) * gs;
    };
    if (CE) {
        scan(reinterpret_cast<const Vt*>(xr), n / V, lane, lanes, [&](long long i, Vt a) {
#pragma unroll
            for (int k = 0; k < V; ++k) a.v[k] = grad(a.v[k], i * V + k);
            dv[i] = a;
        });
    } else {
        for (long long i = lane; i < n / V; i += lanes) {
            Vt a;
#pragma unroll
            for (int k = 0; k < V; ++k) a.v[k] = grad(T(0), i * V + k);
            dv[i] = a;
        }
    }
}

template <typename T, bool CE>
__device__ __forceinline__ void loss_backward(const T* __restrict__ x, const long long* __restrict__ target,
                                              const T* __restrict__ lse, const T* __restrict__ grad,
                                              long long gstride, T scale, T* __restrict__ dx, long long rows,
                                              long long n, int lanes) {
    const RowSlot s = row_slot(rows, lanes);
    if (!s.valid) return;                   // no reduction here: spare groups can leave
    const long long off = s.row * n;
    const T L = CE ? lse[s.row] : T(0);
    const long long t = target[s.row];
    const T gs = grad[s.row * gstride] * scale;
    if (lanes > 32 && vectorizable<T>(n, CE ? (const void*)x : (const void*)dx, dx))
        loss_backward_row<T, CE, 16 / sizeof(T)>(CE ? x + off : x, L, t, gs, dx + off, n, s.lane, lanes);
    else
        loss_backward_row<T, CE, 1>(CE ? x + off : x, L, t, gs, dx + off, n, s.lane, lanes);
}

// NLL forward: loss[r] = -x[r, t_r] (x holds log-probabilities); one thread per row.
template <typename T>
__device__ __forceinline__ void nll_loss(const T* __restrict__ x, const long long* __restrict__ target,
                                         T* __restrict__ loss, long long rows, long long n) {
    GRID_STRIDE_LOOP(r, rows) {
        const long long t = target[r];
        loss[r] = (t >= 0 && t < n) ? -x[r * n + t] : Num<T>::nan();
    }
}

}  // namespace smx

// ================================ entry points ====================================================
#define SOFTMAX_WARP(E, T, SUF) MT_IF_##SUF(                                                          \
    extern "C" __global__ void softmax_warp##E##_##SUF(const T* __restrict__ x, T* __restrict__ y,   \
                                                       long long rows, long long n, int lanes, bool log) { \
        smx::softmax_warp<T, E>(x, y, rows, n, lanes, log);                                          \
    }                                                                                                \
    extern "C" __global__ void softmax_backward_warp##E##_##SUF(const T* __restrict__ y, const T* __restrict__ g, \
                                                                T* __restrict__ dx, long long rows,  \
                                                                long long n, int lanes, bool log) {  \
        smx::softmax_backward_warp<T, E>(y, g, dx, rows, n, lanes, log);                             \
    })

// E = 1, 2, 4, 8, 16 for both types; E = 32 (rows of 513..1024) for float only: 32 doubles per array
// would take most of the 255 registers, and such rows go to the block kernels instead.
#define SOFTMAX_FLOAT(T, SUF)                                                                         \
    SOFTMAX_WARP(1, T, SUF) SOFTMAX_WARP(2, T, SUF) SOFTMAX_WARP(4, T, SUF)                          \
    SOFTMAX_WARP(8, T, SUF) SOFTMAX_WARP(16, T, SUF)                                                 \
    MT_IF_##SUF(                                                                                     \
    extern "C" __global__ void softmax_block_##SUF(const T* __restrict__ x, T* __restrict__ y, long long n, \
                                                   bool log, bool cache) {                           \
        smx::softmax_block<T>(x, y, n, log, cache);                                                  \
    }                                                                                                \
    extern "C" __global__ void softmax_backward_block_##SUF(const T* __restrict__ y, const T* __restrict__ g, \
                                                            T* __restrict__ dx, long long n, bool log, bool cache) { \
        smx::softmax_backward_block<T>(y, g, dx, n, log, cache);                                     \
    }                                                                                                \
    extern "C" __global__ void cross_entropy_##SUF(const T* __restrict__ x, const long long* __restrict__ target, \
                                                   T* __restrict__ loss, T* __restrict__ lse, long long rows, \
                                                   long long n, int lanes) {                         \
        smx::cross_entropy<T>(x, target, loss, lse, rows, n, lanes);                                 \
    }                                                                                                \
    extern "C" __global__ void cross_entropy_backward_##SUF(const T* __restrict__ x,                 \
                                                            const long long* __restrict__ target,    \
                                                            const T* __restrict__ lse, const T* __restrict__ grad, \
                                                            long long gstride, T scale, T* __restrict__ dx, \
                                                            long long rows, long long n, int lanes) { \
        smx::loss_backward<T, true>(x, target, lse, grad, gstride, scale, dx, rows, n, lanes);       \
    }                                                                                                \
    extern "C" __global__ void nll_loss_##SUF(const T* __restrict__ x, const long long* __restrict__ target, \
                                              T* __restrict__ loss, long long rows, long long n) {   \
        smx::nll_loss<T>(x, target, loss, rows, n);                                                  \
    }                                                                                                \
    extern "C" __global__ void nll_loss_backward_##SUF(const long long* __restrict__ target,         \
                                                       const T* __restrict__ grad, long long gstride, T scale, \
                                                       T* __restrict__ dx, long long rows, long long n, int lanes) { \
        smx::loss_backward<T, false>(nullptr, target, nullptr, grad, gstride, scale, dx, rows, n, lanes); \
    })

SOFTMAX_FLOAT(float, f32)
SOFTMAX_WARP(32, float, f32)
SOFTMAX_FLOAT(double, f64)

// ================================ float16 / bfloat16 ==============================================
// The same kernels for a storage type H (__half, __nv_bfloat16), with the same entry-point argument
// lists as float32 (scalars as C floats). Every element is loaded as a float (exact), every max,
// exp, sum and logsumexp is float32 (float registers, float shuffles), and each output element is
// rounded to H once when stored: softmax of half is the float32 softmax rounded once, as PyTorch
// computes it. 16-byte vectors hold 8 halves. The block kernels' shared-memory cache keeps the
// row's H values as they were read (exact, half the bytes of float), so a cached row of n halves
// takes n * 2 bytes, as softmax.py reserves; the output pass recomputes exp(x - M) from it.
namespace smx {

template <typename H, int V>
__device__ __forceinline__ Vec<float, V> widen(const Vec<H, V>& a) {
    Vec<float, V> f;
#pragma unroll
    for (int k = 0; k < V; ++k) f.v[k] = to_opmath(a.v[k]);
    return f;
}

// ---- softmax / log-softmax forward ----
template <typename H, int E>
__device__ __forceinline__ void softmax_warp_half(const H* __restrict__ x, H* __restrict__ y, long long rows,
                                                  long long n, int lanes, bool log) {
    const RowSlot s = row_slot(rows, lanes);
    const int len = s.valid ? (int)n : 0;
    const H* xr = x + s.row * n + s.lane;
    const int left = len - s.lane;
    float v[E];
    Max<float> mx = Max<float>::identity();
#pragma unroll
    for (int k = 0; k < E; ++k) {
        v[k] = k * lanes < left ? to_opmath(xr[k * lanes]) : Num<float>::neg_inf();
        mx = mx.merge({v[k]});
    }
    const float M = group_allreduce(mx, lanes).m;
    Sum<float> sum = Sum<float>::identity();
#pragma unroll
    for (int k = 0; k < E; ++k) {
        const float e = m_exp(v[k] - M);
        sum.s += e;
        if (!log) v[k] = e;
    }
    const float D = group_allreduce(sum, lanes).s;
    H* yr = y + s.row * n + s.lane;
    const float inv = 1.0f / D, lse = M + m_log(D);
#pragma unroll
    for (int k = 0; k < E; ++k)
        if (k * lanes < left) yr[k * lanes] = narrow<H>(log ? v[k] - lse : v[k] * inv);
}

template <typename H, int V>
__device__ __forceinline__ void softmax_block_row_half(const H* __restrict__ xr, H* __restrict__ yr, long long n,
                                                       bool log, bool cache, unsigned char* smem) {
    using Vh = Vec<H, V>;
    const Vh* xv = reinterpret_cast<const Vh*>(xr);
    Vh* yv = reinterpret_cast<Vh*>(yr);
    Vh* c = reinterpret_cast<Vh*>(smem);
    const long long nv = n / V;
    const int t = threadIdx.x, B = blockDim.x;
    MaxSum<float> st = MaxSum<float>::identity();
    scan(xv, nv, t, B, [&](long long i, Vh a) {
        if (cache) c[i] = a;
        const Vec<float, V> f = widen(a);
#pragma unroll
        for (int k = 0; k < V; ++k) st.add(f.v[k]);
    });
    const MaxSum<float> row = block_allreduce(st);
    const float M = row.m, inv = 1.0f / row.d, lse = M + m_log(row.d);
    for (long long i = t; i < nv; i += B) {          // this thread's own vectors: cached by itself
        const Vec<float, V> f = widen(cache ? c[i] : xv[i]);
        Vh o;
#pragma unroll
        for (int k = 0; k < V; ++k) o.v[k] = narrow<H>(log ? f.v[k] - lse : m_exp(f.v[k] - M) * inv);
        yv[i] = o;
    }
}

template <typename H>
__device__ __forceinline__ void softmax_block_half(const H* __restrict__ x, H* __restrict__ y, long long n, bool log,
                                                   bool cache) {
    extern __shared__ __align__(16) unsigned char smem[];      // n * sizeof(H) bytes when cache
    const long long row = blockIdx.x;
    if (vectorizable<H>(n, x, y))
        softmax_block_row_half<H, 16 / sizeof(H)>(x + row * n, y + row * n, n, log, cache, smem);
    else
        softmax_block_row_half<H, 1>(x + row * n, y + row * n, n, log, cache, smem);
}

// ---- softmax / log-softmax backward ----
template <typename H, int E>
__device__ __forceinline__ void softmax_backward_warp_half(const H* __restrict__ y, const H* __restrict__ g,
                                                           H* __restrict__ dx, long long rows, long long n,
                                                           int lanes, bool log) {
    const RowSlot s = row_slot(rows, lanes);
    const long long off = s.row * n + s.lane;
    const int left = (s.valid ? (int)n : 0) - s.lane;
    float yv[E], gv[E];
    Sum<float> sum = Sum<float>::identity();
#pragma unroll
    for (int k = 0; k < E; ++k) {
        const bool in = k * lanes < left;
        yv[k] = in ? to_opmath(y[off + k * lanes]) : 0.0f;
        gv[k] = in ? to_opmath(g[off + k * lanes]) : 0.0f;
        sum.s += log ? gv[k] : gv[k] * yv[k];
    }
    const float S = group_allreduce(sum, lanes).s;
#pragma unroll
    for (int k = 0; k < E; ++k)
        if (k * lanes < left) dx[off + k * lanes] = narrow<H>(softmax_grad(yv[k], gv[k], S, log));
}

// S = sum(g * y) (softmax) or sum(g) (log-softmax) in one pass; with `cache` the pass stashes g
// (and, for softmax, y) in shared memory, so that the output pass reads global memory only for the
// log-softmax's y, which the first pass does not need.
template <typename H, int V>
__device__ __forceinline__ void softmax_backward_block_row_half(const H* __restrict__ yr, const H* __restrict__ gr,
                                                                H* __restrict__ dxr, long long n, bool log, bool cache,
                                                                unsigned char* smem) {
    using Vh = Vec<H, V>;
    const Vh* yv = reinterpret_cast<const Vh*>(yr);
    const Vh* gv = reinterpret_cast<const Vh*>(gr);
    Vh* dv = reinterpret_cast<Vh*>(dxr);
    const long long nv = n / V;
    Vh* cy = reinterpret_cast<Vh*>(smem);       // y then g: 2 n sizeof(H) bytes when cache
    Vh* cg = cy + nv;
    const int t = threadIdx.x, B = blockDim.x;
    float acc = 0.0f;
    if (log) {
        scan(gv, nv, t, B, [&](long long i, Vh b) {
            if (cache) cg[i] = b;
            const Vec<float, V> f = widen(b);
#pragma unroll
            for (int k = 0; k < V; ++k) acc += f.v[k];
        });
    } else {
        long long i = t;
        for (; i + (UNROLL - 1) * B < nv; i += UNROLL * B) {
            Vh a[UNROLL], b[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                a[u] = yv[i + u * B];
                b[u] = gv[i + u * B];
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                if (cache) {
                    cy[i + u * B] = a[u];
                    cg[i + u * B] = b[u];
                }
                const Vec<float, V> fa = widen(a[u]), fb = widen(b[u]);
#pragma unroll
                for (int k = 0; k < V; ++k) acc += fa.v[k] * fb.v[k];
            }
        }
        for (; i < nv; i += B) {
            const Vh a = yv[i], b = gv[i];
            if (cache) {
                cy[i] = a;
                cg[i] = b;
            }
            const Vec<float, V> fa = widen(a), fb = widen(b);
#pragma unroll
            for (int k = 0; k < V; ++k) acc += fa.v[k] * fb.v[k];
        }
    }
    const float S = block_allreduce(Sum<float>{acc}).s;
    for (long long i = t; i < nv; i += B) {             // this thread's own elements again
        const Vec<float, V> fa = widen((cache && !log) ? cy[i] : yv[i]);
        const Vec<float, V> fb = widen(cache ? cg[i] : gv[i]);
        Vh o;
#pragma unroll
        for (int k = 0; k < V; ++k) o.v[k] = narrow<H>(softmax_grad(fa.v[k], fb.v[k], S, log));
        dv[i] = o;
    }
}

template <typename H>
__device__ __forceinline__ void softmax_backward_block_half(const H* __restrict__ y, const H* __restrict__ g,
                                                            H* __restrict__ dx, long long n, bool log, bool cache) {
    extern __shared__ __align__(16) unsigned char smem[];
    const long long off = blockIdx.x * n;
    if (vectorizable<H>(n, y, g, dx))
        softmax_backward_block_row_half<H, 16 / sizeof(H)>(y + off, g + off, dx + off, n, log, cache, smem);
    else
        softmax_backward_block_row_half<H, 1>(y + off, g + off, dx + off, n, log, cache, smem);
}

// ---- cross-entropy and NLL ----
template <typename H, int V>
__device__ __forceinline__ MaxSum<float> row_maxsum_half(const H* __restrict__ xr, long long n, int lane, int lanes) {
    using Vh = Vec<H, V>;
    MaxSum<float> st = MaxSum<float>::identity();
    scan(reinterpret_cast<const Vh*>(xr), n / V, lane, lanes, [&](long long, Vh a) {
        const Vec<float, V> f = widen(a);
#pragma unroll
        for (int k = 0; k < V; ++k) st.add(f.v[k]);
    });
    return st;
}

// loss[r] = lse - x_r[t_r] and lse[r], both computed in float and rounded once to H
template <typename H>
__device__ __forceinline__ void cross_entropy_half(const H* __restrict__ x, const long long* __restrict__ target,
                                                   H* __restrict__ loss, H* __restrict__ lse, long long rows,
                                                   long long n, int lanes) {
    const RowSlot s = row_slot(rows, lanes);
    const H* xr = x + s.row * n;
    MaxSum<float> st = MaxSum<float>::identity();
    if (s.valid) {
        if (lanes > 32 && vectorizable<H>(n, x))
            st = row_maxsum_half<H, 16 / sizeof(H)>(xr, n, s.lane, lanes);
        else
            st = row_maxsum_half<H, 1>(xr, n, s.lane, lanes);
    }
    st = row_allreduce(st, lanes);
    if (s.valid && s.lane == 0) {
        const float L = st.m + m_log(st.d);
        const long long t = target[s.row];
        lse[s.row] = narrow<H>(L);
        loss[s.row] = narrow<H>((t >= 0 && t < n) ? L - to_opmath(xr[t]) : Num<float>::nan());
    }
}

// dx = ((CE ? exp(x - lse) : 0) - [j == t]) * grad[r * gstride] * scale, in float, rounded once;
// lse is the H value cross_entropy stored (the cpu backend also starts from the rounded one).
template <typename H, bool CE, int V>
__device__ __forceinline__ void loss_backward_row_half(const H* __restrict__ xr, float L, long long t, float gs,
                                                       H* __restrict__ dr, long long n, int lane, int lanes) {
    using Vh = Vec<H, V>;
    const bool ok = t >= 0 && t < n;
    Vh* dv = reinterpret_cast<Vh*>(dr);
    auto grad = [&](float xj, long long j) {
        if (!ok) return Num<float>::nan();
        const float p = CE ? m_exp(xj - L) : 0.0f;
        return (p - (j == t ? 1.0f : 0.0f)) * gs;
    };
    if (CE) {
        scan(reinterpret_cast<const Vh*>(xr), n / V, lane, lanes, [&](long long i, Vh a) {
            const Vec<float, V> f = widen(a);
            Vh o;
#pragma unroll
            for (int k = 0; k < V; ++k) o.v[k] = narrow<H>(grad(f.v[k], i * V + k));
            dv[i] = o;
        });
    } else {
        for (long long i = lane; i < n / V; i += lanes) {
            Vh o;
#pragma unroll
            for (int k = 0; k < V; ++k) o.v[k] = narrow<H>(grad(0.0f, i * V + k));
            dv[i] = o;
        }
    }
}

template <typename H, bool CE>
__device__ __forceinline__ void loss_backward_half(const H* __restrict__ x, const long long* __restrict__ target,
                                                   const H* __restrict__ lse, const H* __restrict__ grad,
                                                   long long gstride, float scale, H* __restrict__ dx, long long rows,
                                                   long long n, int lanes) {
    const RowSlot s = row_slot(rows, lanes);
    if (!s.valid) return;                   // no reduction here: spare groups can leave
    const long long off = s.row * n;
    const float L = CE ? to_opmath(lse[s.row]) : 0.0f;
    const long long t = target[s.row];
    const float gs = to_opmath(grad[s.row * gstride]) * scale;
    if (lanes > 32 && vectorizable<H>(n, CE ? (const void*)x : (const void*)dx, dx))
        loss_backward_row_half<H, CE, 16 / sizeof(H)>(CE ? x + off : x, L, t, gs, dx + off, n, s.lane, lanes);
    else
        loss_backward_row_half<H, CE, 1>(CE ? x + off : x, L, t, gs, dx + off, n, s.lane, lanes);
}

template <typename H>
__device__ __forceinline__ void nll_loss_half(const H* __restrict__ x, const long long* __restrict__ target,
                                              H* __restrict__ loss, long long rows, long long n) {
    GRID_STRIDE_LOOP(r, rows) {
        const long long t = target[r];
        loss[r] = narrow<H>((t >= 0 && t < n) ? -to_opmath(x[r * n + t]) : Num<float>::nan());
    }
}

}  // namespace smx

#define SOFTMAX_WARP_HALF(E, H, SUF) MT_IF_##SUF(                                                     \
    extern "C" __global__ void softmax_warp##E##_##SUF(const H* __restrict__ x, H* __restrict__ y,   \
                                                       long long rows, long long n, int lanes, bool log) { \
        smx::softmax_warp_half<H, E>(x, y, rows, n, lanes, log);                                     \
    }                                                                                                \
    extern "C" __global__ void softmax_backward_warp##E##_##SUF(const H* __restrict__ y, const H* __restrict__ g, \
                                                                H* __restrict__ dx, long long rows,  \
                                                                long long n, int lanes, bool log) {  \
        smx::softmax_backward_warp_half<H, E>(y, g, dx, rows, n, lanes, log);                        \
    })

// E = 1 ... 32 (rows up to 1024, as float32: the registers hold floats)
#define SOFTMAX_HALF(H, SUF)                                                                          \
    SOFTMAX_WARP_HALF(1, H, SUF) SOFTMAX_WARP_HALF(2, H, SUF) SOFTMAX_WARP_HALF(4, H, SUF)           \
    SOFTMAX_WARP_HALF(8, H, SUF) SOFTMAX_WARP_HALF(16, H, SUF) SOFTMAX_WARP_HALF(32, H, SUF)         \
    MT_IF_##SUF(                                                                                     \
    extern "C" __global__ void softmax_block_##SUF(const H* __restrict__ x, H* __restrict__ y, long long n, \
                                                   bool log, bool cache) {                           \
        smx::softmax_block_half<H>(x, y, n, log, cache);                                             \
    }                                                                                                \
    extern "C" __global__ void softmax_backward_block_##SUF(const H* __restrict__ y, const H* __restrict__ g, \
                                                            H* __restrict__ dx, long long n, bool log, bool cache) { \
        smx::softmax_backward_block_half<H>(y, g, dx, n, log, cache);                                \
    }                                                                                                \
    extern "C" __global__ void cross_entropy_##SUF(const H* __restrict__ x, const long long* __restrict__ target, \
                                                   H* __restrict__ loss, H* __restrict__ lse, long long rows, \
                                                   long long n, int lanes) {                         \
        smx::cross_entropy_half<H>(x, target, loss, lse, rows, n, lanes);                            \
    }                                                                                                \
    extern "C" __global__ void cross_entropy_backward_##SUF(const H* __restrict__ x,                 \
                                                            const long long* __restrict__ target,    \
                                                            const H* __restrict__ lse, const H* __restrict__ grad, \
                                                            long long gstride, float scale, H* __restrict__ dx, \
                                                            long long rows, long long n, int lanes) { \
        smx::loss_backward_half<H, true>(x, target, lse, grad, gstride, scale, dx, rows, n, lanes);  \
    }                                                                                                \
    extern "C" __global__ void nll_loss_##SUF(const H* __restrict__ x, const long long* __restrict__ target, \
                                              H* __restrict__ loss, long long rows, long long n) {   \
        smx::nll_loss_half<H>(x, target, loss, rows, n);                                             \
    }                                                                                                \
    extern "C" __global__ void nll_loss_backward_##SUF(const long long* __restrict__ target,         \
                                                       const H* __restrict__ grad, long long gstride, float scale, \
                                                       H* __restrict__ dx, long long rows, long long n, int lanes) { \
        smx::loss_backward_half<H, false>(nullptr, target, nullptr, grad, gstride, scale, dx, rows, n, lanes); \
    })

SOFTMAX_HALF(__half, f16)
SOFTMAX_HALF(__nv_bfloat16, bf16)
