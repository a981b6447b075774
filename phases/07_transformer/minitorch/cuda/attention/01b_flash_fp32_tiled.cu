// GENERATED from minitorch/cuda/attention/01b_flash_fp32_tiled.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 07
// 01b_flash_fp32_tiled.cu - rung 1b of the attention ladder: rung 1's float32 FlashAttention
// (01_flash_fp32.cu: same algorithm, same arguments, same outputs O, lse, dQ, dK, dV) rewritten the
// way a fast float32 GEMM is written. Forward first; the backward (end of the file) keeps rung 1's
// thread roles and takes the same steps 1 and 3 (float4 operands, cp.async copies). The
// two rungs' kernels mix on contiguous arrays: either backward takes either forward's O and lse
// (delta = rowsum(dO * O) is rung 1's flash_bwd_dot read through strides, flash_bwd_dot_tiled_f32_dD).
//
//   O = softmax(Q K^T * scale + causal mask) V     Q [BH, L, D], K, V [BH, S, D], O [BH, L, D]
//
// Why rung 1 is slow: its 4 x 4 micro-tile of S loads 8 scalars from shared memory per 16 FMAs,
// so load instructions take a third of the issue slots and the shared-memory pipe, not the FMA
// units, sets the pace. What changes here:
//   1. Register tiling (as in a GEMM): a thread computes an 8 x 4 micro-tile of S = Q K^T and an
//      8 x D/16 micro-tile of O += P V. Operands come as float4 along the summed dimension: per 4
//      steps of d a thread loads 4 float4 of K and 8 float4 of Q and does 128 FMAs (12 loads per
//      128 FMAs). The same for P V: per 4 keys, 8 float4 of P and 4 x D/64 float4 of V.
//   2. Bigger tiles: 128 query rows per block (Q resident in shared memory), 64 keys per K/V tile.
//   3. cp.async (16-byte copies from global straight into shared memory, zero-filled past L or S)
//      and a pipeline with one K and one V buffer (FlashAttention-2's): V of tile j is copied while
//      S = Q K_j^T is computed, K of tile j + 1 while O += P V_j is.
//   4. The online softmax of rung 1 with exp2f (scores scaled once by scale * log2 e), O rescaled
//      once per K/V tile, the row sums l kept per thread and added across the row only at the end,
//      and masks evaluated only on tiles that cross the diagonal or the end of S.
//   5. Causal: tiles above the diagonal are never visited; blocks of the last query rows (the most
//      tiles) are started first, so the short ones fill the tail of the grid.
//
// Threads and data. A block of 256 threads owns query rows q0 .. q0 + 127; ty = tid / 16 (0..15),
// tx = tid % 16. Thread (ty, tx) owns rows ty + 16 i (i < 8), keys tx + 16 j (j < 4) of each
// score tile, and output columns 4 tx + 64 g + e (e < 4, g < D / 64; D = 32: 2 tx + e, e < 2).
// The 16 threads of a row are one half-warp: a row's max is 4 __shfl_xor_sync (offsets 8..1).
// Shared memory (floats): Q [128][D+4], K [64][D+4], V [64][D+4], P [128][80].
// Bank conflicts (float4 loads are served a quarter-warp, 8 lanes, at a time): the 8 lanes of a
// quarter-warp share ty, so Q and P loads are one broadcast address; their 8 K rows tx + 16 j are
// D + 4 floats apart, i.e. 4 banks apart (D is a multiple of 32): 8 x 4 distinct banks; their V
// loads are 8 consecutive float4. P is stored as scalars: a warp's two ty rows are 80 = 16 (mod 32)
// banks apart and its 16 tx are consecutive: 32 distinct banks.
// Rows past L compute finite garbage from zeros and are never stored; keys past S get p = 0.
// Every row sees key 0 (S >= 1, and causal keeps k <= q), so after the first tile each row's
// running max m is finite and exp2f(m - m_new) never meets -inf - -inf.
//
// Dropout (attention's, p > 0): see struct Dropout (flash_tiled.cuh). Its keep bits take 1 KiB (forward) or
// 512 bytes (backward) of shared memory more, drawn once per tile by all 256 threads.
//
// Strides: unlike rung 1, every operand is read or written through its Heads (struct Heads, flash_tiled.cuh:
// [B, H, T, D] at any element strides sb, sh, st, rows contiguous and 16-byte aligned), so that the
// q, k, v views a GPT cuts from one GEMM output are read where they lie, and O, dQ, dK, dV land in
// the [B, T, H, D] memory the GPT transposes back to. Row bh = b H + h of the grid is one head.
//
// Entry points (D = 32, 64, 128), 256 threads, arguments as rung 1's kernels of the same name
// without _tiled, then the dropout's: seed (a 64-bit Philox key in device memory, read only when
// dropout), dropout (bool), threshold (int: keep iff Philox word >> 8 >= threshold), keep_scale
// (float: 1 / (1 - p), 1 without dropout); then H (heads per batch element) and, per [B, H, T, D]
// operand in argument order, its element strides sb, sh, st (long long). Q, K, V, O (and dO) must be
// 16-byte aligned and their strides multiples of 4 (the launcher falls back to rung 1, contiguous
// and without dropout):
//   flash_fwd_tiled_f32_dD        grid (BH, ceil(L / 128)), shared 4 * (256 (D + 4) + 128 * 80 + 256) bytes
//                                 strides of Q, K, V, O
//   flash_bwd_dot_tiled_f32_dD    (dO, O, delta, H, L, rows = BH L, strides of dO, O, dQ or null, strides
//                                 of dQ): one warp per row, delta = rowsum(dO * O) [BH, L] (and dQ = 0,
//                                 for rung 1c's one-pass backward); any grid of >= rows warps
//   flash_bwd_dkdv_tiled_f32_dD   grid (BH, ceil(S / 64)),  shared 4 * (256 (D + 4) + 128 * 80 + 128 + 128)
//                                 strides of Q, K, V, dO, dK, dV
//   flash_bwd_dq_tiled_f32_dD     grid (BH, ceil(L / 64)),  shared 4 * (256 (D + 4) + 64 * 80 + 128)
//                                 strides of Q, K, V, dO, dQ
#include "flash_tiled.cuh"    // THREADS, load_rows, Dropout, Heads, the entries' argument macros

namespace tiled {

constexpr int BQ = 128, BK = 64;     // query rows per block, keys per K/V tile
constexpr int RM = 8, RN = 4;        // a thread's rows (ty + 16 i) and keys (tx + 16 j)
constexpr int PS = BK + 16;          // row stride of P: 16 (mod 32) banks between a warp's two rows

// This thread's D / 16 columns of one row (see the header: 4 tx + 64 g + e, or 2 tx + e).
template <int D>
__device__ __forceinline__ void load_cols(float (&x)[D / 16], const float* row, int tx) {
    if constexpr (D >= 64) {
#pragma unroll
        for (int g = 0; g < D / 64; ++g) {
            const float4 t = *reinterpret_cast<const float4*>(row + 64 * g + 4 * tx);
            x[4 * g] = t.x; x[4 * g + 1] = t.y; x[4 * g + 2] = t.z; x[4 * g + 3] = t.w;
        }
    } else {
        const float2 t = *reinterpret_cast<const float2*>(row + 2 * tx);
        x[0] = t.x; x[1] = t.y;
    }
}

template <int D>
__device__ __forceinline__ void store_cols(float* row, const float (&x)[D / 16], float mul, int tx) {
    if constexpr (D >= 64) {
#pragma unroll
        for (int g = 0; g < D / 64; ++g)
            *reinterpret_cast<float4*>(row + 64 * g + 4 * tx) =
                make_float4(x[4 * g] * mul, x[4 * g + 1] * mul, x[4 * g + 2] * mul, x[4 * g + 3] * mul);
    } else {
        *reinterpret_cast<float2*>(row + 2 * tx) = make_float2(x[0] * mul, x[1] * mul);
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

template <int D>
__device__ void flash_fwd(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
                          float* __restrict__ O, float* __restrict__ lse, long long L, long long S, float scale,
                          bool causal, const Dropout& drop, long long H, const Heads& q_at, const Heads& k_at,
                          const Heads& v_at, const Heads& o_at) {
    constexpr int DP = D + 4, CN = D / 16;
    extern __shared__ float4 smem4[];                          // float4: 16-byte aligned
    float* Qs = reinterpret_cast<float*>(smem4);               // [BQ][DP]
    float* Ks = Qs + BQ * DP;                                  // [BK][DP]
    float* Vs = Ks + BK * DP;                                  // [BK][DP]
    float* Ps = Vs + BK * DP;                                  // [BQ][PS]
    unsigned* kbits = reinterpret_cast<unsigned*>(Ps + BQ * PS);   // [BQ][BK / 32] dropout's keep bits
    const long long bh = blockIdx.x;
    const long long q0 = (long long)(gridDim.y - 1 - blockIdx.y) * BQ;   // last rows (most tiles) first
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    Q += q_at.head(bh, H); K += k_at.head(bh, H); V += v_at.head(bh, H);   // O and lse: at the end (registers)
    const float scale2 = scale * LOG2E;
    // causal: keys past the tile's last query (q0 + BQ - 1) are masked for every row of the tile
    const long long kv_end = causal ? min(S, q0 + BQ) : S;

    load_rows<D, BQ>(Qs, Q, q0, L, q_at.st);
    load_rows<D, BK>(Ks, K, 0, S, k_at.st);
    tc::cp_async_commit();                                     // group: Q and K of tile 0

    float m[RM], l[RM], acc[RM][CN];
#pragma unroll
    for (int i = 0; i < RM; ++i) {
        m[i] = NEG_INF; l[i] = 0.0f;
#pragma unroll
        for (int c = 0; c < CN; ++c) acc[i][c] = 0.0f;
    }
    for (long long k0 = 0; k0 < kv_end; k0 += BK) {
        load_rows<D, BK>(Vs, V, k0, S, v_at.st);
        tc::cp_async_commit();                                 // group: V of this tile
        // dropout: thread t draws the keep bits of row t / 2, keys 32 (t % 2) .. + 31 of the tile
        // (while V copies; last tile's bits were read before its last __syncthreads)
        if (drop.on) kbits[threadIdx.x] = drop.bits<32>((bh * L + q0 + threadIdx.x / 2) * S + k0 + 32 * (threadIdx.x % 2));
        tc::cp_async_wait<1>();                                // this thread's copies of K (and Q) landed
        __syncthreads();                                       // ... and everyone's

        // S = Q K^T, 8 x 4 per thread, float4 steps along d
        float s[RM][RN];
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
            for (int j = 0; j < RN; ++j) s[i][j] = 0.0f;
#pragma unroll 1
        for (int d = 0; d < D; d += 4) {
            float4 kf[RN];
#pragma unroll
            for (int j = 0; j < RN; ++j) kf[j] = *reinterpret_cast<const float4*>(Ks + (tx + 16 * j) * DP + d);
#pragma unroll
            for (int i = 0; i < RM; ++i) {
                const float4 qf = *reinterpret_cast<const float4*>(Qs + (ty + 16 * i) * DP + d);
#pragma unroll
                for (int j = 0; j < RN; ++j) {
                    s[i][j] = fmaf(qf.x, kf[j].x, s[i][j]);
                    s[i][j] = fmaf(qf.y, kf[j].y, s[i][j]);
                    s[i][j] = fmaf(qf.z, kf[j].z, s[i][j]);
                    s[i][j] = fmaf(qf.w, kf[j].w, s[i][j]);
                }
            }
        }

        // online softmax (base 2), P into shared memory, O rescaled once for the tile; l sums the
        // probabilities before dropout (the softmax's), P V takes them dropped: P * keep / (1 - p)
        // a mask is needed only where the tile passes the end of S or crosses the diagonal
        // (in tile coordinates, 32-bit: key tx + 16 j is masked if >= s_left, or causal and past
        // row ty + 16 i by more than diag = q0 - k0, clamped to a range where it changes nothing)
        const bool edge = k0 + BK > S || (causal && k0 + BK - 1 > q0);
        const int s_left = (int)min(S - k0, (long long)BK);
        const int diag = (int)max(min(q0 - k0, (long long)BK), (long long)-BQ);
#pragma unroll
        for (int i = 0; i < RM; ++i) {
            float mx = NEG_INF;
#pragma unroll
            for (int j = 0; j < RN; ++j) {
                const int k = tx + 16 * j, over = k - ty - 16 * i;
                s[i][j] = edge && (k >= s_left || (causal && over > diag)) ? NEG_INF : s[i][j] * scale2;
                mx = fmaxf(mx, s[i][j]);
            }
            const float m_new = fmaxf(m[i], half_warp_max(mx));   // finite: see the header
            const float alpha = exp2f(m[i] - m_new);               // 0 on the first tile (m = -inf)
            float sum = 0.0f;
            // keys tx + 16 j: bit tx + 16 (j % 2) of the row's word j / 2
            const unsigned kw0 = drop.on ? kbits[(ty + 16 * i) * 2] : ~0u, kw1 = drop.on ? kbits[(ty + 16 * i) * 2 + 1] : ~0u;
#pragma unroll
            for (int j = 0; j < RN; ++j) {
                const float p = exp2f(s[i][j] - m_new);
                const unsigned bit = ((j < 2 ? kw0 : kw1) >> (tx + 16 * (j % 2))) & 1u;
                Ps[(ty + 16 * i) * PS + tx + 16 * j] = bit ? p * drop.scale : 0.0f;
                sum += p;
            }
            l[i] = l[i] * alpha + sum;                 // this thread's keys only: summed over the row at the end
            m[i] = m_new;
#pragma unroll
            for (int c = 0; c < CN; ++c) acc[i][c] *= alpha;
        }
        tc::cp_async_wait<0>();                                // this thread's copies of V landed
        __syncthreads();                                       // everyone's V and P are in; K is no longer read
        if (k0 + BK < kv_end) load_rows<D, BK>(Ks, K, k0 + BK, S, k_at.st);   // K of the next tile, behind P V
        tc::cp_async_commit();                                 // (maybe empty: the group count stays regular)

        // O += P V, 8 x D/16 per thread, float4 steps along the keys
#pragma unroll 1
        for (int k = 0; k < BK; k += 4) {
            float v[4][CN];
#pragma unroll
            for (int e = 0; e < 4; ++e) load_cols<D>(v[e], Vs + (k + e) * DP, tx);
#pragma unroll
            for (int i = 0; i < RM; ++i) {
                const float4 p = *reinterpret_cast<const float4*>(Ps + (ty + 16 * i) * PS + k);
#pragma unroll
                for (int c = 0; c < CN; ++c) {
                    acc[i][c] = fmaf(p.x, v[0][c], acc[i][c]);
                    acc[i][c] = fmaf(p.y, v[1][c], acc[i][c]);
                    acc[i][c] = fmaf(p.z, v[2][c], acc[i][c]);
                    acc[i][c] = fmaf(p.w, v[3][c], acc[i][c]);
                }
            }
        }
        __syncthreads();                                       // P and V read: the next tile may overwrite them
    }
    tc::cp_async_wait<0>();                                    // S = 0: the loop never ran; nothing left in flight

    // the row sums over the half-warp (every lane shuffles, before any lane skips a row)
#pragma unroll
    for (int i = 0; i < RM; ++i) l[i] = half_warp_sum(l[i]);
    O += o_at.head(bh, H); lse += bh * L;
#pragma unroll
    for (int i = 0; i < RM; ++i) {
        const long long r = q0 + ty + 16 * i;
        if (r >= L) continue;
        const float inv = l[i] > 0.0f ? 1.0f / l[i] : 0.0f;   // l = 0 only when S = 0: O = 0 as PyTorch
        store_cols<D>(O + r * o_at.st, acc[i], inv, tx);
        if (tx == 0) lse[r] = l[i] > 0.0f ? (m[i] + log2f(l[i])) * LN2 : NEG_INF;
    }
}


// ---- backward -------------------------------------------------------------------------------------
// Rung 1's three kernels (delta, then dK/dV per key tile, dQ per query tile: FlashAttention-2's backward without
// atomics) with rung 1's thread roles, the walked tiles twice as long (64: 4 x 4 score micro-tiles
// instead of 4 x 2), register-tiled the same way as the forward: tiles padded to D + 4 floats and
// read as float4 along d (scores) or along the walked dimension (P, dS), output columns
// 4 tx + 64 g + e. Per step: cp.async copies, then a wait and a __syncthreads() (no overlap).
// With p = exp2(s * scale2 - lse2) (the forward's softmax) and dp = dO_q . V_k, ds = p (dp - delta_q);
// with dropout (struct Dropout), P^T Z feeds dV and ds = p (dp Z - delta_q).
constexpr int KBK = 64, KBQ = 64;    // dK/dV: keys per block, query rows per step
constexpr int QBQ = 64, QBK = 64;    // dQ: query rows per block, keys per step
constexpr int NJ = 4;                // a thread's walked rows per step: tx + 16 j, j < NJ (= KBQ / 16 = QBK / 16)
constexpr int GS = 64 + 16;          // row stride of P^T, dS^T, dS: 16 (mod 32) banks between ty rows

__device__ __forceinline__ float dot4(float4 a, float4 b, float acc) {
    return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, fmaf(a.x, b.x, acc))));
}

// A 4 x NJ tile of scores: x[i][j] = A[ty + 16 i] . B[tx + 16 j] (rows of two [.][D + 4] tiles). A's
// rows are one broadcast per quarter-warp, B's 8 rows 4 banks apart: no bank conflicts.
template <int D>
__device__ __forceinline__ void scores_4xn(float (&x)[4][NJ], const float* A, const float* B, int ty, int tx) {
    constexpr int DP = D + 4;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j) x[i][j] = 0.0f;
#pragma unroll 1
    for (int d = 0; d < D; d += 4) {
        float4 b[NJ];
#pragma unroll
        for (int j = 0; j < NJ; ++j) b[j] = *reinterpret_cast<const float4*>(B + (tx + 16 * j) * DP + d);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const float4 a = *reinterpret_cast<const float4*>(A + (ty + 16 * i) * DP + d);
#pragma unroll
            for (int j = 0; j < NJ; ++j) x[i][j] = dot4(a, b[j], x[i][j]);
        }
    }
}

// acc[i][c] += sum_n W[ty + 16 i][n] X[n][col c] over n < N (W of row stride GS, X of row stride
// D + 4): float4 of W along n (one broadcast per quarter-warp), then X's rows one at a time.
template <int D, int N>
__device__ __forceinline__ void accumulate(float (&acc)[4][D / 16], const float* W, const float* X, int ty, int tx) {
    constexpr int DP = D + 4, CN = D / 16;
#pragma unroll 1
    for (int n = 0; n < N; n += 4) {
        float4 w[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) w[i] = *reinterpret_cast<const float4*>(W + (ty + 16 * i) * GS + n);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            float x[CN];
            load_cols<D>(x, X + (n + e) * DP, tx);
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float a = e == 0 ? w[i].x : e == 1 ? w[i].y : e == 2 ? w[i].z : w[i].w;
#pragma unroll
                for (int c = 0; c < CN; ++c) acc[i][c] = fmaf(a, x[c], acc[i][c]);
            }
        }
    }
}

// dK, dV of keys k0 .. k0 + 63: walk query tiles of 64. Thread: keys ty + 16 i (i < 4), queries
// tx + 16 j (j < 4) of the transposed scores; dK, dV rows ty + 16 i, its D / 16 columns.
// Shared (floats): K, V, Q, dO [64][D+4], P^T, dS^T [64][80], lse2, delta [64].
template <int D>
__device__ void flash_bwd_dkdv(const float* __restrict__ Q, const float* __restrict__ K,
                               const float* __restrict__ V, const float* __restrict__ dO,
                               const float* __restrict__ lse, const float* __restrict__ delta,
                               float* __restrict__ dK, float* __restrict__ dV,
                               long long L, long long S, float scale, bool causal, const Dropout& drop,
                               long long H, const Heads& q_at, const Heads& k_at, const Heads& v_at, const Heads& do_at,
                               const Heads& dk_at, const Heads& dv_at) {
    constexpr int DP = D + 4, CN = D / 16;
    extern __shared__ float4 smem4[];
    float* Ks = reinterpret_cast<float*>(smem4);   // [KBK][DP]
    float* Vs = Ks + KBK * DP;                     // [KBK][DP]
    float* Qs = Vs + KBK * DP;                     // [KBQ][DP]
    float* dOs = Qs + KBQ * DP;                    // [KBQ][DP]
    float* Pt = dOs + KBQ * DP;                    // [KBK][GS]
    float* dSt = Pt + KBK * GS;                    // [KBK][GS]
    float* lse2s = dSt + KBK * GS;                 // [KBQ]
    float* deltas = lse2s + KBQ;                   // [KBQ]
    unsigned short* kbits = reinterpret_cast<unsigned short*>(deltas + KBQ);   // [KBQ][KBK / 16] keep bits
    const long long bh = blockIdx.x;
    const long long k0 = (long long)blockIdx.y * KBK;
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    Q += q_at.head(bh, H); K += k_at.head(bh, H); V += v_at.head(bh, H); dO += do_at.head(bh, H);
    lse += bh * L; delta += bh * L; dK += dk_at.head(bh, H); dV += dv_at.head(bh, H);
    const float scale2 = scale * LOG2E;

    float dk[4][CN], dv[4][CN];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int c = 0; c < CN; ++c) dk[i][c] = dv[i][c] = 0.0f;
    load_rows<D, KBK>(Ks, K, k0, S, k_at.st);
    load_rows<D, KBK>(Vs, V, k0, S, v_at.st);
    // causal: queries before k0 see none of these keys; start at the query tile holding k0
    const long long q_begin = causal ? (k0 / KBQ) * KBQ : 0;
    for (long long q0 = q_begin; q0 < L; q0 += KBQ) {
        load_rows<D, KBQ>(Qs, Q, q0, L, q_at.st);
        load_rows<D, KBQ>(dOs, dO, q0, L, do_at.st);
        tc::cp_async_commit();
        if (threadIdx.x < KBQ) {
            const long long r = q0 + threadIdx.x;
            lse2s[threadIdx.x] = r < L ? lse[r] * LOG2E : 0.0f;
            deltas[threadIdx.x] = r < L ? delta[r] : 0.0f;
        }
        // dropout: thread t draws the keep bits of query t / 4, keys 16 (t % 4) .. + 15 of the tiles
        if (drop.on) kbits[threadIdx.x] = drop.bits<16>((bh * L + q0 + threadIdx.x / 4) * S + k0 + 16 * (threadIdx.x % 4));
        tc::cp_async_wait<0>();
        __syncthreads();                                   // K, V (first pass), Q, dO, lse, delta in place
        float s[4][NJ], dp[4][NJ];
        scores_4xn<D>(s, Ks, Qs, ty, tx);                    // S^T = K Q^T
        scores_4xn<D>(dp, Vs, dOs, ty, tx);                  // dP^T = V dO^T
        // masks in tile coordinates (32-bit, as the forward's): key ki, query jq
        const int q_left = (int)min(L - q0, (long long)KBQ), k_left = (int)min(S - k0, (long long)KBK);
        const int diag = (int)max(min(q0 - k0, (long long)KBK), (long long)-KBQ);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int ki = ty + 16 * i;
#pragma unroll
            for (int j = 0; j < NJ; ++j) {
                const int jq = tx + 16 * j;
                const bool keep = jq < q_left && ki < k_left && !(causal && ki - jq > diag);
                const float p = keep ? exp2f(s[i][j] * scale2 - lse2s[jq]) : 0.0f;
                // Z of (query jq, key ty + 16 i): bit ty of the query's 16-bit piece i
                const float z = drop.on && !((kbits[jq * 4 + i] >> ty) & 1u) ? 0.0f : drop.scale;
                Pt[(ty + 16 * i) * GS + jq] = p * z;
                dSt[(ty + 16 * i) * GS + jq] = p * (dp[i][j] * z - deltas[jq]);
            }
        }
        __syncthreads();                                   // P^T and dS^T in place
        accumulate<D, KBQ>(dv, Pt, dOs, ty, tx);             // dV += P^T dO
        accumulate<D, KBQ>(dk, dSt, Qs, ty, tx);             // dK += dS^T Q
        __syncthreads();                                   // Q, dO, P^T, dS^T read: next tile may load
    }
    tc::cp_async_commit();                                 // L <= q_begin: K and V were never committed
    tc::cp_async_wait<0>();                                // nothing left in flight at exit
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const long long r = k0 + ty + 16 * i;
        if (r >= S) continue;
        store_cols<D>(dK + r * dk_at.st, dk[i], scale, tx);
        store_cols<D>(dV + r * dv_at.st, dv[i], 1.0f, tx);
    }
}

// dQ of queries q0 .. q0 + 63: walk key tiles of 64. Thread: queries ty + 16 i (i < 4), keys
// tx + 16 j (j < 4); dQ rows ty + 16 i, its D / 16 columns. Shared: Q, dO, K, V [64][D+4], dS [64][80].
template <int D>
__device__ void flash_bwd_dq(const float* __restrict__ Q, const float* __restrict__ K,
                             const float* __restrict__ V, const float* __restrict__ dO,
                             const float* __restrict__ lse, const float* __restrict__ delta,
                             float* __restrict__ dQ, long long L, long long S, float scale, bool causal,
                             const Dropout& drop, long long H, const Heads& q_at, const Heads& k_at, const Heads& v_at,
                             const Heads& do_at, const Heads& dq_at) {
    constexpr int DP = D + 4, CN = D / 16;
    extern __shared__ float4 smem4[];
    float* Qs = reinterpret_cast<float*>(smem4);   // [QBQ][DP]
    float* dOs = Qs + QBQ * DP;                    // [QBQ][DP]
    float* Ks = dOs + QBQ * DP;                    // [QBK][DP]
    float* Vs = Ks + QBK * DP;                     // [QBK][DP]
    float* dSs = Vs + QBK * DP;                    // [QBQ][GS]
    unsigned short* kbits = reinterpret_cast<unsigned short*>(dSs + QBQ * GS);   // [QBQ][QBK / 16] keep bits
    const long long bh = blockIdx.x;
    const long long q0 = (long long)(gridDim.y - 1 - blockIdx.y) * QBQ;   // causal: long rows first
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    Q += q_at.head(bh, H); K += k_at.head(bh, H); V += v_at.head(bh, H); dO += do_at.head(bh, H);
    lse += bh * L; delta += bh * L; dQ += dq_at.head(bh, H);
    const float scale2 = scale * LOG2E;

    float lse2[4], dl[4], acc[4][CN];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const long long r = q0 + ty + 16 * i;
        lse2[i] = r < L ? lse[r] * LOG2E : 0.0f;
        dl[i] = r < L ? delta[r] : 0.0f;
#pragma unroll
        for (int c = 0; c < CN; ++c) acc[i][c] = 0.0f;
    }
    load_rows<D, QBQ>(Qs, Q, q0, L, q_at.st);
    load_rows<D, QBQ>(dOs, dO, q0, L, do_at.st);
    const long long kv_end = causal ? min(S, q0 + QBQ) : S;
    for (long long k0 = 0; k0 < kv_end; k0 += QBK) {
        load_rows<D, QBK>(Ks, K, k0, S, k_at.st);
        load_rows<D, QBK>(Vs, V, k0, S, v_at.st);
        tc::cp_async_commit();
        // dropout: thread t draws the keep bits of query t / 4, keys 16 (t % 4) .. + 15 of the tiles
        if (drop.on) kbits[threadIdx.x] = drop.bits<16>((bh * L + q0 + threadIdx.x / 4) * S + k0 + 16 * (threadIdx.x % 4));
        tc::cp_async_wait<0>();
        __syncthreads();                                   // Q, dO (first pass), K, V in place
        float s[4][NJ], dp[4][NJ];
        scores_4xn<D>(s, Qs, Ks, ty, tx);                    // S = Q K^T
        scores_4xn<D>(dp, dOs, Vs, ty, tx);                  // dP = dO V^T
        // masks in tile coordinates (32-bit, as the forward's): query qi, key kj
        const int q_left = (int)min(L - q0, (long long)QBQ), k_left = (int)min(S - k0, (long long)QBK);
        const int diag = (int)max(min(q0 - k0, (long long)QBK), (long long)-QBQ);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int qi = ty + 16 * i;
#pragma unroll
            for (int j = 0; j < NJ; ++j) {
                const int kj = tx + 16 * j;
                const bool keep = qi < q_left && kj < k_left && !(causal && kj - qi > diag);
                const float p = keep ? exp2f(s[i][j] * scale2 - lse2[i]) : 0.0f;
                // Z of (query qi, key tx + 16 j): bit tx of the query's 16-bit piece j
                const float z = drop.on && !((kbits[qi * 4 + j] >> tx) & 1u) ? 0.0f : drop.scale;
                dSs[(ty + 16 * i) * GS + tx + 16 * j] = p * (dp[i][j] * z - dl[i]);
            }
        }
        __syncthreads();                                   // dS in place
        accumulate<D, QBK>(acc, dSs, Ks, ty, tx);            // dQ += dS K
        __syncthreads();                                   // K, V, dS read: next tile may load
    }
    tc::cp_async_commit();                                 // S = 0: Q and dO were never committed
    tc::cp_async_wait<0>();                                // nothing left in flight at exit
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const long long r = q0 + ty + 16 * i;
        if (r >= L) continue;
        store_cols<D>(dQ + r * dq_at.st, acc[i], scale, tx);
    }
}

// delta = rowsum(dO * O) of each row bh L + t (FA2's D_i): rung 1's flash_bwd_dot (01_flash_fp32.cu)
// reading dO and O through their Heads. One warp per row: lane c reads columns c, c + 32, ... of
// both rows (coalesced), a warp shuffle sums them. Where dQ is given (not null), the row of dQ is
// zeroed too: rung 1c's one-pass backward, launched next, adds into it.
template <int D>
__device__ void flash_bwd_dot(const float* __restrict__ dO, const float* __restrict__ O,
                              float* __restrict__ delta, long long H, long long L, long long rows,
                              const Heads& do_at, const Heads& o_at, float* __restrict__ dQ, const Heads& dq_at) {
    const long long row = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;                               // whole warps leave together
    const long long bh = row / L, t = row % L;
    dO += do_at.head(bh, H) + t * do_at.st;
    O += o_at.head(bh, H) + t * o_at.st;
    float acc = 0.0f;
#pragma unroll
    for (int c = lane; c < D; c += 32) acc = fmaf(dO[c], O[c], acc);
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) delta[row] = acc;
    if (dQ) {
        dQ += dq_at.head(bh, H) + t * dq_at.st;
#pragma unroll
        for (int c = lane; c < D; c += 32) dQ[c] = 0.0f;
    }
}

}  // namespace tiled

// D <= 64: two blocks per SM (registers capped at 128; shared memory 76 / 108 KiB a block);
// D = 128: one (about 240 registers, 172 KiB). The entries' macros: flash_tiled.cuh, and here the
// backward's first kernel, delta = rowsum(dO O).
#define FLASH_TILED_BWD_ENTRIES(D, MIN_BLOCKS)                                                          \
    extern "C" __global__ void flash_bwd_dot_tiled_f32_d##D(                                             \
        const float* dO, const float* O, float* delta, long long H, long long L, long long rows,         \
        HEADS_ARGS(dout), HEADS_ARGS(o), float* dQ, HEADS_ARGS(dq)) {                                    \
        tiled::flash_bwd_dot<D>(dO, O, delta, H, L, rows, HEADS(dout), HEADS(o), dQ, HEADS(dq));         \
    }                                                                                                    \
    FLASH_BWD_ENTRIES(tiled, tiled, D, MIN_BLOCKS, MIN_BLOCKS)

FLASH_FWD_ENTRY(tiled, tiled, 32, 2)
FLASH_FWD_ENTRY(tiled, tiled, 64, 2)
FLASH_FWD_ENTRY(tiled, tiled, 128, 1)
FLASH_TILED_BWD_ENTRIES(32, 2)
FLASH_TILED_BWD_ENTRIES(64, 2)
FLASH_TILED_BWD_ENTRIES(128, 1)
