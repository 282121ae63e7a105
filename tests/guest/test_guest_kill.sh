#!/usr/bin/env bash
# Guest kill test: a completed write survives QEMU's death (SIGKILL), on a
# raw and on a qcow2 image, with the default cache and no flush from the
# guest (the drive has power-loss protection, vwc=off: Linux sends none).
#
#   tests/guest/test_guest_kill.sh [QEMU]
#
# For each format, boot 1: fio writes 64 MiB of 4 KiB random writes with
# crc32c headers (libaio, QD16, O_DIRECT, no fsync); as soon as fio has
# returned, the host kills QEMU with SIGKILL (scripts/guest/guest-run.sh
# --kill-on).  Boot 2 (a new QEMU process, same image): fio --verify_only
# of the same job.  qcow2 images must also pass `qemu-img check` (leaked
# clusters are allowed: they are what a crash leaves, not corruption).
# Prints ok / not ok lines and 'N passed, N failed'.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

qemu=${1:-$H3100_BUILD/qemu-system-x86_64}
qimg=$(dirname "$(readlink -f "$qemu")")/qemu-img
[ -x "$qimg" ] || qimg="qemu-img"
formats=${H3100_KILL_FORMATS:-raw qcow2}

job() {
    cat <<GUEST
fio --name=kill --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \\
    --rw=randwrite --bs=4k --iodepth=16 --size=64M --offset=64M \\
    --verify=crc32c --verify_fatal=1 --randrepeat=1 $1 >/tmp/fio.out 2>&1
GUEST
}
{
    echo "$GUEST_PRELUDE"
    job "--do_verify=0"
    cat <<'GUEST'
r=$?
chk $r "fio: 64 MiB of 4 KiB random writes, QD16, no flush (rc $r)"
grep -E '^ *WRITE:|err=' /tmp/fio.out | sed 's/^ */  /'
echo "@kill"
sleep 600
GUEST
} >"$tmp/boot1.sh"
{
    echo "$GUEST_PRELUDE"
    job "--verify_only"
    cat <<'GUEST'
r=$?
chk $r "fio --verify_only of every block after SIGKILL (rc $r)"
grep -E '^ *READ:|err=|verify' /tmp/fio.out | sed 's/^ */  /' | head -6
exit $GUEST_FAIL
GUEST
} >"$tmp/boot2.sh"

for fmt in $formats; do
    img=$tmp/h3100.$fmt
    if [ "$fmt" = raw ]; then
        truncate -s 256M "$img"
    else
        "$qimg" create -q -f "$fmt" "$img" 256M
    fi
    check $? "$fmt: a fresh 256 MiB image"
    run_guest "$fmt boot 1" "$img" "$tmp/boot1.sh" --format "$fmt" \
        --kill-on @kill --timeout 300
    grep -q 'QEMU killed (SIGKILL)' "$tmp/$fmt boot 1.err"
    check $? "$fmt: QEMU killed with SIGKILL right after fio returned"
    if [ "$fmt" != raw ]; then
        "$qimg" check -q -f "$fmt" "$img" >"$tmp/check.out" 2>&1
        rc=$?
        [ "$rc" = 0 ] || [ "$rc" = 3 ]
        check $? "$fmt: qemu-img check after the kill (rc $rc: 0 clean, 3 leaks only)"
        sed 's/^/# /' "$tmp/check.out"
    fi
    run_guest "$fmt boot 2" "$img" "$tmp/boot2.sh" --format "$fmt" \
        --timeout 300
    rm -f "$img"
done
finish
