// GENERATED from minitorch/cuda/gemm/06_vectorized.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 05
// 06_vectorized.cu - rung 6 of the GEMM ladder: vectorized (16-byte) loads and stores, A stored
// transposed in smem.
//
// What changes from rung 05, and why it is faster.
// Same blocktile (128 x 128 of C, BK = 8, an 8 x 8 register tile per thread, 256 threads), but
// memory is moved 16 bytes at a time (float4: one LDG.128 / LDS.128 / STG.128 instruction for four
// floats), so the kernel issues about 4x fewer load and store instructions for the same bytes:
//   - global -> smem: each thread loads ONE float4 of the A tile and ONE of the B tile per k step
//     (rung 05: 4 + 4 scalar loads), along whichever dimension is contiguous in memory.
//   - A is stored transposed in smem, As[k][m] (k-major), like Bs[k][n]. The inner loop needs, for
//     one k, the 8 values A[tr*8 .. tr*8+7, k]: in rung 05 they were 8 rows apart (8 scalar loads);
//     here they are 8 consecutive floats of row k of As: two float4 smem loads. Same for B.
//   - the 8 columns of a thread are two groups of 4, 64 columns apart (columns tc*4 .. tc*4+3 and
//     64 + tc*4 .. 64 + tc*4+3), so 8 neighbouring threads read 32 consecutive floats of Bs with
//     their float4 loads (no bank conflict; rung 05's adjacent 8 columns gave 4-way conflicts),
//     and a warp's stores to C are runs of 64 consecutive floats (16 threads x 4).
//   - C is written with float4 stores.
// So per k step a thread issues 4 LDS.128 for 64 FMAs (rung 05: 16 scalar LDS).
//
// Vector loads need 16-byte aligned addresses: a float4 at element offset o of matrix p is aligned
// when p is 16-byte aligned and o % 4 == 0. Tiles start at multiples of 4 along both dimensions,
// so that holds for every float4 of a tile when p is aligned and the leading dimension is a
// multiple of 4 (checked once per matrix: `vec`). Otherwise (a view such as x[1:], an odd K),
// and for any float4 that would cross the edge of the matrix, the same four elements are loaded
// one by one with their own bounds checks (zeros outside): correct for any M, N, K and pointer.
// C's float4 stores likewise need C 16-byte aligned and N % 4 == 0, else scalar guarded stores.
//
// Layouts (vectorized along the contiguous dimension; all four are vectorized):
//   A 't' (A[m, k] at k*lda + m) and B 'n' (B[k, n] at k*ldb + n): the tile's rows in memory are
//     rows of As/Bs already: a float4 load, a float4 store to smem; a warp reads 512 contiguous bytes.
//   A 'n' (A[m, k] at m*lda + k) and B 't' (B[k, n] at n*ldb + k): the float4 runs along k; its four
//     values go to four rows of As/Bs (four scalar smem stores, the transpose); a warp reads 16 rows
//     x 32 bytes. The rows of As/Bs are padded by 4 floats so these stores hit 32 different banks.
// So 'nn' mixes both, 'tn' is the cheapest to load, 'nt' the dearest: the difference is in the
// loads only, a small part of the time for large K.
//
// Thread -> work mapping (block (256, 1, 1), grid (ceil(N/BN), ceil(M/BM), batch)):
//   thread t: tc = t % (BN/TN) (0..15), tr = t / (BN/TN) (0..15); computes C[z][m, n] for
//     m = m0 + tr*TM + i (i < TM) and n = n0 + g*(BN/GN) + tc*4 + e (g < GN = TN/4, e < 4),
//   n0 = blockIdx.x * BN, m0 = tm * BM for tm = blockIdx.y, + gridDim.y, ... (row tiles past the
//   65535 grid cap), z = blockIdx.z, + gridDim.z, ... < batch.
//   Loads, for each k0 = 0, BK, ... < K, float4 number q = j * NT + t of the tile (one per thread):
//     As[k][x] = op(A)[m0 + x, k0 + k] (0 outside M x K), Bs[k][x] = op(B)[k0 + k, n0 + x] (0 outside K x N);
//     x contiguous in memory (A 't', B 'n'): k = q / (BX/4), x = (q % (BX/4)) * 4 .. +3;
//     k contiguous in memory (A 'n', B 't'): x = q / (BK/4), k = (q % (BK/4)) * 4 .. +3.
//   Inner loop, k < BK: ra[i] = As[k][tr*TM + i] (two float4), rb[g*4 + e] = Bs[k][g*(BN/GN) + tc*4 + e]
//   (GN float4), acc[i][g*4 + e] += ra[i] * rb[g*4 + e].
//
// Arguments, layouts and batches: gemm.cuh. float32 only (rung 05 has the float64 kernel).
#include "gemm.cuh"

// Tile sizes (compile with -DBM=... to change them): C tile BM x BN, K step BK, TM x TN per thread.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
// How many k steps of the inner loop the compiler unrolls (2 keeps registers at 128 or fewer:
// two blocks of 256 threads per SM; see rung 05).
#ifndef KUNROLL
#define KUNROLL 2
#endif
constexpr int kunroll = KUNROLL;     // #pragma unroll takes a constant expression, not a macro
#define NT ((BM / TM) * (BN / TN))   // threads per block
#define GN (TN / 4)                  // groups of 4 columns per thread, BN / GN columns apart
// Rows of As and Bs are padded by PAD = 4 floats: still 16-byte aligned for float4, and the
// transposing stores of the 'n' A / 't' B tiles spread over all banks (a warp stores 16
// consecutive columns in rows k and k + 4, which the padding puts 16 banks apart).
#define PAD 4
#define SA (BM + PAD)                // row stride of As[BK][SA]
#define SB (BN + PAD)                // row stride of Bs[BK][SB]
static_assert(BM % TM == 0 && BN % TN == 0 && NT <= 1024, "whole thread tiles, at most 1024 threads");
static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0 && BM % 4 == 0 && BN % 4 == 0, "float4 granularity");
static_assert((BM * BK / 4) % NT == 0 && (BN * BK / 4) % NT == 0, "every thread loads the same number of float4s");

// s[k * (BX + PAD) + x] = X[x0 + x, k0 + k] for x < BX, k < BK, zero where x0 + x >= XMAX or
// k0 + k >= KMAX; element (x, k) lives at p[XC ? k * ld + x : x * ld + k] (XC: x is the unit-stride
// index). `vec`: p is 16-byte aligned and ld % 4 == 0, so every float4 below starts aligned.
// Each thread moves (BX * BK / 4) / NT float4s. Called by every thread of the block; the caller
// puts __syncthreads() before the tile is read.
template <int BX, bool XC>
__device__ __forceinline__ void load_tile(float* s, const float* p, long long ld, long long x0, long long k0,
                                          long long XMAX, long long KMAX, bool vec) {
    constexpr int SX = BX + PAD;
#pragma unroll
    for (int j = 0; j < BX * BK / 4 / NT; ++j) {
        const int q = j * NT + threadIdx.x;          // which float4 of the tile
        if constexpr (XC) {                          // 4 consecutive x at one k: a row of s
            const int k = q / (BX / 4), x = (q % (BX / 4)) * 4;
            const long long gk = k0 + k, gx = x0 + x;
            const float* src = p + gk * ld + gx;
            float4 v;
            if (vec && gk < KMAX && gx + 3 < XMAX) {
                v = *reinterpret_cast<const float4*>(src);
            } else {                                 // edge or unaligned: one by one, zeros outside
                const bool in = gk < KMAX;
                v.x = (in && gx + 0 < XMAX) ? src[0] : 0.f;
                v.y = (in && gx + 1 < XMAX) ? src[1] : 0.f;
                v.z = (in && gx + 2 < XMAX) ? src[2] : 0.f;
                v.w = (in && gx + 3 < XMAX) ? src[3] : 0.f;
            }
            *reinterpret_cast<float4*>(s + k * SX + x) = v;
        } else {                                     // 4 consecutive k at one x: a column of s
            const int x = q / (BK / 4), k = (q % (BK / 4)) * 4;
            const long long gx = x0 + x, gk = k0 + k;
            const float* src = p + gx * ld + gk;
            float4 v;
            if (vec && gx < XMAX && gk + 3 < KMAX) {
                v = *reinterpret_cast<const float4*>(src);
            } else {
                const bool in = gx < XMAX;
                v.x = (in && gk + 0 < KMAX) ? src[0] : 0.f;
                v.y = (in && gk + 1 < KMAX) ? src[1] : 0.f;
                v.z = (in && gk + 2 < KMAX) ? src[2] : 0.f;
                v.w = (in && gk + 3 < KMAX) ? src[3] : 0.f;
            }
            s[(k + 0) * SX + x] = v.x;               // the transpose: four rows of s
            s[(k + 1) * SX + x] = v.y;
            s[(k + 2) * SX + x] = v.z;
            s[(k + 3) * SX + x] = v.w;
        }
    }
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void gemm_vectorized(GEMM_PARAMS(T)) {
    static_assert(sizeof(T) == 4, "float4 loads: float32 only");
    __shared__ __align__(16) float As[BK * SA];      // As[k][m] = op(A)[m0 + m, k0 + k]: A transposed
    __shared__ __align__(16) float Bs[BK * SB];      // Bs[k][n] = op(B)[k0 + k, n0 + n]
    const int tc = threadIdx.x % (BN / TN), tr = threadIdx.x / (BN / TN);
    const long long n0 = blockIdx.x * (long long)BN;
    const long long tiles_m = (M + BM - 1) / BM;
    // Every thread runs every loop below to the end (bounds depend on blockIdx and sizes only),
    // so all of them meet at each __syncthreads().
    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);
        const float* a = A + off[0];
        const float* b = B + off[1];
        float* c = C + z * M * N;
        // The same answer for every thread of the block: no divergence from these branches.
        const bool avec = is_aligned<16>(a) && (lda & 3) == 0;
        const bool bvec = is_aligned<16>(b) && (ldb & 3) == 0;
        const bool cvec = is_aligned<16>(c) && (N & 3) == 0;
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            const long long m0 = tm * BM;
            float acc[TM][TN];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
            for (long long k0 = 0; k0 < K; k0 += BK) {
                // A: x = m, contiguous when 't'. B: x = n, contiguous when 'n'.
                load_tile<BM, TA>(As, a, lda, m0, k0, M, K, avec);
                load_tile<BN, !TB>(Bs, b, ldb, n0, k0, N, K, bvec);
                __syncthreads();                     // both tiles complete before anyone reads them
#pragma unroll (kunroll)
                for (int k = 0; k < BK; ++k) {
                    float ra[TM], rb[TN];
#pragma unroll
                    for (int i = 0; i < TM; i += 4) {
                        const float4 v = *reinterpret_cast<const float4*>(As + k * SA + tr * TM + i);
                        ra[i] = v.x; ra[i + 1] = v.y; ra[i + 2] = v.z; ra[i + 3] = v.w;
                    }
#pragma unroll
                    for (int g = 0; g < GN; ++g) {
                        const float4 v = *reinterpret_cast<const float4*>(Bs + k * SB + g * (BN / GN) + tc * 4);
                        rb[4 * g] = v.x; rb[4 * g + 1] = v.y; rb[4 * g + 2] = v.z; rb[4 * g + 3] = v.w;
                    }
#pragma unroll
                    for (int i = 0; i < TM; ++i)
#pragma unroll
                        for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
                }
                __syncthreads();                     // everyone done reading before the next loads overwrite
            }
            // Epilogue: bias once per column, then float4 stores (scalar at the right edge or when
            // C's rows are not 16-byte aligned).
            float bn[TN];
#pragma unroll
            for (int g = 0; g < GN; ++g)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const long long n = n0 + g * (BN / GN) + tc * 4 + e;
                    bn[4 * g + e] = (bias && n < N) ? bias[n] : 0.f;
                }
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const long long m = m0 + tr * TM + i;
                if (m >= M) break;
                float* crow = c + m * N;
#pragma unroll
                for (int g = 0; g < GN; ++g) {
                    const long long n = n0 + g * (BN / GN) + tc * 4;
                    float4 v;
                    v.x = bias ? acc[i][4 * g + 0] + bn[4 * g + 0] : acc[i][4 * g + 0];
                    v.y = bias ? acc[i][4 * g + 1] + bn[4 * g + 1] : acc[i][4 * g + 1];
                    v.z = bias ? acc[i][4 * g + 2] + bn[4 * g + 2] : acc[i][4 * g + 2];
                    v.w = bias ? acc[i][4 * g + 3] + bn[4 * g + 3] : acc[i][4 * g + 3];
                    if (cvec && n + 3 < N) {
                        *reinterpret_cast<float4*>(crow + n) = v;
                    } else {
                        if (n + 0 < N) crow[n + 0] = v.x;
                        if (n + 1 < N) crow[n + 1] = v.y;
                        if (n + 2 < N) crow[n + 2] = v.z;
                        if (n + 3 < N) crow[n + 3] = v.w;
                    }
                }
            }
        }
    }
}

GEMM_ENTRIES(gemm_vectorized, float, f32)
