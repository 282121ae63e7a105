#!/usr/bin/env bash
# Guest power-cut test: ext4 recovers from a power cut during a
# write-heavy job, with power-loss protection (vwc=off) and with a
# volatile write cache (vwc=on, where the cut drops every write no Flush
# covered: ext4's journal commits must be enough).
#
#   tests/guest/test_guest_powercut.sh [QEMU]
#
# For each setting, boot 1 on a sparse 512 MiB raw file: mkfs.ext4, mount,
# a file manifest written and synced (it must survive), then fio writes
# files with 4 jobs (random 4k-64k, fsync every 16 writes) and creates
# small files; 3 s into it the guest prints @cut and the host cuts the
# machine's power (`qom-set h0 power-cut machine`: QEMU runs with
# -no-reboot, so it stops there).  Boot 2 (a new QEMU, same file): mount
# (the journal is replayed), the synced manifest checks, unmount, and
# `e2fsck -fn` must be clean.  Prints ok / not ok lines and
# 'N passed, N failed'.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

cut='{"execute": "qom-set", "arguments": {"path": "/machine/peripheral/h0", "property": "power-cut", "value": "machine"}}'

{
    echo "$GUEST_PRELUDE"
    cat <<'GUEST'
mkfs.ext4 -F -q /dev/nvme0n1 >/tmp/mkfs 2>&1; chk $? "mkfs.ext4"
mkdir -p /mnt && mount -t ext4 /dev/nvme0n1 /mnt; chk $? "mount"
mkdir -p /mnt/kept
for i in $(seq 1 20); do
    dd if=/dev/urandom of=/mnt/kept/f$i bs=4096 count=$((i * 4)) 2>/dev/null
done
(cd /mnt/kept && sha256sum f* >/mnt/kept.sha256) && sync; chk $? "20 files + manifest, synced"
fio --name=heavy --directory=/mnt --ioengine=psync --rw=randwrite \
    --bsrange=4k-64k --size=24M --numjobs=4 --fsync=16 --time_based=1 \
    --runtime=600 >/tmp/fio.out 2>&1 &
(i=0; while :; do i=$((i + 1)); echo "small $i" >/mnt/s$i; done) &
sleep 3
echo "@cut"
sleep 600
GUEST
} >"$tmp/boot1.sh"
{
    echo "$GUEST_PRELUDE"
    cat <<'GUEST'
mkdir -p /mnt
mount -t ext4 /dev/nvme0n1 /mnt; chk $? "mount after the power cut (journal replayed)"
dmesg | grep -iE 'EXT4-fs.*(recover|error)' | sed 's/^/  /' | head -5
(cd /mnt/kept && sha256sum -c /mnt/kept.sha256 >/tmp/sum.out 2>&1); r=$?
chk $r "the files synced before the cut are intact (rc $r)"
[ "$r" = 0 ] || head -5 /tmp/sum.out
echo "  $(ls /mnt | grep -c '^s') small files, $(ls /mnt | grep -c '^heavy') fio files survived"
umount /mnt; chk $? "unmount"
e2fsck -fn /dev/nvme0n1 >/tmp/fsck 2>&1; r=$?
chk $r "e2fsck -fn clean (rc $r)"
[ "$r" = 0 ] || tail -15 /tmp/fsck | sed 's/^/  /'
exit $GUEST_FAIL
GUEST
} >"$tmp/boot2.sh"

for vwc in off on; do
    disk=$tmp/h3100.raw
    rm -f "$disk"
    truncate -s 512M "$disk"
    opts="vwc=$vwc,model-params=user_bytes=$((512 << 20))"
    run_guest "vwc=$vwc boot 1" "$disk" "$tmp/boot1.sh" --device-opts "$opts" \
        --qmp-on @cut "$cut" --qmp-log "$tmp/qmp-$vwc.log" --timeout 300
    grep -q '"return"' "$tmp/qmp-$vwc.log"
    check $? "vwc=$vwc: the machine's power cut during the job (QMP power-cut machine)"
    run_guest "vwc=$vwc boot 2" "$disk" "$tmp/boot2.sh" --device-opts "$opts" \
        --timeout 300
done
finish
