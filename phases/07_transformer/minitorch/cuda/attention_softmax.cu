// GENERATED from minitorch/cuda/attention_softmax.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 07
// attention_softmax.cu - the middle of attention's decomposition in one pass over the scores:
//
//   x = S * scale + mask          mask: causal (-inf above the diagonal) and/or an additive float one
//   P = softmax(x) = exp(x - lse) lse = log(sum_j exp(x_j)), one number per row, kept for backward
//   Y = P * keep / (1 - p)        dropout; keep is redrawn in backward, never stored
//
// and its gradient, given G = dL/dY:
//   G' = G * keep / (1 - p),   dS = scale * P * (G' - sum_j P_j G'_j)
//
// Done as separate ops this is six to eight passes over the [B, heads, L, S] scores (scale, mask,
// softmax, uniform draws, compare, masked scale, and as many backward); here it is one read and one
// write forward, two reads and one write backward. Forward saves only lse: backward recomputes P
// from S (which it reads anyway) instead of storing P.
//
// Threads and data: ONE WARP PER ROW (blocks of 128 threads hold 4 rows). Lane l takes the
// vectors l, l + 32, l + 64, ... of its row (16 bytes each when the row length and the pointers
// allow, else single elements), so each load instruction of the warp reads 512 contiguous bytes.
// A row of any length is walked twice (the second walk mostly hits L1/L2): forward first keeps an
// online (max, sum of exp) pair per lane (Milakov & Gimelshein 2018, arXiv:1805.02867) and merges
// the 32 pairs with shuffles, then writes Y; backward first sums P G', then writes dS. Rows are
// independent and each lane writes only its own elements: no shared memory, no __syncthreads.
// With `causal`, row i (query i = row % L) sees keys j <= i: the elements past it are not read,
// they are -inf (Y = 0, dS = 0).
//
// Dropout's random numbers come from Philox4x32-10 (philox.cuh, shared with the float32 flash kernels
// of attention/01b_flash_fp32_tiled.cu, which drop the same elements), a counter-based generator:
// 4 words = philox(key, counter) with no state, so any thread can draw the words of any element
// directly, and backward draws the same ones again. key = a 64-bit seed drawn from our generator
// into device memory (read here, never by the host); element e = row * n + j uses word e % 4 of
// philox(key, e / 4); keep = (word >> 8) >= threshold, i.e. a 24-bit uniform u = (word >> 8) / 2^24
// compared with p (threshold = ceil(p 2^24), so P(keep) = 1 - p up to 2^-24). cpu.py computes the
// same words with NumPy: both devices drop the same elements for the same seed. Half types load as
// float, compute in float, round once.
#include "common.cuh"
#include "philox.cuh"

namespace asm_ {    // names of this file only

template <typename T> struct Num;
template <> struct Num<float> {
    static __device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }
};
template <> struct Num<double> {
    static __device__ __forceinline__ double neg_inf() { return __longlong_as_double(0xfff0000000000000ull); }
};

// ---- what a row needs to know ------------------------------------------------------------------------
template <typename T>
struct Row {
    using A = decltype(to_opmath(T()));             // float for float/half/bfloat16, double for double
    long long row, n;
    long long visible;                               // elements j < visible may be finite (causal cut)
    const T* mask;                                   // this row of the additive mask, or nullptr
    long long mask_stride;                           // between its elements
    A scale;

    // x_j = S_j * scale + mask_j for a visible j
    __device__ __forceinline__ A logit(T s, long long j) const {
        A x = to_opmath(s) * scale;
        if (mask) x += to_opmath(mask[j * mask_stride]);
        return x;
    }
};

template <typename T>
__device__ __forceinline__ Row<T> row_of(long long row, long long n, long long L, bool causal, const T* mask,
                                         long long mb, long long ml, long long ms, double scale) {
    using A = typename Row<T>::A;
    Row<T> r;
    r.row = row;
    r.n = n;
    const long long i = row % L;
    r.visible = causal ? (i + 1 < n ? i + 1 : n) : n;
    r.mask = mask ? mask + (row / L) * mb + i * ml : nullptr;
    r.mask_stride = ms;
    r.scale = A(scale);
    return r;
}

// ---- forward ------------------------------------------------------------------------------------------
template <typename T, int V>
__device__ __forceinline__ void forward_row(const Row<T>& r, const T* __restrict__ s, T* __restrict__ y,
                                            typename Row<T>::A* lse_out, unsigned long long key,
                                            unsigned threshold, bool dropout, typename Row<T>::A keep_scale, int lane) {
    using A = typename Row<T>::A;
    using Vt = Vec<T, V>;
    const Vt* sv = reinterpret_cast<const Vt*>(s + r.row * r.n);
    Vt* yv = reinterpret_cast<Vt*>(y + r.row * r.n);
    const long long nv = r.n / V;
    const A ninf = Num<A>::neg_inf();
    // pass 1: this lane's online (max m, sum d of exp(x - m)), visible elements only
    A m = ninf, d = A(0);
    for (long long c = lane; c * V < r.visible; c += 32) {
        const Vt a = sv[c];
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const long long j = c * V + k;
            if (j >= r.visible) break;
            const A x = r.logit(a.v[k], j);
            if (x > m) {                         // new maximum: rescale the sum to it
                d = d * (m == ninf ? A(0) : m_exp(m - x)) + A(1);   // (d * 0 keeps a NaN d NaN)
                m = x;
            } else {
                d += x == ninf ? A(0) : m_exp(x - m);   // (a NaN x lands here and makes d NaN)
            }
        }
    }
    // merge the 32 pairs: butterfly shuffles, every lane ends with the row's (M, D)
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) {
        const A mo = __shfl_xor_sync(FULL_MASK, m, mask), dd = __shfl_xor_sync(FULL_MASK, d, mask);
        const A M = mo > m ? mo : m;
        d = d * (m == ninf ? A(0) : m_exp(m - M)) + dd * (mo == ninf ? A(0) : m_exp(mo - M));
        m = M;
    }
    const A lse = m + m_log(d);                  // -inf for a row with nothing visible: P is NaN there
    if (lane == 0) lse_out[r.row] = lse;
    // pass 2: Y = exp(x - lse) * keep / (1 - p)
    for (long long c = lane; c < nv; c += 32) {
        const long long j0 = c * V;
        bool keep[V];
        if (dropout) rng::keep_flags<V>(key, (unsigned long long)(r.row * r.n + j0), threshold, keep);
        Vt a;
        if (j0 < r.visible) a = sv[c];
        Vt o;
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const long long j = j0 + k;
            A p = j < r.visible ? m_exp(r.logit(a.v[k], j) - lse) : A(0);
            if (dropout) p = keep[k] ? p * A(keep_scale) : A(0);
            o.v[k] = narrow<T>(p);
        }
        yv[c] = o;
    }
}

// ---- backward -----------------------------------------------------------------------------------------
template <typename T, int V>
__device__ __forceinline__ void backward_row(const Row<T>& r, const T* __restrict__ s,
                                             const typename Row<T>::A* __restrict__ lse_in,
                                             const T* __restrict__ g, T* __restrict__ ds, unsigned long long key,
                                             unsigned threshold, bool dropout, typename Row<T>::A keep_scale,
                                             int lane) {
    using A = typename Row<T>::A;
    using Vt = Vec<T, V>;
    const Vt* sv = reinterpret_cast<const Vt*>(s + r.row * r.n);
    const Vt* gv = reinterpret_cast<const Vt*>(g + r.row * r.n);
    Vt* dv = reinterpret_cast<Vt*>(ds + r.row * r.n);
    const long long nv = r.n / V;
    const A lse = lse_in[r.row];
    // P_j and G'_j of the vector c (only its visible elements are meaningful)
    auto load = [&](long long c, A (&p)[V], A (&gp)[V]) {
        const long long j0 = c * V;
        bool keep[V];
        if (dropout) rng::keep_flags<V>(key, (unsigned long long)(r.row * r.n + j0), threshold, keep);
        const Vt a = sv[c], b = gv[c];
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const bool in = j0 + k < r.visible;
            p[k] = in ? m_exp(r.logit(a.v[k], j0 + k) - lse) : A(0);
            const A gk = in ? to_opmath(b.v[k]) : A(0);
            gp[k] = dropout && !keep[k] ? A(0) : (dropout ? gk * A(keep_scale) : gk);
        }
    };
    // pass 1: sum_j P_j G'_j over the visible elements, then over the warp
    A acc = A(0);
    for (long long c = lane; c * V < r.visible; c += 32) {
        A p[V], gp[V];
        load(c, p, gp);
#pragma unroll
        for (int k = 0; k < V; ++k) acc += p[k] * gp[k];     // p = 0 past the cut
    }
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) acc += __shfl_xor_sync(FULL_MASK, acc, mask);
    // pass 2: dS = scale * P * (G' - acc); 0 past the causal cut without reading anything
    for (long long c = lane; c < nv; c += 32) {
        Vt o;
        if (c * V < r.visible) {
            A p[V], gp[V];
            load(c, p, gp);
#pragma unroll
            for (int k = 0; k < V; ++k)
                o.v[k] = narrow<T>(c * V + k < r.visible ? r.scale * p[k] * (gp[k] - acc) : A(0));
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) o.v[k] = narrow<T>(A(0));
        }
        dv[c] = o;
    }
}

// One warp per row; V = 16 / sizeof(T) when n and every pointer allow 16-byte vectors, else 1.
// The choice is the same for every warp of the grid, so the branch costs nothing.
template <typename T>
__device__ __forceinline__ bool vectorizable(long long n, const void* a, const void* b, const void* c = nullptr) {
    constexpr int V = 16 / sizeof(T);
    return n % V == 0 && is_aligned<16>(a) && is_aligned<16>(b) && is_aligned<16>(c);
}

}  // namespace asm_

// s, y: [rows, n] contiguous; lse: [rows]; mask: nullptr or an additive T mask read at
// (row / L) * mb + (row % L) * ml + j * ms; seed: one 64-bit word in device memory (read only when
// dropout). keep = Philox word >> 8 >= threshold; kept values are multiplied by keep_scale = 1 / (1 - p).
#define ATTENTION_SOFTMAX(T, A, SUF) MT_IF_##SUF(                                                               \
    extern "C" __global__ void attention_softmax_##SUF(                                                         \
            const T* __restrict__ s, T* __restrict__ y, A* __restrict__ lse, long long rows, long long n,       \
            long long L, double scale, bool causal, const T* __restrict__ mask, long long mb, long long ml,     \
            long long ms, const unsigned long long* __restrict__ seed, bool dropout, int threshold,             \
            double keep_scale) {                                                                                \
        const long long row = blockIdx.x * (long long)(blockDim.x / 32) + threadIdx.x / 32;                     \
        if (row >= rows) return;                     /* whole warps: the shuffles stay full */                  \
        const int lane = threadIdx.x & 31;                                                                      \
        const asm_::Row<T> r = asm_::row_of<T>(row, n, L, causal, mask, mb, ml, ms, scale);                     \
        const unsigned long long key = dropout ? *seed : 0ull;                                                  \
        constexpr int V = 16 / sizeof(T);                                                                       \
        if (asm_::vectorizable<T>(n, s, y))                                                                     \
            asm_::forward_row<T, V>(r, s, y, lse, key, (unsigned)threshold, dropout, keep_scale, lane);         \
        else                                                                                                    \
            asm_::forward_row<T, 1>(r, s, y, lse, key, (unsigned)threshold, dropout, keep_scale, lane);         \
    }                                                                                                           \
    extern "C" __global__ void attention_softmax_backward_##SUF(                                                \
            const T* __restrict__ s, const A* __restrict__ lse, const T* __restrict__ g, T* __restrict__ ds,    \
            long long rows, long long n, long long L, double scale, bool causal, const T* __restrict__ mask,    \
            long long mb, long long ml, long long ms, const unsigned long long* __restrict__ seed, bool dropout, \
            int threshold, double keep_scale) {                                                                 \
        const long long row = blockIdx.x * (long long)(blockDim.x / 32) + threadIdx.x / 32;                     \
        if (row >= rows) return;                                                                                \
        const int lane = threadIdx.x & 31;                                                                      \
        const asm_::Row<T> r = asm_::row_of<T>(row, n, L, causal, mask, mb, ml, ms, scale);                     \
        const unsigned long long key = dropout ? *seed : 0ull;                                                  \
        constexpr int V = 16 / sizeof(T);                                                                       \
        if (asm_::vectorizable<T>(n, s, g, ds))                                                                 \
            asm_::backward_row<T, V>(r, s, lse, g, ds, key, (unsigned)threshold, dropout, keep_scale, lane);    \
        else                                                                                                    \
            asm_::backward_row<T, 1>(r, s, lse, g, ds, key, (unsigned)threshold, dropout, keep_scale, lane);    \
    })

ATTENTION_SOFTMAX(float, float, f32)
ATTENTION_SOFTMAX(double, double, f64)
ATTENTION_SOFTMAX(__half, float, f16)
ATTENTION_SOFTMAX(__nv_bfloat16, float, bf16)
