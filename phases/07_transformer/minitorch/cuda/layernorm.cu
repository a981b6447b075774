// GENERATED from minitorch/cuda/layernorm.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 07
// layernorm.cu - layer normalization over the last n elements of each row, and its fused backward.
//
// x is a contiguous [rows, n] array (the Tensor layer flattens normalized_shape into n); per row
//   y = (x - mean) * rstd * gamma + beta,   rstd = 1 / sqrt(var + eps),   var biased (sum / n).
// Ba, Kiros & Hinton, "Layer Normalization", arXiv:1607.06450 (2016).
//
// Threads and data:
//   layer_norm_forward_{warp,block}_VxK   one TEAM of threads per row: a warp when the row fits
//       in 32 threads' registers (blocks of 128 threads hold 4 rows; the row's reduction is then 5
//       shuffles with no __syncthreads), else the whole block (grid = rows), reduced through
//       shared memory (block_reduce). Lane l of a team holds the row's 16-byte vectors l, l + team,
//       ..., l + (K-1) * team (consecutive lanes, consecutive addresses: coalesced), or single
//       elements (V = 1) when the rows are not 16-byte aligned (n not a multiple of the vector
//       width, or an offset pointer). All K loads are issued at once and the row is read once.
//       Each thread keeps Welford's running (count, mean, M2) over its elements (Welford, "Note on
//       a method for calculating corrected sums of squares and products", Technometrics 4(3),
//       1962): no cancellation as in E[x^2] - E[x]^2; the team merges its threads' triples with
//       Chan, Golub & LeVeque's formula (1979; as batchnorm.cu). Lane 0 stores mean and rstd (float,
//       double for float64 input) for backward, and every lane writes its part of y from registers.
//   layer_norm_forward_block   rows too long for registers: the same team of a block, but each
//       thread streams its vectors (UNROLL loads in flight), then re-reads the row (now in L1/L2)
//       to write y.
//   layer_norm_backward_{warp,block}_VxK   the fused backward, ONE pass over x and dy: with
//       g = dy * gamma and xhat = (x - mean) * rstd,
//           dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),   dgamma = sum_rows dy * xhat,
//           dbeta = sum_rows dy.
//       A team (a warp, or a whole block for long rows) takes rows r, r + teams, ... (teams in the
//       grid); lane l of a team always owns the same K 16-byte vectors of a row, l, l + team, ...,
//       l + (K-1) * team (V elements each, V = 16 / sizeof(T); V = 1 when the rows are not 16-byte
//       aligned), so the whole row sits in registers: x and dy are read from memory once, the team
//       reduces the pair (sum g, sum g * xhat), and dx is written from the registers. Gamma is
//       loaded into registers once per lane, and each lane keeps running sums of dy * xhat and dy
//       for its own columns over all the rows its team visits. At the end the warps of a block add
//       their sums in turn in shared memory (no atomics) and the block writes ONE partial row
//       partial[blockIdx.x, 0..n): the grid is about one block per SM, so the partials are a few
//       hundred rows whatever the number of rows. Python picks K (and the team) so that
//       V * K * team >= n, with at most 32 float (16 double) elements per thread: a block then
//       holds rows of up to about 8192 elements (the register file is 64K registers per SM, and a
//       thread needs about 6 per element: x, dy, gamma and the two running sums); longer rows
//       take the fallback below.
//   layer_norm_backward_dx                    fallback for rows too long for registers: one block
//       per row, pass 1 sums g and g * xhat, pass 2 re-reads the row and writes dx; then
//   layer_norm_backward_params_partial        column partial sums for the fallback: a 2-D grid,
//       blockIdx.x picks 256 consecutive COLUMNS (one per thread: a warp reads 128 contiguous
//       bytes of a row), blockIdx.y a chunk of `chunk` rows, summed in row order into
//       partial[blockIdx.y, column].
//   layer_norm_backward_params_final          stage 2 of dgamma/dbeta for both paths: blocks of
//       32 x 32 threads, 32 columns per block; thread (c, p) adds partial rows p, p + 32, ... of
//       column c (32 independent loads in flight per column, a warp reads 128 contiguous bytes),
//       then thread (c, 0) adds the 32 sums in order and rounds once. Same bits every run.
// float16/bfloat16 are loaded as float, computed in float, rounded once on store; float64 in double.
// A row's element count is kept as a float in Welford's triple: exact up to 2^24 elements per row.
#include "common.cuh"

namespace ln {

template <typename T> struct Acc { typedef float type; };      // the type a row is computed in
template <> struct Acc<double> { typedef double type; };

__device__ __forceinline__ float rsqrt_(float x) { return rsqrtf(x); }
__device__ __forceinline__ double rsqrt_(double x) { return rsqrt(x); }

template <typename A>
struct Welford {
    A n, mean, m2;
};

template <typename A>
__device__ __forceinline__ Welford<A> shfl_down(Welford<A> v, int d) {    // found by ADL in warp_reduce
    return {::shfl_down(v.n, d), ::shfl_down(v.mean, d), ::shfl_down(v.m2, d)};
}

// Welford's update with one more value v
template <typename A>
__device__ __forceinline__ void push(Welford<A>& w, A v) {
    // >>> exercise 07.3: Welford's update in the LayerNorm kernel
    // hint: count one more; move the mean towards v by (v - old mean) / n
    // hint: M2 grows by (v - old mean) * (v - new mean): no sum of squares, so no cancellation
    w.n += A(1);
    const A d = v - w.mean;
    w.mean += d / w.n;
    w.m2 += d * (v - w.mean);
    // <<< exercise
}

// Chan et al.'s merge of two partial statistics (either may be empty)
template <typename A>
__device__ __forceinline__ Welford<A> merge(Welford<A> a, Welford<A> b) {
    if (b.n == A(0)) return a;
    if (a.n == A(0)) return b;
    const A n = a.n + b.n, d = b.mean - a.mean;
    return {n, a.mean + d * (b.n / n), a.m2 + b.m2 + d * d * (a.n * (b.n / n))};
}

template <typename A>
struct Sums {
    A g, gx;             // sum(g), sum(g * xhat)
};

template <typename A>
__device__ __forceinline__ Sums<A> shfl_down(Sums<A> v, int d) {
    return {::shfl_down(v.g, d), ::shfl_down(v.gx, d)};
}

// The team of a row: a warp (BLOCK false) or the whole block (BLOCK true).
template <bool BLOCK>
struct Team {
    __device__ static long long row() {
        return BLOCK ? (long long)blockIdx.x : blockIdx.x * (long long)(blockDim.x >> 5) + (threadIdx.x >> 5);
    }
    __device__ static int lane() { return BLOCK ? (int)threadIdx.x : (int)(threadIdx.x & 31); }
    __device__ static int size() { return BLOCK ? (int)blockDim.x : 32; }

    // the team's merged value, valid in lane 0
    template <class P, class Merge>
    __device__ static P reduce(P v, P empty, Merge f) { return BLOCK ? block_reduce(v, empty, f) : warp_reduce(v, f); }

    // lane 0's a and b, in every lane. The block's shared pair may be reused by a team that loops
    // over rows: the __syncthreads in the next row's reduce() comes after every thread read it.
    template <typename A>
    __device__ static void share(A& a, A& b) {
        if (BLOCK) {
            __shared__ A s[2];
            if (threadIdx.x == 0) { s[0] = a; s[1] = b; }
            __syncthreads();
            a = s[0];
            b = s[1];
        } else {
            a = __shfl_sync(FULL_MASK, a, 0);
            b = __shfl_sync(FULL_MASK, b, 0);
        }
    }
};

// element u of vector k of an optional per-column parameter (null: `absent`)
template <typename T, int V, typename A>
__device__ __forceinline__ A param(const T* p, long long k, int u, A absent) {
    return p == nullptr ? absent : A(to_opmath(p[k * V + u]));
}

// The streaming kernels (rows too long for registers): one block per row, V elements per load
// (16 / sizeof(T) when the row is aligned, else 1).
template <typename T, int V>
__device__ __forceinline__ void forward_row(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                            T* __restrict__ y, typename Acc<T>::type* __restrict__ mean,
                                            typename Acc<T>::type* __restrict__ rstd, long long rows, long long n,
                                            double eps) {
    typedef typename Acc<T>::type A;
    typedef Team<true> team;
    const long long r = team::row();
    if (r >= rows) return;                  // a whole warp (a row is one team): no shuffle is left waiting
    const int lane = team::lane(), lanes = team::size();
    const long long nv = n / V;
    const Vec<T, V>* xv = reinterpret_cast<const Vec<T, V>*>(x + r * n);
    Welford<A> st = {A(0), A(0), A(0)};
    scan(xv, nv, lane, lanes, [&](long long, Vec<T, V> v) {
#pragma unroll
        for (int u = 0; u < V; ++u) push(st, A(to_opmath(v.v[u])));
    });
    st = team::reduce(st, Welford<A>{A(0), A(0), A(0)}, [](Welford<A> p, Welford<A> q) { return merge(p, q); });
    A mu = st.mean, rs = rsqrt_(st.m2 / A(n) + A(eps));      // right in lane 0
    team::share(mu, rs);
    if (lane == 0) {
        mean[r] = mu;
        rstd[r] = rs;
    }
    Vec<T, V>* yv = reinterpret_cast<Vec<T, V>*>(y + r * n);
#pragma unroll 4
    for (long long k = lane; k < nv; k += lanes) {
        const Vec<T, V> v = xv[k];
        Vec<T, V> o;
#pragma unroll
        for (int u = 0; u < V; ++u) {
            const A xhat = (A(to_opmath(v.v[u])) - mu) * rs;
            o.v[u] = narrow<T>(xhat * param<T, V>(w, k, u, A(1)) + param<T, V>(b, k, u, A(0)));
        }
        yv[k] = o;
    }
}

// The forward with the row in registers (the backward's layout below: lane l of a team of `lanes`
// threads holds vectors l + i * lanes, i < K): every load of the row is issued at once, the row is
// read from memory once, and y is written from the registers.
template <typename T, int V, int K, bool BLOCK>
__device__ __forceinline__ void forward_fused(const T* __restrict__ x, const T* __restrict__ w,
                                              const T* __restrict__ b, T* __restrict__ y,
                                              typename Acc<T>::type* __restrict__ mean,
                                              typename Acc<T>::type* __restrict__ rstd, long long rows, long long n,
                                              double eps) {
    typedef typename Acc<T>::type A;
    typedef Team<BLOCK> team;
    const long long r = team::row();
    if (r >= rows) return;                  // a whole team: no shuffle or barrier is left waiting
    const int lane = team::lane(), lanes = team::size();
    const long long nv = n / V;
    const Vec<T, V>* xv = reinterpret_cast<const Vec<T, V>*>(x + r * n);
    Vec<T, V> xs[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
        const long long k = lane + (long long)i * lanes;
        if (k < nv) xs[i] = xv[k];
    }
    Welford<A> st = {A(0), A(0), A(0)};
#pragma unroll
    for (int i = 0; i < K; ++i) {
        if (lane + (long long)i * lanes < nv) {
#pragma unroll
            for (int u = 0; u < V; ++u) push(st, A(to_opmath(xs[i].v[u])));
        }
    }
    st = team::reduce(st, Welford<A>{A(0), A(0), A(0)}, [](Welford<A> p, Welford<A> q) { return merge(p, q); });
    A mu = st.mean, rs = rsqrt_(st.m2 / A(n) + A(eps));      // right in lane 0
    team::share(mu, rs);
    if (lane == 0) {
        mean[r] = mu;
        rstd[r] = rs;
    }
    Vec<T, V>* yv = reinterpret_cast<Vec<T, V>*>(y + r * n);
#pragma unroll
    for (int i = 0; i < K; ++i) {
        const long long k = lane + (long long)i * lanes;
        if (k < nv) {
            Vec<T, V> o;
#pragma unroll
            for (int u = 0; u < V; ++u) {
                const A xhat = (A(to_opmath(xs[i].v[u])) - mu) * rs;
                o.v[u] = narrow<T>(xhat * param<T, V>(w, k, u, A(1)) + param<T, V>(b, k, u, A(0)));
            }
            yv[k] = o;
        }
    }
}

template <typename T, int V>
__device__ __forceinline__ void backward_row(const T* __restrict__ dy, const T* __restrict__ x,
                                             const typename Acc<T>::type* __restrict__ mean,
                                             const typename Acc<T>::type* __restrict__ rstd, const T* __restrict__ w,
                                             T* __restrict__ dx, long long rows, long long n) {
    typedef typename Acc<T>::type A;
    typedef Team<true> team;
    const long long r = team::row();
    if (r >= rows) return;
    const int lane = team::lane(), lanes = team::size();
    const long long nv = n / V;
    const Vec<T, V>* xv = reinterpret_cast<const Vec<T, V>*>(x + r * n);
    const Vec<T, V>* gv = reinterpret_cast<const Vec<T, V>*>(dy + r * n);
    const A mu = mean[r], rs = rstd[r];
    Sums<A> s = {A(0), A(0)};
#pragma unroll 4
    for (long long k = lane; k < nv; k += lanes) {
        const Vec<T, V> xs = xv[k], gs = gv[k];
#pragma unroll
        for (int u = 0; u < V; ++u) {
            // g = dy * gamma rounded once (common.cuh's mul_rn), here and wherever dx uses it: a plain
            // product may be fused into the next subtraction (an FMA, the exact product), and a row of
            // equal values (n = 1, where dx is exactly 0) would get rstd times the rounding error
            const A g = mul_rn(A(to_opmath(gs.v[u])), param<T, V>(w, k, u, A(1)));
            s.g += g;
            s.gx += g * ((A(to_opmath(xs.v[u])) - mu) * rs);
        }
    }
    s = team::reduce(s, Sums<A>{A(0), A(0)}, [](Sums<A> p, Sums<A> q) { return Sums<A>{p.g + q.g, p.gx + q.gx}; });
    A mean_g = s.g / A(n), mean_gx = s.gx / A(n);            // right in lane 0
    team::share(mean_g, mean_gx);
    Vec<T, V>* dv = reinterpret_cast<Vec<T, V>*>(dx + r * n);
#pragma unroll 4
    for (long long k = lane; k < nv; k += lanes) {
        const Vec<T, V> xs = xv[k], gs = gv[k];
        Vec<T, V> o;
#pragma unroll
        for (int u = 0; u < V; ++u) {
            const A g = mul_rn(A(to_opmath(gs.v[u])), param<T, V>(w, k, u, A(1)));
            const A xhat = (A(to_opmath(xs.v[u])) - mu) * rs;
            o.v[u] = narrow<T>(rs * (g - mean_g - xhat * mean_gx));
        }
        dv[k] = o;
    }
}

// every pointer 16-byte aligned and n a multiple of the vector width: each row starts aligned too
template <int V, typename T>
__device__ __forceinline__ bool rows_vectorizable(long long n, const T* a, const T* b, const T* c, const T* d) {
    return n % V == 0 && is_aligned<16>(a) && is_aligned<16>(b) && is_aligned<16>(c) && is_aligned<16>(d);
}

template <typename T>
__device__ void forward(const T* x, const T* w, const T* b, T* y, typename Acc<T>::type* mean,
                        typename Acc<T>::type* rstd, long long rows, long long n, double eps) {
    constexpr int V = 16 / sizeof(T);
    if (rows_vectorizable<V>(n, x, w, b, y)) forward_row<T, V>(x, w, b, y, mean, rstd, rows, n, eps);
    else forward_row<T, 1>(x, w, b, y, mean, rstd, rows, n, eps);
}

template <typename T>
__device__ void backward(const T* dy, const T* x, const typename Acc<T>::type* mean,
                         const typename Acc<T>::type* rstd, const T* w, T* dx, long long rows, long long n) {
    constexpr int V = 16 / sizeof(T);
    if (rows_vectorizable<V>(n, dy, x, w, dx)) backward_row<T, V>(dy, x, mean, rstd, w, dx, rows, n);
    else backward_row<T, 1>(dy, x, mean, rstd, w, dx, rows, n);
}

// The block's partial dgamma/dbeta row when the block is one team: its threads' sums as they are.
template <int V, int K, typename A>
__device__ __forceinline__ void partials_of_team(const A (&acc_w)[K][V], const A (&acc_b)[K][V], int lane, int lanes,
                                                 long long nv, A* __restrict__ pw, A* __restrict__ pb) {
#pragma unroll
    for (int i = 0; i < K; ++i) {
        const long long k = lane + (long long)i * lanes;
        if (k < nv) {
#pragma unroll
            for (int u = 0; u < V; ++u) {
                pw[k * V + u] = acc_w[i][u];
                pb[k * V + u] = acc_b[i][u];
            }
        }
    }
}

// ... when its warps are teams: warp 0 stores its sums in shared memory, then warps 1, 2, ... add
// theirs in turn (a fixed order: the same bits every run); then the block writes the n sums,
// coalesced. Every thread of the block calls it (it holds __syncthreads).
template <int V, int K, typename A>
__device__ __forceinline__ void partials_of_warps(const A (&acc_w)[K][V], const A (&acc_b)[K][V], int lane, int warp,
                                                  int warps, long long nv, long long n, A* __restrict__ pw,
                                                  A* __restrict__ pb) {
    __shared__ A sw[32 * V * K], sb[32 * V * K];  // a warp team's row: n <= 32 * V * K
    for (int turn = 0; turn < warps; ++turn) {
        if (warp == turn) {
#pragma unroll
            for (int i = 0; i < K; ++i) {
                const int k = lane + i * 32;
                if (k < nv) {
#pragma unroll
                    for (int u = 0; u < V; ++u) {
                        sw[k * V + u] = turn == 0 ? acc_w[i][u] : sw[k * V + u] + acc_w[i][u];
                        sb[k * V + u] = turn == 0 ? acc_b[i][u] : sb[k * V + u] + acc_b[i][u];
                    }
                }
            }
        }
        __syncthreads();
    }
    for (int c = threadIdx.x; c < n; c += blockDim.x) {
        pw[c] = sw[c];
        pb[c] = sb[c];
    }
}

// The fused backward (one pass): a team of `lanes` threads per row, lane l owning vectors
// l + i * lanes (i < K) of V elements. part_w == nullptr: no weight, so no dgamma/dbeta.
template <typename T, int V, int K, bool BLOCK>
__device__ __forceinline__ void backward_fused(const T* __restrict__ dy, const T* __restrict__ x,
                                               const typename Acc<T>::type* __restrict__ mean,
                                               const typename Acc<T>::type* __restrict__ rstd,
                                               const T* __restrict__ w, T* __restrict__ dx,
                                               typename Acc<T>::type* __restrict__ part_w,
                                               typename Acc<T>::type* __restrict__ part_b, long long rows,
                                               long long n) {
    typedef typename Acc<T>::type A;
    typedef Team<BLOCK> team;
    const int lane = team::lane(), lanes = team::size();
    const int teams = BLOCK ? 1 : (int)(blockDim.x >> 5), t = BLOCK ? 0 : (int)(threadIdx.x >> 5);
    const long long nv = n / V;
    const bool affine = w != nullptr;
    Vec<T, V> gamma[K];                           // this lane's columns of the weight, stored type
    A acc_w[K][V], acc_b[K][V];                   // running sums of dy * xhat and dy, per column
#pragma unroll
    for (int i = 0; i < K; ++i) {
        const long long k = lane + (long long)i * lanes;
        if (affine && k < nv) gamma[i] = reinterpret_cast<const Vec<T, V>*>(w)[k];
#pragma unroll
        for (int u = 0; u < V; ++u) acc_w[i][u] = acc_b[i][u] = A(0);
    }
    // team t of block b takes rows b * teams + t, then a grid's worth of teams further
    for (long long r = blockIdx.x * (long long)teams + t; r < rows; r += (long long)gridDim.x * teams) {
        const Vec<T, V>* xv = reinterpret_cast<const Vec<T, V>*>(x + r * n);
        const Vec<T, V>* gv = reinterpret_cast<const Vec<T, V>*>(dy + r * n);
        Vec<T, V> xs[K], gs[K];
#pragma unroll
        for (int i = 0; i < K; ++i) {             // all 2K loads issued before any is used
            const long long k = lane + (long long)i * lanes;
            if (k < nv) {
                xs[i] = xv[k];
                gs[i] = gv[k];
            }
        }
        const A mu = mean[r], rs = rstd[r];
        Sums<A> s = {A(0), A(0)};
#pragma unroll
        for (int i = 0; i < K; ++i) {
            if (lane + (long long)i * lanes < nv) {
#pragma unroll
                for (int u = 0; u < V; ++u) {
                    const A d = A(to_opmath(gs[i].v[u])), xhat = (A(to_opmath(xs[i].v[u])) - mu) * rs;
                    const A g = affine ? mul_rn(d, A(to_opmath(gamma[i].v[u]))) : d;
                    s.g += g;
                    s.gx += g * xhat;
                    acc_w[i][u] += d * xhat;
                    acc_b[i][u] += d;
                }
            }
        }
        s = team::reduce(s, Sums<A>{A(0), A(0)}, [](Sums<A> p, Sums<A> q) { return Sums<A>{p.g + q.g, p.gx + q.gx}; });
        A mean_g = s.g / A(n), mean_gx = s.gx / A(n);           // right in lane 0
        team::share(mean_g, mean_gx);
        Vec<T, V>* dv = reinterpret_cast<Vec<T, V>*>(dx + r * n);
#pragma unroll
        for (int i = 0; i < K; ++i) {
            const long long k = lane + (long long)i * lanes;
            if (k < nv) {
                Vec<T, V> o;
#pragma unroll
                for (int u = 0; u < V; ++u) {
                    const A d = A(to_opmath(gs[i].v[u])), xhat = (A(to_opmath(xs[i].v[u])) - mu) * rs;
                    const A g = affine ? mul_rn(d, A(to_opmath(gamma[i].v[u]))) : d;
                    o.v[u] = narrow<T>(rs * (g - mean_g - xhat * mean_gx));
                }
                dv[k] = o;
            }
        }
    }
    if (part_w == nullptr) return;                // the same for every thread of the grid
    A* pw = part_w + blockIdx.x * n;
    A* pb = part_b + blockIdx.x * n;
    if constexpr (BLOCK) partials_of_team<V, K>(acc_w, acc_b, lane, lanes, nv, pw, pb);
    else partials_of_warps<V, K>(acc_w, acc_b, lane, t, teams, nv, n, pw, pb);
}

// the fallback's dgamma/dbeta partials: sums of one column over one chunk of rows
template <typename T>
__device__ void params_partial(const T* __restrict__ dy, const T* __restrict__ x,
                               const typename Acc<T>::type* __restrict__ mean,
                               const typename Acc<T>::type* __restrict__ rstd, typename Acc<T>::type* __restrict__ part_w,
                               typename Acc<T>::type* __restrict__ part_b, long long rows, long long n, long long chunk) {
    typedef typename Acc<T>::type A;
    const long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (j >= n) return;
    const long long r0 = blockIdx.y * chunk, r1 = min(rows, r0 + chunk);
    A sw = A(0), sb = A(0);
#pragma unroll 4
    for (long long r = r0; r < r1; ++r) {
        const A g = A(to_opmath(dy[r * n + j]));
        sw += g * ((A(to_opmath(x[r * n + j])) - mean[r]) * rstd[r]);
        sb += g;
    }
    part_w[blockIdx.y * n + j] = sw;
    part_b[blockIdx.y * n + j] = sb;
}

// stage 2: blocks of 32 x 32 threads; thread (c, p) adds partials p, p + 32, ... of column c, then
// thread (c, 0) adds the 32 sums in order and rounds once
template <typename T>
__device__ void params_final(const typename Acc<T>::type* __restrict__ part_w,
                             const typename Acc<T>::type* __restrict__ part_b, T* __restrict__ dw, T* __restrict__ db,
                             long long parts, long long n) {
    typedef typename Acc<T>::type A;
    __shared__ A sw[32][33], sb[32][33];          // 33: thread (c, 0) reads a column without bank conflicts
    const int c = threadIdx.x, p0 = threadIdx.y;
    const long long j = blockIdx.x * 32LL + c;
    A w = A(0), b = A(0);
    if (j < n) {
#pragma unroll 4
        for (long long p = p0; p < parts; p += 32) {
            w += part_w[p * n + j];
            b += part_b[p * n + j];
        }
    }
    sw[p0][c] = w;
    sb[p0][c] = b;
    __syncthreads();
    if (p0 == 0 && j < n) {
        w = A(0);
        b = A(0);
#pragma unroll
        for (int q = 0; q < 32; ++q) {
            w += sw[q][c];
            b += sb[q][c];
        }
        dw[j] = narrow<T>(w);
        if (db != nullptr) db[j] = narrow<T>(b);
    }
}

}  // namespace ln

// layer_norm_forward_block_f32: the streaming forward (one block per row) for rows too long for
// registers. w and b may be null (elementwise_affine=False, or bias=False); mean/rstd are float
// (double for f64).
#define LAYER_NORM_FORWARD_STREAMING(T, A, SUF) MT_IF_##SUF(                                            \
    extern "C" __global__ void layer_norm_forward_block_##SUF(const T* x, const T* w, const T* b, T* y,  \
                                                              A* mean, A* rstd, long long rows,          \
                                                              long long n, double eps) {                 \
        ln::forward<T>(x, w, b, y, mean, rstd, rows, n, eps);                                            \
    })

// layer_norm_backward_warp_4x6_f32: the fused backward, warp teams, V = 4 elements per vector, K = 6
// vectors per lane (rows of up to 32 * 4 * 6 = 768 floats). w null: no dgamma/dbeta (part_w null).
// layer_norm_forward_warp_4x6_f32 likewise, with the row in registers.
#define LAYER_NORM_FUSED(T, A, SUF, TEAM, BLOCK, V, K) MT_IF_##SUF(                                  \
    extern "C" __global__ void layer_norm_backward_##TEAM##_##V##x##K##_##SUF(                          \
        const T* dy, const T* x, const A* mean, const A* rstd, const T* w, T* dx, A* part_w, A* part_b, \
        long long rows, long long n) {                                                                   \
        ln::backward_fused<T, V, K, BLOCK>(dy, x, mean, rstd, w, dx, part_w, part_b, rows, n);          \
    }                                                                                                    \
    extern "C" __global__ void layer_norm_forward_##TEAM##_##V##x##K##_##SUF(                           \
        const T* x, const T* w, const T* b, T* y, A* mean, A* rstd, long long rows, long long n,         \
        double eps) {                                                                                    \
        ln::forward_fused<T, V, K, BLOCK>(x, w, b, y, mean, rstd, rows, n, eps);                         \
    })

// the warp kernels K = 1, 2, 3, 4, 6, 8 and the block kernels K = 8 of vector width V (Python's
// _fused_plan asks for exactly these and the ones below: at most 32 float or 16 double elements
// per thread)
#define LAYER_NORM_FUSED_K8(T, A, SUF, V)                                                            \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, V, 1)                                                   \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, V, 2)                                                   \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, V, 3)                                                   \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, V, 4)                                                   \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, V, 6)                                                   \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, V, 8)                                                   \
    LAYER_NORM_FUSED(T, A, SUF, block, true, V, 8)

// float16/bfloat16 vectors of 8: K = 1, 2, 3, 4 in warps, 4 in blocks
#define LAYER_NORM_FUSED_K4(T, A, SUF, V)                                                            \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, V, 1)                                                   \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, V, 2)                                                   \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, V, 3)                                                   \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, V, 4)                                                   \
    LAYER_NORM_FUSED(T, A, SUF, block, true, V, 4)

// single elements (V = 1: odd rows) in warps up to 16 per lane, and (float-computed types) 32
#define LAYER_NORM_FUSED_ONE_K16(T, A, SUF)                                                             \
    LAYER_NORM_FUSED_K8(T, A, SUF, 1)                                                                   \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, 1, 12)                                                     \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, 1, 16)
#define LAYER_NORM_FUSED_ONE_K32(T, A, SUF)                                                             \
    LAYER_NORM_FUSED_ONE_K16(T, A, SUF)                                                                 \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, 1, 24)                                                     \
    LAYER_NORM_FUSED(T, A, SUF, warp, false, 1, 32)

// the fallbacks for rows too long for registers (forward; dx, then the column partials), and stage 2
#define LAYER_NORM_KERNELS(T, A, SUF)                                                                   \
    LAYER_NORM_FORWARD_STREAMING(T, A, SUF)                                                             \
    MT_IF_##SUF(                                                                                        \
    extern "C" __global__ void layer_norm_backward_dx_##SUF(const T* dy, const T* x, const A* mean,     \
                                                            const A* rstd, const T* w, T* dx,          \
                                                            long long rows, long long n) {             \
        ln::backward<T>(dy, x, mean, rstd, w, dx, rows, n);                                            \
    }                                                                                                    \
    extern "C" __global__ void layer_norm_backward_params_partial_##SUF(const T* dy, const T* x,        \
                                                                        const A* mean, const A* rstd,   \
                                                                        A* part_w, A* part_b,           \
                                                                        long long rows, long long n,    \
                                                                        long long chunk) {              \
        ln::params_partial<T>(dy, x, mean, rstd, part_w, part_b, rows, n, chunk);                        \
    }                                                                                                    \
    extern "C" __global__ void layer_norm_backward_params_final_##SUF(const A* part_w, const A* part_b, \
                                                                      T* dw, T* db, long long parts,    \
                                                                      long long n) {                    \
        ln::params_final<T>(part_w, part_b, dw, db, parts, n);                                           \
    })

LAYER_NORM_KERNELS(float, float, f32)
LAYER_NORM_FUSED_K8(float, float, f32, 4)
LAYER_NORM_FUSED_ONE_K32(float, float, f32)
LAYER_NORM_KERNELS(double, double, f64)
LAYER_NORM_FUSED_K8(double, double, f64, 2)
LAYER_NORM_FUSED_ONE_K16(double, double, f64)
LAYER_NORM_KERNELS(__half, float, f16)
LAYER_NORM_FUSED_K4(__half, float, f16, 8)
LAYER_NORM_FUSED_ONE_K32(__half, float, f16)
LAYER_NORM_KERNELS(__nv_bfloat16, float, bf16)
LAYER_NORM_FUSED_K4(__nv_bfloat16, float, bf16, 8)
LAYER_NORM_FUSED_ONE_K32(__nv_bfloat16, float, bf16)
