#!/usr/bin/env python3
"""Checks an experiment's outputs against its results.jsonl, computed here independently.

usage: check_report.py OUT_DIR EXPECTED_CELLS

Every cell has one record with the environment and dataset; summary.csv's medians, the
figures' points (figures.json) and the report's table are the medians of the records; the
SVG files exist.
"""
import collections
import csv
import json
import os
import statistics
import sys

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

def config(c):
    return "%s/%s/%s/%s/w%d/b%d" % (c["dataset"], c["stream"], c["algorithm"], c["system"], c["workers"], c["batch"])

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
            assert x == groups[k][0]["cell"][x_key], (k, x)
            if panel["kind"] == "scaling":
                scaled.add(k)
assert scaled == set(median), set(median) - scaled
kinds = collections.Counter(p["kind"] for p in figures)
assert all(kinds[k] for k in ("scaling", "batch", "latency_ccdf", "rss", "latency_run")), kinds

rows = {}
for line in open(os.path.join(out, "report.md")):
    cells = [c.strip() for c in line.split("|")]
    if len(cells) > 4 and cells[1] in median:
        rows[cells[1]] = float(cells[3])
assert set(rows) == set(median), set(median) ^ set(rows)
for k, shown in rows.items():
    assert abs(shown - median[k]) <= 0.5 + 1e-6 * median[k], (k, shown, median[k])
rows_csv = sum(1 for _ in open(os.path.join(out, "results.csv"))) - 1
assert rows_csv >= len(records), rows_csv
print("ci: experiment report agrees with results.jsonl (%d cells, %d configurations)" % (len(records), len(median)))
