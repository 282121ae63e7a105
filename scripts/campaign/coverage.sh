#!/usr/bin/env bash
# Line and branch coverage of the device (hw/) and the model (models/)
# inside QEMU, under the fuzz corpus and the device tests.
#
#   scripts/campaign/coverage.sh [options]
#
#   --corpus-only    replay the corpus only (no device or model tests)
#   --no-model       leave out the model's own unit and CLI tests
#   --tests LIST     the device tests to run, space-separated names as in
#                    `meson test` (default: every device-* test)
#   --out DIR        reports (default BUILD_DIR/coverage/report): the
#                    table (coverage.txt), gcovr's JSON summaries and an
#                    HTML report (html/index.html)
#
# Builds, once and then incrementally, QEMU with the device and the model
# compiled with gcov (scripts/lib/cc-instrument.sh: the rest of QEMU comes
# from ccache) in BUILD_DIR/coverage, and the project's test programs in
# BUILD_DIR (default build), and the model with its unit and CLI tests
# with gcov in BUILD_DIR/coverage/model.  Then: the corpus
# (tests/fuzz/corpus/) on its own, the device tests on top, the model's
# tests; prints per file the lines the corpus reached, the lines the
# device tests and the corpus reached, the lines with the model's tests
# too, and the branches of all.  A test that fails under the slower
# builds is reported and the run goes on.  About 20 minutes here.
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

corpus_only=0
model=1
tests=""
out=""
while [ $# -gt 0 ]; do
    case $1 in
    --corpus-only) corpus_only=1; model=0 ;;
    --no-model) model=0 ;;
    --tests) h3100_need "$@"; tests=$2; shift ;;
    --out) h3100_need "$@"; out=$2; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done

cd "$H3100_PROJECT"
build=${BUILD_DIR:-build}
cov=$build/coverage
out=${out:-$cov/report}

scripts/install-deps.sh --qemu >/dev/null
if ! command -v gcovr >/dev/null; then
    h3100_say "installing gcovr"
    h3100_as_root apt-get install -y -qq --no-install-recommends gcovr >/dev/null ||
        { h3100_as_root apt-get update -qq &&
          h3100_as_root apt-get install -y -qq --no-install-recommends gcovr >/dev/null; }
fi

h3100_meson_setup "$build" -Ddevice=enabled
h3100_say "building the test programs in $build"
meson compile -C "$build" >/dev/null
h3100_say "building QEMU with gcov on the device and the model in $cov"
H3100_INSTRUMENT=coverage \
    scripts/build-qemu.sh "$cov" >/dev/null
qemu=$(cd "$cov" && pwd)/qemu-system-x86_64
objs=$cov/qemu-build
root=$cov/qemu-src/hw/dapustor-h3100
mcov=$cov/model
if [ $model -eq 1 ]; then
    # built now, from the same sources as QEMU's: gcovr merges the two
    # only if their functions sit on the same lines
    h3100_say "building the model and its tests with gcov in $mcov"
    [ -f "$mcov/build.ninja" ] ||
        meson setup "$mcov" -Db_coverage=true -Ddevice=disabled \
            -Dplugin=disabled >/dev/null
    meson compile -C "$mcov" >/dev/null
fi
mkdir -p "$out"
rm -rf "$out/html" "$out"/*.log "$out"/*.json

# gcovr's JSON tracefile of QEMU's counters so far; $1: its name
qemu_trace() {
    gcovr --root "$root" --object-directory "$objs" \
        --exclude '.*trace-events' --exclude '.*\.h$' \
        --exclude-directories "$objs/meson-private" \
        --json "$out/$1.trace.json" "$objs" >/dev/null 2>&1
}

# a summary (and with $3, the HTML report) of the tracefiles $2...
summary() {
    local name=$1 html=$2 args=()
    shift 2
    for t in "$@"; do
        args+=(--add-tracefile "$t")
    done
    [ -z "$html" ] || args+=(--html-details "$out/html/index.html")
    gcovr --root "$root" "${args[@]}" \
        --json-summary "$out/$name.json" --json-summary-pretty >/dev/null
}

find "$objs" -name '*.gcda' -delete
h3100_say "replaying the corpus (tests/fuzz/corpus)"
H3100_CORPUS=tests/fuzz/corpus QTEST_QEMU_BINARY=$qemu \
    CK_DEFAULT_TIMEOUT=300 "$build/tests/device/test-fuzz-replay" \
    >"$out/replay.log" 2>&1 ||
    h3100_say "the replay failed under the coverage build ($out/replay.log)"
qemu_trace corpus
summary corpus "" "$out/corpus.trace.json"

failed=()
if [ $corpus_only -eq 0 ]; then
    if [ -z "$tests" ]; then
        tests=$(find "$build/tests/device" -maxdepth 1 -type f -executable \
                -name 'test-device-*' -printf '%f\n' | sed 's/^test-//' |
                sort | tr '\n' ' ')
    fi
    n=0 total=$(wc -w <<<"$tests")
    for t in $tests; do
        n=$((n + 1))
        h3100_say "[$n/$total] $t"
        if ! QTEST_QEMU_BINARY=$qemu CK_DEFAULT_TIMEOUT=300 \
                "$build/tests/device/test-$t" >"$out/$t.log" 2>&1; then
            failed+=("$t")
            h3100_say "$t failed under the coverage build ($out/$t.log)"
        fi
    done
fi
qemu_trace device
traces=("$out/device.trace.json")
if [ $model -eq 1 ]; then
    find "$mcov" -name '*.gcda' -delete
    h3100_say "the model's unit and CLI tests in $mcov"
    meson test -C "$mcov" --no-rebuild --suite unit --suite cli \
        --num-processes "$(nproc)" \
        >"$out/model-tests.log" 2>&1 || {
        failed+=("model tests")
        h3100_say "the model's tests failed under the coverage build ($out/model-tests.log)"
    }
    gcovr --root "$H3100_PROJECT" --filter "$H3100_PROJECT/models/" \
        --exclude '.*\.h$' --json "$out/model.trace.json" "$mcov" \
        >/dev/null 2>&1
    traces+=("$out/model.trace.json")
fi
mkdir -p "$out/html"
summary device "" "$out/device.trace.json"
summary all html "${traces[@]}"

python3 - "$out" "$corpus_only" <<'PY' | tee "$out/coverage.txt"
import json, os, sys
out, corpus_only = sys.argv[1], sys.argv[2] == "1"
def load(name):
    with open(os.path.join(out, name + ".json")) as f:
        return {e["filename"]: e for e in json.load(f)["files"]}
corpus, device, full = load("corpus"), load("device"), load("all")
def pct(c, t):
    return f"{100.0 * c / t:5.1f}%" if t else "    -"
print(f"{'file':<28} {'lines':>6} {'corpus':>7} {'+device':>8} "
      f"{'+model':>7} {'branches':>9}")
sums = {}
zero = {"line_covered": 0, "line_total": 0}
for name in sorted(full):
    f, c, d = full[name], corpus.get(name, zero), device.get(name, zero)
    print(f"{name:<28} {f['line_total']:>6} "
          f"{pct(c['line_covered'], f['line_total']):>7} "
          f"{pct(d['line_covered'], f['line_total']):>8} "
          f"{pct(f['line_covered'], f['line_total']):>7} "
          f"{pct(f['branch_covered'], f['branch_total']):>9}")
    top = name.split("/")[0]
    s = sums.setdefault(top, [0] * 6)
    s[0] += f["line_total"]; s[1] += c["line_covered"]
    s[2] += d["line_covered"]; s[3] += f["line_covered"]
    s[4] += f["branch_total"]; s[5] += f["branch_covered"]
for top, s in sorted(sums.items()):
    print(f"{top + '/ in all':<28} {s[0]:>6} {pct(s[1], s[0]):>7} "
          f"{pct(s[2], s[0]):>8} {pct(s[3], s[0]):>7} {pct(s[5], s[4]):>9}")
if not corpus_only:
    hw = sums.get("hw", [0] * 6)
    low = [n for n, f in full.items() if n.startswith("hw/") and
           f["line_total"] and f["line_covered"] < 0.75 * f["line_total"]]
    print(f"goal hw/ >= 90% of lines: {pct(hw[3], hw[0]).strip()}; "
          f"hw/ files under 75%: {', '.join(sorted(low)) or 'none'}")
io = [n for n in ("hw/h3100-io.c", "hw/h3100-dma.c", "hw/h3100-queue.c")]
print("goal corpus >= 70% of " + ", ".join(
    f"{n}: {pct(corpus[n]['line_covered'], corpus[n]['line_total']).strip()}"
    for n in io if n in corpus))
PY
h3100_say "HTML: $out/html/index.html"
if [ ${#failed[@]} -gt 0 ]; then
    h3100_say "tests that failed under the coverage build: ${failed[*]}"
fi
