// phase: 07
// 01_flash_fp32.cu - rung 1 of the attention ladder: FlashAttention in float32, forward and
// backward, on CUDA cores (no tensor cores yet).
//
//   O = softmax(Q K^T * scale + mask) V        Q [BH, L, D], K [BH, S, D], V [BH, S, D], O [BH, L, D]
//
// The decomposition writes the [L, S] score matrix to global memory and reads it back (twice, with
// softmax). FlashAttention (Dao et al. 2022, "FlashAttention: Fast and Memory-Efficient Exact
// Attention with IO-Awareness", arXiv:2205.14135; FlashAttention-2, Dao 2023, arXiv:2307.08691)
// never materialises it: a block owns a tile of query rows and walks over K/V in tiles held in
// shared memory, keeping for each row a running maximum m, a running sum l of exp(s - m) and an
// unnormalised output O. A new tile with scores s_j changes them as (the "online softmax"):
//
//     m' = max(m, max_j s_j)      alpha = exp(m - m')      p_j = exp(s_j - m')
//     l' = alpha l + sum_j p_j    O' = alpha O + sum_j p_j V_j
//
// and at the end O / l is the exact softmax-weighted sum. Memory: O(L) (the per-row m, l and the
// log-sum-exp m + log l saved for the backward), never O(L S).
//
// Exponentials are base 2 (exp2f is one MUFU instruction): scores are multiplied by
// scale * log2(e), so exp2(s2 - m2) = exp(s - m). The saved log-sum-exp is natural (as PyTorch's).
//
// Threads and data. Every kernel runs 256 threads as a 16 x 16 grid: ty = tid / 16, tx = tid % 16.
// A thread owns rows ty + 16 i and columns tx + 16 j of a tile (strided, not contiguous, so that
// the 16 threads of a half-warp touch 16 neighbouring shared-memory words: no bank conflicts).
// The 16 threads that share a ty are one half-warp: a row's max and sum are 4 __shfl_xor_sync
// steps (offsets 8, 4, 2, 1 never cross into the other half). Shared-memory rows are padded to
// D + 1 floats (and tile + 1), so that reading a column (16 rows at one offset) hits 16 banks.
// Rows past L or S are loaded as zeros and their scores set to -inf (p = 0): ragged lengths need
// no other care; nothing past L is stored.
//
// Kernels (D = 32, 64, 128 is a template parameter; entry names end in _d32/_d64/_d128):
//   flash_fwd_f32_dD       grid (BH, ceil(L / 64)): O and lse [BH, L]
//   flash_bwd_dot_f32_dD   one warp per row: delta = rowsum(dO * O) [BH, L] (FA2's D_i)
//   flash_bwd_dkdv_f32_dD  grid (BH, ceil(S / 64)): dK, dV of a key tile, walking query tiles
//   flash_bwd_dq_f32_dD    grid (BH, ceil(L / 64)): dQ of a query tile, walking key tiles
// Splitting dQ from dK/dV costs recomputing P twice, but every output element is written by one
// thread once: deterministic, no atomics (FA2 accumulates dQ with atomicAdd instead).
//
// Causal (PyTorch's is_causal: key j visible to query i iff j <= i, aligned top-left): tiles
// entirely above the diagonal are skipped, not just masked.

#define NEG_INF __int_as_float(0xff800000)
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

constexpr int THREADS = 256;

// Copy rows [row0, row0 + rows) of a [n, D] matrix into shared memory of row stride D + 1;
// rows >= n are zero-filled. Consecutive threads read consecutive floats (coalesced).
template <int D>
__device__ __forceinline__ void load_tile(float* dst, const float* src, long long row0, int rows,
                                          long long n) {
    for (int idx = threadIdx.x; idx < rows * D; idx += THREADS) {
        const int r = idx / D, c = idx % D;
        const long long g = row0 + r;
        dst[r * (D + 1) + c] = g < n ? src[g * D + c] : 0.0f;
    }
}

__device__ __forceinline__ float half_warp_max(float v) {
    for (int o = 8; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float half_warp_sum(float v) {
    for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// ---- forward --------------------------------------------------------------------------------------
// Tiles: 64 query rows x 64 keys; a thread holds 4 x 4 scores and 4 x D/16 outputs.
// Shared: Q [64][D+1], K or V [64][D+1] (one buffer: K is read, then V), P [64][65].
constexpr int FBQ = 64, FBK = 64;

template <int D>
__device__ void flash_fwd(const float* __restrict__ Q, const float* __restrict__ K,
                          const float* __restrict__ V, float* __restrict__ O, float* __restrict__ lse,
                          long long L, long long S, float scale, bool causal) {
    constexpr int DP = D + 1, PP = FBK + 1, C = D / 16;
    extern __shared__ float smem[];
    float* Qs = smem;                  // [FBQ][DP]
    float* KVs = Qs + FBQ * DP;        // [FBK][DP]
    float* Ps = KVs + FBK * DP;        // [FBQ][PP]
    const long long bh = blockIdx.x;
    const long long q0 = (long long)blockIdx.y * FBQ;
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    Q += bh * L * D; K += bh * S * D; V += bh * S * D; O += bh * L * D; lse += bh * L;
    const float scale2 = scale * LOG2E;

    float m[4], l[4], acc[4][C];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        m[i] = NEG_INF; l[i] = 0.0f;
#pragma unroll
        for (int c = 0; c < C; ++c) acc[i][c] = 0.0f;
    }
    load_tile<D>(Qs, Q, q0, FBQ, L);
    // causal: keys past the tile's last query (q0 + FBQ - 1) are masked for every row of the tile
    const long long kv_end = causal ? min(S, q0 + FBQ) : S;
    for (long long k0 = 0; k0 < kv_end; k0 += FBK) {
        load_tile<D>(KVs, K, k0, FBK, S);
        __syncthreads();                                   // Qs (first pass) and K are in place
        float s[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) s[i][j] = 0.0f;
        for (int d = 0; d < D; ++d) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = Qs[(ty + 16 * i) * DP + d];
#pragma unroll
            for (int j = 0; j < 4; ++j) b[j] = KVs[(tx + 16 * j) * DP + d];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) s[i][j] = fmaf(a[i], b[j], s[i][j]);
        }
        __syncthreads();                                   // everyone is done reading K
        load_tile<D>(KVs, V, k0, FBK, S);                  // V replaces K in the same buffer
        // >>> exercise 07.7: the online-softmax update of one K/V tile
        // hint: for each of your 4 rows i: scores of masked keys (k >= S, or causal and k > q) become -inf, the others s * scale2
        // hint: m_new = max(m, the tile's row max: half_warp_max); alpha = exp2f(m - m_new), with 0 subtracted while m_new is -inf
        // hint: p = exp2f(s - m_new) into Ps; l = l * alpha + the row's sum of p (half_warp_sum); m = m_new; acc *= alpha
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const long long q = q0 + ty + 16 * i;
            float mx = NEG_INF;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const long long k = k0 + tx + 16 * j;
                const bool keep = k < S && !(causal && k > q);
                s[i][j] = keep ? s[i][j] * scale2 : NEG_INF;
                mx = fmaxf(mx, s[i][j]);
            }
            const float m_new = fmaxf(m[i], half_warp_max(mx));
            // a row with every key masked so far has m_new = -inf: subtract 0 instead, so that
            // exp2(-inf - -inf) = NaN never appears (its p are all exp2(-inf) = 0)
            const float m_use = m_new == NEG_INF ? 0.0f : m_new;
            const float alpha = exp2f(m[i] - m_use);       // 0 on the first tile (m = -inf)
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float p = exp2f(s[i][j] - m_use);
                Ps[(ty + 16 * i) * PP + tx + 16 * j] = p;
                sum += p;
            }
            l[i] = l[i] * alpha + half_warp_sum(sum);
            m[i] = m_new;
#pragma unroll
            for (int c = 0; c < C; ++c) acc[i][c] *= alpha;
        }
        // <<< exercise
        __syncthreads();                                   // V and P are in place
        for (int k = 0; k < FBK; ++k) {
            float v[C];
#pragma unroll
            for (int c = 0; c < C; ++c) v[c] = KVs[k * DP + tx + 16 * c];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float p = Ps[(ty + 16 * i) * PP + k];
#pragma unroll
                for (int c = 0; c < C; ++c) acc[i][c] = fmaf(p, v[c], acc[i][c]);
            }
        }
        __syncthreads();                                   // V and P are read: the next tile may load
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const long long q = q0 + ty + 16 * i;
        if (q >= L) continue;
        const float inv = l[i] > 0.0f ? 1.0f / l[i] : 0.0f;   // l = 0 only when S = 0: O = 0 as PyTorch
#pragma unroll
        for (int c = 0; c < C; ++c) O[q * D + tx + 16 * c] = acc[i][c] * inv;
        if (tx == 0) lse[q] = l[i] > 0.0f ? (m[i] + log2f(l[i])) * LN2 : NEG_INF;
    }
}

// ---- backward -------------------------------------------------------------------------------------
// delta_i = sum_d dO[i, d] O[i, d]: one warp per row, D / 32 elements per lane.
template <int D>
__device__ void flash_bwd_dot(const float* __restrict__ dO, const float* __restrict__ O,
                              float* __restrict__ delta, long long rows) {
    const long long row = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;                               // whole warps leave together
    float t = 0.0f;
#pragma unroll
    for (int c = lane; c < D; c += 32) t = fmaf(dO[row * D + c], O[row * D + c], t);
    for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
    if (lane == 0) delta[row] = t;
}

// Scores of the backward: with p = exp(s * scale - lse_q) (the forward's softmax, recomputed) and
// dp = dO_q . V_k, the softmax gradient is ds = p (dp - delta_q) (FA2, eq. in Sec. 3.1.2). Masked
// entries (q >= L, k >= S, causal k > q) get p = ds = 0.
__device__ __forceinline__ void grad_scores(float s, float dp, float lse2, float delta, float scale2,
                                            bool keep, float& p, float& ds) {
    p = keep ? exp2f(s * scale2 - lse2) : 0.0f;
    ds = p * (dp - delta);
}

// dK, dV of 64 keys: walk query tiles of 32. Per tile the thread computes the transposed scores
// of keys ty + 16 i (i < 4) and queries tx + 16 j (j < 2), then
//     dV[k] += sum_q P[q, k] dO[q]        dK[k] += scale * sum_q dS[q, k] Q[q]
// for its keys ty + 16 i and columns tx + 16 c.
// Shared: K, V [64][D+1], Q, dO [32][D+1], P^T, dS^T [64][33], lse2, delta [32].
constexpr int KBK = 64, KBQ = 32;

template <int D>
__device__ void flash_bwd_dkdv(const float* __restrict__ Q, const float* __restrict__ K,
                               const float* __restrict__ V, const float* __restrict__ dO,
                               const float* __restrict__ lse, const float* __restrict__ delta,
                               float* __restrict__ dK, float* __restrict__ dV,
                               long long L, long long S, float scale, bool causal) {
    constexpr int DP = D + 1, PP = KBQ + 1, C = D / 16;
    extern __shared__ float smem[];
    float* Ks = smem;                  // [KBK][DP]
    float* Vs = Ks + KBK * DP;         // [KBK][DP]
    float* Qs = Vs + KBK * DP;         // [KBQ][DP]
    float* dOs = Qs + KBQ * DP;        // [KBQ][DP]
    float* Pt = dOs + KBQ * DP;        // [KBK][PP]
    float* dSt = Pt + KBK * PP;        // [KBK][PP]
    float* lse2s = dSt + KBK * PP;     // [KBQ]
    float* deltas = lse2s + KBQ;       // [KBQ]
    const long long bh = blockIdx.x;
    const long long k0 = (long long)blockIdx.y * KBK;
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    Q += bh * L * D; K += bh * S * D; V += bh * S * D; dO += bh * L * D;
    lse += bh * L; delta += bh * L; dK += bh * S * D; dV += bh * S * D;
    const float scale2 = scale * LOG2E;

    float dk[4][C], dv[4][C];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int c = 0; c < C; ++c) dk[i][c] = dv[i][c] = 0.0f;
    load_tile<D>(Ks, K, k0, KBK, S);
    load_tile<D>(Vs, V, k0, KBK, S);
    // causal: queries before k0 see none of these keys; start at the query tile holding k0
    const long long q_begin = causal ? (k0 / KBQ) * KBQ : 0;
    for (long long q0 = q_begin; q0 < L; q0 += KBQ) {
        load_tile<D>(Qs, Q, q0, KBQ, L);
        load_tile<D>(dOs, dO, q0, KBQ, L);
        if (threadIdx.x < KBQ) {
            const long long q = q0 + threadIdx.x;
            lse2s[threadIdx.x] = q < L ? lse[q] * LOG2E : 0.0f;
            deltas[threadIdx.x] = q < L ? delta[q] : 0.0f;
        }
        __syncthreads();                                   // K, V (first pass), Q, dO, lse, delta in place
        float s[4][2], dp[4][2];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j) s[i][j] = dp[i][j] = 0.0f;
        for (int d = 0; d < D; ++d) {
            float kk[4], vv[4], qq[2], gg[2];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                kk[i] = Ks[(ty + 16 * i) * DP + d];
                vv[i] = Vs[(ty + 16 * i) * DP + d];
            }
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                qq[j] = Qs[(tx + 16 * j) * DP + d];
                gg[j] = dOs[(tx + 16 * j) * DP + d];
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) {
                    s[i][j] = fmaf(kk[i], qq[j], s[i][j]);
                    dp[i][j] = fmaf(vv[i], gg[j], dp[i][j]);
                }
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const long long k = k0 + ty + 16 * i;
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const int jq = tx + 16 * j;
                const long long q = q0 + jq;
                const bool keep = q < L && k < S && !(causal && k > q);
                float p, ds;
                grad_scores(s[i][j], dp[i][j], lse2s[jq], deltas[jq], scale2, keep, p, ds);
                Pt[(ty + 16 * i) * PP + jq] = p;
                dSt[(ty + 16 * i) * PP + jq] = ds;
            }
        }
        __syncthreads();                                   // P^T and dS^T in place
        for (int q = 0; q < KBQ; ++q) {
            float g[C], x[C];
#pragma unroll
            for (int c = 0; c < C; ++c) {
                g[c] = dOs[q * DP + tx + 16 * c];
                x[c] = Qs[q * DP + tx + 16 * c];
            }
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float p = Pt[(ty + 16 * i) * PP + q], ds = dSt[(ty + 16 * i) * PP + q];
#pragma unroll
                for (int c = 0; c < C; ++c) {
                    dv[i][c] = fmaf(p, g[c], dv[i][c]);
                    dk[i][c] = fmaf(ds, x[c], dk[i][c]);
                }
            }
        }
        __syncthreads();                                   // Q, dO, P^T, dS^T read: next tile may load
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const long long k = k0 + ty + 16 * i;
        if (k >= S) continue;
#pragma unroll
        for (int c = 0; c < C; ++c) {
            dK[k * D + tx + 16 * c] = dk[i][c] * scale;
            dV[k * D + tx + 16 * c] = dv[i][c];
        }
    }
}

// dQ of 64 queries: walk key tiles of 32. The thread computes scores of queries ty + 16 i (i < 4)
// and keys tx + 16 j (j < 2), then dQ[q] += scale * sum_k dS[q, k] K[k] for its queries and columns
// tx + 16 c. Shared: Q, dO [64][D+1], K, V [32][D+1], dS [64][33].
constexpr int QBQ = 64, QBK = 32;

template <int D>
__device__ void flash_bwd_dq(const float* __restrict__ Q, const float* __restrict__ K,
                             const float* __restrict__ V, const float* __restrict__ dO,
                             const float* __restrict__ lse, const float* __restrict__ delta,
                             float* __restrict__ dQ, long long L, long long S, float scale, bool causal) {
    constexpr int DP = D + 1, PP = QBK + 1, C = D / 16;
    extern __shared__ float smem[];
    float* Qs = smem;                  // [QBQ][DP]
    float* dOs = Qs + QBQ * DP;        // [QBQ][DP]
    float* Ks = dOs + QBQ * DP;        // [QBK][DP]
    float* Vs = Ks + QBK * DP;         // [QBK][DP]
    float* dSs = Vs + QBK * DP;        // [QBQ][PP]
    const long long bh = blockIdx.x;
    const long long q0 = (long long)blockIdx.y * QBQ;
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    Q += bh * L * D; K += bh * S * D; V += bh * S * D; dO += bh * L * D;
    lse += bh * L; delta += bh * L; dQ += bh * L * D;
    const float scale2 = scale * LOG2E;

    float lse2[4], dl[4], acc[4][C];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const long long q = q0 + ty + 16 * i;
        lse2[i] = q < L ? lse[q] * LOG2E : 0.0f;
        dl[i] = q < L ? delta[q] : 0.0f;
#pragma unroll
        for (int c = 0; c < C; ++c) acc[i][c] = 0.0f;
    }
    load_tile<D>(Qs, Q, q0, QBQ, L);
    load_tile<D>(dOs, dO, q0, QBQ, L);
    const long long kv_end = causal ? min(S, q0 + QBQ) : S;
    for (long long k0 = 0; k0 < kv_end; k0 += QBK) {
        load_tile<D>(Ks, K, k0, QBK, S);
        load_tile<D>(Vs, V, k0, QBK, S);
        __syncthreads();                                   // Q, dO (first pass), K, V in place
        float s[4][2], dp[4][2];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j) s[i][j] = dp[i][j] = 0.0f;
        for (int d = 0; d < D; ++d) {
            float qq[4], gg[4], kk[2], vv[2];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                qq[i] = Qs[(ty + 16 * i) * DP + d];
                gg[i] = dOs[(ty + 16 * i) * DP + d];
            }
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                kk[j] = Ks[(tx + 16 * j) * DP + d];
                vv[j] = Vs[(tx + 16 * j) * DP + d];
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) {
                    s[i][j] = fmaf(qq[i], kk[j], s[i][j]);
                    dp[i][j] = fmaf(gg[i], vv[j], dp[i][j]);
                }
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const long long q = q0 + ty + 16 * i;
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const long long k = k0 + tx + 16 * j;
                const bool keep = q < L && k < S && !(causal && k > q);
                float p, ds;
                grad_scores(s[i][j], dp[i][j], lse2[i], dl[i], scale2, keep, p, ds);
                dSs[(ty + 16 * i) * PP + tx + 16 * j] = ds;
            }
        }
        __syncthreads();                                   // dS in place
        for (int k = 0; k < QBK; ++k) {
            float kk[C];
#pragma unroll
            for (int c = 0; c < C; ++c) kk[c] = Ks[k * DP + tx + 16 * c];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float ds = dSs[(ty + 16 * i) * PP + k];
#pragma unroll
                for (int c = 0; c < C; ++c) acc[i][c] = fmaf(ds, kk[c], acc[i][c]);
            }
        }
        __syncthreads();                                   // K, V, dS read: next tile may load
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const long long q = q0 + ty + 16 * i;
        if (q >= L) continue;
#pragma unroll
        for (int c = 0; c < C; ++c) dQ[q * D + tx + 16 * c] = acc[i][c] * scale;
    }
}

// ---- entry points ---------------------------------------------------------------------------------
#define FLASH_ENTRIES(D)                                                                                 \
    extern "C" __global__ void __launch_bounds__(THREADS) flash_fwd_f32_d##D(                           \
        const float* Q, const float* K, const float* V, float* O, float* lse, long long L, long long S,  \
        float scale, bool causal) {                                                                      \
        flash_fwd<D>(Q, K, V, O, lse, L, S, scale, causal);                                              \
    }                                                                                                    \
    extern "C" __global__ void flash_bwd_dot_f32_d##D(const float* dO, const float* O, float* delta,     \
                                                     long long rows) {                                   \
        flash_bwd_dot<D>(dO, O, delta, rows);                                                            \
    }                                                                                                    \
    extern "C" __global__ void __launch_bounds__(THREADS) flash_bwd_dkdv_f32_d##D(                      \
        const float* Q, const float* K, const float* V, const float* dO, const float* lse,               \
        const float* delta, float* dK, float* dV, long long L, long long S, float scale, bool causal) {  \
        flash_bwd_dkdv<D>(Q, K, V, dO, lse, delta, dK, dV, L, S, scale, causal);                         \
    }                                                                                                    \
    extern "C" __global__ void __launch_bounds__(THREADS) flash_bwd_dq_f32_d##D(                        \
        const float* Q, const float* K, const float* V, const float* dO, const float* lse,               \
        const float* delta, float* dQ, long long L, long long S, float scale, bool causal) {             \
        flash_bwd_dq<D>(Q, K, V, dO, lse, delta, dQ, L, S, scale, causal);                               \
    }

FLASH_ENTRIES(32)
FLASH_ENTRIES(64)
FLASH_ENTRIES(128)
