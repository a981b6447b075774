// GENERATED from minitorch/cuda/gemm/13_wgmma_tma.cu by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
// phase: 05
// 13_wgmma_tma.cu - rung 13 of the GEMM ladder: rung 12's wgmma, fed by the TMA copy engine and
// warp-specialized. bf16, fp16 (all four layouts) and float32 through TF32 ('nt'). sm_90a only.
//
// What changes from rung 12, and why it is faster. In rung 12 all 256 threads both copy and
// multiply: every k tile each thread computes addresses and issues cp.async copies, waits for
// them, fences and meets the others at a __syncthreads() before any wgmma may start; the tensor
// cores idle during those barriers, and the copy instructions take issue slots. Here:
// 1. TMA. One thread describes a whole tile copy with one instruction,
//    cp.async.bulk.tensor.3d (coordinates into a "tensor map" made on the host by
//    cuTensorMapEncodeTiled, passed by value as a __grid_constant__ kernel parameter); the copy
//    engine computes the addresses, zero-fills what lies past the matrix (any M, N, K) and writes
//    the tile already in the 128-byte swizzle the wgmma descriptors read (CU_TENSOR_MAP_SWIZZLE_128B:
//    chunk q of row r at q ^ (r % 8), rung 12's layout). The price: every row stride and the base
//    address must be multiples of 16 bytes (Python falls back to rung 12 otherwise).
// 2. mbarriers instead of __syncthreads(). Stage s has a "full" barrier, on which the copies
//    complete (the producer announces the stage's bytes with mbarrier.arrive.expect_tx, and the
//    barrier's phase completes when that many bytes have landed), and an "empty" barrier on which
//    each consumer warp arrives once its wgmmas have finished reading the stage. Waiting is on a
//    phase's parity: the k-th use of a stage waits for phase k of its full barrier (parity k % 2),
//    and the producer's k-th refill of it for phase k-1 of its empty barrier (parity (k-1) % 2; the
//    "phase -1" of a fresh barrier counts as complete, so the first STAGES fills do not wait).
//    Nobody waits for anybody else's unrelated progress: the consumers run ahead as far as data
//    has arrived, the producer as far as stages are free.
// 3. Warp specialization. 384 threads = 3 warpgroups: warpgroup 0 is the producer (one thread
//    issues every TMA), warpgroups 1 and 2 are consumers that compute rows 0-63 and 64-127 of the
//    128 x BN C tile with one m64nBNk16 (k8 for TF32) wgmma per 32 bytes of k. setmaxnreg moves
//    registers from the producer (40 a thread) to the consumers (232: BN/2 = 128 accumulators
//    and the epilogue): 128 x 40 + 256 x 232 = 64512 of the SM's 65536.
// 4. A persistent grid: one block per SM walks the C tiles tile = blockIdx.x, + gridDim.x, ...
//    in a grouped order (GROUP_M m-tiles by every n-tile, so the tiles in flight at once share A
//    and B strips in L2). The producer and consumers walk the same tiles, the stage ring running
//    on across tiles: while the consumers write one tile's C, the producer already loads the next.
// Layouts: the K-major operands (A 'n' [m][k], B 't' [n][k]) come in one TMA box of 128 bytes of k
// by BM (BN) rows; the MN-major ones (A 't', B 'n', 16-bit only) in blocks of 64 m (n) by BK rows
// of k, one box each, as rung 12's MNMajor tile (descriptor: wgmma.cuh). Batches: each tensor
// map is 3-D, the third dimension the batch (Python sends only batches that are one evenly strided
// dimension; a broadcast operand has the flag a_batched / b_batched 0 and reads batch 0).
//
// Compile-time parameters (NVRTC -DNAME=value; native/cuda/gemm.py TUNED_DEFAULTS["13_wgmma_tma"]):
//   BN       128 or 256: the C tile is 128 x BN (N of the wgmma)
//   STAGES   shared-memory stages, each (128 + BN) x 128 bytes: 3-4 with BN 256, 3-6 with BN 128
//   GROUP_M  m-tiles per group of the tile order; 0 = row by row
//
// Arguments: (map_a, map_b, C, bias, M, N, K, batch, a_batched, b_batched); C contiguous
// [batch][M][N], bias [N] or null; the tensor maps (layouts and strides: gemm.py's tensor_map):
//   A 'n': dims {K, M, batches}, box {BK, 128};   A 't': dims {M, K, batches}, box {64, BK}
//   B 't': dims {K, N, batches}, box {BK, BN};    B 'n': dims {N, K, batches}, box {64, BK}
// (BK = 128 bytes of k: 64 16-bit elements, 32 floats). Grid: min(tiles, SMs) blocks of 384
// threads; dynamic shared memory STAGES x (128 + BN) x 128 + 1024 bytes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "mma.cuh"
#include "wgmma.cuh"
#include "tma.cuh"         // mbarriers, the TMA copy, setmaxnreg (shared with attention rung 3)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "13_wgmma_tma.cu needs the arch-specific target sm_90a (nvcc -gencode=arch=compute_90a,code=sm_90a; NVRTC -arch=sm_90a)"
#endif
// On other targets (sm_80 in tests/test_nvcc.py) the entry points compile with empty bodies;
// native/cuda/gemm.py launches this rung only on sm_90.

#ifndef BN
#define BN 256
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif

namespace tma {      // (tma.cuh's namespace: this rung's shapes and tile order join its helpers)

constexpr int BM = 128;                       // two consumer warpgroups of 64 rows
constexpr int CONSUMERS = 2;
constexpr int THREADS = 128 * (1 + CONSUMERS);
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr int EMPTY_ARRIVALS = CONSUMERS * 4;   // one per consumer warp
constexpr int A_BYTES = BM * 128, B_BYTES = BN * 128, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;   // + 1 KB to align the stages to 1024
static_assert(BN == 128 || BN == 256, "BN (the wgmma's N) 128 or 256");
static_assert(STAGES >= 2, "at least 2 stages");
static_assert(SMEM_BYTES + 2 * STAGES * 8 <= 232448, "shared memory <= 227 KB");
static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 128 * CONSUMERS <= 65536, "registers of one SM");
static_assert(EMPTY_ARRIVALS == (THREADS - 128) / 32, "every consumer warp arrives on a stage's empty barrier");

// The block's next C tile in the grouped order: tile -> (batch z, m-tile mt, n-tile nt). Groups
// of GROUP_M m-tiles (the last may be shorter) are walked column by column, so consecutive tiles
// run down m first. A bijection of 0 .. mtiles*ntiles*batch - 1 (Python keeps that below 2^31).
__device__ __forceinline__ void tile_coords(unsigned tile, unsigned mtiles, unsigned ntiles,
                                            unsigned& z, unsigned& mt, unsigned& nt) {
    const unsigned per = mtiles * ntiles;
    z = tile / per;
    const unsigned r = tile - z * per;
    if constexpr (GROUP_M > 0) {
        constexpr unsigned GROUP = GROUP_M > 0 ? GROUP_M : 1;     // (this branch is compiled for 0 too)
        const unsigned span = GROUP * ntiles, group = r / span;
        const unsigned first = group * GROUP;
        const unsigned rows = mtiles - first < GROUP ? mtiles - first : GROUP;
        const unsigned within = r - group * span;
        mt = first + within % rows;
        nt = within / rows;
    } else {
        mt = r / ntiles;
        nt = r - mt * ntiles;
    }
}

}  // namespace tma

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void gemm_tma(const tma::TensorMap& map_a, const tma::TensorMap& map_b, T* __restrict__ C,
                                         const T* __restrict__ bias, long long M, long long N, long long K,
                                         long long batch, long long a_batched, long long b_batched) {
#if WGMMA_OK
    using namespace tma;
    using E = wgmma::Elem<T>;
    constexpr int BK = E::BK;
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    // the swizzle is a function of the absolute shared address: stages must start 1024-aligned
    const unsigned base = (tc::smem_u32(smem_raw) + 1023u) & ~1023u;

    const int tid = threadIdx.x;
    const unsigned mtiles = (unsigned)((M + BM - 1) / BM), ntiles = (unsigned)((N + BN - 1) / BN);
    const unsigned tiles = mtiles * ntiles * (unsigned)batch;
    const int ktiles = (int)((K + BK - 1) / BK);

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(tc::smem_u32(&full[s]), 1);                 // the producer's arrive (+ bytes)
            bar_init(tc::smem_u32(&empty[s]), EMPTY_ARRIVALS);   // every consumer warp's
        }
        bar_init_fence();
    }
    __syncthreads();

    if (tid < 128) {
        // ---- producer warpgroup: one thread issues every copy; the others only give registers back
        setmaxnreg_dec<PRODUCER_REGS>();
        if (tid == 0) {
            prefetch_map(map_a);
            prefetch_map(map_b);
            int stage = 0;
            unsigned phase = 0;
            for (unsigned tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
                unsigned z, mt, nt;
                tile_coords(tile, mtiles, ntiles, z, mt, nt);
                const int m0 = (int)(mt * BM), n0 = (int)(nt * BN);
                const int za = a_batched ? (int)z : 0, zb = b_batched ? (int)z : 0;
                for (int kt = 0; kt < ktiles; ++kt) {
                    const unsigned full_s = tc::smem_u32(&full[stage]);
                    bar_wait(tc::smem_u32(&empty[stage]), phase ^ 1);   // the consumers are done with it
                    bar_arrive_expect(full_s, STAGE_BYTES);            // whole boxes: zero fill counts too
                    const unsigned sa = base + stage * STAGE_BYTES, sb = sa + A_BYTES;
                    const int k0 = kt * BK;
                    if constexpr (TA) {      // A 't' [k][m]: BM/64 boxes of 64 m x BK k
#pragma unroll
                        for (int j = 0; j < BM / 64; ++j) tma_load(sa + j * BK * 128, map_a, m0 + 64 * j, k0, za, full_s);
                    } else {
                        tma_load(sa, map_a, k0, m0, za, full_s);
                    }
                    if constexpr (TB) {
                        tma_load(sb, map_b, k0, n0, zb, full_s);
                    } else {                 // B 'n' [k][n]: BN/64 boxes of 64 n x BK k
#pragma unroll
                        for (int j = 0; j < BN / 64; ++j) tma_load(sb + j * BK * 128, map_b, n0 + 64 * j, k0, zb, full_s);
                    }
                    if (++stage == STAGES) {
                        stage = 0;
                        phase ^= 1;
                    }
                }
            }
        }
    } else {
        // ---- consumer warpgroups: wgmma on the stages as they fill, then the epilogue
        setmaxnreg_inc<CONSUMER_REGS>();
        const int group = tid / 128 - 1;                 // rows 64*group .. of the C tile
        const int warp = (tid >> 5) & 3, lane = tid & 31;
        const int g = lane >> 2, t = lane & 3;
        int stage = 0;
        unsigned phase = 0;
        for (unsigned tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            unsigned z, mt, nt;
            tile_coords(tile, mtiles, ntiles, z, mt, nt);
            float d[BN / 2];
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
            int previous = 0;
            for (int kt = 0; kt < ktiles; ++kt) {
                bar_wait(tc::smem_u32(&full[stage]), phase);     // this stage's copies have landed
                const unsigned sa = base + stage * STAGE_BYTES, sb = sa + A_BYTES;
                wgmma::fence();                                  // the accumulators' earlier writes first
#pragma unroll
                for (int s = 0; s < BK / E::KSTEP; ++s)
                    wgmma::Op<T>::template mma<BN, TA, !TB>(d, wgmma::tile_descriptor<T, TA>(sa, 64 * group, s),
                                                          wgmma::tile_descriptor<T, !TB>(sb, 0, s));
                wgmma::commit();
                wgmma::wait<1>();         // the previous k tile's wgmmas are done: its stage is free
                if (kt > 0 && lane == 0) bar_arrive(tc::smem_u32(&empty[previous]));
                previous = stage;
                if (++stage == STAGES) {
                    stage = 0;
                    phase ^= 1;
                }
            }
            wgmma::wait<0>();
            if (lane == 0) bar_arrive(tc::smem_u32(&empty[previous]));
            wgmma::pin_registers(d);

            // Epilogue (rung 12's): this warpgroup's 64 rows of the C tile, bias added, rounded once to T
            const long long m0 = (long long)mt * BM, n0 = (long long)nt * BN;
            wgmma::store_tile<T, BN>(C + (long long)z * M * N, bias, d, M, N, m0 + 64 * group, n0, warp, g, t);
        }
    }
#endif
}

// __launch_bounds__(384, 1): the register cap at entry (168 a thread) that setmaxnreg needs to
// redistribute from; one block per SM (its shared memory is most of the SM's anyway).
#define TMA_ENTRY(LA, LB, TA, TB, T, SUF)                                                           \
    extern "C" __global__ void __launch_bounds__(tma::THREADS, 1) gemm_##LA##LB##_##SUF(            \
        const __grid_constant__ tma::TensorMap map_a, const __grid_constant__ tma::TensorMap map_b,    \
        T* __restrict__ C, const T* __restrict__ bias, long long M, long long N, long long K,       \
        long long batch, long long a_batched, long long b_batched) {                                \
        gemm_tma<T, TA, TB>(map_a, map_b, C, bias, M, N, K, batch, a_batched, b_batched);           \
    }
#define TMA_ENTRIES(T, SUF)                                                                         \
    TMA_ENTRY(n, n, false, false, T, SUF)                                                           \
    TMA_ENTRY(n, t, false, true, T, SUF)                                                            \
    TMA_ENTRY(t, n, true, false, T, SUF)                                                            \
    TMA_ENTRY(t, t, true, true, T, SUF)
TMA_ENTRIES(__nv_bfloat16, bf16)
TMA_ENTRIES(__half, f16)
TMA_ENTRY(n, t, false, true, float, f32)      // TF32: K-major A and B only
