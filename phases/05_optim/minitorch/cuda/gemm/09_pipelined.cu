// GENERATED from minitorch/cuda/gemm/09_pipelined.cu by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
// phase: 05
// 09_pipelined.cu - rung 9 of the GEMM ladder: rung 08 with a multi-stage shared-memory pipeline
// fed by cp.async (sm_80 and newer).
//
// What changes relative to rung 08: how tiles reach shared memory. In rung 08 every thread loads
// its part of the next A and B tiles into registers, stores them to shared memory, and the block
// waits (__syncthreads) until all of them are there before computing: while the loads travel
// (~500-800 cycles from DRAM) the SM has only the other resident blocks to run, and the registers
// holding the loads are taken from the accumulators. Here:
//   - cp.async copies global -> shared memory directly, without registers, and does not block
//     the thread: it is issued now and waited for later (cp.async.commit_group marks a batch of
//     copies, cp.async.wait_group N waits until at most N batches are still in flight);
//   - STAGES (2 to 8) tiles of A and B live in shared memory at once, a ring: while the block
//     computes on tile t, the copies of tiles t+1 .. t+STAGES-1 are already travelling. Load
//     latency hides behind STAGES-1 tiles of FMAs.
// Shared memory is now STAGES * BK * (BM+4 + BN+4) * 4 bytes (50688 with the defaults), more
// than the 48 KB a block gets by default, so it is dynamic (extern __shared__) and gemm.py raises
// the kernel's limit (cudaFuncAttributeMaxDynamicSharedMemorySize) before the first launch.
//
// The pipeline (per blocktile; t counts k-tiles, stage t % STAGES holds tile t):
//     issue tiles 0 .. STAGES-2, one commit group each (empty groups past the last tile, so that
//     the counting below holds for any K)
//     for t = 0 .. T-1:
//         wait_group(STAGES-2)   -> this thread's copies of tile t have landed
//         __syncthreads()        -> everyone's copies of tile t have landed, and everyone has
//                                   finished computing tile t-1, whose stage is reused next
//         issue tile t+STAGES-1 into stage (t-1) % STAGES; commit (maybe empty)
//         compute tile t         (rung 08's warptile inner loop)
//     wait_group(0); __syncthreads()  -> nothing in flight before the next blocktile reuses the ring
//
// Copies and edges. cp.async cannot transpose, and shared memory holds both tiles k-major as in
// rungs 06-08, so:
//   - A 't' and B 'n' (contiguous along m / n, as shared memory): 16-byte copies,
//     cp.async.cg.shared.global with a source size: 16 bytes inside the matrix, fewer at its
//     right edge (the rest is zero-filled by the copy), 0 outside it (all zeros; nothing read).
//     Used when the operand is 16-byte aligned and its leading dimension a multiple of 4; else
//     4-byte copies of the same elements.
//   - A 'n' and B 't' (contiguous along k): 4-byte copies, cp.async.ca, each element to its
//     transposed place; 32 lanes read 32 neighbouring k (coalesced), source size 0 outside.
//     So 'nn' copies A with 4x more (still asynchronous) copy instructions than 'tn'; per k-tile
//     that is 16 copies against 2048 FMAs per thread with the defaults, so the cost is small,
//     but 'tn' is the fastest layout of this rung and 'nt' the slowest.
// Every element of every stage is written for every tile (zeros outside M, N, K), so edges need
// no special case in the inner loop.
//
// Thread -> data mapping: rung 08's (warp w, lane l; C row wr*WM + wm*WSUBM + tr*TM + i, column
// wc*WN + wn*WSUBN + tc*TN + j). Copies, for an operand tile of BR rows (BM or BN) x BK:
// along r, thread t copies elements 4*(t % (BR/4)) ..+3 of k-rows t / (BR/4) + i*KSTEP
// (KSTEP = NUM_THREADS / (BR/4)); along k, element k = t % BK of rows t / BK + i*RSTEP
// (RSTEP = NUM_THREADS / BK). Either way the 32 lanes of a warp read neighbouring addresses.
//
// Parameters: rung 08's (BM, BN, BK, WM, WN, WNITER, TM, TN; NUM_THREADS derived) and STAGES,
// and three that change no result, only how the compiler spends registers (the tuner tries them):
//   KUNROLL   k steps of the inner loop unrolled at once (default BK: all of them). Fully
//             unrolled, ptxas hoists the shared-memory loads of many k steps ahead of their FMAs
//             and keeps them all in registers (64 accumulators took 168-235 registers); 1 or 2
//             keeps about two steps' fragments live, close to the 64 + 2 * (8 + 8) the math needs.
//   MIN_BLOCKS  0 (default): no __launch_bounds__; n > 0: __launch_bounds__(NUM_THREADS, n), so
//             ptxas fits n blocks per SM (2 x 256 threads: at most 128 registers a thread). Two
//             resident blocks let one block's FMAs hide the other's barrier and copy waits.
//             sm_90 and newer only (ignored below: see the entry points).
//   ELEM_COPY 0 (default): an operand that is not 16-byte aligned (or whose leading dimension is
//             not a multiple of 4) is copied along its contiguous dimension as 4 guarded 4-byte
//             copies per 16-byte group; 1: one guarded 4-byte copy per element, elements spread
//             over the threads like the 'along k' copies. Same bytes, same zeros outside; 1
//             needs far fewer live registers (the guards and pointers of 4 copies per group were
//             kept across the whole k loop), which is what lets MIN_BLOCKS = 2 fit without spills.
//   LEAN      0 (default): the body described above; 1: the register-lean body (see "LEAN = 1"
//             below: the same pipeline, copies and results, with fewer live registers, fragments
//             double-buffered in registers, and KUNROLL the number of k steps unrolled at once,
//             even). With MIN_BLOCKS = 2 and 256 threads it fits 128 registers with no spills,
//             so two 128 x 128 blocks share an SM; ELEM_COPY is ignored (it always splits the
//             body by copy kind, as ELEM_COPY = 1 does).
//
// Tried and removed (measured slower on the H100, 4096^2, one block of 128 x 256 x 16, % of cuBLAS
// in the same layout; benchmarks/results/notes_simt_fp32.md): an operand contiguous along k kept
// row-major in shared memory and copied 16 bytes at a time (KROWS, chunks of 4 k steps: nn 84.8,
// tt 70.4), or loaded as float4s into registers and stored transposed after the tile's FMAs
// (RTRANS, the register-staged transpose of pre-Ampere SGEMMs, chunks of 16: nn 87.4, nt 78.3 with
// A alone, tt 83.4 with B), against nn 88.7, nt 85.7, tt 93.5 with the 4-byte copies described
// above (chunks of 16).
// Arguments, layouts and batches: gemm.cuh.
#include "gemm.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "09_pipelined needs cp.async: compute capability 8.0 (Ampere) or newer"
#endif

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 32
#endif
#ifndef WNITER
#define WNITER 2
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 4
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef NUM_THREADS
#define NUM_THREADS (32 * (BM / WM) * (BN / WN))
#endif
#ifndef KUNROLL
#define KUNROLL BK
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 0
#endif
#ifndef ELEM_COPY
#define ELEM_COPY 0
#endif
#ifndef LEAN
#define LEAN 0
#endif

namespace rung09 {

[[maybe_unused]] constexpr int kunroll = KUNROLL;   // #pragma unroll takes a constant expression, not a macro
static_assert(KUNROLL >= 1 && MIN_BLOCKS >= 0 && (ELEM_COPY == 0 || ELEM_COPY == 1) && (LEAN == 0 || LEAN == 1),
              "KUNROLL >= 1, MIN_BLOCKS >= 0, ELEM_COPY 0 or 1, LEAN 0 or 1");

constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);   // sub-tiles along m
constexpr int WSUBM = WM / WMITER;                             // a sub-tile: WSUBM x WSUBN
constexpr int WSUBN = WN / WNITER;
constexpr int SA = BM + 4;      // floats per k-row of the A tile in shared memory (padded)
constexpr int SB = BN + 4;      // same for B

static_assert(BM % WM == 0 && BN % WN == 0, "the warptile must divide the blocktile");
static_assert(NUM_THREADS == 32 * (BM / WM) * (BN / WN), "NUM_THREADS must be 32 * (BM/WM) * (BN/WN)");
static_assert(NUM_THREADS <= 256, "at most 256 threads: any register count then fits an SM");
static_assert(WMITER >= 1 && (WM * WN) % (32 * TM * TN * WNITER) == 0,
              "a warptile must hold a whole number of 32-thread sub-tiles");
static_assert(WM % WMITER == 0 && WN % WNITER == 0, "sub-tiles must divide the warptile");
static_assert(WSUBM % TM == 0 && WSUBN % TN == 0 && (WSUBM / TM) * (WSUBN / TN) == 32,
              "the 32 lanes must tile a sub-tile exactly");
static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are read from shared memory as float4s");
static_assert(BK % 4 == 0 && BM % 4 == 0 && BN % 4 == 0, "tiles are loaded as float4s");
static_assert(STAGES >= 2 && STAGES <= 8, "2 to 8 tiles in flight");
constexpr int STAGE_A = BK * SA;    // floats of one stage of A, of B
constexpr int STAGE_B = BK * SB;
// Dynamic shared memory in bytes (gemm.py's Rung.smem must say the same):
//     STAGES * BK * (BM + 4 + BN + 4) * 4
constexpr int SMEM_BYTES = STAGES * (STAGE_A + STAGE_B) * 4;
static_assert(SMEM_BYTES <= 227 * 1024, "more shared memory than any GPU gives a block");

// ---- cp.async (PTX ISA: "cp.async", sm_80+) ---------------------------------------------------
// Copies cp-size bytes global -> shared without registers; reads src_bytes (<= cp-size) and
// fills the rest with zeros, so src_bytes = 0 writes zeros and reads nothing (src must still be a
// valid address: callers pass the operand's base then).
__device__ __forceinline__ void cp_async16(float* dst, const float* src, int src_bytes) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async4(float* dst, const float* src, int src_bytes) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ bool aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15) == 0;
}

// Issues the copies of the BR x BK tile (operand rows r0.., k0..) of one operand into the stage
// Xs, k-major: element (r, k) at Xs[k * S + r]. ALONG_K: the operand's contiguous dimension is k
// (x[r*ld + k]: A 'n', B 't'), else it is r (x[k*ld + r]: A 't', B 'n'). R, K bound the operand:
// outside, the copy writes zeros. vec: x 16-byte aligned and ld % 4 == 0 (16-byte copies allowed).
// A thread's copies differ by a fixed number of rows, so it walks one pointer by a fixed stride
// (few registers: the 16 addresses of 16 copies would otherwise be kept across the whole k loop).
template <int BR, int S, bool ALONG_K>
__device__ __forceinline__ void copy_tile(const float* x, long long ld, long long r0, long long k0,
                                          long long R, long long K, bool vec, float* Xs, int tid) {
    if constexpr (ALONG_K) {        // 4-byte copies, each element to its transposed place
        constexpr int RSTEP = NUM_THREADS / BK;           // rows covered by one pass of the block
        static_assert(NUM_THREADS % BK == 0 && BR % RSTEP == 0, "copies must tile the tile exactly");
        const int k = tid % BK;                           // neighbouring lanes: neighbouring k
        int r = tid / BK;
        const bool k_in = k0 + k < K;
        const float* src = x + (r0 + r) * ld + k0 + k;
        const long long step = RSTEP * ld;
#pragma unroll
        for (int i = 0; i < BR / RSTEP; ++i, r += RSTEP, src += step) {
            const bool in = k_in && r0 + r < R;
            cp_async4(&Xs[k * S + r], in ? src : x, in ? 4 : 0);
        }
    } else {                        // along r: 16-byte copies of 4 neighbours, stored as they are
        constexpr int CPR = BR / 4;                       // 4-element groups per k-row
        constexpr int KSTEP = NUM_THREADS / CPR;          // k-rows covered by one pass of the block
        static_assert(NUM_THREADS % CPR == 0 && BK % KSTEP == 0, "copies must tile the tile exactly");
        const int r = (tid % CPR) * 4;                    // neighbouring lanes: neighbouring groups
        int k = tid / CPR;
        const long long left = R - (r0 + r);              // elements of this group inside the matrix
        const int bytes_r = left >= 4 ? 16 : left > 0 ? 4 * (int)left : 0;
        const float* src = x + (k0 + k) * ld + r0 + r;
        const long long step = KSTEP * ld;
        if (vec) {                  // 16 bytes, or fewer at the right edge (zero-filled), or none
#pragma unroll
            for (int i = 0; i < BK / KSTEP; ++i, k += KSTEP, src += step) {
                const int bytes = k0 + k < K ? bytes_r : 0;
                cp_async16(&Xs[k * S + r], bytes ? src : x, bytes);
            }
        } else if constexpr (ELEM_COPY == 0) {   // unaligned operand: the same 4 elements one by one
#pragma unroll
            for (int i = 0; i < BK / KSTEP; ++i, k += KSTEP, src += step) {
                const bool k_in = k0 + k < K;
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const bool in = k_in && 4 * j < bytes_r;     // r + j < R
                    cp_async4(&Xs[k * S + r + j], in ? src + j : x, in ? 4 : 0);
                }
            }
        } else {                    // unaligned, ELEM_COPY: one 4-byte copy per element,
                                    // neighbouring lanes neighbouring r (coalesced), one
                                    // pointer walked by a fixed stride (few live registers)
            if constexpr (NUM_THREADS >= BR) {    // a pass of the block: KS whole k-rows
                constexpr int KS = NUM_THREADS / BR;
                static_assert(NUM_THREADS % BR == 0 && BK % KS == 0, "element copies must tile the tile");
                const int re = tid % BR;
                int ke = tid / BR;
                const bool r_in = r0 + re < R;
                const float* p = x + (k0 + ke) * ld + r0 + re;
                const long long pstep = KS * ld;
#pragma unroll 1
                for (int i = 0; i < BK / KS; ++i, ke += KS, p += pstep) {
                    const bool in = r_in && k0 + ke < K;
                    cp_async4(&Xs[ke * S + re], in ? p : x, in ? 4 : 0);
                }
            } else {                              // a k-row takes RP passes of the block
                constexpr int RP = BR / NUM_THREADS;
                static_assert(BR % NUM_THREADS == 0, "element copies must tile the tile");
                const float* p = x + k0 * ld + r0 + tid;
#pragma unroll 1
                for (int ke = 0; ke < BK; ++ke, p += ld) {
                    const bool k_in = k0 + ke < K;
#pragma unroll
                    for (int j = 0; j < RP; ++j) {
                        const bool in = k_in && r0 + tid + j * NUM_THREADS < R;
                        cp_async4(&Xs[ke * S + tid + j * NUM_THREADS], in ? p + j * NUM_THREADS : x, in ? 4 : 0);
                    }
                }
            }
        }
    }
}

// Epilogue: the thread's WMITER x WNITER sub-tiles of TM x TN accumulators (+ bias) into C, 4
// columns at a time (float4 stores when vec_c: N % 4 == 0 and C aligned), rows >= M and columns
// >= N skipped. a_col / b_col: the thread's first row / column inside the blocktile.
__device__ __forceinline__ void store_tile(const float (&acc)[WMITER * TM][WNITER * TN], float* c,
                                           const float* bias, long long M, long long N, long long m0,
                                           long long n0, int a_col, int b_col, bool vec_c) {
#pragma unroll
    for (int wn = 0; wn < WNITER; ++wn) {
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const long long n = n0 + b_col + wn * WSUBN + j;
            float bv[4];                                       // this column group's bias, read once
#pragma unroll
            for (int q = 0; q < 4; ++q) bv[q] = (bias != nullptr && n + q < N) ? bias[n + q] : 0.f;
#pragma unroll
            for (int wm = 0; wm < WMITER; ++wm) {
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const long long m = m0 + a_col + wm * WSUBM + i;
                    if (m < M) {
                        const float* s = &acc[wm * TM + i][wn * TN + j];
                        const float4 v = make_float4(s[0] + bv[0], s[1] + bv[1], s[2] + bv[2], s[3] + bv[3]);
                        float* p = c + m * N + n;
                        if (vec_c && n < N) {                  // N % 4 == 0: n + 3 < N too
                            *reinterpret_cast<float4*>(p) = v;
                        } else {
                            if (n < N) p[0] = v.x;
                            if (n + 1 < N) p[1] = v.y;
                            if (n + 2 < N) p[2] = v.z;
                            if (n + 3 < N) p[3] = v.w;
                        }
                    }
                }
            }
        }
    }
}

extern __shared__ __align__(16) float gemm_smem[];    // STAGES stages of A, then STAGES of B

// The blocktiles of one batch: row tiles blockIdx.y, + gridDim.y, ... of matrix (a, b) -> c.
// VEC < 0: vec_a / vec_b decide at run time, per copy, between 16-byte and 4-byte copies (both
// kinds of copy compiled into one loop); VEC = 0 or 1: the caller has decided for both operands
// (ELEM_COPY), and this instantiation holds one kind only.
template <bool TA, bool TB, int VEC>
__device__ __forceinline__ void row_tiles_of(const float* a, const float* b, float* c, const float* bias,
                                             long long M, long long N, long long K, long long lda,
                                             long long ldb, bool vec_a_rt, bool vec_b_rt, bool vec_c,
                                             float* As, float* Bs, int tid, int a_col, int b_col,
                                             long long n0, long long row_tiles, long long k_tiles) {
    const bool vec_a = VEC < 0 ? vec_a_rt : VEC > 0;
    const bool vec_b = VEC < 0 ? vec_b_rt : VEC > 0;
    for (long long mt = blockIdx.y; mt < row_tiles; mt += gridDim.y) {   // grid y is capped
        const long long m0 = mt * BM;
        float acc[WMITER * TM][WNITER * TN];
#pragma unroll
        for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
            for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = 0.f;

        // Prologue: tiles 0 .. STAGES-2 into stages 0 .. STAGES-2, one group each.
#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < k_tiles) {
                copy_tile<BM, SA, !TA>(a, lda, m0, (long long)s * BK, M, K, vec_a, As + s * STAGE_A, tid);
                copy_tile<BN, SB, TB>(b, ldb, n0, (long long)s * BK, N, K, vec_b, Bs + s * STAGE_B, tid);
            }
            cp_async_commit();
        }

        int read_stage = 0, write_stage = STAGES - 1;
        for (long long t = 0; t < k_tiles; ++t) {
            // Groups committed so far: STAGES-1 + t; tile t is group t. Leaving at most
            // STAGES-2 pending means groups 0..t are complete (for this thread's copies).
            cp_async_wait<STAGES - 2>();
            __syncthreads();   // all threads' copies of tile t visible; tile t-1's stage free
            const long long next = t + STAGES - 1;
            if (next < k_tiles) {
                copy_tile<BM, SA, !TA>(a, lda, m0, next * BK, M, K, vec_a, As + write_stage * STAGE_A, tid);
                copy_tile<BN, SB, TB>(b, ldb, n0, next * BK, N, K, vec_b, Bs + write_stage * STAGE_B, tid);
            }
            cp_async_commit();                             // possibly empty: keeps the count
            write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;

            const float* as = As + read_stage * STAGE_A;
            const float* bs = Bs + read_stage * STAGE_B;
#pragma unroll (kunroll)
            for (int k = 0; k < BK; ++k) {
                float ra[WMITER * TM], rb[WNITER * TN];
#pragma unroll
                for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
                    for (int i = 0; i < TM; i += 4) {
                        const float4 f = *reinterpret_cast<const float4*>(&as[k * SA + a_col + wm * WSUBM + i]);
                        float* r = &ra[wm * TM + i];
                        r[0] = f.x; r[1] = f.y; r[2] = f.z; r[3] = f.w;
                    }
#pragma unroll
                for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                    for (int j = 0; j < TN; j += 4) {
                        const float4 f = *reinterpret_cast<const float4*>(&bs[k * SB + b_col + wn * WSUBN + j]);
                        float* r = &rb[wn * TN + j];
                        r[0] = f.x; r[1] = f.y; r[2] = f.z; r[3] = f.w;
                    }
#pragma unroll
                for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
                    for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
            }
            read_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;
        }
        // Only empty groups can still be pending; wait for them anyway, and let every thread
        // finish reading the ring before the next blocktile's prologue writes into it.
        cp_async_wait<0>();
        __syncthreads();
        store_tile(acc, c, bias, M, N, m0, n0, a_col, b_col, vec_c);
    }
}

// The kernel for VEC (see row_tiles_of): every batch, every row tile of this block's column tile.
template <bool TA, bool TB, int VEC>
__device__ __forceinline__ void gemm_body(GEMM_PARAMS(float)) {
    float* const As = gemm_smem;                       // stage s of A: As + s * STAGE_A
    float* const Bs = gemm_smem + STAGES * STAGE_A;    // stage s of B: Bs + s * STAGE_B
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wr = warp / (BN / WN), wc = warp % (BN / WN);          // the warp's tile in the block
    const int tr = lane / (WSUBN / TN), tc = lane % (WSUBN / TN);    // the lane's place in a sub-tile
    const int a_col = wr * WM + tr * TM;          // + wm * WSUBM + i: a row of the blocktile
    const int b_col = wc * WN + tc * TN;          // + wn * WSUBN + j: a column of the blocktile
    const long long n0 = (long long)blockIdx.x * BN;
    const long long row_tiles = (M + BM - 1) / BM;
    const long long k_tiles = (K + BK - 1) / BK;
    const bool vec_c = N % 4 == 0 && aligned16(C);             // then every row of C is aligned too

    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);
        const float* a = A + off[0];
        const float* b = B + off[1];
        float* c = C + z * M * N;
        const bool vec_a = lda % 4 == 0 && aligned16(a);
        const bool vec_b = ldb % 4 == 0 && aligned16(b);
        row_tiles_of<TA, TB, VEC>(a, b, c, bias, M, N, K, lda, ldb, vec_a, vec_b, vec_c, As, Bs, tid, a_col,
                                  b_col, n0, row_tiles, k_tiles);
    }
}

// ---- LEAN = 1: the same pipeline in a register-lean body --------------------------------------
// The body above keeps, across the whole k loop, what copy_tile recomputes each tile (operand
// bases, row and column origins, bounds as 64-bit values) and, fully unrolled, the fragments of
// many k steps: 168-235 registers for 64 accumulators, one 256-thread block per SM (12.5%
// occupancy, ncu); capped at 128 registers it spills. The lean body changes no result, only what
// stays live and how many instructions surround the FMAs, so that 64 accumulators fit in 128
// registers with the k loop unrolled by chunks and two 256-thread blocks share an SM
// (MIN_BLOCKS = 2):
//   - each operand's copies are a LeanCopier: one source pointer per thread, walked by a fixed
//     step per k-tile, and the bounds folded once per blocktile into one int (rows inside the
//     matrix, or bytes at its right edge); M, N, K, lda, ldb stay in the kernel's parameter
//     (constant) bank;
//   - each copier issues a tile's copies without guards when the tile lies inside the matrix
//     (all but the edge tiles): 3 instructions a copy instead of ~10;
//   - fragments are double-buffered in registers: the float4 reads of step k+1 are issued before
//     the FMAs of step k, so a warp's shared-memory latency hides behind its own 64 FMAs;
//   - the k loop of a tile runs in chunks of KUNROLL steps (an unrolled chunk inside a rolled
//     loop): fully unrolled, ptxas hoists the reads of many steps ahead of their FMAs and, capped
//     at 128 registers, spills; chunks of BK / 2 steps do not (nvcc 13, sm_90);
//   - batches and row tiles are one loop over (batch, row tile) pairs, and the epilogue's values
//     (C's batch, the tile origin) are recomputed after the k loop instead of kept through it;
//   - the kind of copy (16-byte or element) is decided once per launch, as ELEM_COPY = 1 does:
//     two kernel bodies, neither paying registers for the other's copies.
// Copies go to the same places as copy_tile's (same thread -> data mapping, same zeros outside
// M, N, K); an unaligned operand copied along its contiguous dimension uses the element mapping
// of ELEM_COPY = 1 (thread t: element t % BR of k-rows t / BR + i * NUM_THREADS / BR).
#if LEAN
// k steps of the inner loop unrolled at once: KUNROLL, at least 2 and even (see lean_body)
constexpr int LEAN_CHUNK = KUNROLL < BK ? KUNROLL : BK;
static_assert(LEAN_CHUNK >= 2 && LEAN_CHUNK % 2 == 0 && BK % LEAN_CHUNK == 0,
              "LEAN: KUNROLL (the k steps unrolled at once) even, at least 2, dividing BK (or >= BK)");

// The copies of one operand tile (BR rows x BK, k-major in shared memory, S floats a k-row) for
// the k-tiles 0, 1, 2, ... of one blocktile, issued in that order (issue() walks the pointer).
// ALONG_K, VEC as in copy_tile: ALONG_K the operand's contiguous dimension is k; VEC (along r
// only) 16-byte copies, else one 4-byte copy per element.
template <int BR, int S, bool ALONG_K, bool VEC>
struct LeanCopier {
    static constexpr int RSTEP = NUM_THREADS / BK;           // along k: rows one pass covers
    static constexpr int CPR = BR / 4;                       // along r, VEC: 16-byte groups a k-row
    static constexpr int KSTEP = VEC ? NUM_THREADS / CPR : NUM_THREADS / BR;   // along r: k-rows a pass
    static constexpr int COPIES = ALONG_K ? BR / RSTEP : BK / KSTEP;           // per thread per k-tile
    static_assert(NUM_THREADS % BK == 0 && BR % RSTEP == 0 && BR / RSTEP <= 32,
                  "LEAN along k: NUM_THREADS a multiple of BK, BR of NUM_THREADS / BK, at most 32 copies");
    static_assert(ALONG_K || (NUM_THREADS % (VEC ? CPR : BR) == 0 && BK % KSTEP == 0),
                  "LEAN along r: BR / 4 and BR divide NUM_THREADS, BK a multiple of the k-rows a pass covers");

    // This thread's first row (of BR) and first k (of BK) inside a tile: recomputed from tid
    // when needed rather than kept in registers across the k loop.
    __device__ __forceinline__ static int row(int tid) {
        return ALONG_K ? tid / BK : VEC ? (tid % CPR) * 4 : tid % BR;
    }
    __device__ __forceinline__ static int kk(int tid) { return ALONG_K ? tid % BK : VEC ? tid / CPR : tid / BR; }

    static constexpr int FULL = ALONG_K ? COPIES : VEC ? 16 : 4;   // in_r of a thread inside R

    const float* p;      // this thread's first element of the next k-tile
    int in_r;            // along k: how many of the rows row + i * RSTEP are inside R (0..COPIES);
                         // along r: bytes of this thread's group (VEC: 0..16) or element (0, 4)
                         // inside R

    __device__ __forceinline__ LeanCopier(const float* x, long long ld, long long r0, long long R, int tid) {
        const int r = row(tid), k = kk(tid);
        const long long left = R - (r0 + r);             // rows (elements) from this thread's first on
        if constexpr (ALONG_K) {
            p = x + (r0 + r) * ld + k;
            in_r = left <= 0 ? 0 : left >= (long long)(COPIES - 1) * RSTEP + 1 ? COPIES
                                                                             : (int)((left + RSTEP - 1) / RSTEP);
        } else {
            p = x + k * ld + r0 + r;
            in_r = VEC ? (left >= 4 ? 16 : left > 0 ? 4 * (int)left : 0) : (left > 0 ? 4 : 0);
        }
    }

    // Issues this thread's copies of k-tile k0 (the next one in order) into the stage at Xs.
    // x: any valid address of the operand (the source of the copies that read nothing). Inside
    // the matrix (every tile but the last row / column / k tiles) the copies take no guards.
    __device__ __forceinline__ void issue(float* Xs, long long k0, long long K, long long ld, const float* x,
                                          int tid) {
        const int r = row(tid), k = kk(tid);
        const long long k_left = K - k0 - k;              // k from this thread's first on, inside K
        if constexpr (ALONG_K) {
            float* d = &Xs[k * S + r];
            if (k_left > 0 && in_r == FULL) {
#pragma unroll
                for (int i = 0; i < COPIES; ++i) cp_async4(d + i * RSTEP, p + i * RSTEP * ld, 4);
            } else {
#pragma unroll
                for (int i = 0; i < COPIES; ++i) {
                    const bool in = k_left > 0 && i < in_r;
                    cp_async4(d + i * RSTEP, in ? p + i * RSTEP * ld : x, in ? 4 : 0);
                }
            }
            p += BK;
        } else {
            float* d = &Xs[k * S + r];
            if (k_left > (long long)(COPIES - 1) * KSTEP && in_r == FULL) {
#pragma unroll
                for (int j = 0; j < COPIES; ++j) {
                    if constexpr (VEC)
                        cp_async16(d + j * KSTEP * S, p + j * KSTEP * ld, 16);
                    else
                        cp_async4(d + j * KSTEP * S, p + j * KSTEP * ld, 4);
                }
            } else {
                const int k_in = (int)(k_left < BK ? k_left : BK);   // k-rows left, at most BK
#pragma unroll
                for (int j = 0; j < COPIES; ++j) {
                    const int bytes = j * KSTEP < k_in ? in_r : 0;
                    const float* src = bytes ? p + j * KSTEP * ld : x;
                    if constexpr (VEC)
                        cp_async16(d + j * KSTEP * S, src, bytes);
                    else
                        cp_async4(d + j * KSTEP * S, src, bytes);
                }
            }
            p += BK * ld;
        }
    }
};

// The fragments of k step k: the thread's WMITER x TM rows of A and WNITER x TN columns of B,
// as float4 reads (as and bs already point at the thread's first row / column of the stage).
__device__ __forceinline__ void lean_fragments(float (&ra)[WMITER * TM], float (&rb)[WNITER * TN],
                                               const float* as, const float* bs, int k) {
#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < TM; i += 4) {
            const float4 f = *reinterpret_cast<const float4*>(&as[k * SA + wm * WSUBM + i]);
            ra[wm * TM + i] = f.x; ra[wm * TM + i + 1] = f.y; ra[wm * TM + i + 2] = f.z; ra[wm * TM + i + 3] = f.w;
        }
#pragma unroll
    for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const float4 f = *reinterpret_cast<const float4*>(&bs[k * SB + wn * WSUBN + j]);
            rb[wn * TN + j] = f.x; rb[wn * TN + j + 1] = f.y; rb[wn * TN + j + 2] = f.z; rb[wn * TN + j + 3] = f.w;
        }
}

// Every batch, every row tile of this block's column tile, as row_tiles_of + gemm_body do, as
// one loop over (batch, row tile) pairs w = z * row_tiles + mt (one live counter instead of two
// loops' state); VEC: the operands copied along their contiguous dimension take 16-byte copies.
// Everything else (tile origins, the thread's place, C's batch) is recomputed where it is used.
template <bool TA, bool TB, bool VEC>
__device__ __forceinline__ void lean_body(GEMM_PARAMS(float)) {
    float* const As = gemm_smem;
    float* const Bs = gemm_smem + STAGES * STAGE_A;
    const int tid = threadIdx.x;
    const long long row_tiles = (M + BM - 1) / BM;
    const long long k_tiles = (K + BK - 1) / BK;
    for (long long w = blockIdx.z * (long long)gridDim.y + blockIdx.y; w < batch * row_tiles;
         w += (long long)gridDim.y * gridDim.z) {
        const long long z = w / row_tiles, m0 = (w - z * row_tiles) * BM;
        const long long n0 = (long long)blockIdx.x * BN;
        long long off[2];
        layout_offsets<2>(L, z, off);
        LeanCopier<BM, SA, !TA, VEC> copy_a(A + off[0], lda, m0, M, tid);
        LeanCopier<BN, SB, TB, VEC> copy_b(B + off[1], ldb, n0, N, tid);
        float acc[WMITER * TM][WNITER * TN];
#pragma unroll
        for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
            for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = 0.f;

#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {      // prologue: tiles 0 .. STAGES-2
            if (s < k_tiles) {
                copy_a.issue(As + s * STAGE_A, (long long)s * BK, K, lda, A, tid);
                copy_b.issue(Bs + s * STAGE_B, (long long)s * BK, K, ldb, B, tid);
            }
            cp_async_commit();
        }
        // the thread's first row / column in the blocktile (rung 08's mapping)
        const int warp = tid / 32, lane = tid % 32;
        const int a_col = (warp / (BN / WN)) * WM + (lane / (WSUBN / TN)) * TM;
        const int b_col = (warp % (BN / WN)) * WN + (lane % (WSUBN / TN)) * TN;
        int read_stage = 0, write_stage = STAGES - 1;
        for (long long t = 0; t < k_tiles; ++t) {
            cp_async_wait<STAGES - 2>();            // the counting of row_tiles_of
            __syncthreads();
            const long long next = t + STAGES - 1;
            if (next < k_tiles) {
                copy_a.issue(As + write_stage * STAGE_A, next * BK, K, lda, A, tid);
                copy_b.issue(Bs + write_stage * STAGE_B, next * BK, K, ldb, B, tid);
            }
            cp_async_commit();
            write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;

            const float* as = As + read_stage * STAGE_A + a_col;
            const float* bs = Bs + read_stage * STAGE_B + b_col;
            float ra[2][WMITER * TM], rb[2][WNITER * TN];     // fragments of steps k and k+1
            lean_fragments(ra[0], rb[0], as, bs, 0);
            // LEAN_CHUNK steps unrolled at once (an even number: step k's buffer is k % 2 at
            // compile time); the last step of a chunk reads the next chunk's first fragments,
            // or, at the tile's end, step BK-1's again (harmless, and no branch).
#pragma unroll 1
            for (int kc = 0; kc < BK; kc += LEAN_CHUNK) {
#pragma unroll
                for (int kk = 0; kk < LEAN_CHUNK; ++kk) {
                    const int kn = kk + 1 < LEAN_CHUNK ? kc + kk + 1 : min(kc + kk + 1, BK - 1);
                    lean_fragments(ra[(kk + 1) % 2], rb[(kk + 1) % 2], as, bs, kn);
#pragma unroll
                    for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
                        for (int j = 0; j < WNITER * TN; ++j)
                            acc[i][j] = fmaf(ra[kk % 2][i], rb[kk % 2][j], acc[i][j]);
                }
            }
            read_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;
        }
        cp_async_wait<0>();
        __syncthreads();
        store_tile(acc, C + z * M * N, bias, M, N, m0, n0, a_col, b_col, N % 4 == 0 && aligned16(C));
    }
}

// Chooses the body once per launch, as gemm_pipelined does with ELEM_COPY = 1.
template <typename T, bool TA, bool TB>
__device__ __forceinline__ void gemm_lean(GEMM_PARAMS(T)) {
    static_assert(sizeof(T) == 4, "float32 only: tiles move as float4");
    // operands copied 16 bytes at a time when aligned: along their contiguous dimension (A 't', B 'n')
    constexpr bool a_r = TA, b_r = !TB;
    if constexpr (!a_r && !b_r) {
        lean_body<TA, TB, false>(A, B, C, bias, M, N, K, lda, ldb, batch, L);   // 'nt': 4-byte copies only
    } else {
        bool vec = (!a_r || (aligned16(A) && lda % 4 == 0)) && (!b_r || (aligned16(B) && ldb % 4 == 0));
#pragma unroll
        for (int d = 0; d < MAX_DIMS; ++d) {
            if (d >= L.ndim) break;
            vec = vec && (!a_r || L.strides[0][d] % 4 == 0) && (!b_r || L.strides[1][d] % 4 == 0);
        }
        if (vec)
            lean_body<TA, TB, true>(A, B, C, bias, M, N, K, lda, ldb, batch, L);
        else
            lean_body<TA, TB, false>(A, B, C, bias, M, N, K, lda, ldb, batch, L);
    }
}
#endif  // LEAN

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void gemm_pipelined(GEMM_PARAMS(T)) {
    static_assert(sizeof(T) == 4, "float32 only: tiles move as float4");
#if LEAN
    gemm_lean<T, TA, TB>(A, B, C, bias, M, N, K, lda, ldb, batch, L);
#elif ELEM_COPY
    // Decided once for the whole launch (the same answer in every thread): when every operand
    // that is copied along its contiguous dimension (A 't', B 'n': the 16-byte copies) is 16-byte
    // aligned, with a leading dimension and batch strides that are multiples of 4, every batch's
    // copies can be 16 bytes; then a kernel body with only 16-byte copies runs, else one with only
    // 4-byte element copies. Two separate bodies, so neither pays registers for the other's.
    // 'nt' copies both operands along k (4-byte copies either way): one body.
    constexpr bool a_r = TA, b_r = !TB;
    if constexpr (!a_r && !b_r) {
        gemm_body<TA, TB, 0>(A, B, C, bias, M, N, K, lda, ldb, batch, L);
    } else {
        bool vec = (!a_r || (aligned16(A) && lda % 4 == 0)) && (!b_r || (aligned16(B) && ldb % 4 == 0));
#pragma unroll
        for (int d = 0; d < MAX_DIMS; ++d) {
            if (d >= L.ndim) break;
            vec = vec && (!a_r || L.strides[0][d] % 4 == 0) && (!b_r || L.strides[1][d] % 4 == 0);
        }
        if (vec)
            gemm_body<TA, TB, 1>(A, B, C, bias, M, N, K, lda, ldb, batch, L);
        else
            gemm_body<TA, TB, 0>(A, B, C, bias, M, N, K, lda, ldb, batch, L);
    }
#else
    gemm_body<TA, TB, -1>(A, B, C, bias, M, N, K, lda, ldb, batch, L);
#endif
}

}  // namespace rung09

// The entry points: GEMM_ENTRIES (gemm.cuh), with __launch_bounds__ when MIN_BLOCKS > 0.
// On GPUs older than sm_90 MIN_BLOCKS is ignored: its register caps were checked for spills
// (zero, with nvcc 13) on sm_90 only, and the table that names them is per architecture.
#if MIN_BLOCKS > 0 && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900)
#define RUNG09_ENTRY(LA, LB, TA, TB)                                                                  \
    extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS) gemm_##LA##LB##_f32(      \
        GEMM_PARAMS(float)) {                                                                       \
        rung09::gemm_pipelined<float, TA, TB>(A, B, C, bias, M, N, K, lda, ldb, batch, L);          \
    }
RUNG09_ENTRY(n, n, false, false)
RUNG09_ENTRY(n, t, false, true)
RUNG09_ENTRY(t, n, true, false)
RUNG09_ENTRY(t, t, true, true)
#else
GEMM_ENTRIES(rung09::gemm_pipelined, float, f32)
#endif
