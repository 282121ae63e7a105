#!/usr/bin/env bash
# scripts/bench/write-cliff.sh end to end on the smallest full-size drive (0.8 TB,
# 300 simulated s: the cliff comes at about 224 s): telemetry, figures and
# plots all written, the cliff found where IOPS fall.  Skipped (77) when
# gnuplot is not installed.
set -uo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/lib.sh"
sim=$1
script=$2
command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot not installed: skip"; exit 77; }
h3100_tmpdir cliff

if ! "$script" --sim "$sim" --profile h3100-0.8t --runtime 300 --interval 2 \
        --every 5 -o "$tmp/wc" >"$tmp/out" 2>"$tmp/err"; then
    echo "not ok - write-cliff.sh failed: $(tail -n3 "$tmp/err")"
    exit 1
fi
cat "$tmp/wc/figures.txt"
python3 - "$tmp/wc" "$tmp/out" <<'PY'
import json, os, re, sys
d, out = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(os.path.join(d, "telemetry.jsonl"))]
assert "cdf" in rows[-1] and len(rows) == 151, len(rows)
fig = open(os.path.join(d, "figures.txt")).read()
fob = float(re.search(r"FOB \(first rows\).*?([0-9.]+) KIOPS", fig).group(1))
cliff = re.search(r"cliff: t=([0-9]+) s, [0-9.]+ drive writes .*: ([0-9.]+) KIOPS", fig)
assert cliff, fig
t, after = float(cliff.group(1)), float(cliff.group(2))
# the rows say the same: IOPS fell in the row the figures name
row = next(r for r in rows[:-1] if abs(r["t"] - t) < 1e-6)
prev = next(r for r in rows[:-1] if abs(r["t"] - (t - 2)) < 1e-6)
assert prev["iops"] >= 0.9 * fob * 1e3 > row["iops"], (prev, row)
assert abs(row["iops"] / 1e3 - after) < 0.1 and after < 0.9 * fob, (fob, after)
assert row["gc_victims"] > 0 or prev["gc_victims"] > 0, row
pngs = [l.strip() for l in open(out) if l.strip()]
assert len(pngs) == 5, pngs
for p in pngs:
    assert os.path.basename(p).startswith("write-cliff-0.8t-"), p
    data = open(p, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000, p
print(f"ok - write cliff at {t:.0f} s: {fob:.1f} -> {after:.1f} KIOPS, 5 plots")
PY
