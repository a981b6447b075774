// phase: 07
// 03_flash_wgmma.cu - rung 3 of the attention ladder: the FlashAttention forward in bfloat16 /
// float16 on Hopper's warpgroup tensor-core instruction, wgmma (FlashAttention-3, Shah et al. 2024,
// arXiv:2407.08608). Two kernels: the cp.async one described first (TMA = 0), and FlashAttention-3's
// warp-specialized structure (TMA = 1, the default: see "Defaults" below). Needs sm_90a.
//
//   O = softmax(Q K^T * scale + causal mask) V      Q [BH, L, D], K, V [BH, S, D], O [BH, L, D]
//
// The algorithm is rung 2's forward (02_flash_mma.cu: online softmax over K/V tiles in float32,
// exp2 with the scale folded into one FFMA, O rescaled once per tile, the log-sum-exp saved), with
// the same arguments and outputs, so rung 2's backward runs on what this forward writes. What
// changes is the instruction. Rung 2's mma.sync is a warp instruction on register fragments: each
// warp owns only 16 query rows, yet copies the WHOLE K and V tile out of shared memory (ldmatrix)
// for them, so the 8 warps of a block read every tile 8 times: shared-memory bandwidth bound, and
// mma.sync tops out near 65% of an H100's tensor peak anyway. wgmma (see gemm/12_wgmma.cu) is a
// WARPGROUP instruction (4 warps, 128 threads) that reads its B operand straight from shared memory
// through a 64-bit descriptor, once per warpgroup, for 64 rows of A.
//
// Threads and data. A block owns BQ = 64 NWG query rows and runs NWG = 2 (or 3) warpgroups of 128
// threads; warpgroup wg owns rows 64 wg .. 64 wg + 63 of the tile, exactly one wgmma's M = 64, and, as rung 2's warps,
// works on its rows alone (no exchange with the other warpgroup). The block walks K/V in tiles of
// BKV keys; for each tile each warpgroup:
//   1. S = Q K^T: D / 16 wgmma m64nBKVk16, A = its 64 rows of the Q tile, B = the K tile, both from
//      shared memory and both "K-major" (rows of D contiguous). S lands in registers: lane 4g + t of
//      warp w (of the warpgroup) holds s[4j + 2h + e] = S[16w + g + 8h][8j + 2t + e] (wgmma.cuh).
//   2. the online softmax on S (float32): a row's 2 x BKV / 8 values sit in the 4 lanes of a quad,
//      so its max and sum take 2 shuffles (rung 2's code, on wgmma's accumulator layout).
//   3. O += P V: BKV / 16 wgmma m64nDk16 with A = P from REGISTERS (wgmma.cuh's mma_rs) and B = the V
//      tile from shared memory. For k16 slice kk of P (keys 16 kk .. 16 kk + 15), the A fragment wants
//      (PTX ISA, "Register Fragments" of wgmma, matrix A, .bf16/.f16) a0 = P[16w + g][16kk + 2t, +1],
//      a1 = P[16w + g + 8][same], a2 = P[16w + g][16kk + 8 + 2t, +1], a3 = P[16w + g + 8][same]; the
//      accumulator has exactly these in s[8kk + 0, 1], s[8kk + 2, 3], s[8kk + 4, 5], s[8kk + 6, 7]
//      (j = 2kk and 2kk + 1 above). So register r of the fragment is s[8kk + 2r], s[8kk + 2r + 1]
//      rounded to T in a pair: P never goes through shared memory, as in rung 2. V is read where it
//      lies ([key][d], d contiguous = N contiguous): "MN-major", the transpose bit for B (16-bit types
//      have it). O stays in registers (D / 2 floats a thread) until the end.
// Shared memory, in the 128-byte-swizzled layout the descriptors describe (gemm/wgmma.cuh): a tile
// of ROWS x D is D / 64 column blocks of ROWS rows x 128 bytes (64 elements), block c of row r holding
// 16-byte chunk q of the row at chunk position q ^ (r % 8); every block starts 1024-aligned. That one
// layout is what all three operands need: Q and K as K-major tiles (rows m or n, a k16 step 32 bytes
// along the row, the next 64 of D one block further), V as an MN-major tile (rows k, the 64-wide
// blocks of n LBO = ROWS x 128 bytes apart, SBO = 1024 bytes per 8 keys, a k16 step 16 rows further).
// It is rung 12's MNMajor with the tile's rows for BK; the same loader (gemm/mma.cuh's load_tile:
// cp.async 16-byte copies, zero-fill past L or S; load_rows below) writes it.
// Pipeline: two K/V buffers. At the top of iteration j every thread waits for its copies of tile j,
// makes them visible to wgmma's async proxy (fence.proxy.async) and the block synchronizes; past that
// barrier every warpgroup has also finished tile j - 1 (its wgmmas are waited on inside the
// iteration), so tile j + 1's copies go to that buffer at once and land while tile j is computed.
// The warpgroups run independently between barriers: while one does its softmax (CUDA cores,
// MUFU) the other's wgmmas keep the tensor cores busy. PIPELINE = 1 also overlaps inside a
// warpgroup (FlashAttention-3's intra-warpgroup pipelining, see the loop): the softmax of tile j + 1
// runs while O += P(j) V(j) is on the tensor cores.
// ptxas serializes the wgmmas (waits after each: "Potential Performance Loss: wgmma.mma_async
// instructions are serialized", tests/test_flash_mma_nvcc.py watches for it) when ordinary code
// writes a register an unfinished wgmma reads. So the softmax never writes p or o while
// O += P V may run: it leaves P in float32 in S's registers, rounded into p after the wait.
//
// Masks, as rung 2: causal (key j visible to query i iff j <= i, top-left aligned as PyTorch): the
// block stops at its last row's diagonal, a warpgroup skips the wgmmas of a tile wholly above its
// rows, and only tiles that cross the diagonal (or S's end) pay for the per-element mask. Ragged L,
// S: rows past the end are zero-filled by cp.async and their scores set to -inf; nothing past L is
// stored. The scale must be > 0 (the running max is kept in unscaled units).
//
// Compile-time parameters (NVRTC -DNAME=value; native/cuda/attention.py WGMMA_TUNED):
//   BKV       64 or 128: keys per K/V tile (the N of S's wgmma)
//   PIPELINE  0: each tile's S, softmax, P V in turn; 1: the softmax overlaps the previous P V
//   NWG       2 or 3 warpgroups: BQ = 128 or 192 query rows a block (3: head dimension 64 only, and
//             not with both BKV 128 and PIPELINE 1: 168 registers a thread do not hold them)
//   TMA       1: the warp-specialized kernel further down (FlashAttention-3's structure: a producer
//             warpgroup copies with the TMA engine, mbarriers replace __syncthreads; NWG 2)
// Defaults are the tuned kernel, what F.scaled_dot_product_attention runs on sm_90: TMA 1, BKV 128,
// PIPELINE 0 (H100, bf16, L 4096, TFLOP/s, d 128 / d 64: TMA 582 / 382, the cp.async kernel 412 / 293,
// rung 2 303 / 223, PyTorch's flash backend 362 / 292, cuDNN 677 / 483; causal TMA 499 / 335, flash
// 305 / 279). Without __syncthreads the two consumer warpgroups drift apart, so one's softmax runs
// while the other's wgmmas do, and the copies cost the consumers no instructions. PIPELINE 1 gains
// nothing on top (586 / 369): the other warpgroup already hides the softmax.
// Entry points (T = bf16 or f16, D = 64 or 128): flash_wgmma_fwd_T_dD, grid BH * ceil(L / BQ)
// blocks (one dimension: a head's query tiles one after the other, see the kernel), NWG x 128
// threads, rung 2's forward arguments; with TMA = 1 flash_wgmma_tma_fwd_T_dD, 384 threads, tensor
// maps in place of Q, K, V. Every row of Q, K, V, O must start 16-byte aligned
// (contiguous [*, D] with an aligned base: the Python side checks).
#include "../gemm/mma.cuh"
#include "../gemm/wgmma.cuh"
#include "../gemm/tma.cuh"     // TMA = 1: mbarriers, the TMA copy, setmaxnreg (rung 13's)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "03_flash_wgmma.cu needs the arch-specific target sm_90a (nvcc -gencode=arch=compute_90a,code=sm_90a; NVRTC -arch=sm_90a)"
#endif
// On other targets (sm_80 in tests/test_nvcc.py) the entry points compile with empty bodies
// (wgmma.cuh's WGMMA_OK is 0 there); native/cuda/attention.py launches this rung only on sm_90.

#ifndef BKV
#define BKV 128
#endif
#ifndef PIPELINE
#define PIPELINE 0
#endif
#ifndef NWG
#define NWG 2
#endif
#ifndef TMA
#define TMA 1
#endif

#define FW_NEG_INF __int_as_float(0xff800000)
#define FW_LOG2E 1.4426950408889634f

namespace fwg {

constexpr int BQ = 64 * NWG;                 // NWG warpgroups of 64 rows
constexpr int THREADS = 128 * NWG;            // (TMA = 1: 128 more, the producer)
static_assert(THREADS == BQ * 2, "a warpgroup's 128 threads own 64 rows");
static_assert(BKV == 64 || BKV == 128, "BKV: 64 or 128 keys per tile (the N of S's wgmma)");
static_assert(NWG == 2 || NWG == 3, "NWG: 2 or 3 warpgroups (3: head dimension 64 only, see the entry points)");
static_assert(NWG == 2 || BKV == 64 || !PIPELINE, "3 warpgroups, BKV 128 and PIPELINE 1 spill (168 registers)");
static_assert(!TMA || NWG == 2, "TMA = 1: 2 consumer warpgroups");

// Element offset of 16-byte chunk q (8 elements) of row r in a ROWS x D tile of 2-byte elements:
// column block q / 8 (64 elements), row r, chunk q % 8 swizzled by the row (see the file comment).
template <int ROWS>
struct Swizzled {
    static __device__ __forceinline__ int at(int r, int q) {
        return (q >> 3) * (ROWS * 64) + r * 64 + (((q & 7) ^ (r & 7)) << 3);
    }
};

// Shared bytes: Q [BQ][D], then K and V [2 buffers][BKV][D] (+ 1 KB to align the base to 1024).
template <int D>
struct Smem {
    static constexpr int Q_BYTES = BQ * D * 2, KV_BYTES = BKV * D * 2;
    static constexpr int BYTES = Q_BYTES + 4 * KV_BYTES + 1024;
};
static_assert(Smem<NWG == 2 ? 128 : 64>::BYTES <= 232448, "<= 227 KB of shared memory");

// Descriptors (gemm/wgmma.cuh's descriptor(); LBO, SBO in bytes). Bits 0-13 of a descriptor hold
// its start address / 16, and every shared address is below 2^18: the descriptor of a tile's start
// plus `bytes` is the start's descriptor plus bytes / 16. So each tile's descriptor is made once
// and every k16 step adds a constant (one integer add instead of the masks, shifts and ors).
__device__ __forceinline__ unsigned long long desc_plus(unsigned long long desc, int bytes) {
    return desc + (unsigned long long)(bytes >> 4);
}
// K-major tile (Q, K: rows of D, ROWS rows per 64-column block) whose operand starts at shared
// address `start`; k16 step s is column block s / 4, 32 bytes per step inside it.
__device__ __forceinline__ unsigned long long k_major(unsigned start) { return wgmma::descriptor(start, 16, 1024); }
template <int ROWS>
__device__ __forceinline__ int k_step(int s) { return (s >> 2) * (ROWS * 128) + (s & 3) * 32; }
// MN-major tile (V: rows k = keys, n = d): the 64-wide n blocks are ROWS x 128 bytes apart (LBO); k16
// step s starts 16 rows (2048 bytes) further.
template <int ROWS>
__device__ __forceinline__ unsigned long long mn_major(unsigned start) {
    return wgmma::descriptor(start, ROWS * 128, 1024);
}

__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Two floats rounded to T and packed into one 32-bit register (lo in the low half: the lower column).
template <typename T>
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
    typename wgmma::Op<T>::T2 v = wgmma::Op<T>::pack(lo, hi);
    return *reinterpret_cast<unsigned*>(&v);
}

// 2^x in one MUFU.EX2 instruction. exp2f(x) compiles to ex2.approx.f32, which ptxas surrounds with
// a compare and two multiplies to keep results below 2^-126 (float32's subnormals) exact; here the
// flush-to-zero form drops them: a probability that small is 0 after rounding to T anyway, and the
// softmax issues one exponential per score, so three instructions fewer a score is real time
// (with head dimension 64 the softmax's instructions take about as long as the tensor cores' work).
__device__ __forceinline__ float exp2_ftz(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
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

// Rows [r0, r0 + ROWS) of a [R, D] matrix (rows contiguous) into a Swizzled<ROWS> tile, zero-filled
// past R, by cp.async 16-byte copies: gemm/mma.cuh's load_tile, or, where the block's threads do not
// split the tile evenly (3 warpgroups), the same mapping (thread tid copies chunk tid % CPR of rows
// tid / CPR, + RSTEP, ...) with a guard on the last rows.
template <typename T, int ROWS, int D>
__device__ __forceinline__ void load_rows(T* tile, const T* src, long long r0, long long R, int tid) {
    constexpr int CPR = D / 8, RSTEP = THREADS / CPR;
    static_assert(THREADS % CPR == 0, "every thread copies one column of chunks");
    if constexpr (ROWS % RSTEP == 0) {
        tc::load_tile<T, ROWS, D, THREADS, Swizzled<ROWS>>(tile, src, D, r0, R, 0, D, true, tid);
    } else {
        const int q = tid % CPR;
        for (int r = tid / CPR; r < ROWS; r += RSTEP) {
            const bool ok = r0 + r < R;
            tc::cp_async16(tc::smem_u32(tile + Swizzled<ROWS>::at(r, q)), ok ? src + (r0 + r) * D + 8 * q : src,
                           ok ? 16 : 0);
        }
    }
}

// As wgmma.cuh's pin_registers, for P's fragments: ordinary code that writes them (the next tile's
// P) cannot be moved above the wgmma.wait_group before, which mentions no register.
template <int COUNT>
__device__ __forceinline__ void pin_u32(unsigned (&a)[COUNT][4]) {
#pragma unroll
    for (int i = 0; i < COUNT; ++i)
#pragma unroll
        for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(a[i][r])::"memory");
}

// ---- TMA = 1: the copy engine and mbarriers, as rung 13 (gemm/13_wgmma_tma.cu) uses them (gemm/tma.cuh)
// The ROWS x D tile at rows r0.. of head bh (a [BH][rows][D] tensor map, box 64 x ROWS) into a
// Swizzled<ROWS> tile at shared address dst: one box per 64 columns, the copy engine writing the
// 128-byte swizzle itself (and zeros past the head's last row).
template <int ROWS, int D>
__device__ __forceinline__ void tma_tile(unsigned dst, const tma::TensorMap& map, long long r0, long long bh,
                                         unsigned bar) {
#pragma unroll
    for (int c = 0; c < D / 64; ++c) tma::tma_load(dst + c * ROWS * 128, map, 64 * c, (int)r0, (int)bh, bar);
}

}  // namespace fwg

// One K/V tile's online softmax on this thread's scores s (S's accumulator, unscaled), in place:
// the masks (keys past S, and under `causal` keys after the row; only tiles that need it pay), the
// new row max m, alpha = exp(scale (m_old - m_new)) (the factor O must be rescaled by), the running
// sum l (this lane's part) rescaled and increased, and s overwritten by P = exp2(s scale log2e -
// m scale log2e) in float32 (to_fragments rounds it to T).
template <int NS>
__device__ __forceinline__ void online_softmax(float (&s)[NS], float (&m)[2], float (&l)[2], float (&alpha)[2],
                                               long long k0, long long S, bool causal, const long long (&row)[2],
                                               long long first_row, int t, float sl2) {
    using namespace fwg;
    if (k0 + BKV > S || (causal && k0 + BKV - 1 > first_row)) {
#pragma unroll
        for (int i = 0; i < NS; ++i) {
            const long long key = k0 + 8 * (i >> 2) + 2 * t + (i & 1);
            if (key >= S || (causal && key > row[(i >> 1) & 1])) s[i] = FW_NEG_INF;
        }
    }
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int i = 0; i < NS; ++i) mx[(i >> 1) & 1] = fmaxf(mx[(i >> 1) & 1], s[i]);
    float msub[2], rsum[2] = {0.f, 0.f};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        mx[h] = quad_max(mx[h]);
        // a row with no key yet has max -inf: subtract 0 so that no inf - inf = NaN appears
        msub[h] = (mx[h] == FW_NEG_INF ? 0.f : mx[h]) * sl2;
        alpha[h] = exp2_ftz(fmaf(m[h], sl2, -msub[h]));
        m[h] = mx[h];
    }
#pragma unroll
    for (int i = 0; i < NS; ++i) {
        s[i] = exp2_ftz(fmaf(s[i], sl2, -msub[(i >> 1) & 1]));
        rsum[(i >> 1) & 1] += s[i];
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) l[h] = fmaf(l[h], alpha[h], rsum[h]);
}

// O *= alpha of its row (o: the O accumulator, D / 2 floats). Skipped when no row of the warp got a
// new maximum (every alpha is exactly exp2(0) = 1: after the first tiles, most tiles): the D / 2
// multiplies cost about as much as the softmax's other work on the tile's 2 x BKV / 8 scores.
template <int NO>
__device__ __forceinline__ void rescale(float (&o)[NO], const float (&alpha)[2]) {
    if (!__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) return;
#pragma unroll
    for (int i = 0; i < NO; ++i) o[i] *= alpha[(i >> 1) & 1];
}

// P (float32, S's accumulator layout) rounded to T as the A fragments of O += P V, one per k16
// slice of keys: register r of slice kk holds P[8kk + 2r], P[8kk + 2r + 1] (see the file comment).
template <typename T, int NS>
__device__ __forceinline__ void to_fragments(unsigned (&p)[NS / 8][4], const float (&s)[NS]) {
#pragma unroll
    for (int kk = 0; kk < NS / 8; ++kk)
#pragma unroll
        for (int r = 0; r < 4; ++r) p[kk][r] = fwg::pack2<T>(s[8 * kk + 2 * r], s[8 * kk + 2 * r + 1]);
}

// S = Q K^T for the warpgroup's 64 rows (issued, not waited for): the first k16 step overwrites
// (scale-d = 0), so s needs no zeroing.
// dq: the descriptor of the warpgroup's 64 rows of Q, dk: of the K tile (k_major).
template <typename T, int D>
__device__ __forceinline__ void issue_s(float (&s)[BKV / 2], unsigned long long dq, unsigned long long dk) {
    using namespace fwg;
#pragma unroll
    for (int st = 0; st < D / 16; ++st)
        wgmma::mma_ss<T, BKV, 0, 0>(s, desc_plus(dq, k_step<BQ>(st)), desc_plus(dk, k_step<BKV>(st)), st > 0);
}
// O += P V (issued, not waited for): P from registers, V MN-major (transpose bit 1); dv: the V tile's
// descriptor (mn_major).
template <typename T, int D>
__device__ __forceinline__ void issue_pv(float (&o)[D / 2], const unsigned (&p)[BKV / 16][4], unsigned long long dv) {
    using namespace fwg;
#pragma unroll
    for (int kk = 0; kk < BKV / 16; ++kk) wgmma::mma_rs<T, D, 1>(o, p[kk], desc_plus(dv, kk * 16 * 128));
}

// O / l, rounded once, into this thread's rows of O (those < L); lse = scale m + log l (natural, as
// the backward and PyTorch use it), -inf for a row that saw no key.
template <typename T, int D>
__device__ __forceinline__ void store_output(T* __restrict__ O, float* __restrict__ lse, const float (&o)[D / 2],
                                             const float (&m)[2], const float (&l)[2], const long long (&row)[2],
                                             long long L, int t, float scale) {
    using Op = wgmma::Op<T>;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float lsum = fwg::quad_sum(l[h]);
        if (row[h] >= L) continue;
        const float inv = lsum > 0.f ? 1.f / lsum : 0.f;
        T* out = O + row[h] * D + 2 * t;
#pragma unroll
        for (int jd = 0; jd < D / 8; ++jd)
            *reinterpret_cast<typename Op::T2*>(out + 8 * jd) =
                Op::pack(o[4 * jd + 2 * h] * inv, o[4 * jd + 2 * h + 1] * inv);
        if (t == 0) lse[row[h]] = lsum > 0.f ? m[h] * scale + logf(lsum) : FW_NEG_INF;
    }
}

template <typename T, int D>
__device__ __forceinline__ void flash_wgmma_fwd(const T* __restrict__ Q, const T* __restrict__ K,
                                                const T* __restrict__ V, T* __restrict__ O, float* __restrict__ lse,
                                                long long L, long long S, float scale, bool causal) {
#if WGMMA_OK
    using namespace fwg;
    using Op = wgmma::Op<T>;
    constexpr int NS = BKV / 2, NO = D / 2;        // accumulator floats a thread: S (64 x BKV), O (64 x D)
    constexpr int KV = Smem<D>::KV_BYTES;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    // the swizzle is a function of the absolute shared address: blocks must start 1024-aligned
    const unsigned raw = tc::smem_u32(smem_raw);
    const unsigned base = (raw + 1023u) & ~1023u;
    T* Qs = reinterpret_cast<T*>(smem_raw + (base - raw));          // [D / 64][BQ][64]
    T* Ks = Qs + BQ * D;                                            // [2][D / 64][BKV][64]
    T* Vs = Ks + 2 * BKV * D;                                       // [2][D / 64][BKV][64]
    const unsigned qs = base, ks = base + Smem<D>::Q_BYTES, vs = ks + 2 * KV;

    const int tid = threadIdx.x, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int wg = tid >> 7, warp = (tid >> 5) & 3;
    // descriptors: the warpgroup's rows of Q, K and V buffer 0 (buffer 1: + KV bytes)
    const unsigned long long dq = k_major(qs + 64 * wg * 128), dk = k_major(ks), dv = mn_major<BKV>(vs);
    // One block per (head, query tile), the query tiles of a head consecutive, so the blocks running
    // at once share a few heads' K and V in L2 (rung 2's grid puts the heads side by side instead).
    // Inside a head the last query tiles (longest under the causal mask) are launched first.
    const unsigned nq = (unsigned)((L + BQ - 1) / BQ);
    const long long bh = blockIdx.x / nq;
    const long long q0 = (long long)(nq - 1 - blockIdx.x % nq) * BQ;
    Q += bh * L * D; K += bh * S * D; V += bh * S * D; O += bh * L * D; lse += bh * L;
    const long long first_row = q0 + 64 * wg;                      // the warpgroup's first row
    const long long row[2] = {first_row + 16 * warp + g, first_row + 16 * warp + g + 8};
    const float sl2 = scale * FW_LOG2E;

    const long long kv_end = causal ? min(S, q0 + BQ) : S;
    const int ntiles = (int)((kv_end + BKV - 1) / BKV);
    // the warpgroup's tiles: under the causal mask, those not wholly above its last row
    const int mine = causal ? (int)min((long long)ntiles, (first_row + 63) / BKV + 1) : ntiles;
    auto load = [&](T* tiles, const T* src, int j) {               // tile j into buffer j % 2
        load_rows<T, BKV, D>(tiles + (j & 1) * BKV * D, src, (long long)j * BKV, S, tid);
    };
    load_rows<T, BQ, D>(Qs, Q, q0, L, tid);

    float o[NO];
#pragma unroll
    for (int i = 0; i < NO; ++i) o[i] = 0.f;
    float m[2] = {FW_NEG_INF, FW_NEG_INF};          // running max of the row's unscaled scores
    float l[2] = {0.f, 0.f};                        // this lane's part of the running sum
    float s[NS], alpha[2];
    unsigned p[BKV / 16][4];                        // P as wgmma A fragments, one per k16 slice of keys

#if !PIPELINE
    load(Ks, K, 0);
    load(Vs, V, 0);
    tc::cp_async_commit();
    for (int j = 0; j < ntiles; ++j) {
        // Tile j has landed (this thread's copies: the wait; made visible to the async proxy: the
        // fence; everyone's: the barrier). Past the barrier both warpgroups have also finished
        // tile j - 1 (their wgmma waits), so its buffers are refilled now with tile j + 1.
        tc::cp_async_wait<0>();
        fence_proxy_async();
        __syncthreads();
        if (j + 1 < ntiles) {
            load(Ks, K, j + 1);
            load(Vs, V, j + 1);
        }
        tc::cp_async_commit();
        if (j >= mine) continue;                    // every key of the tile is above the warpgroup's rows

        // 1. S = Q K^T
        wgmma::fence();
        issue_s<T, D>(s, dq, desc_plus(dk, (j & 1) * KV));
        wgmma::commit();
        wgmma::wait<0>();
        wgmma::pin_registers(s);
        // 2. the online softmax, O rescaled once
        online_softmax(s, m, l, alpha, (long long)j * BKV, S, causal, row, first_row, t, sl2);
        to_fragments<T>(p, s);
        rescale(o, alpha);
        // 3. O += P V
        wgmma::fence();                             // o and p were written by ordinary code
        issue_pv<T, D>(o, p, desc_plus(dv, (j & 1) * KV));
        wgmma::commit();
        wgmma::wait<0>();
        wgmma::pin_registers(o);
        pin_u32(p);                                 // no write of p moves above the wait
    }
#else
    // FlashAttention-3's intra-warpgroup pipelining: iteration j issues S(j + 1) = Q K(j+1)^T and
    // O += P(j) V(j) together, then does tile j + 1's softmax while O += P(j) V(j) still runs on the
    // tensor cores. So K runs one tile ahead of V: iteration j reads K(j + 1) and V(j), and its
    // copies fetch K(j + 2) and V(j + 1) into the buffers of K(j) and V(j - 1), which every
    // warpgroup finished with before the barrier (S(j) was waited for in iteration j - 1, or
    // before the loop; O += P(j-1) V(j-1) at the end of iteration j - 1).
    load(Ks, K, 0);
    tc::cp_async_commit();                          // group: Q, K(0)
    if (ntiles > 1) load(Ks, K, 1);
    load(Vs, V, 0);
    tc::cp_async_commit();                          // group: K(1), V(0)
    tc::cp_async_wait<1>();
    fence_proxy_async();
    __syncthreads();                                // Q and K(0) in place
    if (mine > 0) {
        wgmma::fence();
        issue_s<T, D>(s, dq, dk);
        wgmma::commit();
        wgmma::wait<0>();
        wgmma::pin_registers(s);
        online_softmax(s, m, l, alpha, 0, S, causal, row, first_row, t, sl2);   // (O = 0: no rescale)
        to_fragments<T>(p, s);
    }
    for (int j = 0; j < ntiles; ++j) {
        tc::cp_async_wait<0>();                     // K(j + 1), V(j) landed
        fence_proxy_async();
        __syncthreads();
        if (j + 2 < ntiles) load(Ks, K, j + 2);
        if (j + 1 < ntiles) load(Vs, V, j + 1);
        tc::cp_async_commit();
        if (j + 1 < mine) {                         // S(j + 1) and O += P(j) V(j), then softmax(j + 1)
            wgmma::fence();
            issue_s<T, D>(s, dq, desc_plus(dk, ((j + 1) & 1) * KV));
            wgmma::commit();
            issue_pv<T, D>(o, p, desc_plus(dv, (j & 1) * KV));
            wgmma::commit();
            wgmma::wait<1>();                       // S(j + 1) is done; O += P(j) V(j) may run on
            wgmma::pin_registers(s);
            online_softmax(s, m, l, alpha, (long long)(j + 1) * BKV, S, causal, row, first_row, t, sl2);
            wgmma::wait<0>();
            wgmma::pin_registers(o);
            pin_u32(p);                             // no write of p moves above the wait
            // only now, with O += P(j) V(j) done, may p and o be written (else ptxas serializes)
            rescale(o, alpha);
            to_fragments<T>(p, s);
        } else if (j + 1 == mine) {                 // the warpgroup's last tile: O += P(j) V(j) only
            wgmma::fence();
            issue_pv<T, D>(o, p, desc_plus(dv, (j & 1) * KV));
            wgmma::commit();
            wgmma::wait<0>();
            wgmma::pin_registers(o);
            pin_u32(p);
        }                                           // (later tiles lie wholly above the warpgroup's rows)
    }
#endif
    tc::cp_async_wait<0>();                         // (only empty groups can remain)

    store_output<T, D>(O, lse, o, m, l, row, L, t, scale);
#endif
}

// ---- TMA = 1: warp-specialized (FlashAttention-3's structure) ---------------------------------------
// 384 threads: warpgroup 0 is the producer (one thread issues every copy with the TMA copy engine,
// rung 13's way), warpgroups 1 and 2 are the consumers, each the cp.async kernel's loop (PIPELINE 0
// or 1) on its 64 rows. No
// __syncthreads() in the loop: K and V each have two buffers with a "full" mbarrier (the copies
// completed) and an "empty" one (all 8 consumer warps are done with it); each consumer warpgroup
// waits only for the data it needs next, and frees a buffer as soon as its wgmma.wait_group says
// the wgmmas reading it have finished. The producer fills K(j) and V(j) for j = 0, 1, ... as the
// buffers free up; a warpgroup whose rows end before tile j (causal) still waits for it to land
// and frees it, so that every buffer sees all 8 arrivals.
// Arguments: tensor maps of Q [BH][L][D], K and V [BH][S][D] (dims {D, rows, BH}, box {64, BQ or
// BKV, 1}, 128-byte swizzle: native/cuda/attention.py), then rung 2's O, lse, L, S, scale, causal.
template <typename T, int D>
__device__ __forceinline__ void flash_wgmma_tma_fwd(const tma::TensorMap& map_q, const tma::TensorMap& map_k,
                                                    const tma::TensorMap& map_v, T* __restrict__ O,
                                                    float* __restrict__ lse, long long L, long long S, float scale,
                                                    bool causal) {
#if WGMMA_OK
    using namespace fwg;
    using namespace tma;
    constexpr int NS = BKV / 2, NO = D / 2;
    constexpr int KV = Smem<D>::KV_BYTES;
    constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;   // 128 x 40 + 256 x 232 <= 65536 (setmaxnreg)
    constexpr int CONSUMER_WARPS = 8;                         // arrivals that free a K or V buffer
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long q_full, k_full[2], v_full[2], k_empty[2], v_empty[2];
    // the swizzle is a function of the absolute shared address: tiles must start 1024-aligned
    const unsigned base = (tc::smem_u32(smem_raw) + 1023u) & ~1023u;
    const unsigned qs = base, ks = base + Smem<D>::Q_BYTES, vs = ks + 2 * KV;
    auto at = [](unsigned long long& bar) { return tc::smem_u32(&bar); };

    const int tid = threadIdx.x;
    const unsigned nq = (unsigned)((L + BQ - 1) / BQ);             // the grid as the cp.async kernel's
    const long long bh = blockIdx.x / nq;
    const long long q0 = (long long)(nq - 1 - blockIdx.x % nq) * BQ;
    const long long kv_end = causal ? min(S, q0 + BQ) : S;
    const int ntiles = (int)((kv_end + BKV - 1) / BKV);

    if (tid == 0) {
        bar_init(at(q_full), 1);
        for (int b = 0; b < 2; ++b) {
            bar_init(at(k_full[b]), 1);                  // the producer's arrive (+ bytes)
            bar_init(at(v_full[b]), 1);
            bar_init(at(k_empty[b]), CONSUMER_WARPS);    // every consumer warp's
            bar_init(at(v_empty[b]), CONSUMER_WARPS);
        }
        bar_init_fence();
    }
    __syncthreads();

    if (tid < 128) {
        // ---- producer warpgroup: one thread issues every copy; the others only give registers back
        setmaxnreg_dec<PRODUCER_REGS>();
        if (tid == 0) {
            prefetch_map(map_q);
            prefetch_map(map_k);
            prefetch_map(map_v);
            bar_arrive_expect(at(q_full), Smem<D>::Q_BYTES);     // whole boxes: zero fill counts too
            tma_tile<BQ, D>(qs, map_q, q0, bh, at(q_full));
            for (int j = 0; j < ntiles; ++j) {
                const int b = j & 1;
                const unsigned parity = ((j >> 1) & 1) ^ 1;       // the previous use of buffer b is done
                bar_wait(at(k_empty[b]), parity);
                bar_arrive_expect(at(k_full[b]), KV);
                tma_tile<BKV, D>(ks + b * KV, map_k, (long long)j * BKV, bh, at(k_full[b]));
                bar_wait(at(v_empty[b]), parity);
                bar_arrive_expect(at(v_full[b]), KV);
                tma_tile<BKV, D>(vs + b * KV, map_v, (long long)j * BKV, bh, at(v_full[b]));
            }
        }
    } else {
        // ---- consumer warpgroups: the cp.async kernel's loops, waiting on the full barriers
        setmaxnreg_inc<CONSUMER_REGS>();
        const int ctid = tid - 128, lane = ctid & 31, g = lane >> 2, t = lane & 3;
        const int wg = ctid >> 7, warp = (ctid >> 5) & 3;
        const unsigned long long dq = k_major(qs + 64 * wg * 128), dk = k_major(ks), dv = mn_major<BKV>(vs);
        const long long first_row = q0 + 64 * wg;
        const long long row[2] = {first_row + 16 * warp + g, first_row + 16 * warp + g + 8};
        const float sl2 = scale * FW_LOG2E;
        const int mine = causal ? (int)min((long long)ntiles, (first_row + 63) / BKV + 1) : ntiles;
        auto release = [&](unsigned long long& bar) {    // this warp is done with a buffer
            if (lane == 0) bar_arrive(at(bar));
        };

        float o[NO];
#pragma unroll
        for (int i = 0; i < NO; ++i) o[i] = 0.f;
        float m[2] = {FW_NEG_INF, FW_NEG_INF};
        float l[2] = {0.f, 0.f};
        float s[NS], alpha[2];
        unsigned p[BKV / 16][4];

        bar_wait(at(q_full), 0);
#if !PIPELINE
        for (int j = 0; j < mine; ++j) {
            const int b = j & 1;
            const unsigned parity = (j >> 1) & 1;
            bar_wait(at(k_full[b]), parity);
            wgmma::fence();
            issue_s<T, D>(s, dq, desc_plus(dk, b * KV));
            wgmma::commit();
            wgmma::wait<0>();
            wgmma::pin_registers(s);
            release(k_empty[b]);
            online_softmax(s, m, l, alpha, (long long)j * BKV, S, causal, row, first_row, t, sl2);
            to_fragments<T>(p, s);
            rescale(o, alpha);
            bar_wait(at(v_full[b]), parity);
            wgmma::fence();
            issue_pv<T, D>(o, p, desc_plus(dv, b * KV));
            wgmma::commit();
            wgmma::wait<0>();
            wgmma::pin_registers(o);
            pin_u32(p);
            release(v_empty[b]);
        }
#else
        if (mine > 0) {
            bar_wait(at(k_full[0]), 0);
            wgmma::fence();
            issue_s<T, D>(s, dq, dk);
            wgmma::commit();
            wgmma::wait<0>();
            wgmma::pin_registers(s);
            release(k_empty[0]);
            online_softmax(s, m, l, alpha, 0, S, causal, row, first_row, t, sl2);   // (O = 0: no rescale)
            to_fragments<T>(p, s);
        }
        for (int j = 0; j < mine; ++j) {
            const int b = j & 1, nb = (j + 1) & 1;
            if (j + 1 < mine) {                         // S(j + 1) and O += P(j) V(j), then softmax(j + 1)
                bar_wait(at(k_full[nb]), ((j + 1) >> 1) & 1);
                bar_wait(at(v_full[b]), (j >> 1) & 1);
                wgmma::fence();
                issue_s<T, D>(s, dq, desc_plus(dk, nb * KV));
                wgmma::commit();
                issue_pv<T, D>(o, p, desc_plus(dv, b * KV));
                wgmma::commit();
                wgmma::wait<1>();                       // S(j + 1) is done: K(j + 1)'s buffer is free
                wgmma::pin_registers(s);
                release(k_empty[nb]);
                online_softmax(s, m, l, alpha, (long long)(j + 1) * BKV, S, causal, row, first_row, t, sl2);
                wgmma::wait<0>();                       // O += P(j) V(j) is done: V(j)'s buffer is free
                wgmma::pin_registers(o);
                pin_u32(p);
                release(v_empty[b]);
                rescale(o, alpha);
                to_fragments<T>(p, s);
            } else {                                    // the warpgroup's last tile: O += P(j) V(j) only
                bar_wait(at(v_full[b]), (j >> 1) & 1);
                wgmma::fence();
                issue_pv<T, D>(o, p, desc_plus(dv, b * KV));
                wgmma::commit();
                wgmma::wait<0>();
                wgmma::pin_registers(o);
                pin_u32(p);
                release(v_empty[b]);
            }
        }
#endif
        // tiles wholly above the warpgroup's rows (causal): copied for the other warpgroup; once
        // they have landed (a buffer must not be refilled while a copy into it runs), free them
        for (int j = mine; j < ntiles; ++j) {
            const int b = j & 1;
            const unsigned parity = (j >> 1) & 1;
            bar_wait(at(k_full[b]), parity);
            release(k_empty[b]);
            bar_wait(at(v_full[b]), parity);
            release(v_empty[b]);
        }
        store_output<T, D>(O + bh * L * D, lse + bh * L, o, m, l, row, L, t, scale);
    }
#endif
}

// NWG x 128 threads, one block per SM: up to 255 registers a thread with 2 warpgroups, 168 with 3
// (S and O accumulators: BKV / 2 + D / 2 floats)
#define FLASH_WGMMA_ENTRY(T, SUF, D)                                                                     \
    extern "C" __global__ void __launch_bounds__(fwg::THREADS, 1) flash_wgmma_fwd_##SUF##_d##D(         \
        const T* Q, const T* K, const T* V, T* O, float* lse, long long L, long long S, float scale,    \
        bool causal) {                                                                                   \
        flash_wgmma_fwd<T, D>(Q, K, V, O, lse, L, S, scale, causal);                                     \
    }

// TMA = 1: 384 threads (a producer and two consumer warpgroups); __launch_bounds__(384, 1) sets the
// register cap at entry (168) that setmaxnreg redistributes from.
#define FLASH_WGMMA_TMA_ENTRY(T, SUF, D)                                                                 \
    extern "C" __global__ void __launch_bounds__(384, 1) flash_wgmma_tma_fwd_##SUF##_d##D(              \
        const __grid_constant__ tma::TensorMap map_q, const __grid_constant__ tma::TensorMap map_k,     \
        const __grid_constant__ tma::TensorMap map_v, T* O, float* lse, long long L, long long S,       \
        float scale, bool causal) {                                                                      \
        flash_wgmma_tma_fwd<T, D>(map_q, map_k, map_v, O, lse, L, S, scale, causal);                     \
    }

#if TMA
FLASH_WGMMA_TMA_ENTRY(__nv_bfloat16, bf16, 64)
FLASH_WGMMA_TMA_ENTRY(__half, f16, 64)
FLASH_WGMMA_TMA_ENTRY(__nv_bfloat16, bf16, 128)
FLASH_WGMMA_TMA_ENTRY(__half, f16, 128)
#else
FLASH_WGMMA_ENTRY(__nv_bfloat16, bf16, 64)
FLASH_WGMMA_ENTRY(__half, f16, 64)
#if NWG == 2        // 3 warpgroups: at most 168 registers a thread, too few for D = 128's accumulators
FLASH_WGMMA_ENTRY(__nv_bfloat16, bf16, 128)
FLASH_WGMMA_ENTRY(__half, f16, 128)
#endif
#endif
