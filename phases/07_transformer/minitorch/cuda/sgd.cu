// GENERATED from minitorch/cuda/sgd.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 03
// sgd.cu - one step of stochastic gradient descent, fused: for each parameter element, read p, g
// (and the momentum buffer), update, write back - one pass over memory instead of the four or
// five separate elementwise kernels the formula would take op by op.
//
// The same arithmetic as torch.optim.SGD and native/cpu.py sgd_step, in the same order:
//   g = -grad if maximize else grad
//   g = g + weight_decay * p                                   (if weight_decay)
//   buf = g                                  on the first step (if momentum)
//   buf = momentum * buf + (1 - dampening) * g    on later steps
//   g = g + momentum * buf if nesterov else buf
//   p = p - lr * g
// The scalars arrive already rounded to the parameter's type (Python passes np.float32(lr) ...),
// as NumPy rounds them. Each + and * below is one rounded operation (the _rn helpers of
// common.cuh), so the compiler cannot fuse a * b + c into one FMA: that single rounding is more
// accurate, but would no longer match the cpu backend bit for bit.

#include "common.cuh"

// param, grad, buf: contiguous, n elements each (buf may be null when use_momentum is false).
// The flags are the same for every thread, so their branches cost nothing.
template <typename T>
__device__ __forceinline__ void sgd_step(T* __restrict__ param, const T* __restrict__ grad, T* __restrict__ buf,
                                         long long n, T lr, T momentum, T one_minus_dampening, T weight_decay,
                                         bool use_weight_decay, bool use_momentum, bool nesterov,
                                         bool maximize, bool first_step) {
    // >>> exercise 03.8: the fused SGD kernel
    // hint: one read of param, grad (and buf) and one write of param (and buf) per element, in a GRID_STRIDE_LOOP
    // hint: use add_rn/mul_rn/sub_rn so the result matches the cpu backend bit for bit
    GRID_STRIDE_LOOP(i, n) {
        const T p = param[i];
        T g = maximize ? -grad[i] : grad[i];
        if (use_weight_decay) g = add_rn(g, mul_rn(weight_decay, p));
        if (use_momentum) {
            const T b = first_step ? g : add_rn(mul_rn(buf[i], momentum), mul_rn(one_minus_dampening, g));
            buf[i] = b;
            g = nesterov ? add_rn(g, mul_rn(momentum, b)) : b;
        }
        param[i] = sub_rn(p, mul_rn(lr, g));
    }
    // <<< exercise
}

#define SGD(T, SUF)                                                                                  \
    extern "C" __global__ void sgd_step_##SUF(T* __restrict__ param, const T* __restrict__ grad,    \
                                              T* __restrict__ buf, long long n, T lr, T momentum,   \
                                              T one_minus_dampening, T weight_decay,                \
                                              bool use_weight_decay, bool use_momentum, bool nesterov, \
                                              bool maximize, bool first_step) {                     \
        sgd_step(param, grad, buf, n, lr, momentum, one_minus_dampening, weight_decay,              \
                 use_weight_decay, use_momentum, nesterov, maximize, first_step);                   \
    }

SGD(float, f32)
SGD(double, f64)
// ---- float16 / bfloat16 parameters: stored in half, updated in float ------------------------------
// param, grad and the momentum buffer are half (the buffer has the parameter's dtype, as in
// PyTorch); the scalars arrive as C floats (not rounded to half). Each element is loaded as float,
// the update above runs in float32 with the same rounded operations in the same order, and param
// and buf are rounded once each when stored. The new param uses the float value of buf (not the
// rounded one), as the cpu backend does (native/cpu.py runs the float32 step on float32 copies, then
// rounds param and buf back): the two backends agree to the bit.
template <typename S>
__device__ __forceinline__ void sgd_step_half(S* __restrict__ param, const S* __restrict__ grad, S* __restrict__ buf,
                                              long long n, float lr, float momentum, float one_minus_dampening,
                                              float weight_decay, bool use_weight_decay, bool use_momentum,
                                              bool nesterov, bool maximize, bool first_step) {
    GRID_STRIDE_LOOP(i, n) {
        const float p = to_opmath(param[i]);
        const float gi = to_opmath(grad[i]);
        float g = maximize ? -gi : gi;
        if (use_weight_decay) g = add_rn(g, mul_rn(weight_decay, p));
        if (use_momentum) {
            const float b = first_step ? g : add_rn(mul_rn(to_opmath(buf[i]), momentum), mul_rn(one_minus_dampening, g));
            buf[i] = narrow<S>(b);
            g = nesterov ? add_rn(g, mul_rn(momentum, b)) : b;
        }
        param[i] = narrow<S>(sub_rn(p, mul_rn(lr, g)));
    }
}

#define SGD_HALF(S, SUF)                                                                             \
    extern "C" __global__ void sgd_step_##SUF(S* __restrict__ param, const S* __restrict__ grad,    \
                                              S* __restrict__ buf, long long n, float lr, float momentum, \
                                              float one_minus_dampening, float weight_decay,        \
                                              bool use_weight_decay, bool use_momentum, bool nesterov, \
                                              bool maximize, bool first_step) {                     \
        sgd_step_half(param, grad, buf, n, lr, momentum, one_minus_dampening, weight_decay,         \
                      use_weight_decay, use_momentum, nesterov, maximize, first_step);              \
    }

SGD_HALF(__half, f16)
SGD_HALF(__nv_bfloat16, bf16)
