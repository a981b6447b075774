// GENERATED from minitorch/cuda/gemm/07_autotuned.cu by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 05
// 07_autotuned.cu - rung 7 of the GEMM ladder: rung 06's kernel with every tile size a
// compile-time parameter, so that a search picks them per GPU and per shape.
//
// What changes: nothing in the algorithm. Rung 06 fixed BM = BN = 128, BK = 8, TM = TN = 8 (256
// threads). Those numbers trade against each other: a bigger blocktile (BM x BN) reuses every
// loaded element more often, but leaves fewer blocks to fill the SMs on small matrices; a bigger
// thread tile (TM x TN) gives each thread more FMAs per shared-memory read, but costs registers,
// and registers decide how many blocks fit on an SM at once; BK sets how much is loaded between
// two __syncthreads. The best point differs between an A100 and an H100 and between a 4096^2
// GEMM and MNIST's 64 x 784 x 128. So here each size is a macro with rung 06's value as default,
//     BM, BN   rows and columns of C one block computes (the blocktile)
//     BK       the k-slice of A and B a block holds in shared memory at once
//     TM, TN   rows and columns of C one thread computes (the thread tile)
//     NUM_THREADS = (BM / TM) * (BN / TN), threads per block (derived; may be given, must agree;
//              at most 256, so that any register count fits and every configuration launches)
// and tools/tune_gemm.py compiles the file many times with NVRTC options ("-DBM=64", "-DBN=128",
// ...), times each, and writes the winners into a table (native/cuda/gemm.py: TUNING_SPACE,
// tuning_configs, rung_with). The static_asserts below reject a configuration the code cannot
// run; gemm.py applies the same rules before compiling anything.
//
// Thread -> data mapping (1-D blocks of NUM_THREADS threads, blockIdx.x over column tiles,
// blockIdx.y over row tiles, blockIdx.z over batches):
//   loading: the A tile (BM x BK) is read as float4s. A 'n' (k contiguous): thread t reads the
//     4 neighbours k..k+3 of row m (t -> m = t / (BK/4), k = 4 * (t % (BK/4)), then + NUM_THREADS)
//     and writes them transposed, As[k+j][m]; A 't' (m contiguous): it reads m..m+3 of row k and
//     writes them as one float4, As[k][m..m+3]. B the same way into Bs[k][n] ('n': n contiguous,
//     straight; 't': k contiguous, transposed). Both tiles are k-major in shared memory, so the
//     inner loop reads TM (TN) neighbours of one k-row with float4 loads whatever the layout.
//     A row of As has BM + 4 floats: the 4 extra shift each k-row by 4 banks, which keeps the
//     transposed stores from landing in one bank (and keeps rows 16-byte aligned).
//   computing: thread t owns C rows tr*TM .. +TM and columns tc*TN .. +TN of the blocktile,
//     tr = t / (BN/TN), tc = t % (BN/TN): per k it loads TM values of As and TN of Bs into
//     registers and does TM*TN FMAs (the outer product), accumulating in float32.
//   edges: every load outside M, N or K gives 0 (so it adds nothing); float4 loads only where
//     the 4 elements are inside the matrix and the operand is 16-byte aligned with a leading
//     dimension that is a multiple of 4 (checked once per batch), scalar loads otherwise. C is
//     written with float4 stores when N % 4 == 0, else element by element, rows >= M skipped.
// Layouts: all four. The transposed stores of A 'n' / B 't' (a float4 of global memory becomes 4
// scalar shared-memory stores) make 'nt' slightly slower than 'tn'; every layout reads global
// memory as 16-byte vectors, coalesced along the operand's contiguous dimension.
//
// Arguments, layouts and batches: gemm.cuh.
#include "gemm.cuh"

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
#ifndef NUM_THREADS
#define NUM_THREADS ((BM / TM) * (BN / TN))
#endif

namespace rung07 {

constexpr int SA = BM + 4;      // floats per k-row of the A tile in shared memory (padded)
constexpr int SB = BN + 4;      // same for B

static_assert(BM % TM == 0 && BN % TN == 0, "the thread tile must divide the blocktile");
static_assert(NUM_THREADS == (BM / TM) * (BN / TN), "NUM_THREADS must be (BM/TM) * (BN/TN)");
// At most 256 threads: then even 255 registers a thread fit an SM's 65536, so no configuration
// fails to launch. (A __launch_bounds__ would do the same for bigger blocks, but it makes ptxas
// trade spills for occupancy, which is the autotuner's job, not the compiler's.)
static_assert(NUM_THREADS % 32 == 0 && NUM_THREADS <= 256, "whole warps, at most 256 threads");
static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are read from shared memory as float4s");
static_assert(BK % 4 == 0 && BM % 4 == 0 && BN % 4 == 0, "tiles are loaded as float4s");
static_assert(BK * (SA + SB) * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");

// The 4 neighbours x[o*ld + i .. o*ld + i+3] (i a multiple of 4), 0 where o >= O or i+j >= I. One
// 16-byte load when `vec` (ld % 4 == 0 and x 16-byte aligned) and all 4 are inside the matrix.
__device__ __forceinline__ float4 load4(const float* x, long long ld, long long o, long long i,
                                        long long O, long long I, bool vec) {
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (o < O) {
        const float* p = x + o * ld + i;
        if (vec && i + 4 <= I) {
            v = __ldg(reinterpret_cast<const float4*>(p));
        } else {
            if (i < I) v.x = __ldg(p);
            if (i + 1 < I) v.y = __ldg(p + 1);
            if (i + 2 < I) v.z = __ldg(p + 2);
            if (i + 3 < I) v.w = __ldg(p + 3);
        }
    }
    return v;
}

// Copies the BR x BK tile (operand rows r0.., k0..) of one operand into Xs, k-major: element
// (r, k) at Xs[k * S + r]. ALONG_K: the operand's contiguous dimension is k (x[r*ld + k]: A 'n',
// B 't'), else it is r (x[k*ld + r]: A 't', B 'n'). R, K bound the operand; outside gives 0.
template <int BR, int S, bool ALONG_K>
__device__ __forceinline__ void load_tile(const float* x, long long ld, long long r0, long long k0,
                                          long long R, long long K, bool vec, float* Xs, int tid) {
    constexpr int VECS = BR * BK / 4;                       // float4s in the tile
#pragma unroll
    for (int i = 0; i < (VECS + NUM_THREADS - 1) / NUM_THREADS; ++i) {
        const int v = tid + i * NUM_THREADS;
        if (VECS % NUM_THREADS == 0 || v < VECS) {
            if (ALONG_K) {      // 4 neighbours along k of row r: stored transposed, one by one
                const int r = v / (BK / 4), k = (v % (BK / 4)) * 4;
                const float4 f = load4(x, ld, r0 + r, k0 + k, R, K, vec);
                Xs[(k + 0) * S + r] = f.x;
                Xs[(k + 1) * S + r] = f.y;
                Xs[(k + 2) * S + r] = f.z;
                Xs[(k + 3) * S + r] = f.w;
            } else {            // 4 neighbours along r of k-row k: stored as they are
                const int k = v / (BR / 4), r = (v % (BR / 4)) * 4;
                *reinterpret_cast<float4*>(&Xs[k * S + r]) = load4(x, ld, k0 + k, r0 + r, K, R, vec);
            }
        }
    }
}

__device__ __forceinline__ bool aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15) == 0;
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void gemm_autotuned(GEMM_PARAMS(T)) {
    static_assert(sizeof(T) == 4, "float32 only: tiles move as float4");
    __shared__ __align__(16) float As[BK * SA];
    __shared__ __align__(16) float Bs[BK * SB];
    const int tid = threadIdx.x;
    const int tr = tid / (BN / TN), tc = tid % (BN / TN);     // this thread's place in the blocktile
    const long long n0 = (long long)blockIdx.x * BN;
    const long long row_tiles = (M + BM - 1) / BM;
    const bool vec_c = N % 4 == 0 && aligned16(C);             // then every row of C is aligned too

    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);
        const float* a = A + off[0];
        const float* b = B + off[1];
        float* c = C + z * M * N;
        const bool vec_a = lda % 4 == 0 && aligned16(a);
        const bool vec_b = ldb % 4 == 0 && aligned16(b);
        for (long long mt = blockIdx.y; mt < row_tiles; mt += gridDim.y) {   // grid y is capped
            const long long m0 = mt * BM;
            float acc[TM][TN];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

            for (long long k0 = 0; k0 < K; k0 += BK) {
                load_tile<BM, SA, !TA>(a, lda, m0, k0, M, K, vec_a, As, tid);
                load_tile<BN, SB, TB>(b, ldb, n0, k0, N, K, vec_b, Bs, tid);
                __syncthreads();                               // tiles complete before anyone reads
#pragma unroll
                for (int k = 0; k < BK; ++k) {
                    float ra[TM], rb[TN];
#pragma unroll
                    for (int i = 0; i < TM; i += 4) {
                        const float4 f = *reinterpret_cast<const float4*>(&As[k * SA + tr * TM + i]);
                        ra[i] = f.x; ra[i + 1] = f.y; ra[i + 2] = f.z; ra[i + 3] = f.w;
                    }
#pragma unroll
                    for (int j = 0; j < TN; j += 4) {
                        const float4 f = *reinterpret_cast<const float4*>(&Bs[k * SB + tc * TN + j]);
                        rb[j] = f.x; rb[j + 1] = f.y; rb[j + 2] = f.z; rb[j + 3] = f.w;
                    }
#pragma unroll
                    for (int i = 0; i < TM; ++i)
#pragma unroll
                        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
                }
                __syncthreads();                               // all reads done before the next load
            }

            // Epilogue: bias, then C, 4 columns at a time. The bias values (0 without bias or past
            // N) are the same for every row this thread writes: read once, here, so they hold no
            // registers during the main loop.
            float bv[TN];
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const long long n = n0 + tc * TN + j;
                bv[j] = (bias != nullptr && n < N) ? bias[n] : 0.f;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const long long m = m0 + tr * TM + i;
                if (m >= M) break;                             // rows grow with i
                float* crow = c + m * N;
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    const long long n = n0 + tc * TN + j;
                    const float4 v = make_float4(acc[i][j] + bv[j], acc[i][j + 1] + bv[j + 1],
                                                 acc[i][j + 2] + bv[j + 2], acc[i][j + 3] + bv[j + 3]);
                    if (vec_c && n < N) {                      // N % 4 == 0: n + 3 < N too
                        *reinterpret_cast<float4*>(crow + n) = v;
                    } else {
                        if (n < N) crow[n] = v.x;
                        if (n + 1 < N) crow[n + 1] = v.y;
                        if (n + 2 < N) crow[n + 2] = v.z;
                        if (n + 3 < N) crow[n + 3] = v.w;
                    }
                }
            }
        }
    }
}

}  // namespace rung07

GEMM_ENTRIES(rung07::gemm_autotuned, float, f32)
