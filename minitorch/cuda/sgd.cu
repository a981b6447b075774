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
