#!/usr/bin/env bash
# Fuzz the device and the state-file loader (a campaign, not a test).
#
#   scripts/campaign/fuzz.sh build                 build both fuzzers (clang, ASan,
#                                         UBSan, libFuzzer)
#   scripts/campaign/fuzz.sh device CONFIG SECS    QEMU's generic-fuzz on the device;
#                                         CONFIG: main | main-notiming |
#                                         iothread | iothread-notiming |
#                                         iothread2 (I/O queues in two
#                                         IOThreads, iothread-vq-mapping)
#   scripts/campaign/fuzz.sh state SECS            the state-file loader
#   scripts/campaign/fuzz.sh migrate SECS          the migrated model's receiver
#   scripts/campaign/fuzz.sh state-coverage        models/state.c's line coverage
#   scripts/campaign/fuzz.sh all SECS              every target, SECS each
#
# Options via the environment: FUZZ_DIR (default build-fuzz: QEMU's fuzz
# build, corpora, crashes, logs), FUZZ_JOBS (libFuzzer -jobs, default 1),
# FUZZ_RUNS (stop a target after that many executions, the IOThread
# configurations' fork mode too, which ignores -runs), FUZZ_FLAGS (more
# libFuzzer flags, e.g. -seed=3), FUZZ_HANG_SECS
# (a device fuzzer under 1% of a core that long is hung: FUZZ_DIR/hangs.log
# has its stacks, its input becomes a crash artifact; default 300).  The build
# patches two races of QEMU's harness with IOThreads (tests/fuzz/*.patch,
# docs/design/robustness.md); the IOThread configurations still run in
# libFuzzer's fork mode and go on after a crash, each crash triaged by
# its stack.
# A crash is written to FUZZ_DIR/crashes/TARGET/; replay it by running the
# same fuzzer with the crash file in place of the corpus, minimise it with
# -minimize_crash=1 (docs/design/robustness.md).
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

cd "$H3100_PROJECT"
FUZZ_DIR=$(mkdir -p "${FUZZ_DIR:-build-fuzz}" && cd "${FUZZ_DIR:-build-fuzz}" &&
           pwd)
JOBS=${FUZZ_JOBS:-1}
# libFuzzer's -jobs mode writes fuzz-N.log in the working directory
PAR=()
[ "$JOBS" -gt 1 ] && PAR=(-jobs="$JOBS" -workers="$JOBS")
QFUZZ=$FUZZ_DIR/qemu-build/qemu-fuzz-x86_64

usage() { sed -n '2,29p' "$0"; exit "${1:-0}"; }

build_device_fuzzer() {
    command -v clang >/dev/null || apt-get install -y clang
    h3100_log "building qemu-fuzz-x86_64 with clang, ASan, UBSan (about 20 min)"
    CC=clang CXX=clang++ \
    H3100_QEMU_EXTRA_CONFIGURE="--enable-fuzzing --enable-asan --enable-ubsan --disable-werror" \
    H3100_QEMU_TARGETS=qemu-fuzz-x86_64 \
    H3100_QEMU_PATCHES="$H3100_PROJECT/tests/fuzz/qtest-clock-step.patch
                        $H3100_PROJECT/tests/fuzz/generic-fuzz-dma-lock.patch" \
        scripts/build-qemu.sh "$FUZZ_DIR"
}

build_state_fuzzer() {
    tests/fuzz/build-state-fuzz.sh "$FUZZ_DIR/state"
}

# llvm-cov line coverage of models/state.c over the state corpus
state_coverage() {
    mkdir -p "$FUZZ_DIR/corpus/state"
    rm -rf "$FUZZ_DIR/state/corpus"
    ln -sfn "$FUZZ_DIR/corpus/state" "$FUZZ_DIR/state/corpus"
    tests/fuzz/build-state-fuzz.sh --coverage "$FUZZ_DIR/state"
}

# run_yielding CMD...: CMD in a session of its own whose scheduling group
# (Linux's autogroup) has nice 19, so a campaign beside builds and tests
# takes only the CPU they leave.  `nice` alone does not do that: the
# kernel shares the CPU between sessions first, and a niced fuzzer in
# one session took half the machine from a test run in another.
run_yielding() {
    local pid wpid spid
    setsid "$@" &
    pid=$!
    # its own session (so its own autogroup) once setsid has run
    for _ in $(seq 100); do
        [ "$(ps -o sid= -p "$pid" | tr -d ' ')" != "$pid" ] || break
        sleep 0.01
    done
    echo 19 >"/proc/$pid/autogroup" 2>/dev/null || true
    watch_hangs "$pid" &
    wpid=$!
    spid=
    if [ -n "${STOP_LOG:-}" ]; then
        stop_at_runs "$pid" "$STOP_LOG" &
        spid=$!
    fi
    trap 'kill "$pid" "$wpid" $spid 2>/dev/null' INT TERM
    wait "$pid" || true
    kill "$wpid" $spid 2>/dev/null || true
    trap - INT TERM
}

# A hung input never ends by libFuzzer's -timeout: QEMU's threads block
# SIGALRM, so a deadlock stalled a campaign with no artifact.  Every
# FUZZ_HANG_SECS (default 300), a fuzzer of session SID that runs inputs
# (no child process) and used under 1% of a core since the last look (a
# deadlocked one still wakes now and then) is hung: its
# threads' stacks go to FUZZ_DIR/hangs.log, and a SIGSEGV makes libFuzzer
# write the input as a crash artifact (fork mode then goes on).
watch_hangs() {
    local sid=$1 secs=${FUZZ_HANG_SECS:-300} p cpu
    declare -A seen
    while sleep "$secs"; do
        for p in $(pgrep -s "$sid" -f qemu-fuzz-x86_64); do
            [ -z "$(pgrep -P "$p")" ] || { unset "seen[$p]"; continue; }
            # utime + stime, in 1/100 s
            cpu=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null) ||
                continue
            if [ -n "${seen[$p]:-}" ] && [ $((cpu - seen[$p])) -lt "$secs" ]
            then
                { echo "== $(date -u +%FT%TZ) fuzzer $p: under 1% CPU for" \
                       "${secs}s, hung; its threads:"
                  if command -v gdb >/dev/null; then
                      gdb -p "$p" -batch -ex 'thread apply all bt 30' 2>&1 ||
                          true
                  fi
                } >>"$FUZZ_DIR/hangs.log"
                kill -SEGV "$p" 2>/dev/null || true
            fi
            seen[$p]=$cpu
        done
    done
}

# the executions fork mode's last status line in LOG counts
fork_runs() {
    sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$1" | tail -1
}

# libFuzzer's fork mode ignores -runs: stop session SID's fuzzers once
# the last status line of LOG counts FUZZ_RUNS executions
stop_at_runs() {
    local sid=$1 log=$2 n
    while sleep 10; do
        n=$(fork_runs "$log")
        if [ "${n:-0}" -ge "$FUZZ_RUNS" ]; then
            kill -TERM -- "-$sid" 2>/dev/null || true
            return
        fi
    done
}

# -device options of each configuration; a 256 MiB namespace on null-co
device_args() {
    local dev="dapustor-h3100,drive=d0,model-params=user_bytes=256M"
    local obj=""
    case $1 in
    main) ;;
    main-notiming) dev+=",timing=off" ;;
    iothread) dev+=",iothread=io0"; obj="-object iothread,id=io0" ;;
    iothread-notiming)
        dev+=",iothread=io0,timing=off"; obj="-object iothread,id=io0" ;;
    iothread2)
        # a list of structs: JSON only (docs/guide/usage.md)
        obj="-object iothread,id=io1 -object iothread,id=io2"
        dev="'{\"driver\": \"dapustor-h3100\", \"drive\": \"d0\", "
        dev+="\"model-params\": \"user_bytes=256M\", "
        dev+="\"iothread-vq-mapping\": [{\"iothread\": \"io1\"}, "
        dev+="{\"iothread\": \"io2\"}]}'" ;;
    *) h3100_die "unknown device configuration: $1 (try --help)" ;;
    esac
    printf '%s' "-machine q35 $obj -drive driver=null-co,size=256M,read-zeroes=on,if=none,id=d0 -device $dev"
}

run_device() {
    local cfg=$1 secs=$2 corpus=$FUZZ_DIR/corpus/device-$1 stamp
    local crashes=$FUZZ_DIR/crashes/device-$1
    [ -x "$QFUZZ" ] || h3100_die "no $QFUZZ: run '$0 build' first"
    local flags=()
    local seeds=$FUZZ_DIR/seeds/device-$1
    mkdir -p "$corpus" "$crashes"
    # the seeds beside the corpus, every run: new seeds reach old corpora
    # (one directory per configuration: a campaign started beside another
    # removed the seeds that one was loading, and libFuzzer exited)
    rm -rf "$seeds"
    tests/fuzz/device_seeds.py "$seeds"
    local stop_log=
    case $cfg in
    iothread*) flags=(-fork=1 -ignore_crashes=1)
        [ -z "${FUZZ_RUNS:-}" ] || stop_log=$FUZZ_DIR/device-$cfg.log ;;
    *) [ -z "${FUZZ_RUNS:-}" ] || flags=(-runs="$FUZZ_RUNS") ;;
    esac
    # shellcheck disable=SC2206
    flags+=(${FUZZ_FLAGS:-})
    # written aside and renamed: a campaign starting beside this one
    # reads the whole file, never a half-written one
    tests/fuzz/gen-dict.sh "$FUZZ_DIR/nvme.dict.$cfg"
    mv "$FUZZ_DIR/nvme.dict.$cfg" "$FUZZ_DIR/nvme.dict"
    h3100_log "generic-fuzz, $cfg, ${secs}s (log: $FUZZ_DIR/device-$cfg.log)"
    stamp=$FUZZ_DIR/.start-device-$cfg
    touch "$stamp"
    # every input that once found a device bug (tests/fuzz/regressions)
    # runs at the start, in every configuration, and seeds the mutations
    QEMU_FUZZ_ARGS=$(device_args "$cfg") \
    QEMU_FUZZ_OBJECTS="dapustor* msix* pci*" \
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    STOP_LOG=$stop_log \
        run_yielding "$QFUZZ" --fuzz-target=generic-fuzz \
        -dict="$FUZZ_DIR/nvme.dict" \
        -max_total_time="$secs" "${PAR[@]}" "${flags[@]}" \
        -artifact_prefix="$crashes/" -print_final_stats=1 \
        "$corpus" "$seeds" tests/fuzz/regressions \
        >"$FUZZ_DIR/device-$cfg.log" 2>&1
    fuzz_summary "$FUZZ_DIR/device-$cfg.log" "$crashes" "$stamp"
}

# run_libfuzzer NAME WHAT SECS: build-state-fuzz.sh's fuzz_NAME on its
# corpus and seeds (state: seeds, max_len; migrate: mig-seeds, mig_max_len)
run_libfuzzer() {
    local name=$1 what=$2 secs=$3 pre='' stamp
    local corpus=$FUZZ_DIR/corpus/$name crashes=$FUZZ_DIR/crashes/$name
    local bin=$FUZZ_DIR/state/fuzz_$name
    [ "$name" = state ] || pre=mig-
    [ -x "$bin" ] || h3100_die "no $bin: run '$0 build' first"
    mkdir -p "$corpus" "$crashes"
    local flags=()
    [ -z "${FUZZ_RUNS:-}" ] || flags=(-runs="$FUZZ_RUNS")
    # shellcheck disable=SC2206
    flags+=(${FUZZ_FLAGS:-})
    h3100_log "$what, ${secs}s (log: $FUZZ_DIR/$name.log)"
    stamp=$FUZZ_DIR/.start-$name
    touch "$stamp"
    run_yielding "$bin" -max_total_time="$secs" "${PAR[@]}" "${flags[@]}" \
        -max_len="$(cat "$FUZZ_DIR/state/${pre//-/_}max_len")" \
        -artifact_prefix="$crashes/" -print_final_stats=1 \
        "$corpus" "$FUZZ_DIR/state/${pre}seeds" >"$FUZZ_DIR/$name.log" 2>&1
    fuzz_summary "$FUZZ_DIR/$name.log" "$crashes" "$stamp"
}

# executions and crashes of this run (the artifacts newer than the log's
# start, STAMP), from libFuzzer's final statistics (fork mode, which prints
# none: its last status line's count)
fuzz_summary() {
    local runs
    runs=$(grep -E '^stat::number_of_executed_units' "$1" |
           awk '{s += $2} END {print s + 0}')
    [ "$runs" != 0 ] ||
        runs=$(fork_runs "$1")
    printf 'executions: %s, crashes: %s\n' "${runs:-0}" \
        "$(find "$2" -type f -newer "$3" | wc -l)"
}

case ${1:-} in
build) build_device_fuzzer; build_state_fuzzer ;;
device) [ $# -eq 3 ] || usage 2; run_device "$2" "$3" ;;
state) [ $# -eq 2 ] || usage 2; run_libfuzzer state "state loader" "$2" ;;
migrate) [ $# -eq 2 ] || usage 2
    run_libfuzzer migrate "migration receiver" "$2" ;;
state-coverage) state_coverage ;;
all)
    [ $# -eq 2 ] || usage 2
    for c in main main-notiming iothread iothread-notiming iothread2; do
        run_device "$c" "$2"
    done
    run_libfuzzer state "state loader" "$2"
    run_libfuzzer migrate "migration receiver" "$2" ;;
-h|--help) usage ;;
*) usage 2 ;;
esac
