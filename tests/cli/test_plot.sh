#!/usr/bin/env bash
# scripts/bench/h3100-plot.sh on a telemetry file from h3100-sim: every plot is a
# real PNG of the size asked for; optional parts (the CDF line, temp_c) only
# drop their plot; bad input gives one clear error and exit 1.
# Skipped (77) when gnuplot is not installed.
set -uo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/lib.sh"
sim=$1
plot=$2
command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot not installed: skip"; exit 77; }
h3100_tmpdir plot
# shellcheck source=tests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"


# check_pngs DIR NAME...: each DIR/NAME.png a PNG of 1100 x 600 over 10 KB
# with more than a few colours' worth of content, and nothing else there
check_pngs() {
    local dir=$1
    shift
    python3 - "$dir" "$@" <<'PY'
import os, struct, sys, zlib
d, names = sys.argv[1], sys.argv[2:]
want = sorted(n + ".png" for n in names)
have = sorted(os.listdir(d))
assert have == want, f"files {have}, want {want}"
for n in want:
    data = open(os.path.join(d, n), "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{n}: not a PNG"
    w, h = struct.unpack(">II", data[16:24])
    assert data[12:16] == b"IHDR" and (w, h) == (1100, 600), f"{n}: {w}x{h}"
    assert len(data) > 10000, f"{n}: only {len(data)} bytes"
    # the image data inflates: the file is whole
    idat, pos = b"", 8
    while pos < len(data):
        ln, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + ln]
        pos += 12 + ln
    raw = zlib.decompress(idat)
    assert len(raw) >= w * h, f"{n}: {len(raw)} bytes of pixels"
    print(f"  {n}: {len(data)} bytes")
PY
}

small="--profile h3100-0.8t --set dies_per_channel=1,blocks_per_plane=264,spare_blocks_per_plane=8,pages_per_block=48,gc_bg_free=4,gc_fg_free=2,write_buffer_bytes=2M,user_bytes=2147483648"
# shellcheck disable=SC2086
if ! "$sim" $small --precondition seq --rw randwrite --iodepth 32 --numjobs 4 \
        --runtime 4 --interval 0.1 --telemetry "$tmp/tel" >/dev/null 2>&1; then
    echo "not ok - h3100-sim did not write telemetry"
    exit 1
fi

# every plot, with a title that needs quoting, and the paths printed
if "$plot" "$tmp/tel" -o "$tmp/all" --title "it's a \"test\"" >"$tmp/out" 2>"$tmp/err" &&
   [ "$(wc -l <"$tmp/out")" -eq 5 ] && [ ! -s "$tmp/err" ] &&
   while read -r p; do [ -f "$p" ] || exit 1; done <"$tmp/out" &&
   check_pngs "$tmp/all" iops latency waf cdf temperature; then
    ok "all five plots"
else
    bad "all five plots: $(cat "$tmp/out" "$tmp/err")"
fi

# --prefix names the files
if "$plot" "$tmp/tel" -o "$tmp/pre" --prefix run1 >/dev/null 2>&1 &&
   check_pngs "$tmp/pre" run1-iops run1-latency run1-waf run1-cdf run1-temperature; then
    ok "--prefix"
else
    bad "--prefix"
fi

# no CDF line: the other four, and a warning; no temp_c: no temperature plot
grep -v '^{"cdf"' "$tmp/tel" | sed 's/, "temp_c": [0-9.]*//' >"$tmp/rows-only"
if "$plot" "$tmp/rows-only" -o "$tmp/part" >/dev/null 2>"$tmp/err" &&
   grep -q "no CDF line" "$tmp/err" &&
   check_pngs "$tmp/part" iops latency waf; then
    ok "rows without cdf or temperature"
else
    bad "rows without cdf or temperature: $(cat "$tmp/err")"
fi

# expect_error WHAT ARGS...: exit 1, one error line, no PNG
expect_error() {
    local what=$1 rc
    shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
       grep -q '^\[h3100\] error: ' "$tmp/err" && [ ! -s "$tmp/out" ] &&
       [ -z "$(find "$tmp/bad" -name '*.png' 2>/dev/null)" ]; then
        ok "error: $what -> $(cat "$tmp/err")"
    else
        bad "error: $what (rc=$rc, stderr='$(cat "$tmp/err")')"
    fi
}
: >"$tmp/empty"
printf 'not json\n' >"$tmp/garbage"
printf '{"cdf": [[1.0, 1]]}\n' >"$tmp/cdf-only"
expect_error "missing file" "$plot" "$tmp/missing" -o "$tmp/bad"
expect_error "empty file" "$plot" "$tmp/empty" -o "$tmp/bad"
expect_error "not telemetry" "$plot" "$tmp/garbage" -o "$tmp/bad"
expect_error "no rows" "$plot" "$tmp/cdf-only" -o "$tmp/bad"
expect_error "no file" "$plot" -o "$tmp/bad"
expect_error "unknown option" "$plot" "$tmp/tel" --colour -o "$tmp/bad"
expect_error "no gnuplot" env H3100_GNUPLOT="$tmp/no-gnuplot" "$plot" "$tmp/tel" -o "$tmp/bad"

tap_summary
