// phase: 05
// wgmma.cuh - Hopper's warpgroup tensor-core instruction (wgmma.mma_async, sm_90a) as rung 13
// (13_wgmma_tma.cu) uses it: the 64-bit shared-memory matrix descriptors of 128-byte-swizzled
// tiles, the fences and waits around the asynchronous mma, one m64nNk16 (k8 for TF32) mma per
// element type with float32 accumulators, and the epilogue that stores them (store_tile). The same
// instructions, descriptors and layouts as rung 12 (12_wgmma.cu), whose opening comment explains
// them; written as a header here so that the wgmma's N is a template parameter and not the file's
// BN macro.
//
// Descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address >> 4, 16-29 leading
// byte offset >> 4 (LBO), 32-45 stride byte offset >> 4 (SBO), 49-51 base offset (0: tiles are
// 1024-aligned), 62-63 swizzle mode (1 = 128-byte swizzle). A tile is a run of 8-row x 128-byte
// atoms in which chunk q of row r sits at chunk q ^ (r % 8): what the TMA copy engine writes with
// CU_TENSOR_MAP_SWIZZLE_128B, and what rung 12's loader writes by hand.
//   K-major (rows m or n, 128 bytes of k each): SBO = 1024 bytes from 8 rows to the next 8, LBO
//     unused; a k16 step (32 bytes of k) starts 32 bytes along the row.
//   MN-major (rows k, blocks of 64 m or n of BK rows each): LBO = one block's bytes (BK x 128),
//     SBO = 1024 bytes from 8 k to the next 8; a k16 step starts 16 rows (2048 bytes) further.
// Accumulators (PTX ISA, "wgmma register fragment, matrix D"): lane 4g + t of warp w of the
// warpgroup holds, for each n8 block j, d[4j + 2h + e] = D[16w + g + 8h][8j + 2t + e], h, e in {0, 1}.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WGMMA_OK 1
#else
#define WGMMA_OK 0
#endif

namespace wgmma {

// Per element type: ATOM elements fill a 128-byte row (a tile's k depth BK), VEC a 16-byte
// chunk, KSTEP is the k of one wgmma (32 bytes of k).
template <typename T>
struct Elem {
    static constexpr int ATOM = 128 / (int)sizeof(T), VEC = 16 / (int)sizeof(T), KSTEP = 32 / (int)sizeof(T);
    static constexpr int BK = ATOM;
};

__device__ __forceinline__ unsigned long long descriptor(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16)
           | ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}
// Descriptor of the 64-row (A) or N-row (B) operand starting at row/column `first` (a multiple
// of 64) of a tile at shared byte address `tile`, k step s (KSTEP elements each).
template <typename T, bool MN_MAJOR>
__device__ __forceinline__ unsigned long long tile_descriptor(unsigned tile, int first, int s) {
    if constexpr (MN_MAJOR)
        return descriptor(tile + (first / 64) * (Elem<T>::BK * 128) + s * Elem<T>::KSTEP * 128,
                          Elem<T>::BK * 128, 1024);
    else
        return descriptor(tile + first * 128 + s * 32, 16, 1024);
}

__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
// An empty asm that "reads and writes" every accumulator: ordinary code that uses them (the
// epilogue) cannot be moved above the wgmma.wait_group before it, which mentions no register.
template <int COUNT>
__device__ __forceinline__ void pin_registers(float (&d)[COUNT]) {
#pragma unroll
    for (int i = 0; i < COUNT; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The accumulator operands of the asm statements: d[0] .. d[N/2 - 1], each read and written.
#define WGH_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                  "+f"(d[i + 6]), "+f"(d[i + 7])
#define WGH_D64(i) WGH_D8(i), WGH_D8(i + 8), WGH_D8(i + 16), WGH_D8(i + 24), WGH_D8(i + 32), WGH_D8(i + 40), \
                   WGH_D8(i + 48), WGH_D8(i + 56)
#define WGH_D128 WGH_D64(0), WGH_D64(64)
#define WGH_REGS_128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, " \
    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, " \
    "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, " \
    "%61, %62, %63}"
#define WGH_REGS_256 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, " \
    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, " \
    "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, " \
    "%61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, " \
    "%82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, " \
    "%102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, " \
    "%119, %120, %121, %122, %123, %124, %125, %126, %127}"
// One wgmma: D += A * B. After the accumulators: the two descriptors, scale-d (a predicate set
// from 1: always accumulate, the registers start at 0), for 16-bit inputs the transpose bits
// (1 = MN-major). imm-scale-a/b = 1: no negation.
#define WGH_16(N, TYPE, D_OPS, NA, NB, NS, NTA, NTB)                                                 \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #NS ", 0;\n"                                   \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " " WGH_REGS_##N     \
                 ", %" #NA ", %" #NB ", p, 1, 1, %" #NTA ", %" #NTB ";\n}\n"                          \
                 : D_OPS : "l"(da), "l"(db), "r"(1), "n"(TRANS_A), "n"(TRANS_B))
#define WGH_TF32(N, D_OPS, NA, NB, NS)                                                               \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #NS ", 0;\n"                                   \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 " WGH_REGS_##N              \
                 ", %" #NA ", %" #NB ", p, 1, 1;\n}\n"                                                \
                 : D_OPS : "l"(da), "l"(db), "r"(1))

// Per input type: mma<N, TRANS_A, TRANS_B>(d, da, db) (N = 128 or 256), and float <-> T for the epilogue.
template <typename T> struct Op;
template <> struct Op<__nv_bfloat16> {
    using T2 = __nv_bfloat162;
    static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
    static __device__ __forceinline__ __nv_bfloat16 round(float x) { return __float2bfloat16_rn(x); }
    static __device__ __forceinline__ T2 pack(float lo, float hi) { return __floats2bfloat162_rn(lo, hi); }
    template <int N, int TRANS_A, int TRANS_B>
    static __device__ __forceinline__ void mma(float (&d)[N / 2], unsigned long long da, unsigned long long db) {
        static_assert(N == 128 || N == 256, "N 128 or 256");
#if WGMMA_OK
        if constexpr (N == 128) WGH_16(128, "bf16", WGH_D64(0), 64, 65, 66, 67, 68);
        else                    WGH_16(256, "bf16", WGH_D128, 128, 129, 130, 131, 132);
#endif
    }
};
template <> struct Op<__half> {
    using T2 = __half2;
    static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
    static __device__ __forceinline__ __half round(float x) { return __float2half_rn(x); }
    static __device__ __forceinline__ T2 pack(float lo, float hi) { return __floats2half2_rn(lo, hi); }
    template <int N, int TRANS_A, int TRANS_B>
    static __device__ __forceinline__ void mma(float (&d)[N / 2], unsigned long long da, unsigned long long db) {
        static_assert(N == 128 || N == 256, "N 128 or 256");
#if WGMMA_OK
        if constexpr (N == 128) WGH_16(128, "f16", WGH_D64(0), 64, 65, 66, 67, 68);
        else                    WGH_16(256, "f16", WGH_D128, 128, 129, 130, 131, 132);
#endif
    }
};
// float32 inputs: the tensor cores read them as TF32 (the low 13 mantissa bits ignored, i.e. truncated).
template <> struct Op<float> {
    using T2 = float2;
    static __device__ __forceinline__ float to_float(float x) { return x; }
    static __device__ __forceinline__ float round(float x) { return x; }
    static __device__ __forceinline__ T2 pack(float lo, float hi) { return make_float2(lo, hi); }
    template <int N, int TRANS_A, int TRANS_B>
    static __device__ __forceinline__ void mma(float (&d)[N / 2], unsigned long long da, unsigned long long db) {
        static_assert(N == 128 || N == 256, "N 128 or 256");
        static_assert(!TRANS_A && !TRANS_B, "TF32 wgmma reads K-major operands only");
#if WGMMA_OK
        if constexpr (N == 128) WGH_TF32(128, WGH_D64(0), 64, 65, 66);
        else                    WGH_TF32(256, WGH_D128, 128, 129, 130);
#endif
    }
};

// The epilogue of rungs 12 and 13: a warpgroup's accumulators d for rows row0 .. row0 + 63 and columns
// col0 .. col0 + TILE_N - 1 of C (lane 4g + t of warp w holds d[4j + 2h + e] = C[row0 + 16w + g + 8h][col0
// + 8j + 2t + e]) into c [M][N], bias [N] (null: none) added in float32, rounded once to T; rows >= M
// and columns >= N are skipped; two columns are stored as one access when N is even (aligned pairs).
template <typename T, int TILE_N>
__device__ __forceinline__ void store_tile(T* c, const T* bias, const float (&d)[TILE_N / 2], long long M, long long N,
                                           long long row0, long long col0, int warp, int g, int t) {
    const bool pair = (N & 1) == 0;
#pragma unroll
    for (int j = 0; j < TILE_N / 8; ++j) {
        const long long col = col0 + 8 * j + 2 * t;
        float b0 = 0.f, b1 = 0.f;
        if (bias) {
            if (col < N) b0 = Op<T>::to_float(bias[col]);
            if (col + 1 < N) b1 = Op<T>::to_float(bias[col + 1]);
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const long long row = row0 + 16 * warp + g + 8 * h;
            if (row >= M) continue;
            const float v0 = d[4 * j + 2 * h] + b0, v1 = d[4 * j + 2 * h + 1] + b1;
            T* p = c + row * N + col;
            if (pair && col + 1 < N) {
                *reinterpret_cast<typename Op<T>::T2*>(p) = Op<T>::pack(v0, v1);
            } else {
                if (col < N) p[0] = Op<T>::round(v0);
                if (col + 1 < N) p[1] = Op<T>::round(v1);
            }
        }
    }
}

// >>> phase 07
// What FlashAttention's Hopper rung (attention/03_flash_wgmma.cu) adds, for 16-bit inputs:
//  - N = 64 (the wgmma's N is the K/V tile's keys or the head dimension there), and a run-time
//    scale-d: accumulate = false makes D = A * B, so a fresh accumulator needs no zeroing first;
//  - the form whose A operand comes from REGISTERS (`wgmma.mma_async ... d, {a0, a1, a2, a3},
//    b-desc, ...`; B from shared memory as before, only B has a transpose bit). PTX ISA, "Register
//    Fragments" of wgmma, matrix A for .bf16/.f16: warp w of the warpgroup holds rows 16w .. 16w + 15
//    of the 64 x 16 A tile in mma.m16n8k16's A layout: lane 4g + t has a0 = A[16w + g][2t .. 2t + 1],
//    a1 = A[16w + g + 8][2t .. 2t + 1], a2 = A[16w + g][2t + 8 .. 2t + 9], a3 = A[16w + g + 8][2t + 8 ..
//    2t + 9], two elements per 32-bit register, the lower column in the low half.
#define WGH_D16(i) WGH_D8(i), WGH_D8(i + 8)
#define WGH_D32(i) WGH_D16(i), WGH_D16(i + 16)
#define WGH_REGS_64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, " \
    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
// A and B from shared memory (descriptors), scale-d from `acc` (0: overwrite D).
#define WGH_SS(N, TYPE, D_OPS, NA, NB, NS, NTA, NTB)                                                 \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #NS ", 0;\n"                                   \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " " WGH_REGS_##N     \
                 ", %" #NA ", %" #NB ", p, 1, 1, %" #NTA ", %" #NTB ";\n}\n"                          \
                 : D_OPS : "l"(da), "l"(db), "r"(acc), "n"(TRANS_A), "n"(TRANS_B))
// A from the registers a[0..3] (operands A0..A3), B from shared memory, always accumulating.
#define WGH_RS(N, TYPE, D_OPS, A0, A1, A2, A3, NB, NS, NTB)                                          \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #NS ", 0;\n"                                   \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " " WGH_REGS_##N     \
                 ", {%" #A0 ", %" #A1 ", %" #A2 ", %" #A3 "}, %" #NB ", p, 1, 1, %" #NTB ";\n}\n"    \
                 : D_OPS : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1), "n"(TRANS_B))

template <typename T> struct IsBf16 { static constexpr bool value = false; };
template <> struct IsBf16<__nv_bfloat16> { static constexpr bool value = true; };

// D (64 x N, N = 64 or 128) = A B + (acc ? D : 0), A and B by descriptors (T = bf16 or f16).
template <typename T, int N, int TRANS_A, int TRANS_B>
__device__ __forceinline__ void mma_ss(float (&d)[N / 2], unsigned long long da, unsigned long long db, int acc) {
    static_assert(N == 64 || N == 128, "N 64 or 128");
#if WGMMA_OK
    if constexpr (IsBf16<T>::value) {
        if constexpr (N == 64) WGH_SS(64, "bf16", WGH_D32(0), 32, 33, 34, 35, 36);
        else                   WGH_SS(128, "bf16", WGH_D64(0), 64, 65, 66, 67, 68);
    } else {
        if constexpr (N == 64) WGH_SS(64, "f16", WGH_D32(0), 32, 33, 34, 35, 36);
        else                   WGH_SS(128, "f16", WGH_D64(0), 64, 65, 66, 67, 68);
    }
#endif
}
// D (64 x N) += A B, A = the 64 x 16 tile in registers a (the layout above), B by descriptor.
template <typename T, int N, int TRANS_B>
__device__ __forceinline__ void mma_rs(float (&d)[N / 2], const unsigned (&a)[4], unsigned long long db) {
    static_assert(N == 64 || N == 128, "N 64 or 128");
#if WGMMA_OK
    if constexpr (IsBf16<T>::value) {
        if constexpr (N == 64) WGH_RS(64, "bf16", WGH_D32(0), 32, 33, 34, 35, 36, 37, 38);
        else                   WGH_RS(128, "bf16", WGH_D64(0), 64, 65, 66, 67, 68, 69, 70);
    } else {
        if constexpr (N == 64) WGH_RS(64, "f16", WGH_D32(0), 32, 33, 34, 35, 36, 37, 38);
        else                   WGH_RS(128, "f16", WGH_D64(0), 64, 65, 66, 67, 68, 69, 70);
    }
#endif
}
// <<< phase 07
}  // namespace wgmma
