#!/usr/bin/env python3
"""Writes scenarios/sweeps/concord-churn.json (Concord Fig. 13: throughput vs the rate at which
cache instances leave the domain and join it again).

Each point schedules its departures and joins (`protocol.params.leaves` / `joins`): at a steady
rate, one instance at a time (picked by a fixed stride over the 16) leaves and joins again
60 ms later, the paper's 120 ms remove + add split between the two changes' waits.

usage: scripts/concord-churn-sweep.py   (from the repository root)
"""
import json

MS = 1_000_000
NODES = 16


def churn(per_min, duration_s):
    """Remove + add pairs at `per_min` a minute over the run, after a second of warm-up."""
    leaves, joins = [], []
    if per_min == 0:
        return leaves, joins
    # The figure reads the rate back from the spacing of the departures.
    gap = 60_000 * MS // per_min
    at, k = 1000 * MS, 0
    while at + 60 * MS < duration_s * 1000 * MS:
        node = f"S{(k * 7 + 3) % NODES}"
        leaves.append({"node": node, "at_ns": at})
        joins.append({"node": node, "at_ns": at + 60 * MS})
        at, k = at + gap, k + 1
    assert len(leaves) >= 2, "the figure needs two departures to read the rate"
    return leaves, joins


def point(per_min, duration_s):
    leaves, joins = churn(per_min, duration_s)
    return {"protocol.params.leaves": leaves, "protocol.params.joins": joins}


RATES = [0, 12, 24, 48, 96]
QUICK = [0, 48, 96]
DURATION_S = 20
QUICK_S = 6

SWEEP = {
    "format": "causim-sweep/1",
    "name": "concord-churn",
    "description": f"Concord Fig. 13 (§VI-D): throughput vs the rate at which cache instances leave the 16-machine domain and join it again 60 ms later ({', '.join(map(str, RATES))} a minute), with 32 closed-loop clients on concord-load's application (scenarios/concord/load-mix.json). A function whose instance is away fails its call and its workflow retries after 10-30 ms. {DURATION_S} s runs (quick: {QUICK_S} s), 1 s warm-up. Written by scripts/concord-churn-sweep.py.",
    "base": "../concord/load-mix.json",
    "set": {
        "expect": None,
        "workload.generator.arrival": {"kind": "closed", "clients": 32},
        "workload.generator.duration_ns": DURATION_S * 1000 * MS,
        "workload.generator.warmup_ns": 1000 * MS,
        "scheduler.attempts_max": 100,
        "scheduler.retry_backoff": {"dist": "uniform", "min_ns": 10 * MS, "max_ns": 30 * MS},
    },
    "series": [{"label": "Concord", "set": {}}],
    "points": [point(r, DURATION_S) for r in RATES],
    "seeds": {"first": 1, "count": 2},
    "quick": {
        "seeds": {"count": 1},
        "set": {"workload.generator.duration_ns": QUICK_S * 1000 * MS},
        "points": [point(r, QUICK_S) for r in QUICK],
    },
}

with open("scenarios/sweeps/concord-churn.json", "w") as f:
    f.write(json.dumps(SWEEP, indent=1) + "\n")
