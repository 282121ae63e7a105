#!/usr/bin/env bash
# h3100-sim as a user meets it: bad options give one clear line and exit
# 1; runs print what they promise; the same seed gives the same figures;
# saved state round-trips; the 0.8 TB datasheet is within 5%.
set -uo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/lib.sh"
sim=$1
h3100_tmpdir sim
# shellcheck source=tests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"


# expect_error ARGS...: exit 1, exactly one line on stderr, nothing on stdout
expect_error() {
    local out err rc
    out=$("$sim" "$@" 2>"$tmp/err")
    rc=$?
    err=$(cat "$tmp/err")
    if [ "$rc" -eq 1 ] && [ -z "$out" ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] &&
       [[ $err == h3100-sim:* ]]; then
        ok "error: $* -> $err"
    else
        bad "error: $* (rc=$rc, stderr='$err', stdout='$out')"
    fi
}

expect_error --profile h3100-9t
expect_error --rw sideways
expect_error --bs 1000
expect_error --bs 4k:0
expect_error --iodepth 0
expect_error --span 2.5
expect_error --runtime -1
expect_error --precondition rand:x
expect_error --precondition seq:0
expect_error --precondition seq:1.5
expect_error --set no_such_knob=1
expect_error --set channels=0
expect_error --set blocks_per_plane=200
expect_error --load "$tmp/missing"
expect_error --no-such-option
expect_error stray-argument

small="--profile h3100-0.8t --set dies_per_channel=1,blocks_per_plane=264,spare_blocks_per_plane=8,pages_per_block=48,gc_bg_free=4,gc_fg_free=2,write_buffer_bytes=2M,user_bytes=2147483648"

# a mixed run prints IOPS, latency percentiles, WAF and counters
# shellcheck disable=SC2086
if "$sim" $small --precondition rand:1 --rw randrw --rwmixread 70 \
        --bs 4k:50,8k:30,64k:20 --iodepth 8 --numjobs 2 --runtime 0.2 \
        >"$tmp/out" 2>/dev/null &&
   grep -q "read : IOPS=" "$tmp/out" && grep -q "write: IOPS=" "$tmp/out" &&
   grep -q "p99.9=" "$tmp/out" && grep -q "WAF=" "$tmp/out"; then
    ok "mixed run report"
else
    bad "mixed run report: $(cat "$tmp/out")"
fi

# --interval prints one row per interval
# shellcheck disable=SC2086
rows=$("$sim" $small --rw randwrite --iodepth 32 --runtime 1 --interval 0.1 \
       2>/dev/null | grep -cE '^ +[0-9]+\.[0-9]+ ')
if [ "$rows" -eq 10 ]; then ok "interval rows"; else bad "interval rows: $rows"; fi

# --telemetry: one JSON row per interval, then the run's latency CDF
# check_telemetry FILE ROWS INTERVAL
check_telemetry() {
    python3 - "$@" <<'PY'
import json, sys
path, want, step = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
keys = ["t", "interval", "iops", "read_iops", "write_iops", "mbps",
        "lat_mean_us", "lat_p50_us", "lat_p99_us", "lat_p999_us",
        "lat_max_us", "waf", "lifetime_waf", "host_write_bytes",
        "nand_write_bytes", "free_superblocks", "gc_victims",
        "gc_slots_moved", "wbuf_stalls", "temp_c", "throttle"]
lines = open(path).read().splitlines()
rows = [json.loads(l) for l in lines[:-1]]
cdf = json.loads(lines[-1])["cdf"]
assert len(rows) == want, f"{len(rows)} rows, want {want}"
for i, r in enumerate(rows):
    assert list(r) == keys, f"row {i} keys {list(r)}"
    assert abs(r["t"] - (i + 1) * step) < 1e-6, f"row {i} t={r['t']}"
    assert abs(r["interval"] - step) < 1e-6, r
    assert abs(r["read_iops"] + r["write_iops"] - r["iops"]) < 0.2, r
    assert r["iops"] > 0 and r["lat_p50_us"] <= r["lat_p99_us"] <= \
        r["lat_p999_us"] <= r["lat_max_us"], r
    if r["host_write_bytes"]:
        assert abs(r["waf"] - r["nand_write_bytes"] / r["host_write_bytes"]) < 1e-3, r
    assert 0 <= r["temp_c"] < 150 and r["throttle"] in (0, 1, 2), r
assert all(a["t"] < b["t"] for a, b in zip(rows, rows[1:])), "t not increasing"
assert 2 <= len(cdf) <= 600, f"{len(cdf)} cdf points"
assert all(a[0] < b[0] and a[1] <= b[1] for a, b in zip(cdf, cdf[1:])), "cdf not monotonic"
assert cdf[-1][1] == 1.0 and 0 < cdf[0][1] < 1, (cdf[0], cdf[-1])
assert abs(cdf[-1][0] - max(r["lat_max_us"] for r in rows)) < 1e-3, cdf[-1]
print(f"  {len(rows)} rows, {len(cdf)} cdf points, last {rows[-1]['iops']:.0f} IOPS")
PY
}
# shellcheck disable=SC2086
if "$sim" $small --precondition seq --rw randrw --rwmixread 30 --iodepth 32 \
        --numjobs 2 --runtime 1.5 --interval 0.1 --telemetry "$tmp/tel" \
        >"$tmp/out" 2>/dev/null &&
   [ "$(grep -cE '^ +[0-9]+\.[0-9]+ ' "$tmp/out")" -eq 15 ] &&
   check_telemetry "$tmp/tel" 15 0.1; then
    ok "telemetry rows and cdf"
else
    bad "telemetry rows and cdf: $(head -c 300 "$tmp/tel" 2>/dev/null)"
fi
# without --interval: a row per simulated second, none on stdout
# shellcheck disable=SC2086
if "$sim" $small --rw randwrite --iodepth 8 --runtime 3 \
        --telemetry "$tmp/tel1" >"$tmp/out" 2>/dev/null &&
   ! grep -qE '^ +[0-9]+\.[0-9]+ ' "$tmp/out" &&
   check_telemetry "$tmp/tel1" 3 1.0; then
    ok "telemetry default interval"
else
    bad "telemetry default interval: $(cat "$tmp/out")"
fi
expect_error --telemetry "$tmp/no/such/dir/tel"

# the same seed gives the same figures, another seed others
run() {
    # shellcheck disable=SC2086
    "$sim" $small --precondition rand:1 --rw randrw --iodepth 16 \
        --runtime 0.1 --seed "$1" --json 2>/dev/null |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["iops"], d["lat"]["mean_us"], d["nand_write_bytes"])'
}
a=$(run 3); b=$(run 3); c=$(run 4)
if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ]; then
    ok "deterministic seeds ($a)"
else
    bad "deterministic seeds: '$a' '$b' '$c'"
fi

# saved state loads and keeps the drive's history
# shellcheck disable=SC2086
"$sim" $small --precondition rand:2 --runtime 0.01 --save "$tmp/s" >/dev/null 2>&1
# shellcheck disable=SC2086
if "$sim" $small --load "$tmp/s" --rw randwrite --runtime 0.05 --json 2>/dev/null |
   python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["lifetime_waf"] > 1.3 else 1)'; then
    ok "state save and load"
else
    bad "state save and load"
fi
printf 'garbage' | dd of="$tmp/s" bs=1 seek=100 conv=notrunc 2>/dev/null
# shellcheck disable=SC2086
expect_error $small --load "$tmp/s"
expect_error --load "$tmp/s"

# a version 4 file, with the reverse maps files held until version 5
# (data/state-v4-tiny.gz, saved by h3100-sim of 2026-12-04: a 48 MiB
# drive after rand:3), loads and goes on exactly as that build went on
# from it: the maps dropped at loading are built again when reclaim
# needs them, and nothing the drive does depends on which it holds.
tiny="--profile h3100-0.8t --set channels=1,dies_per_channel=1,blocks_per_plane=64,spare_blocks_per_plane=8,pages_per_block=48,user_bytes=50331648,gc_bg_free=4,gc_fg_free=2,write_buffer_bytes=2M"
gzip -dc "$(dirname "$0")/data/state-v4-tiny.gz" >"$tmp/v4" 2>/dev/null
# shellcheck disable=SC2086
got=$("$sim" $tiny --load "$tmp/v4" --rw randrw --bs 4k --iodepth 4 \
      --runtime 0.2 --seed 6 --json 2>/dev/null |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["iops"], d["lat"]["mean_us"], d["lat"]["p99_us"], d["gc_victims"], d["gc_slots_moved"], d["nand_write_bytes"], d["lifetime_waf"])')
if [ "$got" = "16920.0 236.318 2482.176 6 974 290672640 1.3722" ]; then
    ok "a version 4 file with reverse maps goes on as before ($got)"
else
    bad "version 4 file: '$got'"
fi

# --script: a procedure's steps in order on one drive, one row each
cat >"$tmp/proc.ini" <<'INI'
# fill, then two workloads on half the drive with a pause between
[global]
span=50%
iodepth=16
runtime=0.1s
[fill]
precondition=seq
[4k random write]
rw=randwrite
[quiet]
idle=1s
[64k read]
rw=read
bs=64k
INI
# shellcheck disable=SC2086
if "$sim" $small --script "$tmp/proc.ini" >"$tmp/proc.out" 2>"$tmp/proc.err" &&
   grep -q '^4k random write  *randwrite 4k 1x16 50% ' "$tmp/proc.out" &&
   grep -q '^quiet  *idle 1.0 s ' "$tmp/proc.out" &&
   grep -q '^64k read  *read 64k 1x16 50% ' "$tmp/proc.out" &&
   grep -q 'step 4/4: 64k read' "$tmp/proc.err" &&
   [ "$(grep -c . "$tmp/proc.out")" = 6 ]; then
    ok "--script runs the steps in order, one row each"
else
    bad "--script: $(cat "$tmp/proc.out" "$tmp/proc.err")"
fi
# shellcheck disable=SC2086
if "$sim" $small --script "$tmp/proc.ini" --json 2>/dev/null >"$tmp/proc.json" &&
   python3 - "$tmp/proc.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert [s["name"] for s in r["steps"]] == ["fill", "4k random write", "quiet", "64k read"], r
assert [s["kind"] for s in r["steps"]] == ["precondition", "run", "idle", "run"], r
w, rd = r["steps"][1]["result"], r["steps"][3]["result"]
assert w["write_iops"] > 0 and w["read_iops"] == 0, w
assert rd["read_iops"] > 0 and rd["bs"] == "65536", rd
assert r["steps"][2]["seconds"] == 1.0, r["steps"][2]
PY
then
    ok "--script --json: every step with its figures"
else
    bad "--script --json: $(cat "$tmp/proc.json")"
fi
printf '[a]\nrw=read\n[a]\nrw=write\n' >"$tmp/dup.ini"
printf '[a]\nrw=read\n[b]\nbsize=4k\n' >"$tmp/key.ini"
expect_error --script "$tmp/dup.ini"
expect_error --script "$tmp/key.ini"
expect_error --script "$tmp/missing.ini"
expect_error --script "$tmp/proc.ini" --rw read
expect_error --script "$tmp/proc.ini" --rwmixread 50

# the datasheet of one capacity, as JSON, within 5% everywhere
if "$sim" --datasheet --profile h3100-0.8t --json 2>/dev/null >"$tmp/ds.json" &&
   python3 - "$tmp/ds.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
keys = {"metric", "capacity", "target", "model", "error_pct"}
assert len(rows) >= 9, rows
for r in rows:
    assert keys <= set(r), r
    assert abs(r["error_pct"]) <= 5.0, r
    print(f'  {r["metric"]:24} {r["target"]:10.1f} {r["model"]:10.1f} {r["error_pct"]:6.2f}%')
PY
then
    ok "datasheet h3100-0.8t within 5%"
else
    bad "datasheet h3100-0.8t"
fi

tap_summary
