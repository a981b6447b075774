// GENERATED from minitorch/cuda/pooling.cu by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
// phase: 06
// pooling.cu - 2-D max, average and adaptive average pooling, and their gradients.
//
// Every input is a contiguous stack of `planes` = N * C planes of H x W elements (the Tensor layer
// makes it so); outputs are planes of OH x OW. Output (oh, ow) of max/avg pooling looks at the
// window of input rows h = oh * SH - PH + kh * DH (kh = 0 .. KH-1) and columns alike; positions
// outside the plane are padding: -inf for max (never chosen), 0 for average.
//
// Threads to data:
//   forward   one thread per OUTPUT element (grid-stride loop over planes * OH * OW): it reads its
//             window (KH * KW loads, neighbouring threads read neighbouring columns: coalesced)
//             and writes one value (and, for max, the position of the maximum in its input plane,
//             h * W + w, as int64: PyTorch's `indices`).
//   backward  one thread per INPUT element, the "gather" form: it finds the outputs whose windows
//             contain it (at most KH * KW of them) and sums their contributions in a fixed order.
//             Windows overlap when stride < kernel, so the "scatter" form (each output adding into
//             its window) would need atomicAdd, whose order - and so the float rounding - changes
//             from run to run; the gather form writes every dx element once, deterministically.
//
// Which outputs contain input row h? Those with h = oh * SH - PH + kh * DH for some kh in [0, KH):
// t = h + PH - kh * DH must be >= 0 (it only shrinks as kh grows: stop at the first negative),
// divisible by SH, and oh = t / SH < OH. Columns likewise.
//
// Maximum: the first largest value in window order (kh, then kw) wins ties, as in PyTorch; a NaN
// always wins (PyTorch propagates NaN). Average: PyTorch's divisor (count_include_pad counts the
// padding cells inside H + PH, ceil mode's overhang past that never counts; a divisor_override != 0
// replaces both). Adaptive average: output oh covers rows [floor(oh H / OH), ceil((oh+1) H / OH)),
// so neighbouring windows may overlap by one row; input row h is in the windows
// oh in [floor(h OH / H), ceil((h+1) OH / H)).
//
// Types: float, double, and __half / __nv_bfloat16 loaded as float, summed in float, stored once
// (common.cuh's to_opmath / narrow). Indices are 64-bit throughout.
#include "common.cuh"

namespace pool {

template <typename T> struct Acc { using type = T; };             // what sums and compares happen in
template <> struct Acc<__half> { using type = float; };
template <> struct Acc<__nv_bfloat16> { using type = float; };

// -inf from its bit pattern (NVRTC has no <limits>)
template <typename A> __device__ __forceinline__ A neg_inf();
template <> __device__ __forceinline__ float neg_inf<float>() { return __int_as_float(0xff800000); }
template <> __device__ __forceinline__ double neg_inf<double>() { return __longlong_as_double(0xfff0000000000000ull); }

// ---- max pooling -------------------------------------------------------------------------------
template <typename T>
__device__ void max_forward(const T* __restrict__ x, T* __restrict__ y, long long* __restrict__ indices,
                            long long planes, long long H, long long W, long long OH, long long OW,
                            int KH, int KW, int SH, int SW, int PH, int PW, int DH, int DW) {
    using A = typename Acc<T>::type;
    GRID_STRIDE_LOOP(i, planes * OH * OW) {
        const long long ow = i % OW, oh = (i / OW) % OH, p = i / (OW * OH);
        const T* plane = x + p * H * W;
        const long long h0 = oh * SH - PH, w0 = ow * SW - PW;
        A best = neg_inf<A>();
        long long arg = -1;                       // -1: no element seen yet (the first one is taken)
        for (int kh = 0; kh < KH; ++kh) {
            const long long h = h0 + (long long)kh * DH;
            if (h < 0 || h >= H) continue;
            for (int kw = 0; kw < KW; ++kw) {
                const long long w = w0 + (long long)kw * DW;
                if (w < 0 || w >= W) continue;
                const A v = to_opmath(plane[h * W + w]);
                if (arg < 0 || v > best || is_nan(v)) {
                    best = v;
                    arg = h * W + w;
                }
            }
        }
        y[i] = narrow<T>(best);                  // a window that misses the plane (dilation can make
        indices[i] = arg;                        // one) gives -inf, as PyTorch, and index -1
    }
}

// dx[h, w] = sum of grad over the outputs whose window contains (h, w) AND whose saved argmax is it.
// relu_out (may be null): the pooled output of a ReLU that ran before the pooling (the fused
// conv + ReLU + pool); an output whose value is not > 0 passes no gradient: the ReLU's mask, applied
// here rather than in an elementwise pass of its own (one launch less on a launch-bound step).
template <typename T>
__device__ void max_backward(const T* __restrict__ grad, const long long* __restrict__ indices,
                             const T* __restrict__ relu_out, T* __restrict__ dx,
                             long long planes, long long H, long long W, long long OH, long long OW,
                             int KH, int KW, int SH, int SW, int PH, int PW, int DH, int DW) {
    using A = typename Acc<T>::type;
    GRID_STRIDE_LOOP(i, planes * H * W) {
        const long long w = i % W, h = (i / W) % H, p = i / (W * H);
        const long long here = h * W + w, base = p * OH * OW;
        A sum = A(0);
        for (int kh = 0; kh < KH; ++kh) {
            const long long th = h + PH - (long long)kh * DH;
            if (th < 0) break;
            if (th % SH != 0 || th / SH >= OH) continue;
            for (int kw = 0; kw < KW; ++kw) {
                const long long tw = w + PW - (long long)kw * DW;
                if (tw < 0) break;
                if (tw % SW != 0 || tw / SW >= OW) continue;
                const long long o = base + (th / SH) * OW + tw / SW;
                if (indices[o] == here && (relu_out == nullptr || to_opmath(relu_out[o]) > A(0)))
                    sum += to_opmath(grad[o]);
            }
        }
        dx[i] = narrow<T>(sum);
    }
}

// ---- average pooling ---------------------------------------------------------------------------
// PyTorch's divisor of output (oh, ow): the window clipped to the padded plane [-PH, H + PH) counts
// when count_include_pad, else the window clipped to the plane itself; 0 for a window that misses
// the plane entirely (only the forward meets those: no input element lies in them).
__device__ __forceinline__ long long avg_divisor(long long oh, long long ow, long long H, long long W,
                                                 int KH, int KW, int SH, int SW, int PH, int PW,
                                                 bool count_include_pad, int divisor_override) {
    if (divisor_override != 0) return divisor_override;
    long long hs = oh * SH - PH, ws = ow * SW - PW;
    long long he = min(hs + KH, H + PH), we = min(ws + KW, W + PW);
    if (count_include_pad) return (he - hs) * (we - ws);
    hs = max(hs, 0LL); ws = max(ws, 0LL); he = min(he, H); we = min(we, W);
    return (he > hs && we > ws) ? (he - hs) * (we - ws) : 0;
}

template <typename T>
__device__ void avg_forward(const T* __restrict__ x, T* __restrict__ y,
                            long long planes, long long H, long long W, long long OH, long long OW,
                            int KH, int KW, int SH, int SW, int PH, int PW, bool count_include_pad,
                            int divisor_override) {
    using A = typename Acc<T>::type;
    GRID_STRIDE_LOOP(i, planes * OH * OW) {
        const long long ow = i % OW, oh = (i / OW) % OH, p = i / (OW * OH);
        const T* plane = x + p * H * W;
        const long long hs = oh * SH - PH, ws = ow * SW - PW;
        const long long h_lo = max(hs, 0LL), h_hi = min(hs + KH, H);
        const long long w_lo = max(ws, 0LL), w_hi = min(ws + KW, W);
        A sum = A(0);
        for (long long h = h_lo; h < h_hi; ++h)
            for (long long w = w_lo; w < w_hi; ++w) sum += to_opmath(plane[h * W + w]);
        const long long d = avg_divisor(oh, ow, H, W, KH, KW, SH, SW, PH, PW, count_include_pad, divisor_override);
        y[i] = narrow<T>(d != 0 ? sum / A(d) : A(0));
    }
}

template <typename T>
__device__ void avg_backward(const T* __restrict__ grad, T* __restrict__ dx,
                             long long planes, long long H, long long W, long long OH, long long OW,
                             int KH, int KW, int SH, int SW, int PH, int PW, bool count_include_pad,
                             int divisor_override) {
    using A = typename Acc<T>::type;
    GRID_STRIDE_LOOP(i, planes * H * W) {
        const long long w = i % W, h = (i / W) % H, p = i / (W * H);
        const long long base = p * OH * OW;
        A sum = A(0);
        for (int kh = 0; kh < KH; ++kh) {
            const long long th = h + PH - kh;
            if (th < 0) break;
            if (th % SH != 0 || th / SH >= OH) continue;
            for (int kw = 0; kw < KW; ++kw) {
                const long long tw = w + PW - kw;
                if (tw < 0) break;
                if (tw % SW != 0 || tw / SW >= OW) continue;
                const long long oh = th / SH, ow = tw / SW;
                const long long d = avg_divisor(oh, ow, H, W, KH, KW, SH, SW, PH, PW, count_include_pad,
                                                divisor_override);   // != 0: (h, w) lies in this window
                sum += to_opmath(grad[base + oh * OW + ow]) / A(d);
            }
        }
        dx[i] = narrow<T>(sum);
    }
}

// ---- adaptive average pooling ------------------------------------------------------------------
__device__ __forceinline__ long long start_of(long long o, long long n, long long out) { return o * n / out; }
__device__ __forceinline__ long long end_of(long long o, long long n, long long out) {
    return ((o + 1) * n + out - 1) / out;
}

template <typename T>
__device__ void adaptive_avg_forward(const T* __restrict__ x, T* __restrict__ y,
                                     long long planes, long long H, long long W, long long OH, long long OW) {
    using A = typename Acc<T>::type;
    GRID_STRIDE_LOOP(i, planes * OH * OW) {
        const long long ow = i % OW, oh = (i / OW) % OH, p = i / (OW * OH);
        const T* plane = x + p * H * W;
        const long long hs = start_of(oh, H, OH), he = end_of(oh, H, OH);
        const long long ws = start_of(ow, W, OW), we = end_of(ow, W, OW);
        A sum = A(0);
        for (long long h = hs; h < he; ++h)
            for (long long w = ws; w < we; ++w) sum += to_opmath(plane[h * W + w]);
        y[i] = narrow<T>(sum / A((he - hs) * (we - ws)));
    }
}

template <typename T>
__device__ void adaptive_avg_backward(const T* __restrict__ grad, T* __restrict__ dx,
                                      long long planes, long long H, long long W, long long OH, long long OW) {
    using A = typename Acc<T>::type;
    GRID_STRIDE_LOOP(i, planes * H * W) {
        const long long w = i % W, h = (i / W) % H, p = i / (W * H);
        const T* g = grad + p * OH * OW;
        // the outputs whose windows hold row h: [floor(h OH / H), ceil((h + 1) OH / H)), same formulas
        const long long oh_lo = start_of(h, OH, H), oh_hi = end_of(h, OH, H);
        const long long ow_lo = start_of(w, OW, W), ow_hi = end_of(w, OW, W);
        A sum = A(0);
        for (long long oh = oh_lo; oh < oh_hi; ++oh) {
            const long long rows = end_of(oh, H, OH) - start_of(oh, H, OH);
            for (long long ow = ow_lo; ow < ow_hi; ++ow) {
                const long long cols = end_of(ow, W, OW) - start_of(ow, W, OW);
                sum += to_opmath(g[oh * OW + ow]) / A(rows * cols);
            }
        }
        dx[i] = narrow<T>(sum);
    }
}

}  // namespace pool

#define POOL_KERNELS(T, SUF) MT_IF_##SUF(                                                               \
    extern "C" __global__ void max_pool2d_##SUF(const T* x, T* y, long long* indices, long long planes,   \
                                                long long H, long long W, long long OH, long long OW,    \
                                                int KH, int KW, int SH, int SW, int PH, int PW, int DH,  \
                                                int DW) {                                                \
        pool::max_forward<T>(x, y, indices, planes, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW);      \
    }                                                                                                    \
    extern "C" __global__ void max_pool2d_backward_##SUF(const T* grad, const long long* indices,         \
                                                         const T* relu_out, T* dx, long long planes,      \
                                                         long long H, long long W, long long OH,          \
                                                         long long OW, int KH, int KW, int SH, int SW,    \
                                                         int PH, int PW, int DH, int DW) {                \
        pool::max_backward<T>(grad, indices, relu_out, dx, planes, H, W, OH, OW, KH, KW, SH, SW, PH, PW,  \
                              DH, DW);                                                                   \
    }                                                                                                    \
    extern "C" __global__ void avg_pool2d_##SUF(const T* x, T* y, long long planes, long long H,          \
                                                long long W, long long OH, long long OW, int KH, int KW, \
                                                int SH, int SW, int PH, int PW, bool count_include_pad,  \
                                                int divisor_override) {                                  \
        pool::avg_forward<T>(x, y, planes, H, W, OH, OW, KH, KW, SH, SW, PH, PW, count_include_pad,     \
                             divisor_override);                                                          \
    }                                                                                                    \
    extern "C" __global__ void avg_pool2d_backward_##SUF(const T* grad, T* dx, long long planes,          \
                                                         long long H, long long W, long long OH,          \
                                                         long long OW, int KH, int KW, int SH, int SW,    \
                                                         int PH, int PW, bool count_include_pad,          \
                                                         int divisor_override) {                          \
        pool::avg_backward<T>(grad, dx, planes, H, W, OH, OW, KH, KW, SH, SW, PH, PW, count_include_pad, \
                              divisor_override);                                                         \
    }                                                                                                    \
    extern "C" __global__ void adaptive_avg_pool2d_##SUF(const T* x, T* y, long long planes, long long H, \
                                                         long long W, long long OH, long long OW) {       \
        pool::adaptive_avg_forward<T>(x, y, planes, H, W, OH, OW);                                       \
    }                                                                                                    \
    extern "C" __global__ void adaptive_avg_pool2d_backward_##SUF(const T* grad, T* dx, long long planes, \
                                                                  long long H, long long W, long long OH, \
                                                                  long long OW) {                         \
        pool::adaptive_avg_backward<T>(grad, dx, planes, H, W, OH, OW);                                  \
    })

POOL_KERNELS(float, f32)
POOL_KERNELS(double, f64)
POOL_KERNELS(__half, f16)
POOL_KERNELS(__nv_bfloat16, bf16)
