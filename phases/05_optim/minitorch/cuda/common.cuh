// GENERATED from minitorch/cuda/common.cuh by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
// phase: 02
// common.cuh - helpers shared by our kernels: grid-stride loops, 16-byte vectors, and N-d
// strided indexing (how one flat output index becomes an offset into each input).
//
// Included with #include "common.cuh"; compiler.py pastes it into each .cu file before NVRTC
// compiles it, so there is no separate header search path to set up.

#ifndef MINITORCH_COMMON_CUH     // an include guard: compiler.py pastes each header once anyway
#define MINITORCH_COMMON_CUH

// ---- one module per dtype: MT_IF_f32(...) and friends ---------------------------------------------
// elementwise.cu defines every op for every dtype; compiled whole, NVRTC spends about a minute on
// it before the first add can run, though a notebook mostly uses float32. So compiler.py compiles
// the files it lists in SPLIT_BY_DTYPE once per dtype, when a kernel of that dtype is first asked
// for: add_f32 builds the file with the option -DMT_DTYPE_f32, and that module holds only the
// kernels whose names end in _f32 (plus any kernel whose name ends in no dtype).
//
// The trick is one macro per dtype suffix. MT_IF_f32 takes any arguments ("..." makes it a
// variadic macro, so the commas of a kernel's parameter list do not confuse it) and is defined
// in one of two ways:
//     #define MT_IF_f32(...) __VA_ARGS__    gives back its arguments: the kernel is compiled
//     #define MT_IF_f32(...)                gives back nothing: the kernel is not in this module
// It gives them back when this module is the f32 one (MT_DTYPE_f32 defined), or when no
// MT_DTYPE_* is defined at all: nvcc on the whole file (tests/test_nvcc.py, compute-sanitizer
// builds) still sees every kernel. A file's instantiation macro wraps each kernel in the guard of
// the suffix its name ends in, pasting the suffix onto MT_IF_ with ##:
//     #define UNARY(NAME, OP, T, SUF) MT_IF_##SUF(extern "C" __global__ void NAME##_##SUF(...) {...})
// so UNARY(exp, Exp, float, f32) becomes MT_IF_f32(... exp_f32 ...), and exists only in the f32
// module. (f16 and bf16, phase 05's types, get their guards there.)
#if defined(MT_DTYPE_f32) || defined(MT_DTYPE_f64) || defined(MT_DTYPE_i64) || defined(MT_DTYPE_bool) \
    || defined(MT_DTYPE_f16) || defined(MT_DTYPE_bf16)
#define MT_ONE_DTYPE                      // this module holds a single dtype's kernels
#endif

#if !defined(MT_ONE_DTYPE) || defined(MT_DTYPE_f32)
#define MT_IF_f32(...) __VA_ARGS__
#else
#define MT_IF_f32(...)
#endif
#if !defined(MT_ONE_DTYPE) || defined(MT_DTYPE_f64)
#define MT_IF_f64(...) __VA_ARGS__
#else
#define MT_IF_f64(...)
#endif
#if !defined(MT_ONE_DTYPE) || defined(MT_DTYPE_i64)
#define MT_IF_i64(...) __VA_ARGS__
#else
#define MT_IF_i64(...)
#endif
#if !defined(MT_ONE_DTYPE) || defined(MT_DTYPE_bool)
#define MT_IF_bool(...) __VA_ARGS__
#else
#define MT_IF_bool(...)
#endif

// ---- grid-stride loops ---------------------------------------------------------------------
// A grid of G threads walks n elements: thread t takes t, t + G, t + 2G, ... Launching "enough"
// blocks to fill the GPU (not one thread per element) keeps every thread busy for many
// iterations, and the same kernel is correct for any n, even n larger than the grid.
// Indices are 64-bit: tensors may hold more than 2^31 elements.
#define GRID_STRIDE_LOOP(i, n)                                                              \
    _Pragma("unroll 1")                                                                     \
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n);           \
         i += (long long)gridDim.x * blockDim.x)

// ---- 16-byte vectors -------------------------------------------------------------------------
// Memory is fastest when each thread moves 16 bytes per load/store instruction (LDG.128/STG.128):
// fewer instructions for the same bytes. Vec<float, 4> is 16 bytes aligned to 16, so the
// compiler loads it with one instruction. The pointer must really be 16-byte aligned: callers
// check with is_aligned() and fall back to scalar code otherwise.
template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
    T v[N];
};

template <int BYTES>
__device__ __forceinline__ bool is_aligned(const void* p) {
    return ((unsigned long long)p % BYTES) == 0;
}

// ---- N-d strided indexing --------------------------------------------------------------------
// A tensor is a flat buffer plus a shape and strides: element (i0, i1, ..., ik) lives at
// offset i0*s0 + i1*s1 + ... + ik*sk (strides in ELEMENTS here, not bytes). Broadcasting is a
// stride of 0: every index along that dimension reads the same element. Transposes and slices
// are just other strides. So one kernel reads any view of any tensor, without copies.
//
// The output is always contiguous; its flat index i is turned into coordinates by repeated
// division by the sizes (innermost dimension first), and each coordinate times each operand's
// stride gives that operand's offset.
//
// Layout is passed BY VALUE as a kernel argument (it lands in the constant bank, read by every
// thread for free). Python builds the same bytes as a NumPy structured scalar
// (native/cuda/launch.py, LAYOUT): every field is a 64-bit integer, so there is no padding
// to get wrong. Dimensions are stored INNERMOST FIRST (shape[0] is the fastest-moving one), and
// Python has already merged dimensions that can be walked as one and dropped size-1 ones.
#define MAX_DIMS 8
#define MAX_OPERANDS 3      // where(cond, a, b) reads three inputs

struct Layout {
    long long ndim;                             // dimensions in use, 0..MAX_DIMS
    long long shape[MAX_DIMS];                  // sizes, innermost first
    long long strides[MAX_OPERANDS][MAX_DIMS];  // per input operand, in elements, innermost first
};

// q = i / n and r = i % n. A 64-bit division is a long software routine on the GPU; when both
// numbers fit in 32 bits (nearly always) the hardware-friendly 32-bit one gives the same answer.
__device__ __forceinline__ void divmod(long long i, long long n, long long& q, long long& r) {
    if ((((unsigned long long)i) | ((unsigned long long)n)) >> 32 == 0) {
        unsigned int q32 = (unsigned int)i / (unsigned int)n;
        q = q32;
    } else {
        q = i / n;
    }
    r = i - q * n;
}

// Offsets of flat output index i into the first NOPS operands.
// The loop runs over the compile-time MAX_DIMS with an early exit, and is fully unrolled: every
// L.shape[d] / L.strides[k][d] then has a constant index and is read straight from the constant
// bank. A loop bound only known at run time would make the compiler copy the struct to (slow)
// local memory to index it.
template <int NOPS>
__device__ __forceinline__ void layout_offsets(const Layout& L, long long i, long long (&off)[NOPS]) {
#pragma unroll
    for (int k = 0; k < NOPS; ++k) off[k] = 0;
// >>> exercise 02.4: strides: from a flat index to offsets
// hint: L.shape[0] is the innermost dimension: peel coordinates off i with divmod(i, L.shape[d], q, coord)
// hint: add coord * L.strides[k][d] to off[k] for every operand k; a broadcast dimension has stride 0
#pragma unroll
    for (int d = 0; d < MAX_DIMS; ++d) {
        if (d >= L.ndim) break;
        long long coord;
        if (d == L.ndim - 1) {          // outermost dimension: i is already < shape[d]
            coord = i;
        } else {
            long long q;
            divmod(i, L.shape[d], q, coord);
            i = q;
        }
#pragma unroll
        for (int k = 0; k < NOPS; ++k) off[k] += coord * L.strides[k][d];
    }
// <<< exercise
}

// ---- the two access patterns of one-input maps ---------------------------------------------------
// Elements per 16-byte vector for an input of type T and output of type R: the wider of the two
// sets the count (float -> double: 2 floats in, 2 doubles = 16 bytes out).
template <typename T, typename R>
__host__ __device__ constexpr int vec_width() { return 16 / (sizeof(T) > sizeof(R) ? sizeof(T) : sizeof(R)); }

// out[i] = f(a[i]) over contiguous memory. When a and out are aligned for whole vectors (always
// for fresh allocations; not for a view such as x[1:]), each thread moves N elements per load
// and store; the last n % N elements (the tail) go one by one. The alignment test gives the
// same answer in every thread, so the branch costs nothing.
template <typename T, typename R, typename F>
__device__ __forceinline__ void map1_contiguous(const T* __restrict__ a, R* __restrict__ out, long long n, F f) {
    constexpr int N = vec_width<T, R>();
    long long start = 0;
    if (is_aligned<sizeof(T) * N>(a) && is_aligned<sizeof(R) * N>(out)) {
        const long long nvec = n / N;
        const Vec<T, N>* av = reinterpret_cast<const Vec<T, N>*>(a);
        Vec<R, N>* ov = reinterpret_cast<Vec<R, N>*>(out);
        GRID_STRIDE_LOOP(i, nvec) {
            Vec<T, N> x = av[i];
            Vec<R, N> y;
#pragma unroll
            for (int k = 0; k < N; ++k) y.v[k] = f(x.v[k]);
            ov[i] = y;
        }
        start = nvec * N;
    }
    GRID_STRIDE_LOOP(i, n - start) out[start + i] = f(a[start + i]);
}

// out[i] = f(a[offset of i]): a read through a Layout (any strides, broadcast), out contiguous.
template <typename T, typename R, typename F>
__device__ __forceinline__ void map1_strided(const T* a, R* out, long long n, const Layout& L, F f) {
    GRID_STRIDE_LOOP(i, n) {
        long long off[1];
        layout_offsets<1>(L, i, off);
        out[i] = f(a[off[0]]);
    }
}

// ---- small math helpers ---------------------------------------------------------------------
// One IEEE operation, rounded once. Written as a * b + c the compiler may fuse the two into one
// FMA instruction (a single rounding: more accurate, but no longer what NumPy computes). Kernels
// that must match the cpu backend bit for bit (sgd.cu, the backward of tanh/sigmoid) use these.
__device__ __forceinline__ float  add_rn(float a, float b)   { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float  sub_rn(float a, float b)   { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float  mul_rn(float a, float b)   { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }

// exp, log and sqrt by type: float calls the single-precision routine, double the double one.
__device__ __forceinline__ float  m_exp(float x)   { return expf(x); }
__device__ __forceinline__ double m_exp(double x)  { return exp(x); }
__device__ __forceinline__ float  m_log(float x)   { return logf(x); }
__device__ __forceinline__ double m_log(double x)  { return log(x); }
__device__ __forceinline__ float  m_sqrt(float x)  { return sqrtf(x); }
__device__ __forceinline__ double m_sqrt(double x) { return sqrt(x); }

// x != x is true only for NaN; integers are never NaN. (No <cmath> under NVRTC, and this reads
// the same for every type.)
template <typename T>
__device__ __forceinline__ bool is_nan(T x) { return x != x; }

// ---- block-wide reduction of any partial result P, merged by `merge` ---------------------------
// Warp shuffles move values between the registers of a warp's lanes (no memory). Their first
// argument says which lanes take part: here always all 32.
constexpr unsigned FULL_MASK = 0xffffffffu;

// shfl_down(v, d): lane l gets lane l + d's value (its own when l + d >= 32); all 32 lanes call it.
// A struct of several numbers needs an overload of its own that shuffles each field.
template <typename T>
__device__ __forceinline__ T shfl_down(T v, int d) { return __shfl_down_sync(FULL_MASK, v, d); }

// The warp's result, valid in lane 0: after 5 halvings (d = 16, 8, 4, 2, 1) lane 0 holds it.
template <class P, class Merge>
__device__ __forceinline__ P warp_reduce(P v, Merge merge) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v = merge(v, shfl_down(v, d));
    return v;
}

// The block's result, valid in thread 0 (blockDim.x a multiple of 32, at most 1024): each warp
// reduces, one partial per warp goes through shared memory, and warp 0 reduces those. Called once
// per kernel by every thread (it contains __syncthreads()). Lane l merges lane l + d (a later part
// of the data) into its own: the order is fixed, so the result is the same every run.
template <class P, class Merge>
__device__ __forceinline__ P block_reduce(P v, P empty, Merge merge) {
    // >>> exercise 03.5: the block reduction
    // hint: reduce within each warp (warp_reduce), lane 0 of each warp writes its partial to shared memory
    // hint: __syncthreads(), then warp 0 reduces the partials (lanes past the number of warps use `empty`)
    __shared__ P part[32];                      // one partial per warp (at most 1024 / 32 warps)
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_reduce(v, merge);
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) v = warp_reduce(lane < warps ? part[lane] : empty, merge);
    // <<< exercise
    return v;
}

// ---- loads in flight -------------------------------------------------------------------------
constexpr int UNROLL = 4;       // vector loads per thread in flight before any is used

// f(i, p[i]) for i = start, start + step, ... < count, UNROLL loads issued before any is used
// (the compiler does not move loads across iterations of a loop it cannot unroll).
template <typename V, typename F>
__device__ __forceinline__ void scan(const V* __restrict__ p, long long count, long long start, long long step, F f) {
    long long i = start;
    for (; i + (UNROLL - 1) * step < count; i += UNROLL * step) {
        V buf[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) buf[u] = p[i + u * step];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) f(i + u * step, buf[u]);
    }
    for (; i < count; i += step) f(i, p[i]);
}

// ---- float16 and bfloat16: stored in 2 bytes, computed in float ---------------------------------
// __half (1 sign, 5 exponent, 10 mantissa bits: up to 65504) and __nv_bfloat16 (8 exponent bits
// like float, 7 mantissa bits) are storage types. Every kernel loads them as float ("opmath", as
// PyTorch calls it), computes in float, and rounds to nearest-even ONCE when it stores: the
// answer is then the correctly rounded float result, whatever the op. NVRTC finds these two
// headers itself (angle brackets: compiler.py pastes only our quoted includes).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// the dtype guards of the two half types (MT_IF_f32 above explains them)
#if !defined(MT_ONE_DTYPE) || defined(MT_DTYPE_f16)
#define MT_IF_f16(...) __VA_ARGS__
#else
#define MT_IF_f16(...)
#endif
#if !defined(MT_ONE_DTYPE) || defined(MT_DTYPE_bf16)
#define MT_IF_bf16(...) __VA_ARGS__
#else
#define MT_IF_bf16(...)
#endif

// load: half -> float (exact); every other type passes through unchanged
__device__ __forceinline__ float to_opmath(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_opmath(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
__device__ __forceinline__ T to_opmath(T x) { return x; }

// store: round a computed value to the storage type D (bool is 0 or 1). float16 rounds once,
// straight from float, double or long long (as NumPy converts). bfloat16 from double or long long
// goes through float first, as ml_dtypes (our cpu reference) and PyTorch convert: a double just
// above a bfloat16 tie can land on the tie in float and then round to even, so rounding straight
// from double would differ in those rare cases.
template <typename D>
struct Narrow {
    template <typename V> __device__ static D from(V v) { return static_cast<D>(v); }
};
template <>
struct Narrow<__half> {
    __device__ static __half from(float v) { return __float2half_rn(v); }
    __device__ static __half from(double v) { return __double2half(v); }
    __device__ static __half from(long long v) { return __ll2half_rn(v); }
    __device__ static __half from(bool v) { return __float2half_rn(v ? 1.0f : 0.0f); }
};
template <>
struct Narrow<__nv_bfloat16> {
    __device__ static __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); }
    __device__ static __nv_bfloat16 from(double v) { return __float2bfloat16_rn((float)v); }
    __device__ static __nv_bfloat16 from(long long v) { return __float2bfloat16_rn((float)v); }
    __device__ static __nv_bfloat16 from(bool v) { return __float2bfloat16_rn(v ? 1.0f : 0.0f); }
};

// the value v stored as D: narrow<__half>(1.5f); a bool result (a comparison) stays a bool
template <typename D, typename V>
__device__ __forceinline__ D narrow(V v) { return Narrow<D>::from(v); }
template <typename D>
__device__ __forceinline__ bool narrow_result(bool v) { return v; }
template <typename D>
__device__ __forceinline__ D narrow_result(float v) { return Narrow<D>::from(v); }

#endif  // MINITORCH_COMMON_CUH
