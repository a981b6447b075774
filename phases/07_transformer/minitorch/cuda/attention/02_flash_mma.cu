// GENERATED from minitorch/cuda/attention/02_flash_mma.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 07
// 02_flash_mma.cu - rung 2 of the attention ladder: FlashAttention-2 in bfloat16 / float16 on the
// tensor cores (mma.sync m16n8k16, ldmatrix, cp.async), forward and backward.
//
//   O = softmax(Q K^T * scale + causal mask) V      Q [BH, L, D], K, V [BH, S, D], O [BH, L, D]
//
// The algorithm is rung 1's (01_flash_fp32.cu: online softmax over K/V tiles, log-sum-exp saved,
// a backward that recomputes P); what changes is who does the multiplications and how the data
// reaches them (FlashAttention-2, Dao 2023, arXiv:2307.08691, Sec. 3).
//
// Threads and data (forward). A block owns BQ = 64 or 128 query rows and runs BQ / 16 warps; warp
// w owns rows 16w .. 16w + 15 of the tile, exactly one mma's M = 16. The block walks K/V in tiles
// of BKV keys held in shared memory; for each tile every warp, on its own rows and with no
// exchange with the other warps (FA2's "split Q" - FA1 split K/V and had to combine partial sums):
//   1. S = Q K^T: 16 x BKV scores in registers (BKV / 8 mma accumulator tiles of 16 x 8). Q's
//      fragments are loaded into registers once, before the loop (D / 16 k-steps x 4 registers).
//   2. the online softmax on S (float32): a row's max and sum need only the 4 lanes that hold it
//      (lane = 4g + t holds rows g and g + 8, columns 2t, 2t + 1 of each 8-wide tile): 2 shuffles.
//   3. O += P V: P is rounded to T and used straight from registers as the A operand - the
//      accumulator layout of two neighbouring 16 x 8 tiles IS the A fragment of one 16 x 16 k-step
//      (a0 = row g, cols 2t..2t+1; a1 = row g+8; a2, a3 the same 8 columns further), so P never
//      goes through shared memory. O stays in registers (D / 8 tiles) until the end.
// Fragment layouts, ldmatrix and the Half<T> mma wrapper: gemm/mma.cuh and gemm/11_half_mma.cu.
// Statistics m (running max), l (running sum) and the accumulators are float32; O is rounded once.
//
// The ladder: compile-time options (NVRTC -DNAME=value), each a step the notebook times.
//   baseline        SWIZZLE=0 DOUBLE_BUFFER=0 EXP2_FMA=0: rows of D elements stored plainly; one
//                   K/V buffer (load, wait, compute, repeat); p = expf((s - m) * scale).
//   SWIZZLE=1       bank conflicts. ldmatrix reads 8 rows x 16 bytes at a time; rows of 64..256
//                   bytes put the same column of 8 rows in the same 4 banks (up to 8-way
//                   conflicts). Chunk q (16 bytes) of row r is stored at chunk q ^ (r % 8) (D >= 64)
//                   or q ^ ((r / 2) % 4) (D = 32: 4 chunks a row, two rows per 128 bytes), so any
//                   8 consecutive rows put a given chunk in 8 different bank groups.
//   DOUBLE_BUFFER=1 latency hiding. Two K/V buffers: the cp.async copies of tile j + 1 are issued
//                   before tile j is computed, so global-memory latency hides behind the mmas.
//   EXP2_FMA=1      instruction fusion. exp(scale (s - m)) = exp2(s * scale log2e - m * scale log2e):
//                   with the per-row m * scale * log2e computed once, each score costs one FFMA and
//                   one MUFU.EX2 (expf is a multiply, a subtract and an ex2 with range fixes).
//                   The output is rescaled by alpha = exp(m_old - m_new) once per K/V tile (not per
//                   key), and the row sums l stay per-lane partial sums until the end (the 4 lanes
//                   of a row share alpha), so the only per-tile shuffles are the 2 of the max.
//   BQ, BKV         tile sizes (BQ 64 / 128, BKV 32 / 64 / 128): the tuned configuration.
// Defaults are the tuned kernel (all steps on, BQ = 128, BKV = 64); native/cuda/attention.py mirrors
// the shared-memory sizes.
//
// Masks. Causal (key j visible to query i iff j <= i, top-left aligned as PyTorch): a block stops
// at its last row's diagonal (tiles past it are never loaded), a warp skips the mmas of a tile that
// lies wholly above its own rows, and only tiles that cross the diagonal (or S's end) pay for the
// per-element mask. Ragged L, S: rows past the end are zero-filled by cp.async (zero-fill form)
// and their scores set to -inf; nothing past L is stored. The scale must be > 0 (the running max is
// kept in unscaled units; the Python side takes another path otherwise).
//
// Backward (FA2, Algorithm 2): swizzled smem, mma for every product. delta = rowsum(dO o O) first
// (one warp per row). P = exp2(s * scale log2e - lse log2e) from the saved log-sum-exp; dS = P o
// (dP - delta); dQ, dK carry the scale. Two ways on from there:
//   one pass (the default; PyTorch's flash backward does the same): one kernel per key tile of
//     64 or 128 keys (OnepassKeys), warps owning 16 keys each and working in the transposed form
//     S^T = K Q^T, dP^T = V dO^T, so that dV += P^T dO and dK += dS^T Q take P^T and dS^T from
//     registers, as the forward's P. For each query tile the block also writes dS^T to shared
//     memory and computes dQ_tile += dS K (ldmatrix.trans gives dS with rows = queries), added into
//     a float32 dQ buffer in global memory with atomics (RED: no return value to wait for); a last
//     kernel scales and rounds it to T. 5 tile products per (key tile, query tile): S, dP, dV, dK,
//     dQ. The Q, dO tiles are double-buffered; only tiles on an edge or the diagonal are masked.
//   deterministic (minitorch.use_deterministic_algorithms(True)), correctness first: dK, dV per key
//     tile as above without the dQ part (no double buffering), then a dQ kernel per query tile
//     (warps own 16 queries, dQ += dS K in registers), which must recompute S and dP: 7 tile
//     products, and the second kernel reads K and V once more; every output is written once.
// Why one pass is faster: 5 products instead of 7 (the backward is ~2.5x the forward's work instead
// of ~3.5x) and one read of Q, K, V, dO instead of two. What it costs: dQ's float32 sums are added
// in the order the blocks of one head arrive, which changes between runs, so dQ's bits may differ in
// the last place from run to run (dK, dV are still written once); a dQ buffer of BH L D floats
// (zeroed first); and the atomics' traffic (BH L D S / keys-per-block additions), spread by starting
// each block's walk over the query tiles at a different tile and by giving each warp of a block
// distinct rows and columns of dQ.
//
// Entry points (T = bf16 or f16, D = 32, 64, 128): flash_mma_fwd_T_dD (grid (BH, ceil(L / BQ)),
// BQ / 16 warps), flash_mma_bwd_dot_T_dD (one warp per row), flash_mma_bwd_onepass_T_dD (grid (BH,
// ceil(S / KB)), KB / 16 warps, KB = OnepassKeys<D>::N) then flash_mma_bwd_dq_round_T (grid-stride, two
// elements a thread); deterministic: flash_mma_bwd_dkdv_T_dD (grid (BH, ceil(S / 64)), 4 warps) and
// flash_mma_bwd_dq_T_dD (grid (BH, ceil(L / 64)), 4 warps). Every row of Q, K, V, O, dO must start
// 16-byte aligned (contiguous [*, D] with an aligned base: the Python side checks). Needs sm_80.
#include "../gemm/mma.cuh"

#ifndef SWIZZLE
#define SWIZZLE 1
#endif
#ifndef DOUBLE_BUFFER
#define DOUBLE_BUFFER 1
#endif
#ifndef EXP2_FMA
#define EXP2_FMA 1
#endif
#ifndef BQ
#define BQ 128
#endif
#ifndef BKV
#define BKV 128
#endif
// keys per block of the one-pass backward: 64 or 128 (4 or 8 warps); 0: the tuned choice per head
// dimension (OnepassKeys below)
#ifndef ONEPASS_KEYS
#define ONEPASS_KEYS 0
#endif

#define FM_NEG_INF __int_as_float(0xff800000)
#define FM_LOG2E 1.4426950408889634f

namespace fmma {
using tc::Half;
using tc::ldmatrix_x4;
using tc::smem_u32;

static_assert(BQ == 64 || BQ == 128, "BQ: 64 or 128 query rows (4 or 8 warps of 16)");
static_assert(BKV == 32 || BKV == 64 || BKV == 128, "BKV: 32, 64 or 128 keys per tile");
// every thread copies whole rows' worth of 16-byte chunks (tc::load_tile): BQ = 128 needs BKV >= 64
static_assert(BKV * 32 / 8 % (BQ * 2) == 0, "BQ = 128 threads' K/V copies need BKV >= 64 (D = 32)");
static_assert(ONEPASS_KEYS == 0 || ONEPASS_KEYS == 64 || ONEPASS_KEYS == 128, "ONEPASS_KEYS: 0, 64 or 128");

// Element offset of chunk q (8 elements, 16 bytes) of row r in a tile of rows of D elements.
template <int D, bool SW>
struct Rows {
    static __device__ __forceinline__ int at(int r, int q) {
        if constexpr (!SW) return r * D + (q << 3);
        else if constexpr (D >= 64) return r * D + ((q ^ (r & 7)) << 3);
        else return r * D + ((q ^ ((r >> 1) & 3)) << 3);     // D = 32: 4 chunks, 2 rows per 128 B
    }
};

// ldmatrix addresses (byte address `base` of a tile, this lane's row): see 11_half_mma.cu's a_row,
// b_row. Matrix j = lane / 8 of the four, row i = lane % 8 inside it.
// A fragment (rows m0..m0+15, k0..k0+15) of a tile stored [m][k].
template <class Lay>
__device__ __forceinline__ void load_a(unsigned (&a)[4], unsigned base, int lane, int m0, int k0) {
    const int j = lane >> 3, i = lane & 7;
    ldmatrix_x4<false>(a, base + 2u * Lay::at(m0 + ((j & 1) << 3) + i, (k0 >> 3) + (j >> 1)));
}
// B fragments of the two n8 tiles n0, n0 + 8 (b[0], b[1] and b[2], b[3]) at k0..k0+15, from a tile
// stored [n][k] (the row of K or Q for S = Q K^T).
template <class Lay>
__device__ __forceinline__ void load_b_nk(unsigned (&b)[4], unsigned base, int lane, int n0, int k0) {
    const int j = lane >> 3, i = lane & 7;
    ldmatrix_x4<false>(b, base + 2u * Lay::at(n0 + ((j >> 1) << 3) + i, (k0 >> 3) + (j & 1)));
}
// The same from a tile stored [k][n] (V for P V: k = key, n = d), transposed by ldmatrix.
template <class Lay>
__device__ __forceinline__ void load_b_kn(unsigned (&b)[4], unsigned base, int lane, int k0, int n0) {
    const int j = lane >> 3, i = lane & 7;
    ldmatrix_x4<true>(b, base + 2u * Lay::at(k0 + ((j & 1) << 3) + i, (n0 >> 3) + (j >> 1)));
}

// A fragment (rows m0..m0+15, k0..k0+15) of a tile stored [k][m] (dS^T, keys x queries, for dQ =
// dS K), transposed by ldmatrix: matrix j holds rows m0 + 8 (j & 1), columns k0 + 8 (j >> 1).
template <class Lay>
__device__ __forceinline__ void load_a_km(unsigned (&a)[4], unsigned base, int lane, int m0, int k0) {
    const int j = lane >> 3, i = lane & 7;
    ldmatrix_x4<true>(a, base + 2u * Lay::at(k0 + ((j >> 1) << 3) + i, (m0 >> 3) + (j & 1)));
}

// Two floats rounded to T and packed into one 32-bit register (lo in the low half: the lower k).
template <typename T>
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
    typename Half<T>::T2 v = Half<T>::pack(lo, hi);
    return *reinterpret_cast<unsigned*>(&v);
}

// acc (16 x 8*NT floats as mma accumulators) seen as the A operand of k-step kk (columns
// 16 kk .. 16 kk + 15): tiles 2 kk and 2 kk + 1, rounded to T.
template <typename T, int NT>
__device__ __forceinline__ void acc_as_a(unsigned (&a)[4], const float (&acc)[NT][4], int kk) {
    a[0] = pack2<T>(acc[2 * kk][0], acc[2 * kk][1]);
    a[1] = pack2<T>(acc[2 * kk][2], acc[2 * kk][3]);
    a[2] = pack2<T>(acc[2 * kk + 1][0], acc[2 * kk + 1][1]);
    a[3] = pack2<T>(acc[2 * kk + 1][2], acc[2 * kk + 1][3]);
}

// acc[0 .. NT) += A (fragments a, 16 x 16) times the two-tile B fragments b, for n-tile pair jj.
template <typename T, int NT>
__device__ __forceinline__ void mma_pair(float (&acc)[NT][4], int jj, const unsigned (&a)[4], const unsigned (&b)[4]) {
    const unsigned b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
    Half<T>::mma(acc[2 * jj], a, b0);
    Half<T>::mma(acc[2 * jj + 1], a, b1);
}

template <int NT>
__device__ __forceinline__ void zero(float (&acc)[NT][4]) {
#pragma unroll
    for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[n][e] = 0.f;
}

// p[0] += a, p[1] += b in global memory, atomically (p 8-byte aligned); nothing is returned, so
// the compiler emits reductions (RED: the SM does not wait for the old value). sm_90 adds both in
// one instruction.
__device__ __forceinline__ void atomic_add2(float* p, float a, float b) {
#if __CUDA_ARCH__ >= 900
    atomicAdd(reinterpret_cast<float2*>(p), make_float2(a, b));
#else
    atomicAdd(p, a);
    atomicAdd(p + 1, b);
#endif
}

// The 4 lanes of a row (same g = lane / 4) combine their values.
__device__ __forceinline__ float quad_max(float v) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
    return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// Rows [r0, r0 + ROWS) of a [n, D] matrix into a tile (zero-filled past n), cp.async in 16 bytes.
template <typename T, int ROWS, int D, int THREADS, class Lay>
__device__ __forceinline__ void load_rows(T* tile, const T* g, long long r0, long long n, int tid) {
    tc::load_tile<T, ROWS, D, THREADS, Lay>(tile, g, D, r0, n, 0, D, true, tid);
}

}  // namespace fmma

// ---- forward --------------------------------------------------------------------------------------
template <typename T, int D>
__device__ __forceinline__ void flash_mma_fwd(const T* __restrict__ Q, const T* __restrict__ K,
                                              const T* __restrict__ V, T* __restrict__ O, float* __restrict__ lse,
                                              long long L, long long S, float scale, bool causal) {
    using namespace fmma;
    using H = Half<T>;
    using Lay = Rows<D, SWIZZLE != 0>;
    constexpr int THREADS = BQ * 2;                  // BQ / 16 warps of 32
    constexpr int NT = BKV / 8, DT = D / 8, KS = D / 16;
    constexpr int STAGES = DOUBLE_BUFFER ? 2 : 1;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    T* Qs = reinterpret_cast<T*>(smem_raw);          // [BQ][D]
    T* Ks = Qs + BQ * D;                             // [STAGES][BKV][D]
    T* Vs = Ks + STAGES * BKV * D;                   // [STAGES][BKV][D]
    const unsigned ks_base = smem_u32(Ks), vs_base = smem_u32(Vs);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    const long long bh = blockIdx.x;
    // the last query tiles (longest under the causal mask) are launched first
    const long long q0 = (long long)(gridDim.y - 1 - blockIdx.y) * BQ;
    Q += bh * L * D; K += bh * S * D; V += bh * S * D; O += bh * L * D; lse += bh * L;
    const int wq = warp * 16;                        // the warp's first row in the tile
    const long long row[2] = {q0 + wq + g, q0 + wq + g + 8};
    const float sl2 = scale * FM_LOG2E;

    const long long kv_end = causal ? min(S, q0 + BQ) : S;
    const int ntiles = (int)((kv_end + BKV - 1) / BKV);
    auto load_kv = [&](int j, int s) {
        load_rows<T, BKV, D, THREADS, Lay>(Ks + s * BKV * D, K, (long long)j * BKV, S, tid);
        load_rows<T, BKV, D, THREADS, Lay>(Vs + s * BKV * D, V, (long long)j * BKV, S, tid);
    };
    load_rows<T, BQ, D, THREADS, Lay>(Qs, Q, q0, L, tid);
    tc::cp_async_commit();
    if (DOUBLE_BUFFER) {                             // tile 0 in flight behind Q
        load_kv(0, 0);
        tc::cp_async_commit();
    }
    tc::cp_async_wait<DOUBLE_BUFFER ? 1 : 0>();      // Q has landed (this thread's part) ...
    __syncthreads();                                 // ... and everyone's
    unsigned qf[KS][4];                              // the warp's 16 rows of Q, all of D, for good
#pragma unroll
    for (int kk = 0; kk < KS; ++kk) load_a<Lay>(qf[kk], smem_u32(Qs), lane, wq, kk * 16);

    float o[DT][4];
    zero(o);
    float m[2] = {FM_NEG_INF, FM_NEG_INF};           // running max of the row's unscaled scores
    float l[2] = {0.f, 0.f};                         // this lane's part of the running sum

    for (int j = 0; j < ntiles; ++j) {
        const int s = DOUBLE_BUFFER ? (j & 1) : 0;
        if (DOUBLE_BUFFER) {
            // buffer (j + 1) % 2 was last read in iteration j - 1, which every warp has left
            if (j + 1 < ntiles) load_kv(j + 1, (j + 1) & 1);
            tc::cp_async_commit();                   // (possibly empty: the group count stays regular)
            tc::cp_async_wait<1>();                  // all but the newest group: tile j is in
        } else {
            load_kv(j, 0);
            tc::cp_async_commit();
            tc::cp_async_wait<0>();
        }
        __syncthreads();

        const long long k0 = (long long)j * BKV;
        if (!causal || k0 <= q0 + wq + 15) {         // else every key of the tile is above the warp's rows
            // 1. S = Q K^T
            float sc[NT][4];
            zero(sc);
            const unsigned kb = ks_base + 2u * (unsigned)(s * BKV * D);
#pragma unroll
            for (int kk = 0; kk < KS; ++kk)
#pragma unroll
                for (int jj = 0; jj < NT / 2; ++jj) {
                    unsigned b[4];
                    load_b_nk<Lay>(b, kb, lane, jj * 16, kk * 16);
                    mma_pair<T>(sc, jj, qf[kk], b);
                }
            // masks: keys past S, and (causal) keys after the row; only tiles that need it pay
            if (k0 + BKV > S || (causal && k0 + BKV - 1 > q0 + wq)) {
#pragma unroll
                for (int n = 0; n < NT; ++n)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const long long key = k0 + n * 8 + 2 * t + (e & 1);
                        if (key >= S || (causal && key > row[e >> 1])) sc[n][e] = FM_NEG_INF;
                    }
            }
            // 2. online softmax: new max, alpha = exp(scale (m_old - m_new)), p, rescale O once
            float mx[2] = {m[0], m[1]};
#pragma unroll
            for (int n = 0; n < NT; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) mx[e >> 1] = fmaxf(mx[e >> 1], sc[n][e]);
            float alpha[2], msub[2], rsum[2] = {0.f, 0.f};
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                mx[h] = quad_max(mx[h]);
                // a row with no key yet has max -inf: subtract 0 so that no inf - inf = NaN appears
                const float mu = mx[h] == FM_NEG_INF ? 0.f : mx[h];
#if EXP2_FMA
                msub[h] = mu * sl2;
                alpha[h] = exp2f(fmaf(m[h], sl2, -msub[h]));
#else
                msub[h] = mu;
                alpha[h] = expf((m[h] - mu) * scale);
#endif
                m[h] = mx[h];
            }
#pragma unroll
            for (int n = 0; n < NT; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
#if EXP2_FMA
                    const float p = exp2f(fmaf(sc[n][e], sl2, -msub[e >> 1]));
#else
                    const float p = expf((sc[n][e] - msub[e >> 1]) * scale);
#endif
                    sc[n][e] = p;
                    rsum[e >> 1] += p;
                }
#pragma unroll
            for (int h = 0; h < 2; ++h) l[h] = fmaf(l[h], alpha[h], rsum[h]);
#pragma unroll
            for (int d = 0; d < DT; ++d) {
                o[d][0] *= alpha[0]; o[d][1] *= alpha[0];
                o[d][2] *= alpha[1]; o[d][3] *= alpha[1];
            }
            // 3. O += P V, P from registers
            const unsigned vb = vs_base + 2u * (unsigned)(s * BKV * D);
#pragma unroll
            for (int kk = 0; kk < BKV / 16; ++kk) {
                unsigned a[4];
                acc_as_a<T>(a, sc, kk);
#pragma unroll
                for (int dd = 0; dd < DT / 2; ++dd) {
                    unsigned b[4];
                    load_b_kn<Lay>(b, vb, lane, kk * 16, dd * 16);
                    mma_pair<T>(o, dd, a, b);
                }
            }
        }
        __syncthreads();                             // buffer s is free for the copies of tile j + 2
    }
    tc::cp_async_wait<0>();                          // (only empty groups can remain)

    // O / l, rounded once; lse = scale m + log l (natural, as the backward and PyTorch use it)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float lsum = quad_sum(l[h]);
        if (row[h] >= L) continue;
        const float inv = lsum > 0.f ? 1.f / lsum : 0.f;
        T* out = O + row[h] * D + 2 * t;
#pragma unroll
        for (int d = 0; d < DT; ++d)
            *reinterpret_cast<typename H::T2*>(out + d * 8) = H::pack(o[d][2 * h] * inv, o[d][2 * h + 1] * inv);
        if (t == 0) lse[row[h]] = lsum > 0.f ? m[h] * scale + logf(lsum) : FM_NEG_INF;
    }
}

// ---- backward -------------------------------------------------------------------------------------
// delta_i = sum_d dO[i, d] O[i, d] in float32: one warp per row.
template <typename T, int D>
__device__ __forceinline__ void flash_mma_bwd_dot(const T* __restrict__ dO, const T* __restrict__ O,
                                                  float* __restrict__ delta, long long rows) {
    const long long r = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r >= rows) return;                           // whole warps leave together
    float acc = 0.f;
#pragma unroll
    for (int c = lane; c < D; c += 32)
        acc = fmaf(tc::Half<T>::to_float(dO[r * D + c]), tc::Half<T>::to_float(O[r * D + c]), acc);
    acc += __shfl_xor_sync(0xffffffffu, acc, 16);
    acc += __shfl_xor_sync(0xffffffffu, acc, 8);
    acc += __shfl_xor_sync(0xffffffffu, acc, 4);
    acc += __shfl_xor_sync(0xffffffffu, acc, 2);
    acc += __shfl_xor_sync(0xffffffffu, acc, 1);
    if (lane == 0) delta[r] = acc;
}

constexpr int BWD_THREADS = 128;                     // 4 warps x 16 rows (keys or queries)
constexpr int BWD_ROWS = 64;                         // keys per dK/dV block, queries per dQ block
template <int D>
struct BwdTile {                                     // the walked dimension's tile: registers bound it
    static constexpr int N = D == 128 ? 32 : 64;
};

// The backward's score products for one warp: acc1 = A1 B1^T and acc2 = A2 B2^T, where A1, A2 are
// the warp's 16 rows r0.. of the tiles at shared addresses a1, a2 and B1, B2 every row (8 NT) of the
// tiles at b1, b2, all stored [row][d] (D columns). dK/dV kernels: S^T = K Q^T and dP^T = V dO^T
// (rows keys); dQ kernel: S = Q K^T and dP = dO V^T (rows queries). UNROLL of the D / 16 k-steps
// are unrolled (with D = 128 and 64 queries a tile, a full unroll spills).
template <typename T, int D, int UNROLL, class Lay, int NT>
__device__ __forceinline__ void score_products(float (&acc1)[NT][4], float (&acc2)[NT][4], unsigned a1, unsigned b1,
                                               unsigned a2, unsigned b2, int lane, int r0) {
    using namespace fmma;
    zero(acc1);
    zero(acc2);
#pragma unroll (UNROLL)
    for (int kk = 0; kk < D / 16; ++kk) {
        unsigned x1[4], x2[4];
        load_a<Lay>(x1, a1, lane, r0, kk * 16);
        load_a<Lay>(x2, a2, lane, r0, kk * 16);
#pragma unroll
        for (int jj = 0; jj < NT / 2; ++jj) {
            unsigned b[4];
            load_b_nk<Lay>(b, b1, lane, jj * 16, kk * 16);
            mma_pair<T>(acc1, jj, x1, b);
            load_b_nk<Lay>(b, b2, lane, jj * 16, kk * 16);
            mma_pair<T>(acc2, jj, x2, b);
        }
    }
}

// dV += P^T dO and dK += dS^T Q for the warp's 16 keys: P^T, dS^T (16 keys x 8 NQ queries, accumulator
// layout) are the A operands straight from registers, as the forward's P; the k dimension is the
// query, and dO, Q are stored [query][d] at shared addresses dos, qs.
template <typename T, int NQ, int DT, class Lay>
__device__ __forceinline__ void add_dv_dk(float (&dv)[DT][4], float (&dk)[DT][4], const float (&pt)[NQ][4],
                                          const float (&dst)[NQ][4], unsigned dos, unsigned qs, int lane) {
    using namespace fmma;
#pragma unroll
    for (int kk = 0; kk < NQ / 2; ++kk) {
        unsigned pa[4], sa[4];
        acc_as_a<T>(pa, pt, kk);
        acc_as_a<T>(sa, dst, kk);
#pragma unroll
        for (int dd = 0; dd < DT / 2; ++dd) {
            unsigned b[4];
            load_b_kn<Lay>(b, dos, lane, kk * 16, dd * 16);
            mma_pair<T>(dv, dd, pa, b);
            load_b_kn<Lay>(b, qs, lane, kk * 16, dd * 16);
            mma_pair<T>(dk, dd, sa, b);
        }
    }
}

// The warp's rows of dK (times the scale) and dV, rounded once to T: lane (g, t) holds keys key[0],
// key[1] (rows g, g + 8), columns 8 d + 2t, + 1; keys past S are not stored.
template <typename T, int DT>
__device__ __forceinline__ void store_dk_dv(T* dK, T* dV, const float (&dk)[DT][4], const float (&dv)[DT][4],
                                            const long long (&key)[2], long long S, float scale, int t) {
    using H = tc::Half<T>;
    constexpr int D = DT * 8;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if (key[h] >= S) continue;
        T* pk = dK + key[h] * D + 2 * t;
        T* pv = dV + key[h] * D + 2 * t;
#pragma unroll
        for (int d = 0; d < DT; ++d) {
            *reinterpret_cast<typename H::T2*>(pk + d * 8) = H::pack(dk[d][2 * h] * scale, dk[d][2 * h + 1] * scale);
            *reinterpret_cast<typename H::T2*>(pv + d * 8) = H::pack(dv[d][2 * h], dv[d][2 * h + 1]);
        }
    }
}

// dK, dV of 64 keys; warp w owns keys 16w..16w+15 and walks the query tiles.
template <typename T, int D>
__device__ __forceinline__ void flash_mma_bwd_dkdv(const T* __restrict__ Q, const T* __restrict__ K,
                                                   const T* __restrict__ V, const T* __restrict__ dO,
                                                   const float* __restrict__ lse, const float* __restrict__ delta,
                                                   T* __restrict__ dK, T* __restrict__ dV,
                                                   long long L, long long S, float scale, bool causal) {
    using namespace fmma;
    using Lay = Rows<D, true>;
    constexpr int BQB = BwdTile<D>::N, NQ = BQB / 8, DT = D / 8;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    T* Ks = reinterpret_cast<T*>(smem_raw);          // [64][D]
    T* Vs = Ks + BWD_ROWS * D;                       // [64][D]
    T* Qs = Vs + BWD_ROWS * D;                       // [BQB][D]
    T* dOs = Qs + BQB * D;                           // [BQB][D]
    float* lse2s = reinterpret_cast<float*>(dOs + BQB * D);   // [BQB], log2 units
    float* deltas = lse2s + BQB;                     // [BQB]
    const unsigned ks = smem_u32(Ks), vs = smem_u32(Vs), qs = smem_u32(Qs), dos = smem_u32(dOs);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    const long long bh = blockIdx.x, k0 = (long long)blockIdx.y * BWD_ROWS;
    Q += bh * L * D; K += bh * S * D; V += bh * S * D; dO += bh * L * D;
    lse += bh * L; delta += bh * L; dK += bh * S * D; dV += bh * S * D;
    const int wk = warp * 16;
    const long long key[2] = {k0 + wk + g, k0 + wk + g + 8};
    const float sl2 = scale * FM_LOG2E;

    load_rows<T, BWD_ROWS, D, BWD_THREADS, Lay>(Ks, K, k0, S, tid);
    load_rows<T, BWD_ROWS, D, BWD_THREADS, Lay>(Vs, V, k0, S, tid);
    tc::cp_async_commit();
    float dk[DT][4], dv[DT][4];
    zero(dk);
    zero(dv);
    // causal: queries before k0 see none of these keys
    const long long q_begin = causal ? (k0 / BQB) * BQB : 0;
    for (long long q0 = q_begin; q0 < L; q0 += BQB) {
        load_rows<T, BQB, D, BWD_THREADS, Lay>(Qs, Q, q0, L, tid);
        load_rows<T, BQB, D, BWD_THREADS, Lay>(dOs, dO, q0, L, tid);
        tc::cp_async_commit();
        if (tid < BQB) {
            const long long q = q0 + tid;
            lse2s[tid] = q < L ? lse[q] * FM_LOG2E : 0.f;
            deltas[tid] = q < L ? delta[q] : 0.f;
        }
        tc::cp_async_wait<0>();
        __syncthreads();                             // K, V (first pass), Q, dO, lse, delta in place
        if (!causal || q0 + BQB - 1 >= k0 + wk) {    // else every query of the tile is before the warp's keys
            // S^T = K Q^T and dP^T = V dO^T: 16 keys x BQB queries
            float st[NQ][4], dpt[NQ][4];
            score_products<T, D, 2, Lay>(st, dpt, ks, qs, vs, dos, lane, wk);
            // P^T = exp2(s scale log2e - lse log2e), dS^T = P^T (dP^T - delta); masked entries 0
#pragma unroll
            for (int n = 0; n < NQ; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int qi = n * 8 + 2 * t + (e & 1);
                    const long long q = q0 + qi, kx = key[e >> 1];
                    const bool keep = q < L && kx < S && !(causal && kx > q);
                    const float p = keep ? exp2f(fmaf(st[n][e], sl2, -lse2s[qi])) : 0.f;
                    st[n][e] = p;
                    dpt[n][e] = p * (dpt[n][e] - deltas[qi]);
                }
            add_dv_dk<T, NQ, DT, Lay>(dv, dk, st, dpt, dos, qs, lane);
        }
        __syncthreads();                             // Q, dO, lse, delta read: the next tile may load
    }
    tc::cp_async_wait<0>();                          // (S > 0 but L = 0 never launches; kept for safety)
    store_dk_dv<T, DT>(dK, dV, dk, dv, key, S, scale, t);
}

// dQ of 64 queries; warp w owns queries 16w..16w+15 and walks the key tiles.
template <typename T, int D>
__device__ __forceinline__ void flash_mma_bwd_dq(const T* __restrict__ Q, const T* __restrict__ K,
                                                 const T* __restrict__ V, const T* __restrict__ dO,
                                                 const float* __restrict__ lse, const float* __restrict__ delta,
                                                 T* __restrict__ dQ, long long L, long long S, float scale, bool causal) {
    using namespace fmma;
    using H = Half<T>;
    using Lay = Rows<D, true>;
    constexpr int BKB = BwdTile<D>::N, NK = BKB / 8, DT = D / 8, KS = D / 16;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    T* Qs = reinterpret_cast<T*>(smem_raw);          // [64][D]
    T* dOs = Qs + BWD_ROWS * D;                      // [64][D]
    T* Ks = dOs + BWD_ROWS * D;                      // [BKB][D]
    T* Vs = Ks + BKB * D;                            // [BKB][D]
    const unsigned qs = smem_u32(Qs), dos = smem_u32(dOs), ks = smem_u32(Ks), vs = smem_u32(Vs);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    const long long bh = blockIdx.x;
    const long long q0 = (long long)(gridDim.y - 1 - blockIdx.y) * BWD_ROWS;   // longest first
    Q += bh * L * D; K += bh * S * D; V += bh * S * D; dO += bh * L * D;
    lse += bh * L; delta += bh * L; dQ += bh * L * D;
    const int wq = warp * 16;
    const long long row[2] = {q0 + wq + g, q0 + wq + g + 8};
    const float sl2 = scale * FM_LOG2E;
    float lse2[2], dl[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        lse2[h] = row[h] < L ? lse[row[h]] * FM_LOG2E : 0.f;
        dl[h] = row[h] < L ? delta[row[h]] : 0.f;
    }

    load_rows<T, BWD_ROWS, D, BWD_THREADS, Lay>(Qs, Q, q0, L, tid);
    load_rows<T, BWD_ROWS, D, BWD_THREADS, Lay>(dOs, dO, q0, L, tid);
    tc::cp_async_commit();
    float dq[DT][4];
    zero(dq);
    const long long kv_end = causal ? min(S, q0 + BWD_ROWS) : S;
    for (long long k0 = 0; k0 < kv_end; k0 += BKB) {
        load_rows<T, BKB, D, BWD_THREADS, Lay>(Ks, K, k0, S, tid);
        load_rows<T, BKB, D, BWD_THREADS, Lay>(Vs, V, k0, S, tid);
        tc::cp_async_commit();
        tc::cp_async_wait<0>();
        __syncthreads();                             // Q, dO (first pass), K, V in place
        if (!causal || k0 <= q0 + wq + 15) {
            // S = Q K^T and dP = dO V^T: 16 queries x BKB keys (a full unroll: BKB is 32 at D = 128)
            float s[NK][4], dp[NK][4];
            score_products<T, D, KS, Lay>(s, dp, qs, ks, dos, vs, lane, wq);
#pragma unroll
            for (int n = 0; n < NK; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int h = e >> 1;
                    const long long kx = k0 + n * 8 + 2 * t + (e & 1);
                    const bool keep = row[h] < L && kx < S && !(causal && kx > row[h]);
                    const float p = keep ? exp2f(fmaf(s[n][e], sl2, -lse2[h])) : 0.f;
                    dp[n][e] = p * (dp[n][e] - dl[h]);
                }
            // dQ += dS K (k = key; K stored [key][d])
#pragma unroll
            for (int kk = 0; kk < BKB / 16; ++kk) {
                unsigned sa[4];
                acc_as_a<T>(sa, dp, kk);
#pragma unroll
                for (int dd = 0; dd < DT / 2; ++dd) {
                    unsigned b[4];
                    load_b_kn<Lay>(b, ks, lane, kk * 16, dd * 16);
                    mma_pair<T>(dq, dd, sa, b);
                }
            }
        }
        __syncthreads();                             // K, V read: the next tile may load
    }
    tc::cp_async_wait<0>();
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if (row[h] >= L) continue;
        T* p = dQ + row[h] * D + 2 * t;
#pragma unroll
        for (int d = 0; d < DT; ++d)
            *reinterpret_cast<typename H::T2*>(p + d * 8) = H::pack(dq[d][2 * h] * scale, dq[d][2 * h + 1] * scale);
    }
}

// ---- backward in one pass (FA2's Algorithm 2 as written): dQ by float32 atomics -------------------
// Keys per block of the one-pass backward: 128 (8 warps, half the dQ atomics) for D = 128, 64 (4
// warps, two blocks per SM) below; H100, bf16, L = 4096: 4.28 vs 4.35 ms forward + backward at D = 128,
// 2.38 vs 2.33 at D = 64 (benchmarks/probe_flash_mma.py --backward, 2026-11-25).
template <int D>
struct OnepassKeys {
    static constexpr int N = ONEPASS_KEYS ? ONEPASS_KEYS : (D == 128 ? 128 : 64);
};

// 2^x by the SFU alone (ex2.approx.ftz: results below 2^-126 flush to 0, which P can afford); exp2f
// without fast math adds the instructions that keep denormal results.
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// P^T = exp2(s scale log2e - lse log2e) and dS^T = P^T o (dP^T - delta) in place of the warp's
// S^T (sc) and dP^T (dpt), 16 keys (key[0], key[1]: this lane's rows) x NQ * 8 queries from q0;
// lse_t, delta_t the query tile's. MASKED: entries with a query past L, a key past S or (causal) a key
// after its query are 0; a tile without such entries skips the 64-bit compares (MASKED = false).
template <bool MASKED, int NQ>
__device__ __forceinline__ void p_and_ds(float (&sc)[NQ][4], float (&dpt)[NQ][4], const float* lse_t,
                                         const float* delta_t, long long q0, const long long (&key)[2], long long L,
                                         long long S, bool causal, float sl2, int t) {
#pragma unroll
    for (int n = 0; n < NQ; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int qi = n * 8 + 2 * t + (e & 1);
            float p = fast_exp2(fmaf(sc[n][e], sl2, -lse_t[qi] * FM_LOG2E));
            if constexpr (MASKED) {
                const long long q = q0 + qi, kx = key[e >> 1];
                if (q >= L || kx >= S || (causal && kx > q)) p = 0.f;
            }
            sc[n][e] = p;
            dpt[n][e] = p * (dpt[n][e] - delta_t[qi]);
        }
}

// The block of flash_mma_bwd_dkdv (KB = OnepassKeys<D>::N keys, 64 or 128: KW = KB / 16 warps, warp w owns
// keys 16w..16w+15 and walks the query tiles) also adds, for every query tile, dQ[tile] += dS K into
// dQacc, a float32 [BH, L, D] buffer zeroed before the launch; flash_mma_bwd_dq_round scales and
// rounds it afterwards. Per query tile:
//   1. each warp: S^T, dP^T, P^T, dS^T of its 16 keys (registers), dV += P^T dO, dK += dS^T Q as in
//      flash_mma_bwd_dkdv, then dS^T (rounded to T, as the dK product used it) into shared memory;
//   2. __syncthreads(): the block's dS^T [KB keys][BQB queries] is complete;
//   3. dQ = dS K: dS is the A operand with rows = queries, i.e. dS^T read transposed by ldmatrix
//      (load_a_km); K is already in shared memory. Warp w owns distinct rows and columns of the
//      tile's dQ (16 rows by D / (KW / MW) columns, MW = BQB / 16 warps down the rows), so no two
//      warps of a block add into the same address; blocks (key tiles) of one head do, and their
//      atomics are ordered by the hardware as they arrive: the float sums change between runs.
//      Blocks start their walk at different query tiles (blockIdx.y mod the count) so that the key
//      tiles of one head are not all adding into the same rows at the same moment.
// Q, dO, lse, delta tiles are double-buffered: the copies of tile i + 1 fly while tile i is computed.
template <typename T, int D>
__device__ __forceinline__ void flash_mma_bwd_onepass(const T* __restrict__ Q, const T* __restrict__ K,
                                                      const T* __restrict__ V, const T* __restrict__ dO,
                                                      const float* __restrict__ lse, const float* __restrict__ delta,
                                                      T* __restrict__ dK, T* __restrict__ dV, float* __restrict__ dQacc,
                                                      long long L, long long S, float scale, bool causal) {
    using namespace fmma;
    using Lay = Rows<D, true>;
    constexpr int KB = OnepassKeys<D>::N, KW = KB / 16, THREADS = KB * 2;   // keys, warps, threads per block
    constexpr int BQB = BwdTile<D>::N, NQ = BQB / 8, DT = D / 8;
    using LayS = Rows<BQB, true>;                    // the dS^T tile: KB rows (keys) of BQB queries
    constexpr int MW = BQB / 16;                     // dQ = dS K: warps along the tile's queries (4 or 2)
    constexpr int DC = D / (KW / MW);                // ... and along D: each owns DC columns
    constexpr int NDQ = DC / 8;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    T* Ks = reinterpret_cast<T*>(smem_raw);          // [KB][D]
    T* Vs = Ks + KB * D;                             // [KB][D]
    T* Qs = Vs + KB * D;                             // [2][BQB][D]
    T* dOs = Qs + 2 * BQB * D;                       // [2][BQB][D]
    T* dSs = dOs + 2 * BQB * D;                      // [KB][BQB]
    float* lses = reinterpret_cast<float*>(dSs + KB * BQB);   // [2][BQB], natural units
    float* deltas = lses + 2 * BQB;                  // [2][BQB]
    const unsigned ks = smem_u32(Ks), vs = smem_u32(Vs), dss = smem_u32(dSs);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    const long long bh = blockIdx.x, k0 = (long long)blockIdx.y * KB;
    Q += bh * L * D; K += bh * S * D; V += bh * S * D; dO += bh * L * D;
    lse += bh * L; delta += bh * L; dK += bh * S * D; dV += bh * S * D; dQacc += bh * L * D;
    const int wk = warp * 16;                        // the warp's first key (S^T, dK, dV)
    const int mq = (warp % MW) * 16, dc = (warp / MW) * DC;   // its first query row and column (dQ)
    const long long key[2] = {k0 + wk + g, k0 + wk + g + 8};
    const float sl2 = scale * FM_LOG2E;

    // rows [q0, q0 + BQB) of Q, dO, lse, delta into stage st (zero-filled past L)
    auto load_q = [&](long long q0, int st) {
        load_rows<T, BQB, D, THREADS, Lay>(Qs + st * BQB * D, Q, q0, L, tid);
        load_rows<T, BQB, D, THREADS, Lay>(dOs + st * BQB * D, dO, q0, L, tid);
        if (tid < BQB) {
            const bool in = q0 + tid < L;
            tc::cp_async4(smem_u32(lses + st * BQB + tid), in ? lse + q0 + tid : lse, in ? 4 : 0);
            tc::cp_async4(smem_u32(deltas + st * BQB + tid), in ? delta + q0 + tid : delta, in ? 4 : 0);
        }
    };
    // the query tiles to visit: all, or (causal) those from query k0 on (BQB divides KB: the first
    // is the tile starting at k0), taken in the order first, first + 1, ... modulo their count
    const long long q_begin = causal ? k0 : 0;
    const int nq = q_begin < L ? (int)((L - q_begin + BQB - 1) / BQB) : 0;
    const int first = nq ? (int)(blockIdx.y % nq) : 0;
    auto tile_q0 = [&](int i) { return q_begin + (long long)((first + i) % nq) * BQB; };

    load_rows<T, KB, D, THREADS, Lay>(Ks, K, k0, S, tid);
    load_rows<T, KB, D, THREADS, Lay>(Vs, V, k0, S, tid);
    if (nq) load_q(tile_q0(0), 0);
    tc::cp_async_commit();
    float dk[DT][4], dv[DT][4];
    zero(dk);
    zero(dv);
    for (int i = 0; i < nq; ++i) {
        const int st = i & 1;
        const long long q0 = tile_q0(i);
        // stage st ^ 1 was last read in iteration i - 1, before its second __syncthreads()
        if (i + 1 < nq) load_q(tile_q0(i + 1), st ^ 1);
        tc::cp_async_commit();                       // (possibly empty: the group count stays regular)
        tc::cp_async_wait<1>();                      // all but the newest group: K, V and tile i are in
        __syncthreads();                             // everyone's copies; every warp is done with dS^T of i - 1
        const unsigned qs = smem_u32(Qs + st * BQB * D), dos = smem_u32(dOs + st * BQB * D);
        const float* lse_t = lses + st * BQB;
        const float* delta_t = deltas + st * BQB;
        if (!causal || q0 + BQB - 1 >= k0 + wk) {    // else every query of the tile is before the warp's keys
            // 1. S^T = K Q^T, dP^T = V dO^T (16 keys x BQB queries), P^T, dS^T; dV, dK
            float sc[NQ][4], dpt[NQ][4];
            score_products<T, D, 2, Lay>(sc, dpt, ks, qs, vs, dos, lane, wk);
            // only tiles with queries past L, keys past S or (causal) a key after a query pay for the mask
            if (q0 + BQB > L || k0 + wk + 16 > S || (causal && k0 + wk + 15 > q0))
                p_and_ds<true>(sc, dpt, lse_t, delta_t, q0, key, L, S, causal, sl2, t);
            else
                p_and_ds<false>(sc, dpt, lse_t, delta_t, q0, key, L, S, causal, sl2, t);
            add_dv_dk<T, NQ, DT, Lay>(dv, dk, sc, dpt, dos, qs, lane);
            // dS^T into shared memory: lane (g, t) holds keys wk + g, wk + g + 8, queries n8 + 2t, + 1
#pragma unroll
            for (int n = 0; n < NQ; ++n)
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    *reinterpret_cast<unsigned*>(dSs + LayS::at(wk + g + 8 * h, n) + 2 * t) =
                        pack2<T>(dpt[n][2 * h], dpt[n][2 * h + 1]);
        } else {                                     // skipped keys: dS^T = 0 for the dQ product
#pragma unroll
            for (int n = 0; n < NQ; ++n)
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    *reinterpret_cast<unsigned*>(dSs + LayS::at(wk + g + 8 * h, n) + 2 * t) = 0u;
        }
        __syncthreads();                             // dS^T complete; stage st no longer read
        // 2. dQ[q0 + mq .. + 15, dc .. dc + DC) += dS K (k = key: A = dS^T read transposed, B = K [key][d])
        if (q0 + mq < L) {
            float dq[NDQ][4];
            zero(dq);
#pragma unroll
            for (int kk = 0; kk < KB / 16; ++kk) {
                if (causal && k0 + 16 * kk > q0 + mq + 15) continue;   // keys after all the warp's rows: dS = 0
                unsigned a[4];
                load_a_km<LayS>(a, dss, lane, mq, kk * 16);
#pragma unroll
                for (int dd = 0; dd < NDQ / 2; ++dd) {
                    unsigned b[4];
                    load_b_kn<Lay>(b, ks, lane, kk * 16, dc + dd * 16);
                    mma_pair<T>(dq, dd, a, b);
                }
            }
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const long long row = q0 + mq + g + 8 * h;
                if (row >= L) continue;
                float* p = dQacc + row * D + dc + 2 * t;
#pragma unroll
                for (int n = 0; n < NDQ; ++n) atomic_add2(p + n * 8, dq[n][2 * h], dq[n][2 * h + 1]);
            }
        }
    }
    tc::cp_async_wait<0>();                          // (nq = 0 leaves the K, V group)
    store_dk_dv<T, DT>(dK, dV, dk, dv, key, S, scale, t);
}

// dQ = scale * dQacc rounded once to T, two elements per thread (D is even), grid-stride.
template <typename T>
__device__ __forceinline__ void flash_mma_bwd_dq_round(const float* __restrict__ acc, T* __restrict__ dQ,
                                                       long long pairs, float scale) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < pairs; i += stride) {
        const float2 v = reinterpret_cast<const float2*>(acc)[i];
        reinterpret_cast<typename tc::Half<T>::T2*>(dQ)[i] = tc::Half<T>::pack(v.x * scale, v.y * scale);
    }
}

// ---- entry points ---------------------------------------------------------------------------------
#define FLASH_MMA_ENTRIES(T, SUF, D)                                                                     \
    extern "C" __global__ void __launch_bounds__(BQ * 2) flash_mma_fwd_##SUF##_d##D(                    \
        const T* Q, const T* K, const T* V, T* O, float* lse, long long L, long long S, float scale,    \
        bool causal) {                                                                                   \
        flash_mma_fwd<T, D>(Q, K, V, O, lse, L, S, scale, causal);                                       \
    }                                                                                                    \
    extern "C" __global__ void flash_mma_bwd_dot_##SUF##_d##D(const T* dO, const T* O, float* delta,    \
                                                             long long rows) {                           \
        flash_mma_bwd_dot<T, D>(dO, O, delta, rows);                                                     \
    }                                                                                                    \
    extern "C" __global__ void __launch_bounds__(BWD_THREADS) flash_mma_bwd_dkdv_##SUF##_d##D(          \
        const T* Q, const T* K, const T* V, const T* dO, const float* lse, const float* delta, T* dK,   \
        T* dV, long long L, long long S, float scale, bool causal) {                                     \
        flash_mma_bwd_dkdv<T, D>(Q, K, V, dO, lse, delta, dK, dV, L, S, scale, causal);                  \
    }                                                                                                    \
    extern "C" __global__ void __launch_bounds__(BWD_THREADS) flash_mma_bwd_dq_##SUF##_d##D(            \
        const T* Q, const T* K, const T* V, const T* dO, const float* lse, const float* delta, T* dQ,   \
        long long L, long long S, float scale, bool causal) {                                            \
        flash_mma_bwd_dq<T, D>(Q, K, V, dO, lse, delta, dQ, L, S, scale, causal);                        \
    }                                                                                                    \
    extern "C" __global__ void __launch_bounds__(OnepassKeys<D>::N * 2) flash_mma_bwd_onepass_##SUF##_d##D(\
        const T* Q, const T* K, const T* V, const T* dO, const float* lse, const float* delta, T* dK,   \
        T* dV, float* dQacc, long long L, long long S, float scale, bool causal) {                       \
        flash_mma_bwd_onepass<T, D>(Q, K, V, dO, lse, delta, dK, dV, dQacc, L, S, scale, causal);        \
    }

FLASH_MMA_ENTRIES(__nv_bfloat16, bf16, 32)
FLASH_MMA_ENTRIES(__nv_bfloat16, bf16, 64)
FLASH_MMA_ENTRIES(__nv_bfloat16, bf16, 128)
FLASH_MMA_ENTRIES(__half, f16, 32)
FLASH_MMA_ENTRIES(__half, f16, 64)
FLASH_MMA_ENTRIES(__half, f16, 128)

extern "C" __global__ void flash_mma_bwd_dq_round_bf16(const float* acc, __nv_bfloat16* dQ, long long pairs,
                                                       float scale) {
    flash_mma_bwd_dq_round<__nv_bfloat16>(acc, dQ, pairs, scale);
}
extern "C" __global__ void flash_mma_bwd_dq_round_f16(const float* acc, __half* dQ, long long pairs, float scale) {
    flash_mma_bwd_dq_round<__half>(acc, dQ, pairs, scale);
}
