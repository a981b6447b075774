"""A NumPy model of rung 09's KROWS = 1 index arithmetic (minitorch/cuda/gemm/09_pipelined.cu: the
copies RowsCopier and LeanCopier, rows_tile's fragment reads, store_tile's mapping), run thread by
thread on the host: no GPU needed.

    python tools/model_gemm09_krows.py

For a few configurations (128 x 256 x 16 in chunks of 4 and 8 k steps, BK 32) and odd products in
all four layouts, 16-byte and element copies, it fills each stage as the copies would (NaN where
no copy writes), reads the fragments as rows_tile does (asserting every value read was written,
16-byte aligned, and prow's offsets add up as the kernel assumes), accumulates, stores, and prints
the largest difference from A @ B (float64: ~1e-14 when the indices are right). Written without a
GPU in session s9 to check the kernel before its first run; keep it in step with the kernel.
"""
import itertools
import numpy as np


def prow(r):
    return (r & ~31) | ((r & 3) << 3) | ((r >> 2) & 7)


def run(M, N, K, TA, TB, vec, BM=128, BN=256, BK=16, WM=64, WN=64, WNITER=2, TM=8, TN=4, CHUNK=4,
        lda_pad=0, ldb_pad=0, seed=0):
    rng = np.random.default_rng(seed)
    NT = 32 * (BM // WM) * (BN // WN)
    WMITER = (WM * WN) // (32 * TM * TN * WNITER)
    WSUBM, WSUBN = WM // WMITER, WN // WNITER
    SA, SB, SK = BM + 4, BN + 4, BK + 4
    STAGE_A, STAGE_B = max(BK * SA, BM * SK), max(BK * SB, BN * SK)
    if TA:
        lda = M + lda_pad; Amem = rng.standard_normal(K * lda); Aop = lambda m, k: Amem[k * lda + m]
    else:
        lda = K + lda_pad; Amem = rng.standard_normal(M * lda); Aop = lambda m, k: Amem[m * lda + k]
    if TB:
        ldb = K + ldb_pad; Bmem = rng.standard_normal(N * ldb); Bop = lambda k, n: Bmem[n * ldb + k]
    else:
        ldb = N + ldb_pad; Bmem = rng.standard_normal(K * ldb); Bop = lambda k, n: Bmem[k * ldb + n]
    Af = np.array([[Aop(m, k) for k in range(K)] for m in range(M)])
    Bf = np.array([[Bop(k, n) for n in range(N)] for k in range(K)])
    C = np.full((M, N), np.nan)

    def rows_copy(mem, ld, r0, R, BR, k0, Xs, tid):
        CPR = BK // 4 if vec else BK
        RSTEP = NT // CPR; COPIES = BR // RSTEP
        assert NT % CPR == 0 and BR % RSTEP == 0 and COPIES <= 32
        row = tid // CPR; k = (tid % CPR) * 4 if vec else tid % CPR
        left = R - (r0 + row)
        in_r = 0 if left <= 0 else COPIES if left >= (COPIES - 1) * RSTEP + 1 else (left + RSTEP - 1) // RSTEP
        p = (r0 + row) * ld + k + k0
        k_left = K - k0 - k
        if vec:
            assert RSTEP % 32 == 0
            kb = 16 if k_left >= 4 else 4 * k_left if k_left > 0 else 0
            for i in range(COPIES):
                nb = kb if i < in_r else 0
                dst = prow(row) * SK + k + i * RSTEP * SK
                assert dst == prow(row + i * RSTEP) * SK + k
                for e in range(4):
                    Xs[dst + e] = mem[p + i * RSTEP * ld + e] if 4 * e < nb else 0.0
        else:
            for i in range(COPIES):
                inn = k_left > 0 and i < in_r
                Xs[prow(row + i * RSTEP) * SK + k] = mem[p + i * RSTEP * ld] if inn else 0.0

    def kmajor_copy(mem, ld, r0, R, BR, S, k0, Xs, tid):
        CPR = BR // 4
        KSTEP = NT // CPR if vec else NT // BR
        COPIES = BK // KSTEP
        r = (tid % CPR) * 4 if vec else tid % BR
        kk = tid // CPR if vec else tid // BR
        left = R - (r0 + r)
        in_r = (16 if left >= 4 else 4 * left if left > 0 else 0) if vec else (4 if left > 0 else 0)
        p = (k0 + kk) * ld + r0 + r
        k_in = min(K - k0 - kk, BK)
        for j in range(COPIES):
            nb = in_r if j * KSTEP < k_in else 0
            for e in range(4 if vec else 1):
                Xs[kk * S + r + j * KSTEP * S + e] = mem[p + j * KSTEP * ld + e] if 4 * e < nb else 0.0

    for n0 in range(0, N, BN):
        for m0 in range(0, M, BM):
            acc = np.zeros((NT, WMITER * TM, WNITER * TN))
            for k0 in range(0, K, BK):
                As = np.full(STAGE_A, np.nan); Bs = np.full(STAGE_B, np.nan)
                for tid in range(NT):
                    if not TA: rows_copy(Amem, lda, m0, M, BM, k0, As, tid)
                    else: kmajor_copy(Amem, lda, m0, M, BM, SA, k0, As, tid)
                    if TB: rows_copy(Bmem, ldb, n0, N, BN, k0, Bs, tid)
                    else: kmajor_copy(Bmem, ldb, n0, N, BN, SB, k0, Bs, tid)
                for tid in range(NT):
                    warp, lane = tid // 32, tid % 32
                    a_col = (warp // (BN // WN)) * WM + (lane // (WSUBN // TN)) * TM
                    b_col = (warp % (BN // WN)) * WN + (lane % (WSUBN // TN)) * TN
                    aoff = prow(a_col) * SK if not TA else a_col
                    boff = prow(b_col) * SK if TB else b_col
                    RA, RB = WMITER * TM, WNITER * TN
                    for kc in range(0, BK, CHUNK):
                        for g in range(0, CHUNK, 4):
                            k = kc + g
                            bq = np.zeros((4, RB))
                            for wn in range(WNITER):
                                for j in range(0, TN, 4):
                                    for q in range(4):
                                        if TB:
                                            base = boff + prow(wn * WSUBN + j + q) * SK + k
                                            assert boff + prow(wn * WSUBN + j + q) * SK == prow(b_col + wn * WSUBN + j + q) * SK
                                            bq[:, wn * TN + j + q] = Bs[base:base + 4]
                                        else:
                                            base = boff + (k + q) * SB + wn * WSUBN + j
                                            bq[q, wn * TN + j: wn * TN + j + 4] = Bs[base:base + 4]
                                        assert base % 4 == 0
                            for ib in range(0, RA, 4):
                                wm, i0 = ib // TM, ib % TM
                                aq = np.zeros((4, 4))
                                for q in range(4):
                                    if not TA:
                                        base = aoff + prow(wm * WSUBM + i0 + q) * SK + k
                                        assert aoff + prow(wm * WSUBM + i0 + q) * SK == prow(a_col + wm * WSUBM + i0 + q) * SK
                                        aq[:, q] = As[base:base + 4]
                                    else:
                                        base = aoff + (k + q) * SA + wm * WSUBM + i0
                                        aq[q, :] = As[base:base + 4]
                                    assert base % 4 == 0
                                assert np.isfinite(aq).all() and np.isfinite(bq).all(), (tid, k)
                                for s_ in range(4):
                                    acc[tid, ib:ib + 4, :] += np.outer(aq[s_], bq[s_])
            for tid in range(NT):
                warp, lane = tid // 32, tid % 32
                a_col = (warp // (BN // WN)) * WM + (lane // (WSUBN // TN)) * TM
                b_col = (warp % (BN // WN)) * WN + (lane % (WSUBN // TN)) * TN
                for wm, i, wn, j in itertools.product(range(WMITER), range(TM), range(WNITER), range(TN)):
                    m = m0 + a_col + wm * WSUBM + i; n = n0 + b_col + wn * WSUBN + j
                    if m < M and n < N:
                        assert np.isnan(C[m, n]); C[m, n] = acc[tid, wm * TM + i, wn * TN + j]
    return np.abs(C - Af @ Bf).max()


if __name__ == "__main__":
    for cfg in [dict(CHUNK=8), dict(BK=32, CHUNK=4)]:
        for (M, N, K, lay), vec in itertools.product([(130, 260, 37, "tn"), (67, 45, 71, "nn"), (129, 257, 33, "tt"),
                                                      (5, 300, 40, "nt")], (True, False)):
            TA, TB = lay[0] == "t", lay[1] == "t"
            lda = M if TA else K; ldb = K if TB else N
            pads = dict(lda_pad=(-lda) % 4, ldb_pad=(-ldb) % 4) if vec else dict(lda_pad=1, ldb_pad=3)
            print(cfg, M, N, K, lay, vec, run(M, N, K, TA, TB, vec, **cfg, **pads), flush=True)
