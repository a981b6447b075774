// GENERATED from minitorch/cuda/elementwise.cu by tools/sync_phases.py (phase 03 snapshot): edit the source and re-run, not this file.
// phase: 02
// elementwise.cu - out[i] = op(a[i], b[i]) and friends: the kernels behind +, -, *, /, **, %, //,
// maximum/minimum (and so clamp), comparisons, logical and/or/xor/not, exp/log/sin/erf/floor/...,
// isnan/isinf/isfinite, nan_to_num, and where.
//
// Every op has up to four entry points, named after the op and the dtype suffix:
//   add_f32                 a, b contiguous and of the output's shape: a flat grid-stride loop
//                           moving 16 bytes per load (the fast path: a pure memory stream)
//   add_strided_f32         any shapes/strides: broadcasting (stride 0) and views (transposes,
//                           slices) are read in place through a Layout (common.cuh), never copied
//   add_scalar_f32          a contiguous, the other operand one number: a + s, or s + a when
//                           `reflected` (s - a is not a - s)
//   add_scalar_strided_f32  the same for a strided a
// Unary ops (neg_f32, neg_strided_f32), where (where_f32, where_strided_f32) follow the pattern.
//
// The math of each op lives in one small functor (struct Add {...}); templates turn functor x
// dtype x access pattern into kernels, and the macros at the end stamp out the extern "C"
// names Python looks up, each inside the guard of its dtype, MT_IF_f32(...) (common.cuh): NVRTC
// compiles this file once per dtype, and a float32 notebook never waits for the float64 kernels.

#include "common.cuh"

// ---- integer arithmetic that wraps -------------------------------------------------------------
// Signed overflow is undefined behaviour in C++; NumPy and PyTorch wrap around (two's
// complement). Doing int64 + - * in unsigned arithmetic gives exactly that wrap-around.
template <typename T> __device__ __forceinline__ T wrap_add(T a, T b) { return a + b; }
template <typename T> __device__ __forceinline__ T wrap_sub(T a, T b) { return a - b; }
template <typename T> __device__ __forceinline__ T wrap_mul(T a, T b) { return a * b; }
template <typename T> __device__ __forceinline__ T wrap_neg(T a) { return -a; }
typedef unsigned long long u64;
template <> __device__ __forceinline__ long long wrap_add(long long a, long long b) { return (long long)((u64)a + (u64)b); }
template <> __device__ __forceinline__ long long wrap_sub(long long a, long long b) { return (long long)((u64)a - (u64)b); }
template <> __device__ __forceinline__ long long wrap_mul(long long a, long long b) { return (long long)((u64)a * (u64)b); }
template <> __device__ __forceinline__ long long wrap_neg(long long a) { return (long long)(0ull - (u64)a); }

// ---- math functions by type (float calls the single-precision routine, double the double) ----
// (m_exp, m_log and m_sqrt live in common.cuh: the reductions and softmax use them too)
__device__ __forceinline__ float  m_tanh(float x)  { return tanhf(x); }
__device__ __forceinline__ double m_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float  m_abs(float x)  { return fabsf(x); }
__device__ __forceinline__ double m_abs(double x) { return fabs(x); }
__device__ __forceinline__ long long m_abs(long long x) { return x < 0 ? wrap_neg(x) : x; }
__device__ __forceinline__ float  m_pow(float a, float b)   { return powf(a, b); }
__device__ __forceinline__ double m_pow(double a, double b) { return pow(a, b); }
__device__ __forceinline__ float  m_sin(float x)   { return sinf(x); }
__device__ __forceinline__ double m_sin(double x)  { return sin(x); }
__device__ __forceinline__ float  m_cos(float x)   { return cosf(x); }
__device__ __forceinline__ double m_cos(double x)  { return cos(x); }
__device__ __forceinline__ float  m_erf(float x)   { return erff(x); }
__device__ __forceinline__ double m_erf(double x)  { return erf(x); }
__device__ __forceinline__ float  m_rsqrt(float x)  { return rsqrtf(x); }
__device__ __forceinline__ double m_rsqrt(double x) { return rsqrt(x); }
__device__ __forceinline__ float  m_log1p(float x)  { return log1pf(x); }
__device__ __forceinline__ double m_log1p(double x) { return log1p(x); }
__device__ __forceinline__ float  m_expm1(float x)  { return expm1f(x); }
__device__ __forceinline__ double m_expm1(double x) { return expm1(x); }
__device__ __forceinline__ float  m_floor(float x)  { return floorf(x); }
__device__ __forceinline__ double m_floor(double x) { return floor(x); }
__device__ __forceinline__ float  m_ceil(float x)   { return ceilf(x); }
__device__ __forceinline__ double m_ceil(double x)  { return ceil(x); }
// rint rounds to the nearest integer, ties to even (2.5 -> 2, 3.5 -> 4), as torch.round and np.round
__device__ __forceinline__ float  m_rint(float x)   { return rintf(x); }
__device__ __forceinline__ double m_rint(double x)  { return rint(x); }
__device__ __forceinline__ float  m_copysign(float a, float b)   { return copysignf(a, b); }
__device__ __forceinline__ double m_copysign(double a, double b) { return copysign(a, b); }
// fmod: a - trunc(a / b) * b, computed exactly; its sign is a's. An integer % by 0 or -1 would
// trap or overflow (LLONG_MIN % -1) in C++: both give 0 here, as NumPy does.
__device__ __forceinline__ float  m_fmod(float a, float b)   { return fmodf(a, b); }
__device__ __forceinline__ double m_fmod(double a, double b) { return fmod(a, b); }
__device__ __forceinline__ long long m_fmod(long long a, long long b) { return (b == 0 || b == -1) ? 0 : a % b; }

// Integer power by repeated squaring: O(log b) multiplies. A negative exponent has no integer
// answer except for bases 1 and -1; we return what truncating 1 / a^|b| gives (0 otherwise).
// NumPy raises for negative integer powers, so the Tensor layer should reject them first.
__device__ __forceinline__ long long m_pow(long long a, long long b) {
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
    long long result = 1;
    while (b) {
        if (b & 1) result = wrap_mul(result, a);
        a = wrap_mul(a, a);
        b >>= 1;
    }
    return result;
}

// ---- binary functors: (T, T) -> T, or -> bool for comparisons ------------------------------------
struct Add { template <typename T> __device__ T operator()(T a, T b) const { return wrap_add(a, b); } };
struct Sub { template <typename T> __device__ T operator()(T a, T b) const { return wrap_sub(a, b); } };
struct Mul { template <typename T> __device__ T operator()(T a, T b) const { return wrap_mul(a, b); } };
struct Div { template <typename T> __device__ T operator()(T a, T b) const { return a / b; } };
struct Pow { template <typename T> __device__ T operator()(T a, T b) const { return m_pow(a, b); } };
// NaN wins, as in NumPy and PyTorch (fmaxf would instead return the other number).
struct Maximum { template <typename T> __device__ T operator()(T a, T b) const { return (a > b || is_nan(a)) ? a : b; } };
struct Minimum { template <typename T> __device__ T operator()(T a, T b) const { return (a < b || is_nan(a)) ? a : b; } };
struct Eq { template <typename T> __device__ bool operator()(T a, T b) const { return a == b; } };
struct Ne { template <typename T> __device__ bool operator()(T a, T b) const { return a != b; } };
struct Lt { template <typename T> __device__ bool operator()(T a, T b) const { return a < b; } };
struct Le { template <typename T> __device__ bool operator()(T a, T b) const { return a <= b; } };
struct Gt { template <typename T> __device__ bool operator()(T a, T b) const { return a > b; } };
struct Ge { template <typename T> __device__ bool operator()(T a, T b) const { return a >= b; } };
// Python's % (torch.remainder): the result takes the divisor's sign. fmod gives the dividend's,
// so a nonzero result of the wrong sign moves by one b. (PyTorch's formula: fmod(-0.0) stays -0.0.)
struct Remainder {
    template <typename T> __device__ T operator()(T a, T b) const {
        T r = m_fmod(a, b);
        return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
    }
};
// Python's // (torch.floor_divide): floor(a / b). Floats follow NumPy's npy_divmod and PyTorch's
// div_floor_floating: the quotient comes from the exact fmod, not from floor(a / b), whose rounded
// a / b can land on the wrong side of an integer; x / 0 is IEEE's inf or NaN.
struct FloorDivide {
    template <typename T> __device__ T operator()(T a, T b) const {
        if (b == T(0)) return a / b;
        const T mod = m_fmod(a, b);
        T div = (a - mod) / b;                                      // an integer, up to rounding
        if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
        if (div == T(0)) return m_copysign(T(0), a / b);           // -0.0 when a / b < 0
        const T fl = m_floor(div);
        return (div - fl > T(0.5)) ? fl + T(1) : fl;               // undo a rounding just below
    }
    // truncating division, minus one when the signs differ and something was cut off. By 0 gives 0
    // (NumPy's answer; PyTorch raises on cpu and so does our Tensor layer there), by -1 negates
    // with wrap-around (LLONG_MIN / -1 overflows in C++).
    __device__ long long operator()(long long a, long long b) const {
        if (b == 0) return 0;
        if (b == -1) return wrap_neg(a);
        const long long q = a / b;
        return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    }
};
// logical ops on bools (the Tensor layer first turns any dtype into x != 0)
struct LogicalAnd { __device__ bool operator()(bool a, bool b) const { return a && b; } };
struct LogicalOr  { __device__ bool operator()(bool a, bool b) const { return a || b; } };
struct LogicalXor { __device__ bool operator()(bool a, bool b) const { return a != b; } };

// ---- unary functors: T -> T ---------------------------------------------------------------------
struct Neg  { template <typename T> __device__ T operator()(T x) const { return wrap_neg(x); } };
struct Exp  { template <typename T> __device__ T operator()(T x) const { return m_exp(x); } };
struct Log  { template <typename T> __device__ T operator()(T x) const { return m_log(x); } };
struct Sqrt { template <typename T> __device__ T operator()(T x) const { return m_sqrt(x); } };
struct Abs  { template <typename T> __device__ T operator()(T x) const { return m_abs(x); } };
struct Tanh { template <typename T> __device__ T operator()(T x) const { return m_tanh(x); } };
// max(x, 0) with NaN kept, like np.maximum(x, 0).
struct Relu { template <typename T> __device__ T operator()(T x) const { return (x > T(0) || is_nan(x)) ? x : T(0); } };
// 1 / (1 + e^-x) overflows e^-x for x < -88 (float). With e = e^-|x| <= 1 nothing overflows:
// x >= 0: 1 / (1 + e);  x < 0: e^x / (1 + e^x) = e / (1 + e).
struct Sigmoid {
    template <typename T> __device__ T operator()(T x) const {
        T e = m_exp(-m_abs(x));
        return x >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
    }
};
struct Sin   { template <typename T> __device__ T operator()(T x) const { return m_sin(x); } };
struct Cos   { template <typename T> __device__ T operator()(T x) const { return m_cos(x); } };
struct Erf   { template <typename T> __device__ T operator()(T x) const { return m_erf(x); } };
struct Rsqrt { template <typename T> __device__ T operator()(T x) const { return m_rsqrt(x); } };
struct Log1p { template <typename T> __device__ T operator()(T x) const { return m_log1p(x); } };
struct Expm1 { template <typename T> __device__ T operator()(T x) const { return m_expm1(x); } };
struct Floor { template <typename T> __device__ T operator()(T x) const { return m_floor(x); } };
struct Ceil  { template <typename T> __device__ T operator()(T x) const { return m_ceil(x); } };
struct Round { template <typename T> __device__ T operator()(T x) const { return m_rint(x); } };
// -1, 0 or 1: PyTorch's (0 < x) - (x < 0), so NaN and -0.0 give 0
struct Sign  { template <typename T> __device__ T operator()(T x) const { return T(int(T(0) < x) - int(x < T(0))); } };
struct LogicalNot { __device__ bool operator()(bool x) const { return !x; } };

// ---- predicates: T -> bool ------------------------------------------------------------------------
// x - x is 0 for every finite x and NaN for +-inf and NaN (no <cmath> needed, any float type).
struct IsNan    { template <typename T> __device__ bool operator()(T x) const { return is_nan(x); } };
struct IsInf    { template <typename T> __device__ bool operator()(T x) const { return !is_nan(x) && is_nan(x - x); } };
struct IsFinite { template <typename T> __device__ bool operator()(T x) const { return !is_nan(x - x); } };

// NaN, +inf and -inf replaced by three numbers (torch.nan_to_num; the Tensor layer fills in the
// defaults: 0, the dtype's largest and lowest finite values).
template <typename T>
struct NanToNum {
    T nan, posinf, neginf;
    __device__ T operator()(T x) const {
        if (is_nan(x)) return nan;
        if (is_nan(x - x)) return x > T(0) ? posinf : neginf;
        return x;
    }
};

// A binary op with one operand fixed to a number: f(x) = op(x, s), or op(s, x) when reflected.
// `reflected` is the same for every thread, so the branch costs nothing.
template <class Op, typename T>
struct WithScalar {
    T s;
    bool reflected;
    __device__ auto operator()(T x) const { return reflected ? Op()(s, x) : Op()(x, s); }
};

// ---- access patterns (map1_contiguous and map1_strided live in common.cuh) ---------------------
// out[i] = f(a[i], b[i]) over contiguous memory, vectorized like map1_contiguous (common.cuh).
template <typename T, typename R, typename F>
__device__ __forceinline__ void map2_contiguous(const T* __restrict__ a, const T* __restrict__ b,
                                                R* __restrict__ out, long long n, F f) {
    // >>> exercise 02.1: the elementwise kernel
    // hint: start simple: GRID_STRIDE_LOOP(i, n) out[i] = f(a[i], b[i]);
    // hint: then the fast path: when a, b and out are 16-byte aligned, load and store Vec<T, N> (16 bytes at once)
    constexpr int N = vec_width<T, R>();
    long long start = 0;
    if (is_aligned<sizeof(T) * N>(a) && is_aligned<sizeof(T) * N>(b) && is_aligned<sizeof(R) * N>(out)) {
        const long long nvec = n / N;
        const Vec<T, N>* av = reinterpret_cast<const Vec<T, N>*>(a);
        const Vec<T, N>* bv = reinterpret_cast<const Vec<T, N>*>(b);
        Vec<R, N>* ov = reinterpret_cast<Vec<R, N>*>(out);
        GRID_STRIDE_LOOP(i, nvec) {
            Vec<T, N> x = av[i];
            Vec<T, N> y = bv[i];
            Vec<R, N> z;
#pragma unroll
            for (int k = 0; k < N; ++k) z.v[k] = f(x.v[k], y.v[k]);
            ov[i] = z;
        }
        start = nvec * N;
    }
    GRID_STRIDE_LOOP(i, n - start) out[start + i] = f(a[start + i], b[start + i]);
    // <<< exercise
}

template <typename T, typename R, typename F>
__device__ __forceinline__ void map2_strided(const T* a, const T* b, R* out, long long n, const Layout& L, F f) {
    GRID_STRIDE_LOOP(i, n) {
        long long off[2];
        layout_offsets<2>(L, i, off);
        out[i] = f(a[off[0]], b[off[1]]);
    }
}

// ---- entry points ------------------------------------------------------------------------------
// BINARY(add, Add, float, float, f32) defines add_f32, add_strided_f32, add_scalar_f32 and
// add_scalar_strided_f32. R is the output type: T, or bool for comparisons.
#define BINARY(NAME, OP, T, R, SUF) MT_IF_##SUF(                                                     \
    extern "C" __global__ void NAME##_##SUF(const T* __restrict__ a, const T* __restrict__ b,      \
                                            R* __restrict__ out, long long n) {                     \
        map2_contiguous(a, b, out, n, OP());                                                        \
    }                                                                                               \
    extern "C" __global__ void NAME##_strided_##SUF(const T* a, const T* b, R* out, long long n,   \
                                                    const Layout L) {                               \
        map2_strided(a, b, out, n, L, OP());                                                        \
    }                                                                                               \
    extern "C" __global__ void NAME##_scalar_##SUF(const T* __restrict__ a, T s, R* __restrict__ out, \
                                                   long long n, bool reflected) {                  \
        map1_contiguous(a, out, n, WithScalar<OP, T>{s, reflected});                                \
    }                                                                                               \
    extern "C" __global__ void NAME##_scalar_strided_##SUF(const T* a, T s, R* out, long long n,   \
                                                           bool reflected, const Layout L) {       \
        map1_strided(a, out, n, L, WithScalar<OP, T>{s, reflected});                                \
    })

// UNARY(exp, Exp, float, f32) defines exp_f32 and exp_strided_f32; UNARY_TO gives the output its
// own type R (bool for isnan).
#define UNARY_TO(NAME, OP, T, R, SUF) MT_IF_##SUF(                                                   \
    extern "C" __global__ void NAME##_##SUF(const T* __restrict__ a, R* __restrict__ out, long long n) { \
        map1_contiguous(a, out, n, OP());                                                           \
    }                                                                                               \
    extern "C" __global__ void NAME##_strided_##SUF(const T* a, R* out, long long n, const Layout L) { \
        map1_strided(a, out, n, L, OP());                                                           \
    })
#define UNARY(NAME, OP, T, SUF) UNARY_TO(NAME, OP, T, T, SUF)

// nan_to_num_f32(a, nan, posinf, neginf, out, n) and nan_to_num_strided_f32(..., L): the three
// numbers come as P, the type computed in (float for the half types); F is the functor built from them.
#define NAN_TO_NUM(T, P, F, SUF) MT_IF_##SUF(                                                        \
    extern "C" __global__ void nan_to_num_##SUF(const T* __restrict__ a, P nan, P posinf, P neginf, \
                                                T* __restrict__ out, long long n) {                 \
        map1_contiguous(a, out, n, F);                                       \
    }                                                                                               \
    extern "C" __global__ void nan_to_num_strided_##SUF(const T* a, P nan, P posinf, P neginf, T* out, \
                                                        long long n, const Layout L) {              \
        map1_strided(a, out, n, L, F);                                       \
    })

#define COMPARISONS(T, SUF)                                                                          \
    BINARY(eq, Eq, T, bool, SUF) BINARY(ne, Ne, T, bool, SUF) BINARY(lt, Lt, T, bool, SUF)          \
    BINARY(le, Le, T, bool, SUF) BINARY(gt, Gt, T, bool, SUF) BINARY(ge, Ge, T, bool, SUF)

// float32 and float64: every op.
#define FLOAT_OPS(T, SUF)                                                                            \
    BINARY(add, Add, T, T, SUF) BINARY(sub, Sub, T, T, SUF) BINARY(mul, Mul, T, T, SUF)             \
    BINARY(div, Div, T, T, SUF) BINARY(pow, Pow, T, T, SUF)                                         \
    BINARY(maximum, Maximum, T, T, SUF) BINARY(minimum, Minimum, T, T, SUF)                         \
    COMPARISONS(T, SUF)                                                                             \
    UNARY(neg, Neg, T, SUF) UNARY(exp, Exp, T, SUF) UNARY(log, Log, T, SUF)                         \
    UNARY(sqrt, Sqrt, T, SUF) UNARY(abs, Abs, T, SUF) UNARY(tanh, Tanh, T, SUF)                     \
    UNARY(sigmoid, Sigmoid, T, SUF) UNARY(relu, Relu, T, SUF)                                       \
    BINARY(remainder, Remainder, T, T, SUF) BINARY(floor_divide, FloorDivide, T, T, SUF)            \
    UNARY(sin, Sin, T, SUF) UNARY(cos, Cos, T, SUF) UNARY(erf, Erf, T, SUF)                         \
    UNARY(rsqrt, Rsqrt, T, SUF) UNARY(log1p, Log1p, T, SUF) UNARY(expm1, Expm1, T, SUF)             \
    UNARY(floor, Floor, T, SUF) UNARY(ceil, Ceil, T, SUF) UNARY(round, Round, T, SUF)               \
    UNARY(sign, Sign, T, SUF)                                                                       \
    UNARY_TO(isnan, IsNan, T, bool, SUF) UNARY_TO(isinf, IsInf, T, bool, SUF)                       \
    UNARY_TO(isfinite, IsFinite, T, bool, SUF)                                                      \
    NAN_TO_NUM(T, T, (NanToNum<T>{nan, posinf, neginf}), SUF)

FLOAT_OPS(float, f32)
FLOAT_OPS(double, f64)

// int64: exact integer arithmetic (no div: true division gives floats, the Tensor layer
// promotes first), integer pow, comparisons, and the unary ops that stay integers.
BINARY(add, Add, long long, long long, i64)
BINARY(sub, Sub, long long, long long, i64)
BINARY(mul, Mul, long long, long long, i64)
BINARY(pow, Pow, long long, long long, i64)
BINARY(maximum, Maximum, long long, long long, i64)
BINARY(minimum, Minimum, long long, long long, i64)
COMPARISONS(long long, i64)
UNARY(neg, Neg, long long, i64)
UNARY(abs, Abs, long long, i64)
UNARY(relu, Relu, long long, i64)
BINARY(remainder, Remainder, long long, long long, i64)
BINARY(floor_divide, FloorDivide, long long, long long, i64)
UNARY(sign, Sign, long long, i64)

// bool: equality and logic.
BINARY(eq, Eq, bool, bool, bool)
BINARY(ne, Ne, bool, bool, bool)
BINARY(logical_and, LogicalAnd, bool, bool, bool)
BINARY(logical_or, LogicalOr, bool, bool, bool)
BINARY(logical_xor, LogicalXor, bool, bool, bool)
UNARY(logical_not, LogicalNot, bool, bool)


// ---- where(cond, a, b) ---------------------------------------------------------------------------
// A select, not arithmetic: both a and b are read, one is kept. Memory-bound like the rest; no
// vector path because cond (1 byte) and a (4 or 8 bytes) have different vector widths.
template <typename T>
__device__ __forceinline__ void where_contiguous(const bool* __restrict__ c, const T* __restrict__ a,
                                                 const T* __restrict__ b, T* __restrict__ out, long long n) {
    GRID_STRIDE_LOOP(i, n) out[i] = c[i] ? a[i] : b[i];
}

template <typename T>
__device__ __forceinline__ void where_strided(const bool* c, const T* a, const T* b, T* out, long long n,
                                              const Layout& L) {
    GRID_STRIDE_LOOP(i, n) {
        long long off[3];
        layout_offsets<3>(L, i, off);
        out[i] = c[off[0]] ? a[off[1]] : b[off[2]];
    }
}

#define WHERE(T, SUF) MT_IF_##SUF(                                                                   \
    extern "C" __global__ void where_##SUF(const bool* __restrict__ c, const T* __restrict__ a,     \
                                           const T* __restrict__ b, T* __restrict__ out, long long n) { \
        where_contiguous(c, a, b, out, n);                                                          \
    }                                                                                               \
    extern "C" __global__ void where_strided_##SUF(const bool* c, const T* a, const T* b, T* out,  \
                                                   long long n, const Layout L) {                   \
        where_strided(c, a, b, out, n, L);                                                          \
    })

WHERE(float, f32)
WHERE(double, f64)
WHERE(long long, i64)
WHERE(bool, bool)

// ---- gradients of unary ops -----------------------------------------------------------------------
// backward(grad, saved) = grad * d(op)/dx, from what forward saved: relu keeps its input x,
// sigmoid and tanh keep their output y (their derivatives are cheapest in terms of y):
//   relu'(x) = [x > 0]      sigmoid'(x) = y (1 - y)      tanh'(x) = 1 - y^2
// grad and saved are contiguous and of one shape (Python makes sure). Each operation is rounded
// on its own (mul_rn ..., common.cuh), in NumPy's order, so the cpu backend's result is matched
// exactly: 1 - y*y cancels near y = +-1, where a fused multiply-add would differ visibly.
struct ReluBackward { template <typename T> __device__ T operator()(T g, T x) const { return x > T(0) ? g : T(0); } };
struct SigmoidBackward {
    template <typename T> __device__ T operator()(T g, T y) const { return mul_rn(mul_rn(g, y), sub_rn(T(1), y)); }
};
struct TanhBackward {
    template <typename T> __device__ T operator()(T g, T y) const { return mul_rn(g, sub_rn(T(1), mul_rn(y, y))); }
};

#define BACKWARD(NAME, OP, T, SUF) MT_IF_##SUF(                                                      \
    extern "C" __global__ void NAME##_backward_##SUF(const T* __restrict__ grad, const T* __restrict__ saved, \
                                                     T* __restrict__ out, long long n) {            \
        map2_contiguous(grad, saved, out, n, OP());                                                 \
    })

BACKWARD(relu, ReluBackward, float, f32)
BACKWARD(relu, ReluBackward, double, f64)
BACKWARD(sigmoid, SigmoidBackward, float, f32)
BACKWARD(sigmoid, SigmoidBackward, double, f64)
BACKWARD(tanh, TanhBackward, float, f32)
BACKWARD(tanh, TanhBackward, double, f64)
