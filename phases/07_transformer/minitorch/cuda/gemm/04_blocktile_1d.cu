// GENERATED from minitorch/cuda/gemm/04_blocktile_1d.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 05
// 04_blocktile_1d.cu - rung 4 of the GEMM ladder: 1D blocktiling (TM results per thread).
//
// What changes from rung 03, and why it is faster.
// In rung 03 every multiply-add needs two smem loads (As[tr][k] and Bs[k][tc]), so the kernel
// waits on shared memory, not on the FMA units. Here each thread computes TM = 8 results down a
// column of the C tile: for each k it loads ONE element of B into a register and reuses it for TM
// multiply-adds, each with an element of A (a broadcast: the whole warp reads the same one).
// That is TM + 1 smem loads for TM FMAs instead of 2 TM. With fewer threads per output the
// block can also cover a larger C tile (64 x 64 with 512 threads), so each element loaded from
// global memory serves more outputs (arithmetic intensity per block goes up).
// BK drops to 8 so that both tiles stay small (64 x 8 and 8 x 64: one element per thread each).
//
// Edges: tiles are zero-filled in smem outside M x K and K x N; only the final stores are guarded.
// Layouts: tile loads run fastest along the contiguous dimension (coalesced global reads for all
// four layouts). A 't' writes its tile down the columns of As; As rows are padded to BK + 1 so
// those writes hit different banks. B 't' writes down the columns of Bs (8 k at a time); Bs rows
// are padded by 32 / BK elements so that 8 rows x 4 columns of a warp land in 32 different banks.
// So 'nt', 'tn' and 'tt' should run close to 'nn' (same global traffic, same smem conflicts in the
// inner loop; their 32-byte global segments are less wide than the 128-byte rows of 'nn').
//
// Thread -> work mapping (block (NT, 1, 1), NT = BM * BN / TM = 512, grid (ceil(N/BN), ceil(M/BM), batch)):
//   thread t: tc = t % BN, tr = t / BN (0 .. BM/TM - 1); computes C[z][m0 + tr*TM + i, n0 + tc]
//   for i = 0 .. TM-1, with n0 = blockIdx.x * BN, m0 = tm * BM for tm = blockIdx.y, + gridDim.y,
//   ... (row tiles past the 65535 grid cap) and z = blockIdx.z, + gridDim.z, ... < batch.
//   A warp (32 consecutive t, same tr since BN >= 32) covers TM rows x 32 consecutive columns.
//   Loads, for each k0 = 0, BK, ... < K (flat index i = j * NT + t, j = 0 .. R*C/NT - 1):
//     As[r][c] = op(A)[m0 + r, k0 + c] (0 outside): 'n': r = i / BK, c = i % BK; 't': r = i % BM, c = i / BM.
//     Bs[r][c] = op(B)[k0 + r, n0 + c] (0 outside): 'n': r = i / BN, c = i % BN; 't': r = i % BK, c = i / BK.
//   Inner loop, k < BK: b = Bs[k][tc]; acc[i] += As[tr*TM + i][k] * b for i < TM.
//
// Arguments, layouts and batches: gemm.cuh.
#include "gemm.cuh"

// Tile sizes (compile with -DBM=... to change them): C tile BM x BN, K step BK, TM rows per thread.
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
// How many k steps of the inner loop the compiler unrolls. Fully unrolled (BK = 8) it hoists the
// smem loads of later steps into registers: 66 per thread, so only one block of 512 threads fits
// on an SM (65536 registers). 4 keeps it at <= 56: two blocks per SM, twice the warps to hide
// latency with.
#ifndef KUNROLL
#define KUNROLL 4
#endif
constexpr int kunroll = KUNROLL;     // #pragma unroll takes a constant expression, not a macro
#define NT (BM * BN / TM)                    // threads per block
#define SA (BK + 1)                          // row stride of As: odd, so a column spans 32 banks
#define SB (BN + (BK < 32 ? 32 / BK : 1))    // row stride of Bs: BK rows x 32/BK columns, 32 banks
static_assert(BM % TM == 0 && NT <= 1024, "BM / TM rows of threads, at most 1024 threads");
static_assert(BN % 32 == 0, "a warp must sit in one row of threads (its A reads are one broadcast)");
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
__device__ __forceinline__ void gemm_blocktile_1d(GEMM_PARAMS(T)) {
    __shared__ T As[BM * SA];            // op(A)[m0 .. m0+BM-1, k0 .. k0+BK-1], row-major
    __shared__ T Bs[BK * SB];            // op(B)[k0 .. k0+BK-1, n0 .. n0+BN-1], row-major
    const int tc = threadIdx.x % BN, tr = threadIdx.x / BN;
    const long long n0 = blockIdx.x * (long long)BN;
    const long long n = n0 + tc;
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
            T acc[TM];
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i] = T(0);
            for (long long k0 = 0; k0 < K; k0 += BK) {
                load_tile<T, BM, BK, SA, TA>(As, a, lda, m0, k0, M, K);
                load_tile<T, BK, BN, SB, TB>(Bs, b, ldb, k0, n0, K, N);
                __syncthreads();             // both tiles complete before anyone reads them
#pragma unroll (kunroll)
                for (int k = 0; k < BK; ++k) {
                    const T bk = Bs[k * SB + tc];        // one smem load, reused TM times
#pragma unroll
                    for (int i = 0; i < TM; ++i) acc[i] += As[(tr * TM + i) * SA + k] * bk;
                }
                __syncthreads();             // everyone done reading before the next loads overwrite
            }
            if (n < N) {
                const T bn = bias ? bias[n] : T(0);
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const long long m = m0 + tr * TM + i;
                    if (m < M) c[m * N + n] = bias ? acc[i] + bn : acc[i];
                }
            }
        }
    }
}

GEMM_ENTRIES(gemm_blocktile_1d, float, f32)
