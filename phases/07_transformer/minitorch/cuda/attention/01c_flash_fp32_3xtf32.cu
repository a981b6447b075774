// GENERATED from minitorch/cuda/attention/01c_flash_fp32_3xtf32.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 07
// 01c_flash_fp32_3xtf32.cu - rung 1c of the attention ladder: rung 1b's float32 FlashAttention forward
// (01b_flash_fp32_tiled.cu: same algorithm, arguments, grid, outputs O and lse, dropout, strides) with
// its two products, S = Q K^T and O += P V, on the tensor cores, at float32's accuracy.
//
// 3xTF32. A TF32 tensor-core mma (mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, the GEMM's rung
// 10) reads each float32 operand with 10 of its 23 mantissa bits: a product is off by ~2^-11 relative,
// a thousand times float32's 2^-24. Split each operand in two TF32 numbers instead:
//     x = big + small,   big = tf32(x),   small = tf32(x - big)
// (x - big is exact in float32; |small| <= 2^-11 |x|, and rounding it to TF32 leaves x - big - small
// <= 2^-22 |x|). Then
//     a b = big_a big_b + big_a small_b + small_a big_b + small_a small_b
// and each term's TF32 factors multiply exactly on the tensor cores (11 x 11 significant bits fit a
// float32) into float32 accumulators. The last term is at most 2^-22 |a b|, below the float32 rounding
// of the sum, so it is dropped: THREE mmas per product instead of one, float32-level results
// (per product ~2^-21 relative at worst, against FFMA's 2^-24 for the product and its rounding: the
// errors of a length-D dot product stay within a small factor of rung 1b's, as tests/test_flash_3xtf32.py
// checks, where one TF32 mma is ~100x off). The tensor cores do TF32 ~8x faster than the CUDA cores do
// float32 FFMA on an H100, so three mmas still beat FFMA. The idea is CUTLASS's: the
// OpMultiplyAddFastF32 math operator (cutlass/gemm/warp/mma_tensor_op_fast_f32.h) and its example
// 27_ampere_3xtf32_fast_accurate_tensorop_gemm, which PyTorch's float32 memory-efficient attention (xformers,
// CUTLASS) runs on sm_80+ even with TF32 off. TF32_TERMS=1 (an NVRTC option) keeps only big_a big_b:
// plain TF32, for the notebook's and the tests' comparison.
// Rounding: big and small with cvt.rna.tf32.f32 (to nearest, ties away; the low 13 bits zeroed, so
// x - big is computed from what the mma will see).
//
// Threads and data. A block of 256 threads = 8 warps owns query rows q0 .. q0 + 127 (as rung 1b);
// warp w owns rows 16 w .. 16 w + 15 of the block: one m16 tile of every product. In a warp,
// lane = 4 g + t (g = lane / 4, t = lane % 4: gemm/10_tf32_mma.cu's fragment layouts):
//   S = Q K^T over a tile of 64 keys: 8 mma tiles of 16 x 8 (keys 8 j .. 8 j + 7), 32 accumulators:
//     s[j][0] = S[g][8 j + 2 t], s[j][1] = S[g][8 j + 2 t + 1], s[j][2], s[j][3] the same of row g + 8.
//     A (Q, row major): a0 = Q[g][d + t], a1 = Q[g + 8][d + t], a2, a3 the same at d + t + 4;
//     B (K^T, "col"):   b0 = K[8 j + g][d + t], b1 = K[8 j + g][d + t + 4], d in steps of 8.
//   O += P V: P never leaves the registers. The S accumulators of key tile j are the A fragment of
//     k-step j if the 8 keys are taken in a permuted order (an mma sums over its k in any order, as
//     long as A and B agree: gemm/10's KPERM): slot t is key 8 j + 2 t, slot t + 4 key 8 j + 2 t + 1, so
//     a0 = s[j][0], a1 = s[j][2], a2 = s[j][1], a3 = s[j][3], and b0 = V[8 j + 2 t][8 n + g],
//     b1 = V[8 j + 2 t + 1][8 n + g] for output columns 8 n .. 8 n + 7 (n < D / 8; D / 2 accumulators).
//   A row's 64 scores of a tile lie in the 4 lanes of a group: its max and sum are 2 __shfl_xor_sync.
// Shared memory (floats): Q [128][D+4] as float32 (each warp splits its own rows' A fragments as it
// reads them), K and V [64][D+4] each twice: big and small. A thread splits the 16-byte chunks it
// copied itself, after its own cp.async wait and before the barrier that publishes them (as rung 10's
// CVT_SMEM), once per block rather than once per warp that reads them. Bank conflicts: none. Q and K
// reads: lane (g, t) at row g, column t: bank 4 g + t (+ const), 32 distinct (rows D + 4 = 4 mod 32
// apart); V reads: row 2 t, column g: bank 8 t + g (+ const), 32 distinct.
// The pipeline, masks (only on tiles that cross the diagonal or the end of S, decided per warp), the
// online softmax in base 2, causal tile skipping and last-rows-first order are rung 1b's; so are
// the dropout (keep bits drawn once per tile into shared memory by all 256 threads: row t / 2, keys
// 32 (t % 2) .. + 31, the same elements of the [BH L, S] scores as rung 1b and the fused softmax)
// and the strided operands (struct Heads). Rows past L compute finite garbage from zero rows of Q
// and are never stored; keys past S get p = 0; every row sees key 0 in the first tile, so its
// running max is finite from then on (exp2f(m - m_new) never meets -inf - -inf).
//
// Entry points (D = 32, 64, 128), 256 threads, the arguments of rung 1b's flash_fwd_tiled_f32_dD:
//   flash_fwd_3xtf32_f32_dD   grid (BH, ceil(L / 128)), shared 4 * (128 (D + 4) + 4 * 64 (D + 4) + 256) bytes
// Its O and lse are rung 1b's (O in the Heads given, lse natural log [BH, L]): rung 1b's backward
// takes them. Needs sm_80 (cp.async, TF32 mma).
#include "flash_tiled.cuh"    // THREADS, load_rows, Dropout, Heads, the entries' argument macros

#ifndef TF32_TERMS
#define TF32_TERMS 3
#endif

namespace x3 {

using tiled::THREADS;
constexpr int BQ = 128, BK = 64;     // query rows per block (16 per warp), keys per K/V tile
constexpr int NJ = BK / 8;           // mma tiles of S per warp (8 keys each)
static_assert(TF32_TERMS == 1 || TF32_TERMS == 3, "TF32_TERMS: 3 (3xTF32) or 1 (plain TF32)");

__device__ __forceinline__ unsigned to_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// x = big + small, both TF32 (as float32 bit patterns, low 13 bits zero).
__device__ __forceinline__ void split(float x, unsigned& big, unsigned& small) {
    big = to_tf32(x);
    small = to_tf32(x - __uint_as_float(big));
}

__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// d += a b as 3xTF32: the two small cross terms first, then big x big (small x small dropped).
__device__ __forceinline__ void mma3(float (&d)[4], const unsigned (&a_big)[4], const unsigned (&a_small)[4],
                                     const unsigned (&b_big)[2], const unsigned (&b_small)[2]) {
    if constexpr (TF32_TERMS == 3) {
        mma(d, a_small, b_big);
        mma(d, a_big, b_small);
    }
    mma(d, a_big, b_big);
}

// After this thread's cp.async copies of a ROWS-row tile landed: rewrite the chunks it copied
// (load_rows' mapping) as big, in place, and their small parts into `small` (same layout).
template <int D, int ROWS>
__device__ __forceinline__ void split_rows(float* big, float* small) {
    constexpr int CPR = D / 4;
#pragma unroll
    for (int c = threadIdx.x; c < ROWS * CPR; c += THREADS) {
        const int at = c / CPR * (D + 4) + c % CPR * 4;
        float4 x = *reinterpret_cast<const float4*>(big + at);
        unsigned b[4], s[4];
        split(x.x, b[0], s[0]); split(x.y, b[1], s[1]); split(x.z, b[2], s[2]); split(x.w, b[3], s[3]);
        *reinterpret_cast<float4*>(big + at) =
            make_float4(__uint_as_float(b[0]), __uint_as_float(b[1]), __uint_as_float(b[2]), __uint_as_float(b[3]));
        *reinterpret_cast<float4*>(small + at) =
            make_float4(__uint_as_float(s[0]), __uint_as_float(s[1]), __uint_as_float(s[2]), __uint_as_float(s[3]));
    }
}

template <int D>
__device__ void flash_fwd(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
                          float* __restrict__ O, float* __restrict__ lse, long long L, long long S, float scale,
                          bool causal, const tiled::Dropout& drop, long long H, const tiled::Heads& q_at,
                          const tiled::Heads& k_at, const tiled::Heads& v_at, const tiled::Heads& o_at) {
    constexpr int DP = D + 4, NO = D / 8;                      // NO: mma tiles of O per warp (8 columns each)
    extern __shared__ float4 smem4[];                          // float4: 16-byte aligned
    float* Qs = reinterpret_cast<float*>(smem4);               // [BQ][DP] float32
    float* Kb = Qs + BQ * DP;                                  // [BK][DP] big
    float* Ks = Kb + BK * DP;                                  // [BK][DP] small
    float* Vb = Ks + BK * DP;
    float* Vs = Vb + BK * DP;
    unsigned* kbits = reinterpret_cast<unsigned*>(Vs + BK * DP);   // [BQ][BK / 32] dropout's keep bits
    const long long bh = blockIdx.x;
    const long long q0 = (long long)(gridDim.y - 1 - blockIdx.y) * BQ;   // last rows (most tiles) first
    const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
    const int w0 = 16 * warp;                                  // the warp's first row in the block
    Q += q_at.head(bh, H); K += k_at.head(bh, H); V += v_at.head(bh, H);   // O and lse: at the end
    const float scale2 = scale * LOG2E;
    // causal: keys past the tile's last query (q0 + BQ - 1) are masked for every row of the tile
    const long long kv_end = causal ? min(S, q0 + BQ) : S;

    tiled::load_rows<D, BQ>(Qs, Q, q0, L, q_at.st);
    tiled::load_rows<D, BK>(Kb, K, 0, S, k_at.st);
    tc::cp_async_commit();                                     // group: Q and K of tile 0

    float m[2] = {NEG_INF, NEG_INF}, l[2] = {0.0f, 0.0f};      // rows g and g + 8 of the warp
    float o[NO][4];
#pragma unroll
    for (int n = 0; n < NO; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    const float* qa = Qs + (w0 + g) * DP + t;                  // A fragments: (g, t), + 8 rows, + 4 columns
    for (long long k0 = 0; k0 < kv_end; k0 += BK) {
        tiled::load_rows<D, BK>(Vb, V, k0, S, v_at.st);
        tc::cp_async_commit();                                 // group: V of this tile
        // dropout: thread T draws the keep bits of row T / 2, keys 32 (T % 2) .. + 31 of the tile
        // (while V copies; last tile's bits were read before its last __syncthreads)
        if (drop.on) kbits[threadIdx.x] = drop.bits<32>((bh * L + q0 + threadIdx.x / 2) * S + k0 + 32 * (threadIdx.x % 2));
        tc::cp_async_wait<1>();                                // this thread's copies of K (and Q) landed
        split_rows<D, BK>(Kb, Ks);                             // ... split by this thread
        __syncthreads();                                       // ... and everyone's

        // S = Q K^T: per 8 columns of d, Q's fragment split once, then 8 key tiles x 3 mmas
        float s[NJ][4];
#pragma unroll
        for (int j = 0; j < NJ; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll 1
        for (int d = 0; d < D; d += 8) {
            unsigned ab[4], as[4];
            split(qa[d], ab[0], as[0]);
            split(qa[8 * DP + d], ab[1], as[1]);
            split(qa[d + 4], ab[2], as[2]);
            split(qa[8 * DP + d + 4], ab[3], as[3]);
#pragma unroll
            for (int j = 0; j < NJ; ++j) {
                const int at = (8 * j + g) * DP + d + t;
                const unsigned bb[2] = {__float_as_uint(Kb[at]), __float_as_uint(Kb[at + 4])};
                const unsigned bs[2] = {__float_as_uint(Ks[at]), __float_as_uint(Ks[at + 4])};
                mma3(s[j], ab, as, bb, bs);
            }
        }

        // online softmax (base 2) of rows g (h = 0) and g + 8 (h = 1): s becomes P (dropped), O is
        // rescaled once for the tile; l sums the probabilities before dropout (the softmax's).
        // A mask is needed only where the tile passes the end of S or crosses this warp's diagonal
        // (in tile coordinates, 32-bit: key kk is masked if >= s_left, or causal and past row
        // w0 + r by more than diag = q0 + w0 - k0, clamped to a range where it changes nothing).
        const bool edge = k0 + BK > S || (causal && k0 + BK - 1 > q0 + w0);
        const int s_left = (int)min(S - k0, (long long)BK);
        const int diag = (int)max(min(q0 + w0 - k0, (long long)BK), -16ll);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = g + 8 * h;                           // row in the warp's 16
            float mx = NEG_INF;
#pragma unroll
            for (int j = 0; j < NJ; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int kk = 8 * j + 2 * t + e;
                    float& x = s[j][2 * h + e];
                    x = edge && (kk >= s_left || (causal && kk - r > diag)) ? NEG_INF : x * scale2;
                    mx = fmaxf(mx, x);
                }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));  // the 4 lanes of the group hold the row
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float m_new = fmaxf(m[h], mx);                 // finite: see the header
            const float alpha = exp2f(m[h] - m_new);             // 0 on the first tile (m = -inf)
            // keys kk: bit kk % 32 of the row's word kk / 32 (= j / 4)
            const unsigned kw0 = drop.on ? kbits[(w0 + r) * 2] : ~0u, kw1 = drop.on ? kbits[(w0 + r) * 2 + 1] : ~0u;
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < NJ; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const float p = exp2f(s[j][2 * h + e] - m_new);
                    const unsigned bit = ((j < 4 ? kw0 : kw1) >> (8 * (j % 4) + 2 * t + e)) & 1u;
                    s[j][2 * h + e] = bit ? p * drop.scale : 0.0f;
                    sum += p;
                }
            l[h] = l[h] * alpha + sum;                 // this thread's keys only: summed over the group at the end
            m[h] = m_new;
#pragma unroll
            for (int n = 0; n < NO; ++n) { o[n][2 * h] *= alpha; o[n][2 * h + 1] *= alpha; }
        }
        tc::cp_async_wait<0>();                                // this thread's copies of V landed
        split_rows<D, BK>(Vb, Vs);
        __syncthreads();                                       // everyone's V is in; K is no longer read
        if (k0 + BK < kv_end) tiled::load_rows<D, BK>(Kb, K, k0 + BK, S, k_at.st);   // K of the next tile, behind P V
        tc::cp_async_commit();                                 // (maybe empty: the group count stays regular)

        // O += P V: per key tile j, P's fragment (the permuted keys of the header) split once, then
        // D / 8 column tiles x 3 mmas
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
            unsigned ab[4], as[4];
            split(s[j][0], ab[0], as[0]);
            split(s[j][2], ab[1], as[1]);
            split(s[j][1], ab[2], as[2]);
            split(s[j][3], ab[3], as[3]);
            const int row = (8 * j + 2 * t) * DP + g;
#pragma unroll
            for (int n = 0; n < NO; ++n) {
                const int at = row + 8 * n;
                const unsigned bb[2] = {__float_as_uint(Vb[at]), __float_as_uint(Vb[at + DP])};
                const unsigned bs[2] = {__float_as_uint(Vs[at]), __float_as_uint(Vs[at + DP])};
                mma3(o[n], ab, as, bb, bs);
            }
        }
        __syncthreads();                                       // V read: the next tile may overwrite it
    }
    tc::cp_async_wait<0>();                                    // S = 0: the loop never ran; nothing left in flight

    // the row sums over the group (every lane shuffles, before any lane skips a row)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    }
    O += o_at.head(bh, H); lse += bh * L;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const long long r = q0 + w0 + g + 8 * h;
        if (r >= L) continue;
        const float inv = l[h] > 0.0f ? 1.0f / l[h] : 0.0f;   // l = 0 only when S = 0: O = 0 as PyTorch
        float* row = O + r * o_at.st + 2 * t;
#pragma unroll
        for (int n = 0; n < NO; ++n)
            *reinterpret_cast<float2*>(row + 8 * n) = make_float2(o[n][2 * h] * inv, o[n][2 * h + 1] * inv);
        if (t == 0) lse[r] = l[h] > 0.0f ? (m[h] + log2f(l[h])) * LN2 : NEG_INF;
    }
}

}  // namespace x3

// D <= 64: two blocks per SM (registers capped at 128; shared memory 55 / 105 KiB a block), except
// D = 64 on sm_8x, whose 164 KiB hold one block anyway (capped, it would spill); D = 128: one (204 KiB).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define D64_BLOCKS 1
#else
#define D64_BLOCKS 2
#endif
#define FLASH_3XTF32_ENTRY(D, MIN_BLOCKS)                                                                \
    extern "C" __global__ void __launch_bounds__(tiled::THREADS, MIN_BLOCKS) flash_fwd_3xtf32_f32_d##D(  \
        const float* Q, const float* K, const float* V, float* O, float* lse, long long L, long long S,  \
        float scale, bool causal, const unsigned long long* seed, bool dropout, int threshold,           \
        float keep_scale, long long H, HEADS_ARGS(q), HEADS_ARGS(k), HEADS_ARGS(v), HEADS_ARGS(o)) {     \
        x3::flash_fwd<D>(Q, K, V, O, lse, L, S, scale, causal, DROPOUT, H, HEADS(q), HEADS(k), HEADS(v), \
                         HEADS(o));                                                                      \
    }

FLASH_3XTF32_ENTRY(32, 2)
FLASH_3XTF32_ENTRY(64, D64_BLOCKS)
FLASH_3XTF32_ENTRY(128, 1)
