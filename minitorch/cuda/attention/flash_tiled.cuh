// phase: 07
// flash_tiled.cuh - what the float32 FlashAttention rungs 1b (01b_flash_fp32_tiled.cu, FFMA) and 1c
// (01c_flash_fp32_3xtf32.cu, tensor cores) share: 256-thread blocks, cp.async row copies into tiles
// padded to D + 4 floats, the dropout inside the kernels, and the strided [B, H, T, D] operands
// (struct Heads) with their kernel-argument macros, and the entry points' macros.
#pragma once
#include "../gemm/mma.cuh"
#include "../philox.cuh"

#define NEG_INF __int_as_float(0xff800000)
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

namespace tiled {

constexpr int THREADS = 256;

// cp.async rows [r0, r0 + ROWS) of an [n, D] matrix whose rows are st floats apart (st % 4 == 0, the
// rows 16-byte aligned) into a tile of row stride D + 4 (zero past n).
// Consecutive threads copy consecutive 16-byte chunks of a row: coalesced reads, conflict-free writes.
template <int D, int ROWS>
__device__ __forceinline__ void load_rows(float* tile, const float* __restrict__ g, long long r0, long long n,
                                          long long st) {
    constexpr int CPR = D / 4;                                  // 16-byte chunks per row
    static_assert(ROWS * CPR % THREADS == 0, "every thread copies the same number of chunks");
#pragma unroll
    for (int c = threadIdx.x; c < ROWS * CPR; c += THREADS) {
        const int r = c / CPR, col = (c % CPR) * 4;
        const bool ok = r0 + r < n;
        tc::cp_async16(tc::smem_u32(tile + r * (D + 4) + col), ok ? g + (r0 + r) * st + col : g, ok ? 16 : 0);
    }
}

// Dropout inside the kernels (FlashAttention's way, Dao et al. 2022, sec. 3.1, alg. 2 and 4): the
// softmax statistics (m, l, lse) are those of the probabilities before dropout; the forward multiplies
// each probability by Z = keep / (1 - p) before P V; the backward recomputes P, redraws the same Z and
// takes dV = (P Z)^T dO, dP = (dO V^T) Z, dS = P (dP - delta) with delta = rowsum(dO O) (O as dropped).
// Element (row bh * L + q, key k) of the [BH * L, S] scores uses the keep rule of philox.cuh, the
// fused softmax's (attention_softmax.cu): for the same key both paths drop the same elements.
// A block draws a tile's bits once into shared memory: each thread 16 or 32 consecutive elements of
// one row (4 or 8 Philox calls, one more where the row's start is not a multiple of 4).
// The fields are the kernel's arguments as they came (the compiler reads them from the constant bank
// where needed instead of holding them in registers: the forward for D = 64 has none to spare).
struct Dropout {
    const unsigned long long* seed;   // the Philox key, in device memory (read per tile: an L1 hit)
    unsigned threshold;               // keep iff a 24-bit uniform >= threshold
    float scale;                      // what a kept probability is multiplied by: 1 / (1 - p); 1 when off
    bool on;

    // keep bits of elements e0 .. e0 + N - 1 (bit i: element e0 + i)
    template <int N>
    __device__ __forceinline__ unsigned bits(long long e0) const {
        return rng::keep_bits<N>(*seed, (unsigned long long)e0, threshold);
    }
};

// Where an operand's heads live (PyTorch's memory layouts, not only contiguous [B, H, T, D]): element
// (b, h, t, d) of a [B, H, T, D] operand is at b * sb + h * sh + t * st + d (element strides, d
// contiguous; the launcher checks st, sh, sb % 4 == 0 so that every row is 16-byte aligned). Block
// row blockIdx.x = b H + h is one head; lse, delta and dropout's element numbers stay [B H, L].
// The GPT's q, k, v are views of one [B, T, 3 C] GEMM output (sb = 3 C T, sh = D, st = 3 C) and
// O, dQ, dK, dV are written as [B, T, H, D] (sb = T H D, sh = D, st = H D), PyTorch flash's output
// layout: the GPT's transpose back to [B, T, H, D] is then free.
struct Heads {
    long long sb, sh, st;
    __device__ __forceinline__ long long head(long long bh, long long H) const { return bh / H * sb + bh % H * sh; }
};

}  // namespace tiled

// Each operand X's Heads come as three long longs X_sb, X_sh, X_st; the dropout as the entries' arguments
// seed, dropout, threshold, keep_scale.
#define HEADS_ARGS(X) long long X##_sb, long long X##_sh, long long X##_st
#define HEADS(X) tiled::Heads{X##_sb, X##_sh, X##_st}
#define DROPOUT tiled::Dropout{seed, (unsigned)threshold, keep_scale, dropout}

// The entry points of a float32 rung whose kernels are NS::flash_fwd, NS::flash_bwd_dkdv and
// NS::flash_bwd_dq (one signature for rungs 1b and 1c: either backward takes either forward), named
// flash_fwd_TAG_f32_dD, flash_bwd_dkdv_TAG_f32_dD, flash_bwd_dq_TAG_f32_dD; BLOCKS: the blocks per SM
// each is compiled for (__launch_bounds__: registers capped at 65536 / (256 BLOCKS) a thread).
#define FLASH_FWD_ENTRY(NS, TAG, D, BLOCKS)                                                              \
    extern "C" __global__ void __launch_bounds__(tiled::THREADS, BLOCKS) flash_fwd_##TAG##_f32_d##D(     \
        const float* Q, const float* K, const float* V, float* O, float* lse, long long L, long long S,  \
        float scale, bool causal, const unsigned long long* seed, bool dropout, int threshold,           \
        float keep_scale, long long H, HEADS_ARGS(q), HEADS_ARGS(k), HEADS_ARGS(v), HEADS_ARGS(o)) {     \
        NS::flash_fwd<D>(Q, K, V, O, lse, L, S, scale, causal, DROPOUT, H, HEADS(q), HEADS(k), HEADS(v), \
                         HEADS(o));                                                                      \
    }

#define FLASH_BWD_ENTRIES(NS, TAG, D, DKDV_BLOCKS, DQ_BLOCKS)                                            \
    extern "C" __global__ void __launch_bounds__(tiled::THREADS, DKDV_BLOCKS) flash_bwd_dkdv_##TAG##_f32_d##D( \
        const float* Q, const float* K, const float* V, const float* dO, const float* lse,               \
        const float* delta, float* dK, float* dV, long long L, long long S, float scale, bool causal,   \
        const unsigned long long* seed, bool dropout, int threshold, float keep_scale, long long H,      \
        HEADS_ARGS(q), HEADS_ARGS(k), HEADS_ARGS(v), HEADS_ARGS(dout), HEADS_ARGS(dk), HEADS_ARGS(dv)) { \
        NS::flash_bwd_dkdv<D>(Q, K, V, dO, lse, delta, dK, dV, L, S, scale, causal, DROPOUT, H,          \
                              HEADS(q), HEADS(k), HEADS(v), HEADS(dout), HEADS(dk), HEADS(dv));          \
    }                                                                                                    \
    extern "C" __global__ void __launch_bounds__(tiled::THREADS, DQ_BLOCKS) flash_bwd_dq_##TAG##_f32_d##D( \
        const float* Q, const float* K, const float* V, const float* dO, const float* lse,               \
        const float* delta, float* dQ, long long L, long long S, float scale, bool causal,              \
        const unsigned long long* seed, bool dropout, int threshold, float keep_scale, long long H,      \
        HEADS_ARGS(q), HEADS_ARGS(k), HEADS_ARGS(v), HEADS_ARGS(dout), HEADS_ARGS(dq)) {                 \
        NS::flash_bwd_dq<D>(Q, K, V, dO, lse, delta, dQ, L, S, scale, causal, DROPOUT, H,                \
                            HEADS(q), HEADS(k), HEADS(v), HEADS(dout), HEADS(dq));                       \
    }
