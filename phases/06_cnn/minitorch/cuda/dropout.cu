// GENERATED from minitorch/cuda/dropout.cu by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
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
// Each thread reads its own u / in element and writes only its own output: no races.
// Half types load as float, multiply in float, round once.
#include "common.cuh"

extern "C" __global__ void dropout_mask(const float* __restrict__ u, bool* __restrict__ mask, long long m, float p) {
    GRID_STRIDE_LOOP(i, m) {
        mask[i] = u[i] >= p;
    }
}

template <typename T, typename S>
__device__ void masked_scale(const T* __restrict__ in, const bool* __restrict__ mask, T* __restrict__ out,
                             long long n, long long group, S scale) {
    GRID_STRIDE_LOOP(i, n) {
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

template <typename T, typename S>
__device__ void dropout_forward(const float* __restrict__ u, const T* __restrict__ in, T* __restrict__ out,
                                bool* __restrict__ mask, long long n, long long group, float p, S scale) {
    GRID_STRIDE_LOOP(i, n) {
        long long j = i / group;
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
