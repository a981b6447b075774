"""Simulation of minitorch/cuda/scan.cu's decoupled look-back over random schedules (integer sums:
exact). Run: python tools/sim_lookback.py (about 15 s; prints "ok N schedules").

Each block is a generator that yields at every shared-memory access; a random scheduler steps the
resident blocks (at most `resident` at once, new blocks start when one ends, tickets by atomicAdd
in start order). Warp-wide window reads are split into one step per lane, so a window sees other
tiles' publications half-way. Checks: every run ends (no deadlock within a step bound), every
output equals the sequential scan, and (8-byte protocol) a value slot is never read before written.
"""
import random

EMPTY, A, P = 0, 1, 2


def run(L, n_rows, tile, resident, rng, packed):
    tiles = -(-L // tile)
    total = n_rows * tiles
    x = [[rng.randint(-9, 9) for _ in range(L)] for _ in range(n_rows)]
    out = [[None] * L for _ in range(n_rows)]
    status = [0] * total                # packed: (flag, value); split: flag
    values = [[None, None] for _ in range(total)]
    counter = [0]

    def publish(t, flag, v):
        if packed:
            status[t] = (flag, v)
            yield
        else:
            values[t][flag - 1] = v
            yield                       # __threadfence, then the flag
            status[t] = flag
            yield

    def read(t):
        s = status[t]
        return (s if s != 0 else (EMPTY, None)) if packed else (s, None)

    def block():
        t = counter[0]; counter[0] += 1
        yield
        o, s = divmod(t, tiles)
        start = s * tile
        n = min(tile, L - start)
        for _ in range(rng.randint(0, 3)):
            yield                       # loading / scanning the tile
        agg = sum(x[o][start:start + n])
        prefix = 0
        if s > 0:
            yield from publish(t, A, agg)
            first = t - s
            top = t
            while True:
                lanes = []
                for lane in range(32):
                    p = top - 32 + lane
                    lanes.append((P, 0) if p < first else read(p))
                    yield
                polls = 0
                while any(f == EMPTY for f, _ in lanes):
                    polls += 1
                    assert polls < 100000, "deadlock"
                    for lane in range(32):
                        p = top - 32 + lane
                        if lanes[lane][0] == EMPTY:
                            lanes[lane] = read(p)
                            yield
                if not packed:          # fence, then each lane reads the slot of the flag it saw
                    new = []
                    for lane, (f, _) in enumerate(lanes):
                        p = top - 32 + lane
                        if p < first:
                            new.append((f, 0))
                        else:
                            v = values[p][f - 1]
                            assert v is not None, "value read before it was written"
                            new.append((f, v))
                        yield
                    lanes = new
                ps = [i for i, (f, _) in enumerate(lanes) if f == P]
                last_p = ps[-1] if ps else 0
                prefix = sum(v for i, (_, v) in enumerate(lanes) if i >= last_p) + prefix
                if ps:
                    break
                top -= 32
        yield from publish(t, P, prefix + agg)
        run_sum = prefix
        for i in range(start, start + n):
            run_sum += x[o][i]
            out[o][i] = run_sum
        yield

    waiting = total
    live = []
    steps = 0
    while waiting or live:
        while waiting and len(live) < resident:
            live.append(block()); waiting -= 1
        g = rng.choice(live)
        try:
            next(g)
        except StopIteration:
            live.remove(g)
        steps += 1
        assert steps < 50_000_000, "no progress"
    for o in range(n_rows):
        acc = 0
        for i in range(L):
            acc += x[o][i]
            assert out[o][i] == acc, (o, i)


rng = random.Random(0)
cases = 0
for L in [1, 5, 7, 8, 9, 31, 32, 33, 63, 64, 65, 100, 300, 1000]:
    for n_rows in [1, 2, 3]:
        for tile in [1, 2, 7]:
            for resident in [1, 2, 5, 40, 1000]:
                for packed in (True, False):
                    run(L, n_rows, tile, resident, rng, packed)
                    cases += 1
for _ in range(200):            # random shapes
    run(rng.randint(1, 400), rng.randint(1, 4), rng.randint(1, 5), rng.randint(1, 80), rng, rng.random() < .5)
    cases += 1
print("ok", cases, "schedules")
