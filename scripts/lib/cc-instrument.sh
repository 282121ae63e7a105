#!/usr/bin/env bash
# The compiler of an instrumented QEMU build (scripts/build-qemu.sh with
# H3100_INSTRUMENT=asan or coverage): only the device's and the model's
# sources (hw/dapustor-h3100/) get the instrumentation's flags, and every
# link its runtime.  The rest of QEMU compiles with the very command of
# the plain build, so ccache answers it from the plain build's objects:
# an instrumented QEMU costs minutes, not a second full build, and
# reports (sanitizer errors, line counts) name only the drive's code.
#
#   cc-instrument.sh MODE COMPILER ARGS...     MODE: asan | coverage
set -euo pipefail

mode=$1
shift
case $mode in
asan)
    # -fno-sanitize-recover: a UBSan report stops QEMU like an ASan one,
    # so a replay cannot pass over it
    # shellcheck disable=SC2054  # the commas separate -fsanitize's values
    flags=(-fsanitize=address,undefined -fno-sanitize-recover=undefined
           -fno-omit-frame-pointer)
    # shellcheck disable=SC2054  # the same
    link=(-fsanitize=address,undefined) ;;
coverage)
    # -O0: lines count as written, not as the optimiser merged them
    flags=(--coverage -O0)
    link=(--coverage) ;;
*)
    echo "cc-instrument.sh: unknown mode '$mode' (asan or coverage)" >&2
    exit 2 ;;
esac

compile=0 ours=0
for arg in "$@"; do
    case $arg in
    -c|-S|-E|-M|-MM) compile=1 ;;
    */dapustor-h3100/*.c) ours=1 ;;
    esac
done

extra=()
if [ $compile -eq 0 ]; then
    extra=("${link[@]}")
elif [ $ours -eq 1 ]; then
    extra=("${flags[@]}")
fi

if command -v ccache >/dev/null; then
    exec ccache "$@" "${extra[@]}"
fi
exec "$@" "${extra[@]}"
