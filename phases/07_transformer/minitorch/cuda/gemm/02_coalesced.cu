// GENERATED from minitorch/cuda/gemm/02_coalesced.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 05
// 02_coalesced.cu - rung 2 of the GEMM ladder: global-memory coalescing.
//
// What changes from rung 01, and why it is faster.
// A warp's 32 threads issue each load instruction together. When the 32 addresses fall in a few
// consecutive 32-byte sectors the memory system serves the warp with those few sectors (the loads
// are "coalesced"); when they are spread out, every thread costs a sector of its own. So WHICH
// threads of a warp compute WHICH elements of C decides how many bytes a load really moves.
//
// The classic naive kernel (siboehm's SGEMM article, kernel 1) lays threads out the other way
// round: threadIdx.x runs along m. The 32 threads of a warp then hold 32 different rows of C at
// one column: at each k they read A[m..m+31, k], 32 elements lda apart (32 sectors for 128 useful
// bytes), the same B[k, n] (one broadcast), and they write C down a column (32 sectors again).
// Rung 01 already runs x along n, so it is not that bad: its 16 x 16 block puts 2 rows x 16
// columns in a warp, which reads 2 broadcast elements of A and two 64-byte pieces of B rows.
// This rung finishes the job and makes the mapping explicit: a 1-D block of 32 * 32 = 1024
// threads computes a 32 x 32 tile of C, and thread t takes row t / 32 and column t % 32 of it.
// A warp (32 consecutive t) is then exactly one row of the C tile:
//   - it reads op(A)[m, k]: one address for the whole warp (one broadcast per k);
//   - it reads op(B)[k, n0 .. n0+31]: 128 consecutive bytes of a row of B (when B is 'n');
//   - it writes C[m, n0 .. n0+31]: 128 consecutive bytes, whole sectors.
// Each thread still reads 2K numbers from global memory for 2K flops; only the caches (L1, L2)
// save traffic. Rung 03 removes that by staging tiles in shared memory.
//
// Layouts: 'n' and 't' share the code; only the addresses differ (a_index/b_index in gemm.cuh).
// With B 't' (B[k, n] at n * ldb + k) the 32 columns of a warp are ldb apart: the reads of B are
// NOT coalesced, and 'nt'/'tt' are slower here (up to 32 sectors per warp load). A 't' changes
// nothing (the warp reads one element of A either way). Later rungs load B 't' through shared
// memory with k as the fast index.
//
// Thread -> work mapping (block (BM * BN, 1, 1), grid (ceil(N / BN), ceil(M / BM), batch)):
//   thread t of block (bx, by, z): tr = t / BN, tc = t % BN;
//   computes C[z][m, n] for m = by' * BM + tr, n = bx * BN + tc, for by' = by, by + gridDim.y, ...
//   (the grid's y is capped at 65535, so blocks loop over the row tiles that did not fit), and
//   for z = blockIdx.z, + gridDim.z, ... < batch. Threads with m >= M or n >= N do nothing
//   (no shared memory and no __syncthreads here, so they may leave early).
//   Reads: op(A)[m, 0..K-1] and op(B)[0..K-1, n], each element once per thread.
//
// Arguments, layouts and batches: gemm.cuh.
#include "gemm.cuh"

// The C tile of one block: BM rows x BN columns, one thread per element. Compile with -DBM=...
// -DBN=... for other sizes; BN = 32 makes a warp one row of the tile (the point of this rung),
// and BM * BN must stay <= 1024 (threads per block).
#ifndef BM
#define BM 32
#endif
#ifndef BN
#define BN 32
#endif
static_assert(BM * BN <= 1024, "one thread per element of the C tile: at most 1024 threads per block");

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void gemm_coalesced(GEMM_PARAMS(T)) {
    const int tr = threadIdx.x / BN;     // row of the C tile: the same for a whole warp (BN = 32)
    const int tc = threadIdx.x % BN;     // column: consecutive threads, consecutive columns
    const long long n = blockIdx.x * (long long)BN + tc;
    if (n >= N) return;                  // right edge tile (no barriers in this kernel)
    const long long tiles_m = (M + BM - 1) / BM;
    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);
        const T* a = A + off[0];
        const T* b = B + off[1];
        T* c = C + z * M * N;
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            const long long m = tm * BM + tr;
            if (m >= M) continue;        // bottom edge tile
            T acc = T(0);
            for (long long k = 0; k < K; ++k) acc += a[a_index<TA>(m, k, lda)] * b[b_index<TB>(k, n, ldb)];
            c[m * N + n] = bias ? acc + bias[n] : acc;
        }
    }
}

GEMM_ENTRIES(gemm_coalesced, float, f32)
