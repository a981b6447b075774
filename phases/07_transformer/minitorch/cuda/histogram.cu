// GENERATED from minitorch/cuda/histogram.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 04
// histogram.cu - counting into bins: bincount (bin = the value itself) and histc (equal-width bins
// over [lo, hi]).
//
// Mapping of threads to data: one thread per input element (grid-stride loop over a contiguous
// array); each adds 1 (or its weight) to its bin with an atomic add in global memory, since any
// thread may hit any bin. Integer counts are exact and so the same every run; float weights are
// added in whatever order the atomics land, so their last bits may differ between runs (as
// PyTorch's cuda bincount). Many threads hitting one bin serialize on it: a per-block histogram in
// shared memory, merged once per block, is the usual cure when the bins are few; not done here.

#include "common.cuh"

// counts[x[i]] += 1; every x[i] is in [0, bins) (Python checked min and max)
extern "C" __global__ void bincount_count(const long long* __restrict__ x, unsigned long long* __restrict__ counts,
                                          long long n) {
    GRID_STRIDE_LOOP(i, n) atomicAdd(counts + x[i], 1ull);
}

// out[x[i]] += w[i] (float or double atomics: sm_60 and later)
#define BINCOUNT_WEIGHTS(T, SUF)                                                                     \
    extern "C" __global__ void bincount_weights_##SUF(const long long* __restrict__ x, const T* __restrict__ w, \
                                                      T* __restrict__ out, long long n) {           \
        GRID_STRIDE_LOOP(i, n) atomicAdd(out + x[i], w[i]);                                         \
    }

BINCOUNT_WEIGHTS(float, f32)
BINCOUNT_WEIGHTS(double, f64)

// counts[b] += 1 for each x[i] in [lo, hi], b = (x - lo) * bins / (hi - lo) truncated, the last
// bin closed on the right (x == hi lands in bin bins - 1), as PyTorch's histc. NaN and values
// outside are skipped. Computed in T, like PyTorch.
#define HISTC(T, SUF)                                                                                \
    extern "C" __global__ void histc_##SUF(const T* __restrict__ x, unsigned long long* __restrict__ counts, \
                                           long long n, long long bins, T lo, T hi) {               \
        GRID_STRIDE_LOOP(i, n) {                                                                    \
            const T v = x[i];                                                                       \
            if (v >= lo && v <= hi) {                                                               \
                long long b = (long long)((v - lo) * T(bins) / (hi - lo));                          \
                if (b >= bins) b = bins - 1;                                                        \
                if (b < 0) b = 0;                                                                   \
                atomicAdd(counts + b, 1ull);                                                        \
            }                                                                                       \
        }                                                                                           \
    }

HISTC(float, f32)
HISTC(double, f64)
