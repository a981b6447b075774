// GENERATED from minitorch/cuda/gemm/gemm.cuh by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 05
// gemm.cuh - what every rung of the GEMM ladder (minitorch/cuda/gemm/NN_name.cu) shares: the
// arguments of its entry points and how an element of A, B and C is addressed.
//
// Every rung computes, for each batch z = 0 .. batch-1,
//     C[z] = op(A[z]) · op(B[z])  (+ bias[n] added to every row, when bias is not null)
// with op(A) M x K, op(B) K x N, and C a contiguous row-major M x N matrix (batch z at z*M*N).
// Sums accumulate in float32 (double for the f64 entries) and are rounded once to C's type.
//
// The layout letters are BLAS's, read for row-major storage. Each operand is a matrix whose
// inner (unit) stride runs along one of its two dimensions; the letter says which:
//     A 'n': A is stored M x K,  A[m, k] at A[m * lda + k]        (a row-major [M, K] tensor)
//     A 't': A is stored K x M,  A[m, k] at A[k * lda + m]        (the .T view of a [K, M] tensor)
//     B 'n': B is stored K x N,  B[k, n] at B[k * ldb + n]        (a row-major [K, N] tensor)
//     B 't': B is stored N x K,  B[k, n] at B[n * ldb + k]        (the .T view of an [N, K] tensor)
// so x @ W.T (nn.Linear) is 'nt', dL/dA = dL/dC @ B.T is 'nt', and dL/dB = A.T @ dL/dC is 'tn':
// no operand is ever transposed in memory first. Python (native/cuda/gemm.py) reads the letters
// off the strides; an operand with no unit stride is copied to a contiguous one first.
//
// Batches: the Layout L (common.cuh) holds the batch dimensions, with operand 0 = A and
// operand 1 = B, strides in elements (0 where an operand is broadcast over that dimension);
// layout_offsets<2>(L, z, off) gives where matrix z of A and of B start. L.ndim == 0 for a
// single matrix (batch == 1).
//
// Entry points: one per (layout, dtype), named gemm_<la><lb>_<suffix>, e.g. gemm_nt_f32,
// each with exactly the argument list GEMM_PARAMS(T) below. Grid and block are the rung's own
// (native/cuda/gemm.py knows them); blockIdx.z runs over batches (looping past 65535).
#pragma once
#include "../common.cuh"

#define GEMM_PARAMS(T)                                                                              \
    const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, const T* __restrict__ bias, \
    long long M, long long N, long long K, long long lda, long long ldb, long long batch, const Layout L

// Where op(A)[m, k] and op(B)[k, n] live, for compile-time layout flags TA/TB (true for 't').
template <bool TA>
__device__ __forceinline__ long long a_index(long long m, long long k, long long lda) {
    return TA ? k * lda + m : m * lda + k;
}
template <bool TB>
__device__ __forceinline__ long long b_index(long long k, long long n, long long ldb) {
    return TB ? n * ldb + k : k * ldb + n;
}

// Declares the four layouts of one dtype for a rung whose body is the template
// RUNG<T, TA, TB>(A, B, C, bias, M, N, K, lda, ldb, batch, L).
#define GEMM_ENTRY(RUNG, T, LA, LB, TA, TB, SUF)                                                     \
    extern "C" __global__ void gemm_##LA##LB##_##SUF(GEMM_PARAMS(T)) {                              \
        RUNG<T, TA, TB>(A, B, C, bias, M, N, K, lda, ldb, batch, L);                                 \
    }
#define GEMM_ENTRIES(RUNG, T, SUF)                                                                  \
    GEMM_ENTRY(RUNG, T, n, n, false, false, SUF)                                                    \
    GEMM_ENTRY(RUNG, T, n, t, false, true, SUF)                                                     \
    GEMM_ENTRY(RUNG, T, t, n, true, false, SUF)                                                     \
    GEMM_ENTRY(RUNG, T, t, t, true, true, SUF)
