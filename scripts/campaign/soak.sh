#!/usr/bin/env bash
# Soak the drive under load: a campaign, not a test (docs/design/soak.md).
#
#   scripts/campaign/soak.sh [options]
#
# Two boots of the Linux guest (TCG) on one 0.8 TB drive, a QEMU restart
# between them, --minutes in all (default 34).  The drive starts
# preconditioned (h3100-sim --precondition rand:1 --save: every LBA
# written, 4 free superblocks), so reclaim runs from the first write.
# In each boot the guest runs passes of 4 fio jobs with crc32c
# verification, each on its own 512 MiB region:
#   rand4k   4 KiB random writes, QD16
#   mixed    8-64 KiB random writes (bssplit), QD8
#   seq128k  128 KiB sequential writes, QD4
#   rw16k    16 KiB random read/write 70/30, QD8
# (write 192 MiB per job, then read it all back and verify), with a
# controller reset (`nvme reset`) in the middle of every second pass; the
# device saves a state checkpoint every --checkpoint seconds; boot 2
# first verifies what boot 1 wrote last (fio --verify_only, across the
# restart) and formats the namespace (`nvme format`) before every third
# pass.  The host samples QEMU's resident memory every 20 s.
#
# Results in --out (default build/soak): summary.txt (passes, verify and
# I/O errors, resets, Formats, checkpoints, reclaim, RSS after the first
# pass and its largest growth after that), rss.csv and rss.png, each
# boot's guest output and telemetry (telemetry-N.jsonl, plotted with
# scripts/bench/h3100-plot.sh as bootN-*.png).  Exit status 0 when there was no
# verify or I/O error and the memory stayed flat (grew less than 64 MiB
# after the first pass).
#
#   --minutes M       both boots together (default 34; at least 4)
#   --capacity C      an H3100 profile's, as h3100-sim --profiles names
#                     them (h3100-0.8t: 0.8T, the default)
#   --checkpoint S    state-interval of the drive, seconds (default 180)
#   --seed N          fio's and the model's seed (default 1)
#   --out DIR         where the results go (default build/soak)
#   --qemu PATH       default build/qemu-system-x86_64 (or $H3100_QEMU)
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

qemu=${H3100_QEMU:-$H3100_BUILD/qemu-system-x86_64}
sim=$H3100_BUILD/tools/h3100-sim
minutes=34
capacity=0.8T
checkpoint=180
seed=1
out=$H3100_BUILD/soak

while [ $# -gt 0 ]; do
    case $1 in
    --minutes) h3100_need "$@"; minutes=$2; shift ;;
    --capacity) h3100_need "$@"; capacity=$2; shift ;;
    --checkpoint) h3100_need "$@"; checkpoint=$2; shift ;;
    --seed) h3100_need "$@"; seed=$2; shift ;;
    --out) h3100_need "$@"; out=$2; shift ;;
    --qemu) h3100_need "$@"; qemu=$2; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
if ! [[ $minutes =~ ^[0-9]+$ ]] || [ "$minutes" -lt 4 ]; then
    h3100_die "--minutes: a whole number, at least 4"
fi
[[ $checkpoint =~ ^[1-9][0-9]*$ ]] || h3100_die "--checkpoint: seconds, e.g. 180"
[[ $seed =~ ^[0-9]+$ ]] || h3100_die "--seed: a non-negative integer"
[ -x "$qemu" ] || h3100_die "no QEMU at $qemu (scripts/test.sh builds it)"
[ -x "$sim" ] || h3100_die "no $sim (scripts/test.sh builds it)"
h3100_check_capacity "$sim" "$capacity"

profile=h3100-$(echo "$capacity" | tr 'T' 't')
mkdir -p "$out"
out=$(cd "$out" && pwd)
user_bytes=$(h3100_profile_value "$sim" "$profile" user_bytes)
[ -n "$user_bytes" ] || h3100_die "no user_bytes for $profile"

# --- the drive: preconditioned model state, sparse raw backend ------------
pre=$out/precond-$profile-$seed.state
if [ ! -s "$pre" ]; then
    h3100_say "preconditioning the model of $profile (rand:1, about a minute)"
    "$sim" --profile "$profile" --seed "$seed" --precondition rand:1 \
        --rw randwrite --runtime 0.01 --save "$pre.tmp" --json >"$out/precond.json"
    mv "$pre.tmp" "$pre"
fi
cp "$pre" "$out/drive.state"
rm -f "$out/disk.raw"
truncate -s "$user_bytes" "$out/disk.raw"
rm -f "$out"/telemetry-*.jsonl "$out"/boot*.out "$out"/boot*.err "$out/rss.csv"

half=$((minutes * 60 / 2))
devopts="capacity=$capacity,seed=$seed,state=$out/drive.state"
devopts+=",state-interval=$checkpoint,telemetry-interval=10000"

# --- the guest's passes --------------------------------------------------------
guest_script() {  # guest_script BOOT SECONDS
    cat <<GUEST
BOOT=$1
END=$2
SEED=$seed
GUEST
    echo "$GUEST_PRELUDE_SOAK"
    cat <<'GUEST'
up() { cut -d. -f1 /proc/uptime; }
deadline=$(( $(up) + END - 60 ))
jobs() {    # jobs FIO-OPTIONS...: the 4 jobs, one terse line each
    fio --ioengine=libaio --direct=1 --filename=/dev/nvme0n1 --size=192M \
        --verify=crc32c --verify_fatal=0 --randseed=$SEED --group_reporting=0 \
        --output-format=terse --terse-version=3 "$@" \
        --name=rand4k --offset=0 --rw=randwrite --bs=4k --iodepth=16 \
        --name=mixed --offset=512M --rw=randwrite --bssplit=8k/40:16k/30:64k/30 --iodepth=8 \
        --name=seq128k --offset=1024M --rw=write --bs=128k --iodepth=4 \
        --name=rw16k --offset=1536M --rw=randrw --rwmixread=30 --bs=16k --iodepth=8 \
        >/tmp/fio.t 2>/tmp/fio.e
    r=$?
    # terse v3: 5 error, 6 total I/O errors... fields: 5 = error code
    errs=$(awk -F';' '{ e += ($5 != 0) } END { print e + 0 }' /tmp/fio.t)
    verr=$(grep -c 'verify:' /tmp/fio.e)
    echo "rc=$r errs=$errs verify_errors=$verr"
}
smart_line() {
    echo "smart media_errors=$(smart media_errors) err_log=$(smart num_err_log_entries)" \
         "unsafe=$(smart unsafe_shutdowns) power_cycles=$(smart power_cycles)"
}
if [ "$BOOT" = 2 ]; then
    echo "@verify-after-restart $(jobs --verify_only)"
fi
pass=0
resets=0
formats=0
while [ "$(up)" -lt "$deadline" ]; do
    pass=$((pass + 1))
    if [ "$BOOT" = 2 ] && [ $((pass % 3)) = 0 ]; then
        nvme format /dev/nvme0n1 --ses=0 --lbaf=0 --force >/tmp/fmt 2>&1
        echo "@format rc=$?"; formats=$((formats + 1))
        sleep 1
    fi
    if [ $((pass % 2)) = 0 ]; then
        (sleep 20; nvme reset /dev/nvme0; echo "@reset rc=$?") &
        resets=$((resets + 1))
    fi
    t0=$(up)
    echo "@pass $BOOT.$pass t=$t0 $(jobs) secs=$(( $(up) - t0 ))"
    wait
    smart_line
done
echo "@done boot=$BOOT passes=$pass resets=$resets formats=$formats"
GUEST
}
# the guest prelude without the test library's ok/not ok helpers
GUEST_PRELUDE_SOAK=$(cat <<'PRELUDE'
smart() { nvme smart-log -o json /dev/nvme0 | tr -d ' ",' | awk -F: -v k="$1" '!d && $1 == k { print $2; d = 1 }'; }
PRELUDE
)

# --- host side: boots and memory ---------------------------------------------
rss_sampler() {  # rss_sampler BOOT PIDFILE: one row every 20 s
    local pid
    while [ ! -s "$2" ]; do sleep 1; done
    pid=$(cat "$2")
    while kill -0 "$pid" 2>/dev/null; do
        printf '%s,%s,%s\n' "$(( $(date +%s) - soak_start ))" "$1" \
            "$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)" \
            >>"$out/rss.csv"
        sleep 20
    done
}

soak_start=$(date +%s)
for boot in 1 2; do
    guest_script "$boot" "$half" >"$out/guest$boot.sh"
    rm -f "$out/qemu$boot.pid"
    h3100_say "boot $boot of 2: $((half / 60)) min, -device dapustor-h3100,$devopts"
    rss_sampler "$boot" "$out/qemu$boot.pid" &
    sampler=$!
    rc=0
    "$H3100_PROJECT/scripts/guest/guest-run.sh" --qemu "$qemu" --accel tcg --no-disk \
        --mem 1024 --stream --pidfile "$out/qemu$boot.pid" \
        --timeout $((half + 300)) "$out/guest$boot.sh" -- \
        -drive "file=$out/disk.raw,if=none,id=d0,format=raw" \
        -device "dapustor-h3100,id=h0,drive=d0,$devopts,telemetry=$out/telemetry-$boot.jsonl" \
        -trace h3100_pstate_checkpoint \
        >"$out/boot$boot.out" 2>"$out/boot$boot.err" || rc=$?
    wait "$sampler" 2>/dev/null || true
    [ "$rc" = 0 ] || h3100_say "boot $boot: guest-run exit $rc (see $out/boot$boot.err)"
done

# --- summary ---------------------------------------------------------------------
{
    echo "soak of $(date -u -d "@$soak_start" +%FT%TZ), $minutes min, $profile, seed $seed"
    awk '
        /^@pass / { passes++; for (i = 1; i <= NF; i++) {
                        if ($i ~ /^errs=/) io += substr($i, 6)
                        if ($i ~ /^verify_errors=/) ve += substr($i, 15)
                        if ($i ~ /^rc=/ && $i != "rc=0") bad++ } }
        /^@verify-after-restart / { for (i = 1; i <= NF; i++) {
                        if ($i ~ /^verify_errors=/) rve = substr($i, 15)
                        if ($i ~ /^errs=/) rio = substr($i, 6) } }
        /^@reset / { resets++; if ($2 != "rc=0") badreset++ }
        /^@format / { formats++; if ($2 != "rc=0") badfmt++ }
        END {
            printf "passes %d, fio runs failing %d, I/O errors %d, verify errors %d\n", passes, bad, io, ve
            printf "verify after the restart: I/O errors %s, verify errors %s\n", rio, rve
            printf "controller resets %d (failed %d), Formats %d (failed %d)\n", resets, badreset, formats, badfmt
        }' "$out/boot1.out" "$out/boot2.out"
    grep -h '^smart ' "$out/boot2.out" | tail -1
    for b in 1 2; do
        [ -s "$out/telemetry-$b.jsonl" ] || continue
        awk -v b="$b" -F'[,:{} ]+' '
            /"interval"/ { rows++; for (i = 1; i < NF; i++) {
                if ($i == "\"gc_victims\"") gv += $(i + 1)
                if ($i == "\"gc_slots_moved\"") gs += $(i + 1)
                if ($i == "\"free_superblocks\"") fs = $(i + 1)
                if ($i == "\"waf\"" && $(i + 1) + 0 > wmax) wmax = $(i + 1) } }
            END { printf "boot %s: %d telemetry rows, reclaim: %d superblocks, %d slots moved; free superblocks at the end %s, highest interval WAF %.2f\n", b, rows, gv, gs, fs, wmax }' \
            "$out/telemetry-$b.jsonl"
    done
    echo "state checkpoints: $(cat "$out"/boot*.err | grep -c 'h3100_pstate_checkpoint') (state file $(stat -c %s "$out/drive.state") bytes)"
    # the RSS after the first pass, and its largest growth after that
    first_end=$(awk '/^@pass 1.1 / { for (i = 1; i <= NF; i++) if ($i ~ /^t=/) t = substr($i, 3); print t + 0; exit }' "$out/boot1.out")
    awk -F, -v fe="${first_end:-0}" '
        $2 == 1 && !base && $1 >= fe + 60 { base = $3 }
        base && $3 - base > grow { grow = $3 - base }
        $3 > max { max = $3 }
        END { printf "RSS: %.0f MiB after the first pass, largest growth after it %.1f MiB, peak %.0f MiB\n", base / 1024, grow / 1024, max / 1024
              exit !(base && grow < 65536) }' "$out/rss.csv" && mem_ok=1 || mem_ok=0
    echo "memory flat: $([ "$mem_ok" = 1 ] && echo yes || echo no)"
} >"$out/summary.txt"
cat "$out/summary.txt"

# --- plots -------------------------------------------------------------------------
if command -v gnuplot >/dev/null; then
    gnuplot <<GP
set terminal pngcairo size 900,420
set output '$out/rss.png'
set datafile separator ','
set title 'QEMU resident memory during the soak ($profile, $minutes min)'
set xlabel 'seconds'
set ylabel 'RSS, MiB'
set key top left
plot '$out/rss.csv' using (\$2 == 1 ? \$1 : NaN):(\$3 / 1024) with linespoints title 'boot 1', \
     '' using (\$2 == 2 ? \$1 : NaN):(\$3 / 1024) with linespoints title 'boot 2 (after the restart)'
GP
    for b in 1 2; do
        if [ -s "$out/telemetry-$b.jsonl" ]; then
            "$H3100_PROJECT/scripts/bench/h3100-plot.sh" "$out/telemetry-$b.jsonl" \
                -o "$out" --prefix "boot$b" --title "soak boot $b" >/dev/null ||
                h3100_say "no plots of telemetry-$b.jsonl"
        fi
    done
    h3100_say "plots: $out/rss.png, $out/boot{1,2}-*.png"
fi
grep -q 'I/O errors 0, verify errors 0' "$out/summary.txt" &&
    grep -q '^verify after the restart: I/O errors 0, verify errors 0' "$out/summary.txt" &&
    [ "$mem_ok" = 1 ]
