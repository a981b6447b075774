// GENERATED from minitorch/cuda/gemm/10_tf32_mma.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 05
// 10_tf32_mma.cu - rung 10 of the GEMM ladder: the multiplications move to the tensor cores (TF32).
//
// What changes from rung 09. Rung 09 fed shared-memory tiles through a cp.async pipeline to warps
// that each computed a warptile with FFMA, one multiply-add per thread per instruction. Here the
// same pipeline feeds `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`: ONE warp instruction
// multiplies a 16x8 piece of A by an 8x8 piece of B and adds the 16x8 product to float32
// accumulators - 1024 multiply-adds, which take 32 FFMA instructions per thread on the CUDA cores.
// The H100's tensor cores do TF32 about 7x faster than its CUDA cores do float32 (~495 vs ~67
// TFLOP/s dense), so the ceiling moves up and the kernel becomes a question of feeding them.
//
// TF32 is float32 with its 23-bit mantissa cut to 10 bits (same 8-bit exponent, so the same range):
// each input is rounded with cvt.rna.tf32.f32 as it goes into a fragment; products and sums stay
// float32. Relative error per product is about 2^-11 instead of 2^-24, which is why PyTorch (and
// MiniTorch) use this rung for float32 only when minitorch.backends.cuda.matmul.allow_tf32 is set.
//
// The block (256 threads = 8 warps) computes a BM x BN = 128 x 128 tile of C; the warps are laid
// out 2 x 4, each owning a 64 x 32 warptile = 4 x 4 mma tiles of 16 x 8, 64 float accumulators per
// thread. K advances BK = 32 at a time through STAGES = 3 shared-memory buffers: while the warps
// multiply tile kt, the copies of tiles kt+1 and kt+2 are in flight (cp.async, 16 bytes each,
// zero-filled past the edges of the matrices; 4-byte copies when a row is not 16-byte aligned).
//
// Fragment layout of m16n8k8 with .tf32 (PTX ISA, "Matrix Fragments for mma.m16n8k8"). In a warp,
// lane = 4*g + t: g = lane / 4 (groupID, 0..7) and t = lane % 4 (threadID_in_group, 0..3).
//     A (16 x 8, row major), 4 registers:  a0 = A[g][t]     a1 = A[g+8][t]
//                                          a2 = A[g][t+4]   a3 = A[g+8][t+4]
//     B (8 x 8, "col": indexed k, n), 2:   b0 = B[t][g]     b1 = B[t+4][g]
//     C, D (16 x 8 float32), 4:            c0 = C[g][2t]    c1 = C[g][2t+1]
//                                          c2 = C[g+8][2t]  c3 = C[g+8][2t+1]
// So the 4 lanes of a group share a row of A (and of C) and the 8 groups share a column of B:
//
//        k:  0  1  2  3 | 4  5  6  7                  n:  0   1   2  ...  7
//   A row 0: L0 L1 L2 L3 | L0 L1 L2 L3  (a0 | a2)    B k=0: L0  L4  L8 ... L28   (b0)
//   A row 1: L4 L5 L6 L7 | L4 L5 L6 L7                  k=1: L1  L5  L9 ... L29
//   ...                                                 ...
//   A row 8: L0 L1 L2 L3 | L0 L1 L2 L3  (a1 | a3)    B k=4: L0  L4  L8 ... L28   (b1)
//
// Shared memory. The tiles keep the layout they have in global memory (mma.cuh: a row of the smem
// tile is a run of unit-stride elements), padded so that a warp's fragment reads hit 32 different
// banks: a K-major tile (A 'n', B 't') has rows of BK + 4 floats, so lane (g, t) reads bank
// (4g + t + const) % 32; an M/N-major tile (A 't', B 'n') has rows of 128 + 8 (or 256 + 8)
// floats, so lane (g, t) reads bank (8t + g + const) % 32. Both are 32 distinct banks (no conflicts), and the row
// lengths stay multiples of 16 bytes, as cp.async's 16-byte copies need.
//
// Compile-time parameters (NVRTC -DNAME=value; the defaults are the configuration above, and
// native/cuda/gemm.py's TUNED_DEFAULTS["10_tf32_mma"] and _geometry mirror these rules):
//   BM, BN, BK    block tile (BM x BN of C, K in steps of BK); TF32_BN=256 is the old name of BN=256
//   WM, WN        warptile; the block has (BM/WM) x (BN/WN) warps, 32 * that threads
//   STAGES        cp.async ring depth (2..4)
//   FRAG_DB = 1   register double buffering: the fragments of k-step s+1 are read from smem while
//                 the mmas of step s issue, so the LDS latency hides behind tensor-core work
//                 instead of stalling the warp (Nsight's "wait"/"short_scoreboard" stalls). Costs
//                 two sets of fragments in registers (~170-230 in all: with two 256-thread blocks
//                 per SM, 128 registers, it spills, so MINB=1 or a one-block tile).
//   KPERM = 1     permuted k inside each k8 step: an mma sums over its 8 k in any order, as long as
//                 A and B agree, so lane slot t reads k = 2t and slot t+4 reads k = 2t+1. For a
//                 K-major tile (A 'n', B 't') a0/a2 (and b0/b1) are then neighbours: one 8-byte LDS
//                 instead of two 4-byte ones. Paddings change to stay conflict-free: K-major rows
//                 of BK + 8 floats (a half-warp's 8-byte reads: row offset 8g + 2t, 16 distinct
//                 pairs), M/N-major rows of BM + 4 / BN + 4 (rows 2t and 2t+1: bank 8t + g (+4)).
//   CVT_SMEM = 1  round to TF32 once per element, in shared memory: after its cp.async copies of a
//                 tile have landed (its own wait, before the barrier), each thread rewrites the
//                 chunks it copied as TF32 (16-byte load, 4 cvt, 16-byte store); fragments are then
//                 read as they are. Each element of A is read by BN/WN warps and each of B by
//                 BM/WM, so this does 1 cvt per element instead of 2-4, fewer instructions per mma.
//   GROUP_M       block rasterization (mma.cuh, tc::raster); 0 = plain order
//   MINB          minimum resident blocks per SM for __launch_bounds__: 0 = automatic (2 on sm_90
//                 when two blocks' smem fits, which caps registers at 65536 / (2 * threads)), 1 = 1
//
// Arguments, layouts and batches: gemm.cuh. Needs sm_80 (cp.async, tf32 mma).
#include "mma.cuh"

#ifdef TF32_BN          // the 128 x 256 rung's original option
#ifndef BN
#define BN TF32_BN
#endif
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN (BN / 4)
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef FRAG_DB
#define FRAG_DB 0
#endif
#ifndef KPERM
#define KPERM 0
#endif
#ifndef CVT_SMEM
#define CVT_SMEM 0
#endif
#ifndef GROUP_M
#define GROUP_M 0
#endif
#ifndef MINB
#define MINB 0
#endif

namespace tf32 {

constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
constexpr int THREADS = 32 * WARPS_M * WARPS_N;
constexpr int MT = WM / 16, NT = WN / 8;              // mma tiles per warptile: 4 x 4 by default
constexpr int KSTEPS = BK / 8;                        // mma k-steps per smem stage
// smem row lengths (floats), see the header.
constexpr int KPAD = BK + (KPERM ? 8 : 4), MPAD = BM + (KPERM ? 4 : 8), NPAD = BN + (KPERM ? 4 : 8);

// Where chunk q (4 floats) of row r of a tile starts, for rows of PAD floats.
template <int PAD>
struct Rows { static __device__ __forceinline__ int at(int r, int q) { return r * PAD + q * 4; } };
using KMajor = Rows<KPAD>;     // A 'n' (rows m), B 't' (rows n)
using MMajor = Rows<MPAD>;     // A 't' (rows k)
using NMajor = Rows<NPAD>;     // B 'n' (rows k)

constexpr int cmax(int x, int y) { return x > y ? x : y; }
constexpr int A_TILE = cmax(BM * KPAD, BK * MPAD);    // floats of A's slot: fits either layout
constexpr int B_TILE = cmax(BN * KPAD, BK * NPAD);
constexpr int STAGE = A_TILE + B_TILE;
constexpr int SMEM_BYTES = STAGES * STAGE * 4;        // native/cuda/gemm.py's Rung.smem (_geometry)
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 8 == 0, "warptiles of whole mma tiles");
static_assert(BK % 8 == 0 && BM % 4 == 0 && BN % 4 == 0, "k8 steps, 16-byte chunks");
static_assert(THREADS >= 64 && THREADS <= 512, "2 to 16 warps");
static_assert(STAGES >= 2 && STAGES <= 4, "2 to 4 stages");
static_assert(SMEM_BYTES <= 232448, "at most 227 KB of smem");

// Blocks per SM promised to the compiler: two when both fit in an sm_90 SM's 228 KB (each block
// also reserves 1 KB), which caps registers at 65536 / (2 * THREADS); one otherwise (an sm_80 SM's
// 164 KB holds one of the default blocks whatever the registers, so there they are left free).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr int MIN_BLOCKS = (MINB == 0 && 2 * (SMEM_BYTES + 1024) <= 233472) ? 2 : 1;
#else
constexpr int MIN_BLOCKS = 1;
#endif

__device__ __forceinline__ unsigned to_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// A fragment register from a float in smem: rounded here, or already TF32 there (CVT_SMEM).
__device__ __forceinline__ unsigned frag_bits(float x) {
    if constexpr (CVT_SMEM) return __float_as_uint(x);
    else return to_tf32(x);
}

// CVT_SMEM: round to TF32, in place, the chunks of a ROWS x COLS tile that thread `tid` copied
// (tc::load_tile's mapping: chunk q = tid % CPR of rows tid / CPR, + RSTEP, ...). Only after this
// thread's cp.async wait for the tile, and before the barrier that publishes it.
template <int ROWS, int COLS, class SMEM>
__device__ __forceinline__ void round_tile(float* tile, int tid) {
    constexpr int CPR = COLS / 4, RSTEP = THREADS / CPR;
    const int r = tid / CPR, q = tid % CPR;
#pragma unroll
    for (int i = 0; i < ROWS / RSTEP; ++i) {
        float4* p = reinterpret_cast<float4*>(tile + SMEM::at(r + i * RSTEP, q));
        float4 v = *p;
        v.x = __uint_as_float(to_tf32(v.x));
        v.y = __uint_as_float(to_tf32(v.y));
        v.z = __uint_as_float(to_tf32(v.z));
        v.w = __uint_as_float(to_tf32(v.w));
        *p = v;
    }
}

// op(A)[m, k] and op(B)[k, n] of one stage's tiles, m, k, n counted inside the tile.
template <bool TA>
__device__ __forceinline__ float a_at(const float* s, int m, int k) { return TA ? s[k * MPAD + m] : s[m * KPAD + k]; }
template <bool TB>
__device__ __forceinline__ float b_at(const float* s, int k, int n) { return TB ? s[n * KPAD + k] : s[k * NPAD + n]; }

// The A fragment of the mma tile whose row 0 is m (block-tile row) at k-step kk, for lane (g, t):
// a0 = A[m+g][k0], a1 = A[m+g+8][k0], a2 = A[m+g][k1], a3 = A[m+g+8][k1], with k0, k1 the
// physical k of slots t and t+4: kk+t, kk+t+4 (KPERM 0) or kk+2t, kk+2t+1 (KPERM 1).
template <bool TA>
__device__ __forceinline__ void frag_a(unsigned (&f)[4], const float* sa, int m, int kk, int g, int t) {
    if constexpr (KPERM && !TA) {          // K-major: (k0, k1) adjacent, 8-byte aligned (even offsets)
        const float2 lo = *reinterpret_cast<const float2*>(sa + (m + g) * KPAD + kk + 2 * t);
        const float2 hi = *reinterpret_cast<const float2*>(sa + (m + g + 8) * KPAD + kk + 2 * t);
        f[0] = frag_bits(lo.x); f[1] = frag_bits(hi.x); f[2] = frag_bits(lo.y); f[3] = frag_bits(hi.y);
    } else {
        const int k0 = KPERM ? kk + 2 * t : kk + t, k1 = KPERM ? kk + 2 * t + 1 : kk + t + 4;
        f[0] = frag_bits(a_at<TA>(sa, m + g, k0));
        f[1] = frag_bits(a_at<TA>(sa, m + g + 8, k0));
        f[2] = frag_bits(a_at<TA>(sa, m + g, k1));
        f[3] = frag_bits(a_at<TA>(sa, m + g + 8, k1));
    }
}
// The B fragment of the mma tile whose column 0 is n: b0 = B[k0][n+g], b1 = B[k1][n+g].
template <bool TB>
__device__ __forceinline__ void frag_b(unsigned (&f)[2], const float* sb, int n, int kk, int g, int t) {
    if constexpr (KPERM && TB) {
        const float2 v = *reinterpret_cast<const float2*>(sb + (n + g) * KPAD + kk + 2 * t);
        f[0] = frag_bits(v.x); f[1] = frag_bits(v.y);
    } else {
        const int k0 = KPERM ? kk + 2 * t : kk + t, k1 = KPERM ? kk + 2 * t + 1 : kk + t + 4;
        f[0] = frag_bits(b_at<TB>(sb, k0, n + g));
        f[1] = frag_bits(b_at<TB>(sb, k1, n + g));
    }
}

}  // namespace tf32

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void gemm_tf32_mma(GEMM_PARAMS(T)) {
    using namespace tf32;
    static_assert(sizeof(T) == 4, "float32 only");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    float* smem = reinterpret_cast<float*>(smem_raw);   // stage s: A tile at s*STAGE, B tile after it

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;   // the warptile inside the block tile
    long long bn, bm;                                   // this block's n-tile and first m-tile
    tc::raster<GROUP_M>(bn, bm);
    const long long n0 = bn * BN;
    const long long mtiles = (M + BM - 1) / BM;
    const int ktiles = (int)((K + BK - 1) / BK);        // < 2^31: a K-long row alone would not fit in memory otherwise

    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);
        const float* a = A + off[0];
        const float* b = B + off[1];
        float* c = C + z * M * N;
        const bool a_vec = tc::rows_aligned16(a, lda), b_vec = tc::rows_aligned16(b, ldb);

        for (long long mt = bm; mt < mtiles; mt += gridDim.y) {   // gridDim.y is capped at 65535
            const long long m0 = mt * BM;

            // Queue the copies of K-tile kt into stage s (rows/cols per mma.cuh's table).
            auto load_stage = [&](int kt, int s) {
                float* sa = smem + s * STAGE;
                float* sb = sa + A_TILE;
                const long long k0 = (long long)kt * BK;
                if constexpr (TA) tc::load_tile<float, BK, BM, THREADS, MMajor>(sa, a, lda, k0, K, m0, M, a_vec, tid);
                else    tc::load_tile<float, BM, BK, THREADS, KMajor>(sa, a, lda, m0, M, k0, K, a_vec, tid);
                if constexpr (TB) tc::load_tile<float, BN, BK, THREADS, KMajor>(sb, b, ldb, n0, N, k0, K, b_vec, tid);
                else    tc::load_tile<float, BK, BN, THREADS, NMajor>(sb, b, ldb, k0, K, n0, N, b_vec, tid);
            };

            float acc[MT][NT][4];
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

            // Prologue: tiles 0 .. STAGES-2 in flight. One commit per stage even when there is no
            // tile to load, so that "group kt" always means "tile kt" in the waits below.
#pragma unroll
            for (int s = 0; s < STAGES - 1; ++s) {
                if (s < ktiles) load_stage(s, s);
                tc::cp_async_commit();
            }

            int read = 0, write = STAGES - 1;               // stage of tile kt, stage of tile kt+STAGES-1
            for (int kt = 0; kt < ktiles; ++kt) {
                // Tile kt has landed once at most STAGES-2 newer groups are pending (this thread's
                // copies); the barrier makes every thread's copies visible, and also guarantees all
                // warps finished tile kt-1, whose stage (`write`) is refilled just below.
                tc::cp_async_wait<STAGES - 2>();
                if constexpr (CVT_SMEM) {        // this thread's chunks of tile kt, as TF32
                    float* ra = smem + read * STAGE;
                    if constexpr (TA) round_tile<BK, BM, MMajor>(ra, tid);
                    else              round_tile<BM, BK, KMajor>(ra, tid);
                    if constexpr (TB) round_tile<BN, BK, KMajor>(ra + A_TILE, tid);
                    else              round_tile<BK, BN, NMajor>(ra + A_TILE, tid);
                }
                __syncthreads();
                if (kt + STAGES - 1 < ktiles) load_stage(kt + STAGES - 1, write);
                tc::cp_async_commit();

                const float* sa = smem + read * STAGE;
                const float* sb = sa + A_TILE;
                if constexpr (FRAG_DB) {
                    // Register double buffering: the fragments of k-step s+1 load (into the other
                    // buffer) before the mmas of step s issue; all reads stay inside stage `read`,
                    // which no copy touches until every warp has passed the next barrier. Two steps
                    // per trip of a loop that is not unrolled: fully unrolled, the compiler would
                    // load every step's fragments up front (~250 registers and spills).
                    static_assert(!FRAG_DB || KSTEPS % 2 == 0, "FRAG_DB needs an even number of k8 steps (BK % 16 == 0)");
                    unsigned af0[MT][4], bf0[NT][2], af1[MT][4], bf1[NT][2];
#pragma unroll
                    for (int i = 0; i < MT; ++i) frag_a<TA>(af0[i], sa, wm + i * 16, 0, g, t);
#pragma unroll
                    for (int j = 0; j < NT; ++j) frag_b<TB>(bf0[j], sb, wn + j * 8, 0, g, t);
#pragma unroll 1
                    for (int kk = 0; kk < BK; kk += 16) {
#pragma unroll
                        for (int i = 0; i < MT; ++i) frag_a<TA>(af1[i], sa, wm + i * 16, kk + 8, g, t);
#pragma unroll
                        for (int j = 0; j < NT; ++j) frag_b<TB>(bf1[j], sb, wn + j * 8, kk + 8, g, t);
#pragma unroll
                        for (int j = 0; j < NT; ++j)
#pragma unroll
                            for (int i = 0; i < MT; ++i) mma(acc[i][j], af0[i], bf0[j]);
                        if (kk + 16 < BK) {
#pragma unroll
                            for (int i = 0; i < MT; ++i) frag_a<TA>(af0[i], sa, wm + i * 16, kk + 16, g, t);
#pragma unroll
                            for (int j = 0; j < NT; ++j) frag_b<TB>(bf0[j], sb, wn + j * 8, kk + 16, g, t);
                        }
#pragma unroll
                        for (int j = 0; j < NT; ++j)
#pragma unroll
                            for (int i = 0; i < MT; ++i) mma(acc[i][j], af1[i], bf1[j]);
                    }
                } else {
                    // Not unrolled: the fragments of one k-step at a time stay in registers (unrolled,
                    // the compiler loads all four steps' ahead and needs ~160 registers: one block per SM).
#pragma unroll 1
                    for (int kk = 0; kk < BK; kk += 8) {
                        unsigned af[MT][4];
#pragma unroll
                        for (int i = 0; i < MT; ++i) frag_a<TA>(af[i], sa, wm + i * 16, kk, g, t);
#pragma unroll
                        for (int j = 0; j < NT; ++j) {           // one B fragment at a time: fewer registers
                            unsigned bf[2];
                            frag_b<TB>(bf, sb, wn + j * 8, kk, g, t);
#pragma unroll
                            for (int i = 0; i < MT; ++i) mma(acc[i][j], af[i], bf);
                        }
                    }
                }
                read = read == STAGES - 1 ? 0 : read + 1;
                write = write == STAGES - 1 ? 0 : write + 1;
            }
            // All copies done (the trailing groups are empty) and every warp past its last read
            // before the next tile's prologue overwrites the stages.
            tc::cp_async_wait<0>();
            __syncthreads();

            // Epilogue: lane (g, t) holds C[g][2t, 2t+1] and C[g+8][2t, 2t+1] of each mma tile.
            // Two neighbouring floats go out as one 8-byte store when N is even (then every row
            // start, and 2t, are even: aligned); guarded one by one otherwise and at the edges.
            const bool pair = (N & 1) == 0;
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const long long col = n0 + wn + j * 8 + 2 * t;
                float b0 = 0.f, b1 = 0.f;
                if (bias) {
                    if (col < N) b0 = bias[col];
                    if (col + 1 < N) b1 = bias[col + 1];
                }
#pragma unroll
                for (int i = 0; i < MT; ++i) {
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const long long row = m0 + wm + i * 16 + g + 8 * h;
                        if (row >= M) continue;
                        const float v0 = acc[i][j][2 * h] + b0, v1 = acc[i][j][2 * h + 1] + b1;
                        float* p = c + row * N + col;
                        if (pair && col + 1 < N) {
                            *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
                        } else {
                            if (col < N) p[0] = v0;
                            if (col + 1 < N) p[1] = v1;
                        }
                    }
                }
            }
        }
    }
}

// THREADS threads (256 by default). On sm_90 (228 KB of smem per SM) two 128 x 128 blocks of 108 KB
// fit on an SM if each thread keeps to 128 registers: __launch_bounds__' second argument
// (tf32::MIN_BLOCKS) asks the compiler for that. An sm_80 SM (164 KB) holds one such block whatever
// the registers, so there it is left free to use more; so is the 128 x 256 tile (162 KB).
#define TF32_ENTRY(LA, LB, TA, TB)                                                                  \
    extern "C" __global__ void __launch_bounds__(tf32::THREADS, tf32::MIN_BLOCKS)                   \
        gemm_##LA##LB##_f32(GEMM_PARAMS(float)) {                                                   \
        gemm_tf32_mma<float, TA, TB>(A, B, C, bias, M, N, K, lda, ldb, batch, L);                   \
    }
TF32_ENTRY(n, n, false, false)
TF32_ENTRY(n, t, false, true)
TF32_ENTRY(t, n, true, false)
TF32_ENTRY(t, t, true, true)
