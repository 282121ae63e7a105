#!/usr/bin/env bash
# Guest namespace test: Namespace Management and Attachment from Linux
# with nvme-cli, and Linux seeing the namespaces appear and go.
#
#   tests/guest/test_guest_ns.sh [QEMU]
#
# One boot on a 256 MiB drive (timing=off).  nvme-cli sees namespace
# management in OACS and NN 32, deletes the shipped namespace 1 (Linux
# drops /dev/nvme0n1; UNVMCAP becomes TNVMCAP), creates two (96 MiB of
# 512-byte LBAs, 64 MiB of 4 KiB LBAs), attaches them (Linux makes
# /dev/nvme0n1 and /dev/nvme0n2 with those sizes and LBA sizes), writes
# and reads each, formats the first to 4 KiB LBAs (its data erased, the
# second's intact), detaches the second (its block device goes) and
# deletes everything.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

disk=$tmp/h3100.raw
truncate -s $((256 * 1024 * 1024)) "$disk"

{
    echo "$GUEST_PRELUDE"
    cat <<'GUEST'
N=/dev/nvme0
# appears DEV: wait (up to 10 s) for a block device to exist; gone DEV
appears() { i=0; while [ ! -b "$1" ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done; [ -b "$1" ]; }
gone() { i=0; while [ -b "$1" ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done; [ ! -b "$1" ]; }
lbs() { cat "/sys/block/$1/queue/logical_block_size"; }
bytes() { echo $(( $(cat "/sys/block/$1/size") * 512 )); }
oacs=$(ctrl oacs)
[ $(( oacs & 0x8 )) = 8 ]; chk $? "id-ctrl oacs $oacs has namespace management (bit 3)"
[ "$(ctrl nn)" = 32 ]; chk $? "id-ctrl nn $(ctrl nn) = 32"
tnvmcap=$(ctrl tnvmcap | tr -d ',')
echo "  tnvmcap $tnvmcap, unvmcap $(ctrl unvmcap)"

nvme delete-ns $N --namespace-id=1 >/dev/null 2>&1; chk $? "nvme delete-ns -n 1"
nvme ns-rescan $N 2>/dev/null
gone /dev/nvme0n1; chk $? "Linux dropped /dev/nvme0n1"
[ "$(ctrl unvmcap | tr -d ',')" = "$tnvmcap" ]; chk $? "unvmcap = tnvmcap with no namespace"
out=$(nvme create-ns $N --nsze=196608 --ncap=196608 --flbas=0 2>&1)
echo "  $out"
a=$(echo "$out" | sed -n 's/.*nsid:* *\([0-9]*\).*/\1/p')
[ "$a" = 1 ]; chk $? "nvme create-ns: 96 MiB, 512 B LBAs: nsid '$a'"
out=$(nvme create-ns $N --nsze=16384 --ncap=16384 --flbas=1 2>&1)
echo "  $out"
b=$(echo "$out" | sed -n 's/.*nsid:* *\([0-9]*\).*/\1/p')
[ "$b" = 2 ]; chk $? "nvme create-ns: 64 MiB, 4 KiB LBAs: nsid '$b'"
nvme list-ns $N --all 2>&1 | sed 's/^/  /'
[ "$(nvme list-ns $N --all 2>/dev/null | wc -l)" = 2 ]; chk $? "list-ns --all: two allocated"
[ "$(( tnvmcap - $(ctrl unvmcap | tr -d ',') ))" = $(( 160 * 1048576 )) ]
chk $? "unvmcap went down by 160 MiB"
nvme attach-ns $N --namespace-id=1 --controllers=0 >/dev/null 2>&1; chk $? "nvme attach-ns -n 1 -c 0"
nvme attach-ns $N --namespace-id=2 --controllers=0 >/dev/null 2>&1; chk $? "nvme attach-ns -n 2 -c 0"
nvme ns-rescan $N 2>/dev/null
appears /dev/nvme0n1 && appears /dev/nvme0n2; chk $? "Linux made /dev/nvme0n1 and /dev/nvme0n2"
nvme list 2>/dev/null | sed 's/^/  /'
[ "$(bytes nvme0n1)" = $(( 96 * 1048576 )) ] && [ "$(lbs nvme0n1)" = 512 ]
chk $? "nvme0n1: $(bytes nvme0n1) bytes, $(lbs nvme0n1)-byte LBAs"
[ "$(bytes nvme0n2)" = $(( 64 * 1048576 )) ] && [ "$(lbs nvme0n2)" = 4096 ]
chk $? "nvme0n2: $(bytes nvme0n2) bytes, $(lbs nvme0n2)-byte LBAs"

dd if=/dev/urandom of=/tmp/a bs=1M count=4 2>/dev/null
dd if=/dev/urandom of=/tmp/b bs=1M count=4 2>/dev/null
dd if=/tmp/a of=/dev/nvme0n1 bs=1M oflag=direct 2>/dev/null
dd if=/tmp/b of=/dev/nvme0n2 bs=1M oflag=direct 2>/dev/null
sa=$(sha256sum </tmp/a | cut -d' ' -f1); sb=$(sha256sum </tmp/b | cut -d' ' -f1)
ra=$(dd if=/dev/nvme0n1 bs=1M count=4 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
rb=$(dd if=/dev/nvme0n2 bs=1M count=4 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
[ "$ra" = "$sa" ] && [ "$rb" = "$sb" ]; chk $? "each namespace reads back its own data"

nvme format /dev/nvme0n1 --lbaf=1 --force >/dev/null 2>&1; chk $? "nvme format /dev/nvme0n1 --lbaf=1"
nvme ns-rescan $N 2>/dev/null
i=0; while [ "$(lbs nvme0n1)" != 4096 ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
[ "$(lbs nvme0n1)" = 4096 ]; chk $? "nvme0n1 now has $(lbs nvme0n1)-byte LBAs"
ra=$(dd if=/dev/nvme0n1 bs=1M count=4 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
z=$(dd if=/dev/zero bs=1M count=4 2>/dev/null | sha256sum | cut -d' ' -f1)
[ "$ra" = "$z" ]; chk $? "the format erased nvme0n1"
rb=$(dd if=/dev/nvme0n2 bs=1M count=4 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
[ "$rb" = "$sb" ]; chk $? "nvme0n2's data survived the format of nvme0n1"

nvme detach-ns $N --namespace-id=2 --controllers=0 >/dev/null 2>&1; chk $? "nvme detach-ns -n 2 -c 0"
nvme ns-rescan $N 2>/dev/null
gone /dev/nvme0n2; chk $? "Linux dropped /dev/nvme0n2"
[ -b /dev/nvme0n1 ]; chk $? "/dev/nvme0n1 stays"
[ "$(nvme list-ns $N 2>/dev/null | wc -l)" = 1 ]; chk $? "list-ns: one active"
nvme delete-ns $N --namespace-id=0xffffffff >/dev/null 2>&1; chk $? "nvme delete-ns -n 0xffffffff"
nvme ns-rescan $N 2>/dev/null
gone /dev/nvme0n1; chk $? "Linux dropped /dev/nvme0n1"
[ "$(nvme list-ns $N --all 2>/dev/null | wc -l)" = 0 ]; chk $? "list-ns --all: none left"
exit $GUEST_FAIL
GUEST
} >"$tmp/ns.sh"

GUEST_TIMEOUT=300 run_guest ns "$disk" "$tmp/ns.sh" \
    --device-opts "model-params=user_bytes=256M,timing=off"
finish
