// GENERATED from minitorch/cuda/conv/01_direct.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 06
// 01_direct.cu - rung 1 of the convolution ladder: the definition, one thread per output value.
//
// Forward: thread i (a grid-stride loop over N*K*P*Q) owns output y[n, k, p, q] and walks the
// C/G * R * S products of its window itself. Consecutive threads own consecutive q, so a warp
// reads neighbouring input columns (coalesced when stride_w is 1) and the whole warp reads the
// same weight (one broadcast load). Nothing is shared between threads: every input value is
// loaded from memory (or L1/L2) once per output that uses it, R*S*K/G times, and every thread
// redoes the index arithmetic. The next rungs fix exactly that.
//
// Backward, in the same spirit (gathers, no atomics: every gradient value has one owner):
//   conv2d_direct_input_grad  one thread per x element (n, c, h, w): the sum over the outputs
//                             whose window covers it, w[k, c, r, s] * dy[n, k, p, q] where
//                             p*stride_h = h + pad_h - r*dil_h (only offsets that divide evenly)
//   conv2d_direct_weight_grad one BLOCK per weight element (k, c, r, s): its threads stride over
//                             the N*P*Q outputs, then a shared-memory tree adds their sums
// Entry points conv2d_direct_<op>_{f32,f64}; arguments below. Shapes: conv.cuh.
#include "conv.cuh"

// The dot product of output (n, k, p, q)'s window with filter k: the C/G*R*S products.
template <typename T, typename A>
__device__ __forceinline__ A direct_window_sum(const T* __restrict__ x, const T* __restrict__ w,
                                               const ConvGeom& g, int n, int k, int p, int q) {
    A acc = A(0);
    // >>> exercise 06.7: the direct convolution's inner loops
    // hint: filter k belongs to group k / (K/G), which reads input channels from c0 = group * (C/G);
    // hint: loop c < C/G, r < R, s < S: row h = p*stride_h - pad_h + r*dil_h, the column likewise with q;
    // hint: skip rows/columns outside [0, H) x [0, W) (padding reads zeros); x is [N, C, H, W], w [K, C/G, R, S]
    const int cg = g.C / g.G;
    const int c0 = (k / (g.K / g.G)) * cg;
    const int h0 = p * g.stride_h - g.pad_h, w0 = q * g.stride_w - g.pad_w;
    for (int c = 0; c < cg; ++c) {
        const T* plane = x + ((long long)n * g.C + c0 + c) * g.H * g.W;     // input channel c0 + c of image n
        const T* filter = w + ((long long)k * cg + c) * g.R * g.S;         // its R x S weights in filter k
        for (int r = 0; r < g.R; ++r) {
            const int h = h0 + r * g.dil_h;
            if (h < 0 || h >= g.H) continue;
            for (int s = 0; s < g.S; ++s) {
                const int col = w0 + s * g.dil_w;
                if (col < 0 || col >= g.W) continue;
                acc += A(to_opmath(plane[(long long)h * g.W + col])) * A(to_opmath(filter[r * g.S + s]));
            }
        }
    }
    // <<< exercise
    return acc;
}

template <typename T>
__device__ void conv2d_direct(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                              T* __restrict__ y, const ConvGeom g, bool relu) {
    typedef typename Acc<T>::type A;
    const long long total = (long long)g.N * g.K * g.P * g.Q;
    GRID_STRIDE_LOOP(i, total) {
        long long n;
        int k, p, q;
        unflatten4(i, g.K, g.P, g.Q, n, k, p, q);
        const A acc = direct_window_sum<T, A>(x, w, g, (int)n, k, p, q);
        y[i] = narrow<T>(epilogue<A>(acc, bias ? A(to_opmath(bias[k])) : A(0), relu));
    }
}

// dx[n, c, h, wc]: every (k, r, s) of c's group whose output (p, q) reads this element.
template <typename T>
__device__ void conv2d_direct_input_grad(const T* __restrict__ dy, const T* __restrict__ w, T* __restrict__ dx,
                                         const ConvGeom g) {
    typedef typename Acc<T>::type A;
    const int cg = g.C / g.G, kg = g.K / g.G;
    const long long total = (long long)g.N * g.C * g.H * g.W;
    GRID_STRIDE_LOOP(i, total) {
        long long n;
        int c, h, wc;
        unflatten4(i, g.C, g.H, g.W, n, c, h, wc);
        const int grp = c / cg, k0 = grp * kg;
        A acc = A(0);
        for (int r = 0; r < g.R; ++r) {
            const int ph = h + g.pad_h - r * g.dil_h;             // = p * stride_h for a reading p
            if (ph < 0 || ph % g.stride_h) continue;
            const int p = ph / g.stride_h;
            if (p >= g.P) continue;
            for (int s = 0; s < g.S; ++s) {
                const int qw = wc + g.pad_w - s * g.dil_w;
                if (qw < 0 || qw % g.stride_w) continue;
                const int q = qw / g.stride_w;
                if (q >= g.Q) continue;
                for (int k = 0; k < kg; ++k) {
                    const long long yo = (((long long)n * g.K + k0 + k) * g.P + p) * g.Q + q;
                    const long long wo = (((long long)(k0 + k) * cg + (c - grp * cg)) * g.R + r) * g.S + s;
                    acc += A(to_opmath(dy[yo])) * A(to_opmath(w[wo]));
                }
            }
        }
        dx[i] = narrow<T>(acc);
    }
}

#define WGRAD_THREADS 256       // threads per block of conv2d_direct_weight_grad (Python launches this many)

// dw[k, c, r, s] = sum over n, p, q of dy[n, k, p, q] * x[n, c0 + c, h, wc]: block b owns weight
// element b (grid-stride over blocks), its threads split the N*P*Q terms.
template <typename T>
__device__ void conv2d_direct_weight_grad(const T* __restrict__ dy, const T* __restrict__ x, T* __restrict__ dw,
                                          const ConvGeom g) {
    typedef typename Acc<T>::type A;
    __shared__ A partial[WGRAD_THREADS];
    const int cg = g.C / g.G;
    const long long weights = (long long)g.K * cg * g.R * g.S;
    const long long terms = (long long)g.N * g.P * g.Q;
    for (long long e = blockIdx.x; e < weights; e += gridDim.x) {
        const int s = (int)(e % g.S);
        const int r = (int)((e / g.S) % g.R);
        const int c = (int)((e / ((long long)g.S * g.R)) % cg);
        const int k = (int)(e / ((long long)g.S * g.R * cg));
        const int cx = (k / (g.K / g.G)) * cg + c;                // the input channel it reads
        A acc = A(0);
        for (long long j = threadIdx.x; j < terms; j += blockDim.x) {
            long long zero;
            int n, p, q;                                         // j = (n, p, q)
            unflatten4(j, g.N, g.P, g.Q, zero, n, p, q);
            const int h = p * g.stride_h - g.pad_h + r * g.dil_h;
            const int wc = q * g.stride_w - g.pad_w + s * g.dil_w;
            if (h < 0 || h >= g.H || wc < 0 || wc >= g.W) continue;
            acc += A(to_opmath(dy[(((long long)n * g.K + k) * g.P + p) * g.Q + q]))
                 * A(to_opmath(x[(((long long)n * g.C + cx) * g.H + h) * g.W + wc]));
        }
        partial[threadIdx.x] = acc;
        __syncthreads();
        for (int half = WGRAD_THREADS / 2; half > 0; half /= 2) {   // tree sum: log2(256) steps
            if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
            __syncthreads();
        }
        if (threadIdx.x == 0) dw[e] = narrow<T>(partial[0]);
        __syncthreads();        // partial[0] is read before the next element overwrites partial
    }
}

#define DIRECT_ENTRIES(T, SUF)                                                                          \
    extern "C" __global__ void conv2d_direct_##SUF(const T* x, const T* w, const T* bias, T* y,      \
                                                   const ConvGeom g, bool relu) {                    \
        conv2d_direct<T>(x, w, bias, y, g, relu);                                                    \
    }                                                                                                \
    extern "C" __global__ void conv2d_direct_input_grad_##SUF(const T* dy, const T* w, T* dx,        \
                                                              const ConvGeom g) {                    \
        conv2d_direct_input_grad<T>(dy, w, dx, g);                                                   \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(WGRAD_THREADS)                                      \
    conv2d_direct_weight_grad_##SUF(const T* dy, const T* x, T* dw, const ConvGeom g) {              \
        conv2d_direct_weight_grad<T>(dy, x, dw, g);                                                  \
    }

DIRECT_ENTRIES(float, f32)
DIRECT_ENTRIES(double, f64)
DIRECT_ENTRIES(__half, f16)
DIRECT_ENTRIES(__nv_bfloat16, bf16)
