// GENERATED from minitorch/cuda/gemm/mma.cuh by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
// phase: 05
// mma.cuh - what the tensor-core rungs (10_tf32_mma.cu, 11_half_mma.cu) share: cp.async copies
// from global into shared memory (with zero-fill at the edges), and one loader that fills a
// block's tile of A or B, whatever the layout letter, in 16-byte pieces.
//
// A tile in shared memory is ROWS x COLS elements stored row by row, where "row" means the
// operand's strided dimension and "col" its unit-stride one, so a row of the tile is a piece of a
// row of memory and can be copied in 16-byte chunks:
//     A 'n' (M x K, k unit-stride): rows = m, cols = k  ("K-major": k runs along smem rows)
//     A 't' (K x M, m unit-stride): rows = k, cols = m  ("M-major")
//     B 'n' (K x N, n unit-stride): rows = k, cols = n  ("N-major")
//     B 't' (N x K, k unit-stride): rows = n, cols = k  ("K-major")
// Where a chunk goes in shared memory (padding, swizzle) is the rung's choice: the SMEM template
// argument of load_tile maps (row, chunk) to an element offset.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "gemm.cuh"

namespace tc {

// A generic pointer into shared memory as the 32-bit shared-window address PTX wants.
__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// cp.async: the copy runs in the background; the thread goes on. `src_bytes` < size copies only
// that many bytes and writes zeros to the rest ("zero-fill"): 0 copies nothing (src is then not
// read, but must still be a valid address). .cg (16 bytes only) skips L1: a tile is read once.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async4(unsigned dst, const void* src, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
// Close the group of copies issued since the last commit (one group per pipeline stage).
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Wait until at most N of this thread's groups are still in flight (the newest ones). Other
// threads' copies become visible only after a __syncthreads() that follows the wait.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// 16-byte loads need the operand's start and every row start 16-byte aligned.
template <typename T>
__device__ __forceinline__ bool rows_aligned16(const T* p, long long ld) {
    return ((reinterpret_cast<unsigned long long>(p) | static_cast<unsigned long long>(ld * (long long)sizeof(T))) & 15) == 0;
}

// Copy the tile whose element (r, c) is g[(r0 + r) * ld + c0 + c] (r < ROWS, c < COLS) into
// shared memory at `tile`, chunk (r, q) (elements c = q*VEC .. q*VEC+VEC-1) at tile + SMEM::at(r, q).
// Elements outside the matrix (row >= R or col >= CX) are written as zeros, so the mma adds
// nothing for them: a K that is not a multiple of the tile, and M, N edge tiles, need no other care.
// Thread tid copies chunk q = tid % CPR of rows tid / CPR, + RSTEP, + 2*RSTEP...: consecutive
// threads take consecutive chunks of a row (coalesced global reads), and all of a thread's chunks
// share one column, so one pointer and one row step address them (few registers).
// `vec`: the 16-byte path may be used (rows_aligned16); otherwise each element is copied alone
// (4-byte cp.async for 4-byte types; a plain load and store for 2-byte types, which cp.async
// cannot copy alone - the __syncthreads() before the tile is read makes those visible too).
template <typename T, int ROWS, int COLS, int THREADS, class SMEM>
__device__ __forceinline__ void load_tile(T* tile, const T* __restrict__ g, long long ld, long long r0, long long R,
                                          long long c0, long long CX, bool vec, int tid) {
    constexpr int VEC = 16 / (int)sizeof(T);
    constexpr int CPR = COLS / VEC;                       // chunks per row
    constexpr int RSTEP = THREADS / CPR;                  // rows between a thread's chunks
    static_assert(COLS % VEC == 0 && THREADS % CPR == 0 && ROWS % RSTEP == 0, "tile does not split evenly");
    const int r = tid / CPR, q = tid % CPR;
    const long long gc = c0 + (long long)q * VEC;         // first column of this thread's chunks
    const long long cols_left = CX - gc;                  // elements of the chunk inside the matrix
    const long long rows_left = R - r0 - r;               // chunk i is inside iff i * RSTEP < rows_left
    const T* p = g + (r0 + r) * ld + gc;                  // chunk 0; chunk i at p + i * RSTEP * ld
    const int bytes = cols_left <= 0 ? 0 : (cols_left >= VEC ? 16 : (int)cols_left * (int)sizeof(T));
#pragma unroll
    for (int i = 0; i < ROWS / RSTEP; ++i) {
        T* dst = tile + SMEM::at(r + i * RSTEP, q);
        const bool row_ok = i * RSTEP < rows_left;
        if (vec) {
            const int n = row_ok ? bytes : 0;
            cp_async16(smem_u32(dst), n ? p + i * RSTEP * ld : g, n);
        } else {
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
                const bool ok = row_ok && e < cols_left;
                if constexpr (sizeof(T) == 4) {
                    cp_async4(smem_u32(dst + e), ok ? p + i * RSTEP * ld + e : g, ok ? 4 : 0);
                } else {
                    static_assert(sizeof(T) == 2, "2- or 4-byte elements");
                    const unsigned short* ps = reinterpret_cast<const unsigned short*>(p + i * RSTEP * ld);
                    reinterpret_cast<unsigned short*>(dst)[e] = ok ? ps[e] : (unsigned short)0;
                }
            }
        }
    }
}

// 16-bit tensor-core math (11_half_mma.cu's rung, FlashAttention's 02_flash_mma.cu): Half<T> gives
// T's float conversions and the warp's m16n8k16 mma (float32 accumulators), ldmatrix_x4 the fragment loads.
template <typename T> struct Half;
template <> struct Half<__nv_bfloat16> {
    using T2 = __nv_bfloat162;
    static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
    static __device__ __forceinline__ T2 pack(float lo, float hi) { return __floats2bfloat162_rn(lo, hi); }
    static __device__ __forceinline__ __nv_bfloat16 round(float x) { return __float2bfloat16_rn(x); }
    static __device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
};
template <> struct Half<__half> {
    using T2 = __half2;
    static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
    static __device__ __forceinline__ T2 pack(float lo, float hi) { return __floats2half2_rn(lo, hi); }
    static __device__ __forceinline__ __half round(float x) { return __float2half_rn(x); }
    static __device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
};

// Four 8x8 matrices of 16-bit elements; this lane gives the shared address of one row.
template <bool TRANS>
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    if constexpr (TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// Block rasterization ("grouped" launch order, GROUP_M > 0): blocks are numbered row by row over
// the grid (x = n-tile, y = m-tile) and the hardware launches them roughly in that order, so a
// wave of blocks walks a whole row of C tiles: it reads one strip of A but ALL of B, and at large
// sizes B falls out of L2 before the next row of tiles reads it again. Renumbering so that each
// run of GROUP_M * gridDim.x consecutive blocks covers GROUP_M m-tiles by all n-tiles, walking down
// m first, makes a wave cover a squarer patch of C: fewer distinct A and B tiles, more L2 hits.
// The map is a bijection of the gridDim.x x gridDim.y grid (the last group may be shorter), so
// every tile is still computed exactly once. GROUP_M = 0 keeps the plain order.
template <int GROUP>
__device__ __forceinline__ void raster(long long& bn, long long& bm) {
    bn = blockIdx.x;
    bm = blockIdx.y;
    if constexpr (GROUP > 0) {
        // 32-bit arithmetic (64-bit division costs registers the mma loop needs); a grid of 2^32
        // blocks or more keeps the plain order, which is just as correct
        const unsigned gx = gridDim.x, gy = gridDim.y;
        if ((unsigned long long)gx * gy < (1ull << 32)) {
            const unsigned id = blockIdx.y * gx + blockIdx.x;    // launch order
            const unsigned per_group = GROUP * gx;               // <= gx * gy once a group is full
            const unsigned first = (id / per_group) * GROUP;
            const unsigned rows = gy - first < GROUP ? gy - first : GROUP;   // m-tiles in this group
            const unsigned r = id - (id / per_group) * per_group;            // < rows * gx
            bm = first + r % rows;
            bn = r / rows;
        }
    }
}

}  // namespace tc
