// GENERATED from minitorch/cuda/transpose.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 02
// transpose.cu - out[j, i] = a[i, j] for an M x N matrix a, written to a contiguous N x M out.
//
// Two versions, to compare (benchmarks/bench_kernels.py times both):
//
//   transpose_naive_f32   one thread per element. A warp (32 threads along a row of a) reads 32
//                         neighbouring elements - one coalesced transaction - but writes them to
//                         32 different rows of out, M elements apart: 32 separate transactions.
//                         Half the traffic runs at a fraction of the bandwidth.
//
//   transpose_f32         the tiled version. A block stages a 32 x 32 tile in shared memory:
//                         it reads rows of the tile from a (coalesced), waits at __syncthreads(),
//                         then reads COLUMNS of the tile back out of shared memory and writes them
//                         as rows of out (coalesced too). The strided access now happens in shared
//                         memory, which has no transactions, only banks.
//
// Shared-memory banks: shared memory is 32 banks of 4 bytes; word w lives in bank w % 32. Reading
// a column of a 32 x 32 float tile touches words 0, 32, 64, ...: all bank 0, so the 32 reads
// queue one after another (a 32-way bank conflict). One spare column (32 x 33) shifts each row by
// one bank, and the column 0, 33, 66, ... hits 32 different banks.
//
// Blocks are TILE x ROWS = 32 x 8 threads; each thread copies TILE / ROWS = 4 elements of the tile,
// so a block has enough threads to hide latency without needing 1024 of them.
// The grid is (ceil(N / 32), min(ceil(M / 32), 65535)); the y dimension of a grid stops at 65535,
// so blocks loop over tile rows (tall matrices such as 10^7 x 1 work too).
//
// a may have any strides (s0 between rows, s1 between columns, in elements): transpose2d of a
// view needs no copy first. Reads are coalesced when s1 == 1.

#include "common.cuh"

#define TILE 32
#define ROWS 8

template <typename T>
__device__ __forceinline__ void transpose_tiled(const T* __restrict__ a, T* __restrict__ out, long long M,
                                                long long N, long long s0, long long s1) {
    // >>> exercise 02.5: the tiled transpose
    // hint: stage a TILE x TILE tile in shared memory: read rows of a, __syncthreads(), write columns as rows of out
    // hint: guard every read and write (the matrix need not be a multiple of 32); sync again before the next tile
    __shared__ T tile[TILE][TILE + 1];       // + 1: no bank conflicts on the column reads
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long col0 = blockIdx.x * (long long)TILE;          // first column of a in this tile
    const long long tiles_down = (M + TILE - 1) / TILE;
    for (long long t = blockIdx.y; t < tiles_down; t += gridDim.y) {
        const long long row0 = t * TILE;                          // first row of a in this tile
        // 1. tile[j][tx] = a[row0 + j, col0 + tx]: consecutive threads read consecutive columns
#pragma unroll
        for (int j = ty; j < TILE; j += ROWS) {
            const long long r = row0 + j, c = col0 + tx;
            if (r < M && c < N) tile[j][tx] = a[r * s0 + c * s1];
        }
        __syncthreads();                     // the whole tile is loaded before anyone reads it
        // 2. out[col0 + j, row0 + tx] = a[row0 + tx, col0 + j] = tile[tx][j]:
        //    consecutive threads write consecutive columns of out
#pragma unroll
        for (int j = ty; j < TILE; j += ROWS) {
            const long long r = col0 + j, c = row0 + tx;          // row and column of out
            if (r < N && c < M) out[r * M + c] = tile[tx][j];
        }
        __syncthreads();                     // everyone is done reading before the next tile lands
    }
    // <<< exercise
}

template <typename T>
__device__ __forceinline__ void transpose_naive(const T* __restrict__ a, T* __restrict__ out, long long M,
                                                long long N, long long s0, long long s1) {
    const long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;   // column of a
    if (c >= N) return;
    for (long long r = blockIdx.y * (long long)blockDim.y + threadIdx.y; r < M;
         r += (long long)gridDim.y * blockDim.y) {
        out[c * M + r] = a[r * s0 + c * s1];
    }
}

#define TRANSPOSE(T, SUF)                                                                            \
    extern "C" __global__ void transpose_##SUF(const T* __restrict__ a, T* __restrict__ out, long long M, \
                                               long long N, long long s0, long long s1) {           \
        transpose_tiled(a, out, M, N, s0, s1);                                                      \
    }                                                                                               \
    extern "C" __global__ void transpose_naive_##SUF(const T* __restrict__ a, T* __restrict__ out,  \
                                                     long long M, long long N, long long s0, long long s1) { \
        transpose_naive(a, out, M, N, s0, s1);                                                      \
    }

TRANSPOSE(float, f32)
TRANSPOSE(double, f64)
TRANSPOSE(long long, i64)
TRANSPOSE(bool, bool)
