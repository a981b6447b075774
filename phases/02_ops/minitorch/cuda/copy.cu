// GENERATED from minitorch/cuda/copy.cu by tools/sync_phases.py (phase 02 snapshot): edit the source and re-run, not this file.
// phase: 02
// copy.cu - copy any view of a tensor into a fresh contiguous buffer, converting the element
// type on the way: the kernels behind contiguous(), cast() and .to(dtype).
//
//   cast_f32_f64           source contiguous: a flat grid-stride loop with 16-byte vectors
//   cast_strided_f32_f64   source of any strides (a transpose, a slice with steps, a broadcast
//                          view): read through a Layout (common.cuh), written in order
// Names are cast_<from>_<to>, for all 4 x 4 pairs of f32, f64, i64, bool (to == from is a copy);
// phase 05 adds f16 and bf16 (6 x 6 pairs). A name ends in its output's dtype, and so does its
// guard (MT_IF_<to>, common.cuh): cast_i64_f32 is compiled with the other float32 kernels.
//
// Conversions are C++'s: to bool is "x != 0" (so NaN becomes true, as in NumPy); from bool
// gives 0 or 1; float to int64 truncates toward zero. Out-of-range floats and NaN to int64 are
// undefined in C++; the GPU saturates (NaN -> 0) where NumPy gives INT64_MIN: do not rely on it.

#include "common.cuh"

template <typename S, typename D>
struct Convert {
    __device__ D operator()(S x) const { return static_cast<D>(x); }
};

#define CAST(S, D, SS, DS) MT_IF_##DS(                                                               \
    extern "C" __global__ void cast_##SS##_##DS(const S* __restrict__ a, D* __restrict__ out, long long n) { \
        map1_contiguous(a, out, n, Convert<S, D>());                                                \
    }                                                                                               \
    extern "C" __global__ void cast_strided_##SS##_##DS(const S* a, D* out, long long n, const Layout L) { \
        map1_strided(a, out, n, L, Convert<S, D>());                                                \
    })

// every source type to every destination type
#define CAST_FROM(S, SS)                                                                             \
    CAST(S, float, SS, f32) CAST(S, double, SS, f64) CAST(S, long long, SS, i64) CAST(S, bool, SS, bool)

CAST_FROM(float, f32)
CAST_FROM(double, f64)
CAST_FROM(long long, i64)
CAST_FROM(bool, bool)
