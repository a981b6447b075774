// GENERATED from minitorch/cuda/random.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
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

// ---- sorting random keys: randperm and multinomial without replacement -----------------------
// Both pick elements in the order of random keys: randperm sorts n keys and returns the positions;
// multinomial without replacement sorts each row's keys -log(u) / p (the exponential race, see
// multinomial_keys) and keeps the first k. The sort is a bitonic sorting network (Batcher, 1968):
// each row is padded to seg = a power of two, then for k = 2, 4, ..., seg and j = k/2, ..., 1
// one launch of bitonic_step compares every element i with its partner i ^ j and swaps the pair
// into ascending order when bit k of i's position in the row is 0, descending when it is 1. The
// launches follow one another on the stream, so each step sees the last one's result. O(n log^2 n)
// work: simple and branch-light, slower than a radix sort for millions of keys.
//
// Keys are 64-bit unsigned words; values the int64 position within the row. Padding keys are all
// ones, larger than every real key (real randperm keys keep 63 bits; a float key's bit pattern is
// at most +inf's, 0x7FF0...), so padding sorts to the end of its row and the first n are real.

// Thread i handles the pair (i, i ^ j) when i is its lower end: each pair is touched by exactly one
// thread, and the pairs of one step are disjoint, so there is no race within a launch.
extern "C" __global__ void bitonic_step(unsigned long long* keys, long long* vals, long long total,
                                        long long seg, long long j, long long k) {
    GRID_STRIDE_LOOP(i, total) {
        const long long l = i ^ j;              // j < seg: the partner lies in the same row
        if (l > i) {
            const bool ascending = ((i & (seg - 1)) & k) == 0;
            const unsigned long long ki = keys[i], kl = keys[l];
            if ((ki > kl) == ascending && ki != kl) {
                keys[i] = kl;
                keys[l] = ki;
                const long long v = vals[i];
                vals[i] = vals[l];
                vals[l] = v;
            }
        }
    }
}

// randperm's keys: 63 random bits for the n real slots, all ones for the padding; vals[i] = i.
// bits and keys may be one buffer (in place: each thread reads its word before writing it).
extern "C" __global__ void randperm_keys(const unsigned long long* bits, unsigned long long* keys, long long* vals,
                                         long long n, long long seg) {
    GRID_STRIDE_LOOP(i, seg) {
        keys[i] = i < n ? bits[i] >> 1 : ~0ull;
        vals[i] = i;
    }
}

// multinomial without replacement, the exponential race (Efraimidis & Spirakis, 2006, "Weighted
// random sampling with a reservoir", in its -log(u)/p form; the same as the Gumbel top-k trick):
// category c gets the key E_c / p_c with E_c = -log(u_c) ~ Exp(1), an exponential time with rate
// p_c. The order in which the categories "arrive" is the order of drawing them one by one without
// replacement with probabilities proportional to p, so the k smallest keys are the sample. p = 0
// gives +inf (never picked while positive-p categories remain). The key is stored as the bit
// pattern of a non-negative double, whose unsigned order is its numeric order.
// Thread i: row r = i / seg, slot c = i % seg; u holds rows x n draws in (0, 1].
template <typename T>
__device__ void multinomial_keys(const T* p, const double* u, unsigned long long* keys, long long* vals,
                                 long long rows, long long n, long long seg) {
    GRID_STRIDE_LOOP(i, rows * seg) {
        long long r, c;
        divmod(i, seg, r, c);
        unsigned long long key = ~0ull;
        if (c < n) {
            const double pc = (double)p[r * n + c];
            const double e = -log(u[r * n + c]);
            key = (unsigned long long)__double_as_longlong(pc > 0.0 ? e / pc : __longlong_as_double(0x7FF0000000000000ll));
        }
        keys[i] = key;
        vals[i] = c;
    }
}

extern "C" __global__ void multinomial_keys_f32(const float* p, const double* u, unsigned long long* keys,
                                                long long* vals, long long rows, long long n, long long seg) {
    multinomial_keys(p, u, keys, vals, rows, n, seg);
}
extern "C" __global__ void multinomial_keys_f64(const double* p, const double* u, unsigned long long* keys,
                                                long long* vals, long long rows, long long n, long long seg) {
    multinomial_keys(p, u, keys, vals, rows, n, seg);
}

// ---- multinomial with replacement: inverse CDF ------------------------------------------------
// Step 1, multinomial_cdf: each row's running sum cdf[c] = p[0] + ... + p[c], in double. One block
// of SCAN_BLOCK threads per row walks the row in chunks of SCAN_BLOCK: each chunk is summed in
// shared memory by an inclusive Hillis-Steele scan (log2(SCAN_BLOCK) rounds: in round `off` every
// thread adds the value `off` places to its left), then offset by `carry`, the sum of the chunks
// before. Every thread of the block runs the same number of chunks (the loop bound is the row's),
// so all reach each __syncthreads.
#define SCAN_BLOCK 256

template <typename T>
__device__ void multinomial_cdf(const T* p, double* cdf, long long rows, long long n) {
    __shared__ double s[SCAN_BLOCK];
    const int t = threadIdx.x;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* row = p + r * n;
        double* out = cdf + r * n;
        double carry = 0.0;
        for (long long base = 0; base < n; base += SCAN_BLOCK) {
            const long long c = base + t;
            s[t] = c < n ? (double)row[c] : 0.0;
            __syncthreads();
            for (int off = 1; off < SCAN_BLOCK; off <<= 1) {
                const double left = t >= off ? s[t - off] : 0.0;
                __syncthreads();                 // everyone has read before anyone writes
                s[t] += left;
                __syncthreads();                 // everyone has written before the next round reads
            }
            if (c < n) out[c] = carry + s[t];
            carry += s[SCAN_BLOCK - 1];          // the chunk's total (padding added 0)
            __syncthreads();                     // s is read above before the next chunk overwrites it
        }
    }
}

extern "C" __global__ void multinomial_cdf_f32(const float* p, double* cdf, long long rows, long long n) {
    multinomial_cdf(p, cdf, rows, n);
}
extern "C" __global__ void multinomial_cdf_f64(const double* p, double* cdf, long long rows, long long n) {
    multinomial_cdf(p, cdf, rows, n);
}

// Step 2, multinomial_draw: sample i of row r = i / samples takes target = (1 - u) * total in
// [0, total) and returns the first category whose cdf exceeds it (a binary search over the row):
// cdf[c-1] <= target < cdf[c] means p[c] > 0, so zero-probability categories are never drawn. A
// target rounded up to the total is moved just below it, so the search always ends in the row.
extern "C" __global__ void multinomial_draw(const double* cdf, const double* u, long long* out,
                                            long long rows, long long n, long long samples) {
    GRID_STRIDE_LOOP(i, rows * samples) {
        long long r, unused;
        divmod(i, samples, r, unused);
        const double* c = cdf + r * n;
        const double total = c[n - 1];
        double target = (1.0 - u[i]) * total;
        if (!(target < total)) target = nextafter(total, 0.0);
        long long lo = 0, hi = n - 1;            // the answer lies in [lo, hi]
        while (lo < hi) {
            const long long mid = lo + (hi - lo) / 2;
            if (c[mid] > target) hi = mid;
            else lo = mid + 1;
        }
        out[i] = lo;
    }
}

// float16 and bfloat16 outputs: the draws are float (cuRAND has no half draws), computed in
// double like the rest and rounded once on store (narrow, common.cuh).
extern "C" __global__ void affine_f16(const float* u, __half* out, double a, double b, long long n) {
    GRID_STRIDE_LOOP(i, n) { out[i] = narrow<__half>(a + b * (double)u[i]); }
}
extern "C" __global__ void affine_bf16(const float* u, __nv_bfloat16* out, double a, double b, long long n) {
    GRID_STRIDE_LOOP(i, n) { out[i] = narrow<__nv_bfloat16>(a + b * (double)u[i]); }
}
