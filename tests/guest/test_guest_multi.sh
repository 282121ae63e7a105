#!/usr/bin/env bash
# Guest multi-drive test: four drives with default options in one machine
# (as in a server's bays) are four drives to Linux, striped with md RAID 0.
#
#   tests/guest/test_guest_multi.sh [QEMU]
#
# Four dapustor-h3100 on four sparse 256 MiB raw files, no serial given:
# the guest sees four controllers and four namespaces, four serials, four
# subsystem NQNs, four EUI-64s; the kernel logs no duplicate controller
# or namespace ID.  mdadm builds a RAID 0 (64 KiB chunks) over them; fio
# writes it (random 4k-256k, 4 jobs, crc32c headers) and verifies it; every
# drive's SMART data-units-written grew.
# Prints ok / not ok lines and 'N passed, N failed'.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

drives=()
for i in 0 1 2 3; do
    truncate -s 256M "$tmp/d$i.raw"
    drives+=(-drive "file=$tmp/d$i.raw,if=none,id=d$i,format=raw"
             -device "dapustor-h3100,drive=d$i,model-params=user_bytes=$((256 << 20))")
done

{
    echo "$GUEST_PRELUDE"
    cat <<'GUEST'
i=0
while [ "$(ls /dev/nvme*n1 2>/dev/null | wc -l)" -lt 4 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
n=$(ls -d /sys/class/nvme/nvme* | wc -l); m=$(ls /dev/nvme*n1 | wc -l)
[ "$n" = 4 ] && [ "$m" = 4 ]; chk $? "four controllers ($n) and four namespaces ($m)"
for c in /sys/class/nvme/nvme*; do
    echo "  $(basename $c): sn $(cat $c/serial | tr -d ' '), $(cat $c/subsysnqn), eui $(cat $c/nvme*n1/eui 2>/dev/null)"
done
k=$(cat /sys/class/nvme/nvme*/serial | sort -u | wc -l); chk $([ "$k" = 4 ]; echo $?) "four serials ($k)"
k=$(cat /sys/class/nvme/nvme*/subsysnqn | sort -u | wc -l); chk $([ "$k" = 4 ]; echo $?) "four subsystem NQNs ($k)"
k=$(cat /sys/class/nvme/nvme*/nvme*n1/eui | sort -u | wc -l); chk $([ "$k" = 4 ]; echo $?) "four EUI-64s ($k)"
k=$(cat /sys/class/nvme/nvme*/nvme*n1/nguid | sort -u | wc -l); chk $([ "$k" = 4 ]; echo $?) "four NGUIDs ($k)"
! dmesg | grep -iE 'duplicate (cntlid|ids)|rejecting'; chk $? "no duplicate controller or namespace IDs in the kernel log"
load_kmods; chk $? "md and raid0 modules"
for d in /dev/nvme*n1; do echo "$(basename $d) $(nvme smart-log -o json ${d%n1} | tr -d ' ",' | awk -F: '$1 == "data_units_written" { print $2 }')"; done >/tmp/duw0
mdadm --create /dev/md0 --run --level=0 --chunk=64 --raid-devices=4 /dev/nvme0n1 /dev/nvme1n1 /dev/nvme2n1 /dev/nvme3n1 >/tmp/md.out 2>&1
r=$?; chk $r "mdadm --create RAID 0 over the four drives (rc $r)"
[ "$r" = 0 ] || cat /tmp/md.out
grep -E '^md0' /proc/mdstat | sed 's/^/  /'
fio --name=stripe --filename=/dev/md0 --ioengine=libaio --direct=1 --rw=randwrite \
    --bsrange=4k-256k --iodepth=16 --numjobs=4 --size=128M --offset_increment=128M \
    --verify=crc32c --verify_fatal=1 --randrepeat=1 --group_reporting >/tmp/fio.out 2>&1
r=$?; chk $r "fio random write + verify over the RAID 0 (4 x 128 MiB, rc $r)"
grep -E '^ *(READ|WRITE):|err=' /tmp/fio.out | sed 's/^ */  /'
grows=0
for d in /dev/nvme*n1; do
    b=$(awk -v d=$(basename $d) '$1 == d { print $2 }' /tmp/duw0)
    a=$(nvme smart-log -o json ${d%n1} | tr -d ' ",' | awk -F: '$1 == "data_units_written" { print $2 }')
    echo "  $(basename $d): data units written $b -> $a"
    [ "$a" -gt "$b" ] && grows=$((grows + 1))
done
chk $([ "$grows" = 4 ]; echo $?) "every drive took a share of the stripes ($grows of 4)"
mdadm --stop /dev/md0 >/dev/null 2>&1; chk $? "mdadm --stop"
exit $GUEST_FAIL
GUEST
} >"$tmp/multi.sh"

run_guest multi "$tmp/d0.raw" "$tmp/multi.sh" --no-disk --timeout 400 -- "${drives[@]}"
finish
