#!/usr/bin/env bash
# Guest faults test: faults armed on the drive over QMP (the `fault`
# property, docs/guide/faults.md) while a Linux guest works on it, and what
# Linux's nvme driver does with each, from its kernel log and sysfs.  One
# boot of one of Debian's cloud kernels (H3100_TEST_KERNEL: 6.1 or 6.12)
# with nvme_core.io_timeout=5 and admin_timeout=5, on a sparse 256 MiB drive, in order:
#   timeout, Abort honoured   fio reads; Linux aborts the held read after
#                             5 s, Abort ends it, no reset, fio completes
#   timeout, Abort ignored    the second time-out resets the controller;
#                             the queues come back, fio completes
#   lost-irq                  "completion polled" after 5 s, no reset
#   status                    82h three times: the retries hide it; then
#                             until cleared: "critical target error" after
#                             Linux's 5 retries
#   fatal,resets=0            CSTS.CFS seen at the time-out: "controller is
#                             down", a reset cures it, fio completes
#   ready-delay               3 s: `nvme reset` waits, under CAP.TO (10 s);
#                             never: Linux gives up after CAP.TO and
#                             removes the controller; a PCI rescan probes
#                             it again (the fault is spent) and it is live
#   aer                       persistent internal error: Linux resets the
#                             controller
#   warning                   spare + temperature: SMART critical warning
#                             0x3, gone with the fault
#   media                     281h with DNR (once) and without (Linux's
#                             five retries), SMART, the error log, a
#                             rewrite; 280h on a write
#   read-only                 20h DNR on writes, SMART 0xc; nsattr=on:
#                             the disk's ro flag, and back
#   ns-detach / ns-attach     nvme0n1 goes and comes back with its data
#   link-down                 for 2 s: commands lost, the drive reset on
#                             return, Linux's Abort times out and it
#                             resets the controller, fio completes; for good: CSTS all-ones, the
#                             controller removed; cleared, a PCI rescan
#   PCIe AER                  (aer=on, behind a root port) a Poisoned
#                             TLP injected with pcie_aer_inject_error:
#                             Linux's AER driver reads it, recovers
#   Get LBA Status            after a Write Uncorrectable: `nvme
#                             lba-status-log` and (sid's nvme-cli)
#                             `nvme get-lba-status` show the range; a
#                             rewrite clears it
#   fatal,resets=never        the controller is removed after its reset
#                             fails
# Prints ok / not ok lines and 'N passed, N failed'.
# Environment: H3100_TEST_KERNEL (6.1 | 6.12; default the release's),
# H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

kernel=${H3100_TEST_KERNEL:-}
kopt=()
[ -z "$kernel" ] || kopt=(--kernel "$kernel")

# qom DEVPROP VALUE: the QMP command that sets the drive's property
qom() {
    printf '{"execute": "qom-set", "arguments": {"path": "/machine/peripheral/h0", "property": "%s", "value": "%s"}}' "$1" "$2"
}
# hmp COMMAND: the QMP command that runs an HMP command
hmp() {
    printf '{"execute": "human-monitor-command", "arguments": {"command-line": "%s"}}' "$1"
}
faults_get='{"execute": "qom-get", "arguments": {"path": "/machine/peripheral/h0", "property": "faults"}}'
# step LINE SPEC: when the guest prints LINE, clear what was armed and
# arm SPEC ("clear" only clears)
steps=()
step() {
    steps+=(--qmp-on "$1" "$(qom fault-clear all)")
    [ "$2" = clear ] || steps+=(--qmp-on "$1" "$(qom fault "$2")")
}
step @timeout-honour 'timeout,opc=read,count=1'
step @timeout-ignore 'timeout,opc=read,count=1,abort=ignore'
step @lost-irq 'lost-irq,opc=read,count=1'
step @status-3 'status,opc=read,lba=4096+8,sc=0x82,count=3'
step @status-all 'status,opc=read,lba=4096+8,sc=0x82,count=0'
step @fatal 'fatal,opc=read,resets=0'
step @ready-3s 'ready-delay,ms=3000'
step @ready-never 'ready-delay,ms=never'
step @aer 'aer,type=error,info=3'
step @warning 'warning,bits=spare+temperature'
step @warning-off clear
step @media-dnr 'media,rw=read,lba=12288+8,dnr=on'
step @media-retry 'media,rw=read,lba=16384+8'
step @media-write 'media,rw=write,lba=20480+8,dnr=on,count=1'
step @ro 'read-only'
step @ro-nsattr 'read-only,nsattr=on'
step @ro-off clear
step @ns-detach 'ns-detach,ns=1'
step @ns-attach 'ns-attach,ns=1'
step @link-2s 'link-down,for=2s'
step @link-down 'link-down'
step @link-back clear
steps+=(--qmp-on @pcie-aer "$(hmp 'pcie_aer_inject_error h0 POISON_TLP')")
step @fatal-never 'fatal,opc=read,resets=never'
steps+=(--qmp-on @faults "$faults_get")

# sid's nvme-cli for the guest, unpacked (scripts/guest/guest-nvme-cli.sh)
d=$("$GUEST_HERE/../../scripts/guest/guest-nvme-cli.sh" sid 2>"$tmp/nvme-sid.err")
check $? "nvme-cli of sid for the guest"
[ -n "$d" ] && tar -C "$d" -cf "$tmp/nvme-sid.tar" .

disk=$tmp/h3100.raw
truncate -s 256M "$disk"
{
    echo "$GUEST_PRELUDE"
    cat <<'GUEST'
N=/dev/nvme0
mkdir -p /opt/sid && tar -xf /guest/nvme-sid.tar -C /opt/sid 2>/dev/null
n_sid() { /opt/sid/ld-linux-x86-64.so.2 --library-path /opt/sid /opt/sid/nvme "$@"; }
echo "  kernel $(uname -r), io_timeout $(cat /sys/module/nvme_core/parameters/io_timeout) s"
# klog_wait RE SECS: the kernel log has a line matching RE (extended
# regular expression) since the last klog_mark, within SECS seconds
klog_mark() { dmesg -c >>/tmp/klog; }
# within SECS CMD...: CMD succeeds within SECS seconds (tried every 0.2 s)
within() {
    _w=$(($1 * 5)); shift
    while ! "$@"; do
        _w=$((_w - 1)); [ $_w -gt 0 ] || return 1; sleep 0.2
    done
}
klog_has() { dmesg | grep -qE "$1"; }
klog_wait() { within "$2" klog_has "$1"; }
klog_show() { dmesg | grep nvme | sed 's/^/  | /'; }
state() { cat /sys/class/nvme/nvme0/state 2>/dev/null; }
is_live() { [ "$(state)" = live ] && [ -b /dev/nvme0n1 ]; }
# live SECS: the controller is live again within SECS seconds
live() { within "$1" is_live; }
FIO="fio --name=f --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=4 --size=16M --time_based --runtime=3"
# fio_under LINE: fio reading while the host arms the fault at LINE
fio_under() {
    $FIO >/tmp/fio.out 2>&1 &
    fpid=$!
    sleep 0.5
    echo "$1"
}
fio_rc() { wait "$fpid"; r=$?; [ $r = 0 ] || tail -3 /tmp/fio.out; return $r; }
RESET='timeout, reset controller|will reset|resetting controller'
QUEUES='default/read/poll queues'

dd if=/dev/zero of=/dev/nvme0n1 bs=1M count=32 oflag=direct 2>/dev/null
chk $? "the first 32 MiB written"
klog_mark

# --- timeout, Abort honoured ---
fio_under @timeout-honour
klog_wait 'timeout, aborting' 20; chk $? "timeout: Linux aborts the held read after io_timeout"
klog_wait 'Abort status: 0x0' 5; chk $? "timeout: Abort succeeds"
fio_rc; chk $? "timeout: fio completes (the aborted read retried)"
! klog_has "$RESET"; chk $? "timeout: Abort honoured, no controller reset"
klog_show; klog_mark

# --- timeout, Abort ignored ---
fio_under @timeout-ignore
klog_wait 'timeout, aborting' 20; chk $? "timeout, abort=ignore: Linux aborts"
klog_wait 'timeout, reset controller' 15; chk $? "timeout, abort=ignore: the second time-out resets the controller"
klog_wait "$QUEUES" 15; chk $? "timeout, abort=ignore: the queues come back"
fio_rc; chk $? "timeout, abort=ignore: fio completes"
live 10; chk $? "timeout, abort=ignore: controller live ($(state))"
klog_show; klog_mark

# --- lost interrupt ---
echo @lost-irq; sleep 1
t0=$(date +%s)
dd if=/dev/nvme0n1 of=/dev/null bs=4k skip=100 count=1 iflag=direct 2>/dev/null
r=$?; t=$(($(date +%s) - t0))
chk $r "lost-irq: the read succeeds (after $t s)"
klog_wait 'timeout, completion polled' 5; chk $? "lost-irq: Linux polls the completion at the time-out"
! klog_has "$RESET"; chk $? "lost-irq: no controller reset"
klog_show; klog_mark

# --- status 82h: retried, then not hidden ---
echo @status-3; sleep 1
dd if=/dev/nvme0n1 of=/dev/null bs=4k skip=512 count=1 iflag=direct 2>/dev/null
chk $? "status 82h three times: the read succeeds on Linux's retries"
! klog_has 'sc 0x82'; chk $? "status 82h three times: no error logged"
echo @status-all; sleep 1
! dd if=/dev/nvme0n1 of=/dev/null bs=4k skip=512 count=1 iflag=direct 2>/dev/null
chk $? "status 82h until cleared: the read fails"
klog_wait '\(sct 0x0 / sc 0x82\)' 5; chk $? "status 82h: Linux logs the status"
klog_has 'critical target error'; chk $? "status 82h: critical target error"
klog_show; klog_mark

# --- fatal, cured by a reset ---
fio_under @fatal
klog_wait 'controller is down; will reset: CSTS=0x3' 20
chk $? "fatal: Linux sees CSTS.CFS at the time-out"
klog_wait "$QUEUES" 15; chk $? "fatal,resets=0: the reset cures it, queues back"
fio_rc; chk $? "fatal,resets=0: fio completes"
klog_show; klog_mark

# --- ready-delay: under CAP.TO, then never ---
echo @ready-3s; sleep 1
t0=$(date +%s)
nvme reset /dev/nvme0; r=$?
live 20; l=$?; t=$(($(date +%s) - t0))
[ $r = 0 ] && [ $l = 0 ] && [ $t -ge 2 ]
chk $? "ready-delay 3 s: nvme reset waits ($t s) and the controller is live"
klog_mark
echo @ready-never; sleep 1
bdf=$(basename "$(readlink /sys/class/nvme/nvme0/device)")
nvme reset /dev/nvme0 2>/dev/null
klog_wait 'Device not ready; aborting' 30; chk $? "ready-delay never: Linux gives up after CAP.TO"
klog_wait 'Removing after probe failure|Disabling device after reset failure' 10
chk $? "ready-delay never: the controller is removed"
echo 1 >/sys/bus/pci/devices/$bdf/remove
echo 1 >/sys/bus/pci/rescan
live 30; chk $? "ready-delay: after a PCI rescan the controller is live ($(state))"
klog_show; klog_mark

# --- persistent internal error ---
echo @aer
klog_wait 'resetting controller due to (AER|persistent internal error)' 20
chk $? "aer: Linux resets the controller on a persistent internal error"
klog_wait "$QUEUES" 15 && live 10; chk $? "aer: controller live after the reset"
klog_show; klog_mark

# --- SMART critical warning ---
echo @warning; sleep 1
w=$(smart critical_warning)
[ "$w" = 3 ]; chk $? "warning spare+temperature: SMART critical warning $w"
echo @warning-off; sleep 1
w=$(smart critical_warning)
[ "$w" = 0 ]; chk $? "warning cleared: SMART critical warning $w"
klog_mark

# --- Get LBA Status after Write Uncorrectable ---
# nvme-cli 2.3 (libnvme 1.3) sends Get LBA Status without its buffer
# (no data length): sid's nvme-cli asks it
nvme write-uncor /dev/nvme0n1 -s 8192 -c 7 >/dev/null; chk $? "write-uncor LBAs 8192-8199"
nvme lba-status-log $N >/tmp/lsl 2>&1 && grep -q 'RSLBA\[0\]: 8192' /tmp/lsl
chk $? "nvme lba-status-log (nvme-cli 2.3): the range at LBA 8192"
n_sid get-lba-status $N -n 1 -s 0 -m 64 -a 0x10 -l 0 >/tmp/gls 2>&1 &&
    grep -q 'DSLBA: 0x00000000002000, NLB: 0x000008' /tmp/gls
r=$?; chk $r "nvme get-lba-status (nvme-cli $(n_sid version | awk '{ print $3; exit }')): LBAs 8192-8199"
[ $r = 0 ] || cat /tmp/gls /tmp/lsl
! dd if=/dev/nvme0n1 of=/dev/null bs=4k skip=1024 count=1 iflag=direct 2>/dev/null
chk $? "the uncorrectable LBAs do not read"
dd if=/dev/zero of=/dev/nvme0n1 bs=4k seek=1024 count=1 oflag=direct 2>/dev/null &&
    dd if=/dev/nvme0n1 of=/dev/null bs=4k skip=1024 count=1 iflag=direct 2>/dev/null
chk $? "rewritten, they read"
n_sid lba-status-log $N 2>&1 | grep -q 'Namespace Elements: 0'
chk $? "and the LBA status log is empty again"
klog_mark

# --- media errors at chosen LBAs ---
# read LBA4K until it fails (the host arms the fault meanwhile), 10 s at most
no_read() { ! dd if=/dev/nvme0n1 of=/dev/null bs=4k skip="$1" count=1 iflag=direct 2>/dev/null; }
no_write() { ! dd if=/dev/zero of=/dev/nvme0n1 bs=4k seek="$1" count=1 oflag=direct 2>/dev/null; }
fails_read() { within 10 no_read "$1"; }
fails_write() { within 10 no_write "$1"; }
MED='I/O Error \(sct 0x2 / sc 0x81\)'
m0=$(smart media_errors)
echo @media-dnr
fails_read 1536; chk $? "media,dnr=on: the read of LBA 12288 fails"
klog_wait "LBA 12288, 8 blocks, $MED DNR" 5; chk $? "media,dnr=on: Linux logs 281h with DNR"
klog_has 'critical medium error, dev nvme0n1, sector 12288'; chk $? "media: critical medium error"
m1=$(smart media_errors)
[ $((m1 - m0)) = 1 ]; chk $? "media,dnr=on: one media error in SMART ($m0 -> $m1): not retried"
nvme error-log $N -e 1 -o json | tr -d ' \n' | grep -q '"lba":12288'
chk $? "media: the error log names LBA 12288"
klog_mark
echo @media-retry
fails_read 2048; chk $? "media,dnr=off: the read of LBA 16384 fails"
klog_wait "LBA 16384, 8 blocks, $MED ?\$" 5; chk $? "media,dnr=off: Linux logs 281h without DNR"
m2=$(smart media_errors)
[ $((m2 - m1)) = 6 ]; chk $? "media,dnr=off: six media errors ($m1 -> $m2): Linux's five retries"
for b in 1536 2048; do
    dd if=/dev/zero of=/dev/nvme0n1 bs=4k seek=$b count=1 oflag=direct 2>/dev/null &&
        dd if=/dev/nvme0n1 of=/dev/null bs=4k skip=$b count=1 iflag=direct 2>/dev/null
    chk $? "media: rewritten, LBA $((b * 8)) reads"
done
klog_mark
echo @media-write
fails_write 2560; chk $? "media,rw=write: the write of LBA 20480 fails"
klog_wait 'LBA 20480, 8 blocks, I/O Error \(sct 0x2 / sc 0x80\) DNR' 5
chk $? "media,rw=write: Linux logs 280h with DNR"
klog_has 'critical medium error, dev nvme0n1, sector 20480 op 0x1:\(WRITE\)'
chk $? "media,rw=write: critical medium error on the write"
dd if=/dev/zero of=/dev/nvme0n1 bs=4k seek=2560 count=1 oflag=direct 2>/dev/null
chk $? "media,rw=write: spent, the next write succeeds"
klog_show; klog_mark

# --- read-only, without and with the namespace's write protection ---
echo @ro
fails_write 3000; chk $? "read-only: a write fails"
klog_wait 'I/O Error \(sct 0x0 / sc 0x20\) DNR' 5; chk $? "read-only: Linux logs 20h with DNR"
dd if=/dev/nvme0n1 of=/dev/null bs=4k skip=3000 count=1 iflag=direct 2>/dev/null
chk $? "read-only: reads work"
w=$(smart critical_warning)
[ "$w" = 12 ]; chk $? "read-only: SMART critical warning $w (reliability, read-only)"
klog_mark
ro() { cat /sys/block/nvme0n1/ro 2>/dev/null; }
# until_ro V SECS: the disk's ro flag is V within SECS seconds
ro_is() { [ "$(ro)" = "$1" ]; }
until_ro() { within "$2" ro_is "$1"; }
echo @ro-nsattr
until_ro 1 15; chk $? "read-only,nsattr=on: Linux marks the disk read-only (ro $(ro))"
klog_has 'rescanning namespaces'; chk $? "read-only,nsattr=on: after the namespace notice"
echo @ro-off
until_ro 0 15; chk $? "read-only cleared: the disk is writable again (ro $(ro))"
dd if=/dev/zero of=/dev/nvme0n1 bs=4k seek=3000 count=1 oflag=direct 2>/dev/null
chk $? "read-only cleared: a write succeeds"
klog_show; klog_mark

# --- a namespace detached and attached by another host ---
# until_blk 0|1 SECS: /dev/nvme0n1 is gone (0) or there (1) within SECS s
blk_is() { if [ -b /dev/nvme0n1 ]; then [ "$1" = 1 ]; else [ "$1" = 0 ]; fi; }
until_blk() { within "$2" blk_is "$1"; }
dd if=/dev/urandom of=/dev/nvme0n1 bs=4k seek=4000 count=4 oflag=direct 2>/dev/null
sum=$(rd_sum 4000 4)
echo @ns-detach
until_blk 0 15; chk $? "ns-detach: nvme0n1 goes away"
klog_has 'rescanning namespaces'; chk $? "ns-detach: after the namespace notice"
echo @ns-attach
until_blk 1 15; chk $? "ns-attach: nvme0n1 is back"
[ "$(rd_sum 4000 4)" = "$sum" ]; chk $? "ns-attach: with its data"
klog_show; klog_mark

# --- the link down for 2 s, then for good ---
fio_under @link-2s
klog_wait 'timeout, reset controller' 30
chk $? "link-down,for=2s: the lost commands and their Abort time out on the reset drive: Linux resets the controller"
klog_wait "$QUEUES" 15 && live 10; chk $? "link-down,for=2s: the reset succeeds on the returned drive"
fio_rc; chk $? "link-down,for=2s: fio completes"
klog_show; klog_mark
bdf=$(basename "$(readlink /sys/class/nvme/nvme0/device)")
fio_under @link-down
klog_wait 'will reset: CSTS=0xffffffff' 20; chk $? "link-down: Linux reads CSTS all-ones"
klog_wait 'Removing after probe failure|Disabling device after reset failure' 30
chk $? "link-down: the controller is removed"
! fio_rc; chk $? "link-down: fio fails"
echo @link-back; sleep 1
echo 1 >/sys/bus/pci/devices/$bdf/remove
echo 1 >/sys/bus/pci/rescan
live 30; chk $? "link-down cleared: after a PCI rescan the controller is live ($(state))"
klog_show; klog_mark

# --- a PCIe error from the drive (AER through its root port) ---
# non-fatal: a fatal one makes Linux reset the root port's secondary
# bus, after which QEMU's root port never shows its link active again
fio_under @pcie-aer
klog_wait 'AER: Uncorrect(ed|able) \(Non-Fatal\) error (message )?received' 20
chk $? "PCIe AER: Linux receives the drive's uncorrectable error"
klog_has '\[12\] TLP|Poisoned TLP'; chk $? "PCIe AER: and reads Poisoned TLP from the drive's AER status"
klog_wait 'AER: device recovery successful' 20; chk $? "PCIe AER: device recovery successful"
fio_rc && live 10; chk $? "PCIe AER: fio completes, controller live"
klog_show; klog_mark

# --- fatal for good ---
fio_under @fatal-never
klog_wait 'controller is down; will reset' 20; chk $? "fatal,resets=never: Linux sees CSTS.CFS"
klog_wait 'Removing after probe failure|Disabling device after reset failure' 30
chk $? "fatal,resets=never: the controller is removed"
! fio_rc; chk $? "fatal,resets=never: fio fails"
klog_show
echo @faults; sleep 3
GUEST
} >"$tmp/faults.sh"

# behind a root port with AER, where the drive's PCIe errors reach Linux
run_guest "faults ${kernel:-default}" "$disk" "$tmp/faults.sh" "${kopt[@]}" \
    --root-port --device-opts "model-params=user_bytes=$(stat -c %s "$disk"),aer=on" \
    --append "nvme_core.io_timeout=5 nvme_core.admin_timeout=5" --timeout 400 --qmp-log "$tmp/qmp.log" \
    --file "$tmp/nvme-sid.tar" "${steps[@]}"
# the device's own count of what fired, from its `faults` list
grep -o '"return": "[^"]*fired[^"]*"' "$tmp/qmp.log" | tail -1 | sed 's/^/# faults: /'
grep -q '"return": "[0-9]* fatal,[^"]*resets=never[^"]*fired=1' "$tmp/qmp.log"
check $? "the device's faults list: the last fault fired once"
finish
