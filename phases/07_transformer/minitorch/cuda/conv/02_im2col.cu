// GENERATED from minitorch/cuda/conv/02_im2col.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 06
// 02_im2col.cu - rung 2 of the convolution ladder: unfold the input into a matrix, then multiply
// with our GEMM (native/cuda/gemm.py). (Chellapilla, Puri, Simard 2006: "High Performance
// Convolutional Neural Networks for Document Processing".)
//
//   im2col   one thread per element of the columns matrix col [N, C*R*S, P*Q] (grid-stride):
//            col[n, (c*R + r)*S + s, p*Q + q] = x[n, c, p*stride_h - pad_h + r*dil_h, ...] or 0.
//            Consecutive threads write consecutive (p, q): coalesced stores, and reads of
//            neighbouring input columns.
//   col2im   its adjoint, one thread per input element (n, c, h, w): the sum of the column
//            entries that copied it (a gather: no two threads write one element, no atomics).
//   bias_act y[n, k, :, :] += bias[k], then max(y, 0) when relu, in place: the epilogue of the
//            GEMM's output (the GEMM's own bias runs along its columns, here the pixels).
//
// Why faster than rung 1: the multiply-adds run in the GEMM, which keeps tiles of the weight and
// of the columns in shared memory and registers; each weight is read from memory once per tile
// instead of once per output. The price: col is R*S times the input, written then read again,
// and three launches instead of one. Shapes: conv.cuh. Entry points <name>_{f32,f64,f16,bf16}.
#include "conv.cuh"

template <typename T>
__device__ void im2col(const T* __restrict__ x, T* __restrict__ col, const ConvGeom g) {
    const long long pq = (long long)g.P * g.Q;
    const long long total = (long long)g.N * g.C * g.R * g.S * pq;
    GRID_STRIDE_LOOP(i, total) {
        long long ncr;                          // i = ((ncr * S + s) * P + p) * Q + q, ncr = nc * R + r
        int s, p, q;
        unflatten4(i, g.S, g.P, g.Q, ncr, s, p, q);
        const int r = (int)(ncr % g.R);
        const long long nc = ncr / g.R;
        const int h = p * g.stride_h - g.pad_h + r * g.dil_h;
        const int w = q * g.stride_w - g.pad_w + s * g.dil_w;
        const bool inside = h >= 0 && h < g.H && w >= 0 && w < g.W;
        col[i] = inside ? x[(nc * g.H + h) * g.W + w] : T(0.0f);
    }
}

template <typename T>
__device__ void col2im(const T* __restrict__ col, T* __restrict__ dx, const ConvGeom g) {
    typedef typename Acc<T>::type A;
    const long long pq = (long long)g.P * g.Q;
    const long long total = (long long)g.N * g.C * g.H * g.W;
    GRID_STRIDE_LOOP(i, total) {
        long long n;
        int c, h, w;
        unflatten4(i, g.C, g.H, g.W, n, c, h, w);
        const long long nc = n * g.C + c;     // (n, c): col rows nc*R*S .. of image n
        A acc = A(0);
        for (int r = 0; r < g.R; ++r) {
            const int ph = h + g.pad_h - r * g.dil_h;
            if (ph < 0 || ph % g.stride_h) continue;
            const int p = ph / g.stride_h;
            if (p >= g.P) continue;
            for (int s = 0; s < g.S; ++s) {
                const int qw = w + g.pad_w - s * g.dil_w;
                if (qw < 0 || qw % g.stride_w) continue;
                const int q = qw / g.stride_w;
                if (q >= g.Q) continue;
                acc += A(to_opmath(col[((nc * g.R + r) * g.S + s) * pq + (long long)p * g.Q + q]));
            }
        }
        dx[i] = narrow<T>(acc);
    }
}

template <typename T>
__device__ void bias_act(T* __restrict__ y, const T* __restrict__ bias, const ConvGeom g, bool relu) {
    typedef typename Acc<T>::type A;
    const long long pq = (long long)g.P * g.Q;
    const long long total = (long long)g.N * g.K * pq;
    GRID_STRIDE_LOOP(i, total) {
        long long n;
        int k, p, q;
        unflatten4(i, g.K, g.P, g.Q, n, k, p, q);
        y[i] = narrow<T>(epilogue<A>(A(to_opmath(y[i])), bias ? A(to_opmath(bias[k])) : A(0), relu));
    }
}

#define IM2COL_ENTRIES(T, SUF)                                                                          \
    extern "C" __global__ void im2col_##SUF(const T* x, T* col, const ConvGeom g) { im2col<T>(x, col, g); } \
    extern "C" __global__ void col2im_##SUF(const T* col, T* dx, const ConvGeom g) { col2im<T>(col, dx, g); } \
    extern "C" __global__ void bias_act_##SUF(T* y, const T* bias, const ConvGeom g, bool relu) {       \
        bias_act<T>(y, bias, g, relu);                                                                 \
    }

IM2COL_ENTRIES(float, f32)
IM2COL_ENTRIES(double, f64)
IM2COL_ENTRIES(__half, f16)
IM2COL_ENTRIES(__nv_bfloat16, bf16)
