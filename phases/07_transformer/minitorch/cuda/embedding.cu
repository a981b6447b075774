// GENERATED from minitorch/cuda/embedding.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 07
// embedding.cu - the deterministic gradient of an embedding lookup (torch.nn.Embedding's backward
// under use_deterministic_algorithms(True)).
//
// Forward is a gather (index.cu's take); its gradient adds row grad[i] into dweight[index[i]], and
// with repeated indices atomicAdd (index.cu) adds in whatever order the threads arrive: float sums
// then differ in the last bits between runs. This kernel makes the order fixed instead. Python sorts
// the indices first (sort.cu, stable): `sorted` holds them ascending and `perm[k]` says which row of
// grad the k-th came from, so the rows going to one embedding form a run sorted[s..e), in their
// original order.
//
//   embedding_backward_sorted   one thread per (position s, column d): consecutive threads take
//       consecutive columns of one position (coalesced reads of a grad row). The thread at the FIRST
//       position of a run adds grad[perm[k], d] for k = s..e-1 in order, in float (double for
//       float64), and stores dweight[sorted[s], d] once; the other positions have nothing to do.
//       Rows of dweight that no index names stay as Python zeroed them; padding_idx (or -1 for none)
//       and indices outside [0, num_weights) are skipped.
// A run of length L costs its thread L loads: the work is the same as the atomic version, but one
// very frequent index serializes on D threads. That is the price of a fixed order.
#include "common.cuh"

namespace emb {

template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };

template <typename T>
__device__ void backward_sorted(const long long* __restrict__ sorted, const long long* __restrict__ perm,
                                const T* __restrict__ grad, T* __restrict__ dweight, long long count, long long dim,
                                long long num_weights, long long padding_idx) {
    typedef typename Acc<T>::type A;
    GRID_STRIDE_LOOP(i, count * dim) {
        const long long s = i / dim, d = i % dim, v = sorted[s];
        if (s > 0 && sorted[s - 1] == v) continue;               // not the first of its run
        if (v == padding_idx || v < 0 || v >= num_weights) continue;
        A acc = A(0);
        for (long long k = s; k < count && sorted[k] == v; ++k) acc += A(to_opmath(grad[perm[k] * dim + d]));
        dweight[v * dim + d] = narrow<T>(acc);
    }
}

}  // namespace emb

#define EMBEDDING_KERNELS(T, SUF)                                                                       \
    extern "C" __global__ void embedding_backward_sorted_##SUF(const long long* sorted, const long long* perm, \
                                                               const T* grad, T* dweight, long long count, \
                                                               long long dim, long long num_weights,    \
                                                               long long padding_idx) {                 \
        emb::backward_sorted<T>(sorted, perm, grad, dweight, count, dim, num_weights, padding_idx);      \
    }

EMBEDDING_KERNELS(float, f32)
EMBEDDING_KERNELS(double, f64)
EMBEDDING_KERNELS(__half, f16)
EMBEDDING_KERNELS(__nv_bfloat16, bf16)
