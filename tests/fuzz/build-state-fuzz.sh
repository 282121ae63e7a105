#!/bin/bash
# Build the libFuzzer targets for the drive-state loader (fuzz_state.c)
# and the migration receiver (fuzz_migrate.c) with ASan and UBSan, and
# their seed corpora (gen_seeds.c: OUT/seeds, gen_mig_seeds.c:
# OUT/mig-seeds); with
# --coverage, also a coverage build, run over the seeds and the corpus,
# and print models/state.c's (and the FTL check's) line coverage.
#
#   tests/fuzz/build-state-fuzz.sh [--coverage] [OUT]     (OUT: /tmp/h3100-fuzz)
#
# Then fuzz (new inputs go to OUT/corpus, crashes to OUT/crash-*):
#   OUT/fuzz_state OUT/corpus OUT/seeds -max_len=$(cat OUT/max_len) \
#       -max_total_time=1200 -jobs=1 -artifact_prefix=OUT/
#
# Needs clang with its libFuzzer runtime and llvm-profdata/llvm-cov of
# the same version (Debian 12: apt-get install clang llvm, clang 14) and
# GLib's headers.  The models are built with 4 KiB map chunks
# (FTL_CHUNK_SHIFT=10) instead of 2 MiB, so a state file with data in it
# stays tens of kilobytes; the loader's code is the same.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
coverage=0
if [ "${1:-}" = --coverage ]; then
    coverage=1
    shift
fi
out=${1:-/tmp/h3100-fuzz}
cc=${CC:-clang}

if ! command -v "$cc" >/dev/null; then
    echo "build-state-fuzz.sh: $cc not found (apt-get install clang)" >&2
    exit 1
fi
mkdir -p "$out/seeds" "$out/corpus"
read -r -a glib <<<"$(pkg-config --cflags --libs glib-2.0)"
common=(-std=gnu11 -g -O1 -DFTL_CHUNK_SHIFT=10u -I"$root/include"
        -I"$root/models" -I"$here")
models=("$root"/models/*.c)

"$cc" "${common[@]}" -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined "${models[@]}" "$here/fuzz_state.c" \
    "${glib[@]}" -lm -o "$out/fuzz_state"
"$cc" "${common[@]}" "${models[@]}" "$here/gen_seeds.c" "${glib[@]}" -lm \
    -o "$out/gen_seeds"
"$out/gen_seeds" "$out/seeds" >/dev/null
# the largest seed: libFuzzer would otherwise cut inputs at 4 KiB
stat -c %s "$out"/seeds/* | sort -n | tail -1 >"$out/max_len"
echo "built $out/fuzz_state; seeds in $out/seeds" \
    "(max_len $(cat "$out/max_len"))"

mkdir -p "$out/mig-seeds" "$out/mig-corpus"
"$cc" "${common[@]}" -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined "${models[@]}" "$here/fuzz_migrate.c" \
    "${glib[@]}" -lm -o "$out/fuzz_migrate"
"$cc" "${common[@]}" "${models[@]}" "$here/gen_mig_seeds.c" "${glib[@]}" \
    -lm -o "$out/gen_mig_seeds"
"$out/gen_mig_seeds" "$out/mig-seeds" >/dev/null
stat -c %s "$out"/mig-seeds/* | sort -n | tail -1 >"$out/mig_max_len"
echo "built $out/fuzz_migrate; seeds in $out/mig-seeds" \
    "(max_len $(cat "$out/mig_max_len"))"

if [ "$coverage" = 1 ]; then
    ver=$("$cc" -dumpversion | cut -d. -f1)
    profdata=$(command -v "llvm-profdata-$ver" || command -v llvm-profdata)
    llvmcov=$(command -v "llvm-cov-$ver" || command -v llvm-cov)
    "$cc" "${common[@]}" -fsanitize=fuzzer -fprofile-instr-generate \
        -fcoverage-mapping "${models[@]}" "$here/fuzz_state.c" \
        "${glib[@]}" -lm -o "$out/fuzz_state_cov"
    rm -f "$out"/cov-*.profraw
    LLVM_PROFILE_FILE="$out/cov-%p.profraw" "$out/fuzz_state_cov" -runs=0 \
        -max_len="$(cat "$out/max_len")" "$out/corpus" "$out/seeds" \
        >"$out/cov-run.log" 2>&1
    "$profdata" merge -sparse "$out"/cov-*.profraw -o "$out/cov.profdata"
    "$llvmcov" report "$out/fuzz_state_cov" -instr-profile="$out/cov.profdata" \
        "$root/models/state.c" "$root/models/ftl_check.c"
    "$llvmcov" show "$out/fuzz_state_cov" -instr-profile="$out/cov.profdata" \
        "$root/models/state.c" "$root/models/ftl_check.c" \
        >"$out/coverage.txt"
    echo "line by line: $out/coverage.txt"
fi
