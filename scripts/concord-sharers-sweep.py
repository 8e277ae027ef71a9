#!/usr/bin/env python3
"""Writes scenarios/concord/fig11-sharers.json and scenarios/sweeps/concord-sharers.json (Concord
Fig. 11: write latency to an item every node shares, and local read-hit latency, vs nodes).

Each point needs its own script (every machine but the item's home loads it, then one of them
writes it), so the sweep's points set `workload.script` with `topology.servers`. The item's home
comes from Concord's ring (models/src/concord/ring.rs), ported below; the home reads nothing, so
Faa$T's reads are all version checks across the network, as in the paper's measurement.

usage: scripts/concord-sharers-sweep.py   (from the repository root)
"""
import json

M = (1 << 64) - 1
AGENT_SALT = 0x9E3779B97F4A7C15


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


def home(key, n):
    tokens = sorted((mix(i ^ AGENT_SALT), i) for i in range(n))
    at = mix(key)
    return next((i for p, i in tokens if p >= at), tokens[0][1])


ROUNDS = 3
MS = 1_000_000


def script(n):
    """Rounds of: every machine but x's home reads x twice (a load, then a local hit); once the
    loads are done, the first of them writes x (an upgrade from S: the others are invalidated)."""
    h = home(0, n)  # x is the script's only key: key 0
    readers = [i for i in range(n) if i != h]
    writer = readers[0]
    sessions = {i: [] for i in readers}
    t = 0
    for _ in range(ROUNDS):
        for i in readers:
            sessions[i].append({"on": f"S{i}", "at_ns": t, "ops": [{"read": "x"}, {"read": "x"}]})
        # The loads queue at the home (its directory is blocking), the first ones for storage.
        t += 100 * MS + 5 * MS * len(readers)
        sessions[writer].append({"on": f"S{writer}", "at_ns": t, "ops": [{"write": "x"}]})
        t += 100 * MS
    return [{"session": f"s{i}", "functions": fs} for i, fs in sessions.items()]


TOPOLOGY = {
    "servers": 4,
    "delay": {"dist": "constant", "ns": 1 * MS},
    "local_delay": {"dist": "constant", "ns": 800_000},
    "links": [{"from": "*", "to": "db", "delay": {"dist": "constant", "ns": 15 * MS}, "both_ways": True}],
}

BASE = {
    "format": "causim-scenario/1",
    "name": "concord-fig11-sharers",
    "description": "Concord Fig. 11 at 4 nodes: every machine but x's home (S3) reads x twice (a load, then a local hit), then S0 writes x, an upgrade from S that invalidates the other sharers (the home among them: it keeps a copy of what it serves, params.home_keeps_copy), three rounds. Latencies as the paper states them: 2 ms round trip between machines, 30 ms to storage; a function reaches its machine's cache agent in 0.8 ms one way (fitted to the paper's 1.6 ms local hit). Linearizable. scripts/concord-sharers-sweep.py writes it and the sweep scenarios/sweeps/concord-sharers.json.",
    "protocol": {"name": "concord", "params": {"strict": True, "home_keeps_copy": True}},
    "seed": 1,
    "topology": TOPOLOGY,
    "workload": {"script": script(4)},
    "checks": {"invariants": True, "level": "linearizable"},
    "expect": {"verdict": "pass"},
}

NODES = [2, 4, 8, 16, 30]
QUICK = [2, 8, 30]

SWEEP = {
    "format": "causim-sweep/1",
    "name": "concord-sharers",
    "description": "Concord Fig. 11 (§VI-C): write latency to an item every node shares, and local read-hit latency, vs nodes (2-30), Concord against Faa$T. Every machine but the item's home loads it and reads it again (a local hit), then one of them writes it, three rounds; constant delays (2 ms round trip, 30 ms to storage, 0.8 ms one way from a function to its cache agent, fitted to the paper's 1.6 ms local hit), so one seed suffices. Written by scripts/concord-sharers-sweep.py.",
    "base": "../concord/fig11-sharers.json",
    "set": {"expect": None},
    "series": [
        {"label": "Concord", "set": {}},
        {"label": "Faa$T", "set": {"protocol": {"name": "faast", "params": {}}, "checks.invariants": True}},
    ],
    "points": [{"topology.servers": n, "workload.script": script(n)} for n in NODES],
    "seeds": {"first": 1, "count": 1},
    "quick": {"points": [{"topology.servers": n, "workload.script": script(n)} for n in QUICK]},
}


def compact(value, indent=""):
    """JSON with one line per scalar field, list of sessions or point, so the file stays small."""
    inner = indent + "  "
    if isinstance(value, dict) and not any(k in value for k in ("session", "on", "dist")):
        items = [f'{inner}{json.dumps(k)}: {compact(v, inner)}' for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list) and value and isinstance(value[0], dict) and "session" not in value[0] and "on" not in value[0]:
        return "[\n" + ",\n".join(inner + compact(v, inner) for v in value) + "\n" + indent + "]"
    if isinstance(value, list) and value and isinstance(value[0], dict) and "session" in value[0]:
        return "[\n" + ",\n".join(inner + json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in value) + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def dump(path, value):
    with open(path, "w") as f:
        f.write(compact(value) + "\n")


dump("scenarios/concord/fig11-sharers.json", BASE)
dump("scenarios/sweeps/concord-sharers.json", SWEEP)
