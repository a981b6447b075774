// GENERATED from minitorch/cuda/gemm/03_smem_tiling.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 05
// 03_smem_tiling.cu - rung 3 of the GEMM ladder: shared-memory tiling.
//
// What changes from rung 02, and why it is faster.
// In rung 02 the 32 threads of a row of the C tile all read the same row of A, and the 32 rows
// all read the same columns of B: each element of A and B is fetched from global memory (or at
// best L1/L2) BM or BN times by one block. Here the block first copies a BM x BK tile of op(A)
// and a BK x BN tile of op(B) into shared memory (smem: on-chip, ~30 cycles, shared by the
// block), each element read from global memory ONCE, and then every thread does its BK
// multiply-adds from smem. Global traffic per block drops by a factor of BM (for B) and BN (for
// A) = 32. The price: two __syncthreads() per step of BK, so that no thread reads a tile before
// all of it is written, and no thread overwrites a tile while another still reads it.
// The kernel is now limited by smem bandwidth and by the loads-per-FMA ratio (2 smem loads for
// each multiply-add); rung 04 gives each thread several outputs to reuse what it loads.
//
// Edges: tiles that stick out past M, N or K are filled with zeros in smem, so the inner loop
// needs no test (a zero adds nothing), and only the final store is guarded.
//
// Layouts: each tile is loaded with the flat index running fastest along whichever dimension is
// contiguous in memory (k for A 'n', m for A 't', n for B 'n', k for B 't'), so the global reads
// of a warp are always consecutive addresses. The smem rows are padded by one element so that
// the transposed writes of the 't' layouts (a warp writing down a column of the tile) hit 32
// different banks. Same speed class for all four layouts.
//
// Thread -> work mapping (block (BM * BN, 1, 1) = 1024 threads, grid (ceil(N/BN), ceil(M/BM), batch)):
//   thread t: tr = t / BN, tc = t % BN; computes C[z][m0 + tr, n0 + tc] with n0 = blockIdx.x * BN,
//   m0 = tm * BM for tm = blockIdx.y, + gridDim.y, ... (row tiles past the 65535 grid cap), for
//   z = blockIdx.z, + gridDim.z, ... < batch.
//   Loads, for each k0 = 0, BK, 2 BK, ... < K (load_tile below, NT = BM * BN threads, flat index
//   i = j * NT + t for j = 0 .. R*C/NT - 1):
//     As[r][c] = op(A)[m0 + r, k0 + c]  (0 outside M x K): 'n': r = i / BK, c = i % BK;
//                                                          't': r = i % BM, c = i / BM.
//     Bs[r][c] = op(B)[k0 + r, n0 + c]  (0 outside K x N): 'n': r = i / BN, c = i % BN;
//                                                          't': r = i % BK, c = i / BK.
//   Then acc += sum over k < BK of As[tr][k] * Bs[k][tc] (a warp: one broadcast row of As,
//   32 consecutive elements of a row of Bs).
//
// Arguments, layouts and batches: gemm.cuh.
#include "gemm.cuh"

// Tile sizes (compile with -DBM=... to change them). BM * BN threads per block (<= 1024).
#ifndef BM
#define BM 32
#endif
#ifndef BN
#define BN 32
#endif
#ifndef BK
#define BK 32
#endif
#define NT (BM * BN)     // threads per block: one per element of the C tile
#define SA (BK + 1)      // row stride of the A tile in smem (padded: see "Layouts" above)
#define SB (BN + 1)      // row stride of the B tile in smem
static_assert(NT <= 1024, "one thread per element of the C tile: at most 1024 threads per block");
static_assert((BM * BK) % NT == 0 && (BK * BN) % NT == 0, "every thread loads the same number of tile elements");

// s[r * SC + c] = X[r0 + r, c0 + c] for r < R, c < C, zero where r0 + r >= RMAX or c0 + c >= CMAX.
// X[r, c] lives at x[RC ? c * ld + r : r * ld + c] (RC: the row index r is the unit-stride one).
// The NT threads of the block share the R * C elements; the flat index runs fastest along the
// unit-stride index, so a warp reads consecutive addresses whatever the layout. Called by every
// thread of the block (the caller puts __syncthreads() before the tile is read).
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
__device__ __forceinline__ void gemm_smem(GEMM_PARAMS(T)) {
    __shared__ T As[BM * SA];            // op(A)[m0 .. m0+BM-1, k0 .. k0+BK-1], row-major
    __shared__ T Bs[BK * SB];            // op(B)[k0 .. k0+BK-1, n0 .. n0+BN-1], row-major
    const int tr = threadIdx.x / BN, tc = threadIdx.x % BN;
    const long long n0 = blockIdx.x * (long long)BN;
    const long long n = n0 + tc;
    const long long tiles_m = (M + BM - 1) / BM;
    // No thread leaves early: all of them load tiles and meet at every __syncthreads(). The loop
    // bounds below depend only on blockIdx and the sizes, the same for the whole block.
    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);
        const T* a = A + off[0];
        const T* b = B + off[1];
        T* c = C + z * M * N;
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            const long long m0 = tm * BM;
            T acc = T(0);
            for (long long k0 = 0; k0 < K; k0 += BK) {
                // >>> exercise 05.3: the shared-memory tiled K loop
                // hint: one step of BK. load_tile (above) copies op(A)[m0.., k0..] into As and op(B)[k0.., n0..]
                // hint: into Bs, zeros past M, N, K; its last template argument: is the row index the unit-stride one
                // hint: __syncthreads() before reading the tiles (all written) and after (all read: the next step
                // hint: overwrites them); in between acc += As[tr][k] * Bs[k][tc] for k < BK (rows: SA, SB apart)
                // A 'n' / B 't': op's (row, col) -> memory (row, col) / (col, row): RC = TA / TB.
                load_tile<T, BM, BK, SA, TA>(As, a, lda, m0, k0, M, K);
                load_tile<T, BK, BN, SB, TB>(Bs, b, ldb, k0, n0, K, N);
                __syncthreads();             // both tiles complete before anyone reads them
#pragma unroll
                for (int k = 0; k < BK; ++k) acc += As[tr * SA + k] * Bs[k * SB + tc];
                __syncthreads();             // everyone done reading before the next loads overwrite
                // <<< exercise
            }
            const long long m = m0 + tr;
            if (m < M && n < N) c[m * N + n] = bias ? acc + bias[n] : acc;
        }
    }
}

GEMM_ENTRIES(gemm_smem, float, f32)
