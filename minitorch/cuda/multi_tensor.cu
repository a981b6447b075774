// phase: 05
// multi_tensor.cu - one kernel launch updates a whole LIST of tensors (every parameter of an
// optimizer's group), as PyTorch's fused optimizers and apex's multi_tensor_apply do: Adam/AdamW,
// RMSprop, Adagrad and SGD steps, and gradient clipping (the norm of all gradients, scale, clamp). A model has
// tens to hundreds of parameters, many small (biases): one launch each costs ~5 us of host time
// per tensor and leaves the GPU idle between tiny kernels. Here the host sends one launch.
//
// The mapping of threads to data: every tensor is cut into chunks of CHUNK elements, and block b
// works on chunk b: elements [start, min(start + CHUNK, size)) of tensor t, its 256 threads
// striding through them (thread k takes start + k, start + k + 256, ...: neighbouring threads
// touch neighbouring elements, so each warp's loads are coalesced). The host lays out one table
// of 64-bit words in device memory (native/cuda/multi_tensor.py builds it with NumPy, uploads it
// once, and reuses it while the tensors' addresses stay the same):
//
//   table[l * ntensors + t]                 address of tensor t of list l (param, grad, state...; 0 = absent)
//   table[nlists * ntensors + t]            element count of tensor t
//   table[(nlists + 1) * ntensors + b]      chunk b's tensor            (b < gridDim.x)
//   table[(nlists + 1) * ntensors + G + b]  chunk b's first element     (G = gridDim.x)
//
// Every thread of a block reads the same few words: one broadcast load each. The scalars (lr,
// betas, the bias corrections the host computed from the step count) are kernel arguments.
// S is the storage type (float, double, __half, __nv_bfloat16), M the type computed in (double
// for double, float otherwise): a half value is loaded as float, updated, and rounded once.

#include "common.cuh"

constexpr long long CHUNK = 4096;        // elements per block: 16 per thread of a 256-thread block

struct Chunk {
    long long tensor, start, end;
};

__device__ __forceinline__ Chunk my_chunk(const long long* __restrict__ table, long long ntensors, int nlists) {
    const long long* sizes = table + nlists * ntensors;
    const long long* chunk_tensor = sizes + ntensors;
    const long long* chunk_start = chunk_tensor + gridDim.x;
    Chunk c;
    c.tensor = chunk_tensor[blockIdx.x];
    c.start = chunk_start[blockIdx.x];
    c.end = c.start + CHUNK < sizes[c.tensor] ? c.start + CHUNK : sizes[c.tensor];
    return c;
}

// the address of tensor t of list l, as an S*
template <typename S>
__device__ __forceinline__ S* tensor_of(const long long* __restrict__ table, long long ntensors, int l, long long t) {
    return reinterpret_cast<S*>(table[l * ntensors + t]);
}

template <typename M>
__device__ __forceinline__ M max_nan(M a, M b) { return (a > b || is_nan(a)) ? a : b; }   // NaN wins, as torch.maximum

// ---- Adam / AdamW --------------------------------------------------------------------------------
// The same steps as torch.optim.Adam's single-tensor code and native/cpu.py's _adam_update.
// step_size = lr / (1 - beta1^t) and bias_correction2_sqrt = sqrt(1 - beta2^t) come from the host.
template <typename S, typename M>
__device__ __forceinline__ void adam_update(S* __restrict__ param, const S* __restrict__ grad, S* __restrict__ exp_avg,
                                            S* __restrict__ exp_avg_sq, S* __restrict__ max_exp_avg_sq, long long i,
                                            M lr, M beta1, M beta2, M eps, M weight_decay, M step_size,
                                            M bias_correction2_sqrt, bool amsgrad, bool maximize, bool decoupled) {
    // >>> exercise 05.10: the Adam element update
    // hint: load param[i], grad[i], exp_avg[i], exp_avg_sq[i] as M (to_opmath); negate g if maximize
    // hint: weight decay: p *= 1 - lr * wd when decoupled, else g += wd * p
    // hint: m += (1 - beta1) * (g - m);  v = beta2 * v + (1 - beta2) * g * g
    // hint: store m and v (narrow<S>); with amsgrad keep the running max (max_nan) and use it as v
    // hint: param[i] = p - step_size * (m / (sqrt(v) / bias_correction2_sqrt + eps))
    M p = to_opmath(param[i]);
    M g = to_opmath(grad[i]);
    if (maximize) g = -g;
    if (weight_decay != M(0)) {
        if (decoupled) p = p * (M(1) - lr * weight_decay);
        else g = g + weight_decay * p;
    }
    M m = to_opmath(exp_avg[i]);
    m = m + (M(1) - beta1) * (g - m);
    M v = to_opmath(exp_avg_sq[i]) * beta2 + (M(1) - beta2) * g * g;
    exp_avg[i] = narrow<S>(m);
    exp_avg_sq[i] = narrow<S>(v);
    if (amsgrad) {
        v = max_nan(to_opmath(max_exp_avg_sq[i]), v);
        max_exp_avg_sq[i] = narrow<S>(v);
    }
    const M denom = m_sqrt(v) / bias_correction2_sqrt + eps;
    param[i] = narrow<S>(p - step_size * (m / denom));
    // <<< exercise
}

// lists: 0 param, 1 grad, 2 exp_avg, 3 exp_avg_sq, 4 max_exp_avg_sq (0 unless amsgrad)
template <typename S, typename M>
__device__ __forceinline__ void adam(const long long* __restrict__ table, long long ntensors, M lr, M beta1, M beta2,
                                     M eps, M weight_decay, M step_size, M bias_correction2_sqrt, bool amsgrad,
                                     bool maximize, bool decoupled) {
    const Chunk c = my_chunk(table, ntensors, 5);
    S* param = tensor_of<S>(table, ntensors, 0, c.tensor);
    const S* grad = tensor_of<S>(table, ntensors, 1, c.tensor);
    S* exp_avg = tensor_of<S>(table, ntensors, 2, c.tensor);
    S* exp_avg_sq = tensor_of<S>(table, ntensors, 3, c.tensor);
    S* max_exp_avg_sq = tensor_of<S>(table, ntensors, 4, c.tensor);
    for (long long i = c.start + threadIdx.x; i < c.end; i += blockDim.x)
        adam_update<S, M>(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, i, lr, beta1, beta2, eps, weight_decay,
                          step_size, bias_correction2_sqrt, amsgrad, maximize, decoupled);
}

#define ADAM(S, M, SUF) MT_IF_##SUF(                                                                      \
    extern "C" __global__ void adam_##SUF(const long long* __restrict__ table, long long ntensors, M lr,  \
                                          M beta1, M beta2, M eps, M weight_decay, M step_size,           \
                                          M bias_correction2_sqrt, bool amsgrad, bool maximize,           \
                                          bool decoupled) {                                               \
        adam<S, M>(table, ntensors, lr, beta1, beta2, eps, weight_decay, step_size, bias_correction2_sqrt, \
                   amsgrad, maximize, decoupled);                                                         \
    })

// ---- RMSprop -------------------------------------------------------------------------------------
// lists: 0 param, 1 grad, 2 square_avg, 3 grad_avg (0 unless centered), 4 momentum_buffer (0 unless momentum > 0)
template <typename S, typename M>
__device__ __forceinline__ void rmsprop(const long long* __restrict__ table, long long ntensors, M lr, M alpha, M eps,
                                        M weight_decay, M momentum, bool centered, bool maximize) {
    const Chunk c = my_chunk(table, ntensors, 5);
    S* param = tensor_of<S>(table, ntensors, 0, c.tensor);
    const S* grad = tensor_of<S>(table, ntensors, 1, c.tensor);
    S* square_avg = tensor_of<S>(table, ntensors, 2, c.tensor);
    S* grad_avg = tensor_of<S>(table, ntensors, 3, c.tensor);
    S* buf = tensor_of<S>(table, ntensors, 4, c.tensor);
    for (long long i = c.start + threadIdx.x; i < c.end; i += blockDim.x) {
        M p = to_opmath(param[i]);
        M g = to_opmath(grad[i]);
        if (maximize) g = -g;
        if (weight_decay != M(0)) g = g + weight_decay * p;
        const M v = to_opmath(square_avg[i]) * alpha + (M(1) - alpha) * g * g;
        square_avg[i] = narrow<S>(v);
        M avg;
        if (centered) {
            M a = to_opmath(grad_avg[i]);
            a = a + (M(1) - alpha) * (g - a);
            grad_avg[i] = narrow<S>(a);
            avg = m_sqrt(v - a * a);
        } else {
            avg = m_sqrt(v);
        }
        avg = avg + eps;
        if (momentum > M(0)) {
            const M b = to_opmath(buf[i]) * momentum + g / avg;
            buf[i] = narrow<S>(b);
            param[i] = narrow<S>(p - lr * b);
        } else {
            param[i] = narrow<S>(p - lr * (g / avg));
        }
    }
}

#define RMSPROP(S, M, SUF) MT_IF_##SUF(                                                                   \
    extern "C" __global__ void rmsprop_##SUF(const long long* __restrict__ table, long long ntensors, M lr, \
                                             M alpha, M eps, M weight_decay, M momentum, bool centered,  \
                                             bool maximize) {                                             \
        rmsprop<S, M>(table, ntensors, lr, alpha, eps, weight_decay, momentum, centered, maximize);       \
    })

// ---- Adagrad -------------------------------------------------------------------------------------
// lists: 0 param, 1 grad, 2 sum. clr = lr / (1 + (step - 1) * lr_decay) comes from the host.
template <typename S, typename M>
__device__ __forceinline__ void adagrad(const long long* __restrict__ table, long long ntensors, M clr, M eps,
                                        M weight_decay, bool maximize) {
    const Chunk c = my_chunk(table, ntensors, 3);
    S* param = tensor_of<S>(table, ntensors, 0, c.tensor);
    const S* grad = tensor_of<S>(table, ntensors, 1, c.tensor);
    S* sum = tensor_of<S>(table, ntensors, 2, c.tensor);
    for (long long i = c.start + threadIdx.x; i < c.end; i += blockDim.x) {
        M p = to_opmath(param[i]);
        M g = to_opmath(grad[i]);
        if (maximize) g = -g;
        if (weight_decay != M(0)) g = g + weight_decay * p;
        const M s = to_opmath(sum[i]) + g * g;
        sum[i] = narrow<S>(s);
        param[i] = narrow<S>(p - clr * (g / (m_sqrt(s) + eps)));
    }
}

#define ADAGRAD(S, M, SUF) MT_IF_##SUF(                                                                   \
    extern "C" __global__ void adagrad_##SUF(const long long* __restrict__ table, long long ntensors, M clr, \
                                             M eps, M weight_decay, bool maximize) {                      \
        adagrad<S, M>(table, ntensors, clr, eps, weight_decay, maximize);                                  \
    })

// ---- SGD -----------------------------------------------------------------------------------------
// lists: 0 param, 1 grad, 2 momentum_buffer (0 when momentum is 0). The arithmetic of sgd.cu, with its
// rounded operations in its order (see there), so a list updated here and one parameter updated by
// sgd_step_* agree to the bit, and both match native/cpu.py's sgd_step.
template <typename S, typename M>
__device__ __forceinline__ void sgd(const long long* __restrict__ table, long long ntensors, M lr, M momentum,
                                    M one_minus_dampening, M weight_decay, bool nesterov, bool maximize,
                                    bool first_step) {
    const Chunk c = my_chunk(table, ntensors, 3);
    S* param = tensor_of<S>(table, ntensors, 0, c.tensor);
    const S* grad = tensor_of<S>(table, ntensors, 1, c.tensor);
    S* buf = tensor_of<S>(table, ntensors, 2, c.tensor);
    for (long long i = c.start + threadIdx.x; i < c.end; i += blockDim.x) {
        const M p = to_opmath(param[i]);
        const M gi = to_opmath(grad[i]);
        M g = maximize ? -gi : gi;
        if (weight_decay != M(0)) g = add_rn(g, mul_rn(weight_decay, p));
        if (momentum != M(0)) {
            const M b = first_step ? g : add_rn(mul_rn(to_opmath(buf[i]), momentum), mul_rn(one_minus_dampening, g));
            buf[i] = narrow<S>(b);
            g = nesterov ? add_rn(g, mul_rn(momentum, b)) : b;
        }
        param[i] = narrow<S>(sub_rn(p, mul_rn(lr, g)));
    }
}

#define SGD_LIST(S, M, SUF) MT_IF_##SUF(                                                                  \
    extern "C" __global__ void sgd_##SUF(const long long* __restrict__ table, long long ntensors, M lr,   \
                                         M momentum, M one_minus_dampening, M weight_decay, bool nesterov, \
                                         bool maximize, bool first_step) {                                \
        sgd<S, M>(table, ntensors, lr, momentum, one_minus_dampening, weight_decay, nesterov, maximize,    \
                  first_step);                                                                            \
    })

// ---- gradient clipping -----------------------------------------------------------------------------
// grads_norm: the norm of ALL the tensors of list 0 together, in one launch. kind: 0 the max |x|
// (inf norm), 1 the sum of |x|, 2 the sum of x^2, 3 the sum of |x|^p. Each block reduces its chunk
// to one double (block_reduce) and writes it to partials[b]; the LAST block to finish (a ticket from
// an atomic counter, after a __threadfence that makes every partial visible first) adds the partials
// in index order - the same order every run, so the result is deterministic - and stores the total
// of this list in group_totals[group]. Lists of different dtypes are separate launches, in stream
// order; the last one (final = true) combines group_totals[0..group], takes the root, writes the
// norm (as S) and the clipping factor min(1, max_norm / (norm + 1e-6)) as a double. The last block
// resets the counter to 0 for the next launch.
__device__ __forceinline__ double norm_merge(double a, double b, int kind) {
    return kind == 0 ? (a > b || is_nan(a) ? a : b) : a + b;      // max (NaN wins) for the inf norm, else a sum
}

template <typename S>
__device__ __forceinline__ void grads_norm(const long long* __restrict__ table, long long ntensors, int kind, double p,
                                           double* __restrict__ partials, unsigned int* counter,
                                           double* __restrict__ group_totals, long long group, bool final,
                                           double max_norm, S* __restrict__ norm_out, double* __restrict__ coef_out) {
    const Chunk c = my_chunk(table, ntensors, 1);
    const S* g = tensor_of<S>(table, ntensors, 0, c.tensor);
    double acc = 0.0;
    for (long long i = c.start + threadIdx.x; i < c.end; i += blockDim.x) {
        const double x = fabs((double)to_opmath(g[i]));
        const double term = kind == 2 ? x * x : kind == 3 ? pow(x, p) : x;
        acc = norm_merge(acc, term, kind);
    }
    const auto merge = [kind](double a, double b) { return norm_merge(a, b, kind); };
    acc = block_reduce(acc, 0.0, merge);
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        __threadfence();                                    // the partial is visible before the ticket is
        last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    // the last block: every other block's partial is in memory; read around L1 (__ldcg)
    acc = 0.0;
    for (long long b = threadIdx.x; b < gridDim.x; b += blockDim.x) acc = norm_merge(acc, __ldcg(partials + b), kind);
    acc = block_reduce(acc, 0.0, merge);
    if (threadIdx.x != 0) return;
    *counter = 0;
    group_totals[group] = acc;
    if (!final) return;
    double total = 0.0;
    for (long long k = 0; k <= group; ++k) total = norm_merge(total, __ldcg(group_totals + k), kind);
    total = kind == 2 ? sqrt(total) : kind == 3 ? pow(total, 1.0 / p) : total;
    const S norm = narrow<S>(total);
    *norm_out = norm;
    const double coef = max_norm / ((double)to_opmath(norm) + 1e-6);
    *coef_out = coef > 1.0 ? 1.0 : coef;                  // NaN stays NaN, as torch.clamp
}

#define GRADS_NORM(S, SUF) MT_IF_##SUF(                                                                   \
    extern "C" __global__ void grads_norm_##SUF(const long long* __restrict__ table, long long ntensors,  \
                                                int kind, double p, double* __restrict__ partials,        \
                                                unsigned int* counter, double* __restrict__ group_totals, \
                                                long long group, bool final, double max_norm,             \
                                                S* __restrict__ norm_out, double* __restrict__ coef_out) { \
        grads_norm<S>(table, ntensors, kind, p, partials, counter, group_totals, group, final, max_norm,   \
                      norm_out, coef_out);                                                                \
    })

// g *= coef (read from device memory: the factor grads_norm computed, with no trip to the host)
template <typename S, typename M>
__device__ __forceinline__ void grads_scale(const long long* __restrict__ table, long long ntensors,
                                            const double* __restrict__ coef) {
    const Chunk c = my_chunk(table, ntensors, 1);
    S* g = tensor_of<S>(table, ntensors, 0, c.tensor);
    const M k = (M)*coef;
    for (long long i = c.start + threadIdx.x; i < c.end; i += blockDim.x) g[i] = narrow<S>(to_opmath(g[i]) * k);
}

// g = min(max(g, -clip), clip); NaN stays NaN
template <typename S, typename M>
__device__ __forceinline__ void grads_clamp(const long long* __restrict__ table, long long ntensors, M clip) {
    const Chunk c = my_chunk(table, ntensors, 1);
    S* g = tensor_of<S>(table, ntensors, 0, c.tensor);
    for (long long i = c.start + threadIdx.x; i < c.end; i += blockDim.x) {
        const M x = to_opmath(g[i]);
        g[i] = narrow<S>(x < -clip ? -clip : x > clip ? clip : x);
    }
}

#define GRADS_SCALE_CLAMP(S, M, SUF) MT_IF_##SUF(                                                          \
    extern "C" __global__ void grads_scale_##SUF(const long long* __restrict__ table, long long ntensors,  \
                                                 const double* __restrict__ coef) {                       \
        grads_scale<S, M>(table, ntensors, coef);                                                          \
    }                                                                                                      \
    extern "C" __global__ void grads_clamp_##SUF(const long long* __restrict__ table, long long ntensors, M clip) { \
        grads_clamp<S, M>(table, ntensors, clip);                                                          \
    })

#define ALL(S, M, SUF)                                                  \
    ADAM(S, M, SUF) RMSPROP(S, M, SUF) ADAGRAD(S, M, SUF) SGD_LIST(S, M, SUF) \
    GRADS_NORM(S, SUF) GRADS_SCALE_CLAMP(S, M, SUF)

ALL(float, float, f32)
ALL(double, double, f64)
ALL(__half, float, f16)
ALL(__nv_bfloat16, float, bf16)
