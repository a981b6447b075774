// GENERATED from minitorch/cuda/gemm/tma.cuh by tools/sync_phases.py (phase 06 snapshot): edit the source and re-run, not this file.
// phase: 05
// tma.cuh - Hopper's TMA copy engine and the mbarriers its copies complete on, as the
// warp-specialized kernels use them: rung 13 of the GEMM ladder (13_wgmma_tma.cu, whose opening
// comment explains the producer / consumer scheme) and rung 3 of the attention ladder
// (attention/03_flash_wgmma.cu). sm_90a.
//
// mbarrier (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier"): a
// 64-bit object in shared memory that counts arrivals, and for asynchronous copies a transaction
// count of bytes; its current phase completes when both reach zero, and the next phase starts.
// Waiting is on a phase's parity (0, 1, 0, ...), so a waiter names the phase it needs by k % 2.
// TMA (cp.async.bulk.tensor): one thread asks the copy engine for a whole box of a tensor, described
// by a tensor map made on the host (cuTensorMapEncodeTiled); the engine computes the addresses,
// zero-fills what lies outside the tensor and signals the bytes it wrote on an mbarrier.
#pragma once

namespace tma {

// The driver's CUtensorMap (cuda.h): 128 opaque bytes, 64-byte aligned. Defined here because
// NVRTC compiles without the driver API header.
struct alignas(64) TensorMap {
    unsigned long long opaque[16];
};

// ---- mbarriers ------------------------------------------------------------------------------------
__device__ __forceinline__ void bar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialized barriers visible to the copy engine (the async proxy) and to other threads.
__device__ __forceinline__ void bar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` more to come from copies (the transaction count).
__device__ __forceinline__ void bar_arrive_expect(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spin until the phase of parity `parity` has completed (the labels are local to the { } scope).
__device__ __forceinline__ void bar_wait(unsigned bar, unsigned parity) {
    asm volatile("{\n.reg .pred ready;\nWAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 ready, [%0], %1;\n"
                 "@!ready bra WAIT;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}

// ---- the copy engine ----------------------------------------------------------------------------
__device__ __forceinline__ void prefetch_map(const TensorMap& map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&map)) : "memory");
}
// Box at coordinates (c0 innermost, c1, c2) of `map` into shared address dst; completes on `bar`.
__device__ __forceinline__ void tma_load(unsigned dst, const TensorMap& map, int c0, int c1, int c2, unsigned bar) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];\n"
                 ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
                 : "memory");
}

// ---- warp specialization --------------------------------------------------------------------------
// setmaxnreg: every thread of the warpgroup lowers (dec) or raises (inc) its register cap to REGS,
// so that the producer warpgroup, which only issues copies, hands its registers to the consumers.
// The kernel's __launch_bounds__ sets the cap at entry that they are moved from.
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

}  // namespace tma
