// GENERATED from minitorch/cuda/gemm/08_warptile.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 05
// 08_warptile.cu - rung 8 of the GEMM ladder: warptiling. The blocktile is split among the warps,
// each warp's tile among its 32 threads, so that the layer between block and thread matches how the
// hardware runs a block: as warps.
//
// What changes relative to rung 07: where a thread's C elements lie. In rung 07 thread t owns a
// TM x TN square of C at (t / (BN/TN), t % (BN/TN)), so the 32 threads of a warp own a 2 x 16 strip
// of squares and read shared memory at 16 places 32 bytes apart, which several lanes share a bank
// for (bank conflicts, extra shared-memory wavefronts). Here, three levels:
//   blocktile  BM x BN of C per block (NUM_THREADS threads), as before;
//   warptile   WM x WN of C per warp: the block has (BM/WM) x (BN/WN) warps;
//   thread     the warptile is computed as WMITER x WNITER sub-tiles of WSUBM x WSUBN
//              (WSUBM = WM/WMITER, WSUBN = WN/WNITER); in each sub-tile a thread owns TM x TN
//              elements, the 32 lanes laid out (WSUBM/TM) x (WSUBN/TN).
// So per k a thread reads WMITER*TM values of A and WNITER*TN values of B (all float4s) and does
// WMITER*TM * WNITER*TN FMAs on them. Why faster: (1) a warp's shared-memory reads are a few short
// contiguous runs that lanes share (broadcast) - WSUBN/TN lanes read one 16-byte word of As and
// WSUBM/TM lanes one of Bs - so no bank conflicts; (2) more FMAs per register loaded (128 per
// thread with the defaults) and more independent FMAs in flight per warp; (3) a warp's working set
// is a compact WM x WN square, which is also how the tensor-core rungs (10, 11) must split work.
// Loading is rung 07's: float4 global loads, A and B stored k-major ("A transposed") in shared
// memory, rows padded by 4 floats.
//
// Parameters (macros; the defaults: 256 threads = 8 warps of 64 x 32, each thread 8 x 8 of C in
// two 8 x 4 sub-tiles; 128 accumulators a thread (WN = 64, WNITER = 4, 128 threads) is another
// good point on the H100 for this rung, but with rung 09's pipeline it no longer fits in 255
// registers without spills):
//   BM, BN, BK   blocktile and k-slice; WM, WN warptile; WNITER sub-tiles along n; TM, TN thread
//   tile per sub-tile; WMITER = WM*WN / (32*TM*TN*WNITER) is derived, NUM_THREADS = 32 *
//   (BM/WM) * (BN/WN) is derived (may be given, must agree; at most 256, see rung 07).
//
// Thread -> data mapping: warp w = t / 32, lane l = t % 32; the warp's tile starts at row
// (w / (BN/WN)) * WM, column (w % (BN/WN)) * WN of the blocktile; lane l sits at row l / (WSUBN/TN),
// column l % (WSUBN/TN) of each sub-tile, and owns its TM x TN elements in all WMITER x WNITER
// sub-tiles: C row  wr*WM + wm*WSUBM + tr*TM + i,  column  wc*WN + wn*WSUBN + tc*TN + j.
// Loading (all threads, rung 07's loader): float4 v = t + i*NUM_THREADS of the tile, coalesced
// along the operand's contiguous dimension.
// Edges, alignment, layouts (all four; 'nt' pays transposed scalar stores of A in shared memory),
// batches, bias: as in rung 07.
//
// Arguments, layouts and batches: gemm.cuh.
#include "gemm.cuh"

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 32
#endif
#ifndef WNITER
#define WNITER 2
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 4
#endif
#ifndef NUM_THREADS
#define NUM_THREADS (32 * (BM / WM) * (BN / WN))
#endif

namespace rung08 {

constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);   // sub-tiles along m
constexpr int WSUBM = WM / WMITER;                             // a sub-tile: WSUBM x WSUBN
constexpr int WSUBN = WN / WNITER;
constexpr int SA = BM + 4;      // floats per k-row of the A tile in shared memory (padded)
constexpr int SB = BN + 4;      // same for B

static_assert(BM % WM == 0 && BN % WN == 0, "the warptile must divide the blocktile");
static_assert(NUM_THREADS == 32 * (BM / WM) * (BN / WN), "NUM_THREADS must be 32 * (BM/WM) * (BN/WN)");
static_assert(NUM_THREADS <= 256, "at most 256 threads: any register count then fits an SM");
static_assert(WMITER >= 1 && (WM * WN) % (32 * TM * TN * WNITER) == 0,
              "a warptile must hold a whole number of 32-thread sub-tiles");
static_assert(WM % WMITER == 0 && WN % WNITER == 0, "sub-tiles must divide the warptile");
static_assert(WSUBM % TM == 0 && WSUBN % TN == 0 && (WSUBM / TM) * (WSUBN / TN) == 32,
              "the 32 lanes must tile a sub-tile exactly");
static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are read from shared memory as float4s");
static_assert(BK % 4 == 0 && BM % 4 == 0 && BN % 4 == 0, "tiles are loaded as float4s");
static_assert(BK * (SA + SB) * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");

// The 4 neighbours x[o*ld + i .. o*ld + i+3] (i a multiple of 4), 0 where o >= O or i+j >= I. One
// 16-byte load when `vec` (ld % 4 == 0 and x 16-byte aligned) and all 4 are inside the matrix.
__device__ __forceinline__ float4 load4(const float* x, long long ld, long long o, long long i,
                                        long long O, long long I, bool vec) {
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (o < O) {
        const float* p = x + o * ld + i;
        if (vec && i + 4 <= I) {
            v = __ldg(reinterpret_cast<const float4*>(p));
        } else {
            if (i < I) v.x = __ldg(p);
            if (i + 1 < I) v.y = __ldg(p + 1);
            if (i + 2 < I) v.z = __ldg(p + 2);
            if (i + 3 < I) v.w = __ldg(p + 3);
        }
    }
    return v;
}

// Copies the BR x BK tile (operand rows r0.., k0..) of one operand into Xs, k-major: element
// (r, k) at Xs[k * S + r]. ALONG_K: the operand's contiguous dimension is k (x[r*ld + k]: A 'n',
// B 't'), else it is r (x[k*ld + r]: A 't', B 'n'). R, K bound the operand; outside gives 0.
template <int BR, int S, bool ALONG_K>
__device__ __forceinline__ void load_tile(const float* x, long long ld, long long r0, long long k0,
                                          long long R, long long K, bool vec, float* Xs, int tid) {
    constexpr int VECS = BR * BK / 4;                       // float4s in the tile
#pragma unroll
    for (int i = 0; i < (VECS + NUM_THREADS - 1) / NUM_THREADS; ++i) {
        const int v = tid + i * NUM_THREADS;
        if (VECS % NUM_THREADS == 0 || v < VECS) {
            if (ALONG_K) {      // 4 neighbours along k of row r: stored transposed, one by one
                const int r = v / (BK / 4), k = (v % (BK / 4)) * 4;
                const float4 f = load4(x, ld, r0 + r, k0 + k, R, K, vec);
                Xs[(k + 0) * S + r] = f.x;
                Xs[(k + 1) * S + r] = f.y;
                Xs[(k + 2) * S + r] = f.z;
                Xs[(k + 3) * S + r] = f.w;
            } else {            // 4 neighbours along r of k-row k: stored as they are
                const int k = v / (BR / 4), r = (v % (BR / 4)) * 4;
                *reinterpret_cast<float4*>(&Xs[k * S + r]) = load4(x, ld, k0 + k, r0 + r, K, R, vec);
            }
        }
    }
}

__device__ __forceinline__ bool aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15) == 0;
}

// Epilogue: the thread's WMITER x WNITER sub-tiles of TM x TN accumulators (+ bias) into C, 4
// columns at a time (float4 stores when vec_c: N % 4 == 0 and C aligned), rows >= M and columns
// >= N skipped. a_col / b_col: the thread's first row / column inside the blocktile.
__device__ __forceinline__ void store_tile(const float (&acc)[WMITER * TM][WNITER * TN], float* c,
                                           const float* bias, long long M, long long N, long long m0,
                                           long long n0, int a_col, int b_col, bool vec_c) {
#pragma unroll
    for (int wn = 0; wn < WNITER; ++wn) {
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const long long n = n0 + b_col + wn * WSUBN + j;
            float bv[4];                                       // this column group's bias, read once
#pragma unroll
            for (int q = 0; q < 4; ++q) bv[q] = (bias != nullptr && n + q < N) ? bias[n + q] : 0.f;
#pragma unroll
            for (int wm = 0; wm < WMITER; ++wm) {
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const long long m = m0 + a_col + wm * WSUBM + i;
                    if (m < M) {
                        const float* s = &acc[wm * TM + i][wn * TN + j];
                        const float4 v = make_float4(s[0] + bv[0], s[1] + bv[1], s[2] + bv[2], s[3] + bv[3]);
                        float* p = c + m * N + n;
                        if (vec_c && n < N) {                  // N % 4 == 0: n + 3 < N too
                            *reinterpret_cast<float4*>(p) = v;
                        } else {
                            if (n < N) p[0] = v.x;
                            if (n + 1 < N) p[1] = v.y;
                            if (n + 2 < N) p[2] = v.z;
                            if (n + 3 < N) p[3] = v.w;
                        }
                    }
                }
            }
        }
    }
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void gemm_warptile(GEMM_PARAMS(T)) {
    static_assert(sizeof(T) == 4, "float32 only: tiles move as float4");
    __shared__ __align__(16) float As[BK * SA];
    __shared__ __align__(16) float Bs[BK * SB];
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wr = warp / (BN / WN), wc = warp % (BN / WN);          // the warp's tile in the block
    const int tr = lane / (WSUBN / TN), tc = lane % (WSUBN / TN);    // the lane's place in a sub-tile
    const int a_col = wr * WM + tr * TM;          // + wm * WSUBM + i: a row of the blocktile
    const int b_col = wc * WN + tc * TN;          // + wn * WSUBN + j: a column of the blocktile
    const long long n0 = (long long)blockIdx.x * BN;
    const long long row_tiles = (M + BM - 1) / BM;
    const bool vec_c = N % 4 == 0 && aligned16(C);             // then every row of C is aligned too

    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);
        const float* a = A + off[0];
        const float* b = B + off[1];
        float* c = C + z * M * N;
        const bool vec_a = lda % 4 == 0 && aligned16(a);
        const bool vec_b = ldb % 4 == 0 && aligned16(b);
        for (long long mt = blockIdx.y; mt < row_tiles; mt += gridDim.y) {   // grid y is capped
            const long long m0 = mt * BM;
            float acc[WMITER * TM][WNITER * TN];
#pragma unroll
            for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
                for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = 0.f;

            for (long long k0 = 0; k0 < K; k0 += BK) {
                load_tile<BM, SA, !TA>(a, lda, m0, k0, M, K, vec_a, As, tid);
                load_tile<BN, SB, TB>(b, ldb, n0, k0, N, K, vec_b, Bs, tid);
                __syncthreads();                               // tiles complete before anyone reads
#pragma unroll
                for (int k = 0; k < BK; ++k) {
                    float ra[WMITER * TM], rb[WNITER * TN];
#pragma unroll
                    for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
                        for (int i = 0; i < TM; i += 4) {
                            const float4 f = *reinterpret_cast<const float4*>(&As[k * SA + a_col + wm * WSUBM + i]);
                            float* r = &ra[wm * TM + i];
                            r[0] = f.x; r[1] = f.y; r[2] = f.z; r[3] = f.w;
                        }
#pragma unroll
                    for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                        for (int j = 0; j < TN; j += 4) {
                            const float4 f = *reinterpret_cast<const float4*>(&Bs[k * SB + b_col + wn * WSUBN + j]);
                            float* r = &rb[wn * TN + j];
                            r[0] = f.x; r[1] = f.y; r[2] = f.z; r[3] = f.w;
                        }
#pragma unroll
                    for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
                        for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
                }
                __syncthreads();                               // all reads done before the next load
            }
            store_tile(acc, c, bias, M, N, m0, n0, a_col, b_col, vec_c);
        }
    }
}

}  // namespace rung08

GEMM_ENTRIES(rung08::gemm_warptile, float, f32)
