// GENERATED from minitorch/cuda/fill.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 01
// fill.cu - the first kernels: write one value, or an arithmetic sequence, into device memory.
//
// A kernel is a function the GPU runs once per thread. We launch a 1-D grid of blocks of 256
// threads and give each thread one element: global index i = blockIdx.x * blockDim.x + threadIdx.x.
// The grid is rounded up to whole blocks, so the last block may have threads past the end: the
// `if (i < n)` guard keeps them from writing memory that is not ours.
//
// Each kernel exists once per element type. The template holds the logic; the extern "C" wrappers
// give each type a plain name (fill_f32, fill_f64, ...) that Python can look up.

template <typename T>
__device__ void fill(T* out, T value, long long n) {
    // >>> exercise 01.3: the fill kernel
    // hint: this thread's element: i = blockIdx.x * blockDim.x + threadIdx.x (in 64 bits: n may pass 2^31)
    // hint: the last block may have threads past the end: guard the write with i < n
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
    // <<< exercise
}

extern "C" __global__ void fill_f32(float* out, float value, long long n) { fill(out, value, n); }
extern "C" __global__ void fill_f64(double* out, double value, long long n) { fill(out, value, n); }
extern "C" __global__ void fill_i64(long long* out, long long value, long long n) { fill(out, value, n); }
extern "C" __global__ void fill_bool(bool* out, bool value, long long n) { fill(out, value, n); }

// out[i] = start + i * step, computed in double so long float sequences do not drift.
template <typename T>
__device__ void arange(T* out, double start, double step, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = (T)(start + (double)i * step);
}

extern "C" __global__ void arange_f32(float* out, double start, double step, long long n) { arange(out, start, step, n); }
extern "C" __global__ void arange_f64(double* out, double start, double step, long long n) { arange(out, start, step, n); }
extern "C" __global__ void arange_i64(long long* out, double start, double step, long long n) { arange(out, start, step, n); }

// cuRAND's uniform numbers lie in (0, 1]; PyTorch's rand promises [0, 1). x -> 1 - x maps one
// onto the other, so no sample can be exactly 1.0 (which would break floor(rand * n) indexing).
template <typename T>
__device__ void one_minus(T* x, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) x[i] = (T)1 - x[i];
}

extern "C" __global__ void one_minus_f32(float* x, long long n) { one_minus(x, n); }
extern "C" __global__ void one_minus_f64(double* x, long long n) { one_minus(x, n); }
// float16 and bfloat16. The value comes as a double, rounded to float16 once (as NumPy does) and
// to bfloat16 through float (as ml_dtypes and PyTorch do; common.cuh, Narrow, says why).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void fill_f16(__half* out, double value, long long n) { fill(out, __double2half(value), n); }
extern "C" __global__ void fill_bf16(__nv_bfloat16* out, double value, long long n) {
    fill(out, __float2bfloat16_rn((float)value), n);
}

extern "C" __global__ void arange_f16(__half* out, double start, double step, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = __double2half(start + (double)i * step);
}
extern "C" __global__ void arange_bf16(__nv_bfloat16* out, double start, double step, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = __float2bfloat16_rn((float)(start + (double)i * step));
}

// rand in half: u from cuRAND's float (0, 1], x = 1 - u in float, rounded to half. Rounding can
// carry a value just below 1 up to exactly 1.0 (any x > 1 - 2^-12 in float16, 1 - 2^-9 in
// bfloat16), which [0, 1) forbids: those become the largest half below 1 (1 - 2^-11, 1 - 2^-8).
extern "C" __global__ void uniform_f16(const float* __restrict__ u, __half* __restrict__ out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) {
        const float x = __half2float(__float2half_rn(1.0f - u[i]));
        out[i] = __float2half_rn(x < 1.0f ? x : 1.0f - 0x1p-11f);
    }
}
extern "C" __global__ void uniform_bf16(const float* __restrict__ u, __nv_bfloat16* __restrict__ out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) {
        const float x = __bfloat162float(__float2bfloat16_rn(1.0f - u[i]));
        out[i] = __float2bfloat16_rn(x < 1.0f ? x : 1.0f - 0x1p-8f);
    }
}

// linspace: `steps` values from start to end, computed from both ends as PyTorch does: the first
// half counts up from start, the second half down from end (out[steps-1] is exactly end, and the
// rounding errors are mirrored). step = (end - start) / (steps - 1), given by the caller.
// logspace (power != 0): base ** that value. In double, rounded once to T (an integer type
// truncates toward zero, as PyTorch's cast does).
// An integral exponent is raised by repeated squaring, exact whenever the power fits a double:
// CUDA's pow() may be off by an ulp or two, and 3^1 = 2.9999999999999996 would truncate to 2 in
// an integer logspace where the host's pow (and PyTorch's) gives exactly 3.
__device__ __forceinline__ double integral_power(double base, double v) {
    double result = 1.0, square = base;
    for (unsigned long long e = (unsigned long long)fabs(v); e; e >>= 1, square *= square)
        if (e & 1) result *= square;
    return v < 0 ? 1.0 / result : result;
}

__device__ __forceinline__ double linspace_value(long long i, double start, double end, double step,
                                                 long long steps, double base, int power) {
    const double v = i < steps / 2 ? start + step * (double)i : end - step * (double)(steps - 1 - i);
    if (!power) return v;
    return (v == rint(v) && fabs(v) < 1024.0) ? integral_power(base, v) : pow(base, v);
}

template <typename T>
__device__ void linspace(T* out, double start, double end, double step, long long steps, double base, int power) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < steps) out[i] = (T)linspace_value(i, start, end, step, steps, base, power);
}

extern "C" __global__ void linspace_f32(float* out, double start, double end, double step, long long steps,
                                        double base, int power) { linspace(out, start, end, step, steps, base, power); }
extern "C" __global__ void linspace_f64(double* out, double start, double end, double step, long long steps,
                                        double base, int power) { linspace(out, start, end, step, steps, base, power); }
extern "C" __global__ void linspace_i64(long long* out, double start, double end, double step, long long steps,
                                        double base, int power) { linspace(out, start, end, step, steps, base, power); }

// eye: an n x m row-major matrix, element i = (row i / m, column i % m) is 1 on the diagonal.
template <typename T>
__device__ void eye(T* out, long long m, long long total) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < total) out[i] = (T)(i / m == i % m ? 1 : 0);
}

extern "C" __global__ void eye_f32(float* out, long long m, long long total) { eye(out, m, total); }
extern "C" __global__ void eye_f64(double* out, long long m, long long total) { eye(out, m, total); }
extern "C" __global__ void eye_i64(long long* out, long long m, long long total) { eye(out, m, total); }
extern "C" __global__ void eye_bool(bool* out, long long m, long long total) { eye(out, m, total); }

// linspace/logspace and eye in half precision: the same values, rounded once to the storage type.
extern "C" __global__ void linspace_f16(__half* out, double start, double end, double step, long long steps,
                                        double base, int power) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < steps) out[i] = __double2half(linspace_value(i, start, end, step, steps, base, power));
}
extern "C" __global__ void linspace_bf16(__nv_bfloat16* out, double start, double end, double step, long long steps,
                                         double base, int power) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < steps) out[i] = __float2bfloat16_rn((float)linspace_value(i, start, end, step, steps, base, power));
}
extern "C" __global__ void eye_f16(__half* out, long long m, long long total) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < total) out[i] = __float2half_rn(i / m == i % m ? 1.0f : 0.0f);
}
extern "C" __global__ void eye_bf16(__nv_bfloat16* out, long long m, long long total) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < total) out[i] = __float2bfloat16_rn(i / m == i % m ? 1.0f : 0.0f);
}
