// GENERATED from minitorch/cuda/batchnorm.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 06
// batchnorm.cu - batch normalization: per-channel statistics, normalize + affine, fused backward.
//
// The input is a contiguous [N, C, L] array (L = H * W for images, 1 for [N, C]); channel c owns the
// M = N * L elements x[n, c, l]. Training normalizes with the batch's own mean and (biased)
// variance; evaluation with the running estimates.
//
//   batch_norm_stats     one BLOCK per channel (grid = C): each thread walks the channel's elements
//                        j = threadIdx.x, + blockDim.x, ... (element j is x[n = j / L, c, l = j % L];
//                        consecutive threads read consecutive l, coalesced when L is large) keeping
//                        Welford's running (count, mean, M2) - one pass, no cancellation as in
//                        sum(x^2) - sum(x)^2 / M (Welford, "Note on a method for calculating
//                        corrected sums of squares and products", Technometrics 4(3), 1962). The
//                        block then merges the threads' triples pairwise (Chan, Golub & LeVeque,
//                        "Updating formulae and a pairwise algorithm for computing sample
//                        variances", 1979): n = na + nb, d = mean_b - mean_a,
//                        mean = mean_a + d nb / n, M2 = M2a + M2b + d^2 na nb / n. Thread 0 writes
//                        mean and var = M2 / M, and updates the running statistics in place:
//                        running = (1 - f) running + f stat, with f = momentum, or f = 1 /
//                        num_batches_tracked (read on the device: no host sync) when momentum is
//                        None (a cumulative average), and the UNBIASED variance M2 / (M - 1) as
//                        PyTorch keeps it.
//   batch_norm_apply     one thread per element (grid-stride): y = (x - mean) / sqrt(var + eps) * w + b.
//   batch_norm_backward_reduce   one block per channel: sum(dy) and sum(dy * xhat) in ONE pass
//                        (xhat = (x - mean) * invstd); they are exactly dbias and dweight.
//   batch_norm_backward_apply    one thread per element:
//                        training: dx = w invstd (dy - sum(dy) / M - xhat sum(dy xhat) / M)
//                        eval:     dx = w invstd dy (the statistics are constants then)
//
// One block per channel keeps each channel's reduction in one block (a fixed merge order: the
// same result every run); it leaves SMs idle when C is small and M huge, a trade made for clarity.
// block_reduce (common.cuh) is called once per kernel, as it requires. weight and bias may be
// null pointers (affine=False); the running statistics too (track_running_stats=False).
// float and double only: statistics and parameters share the input's dtype.
#include "common.cuh"

namespace bn {

// NaN for an empty channel's statistics (NVRTC has no <limits>: from the bit pattern).
template <typename T> __device__ __forceinline__ T nan_value();
template <> __device__ __forceinline__ float nan_value<float>() { return __int_as_float(0x7fffffff); }
template <> __device__ __forceinline__ double nan_value<double>() { return __longlong_as_double(0x7ff8000000000000ull); }

template <typename A>
struct Welford {
    A n, mean, m2;
};

template <typename A>
__device__ __forceinline__ Welford<A> shfl_down(Welford<A> v, int d) {    // found by ADL in block_reduce
    return {::shfl_down(v.n, d), ::shfl_down(v.mean, d), ::shfl_down(v.m2, d)};
}

// Chan et al.'s merge of two partial statistics (either may be empty).
template <typename A>
__device__ __forceinline__ Welford<A> merge(Welford<A> a, Welford<A> b) {
    if (b.n == A(0)) return a;
    if (a.n == A(0)) return b;
    const A n = a.n + b.n, d = b.mean - a.mean;
    return {n, a.mean + d * (b.n / n), a.m2 + b.m2 + d * d * (a.n * (b.n / n))};
}

template <typename A>
struct Sums {
    A dy, dy_xhat;
};

template <typename A>
__device__ __forceinline__ Sums<A> shfl_down(Sums<A> v, int d) {
    return {::shfl_down(v.dy, d), ::shfl_down(v.dy_xhat, d)};
}

template <typename T>
__device__ void stats(const T* __restrict__ x, T* __restrict__ mean, T* __restrict__ var,
                      T* __restrict__ running_mean, T* __restrict__ running_var,
                      const long long* __restrict__ num_batches_tracked, double momentum,
                      long long N, long long C, long long L) {
    const long long c = blockIdx.x, M = N * L;
    Welford<T> w = {T(0), T(0), T(0)};
    for (long long j = threadIdx.x; j < M; j += blockDim.x) {
        const T v = x[((j / L) * C + c) * L + j % L];
        w.n += T(1);
        const T d = v - w.mean;
        w.mean += d / w.n;
        w.m2 += d * (v - w.mean);
    }
    w = block_reduce(w, Welford<T>{T(0), T(0), T(0)}, [](Welford<T> a, Welford<T> b) { return merge(a, b); });
    if (threadIdx.x != 0) return;
    const T m = M > 0 ? w.mean : nan_value<T>(), v = M > 0 ? w.m2 / T(M) : nan_value<T>();
    mean[c] = m;
    var[c] = v;
    if (running_mean != nullptr) {
        const T f = momentum >= 0 ? T(momentum) : T(1) / T(*num_batches_tracked);
        const T unbiased = M > 1 ? w.m2 / T(M - 1) : nan_value<T>();
        running_mean[c] = (T(1) - f) * running_mean[c] + f * m;
        running_var[c] = (T(1) - f) * running_var[c] + f * unbiased;
    }
}

template <typename T>
__device__ __forceinline__ T inv_std(T var, double eps) { return T(1) / m_sqrt(var + T(eps)); }

template <typename T>
__device__ void apply(const T* __restrict__ x, const T* __restrict__ mean, const T* __restrict__ var,
                      const T* __restrict__ weight, const T* __restrict__ bias, T* __restrict__ y,
                      double eps, long long n, long long C, long long L) {
    GRID_STRIDE_LOOP(i, n) {
        const long long c = (i / L) % C;
        T v = (x[i] - mean[c]) * inv_std(var[c], eps);
        if (weight != nullptr) v *= weight[c];
        if (bias != nullptr) v += bias[c];
        y[i] = v;
    }
}

template <typename T>
__device__ void backward_reduce(const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ mean,
                                const T* __restrict__ var, T* __restrict__ sum_dy, T* __restrict__ sum_dy_xhat,
                                double eps, long long N, long long C, long long L) {
    const long long c = blockIdx.x, M = N * L;
    const T mu = mean[c], invstd = inv_std(var[c], eps);
    Sums<T> s = {T(0), T(0)};
    for (long long j = threadIdx.x; j < M; j += blockDim.x) {
        const long long at = ((j / L) * C + c) * L + j % L;
        s.dy += dy[at];
        s.dy_xhat += dy[at] * (x[at] - mu) * invstd;
    }
    s = block_reduce(s, Sums<T>{T(0), T(0)}, [](Sums<T> a, Sums<T> b) { return Sums<T>{a.dy + b.dy, a.dy_xhat + b.dy_xhat}; });
    if (threadIdx.x == 0) {
        sum_dy[c] = s.dy;
        sum_dy_xhat[c] = s.dy_xhat;
    }
}

template <typename T>
__device__ void backward_apply(const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ mean,
                               const T* __restrict__ var, const T* __restrict__ weight,
                               const T* __restrict__ sum_dy, const T* __restrict__ sum_dy_xhat, T* __restrict__ dx,
                               double eps, bool training, long long n, long long C, long long L) {
    const T M = T(n / C);            // elements per channel (n = N * C * L, C > 0)
    GRID_STRIDE_LOOP(i, n) {
        const long long c = (i / L) % C;
        const T invstd = inv_std(var[c], eps);
        const T scale = weight != nullptr ? weight[c] * invstd : invstd;
        if (training) {
            const T xhat = (x[i] - mean[c]) * invstd;
            dx[i] = scale * (dy[i] - sum_dy[c] / M - xhat * (sum_dy_xhat[c] / M));
        } else {
            dx[i] = scale * dy[i];
        }
    }
}

}  // namespace bn

#define BATCH_NORM_KERNELS(T, SUF)                                                                      \
    extern "C" __global__ void batch_norm_stats_##SUF(const T* x, T* mean, T* var, T* running_mean,      \
                                                      T* running_var, const long long* num_batches_tracked, \
                                                      double momentum, long long N, long long C,         \
                                                      long long L) {                                     \
        bn::stats<T>(x, mean, var, running_mean, running_var, num_batches_tracked, momentum, N, C, L);   \
    }                                                                                                    \
    extern "C" __global__ void batch_norm_apply_##SUF(const T* x, const T* mean, const T* var,           \
                                                      const T* weight, const T* bias, T* y, double eps,  \
                                                      long long n, long long C, long long L) {           \
        bn::apply<T>(x, mean, var, weight, bias, y, eps, n, C, L);                                       \
    }                                                                                                    \
    extern "C" __global__ void batch_norm_backward_reduce_##SUF(const T* dy, const T* x, const T* mean,  \
                                                                const T* var, T* sum_dy, T* sum_dy_xhat, \
                                                                double eps, long long N, long long C,    \
                                                                long long L) {                           \
        bn::backward_reduce<T>(dy, x, mean, var, sum_dy, sum_dy_xhat, eps, N, C, L);                     \
    }                                                                                                    \
    extern "C" __global__ void batch_norm_backward_apply_##SUF(const T* dy, const T* x, const T* mean,   \
                                                               const T* var, const T* weight,            \
                                                               const T* sum_dy, const T* sum_dy_xhat,    \
                                                               T* dx, double eps, bool training,         \
                                                               long long n, long long C, long long L) {  \
        bn::backward_apply<T>(dy, x, mean, var, weight, sum_dy, sum_dy_xhat, dx, eps, training, n, C, L); \
    }

BATCH_NORM_KERNELS(float, f32)
BATCH_NORM_KERNELS(double, f64)
