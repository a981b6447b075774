// GENERATED from minitorch/cuda/gemm/11_half_mma.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 05
// 11_half_mma.cu - rung 11 of the GEMM ladder: bf16 and fp16 on the tensor cores, with ldmatrix
// and a swizzled (XOR) shared-memory layout.
//
// What changes from rung 10.
// 1. Inputs of 2 bytes (bfloat16 or float16): `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`
//    (or .f16) does a 16x16 by 16x8 product per warp instruction, twice rung 10's k8, and the H100
//    runs 16-bit tensor-core math at about twice the TF32 rate (~990 TFLOP/s dense). Half the
//    bytes per element also halve the global and shared-memory traffic per multiply-add. Products
//    are exact in float32 and the sums accumulate in float32; C is rounded once to the input type.
// 2. Fragments come out of shared memory with `ldmatrix`: one instruction per warp loads four 8x8
//    matrices of 16-bit elements (each lane gives the address of one 16-byte row) and delivers
//    them already in mma fragment order - 4 instructions per k16 step for the warp's A fragments
//    instead of 16 per-lane loads. `ldmatrix.trans` delivers the transposed matrix, so a tile
//    stored with m (or n) along its rows (A 't', B 'n') is read as easily as a K-major one.
// 3. No padding: a swizzled layout. ldmatrix reads 8 rows of 16 bytes at a time; with rows of 128
//    or 256 bytes the 8 rows would start in the same bank group (8-way conflict). Each row keeps
//    its 16-byte chunks but permutes them: chunk q of row r is stored at chunk position
//        q ^ (r % 8)
//    so the same logical chunk of 8 consecutive rows lands in 8 different positions = 8 different
//    groups of 4 banks: conflict-free ldmatrix, and cp.async's writes (8 consecutive threads fill 8
//    consecutive chunks of one row, permuted within the row) stay conflict-free too. Padding
//    would do the same at the cost of memory; the XOR costs one instruction.
//
// The block (256 threads = 8 warps, 2 along m x 4 along n) computes 128 x 128 of C; each warp a
// 64 x 32 warptile = 4 x 4 mma tiles, 64 float32 accumulators per thread (parameters below). K advances BK = 64
// elements (128 bytes) a step through STAGES = 3 cp.async buffers (96 KB), zero-filled at the
// edges; operands whose rows are not 16-byte aligned are copied element by element instead.
//
// Fragment layout of m16n8k16 with 16-bit inputs (PTX ISA, "Matrix Fragments for mma.m16n8k16
// with floating point type"). lane = 4*g + t: g = lane / 4 (0..7), t = lane % 4 (0..3). Each A
// and B register holds two neighbouring k (the lower k in the low 16 bits):
//     A (16 x 16), 4 registers:   a0 = A[g][2t, 2t+1]      a1 = A[g+8][2t, 2t+1]
//                                 a2 = A[g][2t+8, 2t+9]    a3 = A[g+8][2t+8, 2t+9]
//     B (16 x 8), 2 registers:    b0 = B[2t, 2t+1][g]      b1 = B[2t+8, 2t+9][g]
//     C, D (16 x 8 float32), 4:   c0, c1 = C[g][2t, 2t+1]  c2, c3 = C[g+8][2t, 2t+1]
// A is four 8x8 blocks (rows 0-7 / 8-15 x k 0-7 / 8-15), in each of which lane (g, t) holds row g,
// columns 2t, 2t+1: exactly what ldmatrix gives for one 8x8 matrix, whose row i address comes from
// lane 8*j + i for matrix j (.x4 loads matrices j = 0..3 into registers 0..3). So lanes 0-15 give
// rows 0-15 at k 0-7 and lanes 16-31 rows 0-15 at k 8-15 (A stored K-major). For B, read as the
// 8 x 16 matrix Bt[n][k], b0 and b1 are the same blocks: one .x4 loads two n8 tiles' b0, b1.
// With .trans, lane (g, t) gets elements (2t, g), (2t+1, g) of each stored 8x8 block: stored k
// by m (A 't') that is A[g][2t, 2t+1] again, and stored k by n (B 'n') it is B[2t, 2t+1][g].
//
// Compile-time parameters (NVRTC -DNAME=value; the defaults are the configuration above, and
// native/cuda/gemm.py's TUNED_DEFAULTS["11_half_mma"] and _geometry mirror these rules):
//   BM, BN        block tile (64, 128 or 256 each: a swizzled row needs at least 8 chunks); BK = 64
//                 (128 bytes: a K-major row is exactly 8 chunks); HALF_BN=256 is the old name of BN=256
//   WM, WN        warptile (WM a multiple of 16, WN of 16: one ldmatrix.x4 gives two n8 tiles of B);
//                 the block has (BM/WM) x (BN/WN) warps
//   STAGES        cp.async ring depth (2..4)
//   FRAG_DB = 1   register double buffering: the ldmatrix of k16 step s+1 issue (into a second set
//                 of fragment registers) before the mmas of step s, so their latency hides behind
//                 tensor-core work (Nsight's "wait"/"short_scoreboard" stalls). Needs ~190-210
//                 registers: with two 256-thread blocks per SM (128 registers) it spills, so MINB=1
//   GROUP_M       block rasterization (mma.cuh, tc::raster); 0 = plain order
//   MINB          minimum resident blocks per SM for __launch_bounds__: 0 = automatic (2 on sm_90
//                 when two blocks' smem fits), 1 = one (registers left free)
//
// Arguments, layouts and batches: gemm.cuh. Needs sm_80 (cp.async, ldmatrix, bf16 mma).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "mma.cuh"

#ifdef HALF_BN          // the 128 x 256 variant's original option
#ifndef BN
#define BN HALF_BN
#endif
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 64
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
#ifndef GROUP_M
#define GROUP_M 0
#endif
#ifndef MINB
#define MINB 0
#endif

namespace half_mma {

constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
constexpr int THREADS = 32 * WARPS_M * WARPS_N;
constexpr int MT = WM / 16, NT = WN / 8;               // mma tiles per warptile: 4 x 4 by default
constexpr int KSTEPS = BK / 16;                        // k16 steps per smem stage
constexpr int A_TILE = BM * BK, B_TILE = BN * BK;      // elements of each operand's tile (either layout)
constexpr int STAGE = A_TILE + B_TILE;
constexpr int SMEM_BYTES = STAGES * STAGE * 2;         // native/cuda/gemm.py's Rung.smem (_geometry)
static_assert(BK == 64, "K-major rows of 8 chunks: the swizzle below assumes BK = 64");
static_assert((BM == 64 || BM == 128 || BM == 256) && (BN == 64 || BN == 128 || BN == 256),
              "M/N-major rows of 8, 16 or 32 chunks");
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "warptiles of whole mma tile pairs");
static_assert(THREADS >= 64 && THREADS <= 512, "2 to 16 warps");
static_assert(STAGES >= 2 && STAGES <= 4, "2 to 4 stages");
static_assert(SMEM_BYTES <= 232448, "at most 227 KB of smem");

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr int MIN_BLOCKS = (MINB == 0 && 2 * (SMEM_BYTES + 1024) <= 233472) ? 2 : 1;
#else
constexpr int MIN_BLOCKS = 1;
#endif

// Chunk q (8 elements, 16 bytes) of row r of a tile with COLS elements per row (COLS >= 64, so
// a row has at least 8 chunks and the XOR stays inside the row).
template <int COLS>
struct Swizzled {
    static_assert(COLS >= 64, "at least 8 chunks a row");
    static __device__ __forceinline__ int at(int r, int q) { return r * COLS + ((q ^ (r & 7)) << 3); }
};
using KMajor = Swizzled<BK>;          // rows of BK = 64 k        (A 'n', B 't'): 8 chunks a row
using MMajor = Swizzled<BM>;          // rows of BM m             (A 't')
using NMajor = Swizzled<BN>;          // rows of BN n             (B 'n')

// The mma and ldmatrix wrappers live in mma.cuh (the attention kernels use them too).
using tc::Half;
using tc::ldmatrix_x4;

// Element offset (in the A tile) of the row this lane gives ldmatrix for the A fragments of the
// mma tile at rows m0.. m0+15 of the block tile, k step k0 (a multiple of 16). Matrix j = lane / 8
// holds rows 8*(j%2).. and k 8*(j/2).. (the order of a0..a3); i = lane % 8 is the row inside it.
template <bool TA>
__device__ __forceinline__ int a_row(int lane, int m0, int k0) {
    const int j = lane >> 3, i = lane & 7;
    if constexpr (!TA) {               // stored [m][k]: the row is an m, the chunk a k8 block
        const int m = m0 + ((j & 1) << 3) + i, q = (k0 >> 3) + (j >> 1);
        return KMajor::at(m, q);
    } else {                           // stored [k][m], read .trans: the row is a k, the chunk an m8 block
        const int k = k0 + ((j >> 1) << 3) + i, q = (m0 >> 3) + (j & 1);
        return MMajor::at(k, q);
    }
}
// Same for B, two n8 tiles at n0 and n0 + 8: matrix j holds n 8*(j/2).. and k 8*(j%2).., so the
// registers come out as b0, b1 of the tile at n0, then b0, b1 of the tile at n0 + 8.
template <bool TB>
__device__ __forceinline__ int b_row(int lane, int n0, int k0) {
    const int j = lane >> 3, i = lane & 7;
    if constexpr (TB) {                // stored [n][k]
        const int n = n0 + ((j >> 1) << 3) + i, q = (k0 >> 3) + (j & 1);
        return KMajor::at(n, q);
    } else {                           // stored [k][n], read .trans
        const int k = k0 + ((j & 1) << 3) + i, q = (n0 >> 3) + (j >> 1);
        return NMajor::at(k, q);
    }
}

}  // namespace half_mma

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void gemm_half_mma(GEMM_PARAMS(T)) {
    using namespace half_mma;
    using H = Half<T>;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    T* smem = reinterpret_cast<T*>(smem_raw);           // stage s: A tile at s*STAGE, B tile after it
    const unsigned smem_base = tc::smem_u32(smem);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;
    long long bn, bm;                                   // this block's n-tile and first m-tile
    tc::raster<GROUP_M>(bn, bm);
    const long long n0 = bn * BN;
    const long long mtiles = (M + BM - 1) / BM;
    const int ktiles = (int)((K + BK - 1) / BK);

    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);
        const T* a = A + off[0];
        const T* b = B + off[1];
        T* c = C + z * M * N;
        const bool a_vec = tc::rows_aligned16(a, lda), b_vec = tc::rows_aligned16(b, ldb);

        for (long long mt = bm; mt < mtiles; mt += gridDim.y) {   // gridDim.y is capped at 65535
            const long long m0 = mt * BM;

            auto load_stage = [&](int kt, int s) {
                T* sa = smem + s * STAGE;
                T* sb = sa + A_TILE;
                const long long k0 = (long long)kt * BK;
                if constexpr (TA) tc::load_tile<T, BK, BM, THREADS, MMajor>(sa, a, lda, k0, K, m0, M, a_vec, tid);
                else              tc::load_tile<T, BM, BK, THREADS, KMajor>(sa, a, lda, m0, M, k0, K, a_vec, tid);
                if constexpr (TB) tc::load_tile<T, BN, BK, THREADS, KMajor>(sb, b, ldb, n0, N, k0, K, b_vec, tid);
                else              tc::load_tile<T, BK, BN, THREADS, NMajor>(sb, b, ldb, k0, K, n0, N, b_vec, tid);
            };

            float acc[MT][NT][4];
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

            // Prologue: tiles 0 .. STAGES-2 in flight, one commit group per tile (empty when past K).
#pragma unroll
            for (int s = 0; s < STAGES - 1; ++s) {
                if (s < ktiles) load_stage(s, s);
                tc::cp_async_commit();
            }

            int read = 0, write = STAGES - 1;
            for (int kt = 0; kt < ktiles; ++kt) {
                // Tile kt is in (this thread's copies: wait; everyone's: the barrier), and every warp
                // is done with tile kt-1, whose stage `write` is refilled now.
                tc::cp_async_wait<STAGES - 2>();
                __syncthreads();
                if (kt + STAGES - 1 < ktiles) load_stage(kt + STAGES - 1, write);
                tc::cp_async_commit();

                const unsigned sa = smem_base + (unsigned)(read * STAGE) * 2u;   // byte addresses
                const unsigned sb = sa + A_TILE * 2u;
                if constexpr (FRAG_DB) {
                    // Register double buffering: the ldmatrix of k-step s+1 (into the other buffer)
                    // issue before the mmas of step s; all reads stay inside stage `read`, which no
                    // copy touches until every warp has passed the next barrier. Two steps per trip
                    // of a loop that is not unrolled: fully unrolled, the compiler keeps every
                    // step's addresses and fragments live at once (~250 registers and spills).
                    static_assert(!FRAG_DB || KSTEPS % 2 == 0, "k16 steps in pairs");
                    unsigned af0[MT][4], bf0[NT / 2][4], af1[MT][4], bf1[NT / 2][4];
                    auto frags = [&](unsigned (&af)[MT][4], unsigned (&bf)[NT / 2][4], int kk) {
#pragma unroll
                        for (int i = 0; i < MT; ++i) ldmatrix_x4<TA>(af[i], sa + 2u * a_row<TA>(lane, wm + i * 16, kk));
#pragma unroll
                        for (int jj = 0; jj < NT / 2; ++jj) ldmatrix_x4<!TB>(bf[jj], sb + 2u * b_row<TB>(lane, wn + jj * 16, kk));
                    };
                    auto mmas = [&](const unsigned (&af)[MT][4], const unsigned (&bf)[NT / 2][4]) {
#pragma unroll
                        for (int jj = 0; jj < NT / 2; ++jj) {
                            const unsigned b0[2] = {bf[jj][0], bf[jj][1]}, b1[2] = {bf[jj][2], bf[jj][3]};
#pragma unroll
                            for (int i = 0; i < MT; ++i) {
                                H::mma(acc[i][2 * jj], af[i], b0);
                                H::mma(acc[i][2 * jj + 1], af[i], b1);
                            }
                        }
                    };
                    frags(af0, bf0, 0);
#pragma unroll 1
                    for (int kk = 0; kk < BK; kk += 32) {
                        frags(af1, bf1, kk + 16);
                        mmas(af0, bf0);
                        if (kk + 32 < BK) frags(af0, bf0, kk + 32);
                        mmas(af1, bf1);
                    }
                } else {
#pragma unroll 1
                for (int kk = 0; kk < BK; kk += 16) {
                    unsigned af[MT][4];
#pragma unroll
                    for (int i = 0; i < MT; ++i) ldmatrix_x4<TA>(af[i], sa + 2u * a_row<TA>(lane, wm + i * 16, kk));
#pragma unroll
                    for (int jj = 0; jj < NT / 2; ++jj) {      // two n8 tiles per ldmatrix.x4
                        unsigned r[4];
                        ldmatrix_x4<!TB>(r, sb + 2u * b_row<TB>(lane, wn + jj * 16, kk));
                        const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
#pragma unroll
                        for (int i = 0; i < MT; ++i) {
                            H::mma(acc[i][2 * jj], af[i], b0);
                            H::mma(acc[i][2 * jj + 1], af[i], b1);
                        }
                    }
                }
                }
                read = read == STAGES - 1 ? 0 : read + 1;
                write = write == STAGES - 1 ? 0 : write + 1;
            }
            tc::cp_async_wait<0>();
            __syncthreads();                                 // stages free for the next tile's prologue

            // Epilogue: lane (g, t) holds C[g][2t, 2t+1] and C[g+8][2t, 2t+1] of each mma tile; add
            // the bias in float32, round once to T. Pairs go out as one 4-byte store when N is even.
            const bool pair = (N & 1) == 0;
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const long long col = n0 + wn + j * 8 + 2 * t;
                float b0 = 0.f, b1 = 0.f;
                if (bias) {
                    if (col < N) b0 = H::to_float(bias[col]);
                    if (col + 1 < N) b1 = H::to_float(bias[col + 1]);
                }
#pragma unroll
                for (int i = 0; i < MT; ++i) {
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const long long row = m0 + wm + i * 16 + g + 8 * h;
                        if (row >= M) continue;
                        const float v0 = acc[i][j][2 * h] + b0, v1 = acc[i][j][2 * h + 1] + b1;
                        T* p = c + row * N + col;
                        if (pair && col + 1 < N) {
                            *reinterpret_cast<typename H::T2*>(p) = H::pack(v0, v1);
                        } else {
                            if (col < N) p[0] = H::round(v0);
                            if (col + 1 < N) p[1] = H::round(v1);
                        }
                    }
                }
            }
        }
    }
}

// THREADS threads (256 by default); on sm_90 two 96 KB blocks share an SM if each thread keeps to 128
// registers (half_mma::MIN_BLOCKS, see 10_tf32_mma.cu). An sm_80 SM (164 KB of smem) holds one block whatever the registers; the
// 128 x 256 tile (144 KB) is one block per SM anywhere.
#define HALF_ENTRY(LA, LB, TA, TB, T, SUF)                                                          \
    extern "C" __global__ void __launch_bounds__(half_mma::THREADS, half_mma::MIN_BLOCKS)                           \
        gemm_##LA##LB##_##SUF(GEMM_PARAMS(T)) {                                                     \
        gemm_half_mma<T, TA, TB>(A, B, C, bias, M, N, K, lda, ldb, batch, L);                       \
    }
#define HALF_ENTRIES(T, SUF)                                                                        \
    HALF_ENTRY(n, n, false, false, T, SUF)                                                          \
    HALF_ENTRY(n, t, false, true, T, SUF)                                                           \
    HALF_ENTRY(t, n, true, false, T, SUF)                                                           \
    HALF_ENTRY(t, t, true, true, T, SUF)
HALF_ENTRIES(__nv_bfloat16, bf16)
HALF_ENTRIES(__half, f16)
