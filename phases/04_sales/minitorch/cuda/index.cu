// GENERATED from minitorch/cuda/index.cu by tools/sync_phases.py (phase 04 snapshot): edit the source and re-run, not this file.
// phase: 04
// index.cu - gathering and scattering along one dimension, copying into strided views, and
// finding the true elements of a mask: the kernels behind x[index], x[mask], index_select,
// index_add, the gradients of indexing and of max/min(dim), x[key] = value, cat/stack, and the
// DataLoader's batches (an index_select of the shuffled sample numbers).
//
//   gather_<t>        out[i] = a[off_a(i) + w * stride],  w = index[off_index(i)]
//   scatter_add_<t>   dst[off_dst(i) + w * stride] += src[off_src(i)]      (atomicAdd)
//   scatter_store_<t> dst[off_dst(i) + w * stride]  = src[off_src(i)]      (a plain store)
//   scatter_mul_<t>, scatter_max_<t>, scatter_min_<t>: *=, max, min         (atomicCAS loops)
//   copy_into_<t>     dst[off_dst(i)] = src[off_src(i)]                   (dst any strides)
//   nonzero_count, nonzero_scan, nonzero_write: the coordinates of a bool mask's true elements
//
// ---- one Layout describes the whole gather --------------------------------------------------
// take(a, dim, index) has shape  a.shape[:dim] + index.shape + a.shape[dim+1:]  = [P..., B..., Q...]
// and out[p, b, q] = a[p, index[b], q]. Python builds ONE Layout (common.cuh) over that output
// shape with two operands: operand 0 walks `a` over the P and Q dimensions (stride 0 over the B
// dimensions: the index says where to go there), operand 1 walks `index` over the B dimensions
// (stride 0 over P and Q). layout_offsets<2> then gives, for output element i, where its row of a
// starts and which index to use; the index times a's stride along `dim` finishes the address.
// The index may itself be a strided view (a slice of a permutation, a column of nonzero()).
// torch.scatter_add-style scatters (index of the same rank as dst, the gradient of max(dim)) are
// the same kernel with another Layout: operand 0 is dst with a stride of 0 along `dim`.
// torch.gather (out[i][j] = a[i][index[i][j]] for dim=1, index of a's rank) is the gather kernel
// with a Layout over index's shape whose operand 0 is `a` with a stride of 0 along `dim`.
// scatter_store_ writes instead of adding (torch.scatter_, index_copy_, x[idx] = v): where
// several source elements land on one destination, which one stays is unspecified (PyTorch's
// rule on CUDA too); each store is one aligned element, so the survivor is never a mix of two.
//
// ---- indices -----------------------------------------------------------------------------------
// Negative indices count from the end (w + size). An index still outside [0, size) is never used
// to address memory: the gather writes NaN (float), 0 (int64) or false (bool) there and the
// scatter skips it. Checking indices and raising would need the GPU's answer on the host (a
// synchronisation on every indexing op); the Tensor layer checks on cpu, where it is cheap.
// PyTorch instead stops the kernel with a device-side assert, which also ends the CUDA context.
//
// ---- scatter_add and atomics -------------------------------------------------------------------
// Several source elements may land on one destination (a repeated index: x[[0, 0]]): their
// gradients must add. atomicAdd makes each read-add-write indivisible. The ORDER in which the
// additions happen is whatever order the threads reach them, so float results may differ in the
// last bits from run to run (floating point addition is not associative). PyTorch's index_add_ on
// CUDA is nondeterministic in the same way; a deterministic version would sort by destination.
//
// ---- nonzero -----------------------------------------------------------------------------------
// How many elements are true is needed on the host to allocate the result: an unavoidable
// synchronisation (PyTorch's nonzero and x[mask] synchronise too). Three launches:
//   nonzero_count   block b counts the true elements of its CHUNK of the mask -> counts[b]
//   nonzero_scan    one block turns counts into exclusive prefix sums (where block b's results
//                   start) and writes the total to counts[G]; Python copies that one number back
//   nonzero_write   block b walks its chunk again, BLOCK elements at a time; each true element's
//                   place = the block's start + true elements before it in earlier rounds, in
//                   earlier warps (shared memory) and in earlier lanes of its warp (__ballot_sync:
//                   one bit per lane, counted with __popc). So the output keeps row-major order.

#include "common.cuh"

namespace ix {

constexpr long long CHUNK = 4096;            // mask elements per block in the nonzero kernels

// What a gather writes for an index out of range.
template <typename T> __device__ __forceinline__ T missing() { return T(0); }
template <> __device__ __forceinline__ float missing<float>() { return __int_as_float(0x7fc00000); }
template <> __device__ __forceinline__ double missing<double>() { return __longlong_as_double(0x7ff8000000000000ll); }

// atomicAdd for each element type (double needs sm_60+; int64 is two's complement, so adding its
// bits as unsigned gives the signed sum).
__device__ __forceinline__ void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(long long* p, long long v) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

// index -> position along the dimension, or -1 if out of range
__device__ __forceinline__ long long wrap(long long w, long long size) {
    if (w < 0) w += size;
    return (w >= 0 && w < size) ? w : -1;
}

template <typename T>
__device__ __forceinline__ void gather(const T* __restrict__ a, const long long* __restrict__ index, T* __restrict__ out,
                                       long long n, long long size, long long stride, const Layout& L) {
    GRID_STRIDE_LOOP(i, n) {
        long long off[2];
        layout_offsets<2>(L, i, off);
        const long long w = wrap(index[off[1]], size);
        out[i] = w >= 0 ? a[off[0] + w * stride] : missing<T>();
    }
}

// How a scatter combines a source element with its destination.
struct Add {
    template <typename T> __device__ __forceinline__ void operator()(T* p, T v) const { atomic_add(p, v); }
};
struct Store {
    template <typename T> __device__ __forceinline__ void operator()(T* p, T v) const { *p = v; }
};

// ---- scatter_reduce: multiply, max, min with a compare-and-swap loop ---------------------------------
// CUDA has no atomicMul, and no atomicMax/atomicMin for floats; atomicCAS (compare-and-swap on 32 or
// 64 bits) builds any of them: read the old bits, compute the new value, and store it only if the
// bits are still the old ones; if another thread changed them meanwhile, CAS returns theirs and we
// retry with those. Each update is therefore indivisible; the order between threads is not fixed,
// so a float product may differ in the last bits from run to run (max and min do not: they are
// exact). The loop stops early when the value would not change (max of a smaller element).
__device__ __forceinline__ unsigned int as_bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned long long as_bits(double v) { return (unsigned long long)__double_as_longlong(v); }
__device__ __forceinline__ unsigned long long as_bits(long long v) { return (unsigned long long)v; }
__device__ __forceinline__ float from_bits(unsigned int b, float) { return __uint_as_float(b); }
__device__ __forceinline__ double from_bits(unsigned long long b, double) { return __longlong_as_double((long long)b); }
__device__ __forceinline__ long long from_bits(unsigned long long b, long long) { return (long long)b; }

template <typename T, typename F>
__device__ __forceinline__ void atomic_update(T* p, T v, F combine) {
    using U = decltype(as_bits(v));
    U* bits = reinterpret_cast<U*>(p);
    U seen, old = *bits;
    do {
        seen = old;
        const U next = as_bits(combine(from_bits(seen, v), v));
        if (next == seen) return;
        old = atomicCAS(bits, seen, next);
    } while (old != seen);
}

// The combinations; NaN wins max and min (it propagates, as PyTorch's amax/amin).
struct Times {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a * b; }
};
struct Larger {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return (is_nan(b) || b > a) ? b : a; }
};
struct Smaller {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return (is_nan(b) || b < a) ? b : a; }
};
struct Mul {
    template <typename T> __device__ __forceinline__ void operator()(T* p, T v) const { atomic_update(p, v, Times()); }
};
struct Max {
    template <typename T> __device__ __forceinline__ void operator()(T* p, T v) const { atomic_update(p, v, Larger()); }
};
struct Min {
    template <typename T> __device__ __forceinline__ void operator()(T* p, T v) const { atomic_update(p, v, Smaller()); }
};

template <typename T, typename Op>
__device__ __forceinline__ void scatter(T* dst, const long long* __restrict__ index, const T* __restrict__ src,
                                        long long n, long long size, long long stride, const Layout& L, Op op) {
    GRID_STRIDE_LOOP(i, n) {
        long long off[3];
        layout_offsets<3>(L, i, off);
        const long long w = wrap(index[off[1]], size);
        if (w >= 0) op(dst + off[0] + w * stride, src[off[2]]);
    }
}

// dst and src must not overlap (the Tensor layer copies src first when they might).
template <typename T>
__device__ __forceinline__ void copy_into(T* dst, const T* __restrict__ src, long long n, const Layout& L) {
    GRID_STRIDE_LOOP(i, n) {
        long long off[2];
        layout_offsets<2>(L, i, off);
        dst[off[0]] = src[off[1]];
    }
}

// Inclusive prefix sum over the 32 lanes of a warp (Hillis-Steele with shuffles).
__device__ __forceinline__ long long warp_inclusive_scan(long long v) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const long long u = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v += u;
    }
    return v;
}

}  // namespace ix

// ---- entry points ---------------------------------------------------------------------------------
#define GATHER(T, SUF) MT_IF_##SUF(                                                                  \
    extern "C" __global__ void gather_##SUF(const T* __restrict__ a, const long long* __restrict__ index, \
                                            T* __restrict__ out, long long n, long long size, long long stride, \
                                            const Layout L) {                                        \
        ix::gather(a, index, out, n, size, stride, L);                                               \
    }                                                                                                \
    extern "C" __global__ void copy_into_##SUF(T* dst, const T* __restrict__ src, long long n, const Layout L) { \
        ix::copy_into(dst, src, n, L);                                                               \
    })

#define SCATTER(T, SUF) MT_IF_##SUF(                                                                 \
    extern "C" __global__ void scatter_add_##SUF(T* dst, const long long* __restrict__ index,       \
                                                 const T* __restrict__ src, long long n, long long size, \
                                                 long long stride, const Layout L) {                 \
        ix::scatter(dst, index, src, n, size, stride, L, ix::Add());                                 \
    })

#define SCATTER_STORE(T, SUF) MT_IF_##SUF(                                                           \
    extern "C" __global__ void scatter_store_##SUF(T* dst, const long long* __restrict__ index,     \
                                                   const T* __restrict__ src, long long n, long long size, \
                                                   long long stride, const Layout L) {               \
        ix::scatter(dst, index, src, n, size, stride, L, ix::Store());                               \
    })

// scatter_mul_<t>, scatter_max_<t>, scatter_min_<t>: scatter_reduce's prod, amax, amin (CAS loops)
#define SCATTER_REDUCE(T, SUF, NAME, OP) MT_IF_##SUF(                                               \
    extern "C" __global__ void scatter_##NAME##_##SUF(T* dst, const long long* __restrict__ index,   \
                                                      const T* __restrict__ src, long long n, long long size, \
                                                      long long stride, const Layout L) {            \
        ix::scatter(dst, index, src, n, size, stride, L, ix::OP());                                  \
    })
#define SCATTER_REDUCE_ALL(T, SUF) SCATTER_REDUCE(T, SUF, mul, Mul) SCATTER_REDUCE(T, SUF, max, Max) \
    SCATTER_REDUCE(T, SUF, min, Min)

GATHER(float, f32)
GATHER(double, f64)
GATHER(long long, i64)
GATHER(bool, bool)
SCATTER(float, f32)
SCATTER(double, f64)
SCATTER(long long, i64)
SCATTER_STORE(float, f32)
SCATTER_STORE(double, f64)
SCATTER_STORE(long long, i64)
SCATTER_STORE(bool, bool)
SCATTER_REDUCE_ALL(float, f32)
SCATTER_REDUCE_ALL(double, f64)
SCATTER_REDUCE_ALL(long long, i64)

// counts[b] = number of true elements in mask[b * CHUNK, (b + 1) * CHUNK)
extern "C" __global__ void nonzero_count(const bool* __restrict__ mask, long long n, long long* __restrict__ counts) {
    const long long begin = blockIdx.x * ix::CHUNK;
    const long long end = begin + ix::CHUNK < n ? begin + ix::CHUNK : n;
    int c = 0;
    for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) c += mask[i] ? 1 : 0;
    c = block_reduce(c, 0, [](int x, int y) { return x + y; });     // common.cuh
    if (threadIdx.x == 0) counts[blockIdx.x] = c;
}

// One block: counts[0..G) becomes its exclusive prefix sum, counts[G] the total. Each round
// scans blockDim.x counts (warps, then the warps' totals) and carries the round's total on.
extern "C" __global__ void nonzero_scan(long long* counts, long long G) {
    __shared__ long long warp_total[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    long long carry = 0;                               // the same in every thread
    for (long long base = 0; base < G; base += blockDim.x) {
        const long long i = base + threadIdx.x;
        const long long x = i < G ? counts[i] : 0;
        const long long s = ix::warp_inclusive_scan(x);
        if (lane == 31) warp_total[warp] = s;
        __syncthreads();
        if (warp == 0) {
            const long long t = ix::warp_inclusive_scan(lane < warps ? warp_total[lane] : 0);
            if (lane < warps) warp_total[lane] = t;     // now: totals of warps 0..lane
        }
        __syncthreads();
        if (i < G) counts[i] = carry + (warp ? warp_total[warp - 1] : 0) + s - x;
        carry += warp_total[warps - 1];
        __syncthreads();                               // all have read warp_total before the next round
    }
    if (threadIdx.x == 0) counts[G] = carry;
}

// Block b writes the coordinates (row-major, shape.shape[] innermost first, shape.ndim of them)
// of the true elements of its chunk to out[start_b ...], start_b = offsets[b].
extern "C" __global__ void nonzero_write(const bool* __restrict__ mask, long long n, const long long* __restrict__ offsets,
                                         long long* __restrict__ out, const Layout shape) {
    __shared__ int warp_count[32];
    __shared__ int warp_start[33];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const long long begin = blockIdx.x * ix::CHUNK;
    const long long end = begin + ix::CHUNK < n ? begin + ix::CHUNK : n;
    long long pos = offsets[blockIdx.x];
    for (long long base = begin; base < end; base += blockDim.x) {   // the same rounds in every thread
        const long long i = base + threadIdx.x;
        const bool hit = i < end && mask[i];
        const unsigned ballot = __ballot_sync(FULL_MASK, hit);
        if (lane == 0) warp_count[warp] = __popc(ballot);
        __syncthreads();
        if (threadIdx.x == 0) {
            int s = 0;
            for (int w = 0; w < warps; ++w) {
                warp_start[w] = s;
                s += warp_count[w];
            }
            warp_start[warps] = s;
        }
        __syncthreads();
        if (hit) {
            const long long p = pos + warp_start[warp] + __popc(ballot & ((1u << lane) - 1u));
            long long rest = i;
            const long long nd = shape.ndim;
#pragma unroll
            for (int d = 0; d < MAX_DIMS; ++d) {       // innermost first; constant indices (see common.cuh)
                if (d >= nd) break;
                long long q, coord;
                divmod(rest, shape.shape[d], q, coord);
                rest = q;
                out[p * nd + (nd - 1 - d)] = coord;
            }
        }
        pos += warp_start[warps];
        __syncthreads();                               // before warp_count / warp_start change
    }
}
