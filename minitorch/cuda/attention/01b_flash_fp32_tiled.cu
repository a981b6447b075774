// phase: 07
// 01b_flash_fp32_tiled.cu - rung 1b of the attention ladder: rung 1's float32 FlashAttention
// forward (01_flash_fp32.cu, same algorithm, same arguments, same outputs O and lse) rewritten the
// way a fast float32 GEMM is written. The backward stays rung 1's: it needs only O and lse.
//
//   O = softmax(Q K^T * scale + causal mask) V     Q [BH, L, D], K, V [BH, S, D], O [BH, L, D]
//
// Why rung 1 is slow: per multiply-add it reads two shared-memory words (scalar loads), so the
// shared-memory pipe, not the FMA units, sets the pace. What changes here:
//   1. Register tiling (as in a GEMM): a thread computes an 8 x 4 micro-tile of S = Q K^T and an
//      8 x D/16 micro-tile of O += P V. Operands come as float4 along the summed dimension: per 4
//      steps of d a thread loads 4 float4 of K and 8 float4 of Q and does 128 FMAs (rung 1: 2 loads
//      per 16 FMAs, scalar). The same for P V: per 4 keys, 8 float4 of P and 4 x D/64 float4 of V.
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
// Entry points (D = 32, 64, 128): flash_fwd_tiled_f32_dD, grid (BH, ceil(L / 128)), 256 threads,
// dynamic shared memory 4 * ((128 + 2 * 64) * (D + 4) + 128 * 80) bytes; arguments as rung 1's
// flash_fwd_f32_dD. Q, K, V, O must be 16-byte aligned (the launcher falls back to rung 1).
#include "../gemm/mma.cuh"

#define NEG_INF __int_as_float(0xff800000)
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

namespace tiled {

constexpr int THREADS = 256;
constexpr int BQ = 128, BK = 64;     // query rows per block, keys per K/V tile
constexpr int RM = 8, RN = 4;        // a thread's rows (ty + 16 i) and keys (tx + 16 j)
constexpr int PS = BK + 16;          // row stride of P: 16 (mod 32) banks between a warp's two rows

// cp.async rows [r0, r0 + ROWS) of a [n, D] matrix into a tile of row stride D + 4 (zero past n).
// Consecutive threads copy consecutive 16-byte chunks of a row: coalesced reads, conflict-free writes.
template <int D, int ROWS>
__device__ __forceinline__ void load_rows(float* tile, const float* __restrict__ g, long long r0, long long n) {
    constexpr int CPR = D / 4;                                  // 16-byte chunks per row
    static_assert(ROWS * CPR % THREADS == 0, "every thread copies the same number of chunks");
#pragma unroll
    for (int c = threadIdx.x; c < ROWS * CPR; c += THREADS) {
        const int r = c / CPR, col = (c % CPR) * 4;
        const bool ok = r0 + r < n;
        tc::cp_async16(tc::smem_u32(tile + r * (D + 4) + col), ok ? g + (r0 + r) * D + col : g, ok ? 16 : 0);
    }
}

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
                          bool causal) {
    constexpr int DP = D + 4, CN = D / 16;
    extern __shared__ float4 smem4[];                          // float4: 16-byte aligned
    float* Qs = reinterpret_cast<float*>(smem4);               // [BQ][DP]
    float* Ks = Qs + BQ * DP;                                  // [BK][DP]
    float* Vs = Ks + BK * DP;                                  // [BK][DP]
    float* Ps = Vs + BK * DP;                                  // [BQ][PS]
    const long long bh = blockIdx.x;
    const long long q0 = (long long)(gridDim.y - 1 - blockIdx.y) * BQ;   // last rows (most tiles) first
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    Q += bh * L * D; K += bh * S * D; V += bh * S * D; O += bh * L * D; lse += bh * L;
    const float scale2 = scale * LOG2E;
    // causal: keys past the tile's last query (q0 + BQ - 1) are masked for every row of the tile
    const long long kv_end = causal ? min(S, q0 + BQ) : S;

    load_rows<D, BQ>(Qs, Q, q0, L);
    load_rows<D, BK>(Ks, K, 0, S);
    tc::cp_async_commit();                                     // group: Q and K of tile 0

    float m[RM], l[RM], acc[RM][CN];
#pragma unroll
    for (int i = 0; i < RM; ++i) {
        m[i] = NEG_INF; l[i] = 0.0f;
#pragma unroll
        for (int c = 0; c < CN; ++c) acc[i][c] = 0.0f;
    }
    for (long long k0 = 0; k0 < kv_end; k0 += BK) {
        load_rows<D, BK>(Vs, V, k0, S);
        tc::cp_async_commit();                                 // group: V of this tile
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

        // online softmax (base 2), P into shared memory, O rescaled once for the tile
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
#pragma unroll
            for (int j = 0; j < RN; ++j) {
                const float p = exp2f(s[i][j] - m_new);
                Ps[(ty + 16 * i) * PS + tx + 16 * j] = p;
                sum += p;
            }
            l[i] = l[i] * alpha + sum;                 // this thread's keys only: summed over the row at the end
            m[i] = m_new;
#pragma unroll
            for (int c = 0; c < CN; ++c) acc[i][c] *= alpha;
        }
        tc::cp_async_wait<0>();                                // this thread's copies of V landed
        __syncthreads();                                       // everyone's V and P are in; K is no longer read
        if (k0 + BK < kv_end) load_rows<D, BK>(Ks, K, k0 + BK, S);   // K of the next tile, behind P V
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
#pragma unroll
    for (int i = 0; i < RM; ++i) {
        const long long q = q0 + ty + 16 * i;
        if (q >= L) continue;
        const float inv = l[i] > 0.0f ? 1.0f / l[i] : 0.0f;   // l = 0 only when S = 0: O = 0 as PyTorch
        store_cols<D>(O + q * D, acc[i], inv, tx);
        if (tx == 0) lse[q] = l[i] > 0.0f ? (m[i] + log2f(l[i])) * LN2 : NEG_INF;
    }
}

}  // namespace tiled

// D <= 64: two blocks per SM (registers capped at 128; shared memory 76 / 108 KiB a block);
// D = 128: one (210 registers, 172 KiB)
#define FLASH_TILED_ENTRY(D, MIN_BLOCKS)                                                                 \
    extern "C" __global__ void __launch_bounds__(tiled::THREADS, MIN_BLOCKS) flash_fwd_tiled_f32_d##D(   \
        const float* Q, const float* K, const float* V, float* O, float* lse, long long L, long long S,  \
        float scale, bool causal) {                                                                      \
        tiled::flash_fwd<D>(Q, K, V, O, lse, L, S, scale, causal);                                       \
    }

FLASH_TILED_ENTRY(32, 2)
FLASH_TILED_ENTRY(64, 2)
FLASH_TILED_ENTRY(128, 1)
