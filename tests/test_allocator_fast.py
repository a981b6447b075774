"""The caching allocator's host cost work (minitorch/cuda/allocator.py) changed no decision.

tests/allocator_sequences.json holds malloc/free sequences and what the allocator did with them
BEFORE its hot path was reworked for speed (branch s8-hostcost; re-record with ``record()``
run against that version, 6c6c36f): where each block was placed
(segment ordinal, offset in it) and every statistic of ``memory_stats()`` after each round. The
sequences are the allocations of a training step of the fused seed CNN and of an MNIST MLP
(recorded on the fake GPU of benchmarks/hostcost_step.py, three steps each, replayed three
times) and a random one with small and large sizes and two streams. Replaying them now must give
the same placements and the same statistics, number for number.
"""
import json
from pathlib import Path

import numpy as np
import pytest

import fake_cuda
from minitorch.cuda import allocator

SEQUENCES = Path(__file__).resolve().parent / "allocator_sequences.json"
KiB, MiB = 1 << 10, 1 << 20


def random_sequence(seed=0, n=600):
    """[["m", id, nbytes, stream] or ["f", id]]: a mix of small and large sizes, up to ~40 alive."""
    rng = np.random.default_rng(seed)
    sizes = [4, 40, 512, 2560, 4672, 51200, 200704, 802816, MiB + 1, 3 * MiB, 12 * MiB]
    events, alive, next_id = [], [], 0
    for _ in range(n):
        if alive and (len(alive) > 40 or rng.random() < 0.45):
            events.append(["f", alive.pop(int(rng.integers(len(alive))))])
        else:
            events.append(["m", next_id, int(rng.choice(sizes)) + int(rng.integers(0, 300)), int(rng.random() < 0.2)])
            alive.append(next_id)
            next_id += 1
    return events


class Segment:
    """cudaMalloc for the allocator alone: ``size`` bytes at the next address up, never touched.
    Best fit breaks ties between equal free blocks by address: with the heap addresses of real
    buffers the choice (and so the placements) would differ from one process to the next."""
    next_ptr = 1 << 40

    def __init__(self, size):
        self.ptr, self.size = Segment.next_ptr, size
        Segment.next_ptr += (size + 4095) // 4096 * 4096


def replay(events, rounds):
    """Run ``events`` ``rounds`` times on a fresh allocator over a fake GPU: (placements as
    [segment ordinal, offset] per malloc, memory_stats() after each round)."""
    fake = fake_cuda.FakeCuda(limit=1 << 40)
    fake.cuda.Memory = Segment
    pool = allocator.CachingAllocator(0, fake)
    segments, placements, stats, held = {}, [], [], {}
    for _ in range(rounds):
        for e in events:
            if e[0] == "m":
                a = held[e[1]] = pool.malloc(e[2], e[3] if len(e) > 3 else 0)
                base = a.block.segment.ptr
                placements.append([segments.setdefault(base, len(segments)), a.ptr - base])
            else:
                held.pop(e[1], None)
        stats.append(dict(pool.memory_stats()))
    held.clear()
    stats.append(dict(pool.memory_stats()))
    return placements, stats


def record():
    """The expected file's contents, from the allocator as it is now."""
    data = json.loads(SEQUENCES.read_text()) if SEQUENCES.exists() else {}
    data["random"] = {"events": random_sequence()}
    for entry in data.values():
        entry["placements"], entry["stats"] = replay(entry["events"], 3)
    return data


@pytest.mark.parametrize("name", ["cnn_step", "mlp_step", "random"])
def test_replayed_sequences_place_and_count_as_before(name):
    entry = json.loads(SEQUENCES.read_text())[name]
    placements, stats = replay(entry["events"], 3)
    assert placements == entry["placements"]
    for got, want in zip(stats, entry["stats"], strict=True):
        assert got == want, {k: (got[k], want[k]) for k in want if got.get(k) != want[k]}


def test_the_recorded_sequences_are_the_intended_ones():
    data = json.loads(SEQUENCES.read_text())
    assert data["random"]["events"] == random_sequence()
    for name in ("cnn_step", "mlp_step"):              # steps that reuse cached blocks and also split large ones
        sizes = {e[2] for e in data[name]["events"] if e[0] == "m"}
        assert len(sizes) > 8 and data[name]["stats"][-1]["num_device_alloc"] >= 1
    assert data["cnn_step"]["stats"][-1]["segment.large_pool.peak"] >= 1
