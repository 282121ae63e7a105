#!/usr/bin/env bash
# Guest smoke test: a Linux guest (Debian's cloud kernel) sees the H3100.
#
#   tests/guest/test_guest_smoke.sh [QEMU]
#
# Boot 1: lspci -nn shows [1e3b:1098]; nvme list / id-ctrl show the DapuStor
# model number, firmware revision and NVMe 1.3; id-ns matches the backing
# file; random patterns written with O_DIRECT dd at several offsets read back
# identical, land at the same offsets of the backing file, and move the SMART
# data-units-written counter.  Boot 2 (same file): the patterns are still
# there.  Prints TAP-like lines and 'N passed, N failed'; exits 1 on failure.
# Environment: H3100_ACCEL (auto|kvm|tcg), H3100_CACHE, TMPDIR;
# H3100_GUEST_TESTS=0 skips (exit 77, meson's SKIP).
set -uo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/lib.sh"
case ${1:-} in
-h|--help) h3100_usage "$0"; exit 0 ;;  # the test's header comment
-*) h3100_die "unknown option: $1 (the argument is a QEMU binary; try --help)" ;;
esac
if [ "${H3100_GUEST_TESTS:-1}" = 0 ]; then
    echo "1..0 # SKIP H3100_GUEST_TESTS=0"
    exit 77
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
run=$here/../../scripts/guest/guest-run.sh
qemu_args=()
[ $# -ge 1 ] && qemu_args=(--qemu "$1")

h3100_tmpdir smoke
# shellcheck source=tests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"

disk=$tmp/h3100.raw
disk_bytes=$((1024 * 1024 * 1024))   # the namespace: 1 GiB, 2097152 LBAs
truncate -s "$disk_bytes" "$disk"

# Patterns: name, offset in 4 KiB blocks, length in 4 KiB blocks.  One
# block, one MDTS (128 KiB), a 1 MiB write split by the driver, an odd
# offset in the middle and the namespace's last 64 KiB.
last=$((disk_bytes / 4096 - 16))
patterns="p0:0:1 p1:256:32 p2:65537:256 p3:131071:3 p4:$last:16"
for p in $patterns; do
    IFS=: read -r name off len <<<"$p"
    head -c $((len * 4096)) /dev/urandom >"$tmp/$name"
done

# expected "NAME SHA256" lines
for p in $patterns; do
    IFS=: read -r name _ _ <<<"$p"
    printf '%s %s\n' "$name" "$(sha256sum <"$tmp/$name" | cut -d' ' -f1)"
done >"$tmp/expected"

# The guest's read-back part (both boots): "@sum NAME SHA256".
readback() {
    local p name off len
    for p in $patterns; do
        IFS=: read -r name off len <<<"$p"
        echo "echo \"@sum $name \$(dd if=/dev/nvme0n1 bs=4096 skip=$off count=$len iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)\""
    done
}

# --- boot 1 -------------------------------------------------------------------
{
    echo 'echo "@lspci"; lspci -nn'
    echo 'echo "@list"; nvme list'
    echo 'echo "@idctrl"; nvme id-ctrl /dev/nvme0'
    echo 'echo "@idns"; nvme id-ns /dev/nvme0n1'
    echo 'echo "@smart0"; nvme smart-log -o json /dev/nvme0'
    for p in $patterns; do
        IFS=: read -r name off len <<<"$p"
        # one write() per pattern: the 1 MiB one is 8 commands (MDTS 128 KiB)
        echo "dd if=/guest/$name of=/dev/nvme0n1 bs=$((len * 4096)) count=1 seek=$((off * 4096)) oflag=direct,seek_bytes conv=notrunc 2>/dev/null || echo \"@ddfail $name\""
    done
    readback
    echo 'echo "@smart1"; nvme smart-log -o json /dev/nvme0'
    echo 'echo "@errlog"; nvme error-log /dev/nvme0 -e 4'
} >"$tmp/boot1.sh"

files=()
for p in $patterns; do files+=(--file "$tmp/${p%%:*}"); done
start=$SECONDS
"$run" "${qemu_args[@]}" --disk "$disk" --timeout 240 "${files[@]}" \
    "$tmp/boot1.sh" >"$tmp/out1" 2>"$tmp/err1"
rc=$?
t1=$((SECONDS - start))
check "$rc" "boot 1: guest ran the script (${t1}s, exit $rc)"
if [ "$rc" != 0 ]; then
    sed 's/^/# /' "$tmp/err1" "$tmp/out1"
    finish
fi
out1=$(cat "$tmp/out1")

# section NAME FILE: the lines after "@NAME" up to the next "@..." line
section() { awk -v s="@$1" '$0 == s { on = 1; next } /^@/ { on = 0 } on' "$2"; }
# (readers on a pipe read it all: pipefail reports a writer they cut short)
field() { section idctrl "$tmp/out1" | awk -F' *: ' -v k="$1" '!d && $1 == k { print $2; d = 1 }' | sed 's/ *$//'; }

grep -q '\[1e3b:1098\]' < <(section lspci "$tmp/out1")
check $? "lspci -nn shows [1e3b:1098]: $(section lspci "$tmp/out1" | grep '1e3b:1098' | sed 's/^[^ ]* //')"

grep -q '/dev/nvme0n1 .*DAPUSTOR DPH31' < <(section list "$tmp/out1")
check $? "nvme list shows /dev/nvme0n1 with a DAPUSTOR DPH31 model"

mn=$(field mn); fr=$(field fr); ver=$(field ver); vid=$(field vid); sn=$(field sn)
[[ $mn == "DAPUSTOR DPH3104T0TA03T2000" ]]
check $? "id-ctrl mn: '$mn'"
[ "$fr" = H3D10060 ]
check $? "id-ctrl fr: '$fr'"
[ "$ver" = 0x10300 ]
check $? "id-ctrl ver: '$ver' (NVMe 1.3)"
[ "$vid" = 0x1e3b ] && [ "$(field ssvid)" = 0x1e3b ]
check $? "id-ctrl vid/ssvid: $vid/$(field ssvid)"
[[ $sn == DP* ]]
check $? "id-ctrl sn: '$sn'"

nsze=$(section idns "$tmp/out1" | awk -F' *: ' '!d && $1 == "nsze" { print $2; d = 1 }')
[ -n "$nsze" ] && [ $((nsze * 512)) = "$disk_bytes" ]
check $? "id-ns nsze $nsze x 512 B = backing file ($disk_bytes B)"

grep -q '^@ddfail' <<<"$out1"
[ $? = 1 ]
check $? "O_DIRECT writes at 5 offsets succeeded$(grep '^@ddfail' <<<"$out1" | tr '\n' ' ' | sed 's/^./: &/')"

# compare "@sum" lines with the expected ones
compare_sums() {
    local label=$1 file=$2 name sum got
    while read -r name sum; do
        got=$(awk -v n="$name" '$1 == "@sum" && $2 == n { print $3; exit }' "$file")
        [ "$got" = "$sum" ]
        check $? "$label: $name reads back what was written"
    done <"$tmp/expected"
}
compare_sums "boot 1" "$tmp/out1"

# the host sees the same bytes at the same offsets of the backing file
host_ok=0
for p in $patterns; do
    IFS=: read -r name off len <<<"$p"
    cmp -s "$tmp/$name" <(dd if="$disk" bs=4096 skip="$off" count="$len" 2>/dev/null) ||
        { host_ok=1; echo "# $name differs in the backing file"; }
done
check $host_ok "backing file holds every pattern at its offset"

jnum() { section "$1" "$tmp/out1" | tr -d ' ",' | awk -F: -v k="$2" '!d && $1 == k { print $2; d = 1 }'; }
w0=$(jnum smart0 data_units_written); w1=$(jnum smart1 data_units_written)
c0=$(jnum smart0 host_write_commands); c1=$(jnum smart1 host_write_commands)
bytes=0
for p in $patterns; do IFS=: read -r _ _ len <<<"$p"; bytes=$((bytes + len * 4096)); done
# 1 data unit = 1000 x 512 B; 12 commands (the 1 MiB write is 8)
[ -n "$w0" ] && [ -n "$w1" ] && [ $((w1 - w0)) -ge $((bytes / 512000)) ]
check $? "smart-log data units written moved: $w0 -> $w1 (wrote $bytes B)"
[ -n "$c0" ] && [ -n "$c1" ] && [ $((c1 - c0)) -ge 12 ]
check $? "smart-log host write commands moved: $c0 -> $c1"
errs=$(jnum smart1 num_err_log_entries)
echo "# num_err_log_entries after boot 1: $errs"
# the newest error entry, if any (informational: Linux probes optional
# commands at boot, e.g. Identify CNS 06h, which an NVMe 1.3 drive refuses)
section errlog "$tmp/out1" | awk '/Entry\[ 1\]/ { d = 1 } !d && /: / { printf "%s ", $0 } END { print "" }' |
    tr -s ' \t' ' ' | sed 's/^/#   newest: /'

# --- boot 2: same backing file -------------------------------------------------
{
    readback
    echo 'echo "@smart2"; nvme smart-log -o json /dev/nvme0'
} >"$tmp/boot2.sh"
start=$SECONDS
"$run" "${qemu_args[@]}" --disk "$disk" --timeout 240 \
    "$tmp/boot2.sh" >"$tmp/out2" 2>"$tmp/err2"
rc=$?
t2=$((SECONDS - start))
check "$rc" "boot 2: guest ran the script (${t2}s, exit $rc)"
if [ "$rc" != 0 ]; then
    sed 's/^/# /' "$tmp/err2" "$tmp/out2"
    finish
fi
compare_sums "boot 2 (after a QEMU restart)" "$tmp/out2"
finish
