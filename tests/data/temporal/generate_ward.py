"""Generates ward_contacts.tsv: a synthetic temporal contact network in the layout of the
SocioPatterns hospital-ward data (`t i j Si Sj`, tab-separated, CRLF), made for ripples' tests.

75 people (46 staff: 27 nurses NUR, 11 doctors MED, 8 administrative ADM; 29 patients PAT) with
ids 1001..1075, about five days from Monday 6 December 2010, 13:00 UTC (Unix 1291640400), in 20-second
intervals. Each interval's contacts: a day/night rhythm (day shift 07:00-21:00 at full rate,
night at a tenth), nurses meeting everyone, doctors meeting nurses and patients, patients rarely
meeting each other; a contact lasts a geometric number of intervals (mean 3). Exactly 32,424
records, in time order. Deterministic: python3 generate_ward.py > ward_contacts.tsv
(CPython's random with seed 20101206).
"""

import random
import sys

START = 1291640400
INTERVAL = 20
RECORDS = 32_424


def people():
    roles = ["NUR"] * 27 + ["MED"] * 11 + ["ADM"] * 8 + ["PAT"] * 29
    return [(1001 + i, r) for i, r in enumerate(roles)]


def pair_weight(a, b):
    ra, rb = sorted((a[1], b[1]))
    table = {
        ("NUR", "NUR"): 6.0, ("NUR", "PAT"): 4.0, ("MED", "NUR"): 3.0, ("MED", "MED"): 2.0,
        ("MED", "PAT"): 1.5, ("ADM", "NUR"): 1.0, ("ADM", "MED"): 0.7, ("ADM", "ADM"): 1.5,
        ("ADM", "PAT"): 0.1, ("PAT", "PAT"): 0.05,
    }
    return table[(ra, rb)]


def main():
    rng = random.Random(20101206)
    ps = people()
    pairs = [(a, b) for i, a in enumerate(ps) for b in ps[i + 1:]]
    weights = [pair_weight(a, b) for a, b in pairs]
    total = sum(weights)
    active = {}  # pair index -> intervals left
    out = []
    t = START
    while len(out) < RECORDS:
        hour = ((t - START) // 3600 + 13) % 24
        rate = 0.75 if 7 <= hour < 21 else 0.075
        starts = 0
        while rng.random() < rate / (1 + rate):
            starts += 1
        for _ in range(starts):
            x = rng.random() * total
            for k, w in enumerate(weights):
                x -= w
                if x <= 0:
                    break
            length = 1
            while rng.random() < 2 / 3:
                length += 1
            active[k] = max(active.get(k, 0), length)
        for k in sorted(active):
            (i, si), (j, sj) = pairs[k]
            if rng.random() < 0.5:
                (i, si), (j, sj) = (j, sj), (i, si)
            out.append(f"{t}\t{i}\t{j}\t{si}\t{sj}\r\n")
            active[k] -= 1
            if active[k] == 0:
                del active[k]
            if len(out) == RECORDS:
                break
        t += INTERVAL
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
