#!/usr/bin/env bash
# scripts/guest/guest-run.sh boots a guest once more only when it hung, or its
# kernel reported an RCU stall, before the script began; a hang once the
# script runs is a failure.  QEMU here is a stand-in that plays each case
# on the two serial files (the real image's initramfs is still built).
#
#   tests/guest/test_guest_retry.sh [QEMU]   (QEMU is not used)
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

# The stand-in: boot N of case CASE (FAKE_DIR/case) writes the console
# (first file chardev) and the script's port (second), then ends or waits
# for SIGTERM.  stall: an RCU stall report, then waits.  hang: nothing.
# late: the script begins, then an RCU stall report; it never ends.
cat >"$tmp/qemu" <<'EOF'
#!/usr/bin/env bash
serials=() pidfile=''
while [ $# -gt 0 ]; do
    case $1 in
    -chardev)
        case $2 in
        file,*) path=${2#*path=}; serials+=("${path%%,*}") ;;
        esac
        shift ;;
    -pidfile) pidfile=$2; shift ;;
    esac
    shift
done
echo $$ >"$pidfile"
n=$(($(cat "$FAKE_DIR/boots" 2>/dev/null || echo 0) + 1))
echo $n >"$FAKE_DIR/boots"
con=${serials[0]} out=${serials[1]}
trap 'echo term >>"$FAKE_DIR/signals"; exit 0' TERM
finish() {
    printf '===H3100-GUEST-BEGIN===\nhello\n===H3100-GUEST-END rc=0===\n' >>"$out"
    exit 0
}
stall() {
    printf '[   25.786631] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n' >>"$con"
    printf '[   10.223088] NMI backtrace for cpu 0 skipped: idling at native_safe_halt+0xb/0x10\n' >>"$con"
}
printf '[    1.000000] nvme nvme0: pci function 0000:00:03.0\n' >>"$con"
case $(cat "$FAKE_DIR/case"):$n in
stall:1|twice:*) stall ;;
hang:1) ;;
late:*) printf '===H3100-GUEST-BEGIN===\nhello\n' >>"$out"; stall ;;
*) finish ;;
esac
sleep 60 &
wait $!
EOF
chmod +x "$tmp/qemu"

# run CASE TIMEOUT: guest-run.sh with the stand-in; sets rc, boots, secs
run() {
    rm -f "$tmp/boots" "$tmp/signals"
    echo "$1" >"$tmp/case"
    local start=$SECONDS
    echo 'echo hello' >"$tmp/run.sh"
    FAKE_DIR=$tmp "$GUEST_RUN" --qemu "$tmp/qemu" --accel tcg \
        --no-disk --timeout "$2" "$tmp/run.sh" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    boots=$(cat "$tmp/boots" 2>/dev/null || echo 0)
    secs=$((SECONDS - start))
}

run stall 60
check "$([ "$rc" = 0 ] && [ "$boots" = 2 ]; echo $?)" \
    "an RCU stall before the script: a second boot runs it (exit $rc, $boots boots)"
check "$([ "$secs" -lt 30 ]; echo $?)" "the stalled boot ends without waiting for the 60 s time-out (${secs} s)"
grep -q 'RCU stall before the script began' "$tmp/err"
check $? "guest-run.sh says why it boots again"
grep -q 'idling at native_safe_halt' "$tmp/err"
check $? "and shows the console's stall lines"
check "$([ "$(cat "$tmp/out")" = hello ]; echo $?)" "the second boot's script output is printed"

run hang 3
check "$([ "$rc" = 0 ] && [ "$boots" = 2 ]; echo $?)" \
    "a time-out before the script: a second boot runs it (exit $rc, $boots boots)"
grep -q 'hung before the script began' "$tmp/err"
check $? "guest-run.sh says so"

run late 3
check "$([ "$rc" = 124 ] && [ "$boots" = 1 ]; echo $?)" \
    "a stall once the script began: a time-out, no second boot (exit $rc, $boots boots)"
check "$([ "$secs" -ge 3 ]; echo $?)" "the stall watch leaves a running script alone (${secs} s)"

run twice 3
check "$([ "$rc" = 124 ] && [ "$boots" = 2 ]; echo $?)" \
    "a stall on both boots: a time-out after the second (exit $rc, $boots boots)"

run none 30
check "$([ "$rc" = 0 ] && [ "$boots" = 1 ]; echo $?)" "a boot that runs the script: one boot (exit $rc)"

finish
