#!/usr/bin/env bash
# Guest kernel-generation test: one boot of one of Debian's cloud kernels
# (5.10, 6.1, 6.12, newest: scripts/guest/guest-image.sh --kernel) with the
# drive, and with nvme-cli of three generations in the guest: the image's
# (the host's, 2.3 on Debian 12), bullseye's 1.12 and sid's newest
# (scripts/guest/guest-nvme-cli.sh, unpacked, not installed).
#
#   tests/guest/test_guest_kernel.sh [QEMU]    (H3100_TEST_KERNEL=5.10 ...)
#
# On a sparse 512 MiB drive, in order:
#   identity     PCI IDs (hw/h3100.h), sysfs model and firmware
#   nvme-cli     with each of the three: list, id-ctrl (model as sysfs, NVMe
#                1.3), id-ns (size as the block device), smart-log,
#                error-log, and the OCP (`ocp smart-add-log`) and DapuStor
#                (`dapustor smart-log-add`) plugins where that nvme-cli
#                has them
#   fio          random write + verify with libaio and with io_uring
#   filesystems  ext4 and xfs: mkfs, write, unmount, fsck, read back
#   reset        `nvme reset`: the controller comes back live, data intact
#   namespaces   with the kernel's own generation of nvme-cli (5.10: 1.12,
#                newest: sid's, else the image's): delete namespace 1,
#                create two, attach them (Linux finds them through the
#                drive's Namespace Attribute Changed event, else a
#                rescan), write and read each, detach and delete them
#   kernel log   no nvme line at warning level or worse
# Then, from the device's trace events, what this driver generation used
# of the drive (docs/guide/guests.md): the features it set, shadow doorbells,
# SGLs, the logs it read, polled queues.
# Prints ok / not ok lines and 'N passed, N failed'.
# Environment: H3100_TEST_KERNEL (5.10 | 6.1 | 6.12 | newest; default the
# release's), H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

kernel=${H3100_TEST_KERNEL:-}
scripts=$GUEST_HERE/../../scripts
kopt=()
[ -z "$kernel" ] || kopt=(--kernel "$kernel")
hdr=$GUEST_HERE/../../hw/h3100.h
vid=$(awk '$2 == "H3100_PCI_VENDOR_ID" { print $3 }' "$hdr")
did=$(awk '$2 == "H3100_PCI_DEVICE_ID" { print $3 }' "$hdr")

# the other generations of nvme-cli, one archive each
files=()
for s in bullseye sid; do
    d=$("$scripts/guest/guest-nvme-cli.sh" "$s" 2>"$tmp/nvme-$s.err")
    check $? "nvme-cli of $s for the guest (scripts/guest/guest-nvme-cli.sh $s)"
    [ -n "$d" ] || { sed 's/^/# /' "$tmp/nvme-$s.err"; continue; }
    tar -C "$d" -cf "$tmp/nvme-$s.tar" .
    files+=(--file "$tmp/nvme-$s.tar")
done
# the kernel's own generation drives the namespace management; 5.10 is
# the last generation with Streams (nvme_core.streams=1, off by default;
# Linux 5.18 dropped them): on, to see it enable them on the drive
append=()
case $kernel in
5.10) own=n_bullseye; append=(--append nvme_core.streams=1) ;;
newest) own=n_sid ;;
*) own=nvme ;;
esac

disk=$tmp/h3100.raw
truncate -s 512M "$disk"
{
    echo "$GUEST_PRELUDE"
    echo "VID=$vid DID=$did OWN=$own"
    cat <<'GUEST'
N=/dev/nvme0
# a mark in the device's trace: what comes before is the driver's own
# bring-up, what comes after is mostly this script's nvme-cli (Power
# Management, fid 0x2, to the power state the drive is in: Linux never
# sends it)
nvme set-feature $N --feature-id=2 --value=0 >/dev/null 2>&1
echo "  kernel $(uname -r)"
for m in nvme_core nvme; do
    echo "@params $m: $(ls /sys/module/$m/parameters 2>/dev/null | tr '\n' ' ')"
done
load_kmods; chk $? "insmod $(sed 's|.*/||' /etc/h3100-kmods | tr '\n' ' ')"
# other nvme-clis: unpacked with their loader and libraries
for s in bullseye sid; do
    mkdir -p /opt/$s && tar -xf /guest/nvme-$s.tar -C /opt/$s 2>/dev/null
done
n_bullseye() { /opt/bullseye/ld-linux-x86-64.so.2 --library-path /opt/bullseye /opt/bullseye/nvme "$@"; }
n_sid() { /opt/sid/ld-linux-x86-64.so.2 --library-path /opt/sid /opt/sid/nvme "$@"; }
field() { awk -F' *: ' -v k="$1" '!d && $1 == k { print $2; d = 1 }' | sed 's/ *$//'; }
sysf() { sed 's/ *$//' "/sys/class/nvme/nvme0/$1"; }

# --- identity ---
dev=/sys/class/nvme/nvme0/device
[ "$(cat $dev/vendor)" = "$VID" ] && [ "$(cat $dev/device)" = "$DID" ]
chk $? "PCI $(cat $dev/vendor):$(cat $dev/device), class $(cat $dev/class)"
model=$(sysf model)
case $model in "DAPUSTOR DPH31"*) true ;; *) false ;; esac
chk $? "sysfs: model '$model', firmware $(sysf firmware_rev), serial $(sysf serial)"

# --- nvme-cli reports, three generations ---
plugin() { $1 help 2>&1 | awk -v p="$2" '/installed plugin/ { on = 1 } on && $1 == p { f = 1 } END { exit !f }'; }
lba_total=$(cat /sys/block/nvme0n1/size)
for v in n_bullseye nvme n_sid; do
    ver=$($v version 2>/dev/null | awk '{ print $3; exit }')
    [ -n "$ver" ] || { bad "$v: does not run"; continue; }
    t="nvme-cli $ver"
    $v list 2>/dev/null | grep -q '/dev/nvme0n1 '; chk $? "$t: list shows /dev/nvme0n1"
    $v id-ctrl $N >/tmp/idc 2>&1; r=$?
    mn=$(field mn </tmp/idc); vs=$(field ver </tmp/idc)
    [ $r = 0 ] && [ "$mn" = "$model" ] && [ "$((vs))" = $((0x10300)) ]
    chk $? "$t: id-ctrl: mn '$mn', ver $vs"
    nsze=$($v id-ns /dev/nvme0n1 2>/dev/null | field nsze)
    [ "$((nsze))" = "$lba_total" ]; chk $? "$t: id-ns: nsze $nsze = $lba_total blocks"
    $v smart-log $N >/tmp/smart 2>&1 && grep -qi '^temperature' /tmp/smart
    chk $? "$t: smart-log ($(grep -i '^temperature' /tmp/smart | tr -s ' '))"
    $v error-log $N >/tmp/err 2>&1; chk $? "$t: error-log"
    if plugin $v ocp; then
        $v ocp smart-add-log $N >/tmp/ocp 2>&1 && grep -qi 'physical media units written' /tmp/ocp
        chk $? "$t: ocp smart-add-log"
    else
        echo "  $t: no OCP plugin"
    fi
    if plugin $v dapustor; then
        $v dapustor smart-log-add $N >/tmp/dapu 2>&1; chk $? "$t: dapustor smart-log-add"
    else
        echo "  $t: no DapuStor plugin"
    fi
done

# --- fio verify, both engines ---
off=0
for e in libaio io_uring; do
    fio --name=$e --filename=/dev/nvme0n1 --ioengine=$e --direct=1 --rw=randwrite \
        --bsrange=4k-128k --iodepth=16 --offset=${off}M --size=24M --verify=crc32c \
        --verify_fatal=1 --randrepeat=1 >/tmp/fio.out 2>&1
    r=$?; chk $r "fio $e random write + verify (rc $r)"
    [ $r = 0 ] || tail -5 /tmp/fio.out
    off=$((off + 32))
done

# --- ext4 and xfs ---
mkdir -p /mnt
dd if=/dev/urandom of=/tmp/f bs=1M count=8 2>/dev/null
sum=$(sha256sum </tmp/f)
for fs in ext4 xfs; do
    case $fs in
    ext4) mkfs="mkfs.ext4 -F -q"; fsck="e2fsck -fn" ;;
    xfs) mkfs="mkfs.xfs -f -q"; fsck="xfs_repair -n" ;;
    esac
    $mkfs /dev/nvme0n1 >/tmp/mkfs 2>&1 && mount -t $fs /dev/nvme0n1 /mnt &&
        cp /tmp/f /mnt/f && sync && umount /mnt && $fsck /dev/nvme0n1 >/tmp/fsck 2>&1 &&
        mount -t $fs /dev/nvme0n1 /mnt && [ "$(sha256sum </mnt/f)" = "$sum" ]
    chk $? "$fs: mkfs, write, unmount, fsck clean, read back"
    umount /mnt 2>/dev/null
done

# --- controller reset ---
before=$(rd_sum 0 256)
nvme reset $N; r=$?
i=0; while [ "$(cat /sys/class/nvme/nvme0/state)" != live ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
[ $r = 0 ] && [ "$(cat /sys/class/nvme/nvme0/state)" = live ] && [ "$(rd_sum 0 256)" = "$before" ]
chk $? "nvme reset: controller $(cat /sys/class/nvme/nvme0/state), the first MiB read back the same"

# --- namespace management with the kernel's own generation of nvme-cli ---
appears() { i=0; while [ ! -b "$1" ] && [ $i -lt ${2:-50} ]; do sleep 0.2; i=$((i + 1)); done; [ -b "$1" ]; }
gone() { i=0; while [ -b "$1" ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done; [ ! -b "$1" ]; }
o="nvme-cli $($OWN version | awk '{ print $3; exit }')"
$OWN delete-ns $N --namespace-id=1 >/dev/null 2>&1 && gone /dev/nvme0n1
chk $? "$o: delete-ns 1, Linux dropped nvme0n1"
nsid() { sed -n 's/.*nsid:* *\([0-9]*\).*/\1/p'; }
a=$($OWN create-ns $N --nsze=131072 --ncap=131072 --flbas=0 2>&1 | nsid)
b=$($OWN create-ns $N --nsze=8192 --ncap=8192 --flbas=1 2>&1 | nsid)
[ "$a" = 1 ] && [ "$b" = 2 ]; chk $? "$o: create-ns 64 MiB of 512 B and 32 MiB of 4 KiB blocks: nsid $a, $b"
$OWN attach-ns $N --namespace-id=1 --controllers=0 >/dev/null 2>&1 &&
    $OWN attach-ns $N --namespace-id=2 --controllers=0 >/dev/null 2>&1
chk $? "$o: attach-ns 1 and 2"
how="the drive's event"
if ! { appears /dev/nvme0n1 25 && appears /dev/nvme0n2 25; }; then
    how="ns-rescan"
    $OWN ns-rescan $N 2>/dev/null
fi
appears /dev/nvme0n1 && appears /dev/nvme0n2
chk $? "Linux made nvme0n1 and nvme0n2 (through $how)"
echo "@rescan $how"
[ "$(cat /sys/block/nvme0n2/queue/logical_block_size)" = 4096 ]
chk $? "nvme0n2 has $(cat /sys/block/nvme0n2/queue/logical_block_size)-byte blocks"
dd if=/tmp/f of=/dev/nvme0n1 bs=1M oflag=direct 2>/dev/null
dd if=/tmp/f of=/dev/nvme0n2 bs=1M seek=1 oflag=direct 2>/dev/null
ra=$(dd if=/dev/nvme0n1 bs=1M count=8 iflag=direct 2>/dev/null | sha256sum)
rb=$(dd if=/dev/nvme0n2 bs=1M skip=1 count=8 iflag=direct 2>/dev/null | sha256sum)
[ "$ra" = "$sum" ] && [ "$rb" = "$sum" ]; chk $? "each new namespace reads back what was written"
$OWN detach-ns $N --namespace-id=2 --controllers=0 >/dev/null 2>&1 && gone /dev/nvme0n2
chk $? "$o: detach-ns 2, Linux dropped nvme0n2"
$OWN delete-ns $N --namespace-id=0xffffffff >/dev/null 2>&1 && gone /dev/nvme0n1
chk $? "$o: delete-ns all, Linux dropped nvme0n1"

# --- the kernel log: levels 0-4 are emergency to warning ---
# Not the filesystems' lines about themselves, and not 5.10's warning when
# nvme-cli 1.12 reads a namespace's sysfs uuid: the drive, as NVMe 1.3
# drives commonly do, identifies namespaces by EUI-64 and NGUID, no UUID
# (and 7.x's "resetting controller" line for the reset asked for, below)
dmesg -r | grep -E '^<[0-4]>' | grep -i nvme | grep -vE '\] (XFS|EXT4-fs) \(' |
    grep -v 'No UUID available providing old NGUID' |
    grep -v 'nvme nvme0: resetting controller$' >/tmp/warn
[ ! -s /tmp/warn ]; chk $? "no nvme warning or error in the kernel log ($(wc -l </tmp/warn) lines)"
sed 's/^/  /' /tmp/warn | head -5
# the one reset asked for above, and no other
[ "$(dmesg | grep -c 'nvme nvme0: resetting controller')" -le 1 ]
chk $? "no controller reset but the one nvme reset asked for"
exit $GUEST_FAIL
GUEST
} >"$tmp/kernel.sh"

label=${kernel:-release}
trace=(-D "$tmp/trace.log")
for e in h3100_admin_set_features h3100_admin_get_features h3100_admin_get_log h3100_admin_dbbuf \
         h3100_map_sgl h3100_admin_create_cq h3100_admin_directive \
         h3100_admin_identify; do
    trace+=(-trace "$e")
done
GUEST_TIMEOUT=300 run_guest "$label" "$disk" "$tmp/kernel.sh" "${kopt[@]}" "${append[@]}" "${files[@]}" \
    -- "${trace[@]}"

# --- what this driver generation used of the drive (the device's trace) ---
# Linux's bring-up: after SeaBIOS's (which ends with its polled I/O queue
# pair, the first CQ created) and before the script's mark (fid 0x2)
awk '/h3100_admin_create_cq/ && !on { on = 1; next }
     /h3100_admin_set_features fid 0x2 / { exit } on' "$tmp/trace.log" >"$tmp/linux.log"
uniq_of() { grep "$1" "$tmp/linux.log" | sed -n "s/.*$2 \(0x[0-9a-f]*\).*/\1/p" | sort -u | tr '\n' ' '; }
feats=$(uniq_of h3100_admin_set_features fid)
gfeats=$(uniq_of h3100_admin_get_features fid)
logs=$(uniq_of h3100_admin_get_log lid)
cns=$(uniq_of h3100_admin_identify cns)
dbbuf=$(grep -c h3100_admin_dbbuf "$tmp/linux.log")
polled=$(grep h3100_admin_create_cq "$tmp/linux.log" | grep -c ' flags 0x1$')
# the whole run: SGLs (the I/O) and directives
sgls=$(grep -c h3100_map_sgl "$tmp/trace.log")
dirs=$(grep -c h3100_admin_directive "$tmp/trace.log")
echo "# driver $label: set-features fids ${feats:-none}; get-features fids ${gfeats:-none};" \
     "log pages ${logs:-none}; identify CNS ${cns:-none}; shadow doorbells $dbbuf;" \
     "polled CQs $polled; SGL descriptors $sgls; directives $dirs; namespaces found by" \
     "$(sed -n 's/^@rescan //p' "$tmp/$label.out")"
[ -n "$feats" ] && [ -n "$cns" ]; check $? "$label: the trace shows the driver's admin commands"
# what every generation tested does (docs/guide/guests.md): the drive's SGLs
# (fio's 128 KiB writes are over Linux's 32 KiB sgl_threshold) and
# asynchronous event configuration (fid 0xb)
[ "$sgls" -gt 0 ]; check $? "$label: the driver sent SGLs ($sgls descriptors)"
case " $feats " in *" 0xb "*) true ;; *) false ;; esac
check $? "$label: the driver configured asynchronous events (fid 0xb)"
if [ ${#append[@]} -gt 0 ]; then
    [ "$dirs" -gt 0 ]; check $? "$label: with nvme_core.streams=1 the driver used Directives ($dirs)"
    grep h3100_admin_directive "$tmp/trace.log" | sed 's/^/#   /' | head -4
fi
finish
