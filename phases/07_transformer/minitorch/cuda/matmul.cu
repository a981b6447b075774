// GENERATED from minitorch/cuda/matmul.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 02
// matmul.cu - the naive matrix product C = A @ B: one thread computes one element of C,
//   C[m, n] = sum over k of A[m, k] * B[k, n],
// for A [M, K] and B [K, N], in batches with broadcasting ([2, 1, M, K] @ [3, K, N] -> [2, 3, M, N]).
//
// Threads form 16 x 16 blocks on a 2-D grid: x runs along the columns n of C, y along the rows m.
// The 16 threads of a row of a block read 16 neighbouring elements of a row of B (coalesced) and
// all the same element of A (one broadcast load). Every thread reads a whole row of A and a whole
// column of B from global memory: 2K loads for 2K flops. That is why this is slow, and what the
// tiled GEMM of phase 05 fixes by sharing loaded tiles between the threads of a block.
//
// The batch dimensions are described by a Layout (common.cuh) with two operands: where A and B
// sit for batch z (stride 0 for a broadcast batch dimension). C is contiguous [batch, M, N].
// A and B may have any strides inside a matrix as well (sam, sak, sbk, sbn), so a transposed view
// is multiplied without being copied first.
//
// Grid: (ceil(N / 16), min(ceil(M / 16), 65535), min(batch, 65535)); y and z stop at 65535, so the
// kernel loops over rows and batches beyond that.
// Sums accumulate in the output's type (float or double), in order k = 0, 1, ..., K-1.

#include "common.cuh"

template <typename T>
__device__ __forceinline__ void matmul_naive(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                                             long long M, long long N, long long K,
                                             long long sam, long long sak, long long sbk, long long sbn,
                                             long long batch, const Layout& L) {
    // >>> exercise 02.6: the naive matmul
    // hint: one thread per output element C[m, n]: n from the x dimension of the grid, m from y (loop while m < M)
    // hint: layout_offsets<2>(L, z, off) gives where matrix z of A and of B start; C is contiguous [batch, M, N]
    const long long n = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (n >= N) return;
    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);                         // where matrix z of A and of B start
        const T* a = A + off[0];
        const T* b = B + off[1] + n * sbn;                    // column n of B
        T* c = C + z * M * N;
        for (long long m = blockIdx.y * (long long)blockDim.y + threadIdx.y; m < M;
             m += (long long)gridDim.y * blockDim.y) {
            const T* row = a + m * sam;                       // row m of A
            T acc = T(0);
            for (long long k = 0; k < K; ++k) acc += row[k * sak] * b[k * sbk];
            c[m * N + n] = acc;
        }
    }
    // <<< exercise
}

#define MATMUL(T, SUF)                                                                               \
    extern "C" __global__ void matmul_naive_##SUF(const T* __restrict__ A, const T* __restrict__ B, \
                                                  T* __restrict__ C, long long M, long long N, long long K, \
                                                  long long sam, long long sak, long long sbk, long long sbn, \
                                                  long long batch, const Layout L) {                \
        matmul_naive(A, B, C, M, N, K, sam, sak, sbk, sbn, batch, L);                              \
    }

MATMUL(float, f32)
MATMUL(double, f64)
