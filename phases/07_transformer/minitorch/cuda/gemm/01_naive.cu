// GENERATED from minitorch/cuda/gemm/01_naive.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 05
// 01_naive.cu - rung 1 of the GEMM ladder: phase 02's kernel, in the ladder's common form.
//
// One thread computes one element of C: C[m, n] = sum over k of op(A)[m, k] * op(B)[k, n].
// Blocks of 16 x 16 threads; x runs along n (the 16 threads of a half-warp read 16 neighbouring
// elements of a row of B: coalesced when B is 'n'), y along m. Every thread reads a whole row of
// A and a whole column of B from global memory: 2K loads for 2K flops, so the kernel is bound by
// memory traffic and by the latency of those loads. Every later rung removes some of that traffic.
//
// Arguments, layouts and batches: gemm.cuh.
#include "gemm.cuh"

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void gemm_naive(GEMM_PARAMS(T)) {
    const long long n = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (n >= N) return;
    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);
        const T* a = A + off[0];
        const T* b = B + off[1];
        T* c = C + z * M * N;
        for (long long m = blockIdx.y * (long long)blockDim.y + threadIdx.y; m < M;
             m += (long long)gridDim.y * blockDim.y) {
            T acc = T(0);
            for (long long k = 0; k < K; ++k) acc += a[a_index<TA>(m, k, lda)] * b[b_index<TB>(k, n, ldb)];
            c[m * N + n] = bias ? acc + bias[n] : acc;
        }
    }
}

GEMM_ENTRIES(gemm_naive, float, f32)
GEMM_ENTRIES(gemm_naive, double, f64)
