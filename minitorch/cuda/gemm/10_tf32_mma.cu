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
// Arguments, layouts and batches: gemm.cuh. Needs sm_80 (cp.async, tf32 mma).
#include "mma.cuh"

namespace tf32 {

// TF32_BN (an NVRTC option, -DTF32_BN=256) widens the block tile to 128 x 256 and the warptiles to
// 64 x 64: each fragment read from smem then feeds 8 mmas instead of 4, which halves the smem bytes
// per mma (192 -> 128 B: at 128 B per clock an SM's smem keeps its tensor cores busy only with the
// wider tile), for 128 accumulators a thread and one block per SM. Which wins is measured
// (benchmarks/bench_gemm.py), so both are rungs in native/cuda/gemm.py.
#ifndef TF32_BN
#define TF32_BN 128
#endif
constexpr int BM = 128, BN = TF32_BN, BK = 32, STAGES = 3;
constexpr int THREADS = 256, WARPS_N = 4;             // 8 warps: 2 along m, 4 along n
constexpr int WM = 64, WN = BN / WARPS_N;             // warptile: 64 x 32 (or 64 x 64)
constexpr int MT = WM / 16, NT = WN / 8;              // mma tiles per warptile: 4 x 4 (or 4 x 8)
// smem row lengths (floats), see the header: BM + 8 and BN + 8 are 8 more than a multiple of 32.
constexpr int KPAD = BK + 4, MPAD = BM + 8, NPAD = BN + 8;

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
constexpr int SMEM_BYTES = STAGES * STAGE * 4;        // native/cuda/gemm.py's Rung.smem
static_assert(BM == 128 && (BN == 128 || BN == 256), "tiles of 128 x 128 or 128 x 256");
static_assert(SMEM_BYTES == (BN == 128 ? 110592 : 165888), "keep Rung.smem in native/cuda/gemm.py in step");

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

// op(A)[m, k] and op(B)[k, n] of one stage's tiles, m, k, n counted inside the tile.
template <bool TA>
__device__ __forceinline__ float a_at(const float* s, int m, int k) { return TA ? s[k * MPAD + m] : s[m * KPAD + k]; }
template <bool TB>
__device__ __forceinline__ float b_at(const float* s, int k, int n) { return TB ? s[n * KPAD + k] : s[k * NPAD + n]; }

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
    const long long n0 = blockIdx.x * (long long)BN;
    const long long mtiles = (M + BM - 1) / BM;
    const int ktiles = (int)((K + BK - 1) / BK);        // < 2^31: a K-long row alone would not fit in memory otherwise

    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);
        const float* a = A + off[0];
        const float* b = B + off[1];
        float* c = C + z * M * N;
        const bool a_vec = tc::rows_aligned16(a, lda), b_vec = tc::rows_aligned16(b, ldb);

        for (long long mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {   // gridDim.y is capped at 65535
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
                __syncthreads();
                if (kt + STAGES - 1 < ktiles) load_stage(kt + STAGES - 1, write);
                tc::cp_async_commit();

                const float* sa = smem + read * STAGE;
                const float* sb = sa + A_TILE;
                // Not unrolled: the fragments of one k-step at a time stay in registers (unrolled,
                // the compiler loads all four steps' ahead and needs ~160 registers: one block per SM).
#pragma unroll 1
                for (int kk = 0; kk < BK; kk += 8) {
                    unsigned af[MT][4];
#pragma unroll
                    for (int i = 0; i < MT; ++i) {
                        const int m = wm + i * 16 + g;
                        af[i][0] = to_tf32(a_at<TA>(sa, m, kk + t));
                        af[i][1] = to_tf32(a_at<TA>(sa, m + 8, kk + t));
                        af[i][2] = to_tf32(a_at<TA>(sa, m, kk + t + 4));
                        af[i][3] = to_tf32(a_at<TA>(sa, m + 8, kk + t + 4));
                    }
#pragma unroll
                    for (int j = 0; j < NT; ++j) {           // one B fragment at a time: fewer registers
                        const int n = wn + j * 8 + g;
                        const unsigned bf[2] = {to_tf32(b_at<TB>(sb, kk + t, n)), to_tf32(b_at<TB>(sb, kk + t + 4, n))};
#pragma unroll
                        for (int i = 0; i < MT; ++i) mma(acc[i][j], af[i], bf);
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

// 256 threads. On sm_90 (228 KB of smem per SM) two 128 x 128 blocks of 108 KB fit on an SM if
// each thread keeps to 128 registers: __launch_bounds__' second argument asks the compiler for
// that. An sm_80 SM (164 KB) holds one such block whatever the registers, so there it is left free
// to use more; so is the 128 x 256 tile (162 KB), one block per SM anywhere.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && TF32_BN == 128
#define TF32_BLOCKS_PER_SM 2
#else
#define TF32_BLOCKS_PER_SM 1
#endif
#define TF32_ENTRY(LA, LB, TA, TB)                                                                  \
    extern "C" __global__ void __launch_bounds__(256, TF32_BLOCKS_PER_SM)                           \
        gemm_##LA##LB##_f32(GEMM_PARAMS(float)) {                                                   \
        gemm_tf32_mma<float, TA, TB>(A, B, C, bias, M, N, K, lda, ldb, batch, L);                   \
    }
TF32_ENTRY(n, n, false, false)
TF32_ENTRY(n, t, false, true)
TF32_ENTRY(t, n, true, false)
TF32_ENTRY(t, t, true, true)
