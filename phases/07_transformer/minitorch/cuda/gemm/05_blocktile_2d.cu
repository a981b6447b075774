// GENERATED from minitorch/cuda/gemm/05_blocktile_2d.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 05
// 05_blocktile_2d.cu - rung 5 of the GEMM ladder: 2D blocktiling (a TM x TN register tile per thread).
//
// What changes from rung 04, and why it is faster.
// Rung 04 reused one element of B for TM outputs. Here each thread computes a TM x TN = 8 x 8
// square of C. For each k it copies TM elements of a column of As and TN elements of a row of Bs
// into registers, then does all TM * TN multiply-adds between them (an outer product): TM + TN = 16
// smem loads for 64 FMAs, against 9 loads for 8 FMAs in rung 04. The C tile per block grows to
// 128 x 128 (256 threads), so each element fetched from global memory serves 128 outputs, and the
// 64 accumulators live in registers for the whole K loop.
// What is left: As and Bs are still read with scalar loads, and the thread's 8 columns are
// adjacent, so the Bs reads of a warp hit 4-way bank conflicts (16 different addresses, 8 words
// apart: only 4 banks). Rung 06 moves 16 bytes per load and spreads each thread's columns.
//
// This rung also has float64 entry points (gemm_nn_f64 ...), accumulating in double, so float64
// matmul has a tiled kernel (As 128 x 9 and Bs 8 x 132 elements: 8.6 KB of smem in float,
// 17.3 KB in double).
//
// Edges: tiles are zero-filled in smem outside M x K and K x N; only the final stores are guarded.
// Layouts: tile loads run fastest along the contiguous dimension, so global reads are coalesced for
// all four layouts; the 't' ones write their tiles down smem columns, and the padding (As rows
// BK + 1, Bs rows BN + 32 / BK) spreads those writes over the 32 banks. Their global reads come
// in 32-byte pieces (8 k of one row) rather than 512-byte rows, so 'nt', 'tn', 'tt' may be a
// little slower than 'nn'.
//
// Thread -> work mapping (block (NT, 1, 1), NT = (BM/TM) * (BN/TN) = 256,
//                         grid (ceil(N/BN), ceil(M/BM), batch)):
//   thread t: tc = t % (BN/TN), tr = t / (BN/TN); computes C[z][m0 + tr*TM + i, n0 + tc*TN + j]
//   for i < TM, j < TN, with n0 = blockIdx.x * BN, m0 = tm * BM for tm = blockIdx.y, + gridDim.y,
//   ... (row tiles past the 65535 grid cap) and z = blockIdx.z, + gridDim.z, ... < batch.
//   Loads, for each k0 = 0, BK, ... < K (flat index i = j * NT + t, j = 0 .. R*C/NT - 1 = 0 .. 3):
//     As[r][c] = op(A)[m0 + r, k0 + c] (0 outside): 'n': r = i / BK, c = i % BK; 't': r = i % BM, c = i / BM.
//     Bs[r][c] = op(B)[k0 + r, n0 + c] (0 outside): 'n': r = i / BN, c = i % BN; 't': r = i % BK, c = i / BK.
//   Inner loop, k < BK: ra[i] = As[tr*TM + i][k], rb[j] = Bs[k][tc*TN + j], acc[i][j] += ra[i] * rb[j].
//
// Arguments, layouts and batches: gemm.cuh.
#include "gemm.cuh"

// Tile sizes (compile with -DBM=... to change them): C tile BM x BN, K step BK, TM x TN per thread.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
// How many k steps of the inner loop the compiler unrolls. Fully unrolled (8), it hoists the
// smem loads of later steps into registers: ~166 registers per thread for float (one block per
// SM) and spills for double. 1 keeps float at 128 registers (two blocks of 256 threads per SM)
// and double at ~220 without spills.
#ifndef KUNROLL
#define KUNROLL 1
#endif
constexpr int kunroll = KUNROLL;     // #pragma unroll takes a constant expression, not a macro
#define NT ((BM / TM) * (BN / TN))           // threads per block
#define SA (BK + 1)                          // row stride of As: odd, so a column spans 32 banks
#define SB (BN + (BK < 32 ? 32 / BK : 1))    // row stride of Bs: BK rows x 32/BK columns, 32 banks
static_assert(BM % TM == 0 && BN % TN == 0 && NT <= 1024, "whole thread tiles, at most 1024 threads");
static_assert((BM * BK) % NT == 0 && (BK * BN) % NT == 0, "every thread loads the same number of tile elements");

// s[r * SC + c] = X[r0 + r, c0 + c] for r < R, c < C, zero where r0 + r >= RMAX or c0 + c >= CMAX.
// X[r, c] lives at x[RC ? c * ld + r : r * ld + c] (RC: the row index r is the unit-stride one).
// The flat index runs fastest along the unit-stride index: a warp reads consecutive addresses.
// Called by every thread of the block; the caller puts __syncthreads() before the tile is read.
template <typename T, int R, int C, int SC, bool RC>
__device__ __forceinline__ void load_tile(T* s, const T* x, long long ld, long long r0, long long c0,
                                          long long RMAX, long long CMAX) {
#pragma unroll
    for (int j = 0; j < R * C / NT; ++j) {
        const int i = j * NT + threadIdx.x;
        const int r = RC ? i % R : i / C;
        const int c = RC ? i / R : i % C;
        const long long gr = r0 + r, gc = c0 + c;
        s[r * SC + c] = (gr < RMAX && gc < CMAX) ? x[RC ? gc * ld + gr : gr * ld + gc] : T(0);
    }
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void gemm_blocktile_2d(GEMM_PARAMS(T)) {
    __shared__ T As[BM * SA];            // op(A)[m0 .. m0+BM-1, k0 .. k0+BK-1], row-major
    __shared__ T Bs[BK * SB];            // op(B)[k0 .. k0+BK-1, n0 .. n0+BN-1], row-major
    const int tc = threadIdx.x % (BN / TN), tr = threadIdx.x / (BN / TN);
    const long long n0 = blockIdx.x * (long long)BN;
    const long long tiles_m = (M + BM - 1) / BM;
    // Every thread runs every loop below to the end (bounds depend on blockIdx and sizes only),
    // so all of them meet at each __syncthreads().
    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);
        const T* a = A + off[0];
        const T* b = B + off[1];
        T* c = C + z * M * N;
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            const long long m0 = tm * BM;
            T acc[TM][TN];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
            for (long long k0 = 0; k0 < K; k0 += BK) {
                load_tile<T, BM, BK, SA, TA>(As, a, lda, m0, k0, M, K);
                load_tile<T, BK, BN, SB, TB>(Bs, b, ldb, k0, n0, K, N);
                __syncthreads();             // both tiles complete before anyone reads them
                // >>> exercise 05.4: the register tile's outer product
                // hint: for each k < BK: copy As[tr*TM + i][k] (i < TM) and Bs[k][tc*TN + j] (j < TN) into two
                // hint: register arrays, then acc[i][j] += ra[i] * rb[j] for all TM x TN pairs (rows: SA, SB apart)
                // hint: loops over i and j fully unrolled (#pragma unroll): ra, rb and acc then live in registers
#pragma unroll (kunroll)
                for (int k = 0; k < BK; ++k) {
                    T ra[TM], rb[TN];        // a column of As and a row of Bs, in registers
#pragma unroll
                    for (int i = 0; i < TM; ++i) ra[i] = As[(tr * TM + i) * SA + k];
#pragma unroll
                    for (int j = 0; j < TN; ++j) rb[j] = Bs[k * SB + tc * TN + j];
#pragma unroll
                    for (int i = 0; i < TM; ++i)
#pragma unroll
                        for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
                }
                // <<< exercise
                __syncthreads();             // everyone done reading before the next loads overwrite
            }
            // Epilogue: bias once per column, then the guarded stores of the TM x TN results.
            T bn[TN];
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const long long n = n0 + tc * TN + j;
                bn[j] = (bias && n < N) ? bias[n] : T(0);
            }
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const long long m = m0 + tr * TM + i;
                if (m >= M) break;
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    const long long n = n0 + tc * TN + j;
                    if (n < N) c[m * N + n] = bias ? acc[i][j] + bn[j] : acc[i][j];
                }
            }
        }
    }
}

GEMM_ENTRIES(gemm_blocktile_2d, float, f32)
GEMM_ENTRIES(gemm_blocktile_2d, double, f64)
