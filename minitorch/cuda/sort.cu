// phase: 04
// sort.cu - sorting rows (sort, argsort, and through them topk, kthvalue, median, mode, unique).
//
// Python hands over contiguous rows [n_rows, L] (the sorted dimension moved last and copied when
// it is not already) and gets back the sorted values and, for each, its position in the original
// row (int64).
//
// The algorithm is Batcher's bitonic sort (K. E. Batcher, "Sorting networks and their
// applications", 1968): a row padded to P = 2^p elements is sorted by p(p+1)/2 rounds of
// compare-exchange, each round the same for every element, so one thread per pair and no data-
// dependent control flow: a good fit for a GPU. Round (k, j), for k = 2, 4, ..., P and
// j = k/2, k/4, ..., 1: element i (with bit j of i clear) is compared with element i + j and the
// two swapped if out of order, "in order" meaning ascending where bit k of i is clear and
// descending where it is set. After the rounds of k, every run of k elements is sorted (in
// alternating directions: two neighbouring runs form a "bitonic" sequence that the next k merges).
//
// Mapping of threads to data (mode: see its section below):
//   sort_tile_*    one BLOCK per tile of TILE consecutive elements of one row (grid: rows x
//                  tiles), held in shared memory (TILE = 4096 for keys of 1 or 4 bytes, 2048 for
//                  8: 48 KB with the 8-byte positions); its threads run every round whose pairs
//                  lie inside the tile (j < TILE), with __syncthreads() between rounds. A row of
//                  at most TILE elements is one tile: one launch sorts it entirely.
//   sort_step_*    one THREAD per pair for the rounds j >= TILE of longer rows, whose pairs lie
//                  in different tiles: one launch per round, in global memory.
// Longer rows are sorted as: sort_tile (all k <= TILE), then for k = 2 TILE, ..., P: sort_step for
// j = k/2 .. TILE, and sort_tile for j < TILE (and the last one writes the outputs). That is
// O(log^2 P) passes over memory: a radix sort (what PyTorch calls through CUB) needs fewer for
// long rows; for topk/kthvalue a selection (radix select) would avoid sorting altogether.
//
// The order is TOTAL, so the result does not depend on the schedule: keys compare as numbers with
// NaN the largest (PyTorch's rule), and equal keys by their original position. The sort is
// therefore stable (stable=True and stable=False give the same answer), ascending or descending.
// Padding elements (positions L..P-1, marked by an index >= L) sort after everything.

#include "common.cuh"

namespace st {

// Does (ka, ia) come strictly before (kb, ib)? Padding (index >= L) last; then NaN largest; then
// the key order (ascending or descending); then the smaller original position first.
template <typename T>
__device__ __forceinline__ bool before(T ka, long long ia, T kb, long long ib, long long L, bool descending) {
    if (ia >= L) return false;
    if (ib >= L) return true;
    const bool na = is_nan(ka), nb = is_nan(kb);
    if (na || nb) {
        if (na && nb) return ia < ib;
        return descending ? na : nb;        // NaN is the largest: first when descending
    }
    if (ka != kb) return descending ? ka > kb : ka < kb;
    return ia < ib;
}

// One round (k, j) on the n elements of shared memory whose first has position `first` in the
// padded row; the block's threads share the n/2 pairs. Ends with __syncthreads().
template <typename T>
__device__ __forceinline__ void round_in_tile(T* keys, long long* ids, int n, long long first, long long k, int j,
                                              long long L, bool descending) {
    for (int p = threadIdx.x; p < n / 2; p += blockDim.x) {
        const int i = ((p & ~(j - 1)) << 1) | (p & (j - 1));      // bit j of i clear
        const int l = i + j;
        const bool up = ((first + i) & k) == 0;
        const bool swap = up ? before(keys[l], ids[l], keys[i], ids[i], L, descending)
                             : before(keys[i], ids[i], keys[l], ids[l], L, descending);
        if (swap) {
            const T tk = keys[i]; keys[i] = keys[l]; keys[l] = tk;
            const long long ti = ids[i]; ids[i] = ids[l]; ids[l] = ti;
        }
    }
    __syncthreads();
}

// Block (o, b): tile b (n = tile elements) of row o. Reads from `in` rows of length L (ids_in
// null: the original row, padded here) or of length P (ids_in given: a previous pass). k_merge 0:
// runs every round k = 2 .. n; else the rounds (k_merge, j) for j = n/2 .. 1. Writes rows of
// length P to (out, ids_out), or, when `final`, only the first L positions to rows of length L.
// in and out may be the same arrays (each block reads and writes only its own tile).
template <typename T>
__device__ __forceinline__ void sort_tile(const T* in, const long long* ids_in, T* out, long long* ids_out,
                                          long long L, long long P, int n, long long k_merge, bool descending,
                                          bool final) {
    extern __shared__ __align__(16) unsigned char smem[];
    long long* ids = reinterpret_cast<long long*>(smem);              // n ids, then n keys
    T* keys = reinterpret_cast<T*>(smem + (size_t)n * sizeof(long long));
    const long long o = blockIdx.x, first = (long long)blockIdx.y * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const long long g = first + i;
        if (ids_in == nullptr) {
            keys[i] = g < L ? in[o * L + g] : T(0);
            ids[i] = g;
        } else {
            keys[i] = in[o * P + g];
            ids[i] = ids_in[o * P + g];
        }
    }
    __syncthreads();
    if (k_merge == 0) {
        for (int k = 2; k <= n; k <<= 1)
            for (int j = k >> 1; j > 0; j >>= 1) round_in_tile(keys, ids, n, first, k, j, L, descending);
    } else {
        for (int j = n >> 1; j > 0; j >>= 1) round_in_tile(keys, ids, n, first, k_merge, j, L, descending);
    }
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const long long g = first + i;
        if (!final) {
            out[o * P + g] = keys[i];
            ids_out[o * P + g] = ids[i];
        } else if (g < L) {                  // after the last round the padding is at g >= L
            out[o * L + g] = keys[i];
            ids_out[o * L + g] = ids[i];
        }
    }
}

// Round (k, j) with j >= TILE over all rows (n_rows x P/2 pairs, one thread each) in global memory.
template <typename T>
__device__ __forceinline__ void sort_step(T* __restrict__ keys, long long* __restrict__ ids, long long n_rows,
                                          long long L, long long P, long long k, long long j, bool descending) {
    const long long half = P >> 1;
    GRID_STRIDE_LOOP(t, n_rows * half) {
        const long long o = t / half, p = t - o * half;
        const long long i = ((p & ~(j - 1)) << 1) | (p & (j - 1));
        const long long a = o * P + i, b = a + j;
        const bool up = (i & k) == 0;
        const T ka = keys[a], kb = keys[b];
        const long long ia = ids[a], ib = ids[b];
        const bool swap = up ? before(kb, ib, ka, ia, L, descending) : before(ka, ia, kb, ib, L, descending);
        if (swap) {
            keys[a] = kb; keys[b] = ka;
            ids[a] = ib; ids[b] = ia;
        }
    }
}

// ---- mode, and the pieces of unique -------------------------------------------------------------
// mode: PyTorch's cpu mode sorts each row's (value, position) pairs by value with std::sort, which
// is NOT stable, and returns the position that lands last in the modal run. To return the same
// index we run the same algorithm: libstdc++'s introsort (D. R. Musser, "Introspective sorting and
// selection algorithms", 1997), reproduced swap for swap (cpu.py's _introsort is the same code).
// One THREAD per row, sorting a scratch copy of the row in global memory: serial, O(L log L) per
// row, so one very long row is slow; many rows fill the GPU.

// libstdc++'s __adjust_heap on v[0, len): sift the hole down to a leaf, then push val up.
template <typename T>
__device__ void heap_adjust(T* v, long long* ids, long long hole, long long len, T val, long long vid) {
    const long long top = hole;
    long long child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (v[child] < v[child - 1]) --child;
        v[hole] = v[child]; ids[hole] = ids[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        v[hole] = v[child - 1]; ids[hole] = ids[child - 1];
        hole = child - 1;
    }
    long long parent = (hole - 1) / 2;
    while (hole > top && v[parent] < val) {
        v[hole] = v[parent]; ids[hole] = ids[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    v[hole] = val; ids[hole] = vid;
}

// introsort's fallback past its depth limit: make_heap, then sort_heap, on v[0, len)
template <typename T>
__device__ void heap_sort(T* v, long long* ids, long long len) {
    for (long long parent = (len - 2) / 2; parent >= 0; --parent) heap_adjust(v, ids, parent, len, v[parent], ids[parent]);
    for (long long last = len - 1; last > 0; --last) {
        const T val = v[last];
        const long long vid = ids[last];
        v[last] = v[0]; ids[last] = ids[0];
        heap_adjust(v, ids, 0, last, val, vid);
    }
}

template <typename T>
__device__ __forceinline__ void swap_pair(T* v, long long* ids, long long i, long long j) {
    const T t = v[i]; v[i] = v[j]; v[j] = t;
    const long long u = ids[i]; ids[i] = ids[j]; ids[j] = u;
}

// std::sort of v[0, n) by value, moving ids along. Ranges are disjoint, so the order they are
// processed in does not matter: the larger part waits on a stack, the smaller is looped on, which
// bounds the stack by log2(n) < 64 entries. The scans carry bounds checks libstdc++ omits (it relies
// on the pivot as a sentinel, which NaN can defeat); they never fire otherwise.
template <typename T>
__device__ void introsort(T* v, long long* ids, long long n) {
    long long stack_first[64], stack_last[64];
    int stack_depth[64];
    int top = 0;
    int log2n = 0;
    while ((2LL << log2n) <= n) ++log2n;
    stack_first[0] = 0; stack_last[0] = n; stack_depth[0] = 2 * log2n;
    top = 1;
    while (top > 0) {
        --top;
        long long first = stack_first[top], last = stack_last[top];
        int depth = stack_depth[top];
        while (last - first > 16) {
            if (depth == 0) {
                heap_sort(v + first, ids + first, last - first);
                break;
            }
            --depth;
            const long long a = first + 1, b = first + (last - first) / 2, c = last - 1;
            long long m;
            if (v[a] < v[b]) m = v[b] < v[c] ? b : (v[a] < v[c] ? c : a);
            else m = v[a] < v[c] ? a : (v[b] < v[c] ? c : b);
            swap_pair(v, ids, first, m);                        // the median of three is the pivot
            long long lo = first + 1, hi = last;
            while (true) {                                       // Hoare partition around v[first]
                while (lo < last - 1 && v[lo] < v[first]) ++lo;
                --hi;
                while (hi > first && v[first] < v[hi]) --hi;
                if (!(lo < hi)) break;
                swap_pair(v, ids, lo, hi);
                ++lo;
            }
            if (lo - first < last - lo) {
                stack_first[top] = lo; stack_last[top] = last; stack_depth[top] = depth; ++top;
                last = lo;
            } else {
                stack_first[top] = first; stack_last[top] = lo; stack_depth[top] = depth; ++top;
                first = lo;
            }
        }
    }
    for (long long i = 1; i < n; ++i) {                          // insertion sort: all within 16 of place
        const T val = v[i];
        const long long vid = ids[i];
        long long j = i;
        while (j > 0 && val < v[j - 1]) {
            v[j] = v[j - 1]; ids[j] = ids[j - 1];
            --j;
        }
        v[j] = val; ids[j] = vid;
    }
}

// Row o of the contiguous rows [n_rows, L] is copied to scratch (keys, ids), introsorted, and
// walked once: the longest run of equal values wins (the first, i.e. smallest, on a tie), and its
// last sorted position gives the index.
template <typename T>
__device__ __forceinline__ void mode_rows(const T* __restrict__ rows, T* __restrict__ keys, long long* __restrict__ ids,
                                          T* __restrict__ out, long long* __restrict__ out_ids, long long n_rows,
                                          long long L) {
    GRID_STRIDE_LOOP(o, n_rows) {
        T* v = keys + o * L;
        long long* p = ids + o * L;
        for (long long i = 0; i < L; ++i) { v[i] = rows[o * L + i]; p[i] = i; }
        introsort(v, p, L);
        long long best = 0, run = 0, at = 0;
        for (long long i = 0; i < L; ++i) {
            run += 1;
            if (i == L - 1 || v[i + 1] != v[i]) {     // i ends a run
                if (run > best) { best = run; at = i; }
                run = 0;
            }
        }
        out[o] = v[at];
        out_ids[o] = p[at];
    }
}

// flags[i] = 1 where sorted s[i] starts a new value (i == 0 or s[i] != s[i - 1]), else 0
template <typename T>
__device__ __forceinline__ void unique_flags(const T* __restrict__ s, long long* __restrict__ flags, long long n) {
    GRID_STRIDE_LOOP(i, n) flags[i] = (i == 0 || s[i] != s[i - 1]) ? 1 : 0;
}

// With group[i] = the inclusive running count of flags (group of s[i], from 1): the first element
// of each group writes its value and where it starts; inverse (optional) sends each original
// position perm[i] to its group.
template <typename T>
__device__ __forceinline__ void unique_scatter(const T* __restrict__ s, const long long* __restrict__ perm,
                                               const long long* __restrict__ group, long long n, T* __restrict__ values,
                                               long long* __restrict__ starts, long long* __restrict__ inverse) {
    GRID_STRIDE_LOOP(i, n) {
        const long long g = group[i] - 1;
        if (i == 0 || group[i] != group[i - 1]) {
            values[g] = s[i];
            starts[g] = i;
        }
        if (inverse != nullptr) inverse[perm[i]] = g;
    }
}

}  // namespace st

// counts[g] = where group g + 1 starts (n after the last) - where g starts
extern "C" __global__ void unique_counts(const long long* __restrict__ starts, long long* __restrict__ counts,
                                         long long groups, long long n) {
    GRID_STRIDE_LOOP(g, groups) counts[g] = (g + 1 < groups ? starts[g + 1] : n) - starts[g];
}

#define SORT(T, SUF) MT_IF_##SUF(                                                                    \
    extern "C" __global__ void sort_tile_##SUF(const T* in, const long long* ids_in, T* out, long long* ids_out, \
                                               long long L, long long P, int n, long long k_merge,  \
                                               bool descending, bool final) {                       \
        st::sort_tile(in, ids_in, out, ids_out, L, P, n, k_merge, descending, final);               \
    }                                                                                               \
    extern "C" __global__ void sort_step_##SUF(T* __restrict__ keys, long long* __restrict__ ids, long long n_rows, \
                                               long long L, long long P, long long k, long long j, bool descending) { \
        st::sort_step(keys, ids, n_rows, L, P, k, j, descending);                                   \
    }                                                                                               \
    extern "C" __global__ void mode_rows_##SUF(const T* __restrict__ rows, T* __restrict__ keys,      \
                                               long long* __restrict__ ids, T* __restrict__ out,    \
                                               long long* __restrict__ out_ids, long long n_rows, long long L) { \
        st::mode_rows(rows, keys, ids, out, out_ids, n_rows, L);                                    \
    }                                                                                               \
    extern "C" __global__ void unique_flags_##SUF(const T* __restrict__ s, long long* __restrict__ flags, long long n) { \
        st::unique_flags(s, flags, n);                                                              \
    }                                                                                               \
    extern "C" __global__ void unique_scatter_##SUF(const T* __restrict__ s, const long long* __restrict__ perm, \
                                                    const long long* __restrict__ group, long long n, \
                                                    T* __restrict__ values, long long* __restrict__ starts, \
                                                    long long* __restrict__ inverse) {              \
        st::unique_scatter(s, perm, group, n, values, starts, inverse);                             \
    })

SORT(float, f32)
SORT(double, f64)
SORT(long long, i64)
SORT(bool, bool)
