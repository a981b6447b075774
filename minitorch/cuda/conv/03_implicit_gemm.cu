// phase: 06
// 03_implicit_gemm.cu - rung 3 of the convolution ladder: the im2col product without the im2col
// buffer. Each of the three convolution passes is a GEMM whose operands are read straight from
// the NCHW tensors, gathered into shared-memory tiles as the k loop reaches them:
//
//   pass   C tile (M x Ncols)                  reduction (k)        A [M, k]       B [k, Ncols]
//   fwd    y:  out channel x output pixel      (c, r, s)            weight         im2col(x)
//   dgrad  dx: in channel  x input pixel       (k, r, s)            weight^T       dy, gathered where
//                                                                                   p*stride = h+pad-r*dil
//   wgrad  dw: out channel x (c, r, s)          output pixel (n,p,q) dy            im2col(x)^T
//
// per group (blockIdx.z % G); "pixel" runs over every image (n, p, q), so small images still make
// wide tiles. wgrad's reduction (N*P*Q) is long and its C small: blockIdx.z / G also splits the k
// range into chunks, each block writing its own partial sums, split innermost: [K, C/G*R*S, splits]
// (Python adds each run of `splits` contiguous partials with our reduction, one block per weight:
// deterministic, no atomics, and cheap even for hundreds of splits).
//
// Threads: 256 per block compute a BM x BN tile of C, each TM x TN values in registers, rows
// ty + i*(BM/TM) and columns tx + j*(BN/TN) (interleaved: a warp's 32 consecutive tx store 32
// consecutive pixels, coalesced). Per k-tile of BK = 16, the block stages A (BM x BK) and B
// (BK x BN) in shared memory: every value gathered from global memory is then used TN (A) or TM
// (B) times from registers. Since 256 is a multiple of BN, each thread always loads the same B
// column, so it decodes that column's (n, p, q) once per block, not once per element.
// Out-of-range rows, columns and k (sizes that are not multiples of the tile) load zeros and
// store nothing. Two __syncthreads per k-tile: after the loads (the tile is complete) and after
// the products (nobody still reads the tile the next loads overwrite).
//
// Fused into the backward passes (fewer launches, dy read once): a fused ReLU's mask, dy counting
// only where the saved output y > 0, applied as dy is loaded (dgrad's B, wgrad's A); and the bias
// gradient, sum of dy over (n, p, q), as one more column of wgrad's C whose B entries are all 1.
//
// Fused max pooling (entries conv2d_igemm_fwd_maxpool2_*): the forward of conv -> (bias, ReLU) ->
// MaxPool2d(2) (kernel 2, stride 2, no padding: the seed CNN's and LeNet-5's) in one launch. The
// pixel columns are renumbered window by window, column j = 4 * (n, po, qo) + t with window
// position t = (dp, dq) in PyTorch's order (0,0), (0,1), (1,0), (1,1), i.e. pixel (2po + dp,
// 2qo + dq); a bottom row or right column that no window covers (odd P or Q: MaxPool2d floors) is
// never computed. Every BN is a multiple of 4, so a tile owns whole windows, and 4 neighbouring
// lanes of a warp hold one window's values in registers after the k loop: two shuffles give its
// maximum (of the epilogue values rounded to T, as the unfused y stores them) and its position
// (p * Q + q in the P x Q plane: max_pool2d's `indices`; the first maximum wins ties, a NaN wins,
// exactly as pooling.cu); one lane of the 4 writes the pooled value and the int64 index.
//
// Why faster than rung 2: no col buffer written and read back (R*S times the input), one launch
// for the forward with the bias and ReLU in its epilogue, and the same kernel does the backward.
// Entry points conv2d_igemm_{fwd,dgrad,wgrad}_<BM>x<BN>_{f32,f64,f16,bf16} (and the pooled forward's,
// at the end of the file), arguments:
//   (const T* a_src, const T* b_src, const T* bias, T* out, ConvGeom g, bool relu, long long chunk,
//    const T* mask, T* dbias)
// a_src/b_src: fwd weight/x, dgrad weight/dy, wgrad dy/x; bias and relu: fwd only (may be null/0);
// chunk: k values per split (wgrad; the others pass their whole reduction length); mask: the saved
// output y of a fused ReLU (dgrad, wgrad; null: no mask); dbias: wgrad's bias gradient (null: none).
// wgrad's split s writes dw[e] at out[e * splits + s] and db[k] at dbias[k * splits + s], splits =
// gridDim.z / G (Python allocates one [K*C/G*R*S + K, splits] buffer, db's rows after dw's).
// Every index along a GEMM dimension (M, Ncols, the reduction) fits in an int (Python sends larger
// problems to another rung): the divisions that decode them are 32-bit, several times cheaper than
// 64-bit ones; offsets into the tensors stay long long. Shapes: conv.cuh.
#include "conv.cuh"

#define FWD 0
#define DGRAD 1
#define WGRAD 2
#define IG_BK 16
#define IG_THREADS 256

// What a thread needs about its B column: `base` an element offset, (a, b) row/column offsets
// (their meaning depends on the pass, see decode_col), ok = the column exists.
struct Col {
    long long base;
    int a, b;
    bool ok;
    bool ones;          // wgrad's bias column: B is 1 there
};

template <int MODE, bool POOL>
__device__ __forceinline__ Col decode_col(const ConvGeom& g, long long j, long long ncols, int gi) {
    Col col = {0, 0, 0, j < ncols, false};
    if (!col.ok) return col;
    const int cg = g.C / g.G, kg = g.K / g.G;
    if (MODE == FWD) {              // output pixel j = (n, p, q): the window's top-left input element
        long long n;
        int p, q;
        if constexpr (POOL) {       // j = 4 * (n, po, qo) + (dp, dq): pixel (2po + dp, 2qo + dq)
            const int qo_n = g.Q / 2;
            const long long pqo = (long long)(g.P / 2) * qo_n, o = j >> 2;
            n = o / pqo;
            const int t = (int)(o - n * pqo), po = t / qo_n, qo = t - po * qo_n, w = (int)(j & 3);
            p = 2 * po + (w >> 1);
            q = 2 * qo + (w & 1);
        } else {
            const long long pq = (long long)g.P * g.Q;
            n = j / pq;
            const int t = (int)(j - n * pq);
            p = t / g.Q;
            q = t - p * g.Q;
        }
        col.base = (n * g.C + (long long)gi * cg) * g.H * g.W;      // image n, the group's first channel
        col.a = p * g.stride_h - g.pad_h;
        col.b = q * g.stride_w - g.pad_w;
    } else if (MODE == DGRAD) {     // input pixel j = (n, h, w)
        const long long hw = (long long)g.H * g.W;
        const long long n = j / hw;
        const int t = (int)(j - n * hw), h = t / g.W, w = t - h * g.W;
        col.base = (n * g.K + (long long)gi * kg) * g.P * g.Q;      // dy of image n, the group's first channel
        col.a = h + g.pad_h;
        col.b = w + g.pad_w;
    } else if (j == (long long)cg * g.R * g.S) {     // wgrad's extra column: the bias gradient
        col.ones = true;
    } else {                        // weight column j = (c, r, s) of the group
        const int rs = g.R * g.S;
        const int c = (int)(j / rs), t = (int)(j - (long long)c * rs), r = t / g.S, s = t - r * g.S;
        col.base = ((long long)gi * cg + c) * g.H * g.W;           // channel offset inside an image
        col.a = r * g.dil_h - g.pad_h;
        col.b = s * g.dil_w - g.pad_w;
    }
    return col;
}

// A[m, k] of the pass (m < M and k < the reduction length: the caller checks).
// dy[i], or 0 where a fused ReLU's saved output is not positive
template <typename T, typename A>
__device__ __forceinline__ A masked(const T* __restrict__ dy, const T* __restrict__ mask, long long i) {
    return mask && !(A(to_opmath(mask[i])) > A(0)) ? A(0) : A(to_opmath(dy[i]));
}

template <int MODE, typename T, typename A>
__device__ __forceinline__ A load_a(const T* __restrict__ src, const T* __restrict__ mask, const ConvGeom& g,
                                    long long m, long long k, int gi) {
    const int cg = g.C / g.G, kg = g.K / g.G, rs = g.R * g.S;
    if (MODE == FWD)                // weight [K, C/G*R*S] row gi*kg + m
        return A(to_opmath(src[((long long)gi * kg + m) * cg * rs + k]));
    if (MODE == DGRAD) {            // weight^T: m = input channel c, k = (k', r, s)
        const int kk = (int)k / rs, t = (int)k - kk * rs;
        return A(to_opmath(src[(((long long)gi * kg + kk) * cg + m) * rs + t]));
    }
    const int pq = g.P * g.Q;                       // WGRAD: dy[n, gi*kg + m, p, q], k = (n, p, q)
    const int n = (int)k / pq;
    return masked<T, A>(src, mask, ((long long)n * g.K + (long long)gi * kg + m) * pq + ((int)k - n * pq));
}

// B[k, column] of the pass, zero where the window reads padding (or, for dgrad, where no output
// reads this input pixel at this offset).
template <int MODE, typename T, typename A>
__device__ __forceinline__ A load_b(const T* __restrict__ src, const T* __restrict__ mask, const ConvGeom& g,
                                    const Col& col, long long k) {
    const int rs = g.R * g.S;
    if (MODE == FWD) {              // k = (c, r, s): x[n, c0 + c, a + r*dil, b + s*dil]
        const int c = (int)k / rs, t = (int)k - c * rs, r = t / g.S, s = t - r * g.S;
        const int h = col.a + r * g.dil_h, w = col.b + s * g.dil_w;
        if (h < 0 || h >= g.H || w < 0 || w >= g.W) return A(0);
        return A(to_opmath(src[col.base + ((long long)c * g.H + h) * g.W + w]));
    }
    if (MODE == DGRAD) {            // k = (k', r, s): dy[n, k0 + k', p, q] with p*stride = h + pad - r*dil
        const int kk = (int)k / rs, t = (int)k - kk * rs, r = t / g.S, s = t - r * g.S;
        const int ph = col.a - r * g.dil_h, qw = col.b - s * g.dil_w;
        if (ph < 0 || qw < 0 || ph % g.stride_h || qw % g.stride_w) return A(0);
        const int p = ph / g.stride_h, q = qw / g.stride_w;
        if (p >= g.P || q >= g.Q) return A(0);
        return masked<T, A>(src, mask, col.base + ((long long)kk * g.P + p) * g.Q + q);
    }
    if (col.ones) return A(1);                      // WGRAD: k = (n, p, q): x[n, c, p*stride + a, ...]
    const int pq = g.P * g.Q;
    const int n = (int)k / pq;
    const int t = (int)k - n * pq, p = t / g.Q, q = t - p * g.Q;
    const int h = p * g.stride_h + col.a, w = q * g.stride_w + col.b;
    if (h < 0 || h >= g.H || w < 0 || w >= g.W) return A(0);
    return A(to_opmath(src[(long long)n * g.C * g.H * g.W + col.base + (long long)h * g.W + w]));
}

// The maximum of a 2 x 2 window and its position t (0..3, window order) across the 4 lanes that hold
// it (lanes 4a..4a+3: see max_pool_epilogue), every lane ending with the result. Each step keeps the
// right value (the higher t) when it is larger or NaN, else the left one: over the window that is
// pooling.cu's sequential rule (the first maximum, or the last NaN), since the rule is associative.
template <typename A>
__device__ __forceinline__ void window_max(A& v, int& t) {
#pragma unroll
    for (int lanes = 1; lanes < 4; lanes <<= 1) {
        const A ov = __shfl_xor_sync(FULL_MASK, v, lanes);
        const int ot = __shfl_xor_sync(FULL_MASK, t, lanes);
        const bool left = t < ot;
        const A lv = left ? v : ov, rv = left ? ov : v;
        const int lt = left ? t : ot, rt = left ? ot : t;
        const bool right_wins = rv > lv || is_nan(rv);
        v = right_wins ? rv : lv;
        t = right_wins ? rt : lt;
    }
}

// The pooled forward's epilogue: thread (tx, ty) holds columns tx + j*BNT; BNT, BN and n0 are
// multiples of 4, so the 4 columns of a window sit in 4 consecutive lanes tx = 4a..4a+3 of one warp
// (same ty, same j), at window position tx & 3. They reduce by shuffles; lane 4a writes. Every thread
// takes part in every shuffle (no early exit: out-of-range rows shuffle zeros and write nothing).
template <typename T, typename A, int BM, int BN, int TM, int TN>
__device__ __forceinline__ void max_pool_epilogue(const A (&acc)[TM][TN], const T* __restrict__ bias,
                                                  T* __restrict__ out, long long* __restrict__ indices,
                                                  const ConvGeom& g, bool relu, int gi, long long m0, long long n0,
                                                  long long M, long long ncols) {
    constexpr int BMT = BM / TM, BNT = BN / TN;
    static_assert(BNT % 4 == 0 && BN % 4 == 0, "a window's 4 columns are 4 lanes of one warp");
    const int tid = threadIdx.x, tx = tid % BNT, ty = tid / BNT;
    const int kg = g.K / g.G, qo_n = g.Q / 2;
    const long long pqo = (long long)(g.P / 2) * qo_n;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const long long m = m0 + ty + i * BMT, ch = (long long)gi * kg + m;
        const A b = (bias && m < M) ? A(to_opmath(bias[ch])) : A(0);
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const long long c = n0 + tx + j * BNT;
            A v = A(to_opmath(narrow<T>(epilogue<A>(acc[i][j], b, relu))));   // the value the unfused y stores
            int t = tx & 3;
            window_max<A>(v, t);
            if ((tx & 3) == 0 && m < M && c < ncols) {     // c < ncols: the whole window exists
                const long long o = c >> 2, n = o / pqo;              // o: the pooled pixel (n, po, qo)
                const int r = (int)(o - n * pqo), po = r / qo_n, qo = r - po * qo_n;
                const long long dst = (n * g.K + ch) * pqo + r;
                out[dst] = narrow<T>(v);
                indices[dst] = (long long)(2 * po + (t >> 1)) * g.Q + 2 * qo + (t & 1);
            }
        }
    }
}

// POOL (fwd only): out is the pooled [N, K, P/2, Q/2] and `indices` its argmax positions.
template <int MODE, bool POOL, typename T, int BM, int BN, int TM, int TN>
__device__ void conv2d_igemm(const T* __restrict__ asrc, const T* __restrict__ bsrc, const T* __restrict__ bias,
                             T* __restrict__ out, const ConvGeom g, bool relu, long long chunk,
                             const T* __restrict__ mask, T* __restrict__ dbias, long long* __restrict__ indices) {
    typedef typename Acc<T>::type A;
    constexpr int BMT = BM / TM, BNT = BN / TN;     // threads along the tile's rows, columns
    static_assert(BMT * BNT == IG_THREADS && BM % TM == 0 && BN % TN == 0, "the tile is 256 threads' TM x TN");
    static_assert(IG_THREADS % BN == 0 && IG_THREADS % IG_BK == 0, "each thread loads one fixed B column");
    static_assert(!POOL || MODE == FWD, "only the forward pools");
    __shared__ A As[IG_BK][BM];
    __shared__ A Bs[IG_BK][BN];

    const int tid = threadIdx.x, tx = tid % BNT, ty = tid / BNT;
    const int gi = (int)(blockIdx.z % g.G);
    const long long split = blockIdx.z / g.G;
    const int cg = g.C / g.G, kg = g.K / g.G, rs = g.R * g.S;
    const long long pq = (long long)g.P * g.Q, hw = (long long)g.H * g.W;
    const long long M = MODE == DGRAD ? cg : kg;
    const long long wcols = (long long)cg * rs;     // wgrad: the weight's columns (then db's, if asked)
    const long long ncols = MODE == FWD ? (POOL ? g.N * 4LL * (g.P / 2) * (g.Q / 2) : g.N * pq) : MODE == DGRAD ? g.N * hw : wcols + (dbias != nullptr);
    const long long kred = MODE == FWD ? (long long)cg * rs : MODE == DGRAD ? (long long)kg * rs : g.N * pq;
    const long long m0 = (long long)blockIdx.y * BM, n0 = (long long)blockIdx.x * BN;
    const long long kbeg = split * chunk, kend = kbeg + chunk < kred ? kbeg + chunk : kred;

    const Col col = decode_col<MODE, POOL>(g, n0 + tid % BN, ncols, gi);  // this thread's B column, every k-tile
    A acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = A(0);

    for (long long k0 = kbeg; k0 < kend; k0 += IG_BK) {     // same trip count in every thread
        for (int e = tid; e < BM * IG_BK; e += IG_THREADS) {
            const int mm = e / IG_BK, kk = e % IG_BK;       // consecutive threads: consecutive k
            const long long m = m0 + mm, k = k0 + kk;
            As[kk][mm] = (m < M && k < kend) ? load_a<MODE, T, A>(asrc, mask, g, m, k, gi) : A(0);
        }
        for (int e = tid; e < IG_BK * BN; e += IG_THREADS) {
            const int kk = e / BN;                          // e % BN == tid % BN: col's column
            const long long k = k0 + kk;
            Bs[kk][e % BN] = (col.ok && k < kend) ? load_b<MODE, T, A>(bsrc, mask, g, col, k) : A(0);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < IG_BK; ++kk) {
            A a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[kk][ty + i * BMT];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tx + j * BNT];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }

    if constexpr (POOL) {
        max_pool_epilogue<T, A, BM, BN, TM, TN>(acc, bias, out, indices, g, relu, gi, m0, n0, M, ncols);
    } else {
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const long long m = m0 + ty + i * BMT;
            if (m >= M) continue;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const long long c = n0 + tx + j * BNT;
                if (c >= ncols) continue;
                if (MODE == FWD) {
                    const long long n = c / pq, ch = (long long)gi * kg + m;
                    out[(n * g.K + ch) * pq + (c - n * pq)] =
                        narrow<T>(epilogue<A>(acc[i][j], bias ? A(to_opmath(bias[ch])) : A(0), relu));
                } else if (MODE == DGRAD) {
                    const long long n = c / hw;
                    out[(n * g.C + (long long)gi * cg + m) * hw + (c - n * hw)] = narrow<T>(acc[i][j]);
                } else {
                    const long long splits = gridDim.z / g.G;                  // partials of one weight: adjacent
                    const long long ch = (long long)gi * kg + m;
                    if (c < wcols)
                        out[(ch * wcols + c) * splits + split] = narrow<T>(acc[i][j]);
                    else
                        dbias[ch * splits + split] = narrow<T>(acc[i][j]);
                }
            }
        }
    }
}

// Tile configurations (BM x BN, TM x TN): 8x256 for few output channels (the first layers of a
// CNN), 16x128, 64x64 for many, 16x16 for small C tiles (wgrad: K/G x C/G*R*S).
#define IGEMM_ENTRY(MODE, NAME, T, SUF, BM, BN, TM, TN)                                                  \
    extern "C" __global__ void conv2d_igemm_##NAME##_##BM##x##BN##_##SUF( \
        const T* a_src, const T* b_src, const T* bias, T* out, const ConvGeom g, bool relu, long long chunk, \
        const T* mask, T* dbias) {                                                                         \
        conv2d_igemm<MODE, false, T, BM, BN, TM, TN>(a_src, b_src, bias, out, g, relu, chunk, mask, dbias, \
                                                     nullptr);                                             \
    }
// conv2d_igemm_fwd_maxpool2_<BM>x<BN>_<SUF>(weight, x, bias, pooled, indices, geom, relu): one launch
// for conv (+ bias, ReLU) + MaxPool2d(2); grid as the fwd entry's with N*4*(P/2)*(Q/2) columns.
#define IGEMM_POOL_ENTRY(T, SUF, BM, BN, TM, TN)                                                         \
    extern "C" __global__ void conv2d_igemm_fwd_maxpool2_##BM##x##BN##_##SUF(                            \
        const T* a_src, const T* b_src, const T* bias, T* out, long long* indices, const ConvGeom g,       \
        bool relu) {                                                                                       \
        conv2d_igemm<FWD, true, T, BM, BN, TM, TN>(a_src, b_src, bias, out, g, relu,                      \
                                                   (long long)(g.C / g.G) * g.R * g.S, nullptr, nullptr,  \
                                                   indices);                                               \
    }
#define IGEMM_TILES(MODE, NAME, T, SUF)                                                                  \
    IGEMM_ENTRY(MODE, NAME, T, SUF, 8, 256, 1, 8)                                                        \
    IGEMM_ENTRY(MODE, NAME, T, SUF, 16, 128, 2, 4)                                                       \
    IGEMM_ENTRY(MODE, NAME, T, SUF, 64, 64, 4, 4)                                                        \
    IGEMM_ENTRY(MODE, NAME, T, SUF, 16, 16, 1, 1)
// Each dtype's entries are guarded by MT_IF_<SUF> (common.cuh): compiler.py builds this file once
// per dtype (SPLIT_BY_DTYPE), so a float32 model waits for a quarter of the 64 entry points.
#define IGEMM_ENTRIES(T, SUF) MT_IF_##SUF(                                                              \
    IGEMM_TILES(FWD, fwd, T, SUF)                                                                        \
    IGEMM_TILES(DGRAD, dgrad, T, SUF)                                                                    \
    IGEMM_TILES(WGRAD, wgrad, T, SUF)                                                                    \
    IGEMM_POOL_ENTRY(T, SUF, 8, 256, 1, 8)                                                               \
    IGEMM_POOL_ENTRY(T, SUF, 16, 128, 2, 4)                                                              \
    IGEMM_POOL_ENTRY(T, SUF, 64, 64, 4, 4)                                                               \
    IGEMM_POOL_ENTRY(T, SUF, 16, 16, 1, 1))

IGEMM_ENTRIES(float, f32)
IGEMM_ENTRIES(double, f64)
IGEMM_ENTRIES(__half, f16)
IGEMM_ENTRIES(__nv_bfloat16, bf16)
