#!/usr/bin/env bash
# Guest nvme-cli test: Linux's nvme driver and nvme-cli against the H3100.
#
#   tests/guest/test_guest_nvme.sh [QEMU]
#
# One boot on a sparse 512 MiB raw file: id-ctrl (DapuStor identity), id-ns,
# smart-log counters moving with 4 MiB of O_DIRECT writes and reads,
# error-log (a refused Get Log Page adds an entry), fw-log, get-feature (FIDs
# 02h 04h 07h 08h 0Bh), format to 4096-byte LBAs and back (data gone),
# fw-download + fw-commit of an H3FW image and the new revision after a
# controller reset, dsm --ad then reads return zeroes, write-uncor found by
# Get LBA Status.  The checks run in the
# guest; this prints them as ok / not ok lines and 'N passed, N failed'.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

disk=$tmp/h3100.raw
disk_bytes=$((512 * 1024 * 1024))
truncate -s "$disk_bytes" "$disk"
newfw=H3D1T042

{
    echo "$GUEST_PRELUDE"
    echo "DISK_BYTES=$disk_bytes NEWFW=$newfw"
    cat <<'GUEST'
# --- identity ---
mn=$(ctrl mn); fr=$(ctrl fr); sn=$(ctrl sn); ver=$(ctrl ver)
[ "$mn" = "DAPUSTOR DPH3104T0TA03T2000" ]; chk $? "id-ctrl mn '$mn'"
[ "$fr" = H3D10060 ]; chk $? "id-ctrl fr '$fr'"
[ "$(ctrl vid)" = 0x1e3b ] && [ "$(ctrl ssvid)" = 0x1e3b ]; chk $? "id-ctrl vid/ssvid 0x1e3b"
[ "$ver" = 0x10300 ]; chk $? "id-ctrl ver '$ver' (NVMe 1.3)"
case $sn in DP*) true ;; *) false ;; esac; chk $? "id-ctrl sn '$sn'"
[ "$(ctrl oacs)" != "" ] && [ "$(ctrl frmw)" != "" ]; chk $? "id-ctrl oacs $(ctrl oacs), frmw $(ctrl frmw)"
nvme id-ns /dev/nvme0n1 >/tmp/idns
nsze=$(awk -F' *: ' '$1 == "nsze" { print $2; exit }' /tmp/idns)
[ -n "$nsze" ] && [ $((nsze * 512)) = "$DISK_BYTES" ]; chk $? "id-ns nsze $nsze x 512 B = $DISK_BYTES B"
grep -q 'lbaf  0 : ms:0   lbads:9 .*in use' /tmp/idns && grep -q 'lbaf  1 : ms:0   lbads:12' /tmp/idns
chk $? "id-ns: LBAF 0 512 B in use, LBAF 1 4096 B"

# --- smart-log counters move with I/O (4 MiB written, 4 MiB read) ---
w0=$(smart data_units_written); r0=$(smart data_units_read)
wc0=$(smart host_write_commands); rc0=$(smart host_read_commands)
dd if=/dev/urandom of=/tmp/pat bs=1M count=4 2>/dev/null
dd if=/tmp/pat of=/dev/nvme0n1 bs=64k seek=16 oflag=direct 2>/dev/null
dd if=/dev/nvme0n1 of=/dev/null bs=64k skip=16 count=64 iflag=direct 2>/dev/null
w1=$(smart data_units_written); r1=$(smart data_units_read)
wc1=$(smart host_write_commands); rc1=$(smart host_read_commands)
[ $((w1 - w0)) -ge 8 ]; chk $? "smart-log data_units_written $w0 -> $w1 (4 MiB = 8.4 units)"
[ $((r1 - r0)) -ge 8 ]; chk $? "smart-log data_units_read $r0 -> $r1"
[ $((wc1 - wc0)) -ge 64 ]; chk $? "smart-log host_write_commands $wc0 -> $wc1 (64 x 64 KiB)"
[ $((rc1 - rc0)) -ge 64 ]; chk $? "smart-log host_read_commands $rc0 -> $rc1"
nvme smart-log /dev/nvme0 | grep -E 'critical_warning|temperature|percentage_used|available_spare ' | sed 's/^/  /'

# --- error-log: a refused Get Log Page (LID 7Fh) adds an entry ---
e0=$(smart num_err_log_entries)
nvme get-log /dev/nvme0 --log-id=0x7f --log-len=512 >/dev/null 2>&1
grc=$?
e1=$(smart num_err_log_entries)
[ "$grc" != 0 ] && [ $((e1 - e0)) = 1 ]; chk $? "error-log: get-log LID 7Fh refused (rc $grc), entries $e0 -> $e1"
nvme error-log /dev/nvme0 -e 1 >/tmp/errlog; erc=$?
cnt=$(awk -F'[ \t]*:[ \t]*' '$1 == "error_count" { print $2; exit }' /tmp/errlog)
[ "$erc" = 0 ] && [ -n "$cnt" ] && [ "$((cnt))" = "$e1" ]; chk $? "error-log: newest entry error_count $cnt = $e1"
sed -n '1,12p' /tmp/errlog | tr -s ' \t' ' ' | tr '\n' ';' | sed 's/^/  newest: /'; echo

# --- fw-log ---
nvme fw-log /dev/nvme0 >/tmp/fwlog; frc=$?
[ "$frc" = 0 ] && grep -q '^afi *: 0x1' /tmp/fwlog && grep -q '^frs1 *:.*(H3D10060)' /tmp/fwlog
chk $? "fw-log: afi 0x1, frs1 H3D10060"
sed 's/^/  /' /tmp/fwlog

# --- get-feature ---
for f in 0x02 0x04 0x07 0x08 0x0b; do
    out=$(nvme get-feature /dev/nvme0 -f $f 2>&1); r=$?
    [ "$r" = 0 ] && echo "$out" | grep -q 'Current value:'; chk $? "get-feature $f: $(echo "$out" | head -1)"
done
out=$(nvme get-feature /dev/nvme0 -f 0x04 -s 1 2>&1)
echo "$out" | grep -qi 'value:0x0*157'; chk $? "get-feature 0x04 default: over-temperature threshold 343 K ($out)"

# --- format to 4096-byte LBAs and back; data gone ---
dd if=/tmp/pat of=/dev/nvme0n1 bs=64k count=16 oflag=direct 2>/dev/null
s_before=$(rd_sum 0 256)
[ "$s_before" != "$(zero_sum 256)" ]; chk $? "format: 1 MiB of data at LBA 0 before formatting"
fmt() {  # fmt LBAF SIZE
    # nvme-cli 2.3 may then fail BLKBSZSET ("failed to set block size")
    # and exit non-zero although the Format NVM command succeeded
    nvme format /dev/nvme0n1 --lbaf="$1" --ses=0 --force >/tmp/fmt 2>&1 ||
        grep -q 'Success formatting' /tmp/fmt || { cat /tmp/fmt; return 1; }
    sed 's/^/  format: /' /tmp/fmt
    nvme ns-rescan /dev/nvme0 2>/dev/null
    i=0
    while [ "$(blockdev --getss /dev/nvme0n1 2>/dev/null)" != "$2" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    [ "$(blockdev --getss /dev/nvme0n1)" = "$2" ]
}
fmt 1 4096; chk $? "format --lbaf=1: logical block size $(blockdev --getss /dev/nvme0n1) (4096)"
nsze4=$(nvme id-ns /dev/nvme0n1 | awk -F' *: ' '$1 == "nsze" { print $2; exit }')
[ -n "$nsze4" ] && [ $((nsze4 * 4096)) = "$DISK_BYTES" ]; chk $? "format --lbaf=1: nsze $nsze4 x 4096 B"
nvme id-ns /dev/nvme0n1 | grep -q 'lbaf  1 : .*lbads:12.*in use'; chk $? "format --lbaf=1: id-ns LBAF 1 in use"
[ "$(rd_sum 0 256)" = "$(zero_sum 256)" ]; chk $? "format --lbaf=1: the data is gone (zeroes)"
dd if=/tmp/pat of=/dev/nvme0n1 bs=64k count=16 oflag=direct 2>/dev/null
[ "$(rd_sum 0 256)" = "$s_before" ]; chk $? "4096-byte LBAs: 1 MiB written reads back"
fmt 0 512; chk $? "format --lbaf=0: back to 512-byte LBAs"
[ "$(rd_sum 0 256)" = "$(zero_sum 256)" ]; chk $? "format --lbaf=0: the data is gone (zeroes)"

# --- dsm --ad: deallocated blocks read as zeroes ---
dd if=/tmp/pat of=/dev/nvme0n1 bs=64k count=4 seek=64 oflag=direct 2>/dev/null
[ "$(rd_sum 1024 64)" != "$(zero_sum 64)" ]; chk $? "dsm: 256 KiB written at LBA 8192"
nvme dsm /dev/nvme0n1 --ad --slbs=8192,8320 --blocks=128,128 >/tmp/dsm 2>&1; r=$?
chk $r "dsm --ad: 2 ranges of 128 LBAs ($(cat /tmp/dsm))"
[ "$(rd_sum 1024 32)" = "$(zero_sum 32)" ]; chk $? "dsm --ad: the deallocated 128 KiB read as zeroes"
[ "$(rd_sum 1024 64)" != "$(zero_sum 64)" ] && [ "$(rd_sum 1056 32)" != "$(zero_sum 32)" ]
chk $? "dsm --ad: the next 128 KiB (outside the ranges) is intact"

# --- write-uncor, then Get LBA Status (86h) finds it ---
# nvme-cli 2.3's get-lba-status sends no data buffer (PRP1 0: the list
# lands at guest address 0), so the command goes through admin-passthru,
# which names opcode 86h itself ("Get LBA Status").
gls() {
    nvme admin-passthru /dev/nvme0 --opcode=0x86 --namespace-id=1 \
        --cdw12=255 --cdw13=0x11000000 --data-len=1024 --read --raw-binary \
        >/tmp/gls 2>/tmp/gls.err
}
nvme write-uncor /dev/nvme0n1 --start-block=20000 --block-count=7 >/tmp/wu 2>&1
chk $? "write-uncor LBAs 20000-20007 ($(cat /tmp/wu))"
gls; r=$?
# NLSD, CMPC, DSLBA (low, high), NLB, status
set -- $(od -An -tu4 -N24 /tmp/gls)
[ "$r" = 0 ] && [ "${1:-}" = 1 ] && [ "${2:-}" = 2 ] && [ "${3:-}" = 20000 ] &&
    [ "${4:-}" = 0 ] && [ "${5:-}" = 8 ]
chk $? "Get LBA Status: NLSD ${1:-?} CMPC ${2:-?}, LBA ${3:-?} + ${5:-?} (1 2, 20000 + 8) ($(cat /tmp/gls.err))"
dd if=/dev/zero of=/dev/nvme0n1 bs=512 seek=20000 count=8 oflag=direct 2>/dev/null
gls
set -- $(od -An -tu4 -N4 /tmp/gls)
[ "${1:-}" = 0 ]; chk $? "Get LBA Status after rewriting them: NLSD ${1:-?} (0)"

# --- fw-download + fw-commit, new revision after a controller reset ---
{ printf 'H3FW%s' "$NEWFW"; dd if=/dev/urandom bs=4084 count=1 2>/dev/null; dd if=/dev/zero bs=4096 count=15 2>/dev/null; } >/tmp/fw.bin
nvme fw-download /dev/nvme0 --fw=/tmp/fw.bin --xfer=4096 >/tmp/fwd 2>&1; chk $? "fw-download 64 KiB image ($(cat /tmp/fwd))"
nvme fw-commit /dev/nvme0 --slot=2 --action=1 >/tmp/fwc 2>&1; r=$?
echo "  fw-commit rc $r: $(cat /tmp/fwc)"
grep -qiE 'success|reset' /tmp/fwc; chk $? "fw-commit slot 2 action 1 accepted"
[ "$(ctrl fr)" = H3D10060 ]; chk $? "before the reset: fr still $(ctrl fr)"
nvme reset /dev/nvme0 >/tmp/rst 2>&1; chk $? "nvme reset /dev/nvme0 $(cat /tmp/rst)"
i=0; while [ ! -e /dev/nvme0n1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(ctrl fr)" = "$NEWFW" ]; chk $? "after the reset: id-ctrl fr '$(ctrl fr)' = $NEWFW"
nvme fw-log /dev/nvme0 >/tmp/fwlog2
grep -q '^afi *: 0x2' /tmp/fwlog2 && grep -q "^frs2 *:.*($NEWFW)" /tmp/fwlog2 && grep -q '^frs1 *:.*(H3D10060)' /tmp/fwlog2
chk $? "fw-log after the reset: afi 0x2, frs2 $NEWFW, frs1 H3D10060"
echo "  sysfs firmware_rev: $(cat /sys/class/nvme/nvme0/firmware_rev)"
echo 1 >/sys/class/nvme/nvme0/reset_controller; chk $? "reset via /sys/class/nvme/nvme0/reset_controller"
sleep 0.5
[ "$(ctrl fr)" = "$NEWFW" ]; chk $? "after a second reset: still $NEWFW"
dd if=/tmp/pat of=/dev/nvme0n1 bs=64k count=4 oflag=direct 2>/dev/null
[ "$(rd_sum 0 64)" = "$(dd if=/tmp/pat bs=4096 count=64 2>/dev/null | sha256sum | cut -d' ' -f1)" ]
chk $? "I/O after the resets: 256 KiB write + read back"
exit $GUEST_FAIL
GUEST
} >"$tmp/nvme.sh"

run_guest boot "$disk" "$tmp/nvme.sh" --timeout 200
finish
