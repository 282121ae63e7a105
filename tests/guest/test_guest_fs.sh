#!/usr/bin/env bash
# Guest filesystem test: ext4 and xfs on the H3100 from Linux.
#
#   tests/guest/test_guest_fs.sh [QEMU]
#
# One boot on a sparse 512 MiB raw file.  For ext4 (built into the kernel)
# and xfs (module from the kernel package, insmod'ed from /etc/h3100-kmods):
# mkfs on /dev/nvme0n1, mount, write a tree of files (random data, 4 KiB to
# 8 MiB, about 25 MiB) with a SHA-256 manifest, sync, unmount, fsck clean
# (e2fsck -fn / xfs_repair -n), mount again and check the manifest (read from
# the drive: the unmount dropped the cache), unmount.  Prints ok / not ok
# lines and 'N passed, N failed'.  Environment: H3100_ACCEL, H3100_CACHE,
# TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

disk=$tmp/h3100.raw
truncate -s 512M "$disk"

{
    echo "$GUEST_PRELUDE"
    cat <<'GUEST'
load_kmods; chk $? "insmod $(cat /etc/h3100-kmods | sed 's|.*/||' | tr '\n' ' ')"
grep -qw xfs /proc/filesystems; chk $? "xfs registered in /proc/filesystems"
grep -qw ext4 /proc/filesystems; chk $? "ext4 registered in /proc/filesystems"
# the files: random data, written once to /tmp and copied to each filesystem
mkdir -p /tmp/src/a/b /tmp/src/c
i=0
for kb in 4 12 64 128 500 1024 2048 4096 8192 8192; do
    i=$((i + 1))
    d=/tmp/src; [ $((i % 3)) = 1 ] && d=/tmp/src/a/b; [ $((i % 3)) = 2 ] && d=/tmp/src/c
    dd if=/dev/urandom of=$d/f$i bs=1024 count=$kb 2>/dev/null
done
for j in $(seq 1 200); do echo "small file $j" >/tmp/src/a/s$j; done
(cd /tmp/src && find . -type f | sort | xargs sha256sum) >/tmp/manifest
echo "$(wc -l </tmp/manifest) files, $(du -sk /tmp/src | cut -f1) KiB"
mkdir -p /mnt
for fs in ext4 xfs; do
    case $fs in
    ext4) mkfs="mkfs.ext4 -F -q"; fsck="e2fsck -fn" ;;
    xfs) mkfs="mkfs.xfs -f -q"; fsck="xfs_repair -n" ;;
    esac
    $mkfs /dev/nvme0n1 >/tmp/mkfs.$fs 2>&1; chk $? "$fs: $mkfs /dev/nvme0n1"
    mount -t $fs /dev/nvme0n1 /mnt; chk $? "$fs: mount"
    cp -a /tmp/src/. /mnt/ && sync; chk $? "$fs: write $(wc -l </tmp/manifest) files + sync"
    df -k /mnt | tail -1 | sed 's/^/  df: /'
    umount /mnt; chk $? "$fs: unmount"
    $fsck /dev/nvme0n1 >/tmp/fsck.$fs 2>&1; r=$?
    chk $r "$fs: $fsck clean (rc $r)"
    [ "$r" = 0 ] || sed 's/^/  /' /tmp/fsck.$fs | tail -15
    mount -t $fs -o ro /dev/nvme0n1 /mnt; chk $? "$fs: mount again (ro)"
    (cd /mnt && sha256sum -c -s /tmp/manifest); chk $? "$fs: every file reads back (SHA-256 manifest)"
    umount /mnt; chk $? "$fs: unmount"
done
echo "smart-log: data_units_written $(smart data_units_written), host_write_commands $(smart host_write_commands)"
exit $GUEST_FAIL
GUEST
} >"$tmp/fs.sh"

run_guest boot "$disk" "$tmp/fs.sh" --timeout 240
finish
