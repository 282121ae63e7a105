#!/usr/bin/env bash
# Guest hot-plug test: the drive leaves and comes back on a PCIe root port
# (q35), idle and under fio, as a U.2 drive is swapped in a server.
#
#   tests/guest/test_guest_hotplug.sh [QEMU]
#
# One boot: the drive (id h0, on pcie-root-port rp1, backed by -blockdev
# nodes so they outlive it, with a state file) gets 8 MiB of random data,
# flushed.  Idle: `device_del h0`; the guest sees the drive leave; QEMU
# sends DEVICE_DELETED; the backend is free again (`blockdev-del`, then
# `blockdev-add` succeed); `device_add` of the same drive: the guest
# sees it arrive with the same serial, its data and one more power cycle
# (the state file was saved clean on unplug: no unsafe shutdown).  Then
# the same during a fio random-write job: fio ends with an error instead
# of hanging, DEVICE_DELETED comes, the re-plugged drive has the data.
# The host checks the QMP replies and events and that the state file is
# clean at the end.
# Prints ok / not ok lines and 'N passed, N failed'.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

disk=$tmp/h3100.raw
state=$tmp/h3100.h3s
truncate -s 512M "$disk"
mp="user_bytes=$((512 << 20))"
dev="\"driver\": \"dapustor-h3100\", \"id\": \"h0\", \"bus\": \"rp1\", \"drive\": \"d0\", \"model-params\": \"$mp\", \"state\": \"$state\""
del='{"execute": "device_del", "arguments": {"id": "h0"}}'
add="{\"execute\": \"device_add\", \"arguments\": {$dev}}"
bdel='{"execute": "blockdev-del", "arguments": {"node-name": "d0"}}'
badd='{"execute": "blockdev-add", "arguments": {"driver": "raw", "node-name": "d0", "file": "f0"}}'

{
    echo "$GUEST_PRELUDE"
    cat <<'GUEST'
# the namespace's block device (a node fio left behind is not one)
ns() { for d in /dev/nvme*n1; do [ -b "$d" ] && { echo "$d"; return; }; done; }
# writes completed on the namespace so far (/sys/block/*/stat field 5)
writes() {
    w=$(awk '{ print $5 }' "/sys/block/$(basename "$(ns)")/stat" 2>/dev/null)
    echo "${w:-0}"
}
# wait_for present|absent: up to 90 s for the namespace to come or go
wait_for() {
    i=0
    while [ $i -lt 900 ]; do
        if [ "$1" = present ]; then [ -n "$(ns)" ] && return 0
        else [ -z "$(ns)" ] && [ ! -e /dev/nvme0 ] && return 0; fi
        sleep 0.1; i=$((i + 1))
    done
    return 1
}
sn() { nvme id-ctrl "$(ns | sed 's/n1$//')" | awk -F' *: ' '$1 == "sn" { print $2 }' | sed 's/ *$//'; }
cycles() { nvme smart-log -o json "$(ns | sed 's/n1$//')" | tr -d ' ",' | awk -F: -v k="$1" '$1 == k { print $2; exit }'; }
sum() { dd if="$(ns)" bs=1M count=8 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1; }

dd if=/dev/urandom of=/tmp/a bs=1M count=8 2>/dev/null
dd if=/tmp/a of="$(ns)" bs=1M oflag=direct conv=fsync 2>/dev/null; chk $? "8 MiB written at LBA 0"
nvme flush "$(ns)" >/dev/null
want=$(sha256sum </tmp/a | cut -d' ' -f1)
sn0=$(sn); pc0=$(cycles power_cycles); us0=$(cycles unsafe_shutdowns)
echo "  serial $sn0, power cycles $pc0, unsafe shutdowns $us0"

echo "@unplug-idle"
wait_for absent; chk $? "idle: the drive left the guest after device_del"
echo "@gone-idle"
wait_for present; chk $? "idle: the drive came back after device_add ($(ns))"
[ "$(sn)" = "$sn0" ]; chk $? "idle: the same drive (serial $(sn))"
[ "$(sum)" = "$want" ]; chk $? "idle: the data written before the unplug reads back"
pc1=$(cycles power_cycles); us1=$(cycles unsafe_shutdowns)
[ "$pc1" = $((pc0 + 1)) ] && [ "$us1" = "$us0" ]
chk $? "idle: one more power cycle ($pc0 -> $pc1), no unsafe shutdown ($us0 -> $us1): state saved on unplug"

# fio must not create a file where the node was: the drive could leave
# before fio opens it (a slow host), and the file would hide the drive
w0=$(writes)
fio --name=busy --filename="$(ns)" --allow_file_create=0 --ioengine=libaio \
    --direct=1 --rw=randwrite --bs=4k --iodepth=16 --offset=64M --size=64M \
    --time_based=1 --runtime=300 >/tmp/fio.out 2>&1 &
fpid=$!
# unplug only once fio's writes reach the drive (up to 60 s)
i=0
while [ "$(writes)" -le "$((w0 + 100))" ] && kill -0 $fpid 2>/dev/null &&
      [ $i -lt 600 ]; do
    sleep 0.1; i=$((i + 1))
done
kill -0 $fpid 2>/dev/null && [ "$(writes)" -gt "$((w0 + 100))" ]
chk $? "busy: fio is writing ($(($(writes) - w0)) writes completed)"
echo "@unplug-busy"
wait_for absent; chk $? "busy: the drive left the guest during fio"
i=0
while kill -0 $fpid 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
! kill -0 $fpid 2>/dev/null; chk $? "busy: fio ended when its drive left"
wait $fpid; r=$?
[ "$r" != 0 ]; chk $? "busy: fio reported the loss (rc $r): $(grep -m1 -oE 'err= *[0-9]+[^,]*' /tmp/fio.out)"
echo "@gone-busy"
wait_for present; chk $? "busy: the drive came back after device_add ($(ns))"
[ "$(sum)" = "$want" ]; chk $? "busy: the data written before the unplug reads back"
dd if="$(ns)" of=/dev/null bs=1M skip=64 count=64 iflag=direct 2>/dev/null
chk $? "busy: the region fio was writing reads"
exit $GUEST_FAIL
GUEST
} >"$tmp/hotplug.sh"

run_guest hotplug "$disk" "$tmp/hotplug.sh" --no-disk --timeout 420 \
    --qmp-log "$tmp/qmp.log" \
    --qmp-on @unplug-idle "$del" --qmp-on @gone-idle wait:DEVICE_DELETED \
    --qmp-on @gone-idle "$bdel" --qmp-on @gone-idle "$badd" \
    --qmp-on @gone-idle "$add" \
    --qmp-on @unplug-busy "$del" --qmp-on @gone-busy wait:DEVICE_DELETED \
    --qmp-on @gone-busy "$add" -- \
    -device pcie-root-port,id=rp1,chassis=1,slot=1 \
    -blockdev "driver=file,filename=$disk,node-name=f0" \
    -blockdev "driver=raw,file=f0,node-name=d0" \
    -device "dapustor-h3100,id=h0,bus=rp1,drive=d0,model-params=$mp,state=$state"
n=$(grep -c '"event": "DEVICE_DELETED"' "$tmp/qmp.log")
[ "$n" = 2 ]
check $? "host: QEMU sent DEVICE_DELETED for both unplugs ($n)"
n=$(grep -c '"return": {}' "$tmp/qmp.log")
! grep -q '"error"' "$tmp/qmp.log" && [ "$n" -ge 6 ]
check $? "host: device_del, blockdev-del, blockdev-add and device_add succeeded ($n returns)"
grep '"error"' "$tmp/qmp.log" | sed 's/^/# /'
flags=$(od -An -tu4 -j108 -N4 "$state" | tr -d ' ')
[ "$flags" = 0 ]
check $? "host: the state file is clean after QEMU stopped (flags $flags)"
finish
