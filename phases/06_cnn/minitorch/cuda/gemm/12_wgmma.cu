// GENERATED from minitorch/cuda/gemm/12_wgmma.cu by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
// phase: 05
// 12_wgmma.cu - rung 12 of the GEMM ladder: Hopper's warpgroup tensor-core instruction, wgmma
// (bf16, fp16, and float32 through TF32). Needs sm_90a: NVRTC/nvcc target sm_90a, never sm_90.
//
// What changes from rung 11. mma.sync is a WARP instruction whose operands come from registers:
// every k16 step each warp first copies its fragments out of shared memory (ldmatrix), and the
// tensor cores wait on those copies. On an H100 that tops out near 65% of the tensor peak.
// `wgmma.mma_async` is a WARPGROUP instruction (4 consecutive warps, 128 threads): one
// instruction multiplies a 64 x N tile of A by an N-wide tile of B (N = 128 or 256 here, K = 16
// for 16-bit inputs, 8 for TF32), reading BOTH operands straight from shared memory through two
// 64-bit "matrix descriptors", and accumulating into registers (N/2 floats per thread). No
// ldmatrix, no fragments: the threads only issue it, and it runs in the background ("async")
// until wgmma.wait_group. So:
// 1. The block (256 threads = 2 warpgroups) computes a 128 x BN tile of C; warpgroup w computes
//    its rows 64w .. 64w+63 with one m64nBNk16 wgmma per k16 step, 4 per 64-wide k tile.
// 2. Shared memory must be in the layout the descriptors describe: the "128-byte swizzle". A
//    tile is cut into atoms of 8 rows x 128 bytes (1024 bytes, 1024-aligned); in row r of an
//    atom, 16-byte chunk q is stored at chunk position q ^ (r % 8). This is exactly rung 11's
//    swizzle for rows of 128 bytes, so the same loader (mma.cuh's load_tile: cp.async, zero-fill
//    at the edges, element copies for unaligned rows) fills the tiles; only where each chunk goes
//    is new (KMajor / MNMajor below). Why cp.async and not the TMA copy engine
//    (cp.async.bulk.tensor with a cuTensorMapEncodeTiled tensor map): TMA needs every row stride a
//    multiple of 16 bytes and a host-side tensor map per operand and launch (a driver call
//    through ctypes, a 128-byte __grid_constant__ parameter); cp.async keeps every size, stride,
//    batch and unaligned view rung 11 handles, with code that is already tested on the GPU. The
//    cost: all 256 threads spend issue slots on copies, which TMA would do from one thread.
// 3. Layouts: wgmma reads A and B "K-major" (k along the 128-byte rows) or, for 16-bit inputs,
//    "MN-major" (m or n along the rows; the instruction's imm-trans-a / imm-trans-b bit = 1).
//    A 'n' [m][k] and B 't' [n][k] are K-major; A 't' [k][m] and B 'n' [k][n] are MN-major: all
//    four layouts are read where they lie. TF32 has only K-major: float32 has the 'nt' entry
//    only (nn.Linear's forward); native/cuda/gemm.py sends the other layouts to rung 10.
// 4. Pipeline: STAGES shared-memory buffers filled by cp.async; each k tile's wgmmas are
//    committed as one group and the loop waits only for the group before (wait_group 1), so the
//    tensor cores work on tile kt while the threads issue tile kt+1's wgmmas and the copies of
//    tile kt+STAGES-2. A buffer is refilled only after every warpgroup has waited for the
//    wgmmas that read it (the barrier at the top of the next trip).
// 5. Ordering between the two "proxies": cp.async and plain stores write shared memory through
//    the generic proxy, wgmma reads it through the async proxy, so each thread executes
//    fence.proxy.async.shared::cta after its copies have landed and before the barrier.
//
// Descriptor (PTX ISA, "Matrix Descriptor Format" of wgmma): bits 0-13 start address >> 4,
// 16-29 leading byte offset >> 4 (LBO), 32-45 stride byte offset >> 4 (SBO), 49-51 base offset
// (0: our atoms are 1024-aligned), 62-63 swizzle mode (1 = 128-byte swizzle). In the canonical
// 128-byte-swizzle layouts (element = 2 bytes, T = 8 elements per 16-byte chunk):
//   K-major:  ((8, m), (T, 2k)) : ((8T, SBO), (1, T))   rows of 8T = 64 elements; SBO = 1024 bytes
//             from one 8-row group to the next; LBO unused (1). A k16 step starts 32 bytes further
//             along the row (the hardware swizzles the absolute address, so that lands right).
//   MN-major: ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO))   a row is 64 m (or n) of one k; LBO
//             = bytes from one 64-wide block of m to the next (BK rows x 128 bytes here), SBO =
//             1024 bytes from 8 k to the next 8; a k16 step starts 16 rows (2048 bytes) further.
// Accumulators (PTX ISA, "wgmma register fragment, matrix D"): thread lane = 4g + t of warp w
// (0..3) of the warpgroup holds, for each n8 block j, d[4j + 2h + e] = D[16w + g + 8h][8j + 2t + e]
// (h, e in {0, 1}): rung 11's m16n8 accumulator layout, repeated over n.
//
// Compile-time parameters (NVRTC -DNAME=value; native/cuda/gemm.py TUNED_DEFAULTS["12_wgmma"]):
//   BN       128 or 256: the C tile is 128 x BN (N of the wgmma)
//   STAGES   3 or 4 shared-memory buffers (with wait_group 1, STAGES-2 tiles are copied ahead)
//   GROUP_M  block rasterization (mma.cuh, tc::raster); 0 = plain order
//   MINB     blocks per SM promised to the compiler (__launch_bounds__): 1, or 2 with BN = 128 and
//            STAGES = 3 (2 x 98 KB of smem, at most 128 registers a thread): then one block's
//            prologue and epilogue overlap the other block's main loop
//
// Arguments, layouts and batches: gemm.cuh. Edge tiles: the loader zero-fills rows and k past the
// matrix, the epilogue stores only rows < M and columns < N.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "mma.cuh"
#include "wgmma.cuh"       // the descriptors, fences and per-type wgmma (shared with rung 13)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "12_wgmma.cu needs the arch-specific target sm_90a (nvcc -gencode=arch=compute_90a,code=sm_90a; NVRTC -arch=sm_90a)"
#endif
// On other targets (sm_80 in tests/test_nvcc.py) the entry points compile with empty bodies
// (wgmma.cuh's WGMMA_OK is 0 there); native/cuda/gemm.py launches this rung only on sm_90.

#ifndef BN
#define BN 256
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP_M
#define GROUP_M 0
#endif
#ifndef MINB
#define MINB 1
#endif

namespace wg {

constexpr int BM = 128;                      // two warpgroups of 64 rows
constexpr int THREADS = 256;
static_assert(BN == 128 || BN == 256, "BN (the wgmma's N) 128 or 256");
static_assert(STAGES == 3 || STAGES == 4, "3 or 4 stages");
static_assert(MINB == 1 || (MINB == 2 && BN == 128), "two blocks per SM only with BN = 128 (64 accumulators)");

// Per element type: wgmma::Elem's ATOM, VEC, KSTEP and BK, and this rung's tiles and stages.
template <typename T>
struct Shape : wgmma::Elem<T> {
    static constexpr int A_TILE = BM * wgmma::Elem<T>::BK, B_TILE = BN * wgmma::Elem<T>::BK;   // elements
    static constexpr int STAGE = A_TILE + B_TILE;
    static constexpr int SMEM_BYTES = STAGES * STAGE * (int)sizeof(T) + 1024;   // + 1 KB to align to 1024
};
static_assert(Shape<__nv_bfloat16>::SMEM_BYTES <= 232448 && Shape<float>::SMEM_BYTES <= 232448, "<= 227 KB");

// Where chunk q of row r goes (element offsets) - load_tile's SMEM argument.
// K-major tile (rows m or n, 128 bytes of k each): 8-row atoms one after the other.
template <typename T>
struct KMajor {
    static __device__ __forceinline__ int at(int r, int q) {
        return r * Shape<T>::ATOM + ((q ^ (r & 7)) * Shape<T>::VEC);
    }
};
// MN-major tile (rows k, BM or BN wide): blocks of 64 m (n) columns, each BK rows x 128 bytes.
template <typename T>
struct MNMajor {
    static __device__ __forceinline__ int at(int r, int q) {
        constexpr int A = Shape<T>::ATOM;
        return (q >> 3) * (Shape<T>::BK * A) + r * A + (((q & 7) ^ (r & 7)) * Shape<T>::VEC);
    }
};

__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace wg

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void gemm_wgmma(GEMM_PARAMS(T)) {
#if WGMMA_OK
    using namespace wg;
    using S = Shape<T>;
    constexpr int BK = S::BK;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    // the swizzle is a function of the absolute shared address: atoms must start 1024-aligned
    const unsigned raw = tc::smem_u32(smem_raw);
    const unsigned base = (raw + 1023u) & ~1023u;
    T* smem = reinterpret_cast<T*>(smem_raw + (base - raw));      // stage s: A tile, then B tile

    const int tid = threadIdx.x, lane = tid & 31;
    const int group = tid >> 7;                                   // warpgroup: rows 64*group ..
    const int warp = (tid >> 5) & 3;                              // warp inside the warpgroup
    const int g = lane >> 2, t = lane & 3;
    long long bn, bm;
    tc::raster<GROUP_M>(bn, bm);
    const long long n0 = bn * BN;
    const long long mtiles = (M + BM - 1) / BM;
    const int ktiles = (int)((K + BK - 1) / BK);

    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        long long off[2];
        layout_offsets<2>(L, z, off);
        const T* a = A + off[0];
        const T* b = B + off[1];
        T* c = C + z * M * N;
        const bool a_vec = tc::rows_aligned16(a, lda), b_vec = tc::rows_aligned16(b, ldb);

        for (long long mt = bm; mt < mtiles; mt += gridDim.y) {   // gridDim.y is capped at 65535
            const long long m0 = mt * BM;

            auto load_stage = [&](int kt, int s) {
                T* sa = smem + s * S::STAGE;
                T* sb = sa + S::A_TILE;
                const long long k0 = (long long)kt * BK;
                if constexpr (TA) tc::load_tile<T, BK, BM, THREADS, MNMajor<T>>(sa, a, lda, k0, K, m0, M, a_vec, tid);
                else              tc::load_tile<T, BM, BK, THREADS, KMajor<T>>(sa, a, lda, m0, M, k0, K, a_vec, tid);
                if constexpr (TB) tc::load_tile<T, BN, BK, THREADS, KMajor<T>>(sb, b, ldb, n0, N, k0, K, b_vec, tid);
                else              tc::load_tile<T, BK, BN, THREADS, MNMajor<T>>(sb, b, ldb, k0, K, n0, N, b_vec, tid);
            };

            float d[BN / 2];
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;

            // Prologue: tiles 0 .. STAGES-3 in flight, one cp.async group each (empty past K).
#pragma unroll
            for (int s = 0; s < STAGES - 2; ++s) {
                if (s < ktiles) load_stage(s, s);
                tc::cp_async_commit();
            }

            for (int kt = 0; kt < ktiles; ++kt) {
                // Tile kt has landed (this thread's copies: the wait; made visible to the async
                // proxy: the fence; everyone's: the barrier). Past the barrier every warpgroup has
                // also finished the wgmmas of tile kt-2 (its wait_group 1 at the end of trip kt-1),
                // so that tile's stage, (kt + STAGES - 2) % STAGES, is refilled now.
                tc::cp_async_wait<STAGES - 3>();
                fence_proxy_async();
                __syncthreads();
                const int next = kt + STAGES - 2;
                if (next < ktiles) load_stage(next, next % STAGES);
                tc::cp_async_commit();

                const unsigned sa = base + (unsigned)((kt % STAGES) * S::STAGE * (int)sizeof(T));
                const unsigned sb = sa + S::A_TILE * (int)sizeof(T);
                wgmma::fence();                     // the accumulators' earlier writes come first
#pragma unroll
                for (int s = 0; s < BK / S::KSTEP; ++s)
                    wgmma::Op<T>::template mma<BN, TA, !TB>(d, wgmma::tile_descriptor<T, TA>(sa, 64 * group, s),
                                                           wgmma::tile_descriptor<T, !TB>(sb, 0, s));
                wgmma::commit();
                wgmma::wait<1>();                   // tile kt-1's wgmmas are done; kt's may run on
            }
            wgmma::wait<0>();
            wgmma::pin_registers(d);
            __syncthreads();                       // every stage free for the next tile's prologue

            // Epilogue: this warpgroup's 64 rows of the C tile, bias added, rounded once to T
            wgmma::store_tile<T, BN>(c, bias, d, M, N, m0 + 64 * group, n0, warp, g, t);
        }
    }
#endif
}

// 256 threads; MINB = 1 block per SM lets a thread have up to 255 registers, which the BN/2 = 128
// accumulators of BN = 256 need; MINB = 2 caps it at 128.
#define WGMMA_ENTRY(LA, LB, TA, TB, T, SUF)                                                         \
    extern "C" __global__ void __launch_bounds__(wg::THREADS, MINB) gemm_##LA##LB##_##SUF(GEMM_PARAMS(T)) { \
        gemm_wgmma<T, TA, TB>(A, B, C, bias, M, N, K, lda, ldb, batch, L);                         \
    }
#define WGMMA_ENTRIES(T, SUF)                                                                       \
    WGMMA_ENTRY(n, n, false, false, T, SUF)                                                         \
    WGMMA_ENTRY(n, t, false, true, T, SUF)                                                          \
    WGMMA_ENTRY(t, n, true, false, T, SUF)                                                          \
    WGMMA_ENTRY(t, t, true, true, T, SUF)
WGMMA_ENTRIES(__nv_bfloat16, bf16)
WGMMA_ENTRIES(__half, f16)
WGMMA_ENTRY(n, t, false, true, float, f32)      // TF32: K-major A and B only
