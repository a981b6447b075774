// GENERATED from minitorch/cuda/attention/01c_flash_fp32_3xtf32.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 07
// 01c_flash_fp32_3xtf32.cu - rung 1c of the attention ladder: rung 1b's float32 FlashAttention
// (01b_flash_fp32_tiled.cu: same algorithm, arguments, outputs O, lse, dQ, dK, dV, dropout, strides)
// with its products (forward: S = Q K^T, O += P V; backward: the same two shapes, twice each) on
// the tensor cores, at float32's accuracy. The backward is at the end of the file.
//
// 3xTF32. A TF32 tensor-core mma (mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, the GEMM's rung
// 10) reads each float32 operand with 10 of its 23 mantissa bits: a product is off by up to ~2^-11
// relative, a thousand times float32's 2^-24. Split each operand in two TF32 numbers instead:
//     x = big + small,   big = tf32(x),   small = tf32(x - big)
// (x - big is exact in float32 and |x - big| <= 2^-11 |x|; rounding it to TF32 leaves
// |x - big - small| <= 2^-22 |x|). Then
//     a b = big_a big_b + big_a small_b + small_a big_b + small_a small_b
// and each term's TF32 factors multiply exactly on the tensor cores (11 x 11 significant bits fit a
// float32's 24) into float32 accumulators. Why three products: big_a big_b alone is plain TF32; the
// two cross terms carry the 11 bits below, which bring the product back to float32's precision.
// Why small_a small_b is dropped: it is at most 2^-22 |a b|, the size of float32's own rounding of
// the sum it joins, so a fourth mma would buy nothing. The error bound: per product at most about
// 3 x 2^-22 relative (the two operands' leftovers and the dropped term), against 2^-24 for FFMA's
// one rounding; summed over a dot product both stay at float32 level (the accumulators are float32
// either way), so rung 1c's errors stay within a small factor of rung 1b's, as
// tests/test_flash_3xtf32.py checks, where one TF32 mma per product is hundreds of times off. The
// H100's tensor cores do TF32 ~7x faster than its CUDA cores do float32 FFMA (495 vs 67 TFLOP/s),
// so three mmas still beat one FFMA. The idea is CUTLASS's: the OpMultiplyAddFastF32 math operator
// (cutlass/gemm/warp/mma_tensor_op_fast_f32.h) and its example 27_ampere_3xtf32_fast_accurate_tensorop_gemm;
// PyTorch's float32 memory-efficient attention (xFormers, CUTLASS) runs it on sm_80+ even with TF32 off.
// TF32_TERMS=1 (an NVRTC option) keeps only big_a big_b: plain TF32, for the tests' and the notebook's
// comparison. Rounding (split() below, 3 instructions: it runs for every A fragment element): big is
// x rounded to the nearest TF32 (ties away) as cvt.rna.tf32.f32 rounds, written as the two integer
// operations that instruction compiles to (add half a TF32 ulp to the bits, clear the low 13), without
// its inf/NaN guard (a third instruction; a NaN still reaches the mma through small); small = x - big,
// exact, goes in as float32: the tensor core reads the top 19 bits of an operand register (it
// truncates), which leaves |x - big - small| <= 2^-21 |x|, CUTLASS's choice too (its big is
// truncated, its small rounded). In a NumPy emulation this costs nothing measurable: the float32
// accumulators' own rounding inside the mma dominates (rung 1c's errors are 2 to 4 times rung 1b's).
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
// Entry points (D = 32, 64, 128), 256 threads, the arguments of rung 1b's kernels of the same name
// with _tiled (the backward's delta = rowsum(dO O) is rung 1b's flash_bwd_dot_tiled_f32_dD):
//   flash_fwd_3xtf32_f32_dD        grid (BH, ceil(L / 128)), shared 4 * ((128 + 4 * 64) (D + 4) + 256) bytes
//   flash_bwd_dkdv_3xtf32_f32_dD   grid (BH, ceil(S / 128)), shared 4 * ((256 + 128) (D + 4) + 64 + 128) bytes
//   flash_bwd_dq_3xtf32_f32_dD     grid (BH, ceil(L / 128)), shared 4 * ((256 + 128) (D + 4) + 128) bytes
//   flash_bwd_onepass_3xtf32_f32_dD  dK/dV's arguments, then dQ (zeroed before: rung 1b's flash_bwd_dot
//                                  does it) and its strides; dK/dV's grid and shared memory + 4 * 128 * 36 bytes
// O and lse are rung 1b's (O in the Heads given, lse natural log [BH, L]): either rung's backward takes
// either rung's forward. Needs sm_80 (cp.async, TF32 mma).
#include "flash_tiled.cuh"    // THREADS, load_rows, Dropout, Heads, the entries' argument macros

#ifndef TF32_TERMS
#define TF32_TERMS 3
#endif
namespace x3 {

using tiled::THREADS;
constexpr int BQ = 128, BK = 64;     // query rows per block (16 per warp), keys per K/V tile
constexpr int NJ = BK / 8;           // mma tiles of S per warp (8 keys each)
static_assert(TF32_TERMS == 1 || TF32_TERMS == 3, "TF32_TERMS: 3 (3xTF32) or 1 (plain TF32)");

// x = big + small as the mma's operand registers (see the header: big rounded to TF32, small the exact
// rest, read by the tensor core as TF32).
__device__ __forceinline__ void split(float x, unsigned& big, unsigned& small) {
    big = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    small = __float_as_uint(x - __uint_as_float(big));
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

// A B fragment's two elements (offsets at0, at1 of the tiles), big and small, from the split tiles.
__device__ __forceinline__ void b_operand(unsigned (&big)[2], unsigned (&small)[2], const float* bb, const float* bs,
                                          int at0, int at1) {
    big[0] = __float_as_uint(bb[at0]); big[1] = __float_as_uint(bb[at1]);
    small[0] = __float_as_uint(bs[at0]); small[1] = __float_as_uint(bs[at1]);
}

// x[j] += A B^T for the warp's 16 rows of A (float32 rows of stride D + 4 from `a`, split here) and
// the 8 NJ rows of B (big `bb` and small `bs` tiles of stride D + 4): the 16 x 8 NJ product in C
// fragments, x[j] = columns 8 j .. 8 j + 7 (the header's S = Q K^T).
template <int D, int NJ>
__device__ __forceinline__ void scores(float (&x)[NJ][4], const float* a, const float* bb, const float* bs, int g,
                                       int t) {
    constexpr int DP = D + 4;
    const float* ar = a + g * DP + t;                          // A fragments: (g, t), + 8 rows, + 4 columns
#pragma unroll 1
    for (int d = 0; d < D; d += 8) {
        unsigned ab[4], as[4];
        split(ar[d], ab[0], as[0]);
        split(ar[8 * DP + d], ab[1], as[1]);
        split(ar[d + 4], ab[2], as[2]);
        split(ar[8 * DP + d + 4], ab[3], as[3]);
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
            const int at = (8 * j + g) * DP + d + t;
            unsigned b_big[2], b_small[2];
            b_operand(b_big, b_small, bb, bs, at, at + 4);
            mma3(x[j], ab, as, b_big, b_small);
        }
    }
}

// acc[n] += P B for P the warp's 16 x 8 NJ product in C fragments (p[j]: columns 8 j ..; used as A
// fragments with the header's permuted k: slot t = column 8 j + 2 t, slot t + 4 = 8 j + 2 t + 1) and
// B the 8 NJ rows of big `bb` / small `bs` tiles of stride D + 4: acc[n] = columns 8 n .. 8 n + 7.
template <int D, int NJ>
__device__ __forceinline__ void accumulate(float (&acc)[D / 8][4], const float (&p)[NJ][4], const float* bb,
                                           const float* bs, int g, int t) {
    constexpr int DP = D + 4;
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
        unsigned ab[4], as[4];
        split(p[j][0], ab[0], as[0]);
        split(p[j][2], ab[1], as[1]);
        split(p[j][1], ab[2], as[2]);
        split(p[j][3], ab[3], as[3]);
        const int row = (8 * j + 2 * t) * DP + g;
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            const int at = row + 8 * n;
            unsigned b_big[2], b_small[2];
            b_operand(b_big, b_small, bb, bs, at, at + DP);
            mma3(acc[n], ab, as, b_big, b_small);
        }
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
    for (long long k0 = 0; k0 < kv_end; k0 += BK) {
        tiled::load_rows<D, BK>(Vb, V, k0, S, v_at.st);
        tc::cp_async_commit();                                 // group: V of this tile
        // dropout: thread T draws the keep bits of row T / 2, keys 32 (T % 2) .. + 31 of the tile
        // (while V copies; last tile's bits were read before its last __syncthreads)
        if (drop.on)
            kbits[threadIdx.x] = drop.bits<32>((bh * L + q0 + threadIdx.x / 2) * S + k0 + 32 * (threadIdx.x % 2));
        tc::cp_async_wait<1>();                                // this thread's copies of K (and Q) landed
        split_rows<D, BK>(Kb, Ks);                             // ... split by this thread
        __syncthreads();                                       // ... and everyone's

        // S = Q K^T: per 8 columns of d, Q's fragment split once, then 8 key tiles x 3 mmas
        float s[NJ][4];
#pragma unroll
        for (int j = 0; j < NJ; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
        scores<D, NJ>(s, Qs + w0 * DP, Kb, Ks, g, t);

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
        accumulate<D, NJ>(o, s, Vb, Vs, g, t);
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

// ---- backward ------------------------------------------------------------------------------------
// FlashAttention-2's backward after delta = rowsum(dO O) (rung 1b's flash_bwd_dot_tiled_f32_dD), with
// the forward's warp roles: a block of 8 warps owns 128 rows (keys for dK/dV, queries for dQ), 16 per
// warp, and walks the other dimension 32 at a time; each product is the forward's scores() or
// accumulate(), or add_dq() below:
//   dK, dV of keys k0 .. k0 + 127:  S^T = K Q^T, dP^T = V dO^T (K, V the warp's rows, split as read;
//     Q, dO of the step split in shared memory), P^T = exp2(S^T scale2 - lse2), Z the dropout,
//     dS^T = P^T (dP^T Z - delta); dV += (P^T Z) dO, dK += dS^T Q (P^T, dS^T never leave the registers)
//   dQ, two ways:
//   * one pass (the default, FA2's Algorithm 2 as PyTorch's backends): the dK/dV block also writes
//     dS^T of the step to shared memory and adds dQ += dS K of its 128 keys into dQ with float32
//     atomics (add_dq): 5 products per pair of tiles; dQ's bits depend on the blocks' order.
//   * deterministic (minitorch.use_deterministic_algorithms(True)): a second kernel per 128 queries,
//     S = Q K^T, dP = dO V^T, dS = P (dP Z - delta); dQ += dS K: 7 products, each dQ written once.
// Shared memory (floats): the block's two row operands [128][D+4] as float32; the step's two
// operands [32][D+4], big and small each; lse2, delta [32] (dK/dV); keep bits [128 x 32 bits];
// one pass: dS^T [128][36].
// The keep bits of a 128 x 32 tile: thread T draws 16 consecutive elements of one query row (dK/dV:
// query T / 8, keys 16 (T % 8) ..; dQ: query T / 2, keys 16 (T % 2) ..), the elements of the forward's.
// Per step: copies, a wait, the split, __syncthreads(), the products, __syncthreads() (a second stage
// of the step's tiles measured no faster on the H100, and for D = 128 it does not fit); one pass: the
// next step's copies start after the second barrier and fly while add_dq runs.
// D = 128 fills the registers: dK/dV's 128 accumulators, the step's 32 scores and their operands take
// 254 of 255 (0 spilled: `nvcc --resource-usage`), as with 16 queries a step, which paid twice the
// barriers and twice the reads and splits of K and V per product; add_dq there does its 4 column
// tiles 2 at a time (all 4 at once spill).
constexpr int BR = 128, STEP = 32;   // a block's rows (8 warps x 16), the walked rows per step

constexpr int SP = STEP + 4;         // the one-pass backward's dS^T tile [BR][SP]: row stride 4 (mod 32) banks

// dQ += dS K for the step's queries q0 .. q0 + STEP - 1 (the one-pass backward): dS^T [BR][SP] (scaled)
// and K [BR][DP] in shared memory, float32 both, split as read. Warp w computes the 16 x 8 NQ tile of
// queries 16 (w % 2) .., columns 8 NQ (w / 2) .. (NQ = D / 32: the 8 warps cover STEP x D), summing over
// the block's 128 keys 8 at a time in the permuted order of the header (slot t = key 2 t, slot t + 4 =
// key 2 t + 1: A reads dS^T rows 2 t apart, B reads K rows 2 t apart, 8 t + g banks, 32 distinct), then
// adds it into dQ with float32 atomicAdd (a red.global.add: nobody reads the old value): the order of
// the blocks' adds, so dQ's bits, may change from run to run (from 3 key blocks on: a + b = b + a).
template <int D>
__device__ __forceinline__ void add_dq(float* __restrict__ dQ, const float* dSt, const float* Ks, long long q0,
                                       long long L, long long st, int warp, int g, int t) {
    constexpr int DP = D + 4, NQ = D / 32, NP = NQ < 2 ? NQ : 2;   // NP: column tiles per pass (registers)
    const int m0 = 16 * (warp % 2);
#pragma unroll 1
    for (int n0 = NQ * (warp / 2); n0 < NQ * (warp / 2 + 1); n0 += NP) {
        float acc[NP][4];
#pragma unroll
        for (int n = 0; n < NP; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
#pragma unroll 1
        for (int kk = 0; kk < BR; kk += 8) {
            const float* a = dSt + (kk + 2 * t) * SP + m0 + g;   // dS[query m0 + g][key kk + 2 t]
            unsigned ab[4], as[4];
            split(a[0], ab[0], as[0]);
            split(a[8], ab[1], as[1]);
            split(a[SP], ab[2], as[2]);
            split(a[SP + 8], ab[3], as[3]);
#pragma unroll
            for (int n = 0; n < NP; ++n) {
                const float* b = Ks + (kk + 2 * t) * DP + 8 * (n0 + n) + g;   // K[key kk + 2 t][column]
                unsigned b_big[2], b_small[2];
                split(b[0], b_big[0], b_small[0]);
                split(b[DP], b_big[1], b_small[1]);
                mma3(acc[n], ab, as, b_big, b_small);
            }
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const long long r = q0 + m0 + g + 8 * h;
            if (r >= L) continue;
            float* row = dQ + r * st + 8 * n0 + 2 * t;
#pragma unroll
            for (int n = 0; n < NP; ++n) {
                atomicAdd(row + 8 * n, acc[n][2 * h]);
                atomicAdd(row + 8 * n + 1, acc[n][2 * h + 1]);
            }
        }
    }
}

// ONEPASS: also dQ (add_dq), into dQ zeroed beforehand (rung 1b's flash_bwd_dot does it).
template <int D, bool ONEPASS = false>
__device__ void flash_bwd_dkdv(const float* __restrict__ Q, const float* __restrict__ K,
                               const float* __restrict__ V, const float* __restrict__ dO,
                               const float* __restrict__ lse, const float* __restrict__ delta,
                               float* __restrict__ dK, float* __restrict__ dV, long long L, long long S,
                               float scale, bool causal, const tiled::Dropout& drop, long long H,
                               const tiled::Heads& q_at, const tiled::Heads& k_at, const tiled::Heads& v_at,
                               const tiled::Heads& do_at, const tiled::Heads& dk_at, const tiled::Heads& dv_at,
                               float* __restrict__ dQ = nullptr, const tiled::Heads& dq_at = {}) {
    constexpr int DP = D + 4, NO = D / 8, NS = STEP / 8;      // NS: mma tiles of the step
    extern __shared__ float4 smem4[];
    float* Ks = reinterpret_cast<float*>(smem4);   // [BR][DP] float32
    float* Vs = Ks + BR * DP;                      // [BR][DP] float32
    float* Qb = Vs + BR * DP;                      // [STEP][DP] big
    float* Qs = Qb + STEP * DP;                    // small
    float* dOb = Qs + STEP * DP;
    float* dOs = dOb + STEP * DP;
    float* lse2s = dOs + STEP * DP;                // [STEP]
    float* deltas = lse2s + STEP;                  // [STEP]
    unsigned short* kbits = reinterpret_cast<unsigned short*>(deltas + STEP);   // [STEP][BR / 16]
    float* dSt = deltas + STEP + STEP * BR / 32;   // ONEPASS: [BR][SP] dS^T scale
    const long long bh = blockIdx.x;
    const long long k0 = (long long)blockIdx.y * BR;            // causal: the first blocks walk the most
    const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
    const int w0 = 16 * warp;
    Q += q_at.head(bh, H); K += k_at.head(bh, H); V += v_at.head(bh, H); dO += do_at.head(bh, H);
    lse += bh * L; delta += bh * L;
    if constexpr (ONEPASS) dQ += dq_at.head(bh, H);
    const float scale2 = scale * LOG2E;

    float dk[NO][4], dv[NO][4];
#pragma unroll
    for (int n = 0; n < NO; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) dk[n][e] = dv[n][e] = 0.0f;
    tiled::load_rows<D, BR>(Ks, K, k0, S, k_at.st);
    tiled::load_rows<D, BR>(Vs, V, k0, S, v_at.st);
    // causal: queries before k0 see none of these keys; start at the step holding k0
    const long long q_begin = causal ? (k0 / STEP) * STEP : 0;
    for (long long q0 = q_begin; q0 < L; q0 += STEP) {
        if (!ONEPASS || q0 == q_begin) {                   // (ONEPASS: the next step's copies start early)
            tiled::load_rows<D, STEP>(Qb, Q, q0, L, q_at.st);
            tiled::load_rows<D, STEP>(dOb, dO, q0, L, do_at.st);
        }
        tc::cp_async_commit();
        if (threadIdx.x < STEP) {
            const long long r = q0 + threadIdx.x;
            lse2s[threadIdx.x] = r < L ? lse[r] * LOG2E : 0.0f;
            deltas[threadIdx.x] = r < L ? delta[r] : 0.0f;
        }
        if (drop.on && threadIdx.x < STEP * (BR / 16))
            kbits[threadIdx.x] = drop.bits<16>((bh * L + q0 + threadIdx.x / 8) * S + k0 + 16 * (threadIdx.x % 8));
        tc::cp_async_wait<0>();                            // this thread's copies of the step (K, V on the first)
        split_rows<D, STEP>(Qb, Qs);
        split_rows<D, STEP>(dOb, dOs);
        __syncthreads();                                   // everyone's: K, V, Q, dO, lse2, delta, keep bits
        float s[NS][4], dp[NS][4];
#pragma unroll
        for (int j = 0; j < NS; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[j][e] = dp[j][e] = 0.0f;
        scores<D, NS>(s, Ks + w0 * DP, Qb, Qs, g, t);      // S^T = K Q^T (the warp's 16 keys x STEP queries)
        scores<D, NS>(dp, Vs + w0 * DP, dOb, dOs, g, t);   // dP^T = V dO^T
        // key kk (block row), query qq (step column), in block coordinates: masked if past S or L, or
        // causal and kk - qq > q0 - k0 (clamped to a range where it changes nothing)
        const int q_left = (int)min(L - q0, (long long)STEP), k_left = (int)min(S - k0, (long long)BR);
        const int diag = (int)max(min(q0 - k0, (long long)BR), (long long)-STEP);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int kk = w0 + g + 8 * h;
#pragma unroll
            for (int j = 0; j < NS; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int qq = 8 * j + 2 * t + e;
                    const bool keep = qq < q_left && kk < k_left && !(causal && kk - qq > diag);
                    const float p = keep ? exp2f(s[j][2 * h + e] * scale2 - lse2s[qq]) : 0.0f;
                    // Z of (query qq, key kk): bit kk % 16 (= g + 8 h) of the query's piece kk / 16 (= warp)
                    const bool dropped = drop.on && !((kbits[qq * (BR / 16) + warp] >> (g + 8 * h)) & 1u);
                    const float z = dropped ? 0.0f : drop.scale;
                    s[j][2 * h + e] = p * z;                                   // P^T Z, for dV
                    dp[j][2 * h + e] = p * (dp[j][2 * h + e] * z - deltas[qq]);   // dS^T, for dK
                }
            if constexpr (ONEPASS)                         // dS^T scale for dQ: row kk, queries 8 j + 2 t, + 1
#pragma unroll
                for (int j = 0; j < NS; ++j)
                    *reinterpret_cast<float2*>(dSt + kk * SP + 8 * j + 2 * t) =
                        make_float2(dp[j][2 * h] * scale, dp[j][2 * h + 1] * scale);
        }
        accumulate<D, NS>(dv, s, dOb, dOs, g, t);          // dV += (P^T Z) dO
        accumulate<D, NS>(dk, dp, Qb, Qs, g, t);           // dK += dS^T Q
        __syncthreads();                                   // Q, dO, lse2, delta, bits read: the next step may load
        if constexpr (ONEPASS) {                           // (and dS^T is in): its copies fly during dQ += dS K
            if (q0 + STEP < L) {
                tiled::load_rows<D, STEP>(Qb, Q, q0 + STEP, L, q_at.st);
                tiled::load_rows<D, STEP>(dOb, dO, q0 + STEP, L, do_at.st);
            }
            add_dq<D>(dQ, dSt, Ks, q0, L, dq_at.st, warp, g, t);
        }
    }
    tc::cp_async_commit();                                 // L <= q_begin: K and V were never committed
    tc::cp_async_wait<0>();                                // nothing left in flight at exit
    dK += dk_at.head(bh, H); dV += dv_at.head(bh, H);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const long long r = k0 + w0 + g + 8 * h;
        if (r >= S) continue;
        float* dkr = dK + r * dk_at.st + 2 * t;
        float* dvr = dV + r * dv_at.st + 2 * t;
#pragma unroll
        for (int n = 0; n < NO; ++n) {
            *reinterpret_cast<float2*>(dkr + 8 * n) = make_float2(dk[n][2 * h] * scale, dk[n][2 * h + 1] * scale);
            *reinterpret_cast<float2*>(dvr + 8 * n) = make_float2(dv[n][2 * h], dv[n][2 * h + 1]);
        }
    }
}

template <int D>
__device__ void flash_bwd_dq(const float* __restrict__ Q, const float* __restrict__ K,
                             const float* __restrict__ V, const float* __restrict__ dO,
                             const float* __restrict__ lse, const float* __restrict__ delta,
                             float* __restrict__ dQ, long long L, long long S, float scale, bool causal,
                             const tiled::Dropout& drop, long long H, const tiled::Heads& q_at,
                             const tiled::Heads& k_at, const tiled::Heads& v_at, const tiled::Heads& do_at,
                             const tiled::Heads& dq_at) {
    constexpr int DP = D + 4, NO = D / 8, NS = STEP / 8;     // NS: mma tiles of the step
    extern __shared__ float4 smem4[];
    float* Qs = reinterpret_cast<float*>(smem4);   // [BR][DP] float32
    float* dOs = Qs + BR * DP;                     // [BR][DP] float32
    float* Kb = dOs + BR * DP;                     // [STEP][DP] big
    float* Ks = Kb + STEP * DP;                    // small
    float* Vb = Ks + STEP * DP;
    float* Vs = Vb + STEP * DP;
    unsigned short* kbits = reinterpret_cast<unsigned short*>(Vs + STEP * DP);   // [BR][STEP / 16]
    const long long bh = blockIdx.x;
    const long long q0 = (long long)(gridDim.y - 1 - blockIdx.y) * BR;   // causal: long rows first
    const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
    const int w0 = 16 * warp;
    Q += q_at.head(bh, H); K += k_at.head(bh, H); V += v_at.head(bh, H); dO += do_at.head(bh, H);
    lse += bh * L; delta += bh * L;
    const float scale2 = scale * LOG2E;

    float lse2[2], dl[2], acc[NO][4];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const long long r = q0 + w0 + g + 8 * h;
        lse2[h] = r < L ? lse[r] * LOG2E : 0.0f;
        dl[h] = r < L ? delta[r] : 0.0f;
    }
#pragma unroll
    for (int n = 0; n < NO; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
    tiled::load_rows<D, BR>(Qs, Q, q0, L, q_at.st);
    tiled::load_rows<D, BR>(dOs, dO, q0, L, do_at.st);
    const long long kv_end = causal ? min(S, q0 + BR) : S;
    for (long long k0 = 0; k0 < kv_end; k0 += STEP) {
        tiled::load_rows<D, STEP>(Kb, K, k0, S, k_at.st);
        tiled::load_rows<D, STEP>(Vb, V, k0, S, v_at.st);
        tc::cp_async_commit();
        if (drop.on)
            kbits[threadIdx.x] = drop.bits<16>((bh * L + q0 + threadIdx.x / 2) * S + k0 + 16 * (threadIdx.x % 2));
        tc::cp_async_wait<0>();                            // this thread's copies (Q, dO on the first step too)
        split_rows<D, STEP>(Kb, Ks);
        split_rows<D, STEP>(Vb, Vs);
        __syncthreads();                                   // everyone's: Q, dO, K, V, keep bits
        float s[NS][4], dp[NS][4];
#pragma unroll
        for (int j = 0; j < NS; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[j][e] = dp[j][e] = 0.0f;
        scores<D, NS>(s, Qs + w0 * DP, Kb, Ks, g, t);      // S = Q K^T (the warp's 16 queries x 32 keys)
        scores<D, NS>(dp, dOs + w0 * DP, Vb, Vs, g, t);    // dP = dO V^T
        // query qq (block row), key kk (step column), in block coordinates: masked as in dK/dV
        const int q_left = (int)min(L - q0, (long long)BR), k_left = (int)min(S - k0, (long long)STEP);
        const int diag = (int)max(min(q0 - k0, (long long)STEP), (long long)-BR);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int qq = w0 + g + 8 * h;
#pragma unroll
            for (int j = 0; j < NS; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int kk = 8 * j + 2 * t + e;
                    const bool keep = qq < q_left && kk < k_left && !(causal && kk - qq > diag);
                    const float p = keep ? exp2f(s[j][2 * h + e] * scale2 - lse2[h]) : 0.0f;
                    // Z of (query qq, key kk): bit kk % 16 of the query's piece kk / 16 (= j / 2)
                    const float z = drop.on && !((kbits[qq * (STEP / 16) + j / 2] >> (8 * (j % 2) + 2 * t + e)) & 1u)
                                        ? 0.0f : drop.scale;
                    dp[j][2 * h + e] = p * (dp[j][2 * h + e] * z - dl[h]);     // dS
                }
        }
        accumulate<D, NS>(acc, dp, Kb, Ks, g, t);          // dQ += dS K
        __syncthreads();                                   // K, V, bits read: the next step may load
    }
    tc::cp_async_commit();                                 // S = 0: Q and dO were never committed
    tc::cp_async_wait<0>();                                // nothing left in flight at exit
    dQ += dq_at.head(bh, H);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const long long r = q0 + w0 + g + 8 * h;
        if (r >= L) continue;
        float* row = dQ + r * dq_at.st + 2 * t;
#pragma unroll
        for (int n = 0; n < NO; ++n)
            *reinterpret_cast<float2*>(row + 8 * n) = make_float2(acc[n][2 * h] * scale, acc[n][2 * h + 1] * scale);
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
// The backward: dK/dV (and the one pass) one block per SM (its 2 x D / 2 accumulators and the step's
// scores spill under a 128-register cap); dQ as the forward. The entries' macros: flash_tiled.cuh.
FLASH_FWD_ENTRY(x3, 3xtf32, 32, 2)
FLASH_FWD_ENTRY(x3, 3xtf32, 64, D64_BLOCKS)
FLASH_FWD_ENTRY(x3, 3xtf32, 128, 1)
FLASH_BWD_ENTRIES(x3, 3xtf32, 32, 1, 2)
FLASH_BWD_ENTRIES(x3, 3xtf32, 64, 1, D64_BLOCKS)
FLASH_BWD_ENTRIES(x3, 3xtf32, 128, 1, 1)

// The one-pass backward: dK/dV's arguments, then dQ (zeroed) and its strides.
#define FLASH_3XTF32_ONEPASS_ENTRY(D)                                                                    \
    extern "C" __global__ void __launch_bounds__(tiled::THREADS, 1) flash_bwd_onepass_3xtf32_f32_d##D(   \
        const float* Q, const float* K, const float* V, const float* dO, const float* lse,               \
        const float* delta, float* dK, float* dV, long long L, long long S, float scale, bool causal,   \
        const unsigned long long* seed, bool dropout, int threshold, float keep_scale, long long H,      \
        HEADS_ARGS(q), HEADS_ARGS(k), HEADS_ARGS(v), HEADS_ARGS(dout), HEADS_ARGS(dk), HEADS_ARGS(dv),   \
        float* dQ, HEADS_ARGS(dq)) {                                                                     \
        x3::flash_bwd_dkdv<D, true>(Q, K, V, dO, lse, delta, dK, dV, L, S, scale, causal, DROPOUT, H,    \
                                    HEADS(q), HEADS(k), HEADS(v), HEADS(dout), HEADS(dk), HEADS(dv), dQ, \
                                    HEADS(dq));                                                          \
    }

FLASH_3XTF32_ONEPASS_ENTRY(32)
FLASH_3XTF32_ONEPASS_ENTRY(64)
FLASH_3XTF32_ONEPASS_ENTRY(128)
