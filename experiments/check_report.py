#!/usr/bin/env python3
"""Checks an experiment's outputs against its results.jsonl, computed here independently.

usage: check_report.py OUT_DIR EXPECTED_CELLS

Every cell has one record with the environment and dataset; summary.csv's medians, the
figures' points (figures.json) and the report's table are the medians of the records; the
SVG files exist; the COST figures (the fewest worker threads beating the best sequential
baseline) and the latency percentiles pooled over repetitions (latency.csv, from the HDR
histograms the records keep) agree with values computed here from the raw records.
"""
import collections
import csv
import json
import math
import os
import statistics
import sys

SEQUENTIAL = ("bench:uf-hash", "bench:uf-dense", "bench:recompute")
# `ripples run` in either layout (`ripples-shares`: WCC with `--wcc-layout shares`).
RIPPLES = ("ripples", "ripples-shares")

out, expected = sys.argv[1], int(sys.argv[2])
records = [json.loads(line) for line in open(os.path.join(out, "results.jsonl"))]
latest = {}
for r in records:
    latest[r["key"]] = r
records = list(latest.values())
assert len(records) == expected, (len(records), expected)
for r in records:
    for field in ("git_rev", "git_dirty", "rustc", "profile", "timely_version", "differential_version",
                  "cpu_model", "cores", "memory_bytes", "kernel"):
        assert field in r["env"], field
    for field in ("name", "checksum", "vertices", "edges"):
        assert field in r["dataset"], field
    assert r["status"] == "ok", (r["cell"], r["status"], r.get("failure"))
    assert r["agrees"] is True, r["cell"]
    assert r["env"]["rustc"].startswith("rustc "), r["env"]["rustc"]
    m = r["metrics"]
    if r["cell"]["system"] in RIPPLES:
        assert m.get("latency_histogram"), ("no histogram", r["cell"])
        if r["cell"]["stream"].startswith("event-"):
            assert m.get("event_latency") and m.get("event_latency_histogram"), ("no event-time latency", r["cell"])
            assert len(m["event_latencies_ms"]) > 0, r["cell"]

def processes(c):
    return c.get("processes", 1)

def config(c):
    n = "/n%d" % processes(c) if processes(c) > 1 else ""
    return "%s/%s/%s/%s/w%d%s/b%d" % (c["dataset"], c["stream"], c["algorithm"], c["system"], c["workers"], n, c["batch"])

groups = collections.defaultdict(list)
for r in records:
    groups[config(r["cell"])].append(r)
median = {k: statistics.median(r["metrics"]["updates_per_sec"] for r in v) for k, v in groups.items()}

summary = {(row["config"], row["metric"]): row for row in csv.DictReader(open(os.path.join(out, "summary.csv")))}
for k, m in median.items():
    got = float(summary[(k, "updates_per_sec")]["median"])
    assert abs(got - m) <= 1e-9 * m, (k, got, m)
    assert int(summary[(k, "updates_per_sec")]["n"]) == len(groups[k])

figures = json.load(open(os.path.join(out, "figures.json")))
report = open(os.path.join(out, "report.md")).read()
scaled = set()
for panel in figures:
    text = open(os.path.join(out, panel["file"])).read()
    assert "<svg" in text and "</svg>" in text, panel["file"]
    assert "](%s)" % panel["file"] in report, panel["file"]
    for series in panel["series"]:
        if series["reference"]:
            continue
        if panel["kind"] in ("rss", "latency_run"):
            (k,) = series["configs"]
            first = min(groups[k], key=lambda r: r["cell"]["repetition"])["metrics"]
            want = [b / 1048576 for b in first["rss_bytes"]] if panel["kind"] == "rss" else first["latencies_ms"]
            got = [y for _, y in series["points"]]
            assert len(got) == len(want) and all(abs(a - max(b, 1e-3)) <= 1e-9 * max(b, 1) for a, b in zip(got, want)), k
            continue
        if panel["kind"] == "latency_ccdf":
            (k,) = series["configs"]
            n = sum(len(r["metrics"]["latencies_ms"]) for r in groups[k])
            assert len(series["points"]) == n, k
            continue
        x_key = "workers" if panel["kind"] == "scaling" else "batch"
        for (x, y), k in zip(series["points"], series["configs"]):
            assert abs(y - median[k]) <= 1e-9 * median[k], (k, y, median[k])
            c = groups[k][0]["cell"]
            assert x == (c["workers"] * processes(c) if x_key == "workers" else c["batch"]), (k, x)
            if panel["kind"] == "scaling":
                scaled.add(k)
# Every configuration is on a scaling line but the baselines' (one worker: they are the COST line).
def is_baseline(system):
    return system in SEQUENTIAL or (system not in RIPPLES and not system.startswith("bench:"))

swept = {k for k in median if not is_baseline(groups[k][0]["cell"]["system"])}
assert scaled == swept, swept ^ scaled
kinds = collections.Counter(p["kind"] for p in figures)
assert all(kinds[k] for k in ("scaling", "batch", "latency_ccdf", "rss", "latency_run")), kinds

def section(title):
    """The table rows (lists of cells) of the report's section `## title`."""
    rows, inside = [], False
    for line in report.splitlines():
        if line.startswith("## "):
            inside = line[3:].strip() == title
        elif inside and line.startswith("| ") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.split("|")[1:-1]])
    return rows[1:]  # without the header

rows = {}
for cells in section("Results"):
    if cells[0] in median:
        rows[cells[0]] = float(cells[2])
assert set(rows) == set(median), set(median) ^ set(rows)
for k, shown in rows.items():
    assert abs(shown - median[k]) <= 0.5 + 1e-6 * median[k], (k, shown, median[k])
rows_csv = sum(1 for _ in open(os.path.join(out, "results.csv"))) - 1
assert rows_csv >= len(records), rows_csv
# COST: per dataset, algorithm, stream and batch, the best baseline (sequential bench system or a
# user's command, one worker, one process) by median updates/s; per line of another system, the
# fewest worker threads (workers x processes) whose median beats it.
best, lines = {}, collections.defaultdict(dict)
for k, rs in groups.items():
    c = rs[0]["cell"]
    g = (c["dataset"], c["algorithm"], c["stream"], c["batch"])
    if is_baseline(c["system"]):
        if c["workers"] == 1 and processes(c) == 1 and (g not in best or median[k] > best[g][0]):
            best[g] = (median[k], c["system"])
    else:
        lines[(g, c["system"], processes(c))][c["workers"] * processes(c)] = median[k]
want_cost = {}
for (g, system, n), points in lines.items():
    if g in best:
        beat = [w for w in sorted(points) if points[w] > best[g][0]]
        want_cost[g + (system, n)] = (best[g][1], best[g][0], beat[0] if beat else None)
got_cost = {}
for panel in figures:
    for c in panel.get("costs", []):
        got_cost[(c["dataset"], c["algorithm"], c["stream"], c["batch"], c["system"], c["processes"])] = (
            c["baseline"], c["baseline_updates_per_sec"], c["workers"])
assert set(got_cost) == set(want_cost), set(got_cost) ^ set(want_cost)
for k, (b, tp, w) in want_cost.items():
    assert got_cost[k][0] == b and abs(got_cost[k][1] - tp) <= 1e-9 * tp and got_cost[k][2] == w, (k, got_cost[k], b, tp, w)
table = {}
for cells in section("COST"):
    d, a, s, b, system, n, base, tp, cost = cells
    table[(d, a, s, int(b), system, int(n))] = (base, float(tp), None if cost == "not reached" else int(cost))
assert set(table) == set(want_cost), set(table) ^ set(want_cost)
for k, (b, tp, w) in want_cost.items():
    assert table[k][0] == b and abs(table[k][1] - tp) <= 0.5 and table[k][2] == w, (k, table[k], b, tp, w)
for panel in figures:
    if panel["kind"] == "scaling" and panel.get("costs"):
        assert any(s.get("baseline") for s in panel["series"]), ("no COST line drawn", panel["file"])
if any(is_baseline(r["cell"]["system"]) for r in records):
    assert want_cost, "baselines in the sweep but no COST figure"

# Pooled latency percentiles: the exact rank HDR uses (ceil(q n), at least 1) of all repetitions'
# values, within the histogram's precision (3 significant digits of microseconds).
pooled = {(row["config"], row["kind"]): row for row in csv.DictReader(open(os.path.join(out, "latency.csv")))}
checked = 0
for k, rs in groups.items():
    for kind, field in (("epoch", "latencies_ms"), ("event", "event_latencies_ms")):
        values = sorted(v for r in rs for v in r["metrics"].get(field, []))
        hist = "latency_histogram" if kind == "epoch" else "event_latency_histogram"
        if not any(r["metrics"].get(hist) for r in rs):
            continue
        row = pooled[(k, kind)]
        assert int(row["count"]) == len(values), (k, kind, row["count"], len(values))
        top = max(values)
        for q, col in ((0.5, "p50_ms"), (0.99, "p99_ms"), (0.999, "p999_ms")):
            exact = values[max(1, math.ceil(q * len(values))) - 1]
            got = float(row[col])
            assert exact - 0.0015 <= got <= min(top, exact * 1.002 + 0.0015), (k, kind, col, got, exact)
        assert abs(float(row["max_ms"]) - top) <= 1e-9 * max(top, 1), (k, kind, row["max_ms"], top)
        checked += 1
assert checked > 0 or not any(r["cell"]["system"] in RIPPLES for r in records), "latency.csv checked nothing"
print("ci: experiment report agrees with results.jsonl (%d cells, %d configurations, %d COST figures, %d pooled latencies)"
      % (len(records), len(median), len(want_cost), checked))
