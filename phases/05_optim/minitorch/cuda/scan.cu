// GENERATED from minitorch/cuda/scan.cu by tools/sync_phases.py (phase 05 snapshot): edit the source and re-run, not this file.
// phase: 04
// scan.cu - inclusive scans along one dimension: cumsum (out[i] = x[0] + ... + x[i]) and cumprod.
//
// The picture: the scanned dimension is a row of length L; every other index picks a row (o).
// Python describes where row o starts in the input and in the (contiguous) output with one Layout
// of two operands (`kept`), and the element step along the row with in_stride / out_stride, so any
// view is read in place.
//
// Both kernels work on TILES of TILE = THREADS x ITEMS consecutive elements of a row, ITEMS = 64
// floats or 16 doubles/int64s per thread (256 x 64 = 16384 floats, 4096 doubles; the look-back
// kernel is compiled with 512 threads, see native/cuda/scan.py), read once into registers, scanned
// there, and written once: memory sees one read and one write per element, like a copy.
// Why 64 floats per thread: a long row's tiles wait on each other in the look-back below, and
// fewer, larger tiles make that chain shorter. benchmarks/tune_scan.py timed the choices on the
// H100: 64M floats took 0.29 ms with 16 per thread, 0.24 ms with 32, 0.227 ms with 64, and
// 0.223 ms with 64 in 512-thread blocks (81% of a copy's 0.181 ms; torch.cumsum 0.26 ms).
//
// Mapping of threads to data inside a tile: warp w (of THREADS / 32) owns the 32 ITEMS elements
// starting at 32 ITEMS w, cut into chunks of 32 x VEC elements, VEC = 16 bytes / sizeof(T) (4 floats,
// 2 doubles or int64s); in chunk k, lane l holds the VEC consecutive elements
// 32 ITEMS w + 32 VEC k + VEC l + j, j < VEC. So one warp instruction moves 32 x 16 contiguous bytes (a float4 / double2 per lane: fully coalesced
// 128-bit loads and stores when the row is contiguous and 16-byte aligned; other views and the
// row's last, partial tile use the same mapping with one guarded load per element).
// The tile's scan then takes three levels, each combining "everything before me" in front:
//   1. thread: a serial scan of its VEC elements of each chunk (in registers);
//   2. warp: for each chunk, a Hillis-Steele scan of the lanes' chunk totals (5 __shfl_up_sync),
//      plus the running total of the warp's earlier chunks;
//   3. block: each warp's total goes to shared memory; after one __syncthreads every thread
//      combines the totals of the warps before its own (and all 8 give the tile's aggregate).
//
// Many rows (scan_rows): block o walks row o tile after tile, carrying the row's running total.
//
// Few long rows (scan_lookback: one row of 64M elements would leave all but one SM idle): one block
// per tile, every tile scanned in ONE pass with "decoupled look-back" (D. Merrill and M. Garland,
// "Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA technical report NVR-2016-002):
//   1. a block takes the next tile number from a counter (atomicAdd), so tiles start in order and
//      a block only ever waits for blocks that already run (no deadlock);
//   2. it loads and scans its tile (levels 1-3 above), then publishes the tile's AGGREGATE with
//      flag A: that needs nothing from any other tile, so every running tile soon publishes one;
//   3. warp 0 looks back at the 32 tiles before it at once, one lane each: it waits (with
//      __nanosleep backoff) until all 32 have published something, combines, in order, the values
//      from the LAST tile flagged P (an INCLUSIVE prefix: everything of the row up to its end) to
//      the end of the window, and stops; with no P in the window it combines all 32 aggregates and
//      looks at the 32 tiles before those. A row's first tile publishes P at once, so a walk ends;
//   4. it publishes its own inclusive prefix (flag P) so the tiles after it stop here, and every
//      thread combines the tile's exclusive prefix in front of its values and stores them.
// A flag and its value must be seen together. A float fits beside its flag in ONE 64-bit word
// written and read with single 64-bit accesses, so no fence is needed. A 64-bit value has its own
// slot (one for the aggregate, one for the inclusive prefix: a slot, once written, never changes),
// written before the flag with __threadfence() between, and read after the flag with
// __threadfence() between: whoever sees the flag sees the value. Polled words are read through
// volatile loads (not cached in L1). A wait that never ends (a bug) stops the kernel with __trap()
// instead of hanging the GPU. Which tiles a look-back combines depends on timing: float results
// may differ in the last bits between runs (integers are exact).

#include "common.cuh"

namespace sc {

// Compile-time options (benchmarks/tune_scan.py times the alternatives; the launcher's TILE and
// block size must match the values compiled in).
#ifndef SCAN_THREADS
#define SCAN_THREADS 256
#endif
#ifndef SCAN_BYTES
#define SCAN_BYTES 256                        // bytes of the row per thread: 64 floats (16 doubles/int64s)
#endif
#ifndef SCAN_MAX_SLEEP_NS
#define SCAN_MAX_SLEEP_NS 256                 // the look-back's longest wait between two polls
#endif
#ifndef SCAN_STREAMING
#define SCAN_STREAMING 0                      // 1: 16-byte loads and stores with the "streaming" cache hint
#endif
// Blocks per SM that __launch_bounds__ keeps registers for: 2 (128 registers a thread) hold what
// each thread keeps without spilling.
#ifndef SCAN_MIN_BLOCKS
#define SCAN_MIN_BLOCKS 2
#endif
template <typename T> constexpr int MIN_BLOCKS = SCAN_MIN_BLOCKS;
constexpr int THREADS = SCAN_THREADS;         // per block (8 warps; the look-back's: 16); the launcher's
constexpr int WARPS = THREADS / 32;
// elements per thread, in registers: SCAN_BYTES of 4-byte values, half as many bytes of 8-byte ones
// (32 doubles and the look-back's state do not fit in 128 registers)
template <typename T> constexpr int ITEMS = (sizeof(T) == 4 ? SCAN_BYTES : SCAN_BYTES / 2) / sizeof(T);
template <typename T> constexpr int TILE = THREADS * ITEMS<T>;         // 16384 floats a tile; the launcher's

template <typename T> struct Sum {
    __device__ static T identity() { return T(0); }
    __device__ static T op(T a, T b) { return a + b; }
};
template <typename T> struct Prod {
    __device__ static T identity() { return T(1); }
    __device__ static T op(T a, T b) { return a * b; }
};

// A tile's ITEMS values of one thread: CHUNKS chunks of VEC consecutive elements (one 16-byte vector).
template <typename T>
struct Items {
    static constexpr int VEC = 16 / sizeof(T);
    static constexpr int CHUNKS = ITEMS<T> / VEC;
    struct alignas(16) Vec { T v[VEC]; };     // moved by one 128-bit load or store
    T x[CHUNKS][VEC];
    // Element (k, j) of this thread is element offset(k, j) of its tile (the header's mapping).
    __device__ static long long offset(int k, int j) {
        return (threadIdx.x >> 5) * (32 * ITEMS<T>) + k * (32 * VEC) + (threadIdx.x & 31) * VEC + j;
    }
};

// Whole 16-byte vectors can be used: unit strides, and both tile starts 16-byte aligned.
template <typename T>
__device__ __forceinline__ bool vectors_ok(const T* src, const T* dst, long long n, long long in_stride,
                                           long long out_stride) {
    return n == TILE<T> && in_stride == 1 && out_stride == 1 && ((size_t)src & 15) == 0 && ((size_t)dst & 15) == 0;
}

// One 16-byte vector from / to global memory. With SCAN_STREAMING, through __ldcs / __stcs: every
// byte is touched once, so the hint asks the caches to evict these lines first.
template <typename V>
__device__ __forceinline__ V load16(const V* p) {
#if SCAN_STREAMING
    const int4 r = __ldcs(reinterpret_cast<const int4*>(p));
    V v;
    memcpy(&v, &r, 16);
    return v;
#else
    return *p;
#endif
}

template <typename V>
__device__ __forceinline__ void store16(V* p, const V& v) {
#if SCAN_STREAMING
    int4 r;
    memcpy(&r, &v, 16);
    __stcs(reinterpret_cast<int4*>(p), r);
#else
    *p = v;
#endif
}

// Loads the n <= TILE<T> elements of the tile starting at `src` (step in_stride); past n: identity.
template <typename T, class Op>
__device__ __forceinline__ void load_tile(Items<T>& it, const T* __restrict__ src, long long n, long long in_stride,
                                          bool vec) {
    using I = Items<T>;
#pragma unroll
    for (int k = 0; k < I::CHUNKS; ++k) {
        if (vec) {
            const typename I::Vec v = load16((const typename I::Vec*)(src + I::offset(k, 0)));
#pragma unroll
            for (int j = 0; j < I::VEC; ++j) it.x[k][j] = v.v[j];
        } else {
#pragma unroll
            for (int j = 0; j < I::VEC; ++j) {
                const long long i = I::offset(k, j);
                it.x[k][j] = i < n ? src[i * in_stride] : Op::identity();
            }
        }
    }
}

// Stores the first n elements of the tile at `dst` (step out_stride), the mapping of load_tile.
template <typename T>
__device__ __forceinline__ void store_tile(const Items<T>& it, T* __restrict__ dst, long long n, long long out_stride,
                                           bool vec) {
    using I = Items<T>;
#pragma unroll
    for (int k = 0; k < I::CHUNKS; ++k) {
        if (vec) {
            typename I::Vec v;
#pragma unroll
            for (int j = 0; j < I::VEC; ++j) v.v[j] = it.x[k][j];
            store16((typename I::Vec*)(dst + I::offset(k, 0)), v);
        } else {
#pragma unroll
            for (int j = 0; j < I::VEC; ++j) {
                const long long i = I::offset(k, j);
                if (i < n) dst[i * out_stride] = it.x[k][j];
            }
        }
    }
}

// Scans the tile in registers (levels 1-3 of the header) WITHOUT anything before the tile: after
// it, it.x holds inclusive scans within each chunk and before[k] everything of the tile before
// chunk k of this thread; the tile's aggregate is returned to every thread. warp_totals: WARPS
// values of shared memory, not read or written by another call until a __syncthreads() has passed.
// Every thread of the block must call it (it holds a __syncthreads()).
template <typename T, class Op>
__device__ __forceinline__ T scan_tile(Items<T>& it, T (&before)[Items<T>::CHUNKS], T* warp_totals) {
    using I = Items<T>;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T warp_total = Op::identity();               // of the warp's chunks so far
#pragma unroll
    for (int k = 0; k < I::CHUNKS; ++k) {
#pragma unroll
        for (int j = 1; j < I::VEC; ++j) it.x[k][j] = Op::op(it.x[k][j - 1], it.x[k][j]);
        T s = it.x[k][I::VEC - 1];               // this thread's chunk total
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const T y = __shfl_up_sync(FULL_MASK, s, d);
            if (lane >= d) s = Op::op(y, s);
        }                                        // s: lanes 0..lane of chunk k
        const T lanes_before = __shfl_up_sync(FULL_MASK, s, 1);
        before[k] = lane == 0 ? warp_total : Op::op(warp_total, lanes_before);
        warp_total = Op::op(warp_total, __shfl_sync(FULL_MASK, s, 31));
    }
    if (lane == 0) warp_totals[warp] = warp_total;
    __syncthreads();                             // every warp's total is in shared memory
    T warps_before = Op::identity(), aggregate = Op::identity();
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {            // the same address in every lane: a broadcast
        if (w == warp) warps_before = aggregate;
        aggregate = Op::op(aggregate, warp_totals[w]);
    }
#pragma unroll
    for (int k = 0; k < I::CHUNKS; ++k) before[k] = Op::op(warps_before, before[k]);
    return aggregate;
}

// it.x becomes the final scan: `prefix` (everything of the row before the tile), then before[k].
template <typename T, class Op>
__device__ __forceinline__ void add_prefix(Items<T>& it, const T (&before)[Items<T>::CHUNKS], T prefix) {
    using I = Items<T>;
#pragma unroll
    for (int k = 0; k < I::CHUNKS; ++k) {
        const T p = Op::op(prefix, before[k]);
#pragma unroll
        for (int j = 0; j < I::VEC; ++j) it.x[k][j] = Op::op(p, it.x[k][j]);
    }
}

// Block o scans row o whole, tile after tile. Two sets of warp totals, used alternately: a tile
// writes its set only after the previous tile's __syncthreads, which every thread passes only
// after reading the set of the tile before that (the same set).
template <typename T, class Op>
__device__ __forceinline__ void scan_rows(const T* __restrict__ a, T* __restrict__ out, long long L, const Layout& kept,
                                          long long in_stride, long long out_stride) {
    __shared__ T warp_totals[2][WARPS];
    long long base[2];
    layout_offsets<2>(kept, (long long)blockIdx.x, base);
    const T* row = a + base[0];
    T* dst = out + base[1];
    T carry = Op::identity();                    // the row before this tile
    constexpr long long tile = TILE<T>;
    for (long long start = 0, s = 0; start < L; start += tile, ++s) {   // the same trip count in every thread
        const long long n = L - start < tile ? L - start : tile;
        const T* src = row + start * in_stride;
        T* to = dst + start * out_stride;
        const bool vec = vectors_ok(src, to, n, in_stride, out_stride);
        Items<T> it;
        T before[Items<T>::CHUNKS];
        load_tile<T, Op>(it, src, n, in_stride, vec);
        const T aggregate = scan_tile<T, Op>(it, before, warp_totals[s & 1]);
        add_prefix<T, Op>(it, before, carry);
        store_tile(it, to, n, out_stride, vec);
        carry = Op::op(carry, aggregate);
    }
}

// ---- decoupled look-back: each tile's published status ---------------------------------------------------
constexpr unsigned EMPTY = 0, AGGREGATE = 1, INCLUSIVE = 2;    // flags; EMPTY: nothing published yet
constexpr long long MAX_POLLS = 1ll << 24;                      // seconds of waiting: a bug, not a slow tile

// Tile t's status. A 4-byte T (float, the only one here): state[t] = flag << 32 | the value's bits,
// one 64-bit word. An 8-byte T: state[t] = flag, values[2 t + flag - 1] = the value (aggregate,
// then inclusive prefix).
template <typename T>
__device__ __forceinline__ void publish(unsigned long long* state, T* values, long long t, unsigned flag, T v) {
    if constexpr (sizeof(T) == 4) {
        const unsigned long long word = (unsigned long long)flag << 32 | __float_as_uint(v);
        *(volatile unsigned long long*)(state + t) = word;
    } else {
        *(volatile T*)(values + 2 * t + flag - 1) = v;
        __threadfence();                         // the value is visible before the flag
        *(volatile unsigned long long*)(state + t) = flag;
    }
}

// Reads tile t's flag (EMPTY while nothing is published) and, with a 4-byte T, its value.
template <typename T>
__device__ __forceinline__ unsigned read_status(const unsigned long long* state, long long t, T& v) {
    const unsigned long long word = *(const volatile unsigned long long*)(state + t);
    if constexpr (sizeof(T) == 4) {
        v = __uint_as_float((unsigned)word);
        return (unsigned)(word >> 32);
    }
    return (unsigned)word;
}

// Warp 0: everything of the row before tile t (its first tile: `first`), once every tile before
// has published enough; the tiles t - 32 + lane of a window are read at once, one per lane.
template <typename T, class Op>
__device__ __forceinline__ T look_back(const unsigned long long* state, const T* values, long long t, long long first) {
    const int lane = threadIdx.x & 31;
    T prefix = Op::identity();                   // of the tiles after the current window
    for (long long top = t;; top -= 32) {        // the window is tiles [top - 32, top)
        const long long p = top - 32 + lane;
        T v = Op::identity();
        unsigned flag = p < first ? INCLUSIVE : read_status(state, p, v);   // before the row: nothing
        unsigned sleep_ns = 8;
        for (long long polls = 0; __any_sync(FULL_MASK, flag == EMPTY); ++polls) {
            if (polls > MAX_POLLS) __trap();     // a tile before us never published: a bug
            __nanosleep(sleep_ns);               // leave the memory system to the working tiles
            sleep_ns = sleep_ns < SCAN_MAX_SLEEP_NS ? 2 * sleep_ns : sleep_ns;
            if (flag == EMPTY) flag = read_status(state, p, v);
        }
        if constexpr (sizeof(T) == 8) {
            __threadfence();                     // the flag was seen: now its value is visible
            if (p >= first) v = *(const volatile T*)(values + 2 * p + flag - 1);
        }
        const unsigned inclusive = __ballot_sync(FULL_MASK, flag == INCLUSIVE);
        const int last_p = inclusive ? 31 - __clz(inclusive) : 0;   // the nearest tile flagged P
        if (lane < last_p) v = Op::identity();   // already inside that tile's inclusive prefix
        v = warp_reduce(v, [](T x, T y) { return Op::op(x, y); });  // in order, valid in lane 0
        prefix = Op::op(__shfl_sync(FULL_MASK, v, 0), prefix);
        if (inclusive) return prefix;
    }
}

// Tile number `ticket` (in start order) = tile s of row o, over the n_rows x tiles tiles.
// state[0] is the ticket counter, state[1 + t] tile t's status (all 0 before the launch); values
// holds 2 slots per tile for an 8-byte T (unused for a 4-byte T).
template <typename T, class Op>
__device__ __forceinline__ void scan_lookback(const T* __restrict__ a, T* __restrict__ out, long long L,
                                              long long tiles, const Layout& kept, long long in_stride,
                                              long long out_stride, unsigned long long* state, T* values) {
    __shared__ long long ticket_s;
    __shared__ T warp_totals[WARPS];
    __shared__ T prefix_s;
    if (threadIdx.x == 0) ticket_s = (long long)atomicAdd(state, 1ull);
    __syncthreads();
    const long long t = ticket_s, o = t / tiles, s = t - o * tiles;
    unsigned long long* status = state + 1;
    long long base[2];
    layout_offsets<2>(kept, o, base);
    constexpr long long tile = TILE<T>;
    const long long start = s * tile;
    const long long n = L - start < tile ? L - start : tile;
    const T* src = a + base[0] + start * in_stride;
    T* dst = out + base[1] + start * out_stride;
    const bool vec = vectors_ok(src, dst, n, in_stride, out_stride);
    Items<T> it;
    T before[Items<T>::CHUNKS];
    load_tile<T, Op>(it, src, n, in_stride, vec);
    const T aggregate = scan_tile<T, Op>(it, before, warp_totals);
    if (threadIdx.x < 32) {                      // warp 0 (s is the same in the whole block)
        T prefix = Op::identity();
        if (s > 0) {
            if (threadIdx.x == 0) publish(status, values, t, AGGREGATE, aggregate);
            prefix = look_back<T, Op>(status, values, t, t - s);
        }
        if (threadIdx.x == 0) {
            publish(status, values, t, INCLUSIVE, Op::op(prefix, aggregate));
            prefix_s = prefix;
        }
    }
    __syncthreads();                             // prefix_s is written
    add_prefix<T, Op>(it, before, prefix_s);
    store_tile(it, dst, n, out_stride, vec);
}

}  // namespace sc

#define SCAN(NAME, OP, T, SUF) MT_IF_##SUF(                                                          \
    extern "C" __global__ void __launch_bounds__(sc::THREADS, sc::MIN_BLOCKS<T>) scan_rows_##NAME##_##SUF( \
        const T* __restrict__ a, T* __restrict__ out, long long L, const Layout kept, long long in_stride, \
        long long out_stride) {                                                                     \
        sc::scan_rows<T, sc::OP<T>>(a, out, L, kept, in_stride, out_stride);                        \
    }                                                                                               \
    extern "C" __global__ void __launch_bounds__(sc::THREADS, sc::MIN_BLOCKS<T>) scan_lookback_##NAME##_##SUF(            \
        const T* __restrict__ a, T* __restrict__ out, long long L, long long tiles, const Layout kept,  \
        long long in_stride, long long out_stride, unsigned long long* state, T* values) {          \
        sc::scan_lookback<T, sc::OP<T>>(a, out, L, tiles, kept, in_stride, out_stride, state, values); \
    })

SCAN(cumsum, Sum, float, f32)
SCAN(cumsum, Sum, double, f64)
SCAN(cumsum, Sum, long long, i64)
SCAN(cumprod, Prod, float, f32)
SCAN(cumprod, Prod, double, f64)
SCAN(cumprod, Prod, long long, i64)
