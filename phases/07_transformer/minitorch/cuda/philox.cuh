// GENERATED from minitorch/cuda/philox.cuh by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 07
// philox.cuh - attention dropout's random numbers, shared by the fused softmax
// (attention_softmax.cu) and the float32 flash kernels (attention/01b_flash_fp32_tiled.cu), so that
// both drop exactly the same elements for the same key.
//
// Philox4x32-10 (Salmon et al. 2011, "Parallel random numbers: as easy as 1, 2, 3") is counter-based:
// 4 words = philox(key, counter), no state, so any thread can draw the words of any element directly
// and backward draws the forward's again. The rule, for element e of a [rows, S] score matrix
// (e = row * S + key): word e % 4 of philox(key, e / 4); the element is KEPT iff its 24-bit uniform
// (word >> 8) is >= threshold = ceil(p 2^24), i.e. with probability 1 - p up to 2^-24
// (cpu.attention_dropout_threshold; cpu.py draws the same words with NumPy).
#pragma once

namespace rng {

struct Words { unsigned w[4]; };

// Ten rounds of: two 32x32 -> 64-bit multiplies, xors with the key, the key bumped by two odd
// constants (the Weyl sequence). The constants are Salmon et al.'s (cuRAND's Philox4_32_10 too).
__device__ __forceinline__ Words philox(unsigned long long key, unsigned long long counter) {
    unsigned c0 = (unsigned)counter, c1 = (unsigned)(counter >> 32), c2 = 0u, c3 = 0u;
    unsigned k0 = (unsigned)key, k1 = (unsigned)(key >> 32);
#pragma unroll
    for (int round = 0; round < 10; ++round) {
        const unsigned hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
        const unsigned hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return {{c0, c1, c2, c3}};
}

// The keep rule: a 24-bit uniform compared with threshold.
__device__ __forceinline__ bool kept(unsigned word, unsigned threshold) { return (word >> 8) >= threshold; }

// keep flags of the V elements e0 .. e0 + V - 1. When V is a multiple of 4, e0 is too (rows of a
// vectorized kernel have n % V == 0): V / 4 Philox calls, each giving 4 elements' words.
template <int V>
__device__ __forceinline__ void keep_flags(unsigned long long key, unsigned long long e0, unsigned threshold,
                                           bool (&keep)[V]) {
    if constexpr (V % 4 == 0) {
#pragma unroll
        for (int q = 0; q < V / 4; ++q) {
            const Words r = philox(key, (e0 >> 2) + q);
#pragma unroll
            for (int k = 0; k < 4; ++k) keep[4 * q + k] = kept(r.w[k], threshold);
        }
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const unsigned long long e = e0 + k;
            const Words r = philox(key, e >> 2);
            const int w = (int)(e & 3);              // a select, not an index: r stays in registers
            const unsigned word = w == 0 ? r.w[0] : w == 1 ? r.w[1] : w == 2 ? r.w[2] : r.w[3];
            keep[k] = kept(word, threshold);
        }
    }
}

// The keep flags of the N (16 or 32) elements e0 .. e0 + N - 1 as bits: bit i = element e0 + i.
// e0 need not be a multiple of 4 (a row of S keys starts anywhere in a Philox block): N / 4 calls,
// one more when it is not; the N + 4 words' flags land in a 64-bit word shifted by e0 % 4.
template <int N>
__device__ __forceinline__ unsigned keep_bits(unsigned long long key, unsigned long long e0, unsigned threshold) {
    static_assert(N % 4 == 0 && N <= 32, "N elements: a multiple of 4, at most 32");
    const int off = (int)(e0 & 3);
    unsigned long long bits = 0ull;
#pragma unroll
    for (int q = 0; q <= N / 4; ++q) {
        if (q == N / 4 && off == 0) break;           // aligned: N / 4 calls cover the N elements
        const Words r = philox(key, (e0 >> 2) + q);
#pragma unroll
        for (int k = 0; k < 4; ++k) bits |= (unsigned long long)kept(r.w[k], threshold) << (4 * q + k);
    }
    return (unsigned)((bits >> off) & ((1ull << N) - 1));
}

}  // namespace rng
