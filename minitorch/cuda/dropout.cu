// phase: 06
// dropout.cu - dropout's keep mask from uniform draws, and the masked, scaled copy.
//
// Dropout zeroes each element with probability p and scales the survivors by 1 / (1 - p), so the
// expected value is unchanged (Srivastava et al., "Dropout: a simple way to prevent neural
// networks from overfitting", JMLR 2014). Dropout2d drops whole channels: one draw per (n, c),
// shared by the L = H * W elements of that channel.
//
//   dropout_mask    one thread per draw (grid-stride): mask[i] = (u[i] >= p), u uniform on [0, 1)
//                   from cuRAND (drawn by Python on the current stream), so P(keep) = 1 - p.
//   masked_scale    one thread per element (grid-stride): out[i] = mask[i / group] ? in[i] * scale : 0,
//                   group = 1 for dropout, L for dropout2d (neighbouring threads read the same mask
//                   byte: a broadcast from one cache line). The forward pass runs it on x, the
//                   backward on the incoming gradient with the SAME mask: dx = mask * scale * dy.
//   dropout_forward one thread per element (grid-stride): both of the above in one pass, from cuRAND's
//                   raw draws u in (0, 1]: keep = (1 - u[i / group] >= p), the same float arithmetic as
//                   rand's flip then dropout_mask, so the same mask; out[i] as masked_scale; the first
//                   element of each group writes mask[i / group].
// Plain dropout (group == 1) takes 16-byte vectors when the pointers allow (masked_scale_vectors).
// Each thread reads its own u / in element and writes only its own output: no races.
// Half types load as float, multiply in float, round once.
#include "common.cuh"

extern "C" __global__ void dropout_mask(const float* __restrict__ u, bool* __restrict__ mask, long long m, float p) {
    GRID_STRIDE_LOOP(i, m) {
        mask[i] = u[i] >= p;
    }
}

// Dropout proper (group == 1) walks 16-byte vectors of N elements with N mask bytes beside them:
// no 64-bit division per element and a quarter of the load/store instructions (N = 4 floats).
// Returns how many leading elements it did: all whole vectors, or none when a pointer is not
// aligned for them (a view with an offset); the caller's scalar loop does the rest.
template <typename T, typename S>
__device__ __forceinline__ long long masked_scale_vectors(const T* __restrict__ in, const bool* __restrict__ mask,
                                                          T* __restrict__ out, long long n, S scale) {
    constexpr int N = vec_width<T, T>();
    if (!(is_aligned<sizeof(T) * N>(in) && is_aligned<sizeof(T) * N>(out) && is_aligned<N>(mask))) return 0;
    const long long nvec = n / N;
    GRID_STRIDE_LOOP(i, nvec) {
        const Vec<T, N> x = reinterpret_cast<const Vec<T, N>*>(in)[i];
        const Vec<bool, N> keep = reinterpret_cast<const Vec<bool, N>*>(mask)[i];
        Vec<T, N> y;
#pragma unroll
        for (int k = 0; k < N; ++k) y.v[k] = keep.v[k] ? narrow<T>(to_opmath(x.v[k]) * scale) : narrow<T>(S(0));
        reinterpret_cast<Vec<T, N>*>(out)[i] = y;
    }
    return nvec * N;
}

template <typename T, typename S>
__device__ void masked_scale(const T* __restrict__ in, const bool* __restrict__ mask, T* __restrict__ out,
                             long long n, long long group, S scale) {
    const long long start = group == 1 ? masked_scale_vectors(in, mask, out, n, scale) : 0;
    GRID_STRIDE_LOOP(t, n - start) {
        const long long i = start + t;
        out[i] = mask[i / group] ? narrow<T>(to_opmath(in[i]) * scale) : narrow<T>(S(0));
    }
}

#define MASKED_SCALE(T, S, SUF)                                                                         \
    extern "C" __global__ void masked_scale_##SUF(const T* in, const bool* mask, T* out, long long n,     \
                                                  long long group, S scale) {                            \
        masked_scale<T, S>(in, mask, out, n, group, scale);                                              \
    }

MASKED_SCALE(float, float, f32)
MASKED_SCALE(double, double, f64)
MASKED_SCALE(__half, float, f16)
MASKED_SCALE(__nv_bfloat16, float, bf16)

// dropout_forward's vector path for group == 1, as masked_scale_vectors: N draws, N elements and N
// mask bytes per step.
template <typename T, typename S>
__device__ __forceinline__ long long dropout_forward_vectors(const float* __restrict__ u, const T* __restrict__ in,
                                                             T* __restrict__ out, bool* __restrict__ mask,
                                                             long long n, float p, S scale) {
    constexpr int N = vec_width<T, T>();
    if (!(is_aligned<sizeof(float) * N>(u) && is_aligned<sizeof(T) * N>(in) && is_aligned<sizeof(T) * N>(out)
          && is_aligned<N>(mask)))
        return 0;
    const long long nvec = n / N;
    GRID_STRIDE_LOOP(i, nvec) {
        const Vec<float, N> draw = reinterpret_cast<const Vec<float, N>*>(u)[i];
        const Vec<T, N> x = reinterpret_cast<const Vec<T, N>*>(in)[i];
        Vec<bool, N> keep;
        Vec<T, N> y;
#pragma unroll
        for (int k = 0; k < N; ++k) {
            keep.v[k] = 1.0f - draw.v[k] >= p;
            y.v[k] = keep.v[k] ? narrow<T>(to_opmath(x.v[k]) * scale) : narrow<T>(S(0));
        }
        reinterpret_cast<Vec<bool, N>*>(mask)[i] = keep;
        reinterpret_cast<Vec<T, N>*>(out)[i] = y;
    }
    return nvec * N;
}

template <typename T, typename S>
__device__ void dropout_forward(const float* __restrict__ u, const T* __restrict__ in, T* __restrict__ out,
                                bool* __restrict__ mask, long long n, long long group, float p, S scale) {
    const long long start = group == 1 ? dropout_forward_vectors(u, in, out, mask, n, p, scale) : 0;
    GRID_STRIDE_LOOP(t, n - start) {
        const long long i = start + t;
        const long long j = i / group;
        bool keep = 1.0f - u[j] >= p;
        if (i - j * group == 0) mask[j] = keep;
        out[i] = keep ? narrow<T>(to_opmath(in[i]) * scale) : narrow<T>(S(0));
    }
}

#define DROPOUT_FORWARD(T, S, SUF)                                                                      \
    extern "C" __global__ void dropout_forward_##SUF(const float* u, const T* in, T* out, bool* mask,      \
                                                     long long n, long long group, float p, S scale) {    \
        dropout_forward<T, S>(u, in, out, mask, n, group, p, scale);                                     \
    }

DROPOUT_FORWARD(float, float, f32)
DROPOUT_FORWARD(double, double, f64)
DROPOUT_FORWARD(__half, float, f16)
DROPOUT_FORWARD(__nv_bfloat16, float, bf16)
