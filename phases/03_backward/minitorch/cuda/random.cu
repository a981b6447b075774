// GENERATED from minitorch/cuda/random.cu by tools/sync_phases.py (phase 03 snapshot): edit the source and re-run, not this file.
// phase: 02
// random.cu - turning cuRAND's raw draws into the distributions PyTorch's random functions promise.
//
// cuRAND (the host API, called from Python) fills a buffer with uniform floats in (0, 1], standard
// normals, or raw 32-bit words. The kernels here map those draws, one thread per element, to what
// was asked: U(from, to) and N(mean, std) written into a tensor's memory, integers in [low, high).
// Every kernel is a grid-stride loop (common.cuh) over n elements: thread t takes t, t + G, ...;
// element i reads only draw i and writes only out[i], so no two threads touch one address. The
// draw buffer may BE the output (same pointer, same element size): each thread reads its element
// before writing it, so the maps also work in place (no __restrict__ on purpose).
#include "common.cuh"

// out[i] = a + b * u[i], computed in double and rounded once to the output type.
// uniform_(from, to): u ~ (0, 1] from cuRAND, a = to, b = from - to: u = 1 gives from, u -> 0 gives
//   (nearly) to, so the values lie in [from, to) as PyTorch's do (up to rounding at the top end).
// normal_(mean, std): u ~ N(0, 1), a = mean, b = std.
template <typename U, typename T>
__device__ void affine(const U* u, T* out, double a, double b, long long n) {
    GRID_STRIDE_LOOP(i, n) {
        out[i] = (T)(a + b * (double)u[i]);
    }
}

extern "C" __global__ void affine_f32(const float* u, float* out, double a, double b, long long n) {
    affine(u, out, a, b, n);
}
extern "C" __global__ void affine_f64(const double* u, double* out, double a, double b, long long n) {
    affine(u, out, a, b, n);
}

// randint: out[i] = low + floor(bits[i] * range / 2^64), bits[i] a uniform 64-bit word (two of
// cuRAND's 32-bit words). The high half of the 128-bit product (__umul64hi) lands in [0, range):
// the range is exact, no loop, and no value is more likely than another by more than
// range / 2^64 (Lemire, "Fast Random Integer Generation in an Interval", 2019, without the
// rejection step: the bias is below 2^-40 for any range under 2^24, far under what sampling sees).
// The sum is taken in unsigned arithmetic: low + offset can pass through 2^63 when the range is
// most of the int64 line, and unsigned wrap-around then gives the right two's-complement result.
// `range` (high - low, up to 2^64 - 1) arrives as the bits of a long long: our launcher packs
// sizes as signed 64-bit integers, and the cast back to unsigned restores it.
extern "C" __global__ void randint_i64(const unsigned long long* bits, long long* out, long long low,
                                       long long range, long long n) {
    GRID_STRIDE_LOOP(i, n) {
        out[i] = (long long)((unsigned long long)low + __umul64hi(bits[i], (unsigned long long)range));
    }
}
