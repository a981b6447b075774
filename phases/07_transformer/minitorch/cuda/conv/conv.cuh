// GENERATED from minitorch/cuda/conv/conv.cuh by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 06
// conv.cuh - what every rung of the convolution ladder (minitorch/cuda/conv/NN_name.cu) shares:
// the shape of a convolution, passed to each kernel by value as one struct.
//
// Names are cuDNN's: input x [N, C, H, W], weight w [K, C/G, R, S], output y [N, K, P, Q], all
// contiguous (NCHW). Output (p, q) reads input rows h = p*stride_h - pad_h + r*dil_h and columns
// w = q*stride_w - pad_w + s*dil_w for r < R, s < S; outside the input it reads a zero (padding).
// Group g (of G) maps input channels [g*C/G, (g+1)*C/G) to output channels [g*K/G, (g+1)*K/G).
// Python (native/cuda/conv.py, GEOM) builds the same bytes: sixteen 32-bit ints, no padding.
// Every size fits in an int (a dimension of 2^31 elements would not fit in memory anyway);
// offsets into the arrays, which may be larger, are computed in long long.
#pragma once
#include "../common.cuh"

struct ConvGeom {
    int N, C, H, W;             // input
    int K, R, S;                // output channels, kernel rows, kernel columns
    int P, Q;                   // output rows, columns
    int stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
    int G;                      // groups
};

// (i0, i1, i2, i3) of flat index i into an array of dimensions [.., d1, d2, d3] (i0 unbounded).
// Indices below 2^31 (every tensor of fewer than 2^31 elements) are split with 32-bit divisions,
// several times cheaper than 64-bit ones: in these small kernels the index arithmetic costs more
// than the multiply-adds.
__device__ __forceinline__ void unflatten4(long long i, int d1, int d2, int d3, long long& i0, int& i1, int& i2,
                                           int& i3) {
    if (i < 2147483648LL) {
        int j = (int)i;
        i3 = j % d3; j /= d3;
        i2 = j % d2; j /= d2;
        i1 = j % d1; i0 = j / d1;
    } else {
        long long j = i;
        i3 = (int)(j % d3); j /= d3;
        i2 = (int)(j % d2); j /= d2;
        i1 = (int)(j % d1); i0 = j / d1;
    }
}

// Accumulator type: float for float and the half types (load as float, round once), double for double.
template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };

// y = acc (+ bias), then max(y, 0) when relu: the fused epilogue of every forward kernel. (A fused
// 2 x 2 max pooling follows it in 03_implicit_gemm.cu, whose tiles can own whole pooling windows.)
template <typename A>
__device__ __forceinline__ A epilogue(A acc, A bias, bool relu) {
    acc += bias;
    return relu && acc < A(0) ? A(0) : acc;         // NaN < 0 is false: relu(NaN) stays NaN, as in PyTorch
}
