#!/usr/bin/env bash
# Guest restart test: data written and flushed survives a QEMU restart.
#
#   tests/guest/test_guest_restart.sh [QEMU]
#
# Boot 1 on a sparse 512 MiB raw file: fio (libaio, randwrite, bssplit
# 4k..128k, iodepth 32, 4 jobs x 16 MiB, verify=crc32c headers, fsync at the
# end of each job), then `nvme flush` and a SHA-256 of the 64 MiB region read
# with O_DIRECT.  The host checks the backing file has the same SHA-256.
# Boot 2 (a new QEMU process, same file): fio --verify_only of the same jobs
# and the same SHA-256.  Prints ok / not ok lines and 'N passed, N failed'.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

disk=$tmp/h3100.raw
truncate -s 512M "$disk"
off_mb=128   # the region: 64 MiB at 128 MiB

job() {
    cat <<GUEST
fio --name=persist --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \\
    --rw=randwrite --bssplit=4k/40:8k/20:16k/20:64k/15:128k/5 --iodepth=32 \\
    --numjobs=4 --size=16M --offset=${off_mb}M --offset_increment=16M \\
    --verify=crc32c --verify_fatal=1 --randrepeat=1 --fsync_on_close=1 \\
    --group_reporting $1 >/tmp/fio.out 2>&1
GUEST
}
{
    echo "$GUEST_PRELUDE"
    job "--do_verify=0"
    cat <<GUEST
r=\$?
chk \$r "fio randwrite 4 x 16 MiB at ${off_mb} MiB with crc32c headers (rc \$r)"
grep -E '^ *WRITE:|err=' /tmp/fio.out | sed 's/^ */  /'
nvme flush /dev/nvme0n1 >/dev/null; chk \$? "nvme flush"
echo "@sum \$(rd_sum $((off_mb * 256)) 16384)"
exit \$GUEST_FAIL
GUEST
} >"$tmp/boot1.sh"
{
    echo "$GUEST_PRELUDE"
    job "--verify_only"
    cat <<GUEST
r=\$?
chk \$r "fio --verify_only of the 4 jobs after the restart (rc \$r)"
grep -E '^ *READ:|err=|verify' /tmp/fio.out | sed 's/^ */  /' | head -6
echo "@sum \$(rd_sum $((off_mb * 256)) 16384)"
exit \$GUEST_FAIL
GUEST
} >"$tmp/boot2.sh"

run_guest boot1 "$disk" "$tmp/boot1.sh" --timeout 200
sum1=$(awk '$1 == "@sum" { print $NF }' "$tmp/boot1.out" | tail -1)
[ -n "$sum1" ]
check $? "boot 1: SHA-256 of the region ${sum1:0:16}..."
host=$(dd if="$disk" bs=1M skip="$off_mb" count=64 2>/dev/null | sha256sum | cut -d' ' -f1)
[ -n "$sum1" ] && [ "$host" = "$sum1" ]
check $? "host: the backing file holds the same 64 MiB (${host:0:16}...)"
run_guest boot2 "$disk" "$tmp/boot2.sh" --timeout 200
sum2=$(awk '$1 == "@sum" { print $NF }' "$tmp/boot2.out" | tail -1)
[ -n "$sum2" ] && [ "$sum2" = "$sum1" ]
check $? "boot 2 (after a QEMU restart): SHA-256 of the region unchanged (${sum2:0:16}...)"
finish
