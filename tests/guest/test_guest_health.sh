#!/usr/bin/env bash
# Guest health test: the drive's life seen with standard tools inside Linux.
#
#   tests/guest/test_guest_health.sh [QEMU]
#
# Boot 1, a tiny drive (56 MiB user, one die: reclaim starts at once,
# timing=off for speed): fio random 4 KiB overwrites of 3.4 x the capacity,
# then `nvme ocp smart-add-log` reports physical media (NAND) bytes written
# larger than the host bytes of `nvme smart-log`, and h3100-vlog (copied
# in) decodes the model log D0h: WAF x1000 = NAND / host bytes, reclaim
# runs > 0; and Debian 13's nvme-cli (scripts/guest/guest-nvme-cli.sh trixie, copied
# in with its libraries) reads DapuStor's log CAh with `nvme dapustor
# smart-log-add`: host and NAND bytes / 32 MiB and the erase counts as
# D0h has them, and from the extended page CBh the lifetime WAF, the
# temperature since born and the power-loss protection state.  Boot 2, a
# drive in 67 C air (model-params ambient_k=340): the SMART composite
# temperature passes the warning threshold, the critical warning has its temperature bit, the OCP log
# and the DapuStor plugin show heavy throttling, Host Controlled
# Thermal Management (get-feature 0x10) answers, and `nvme telemetry-log`
# fetches log 07h (a host-initiated snapshot) and 08h (the one the drive
# took when heavy throttling began), which h3100-tlog (copied in)
# decodes.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

vlog=$H3100_BUILD/tools/h3100-vlog
[ -n "${H3100_VLOG:-}" ] && vlog=$H3100_VLOG
tiny="user_bytes=56M,,channels=1,,dies_per_channel=1,,pages_per_block=48,,blocks_per_plane=64,,spare_blocks_per_plane=4,,grown_bad_ppm=0"
disk=$tmp/h3100.raw
truncate -s $((56 * 1024 * 1024)) "$disk"
sim=$(dirname "$vlog")/h3100-sim
tlog=$(dirname "$vlog")/h3100-tlog
# Debian 13's nvme-cli, with the DapuStor plugin, and what it runs on
nvme13=$("$GUEST_HERE/../../scripts/guest/guest-nvme-cli.sh" trixie) || nvme13=''
nvme13_files=()
for f in "${nvme13:-/nonexistent}"/*; do [ -f "$f" ] && nvme13_files+=(--file "$f"); done
# what heavy throttling takes off (the profile's throttle_heavy_pct)
heavy_cut=$(( 100 - $("$sim" --show-config | sed -n 's/^throttle_heavy_pct = //p') ))
# shellcheck disable=SC2016  # expanded in the guest
DAPU_PRELUDE='nvme13() { /guest/ld-linux-x86-64.so.2 --library-path /guest /guest/nvme "$@"; }
dapu() { if [ "$1" = version ]; then nvme13 version; else nvme13 dapustor "$1" /dev/nvme0; fi; }'

{
    echo "$GUEST_PRELUDE"
    echo "$DAPU_PRELUDE"
    cat <<'GUEST'
ocp() {  # ocp KEY: a plain number, or the low 64 bits of a {hi, lo} pair
    nvme ocp smart-add-log /dev/nvme0 -o json | tr -d '\n ' |
        sed -n "s/.*\"$1\":\({\"hi\":[0-9]*,\"lo\":\)\{0,1\}\([0-9]*\).*/\2/p"
}
fio --name=overwrite --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \
    --rw=randwrite --bs=4k --iodepth=16 --io_size=192M --randrepeat=0 \
    --norandommap >/tmp/fio.out 2>&1; chk $? "fio: 192 MiB of random 4 KiB writes on a 56 MiB drive"
host=$(( $(smart data_units_written) * 512000 ))
nand=$(ocp "Physicalmediaunitswritten")
echo "  host ~$host B (data units x 512000), NAND $nand B"
[ -n "$nand" ] && [ "$nand" -gt "$host" ]; chk $? "ocp smart-add-log: NAND bytes $nand > host bytes $host"
e=$(ocp MaxUserdataerasecounts); [ "${e:-0}" -gt 0 ]; chk $? "ocp smart-add-log: max user data erase count $e"
nvme get-log /dev/nvme0 --log-id=0xd0 --log-len=512 --raw-binary >/tmp/vlog.bin 2>/dev/null
/guest/h3100-vlog /tmp/vlog.bin >/tmp/vlog.txt; chk $? "h3100-vlog decodes the vendor log"
sed -n '1,12p' /tmp/vlog.txt | sed 's/^/  /'
hb=$(awk '/^host bytes written / && !/recent/ { print $4; exit }' /tmp/vlog.txt)
nb=$(awk '/^NAND bytes written / && !/recent/ { print $4; exit }' /tmp/vlog.txt)
waf=$(awk '/^WAF \(lifetime\)/ { print $NF; exit }' /tmp/vlog.txt)
want=$(awk -v n="$nb" -v h="$hb" 'BEGIN { if (h > 0) printf "%.3f", int(n * 1000 / h) / 1000 }')
[ -n "$waf" ] && [ "$waf" = "$want" ]; chk $? "vendor log: WAF $waf = NAND $nb / host $hb ($want)"
runs=$(awk '/^reclaim runs/ { print $NF; exit }' /tmp/vlog.txt)
[ "${runs:-0}" -gt 0 ]; chk $? "vendor log: reclaim runs $runs"
# DapuStor's log CAh as Debian 13's nvme-cli reads it, against D0h
/guest/h3100-vlog --fields /tmp/vlog.bin >/tmp/vf.txt
vf() { sed -n "s/^$1=//p" /tmp/vf.txt; }
dapu "smart-log-add" >/tmp/dapu.txt; chk $? "nvme dapustor smart-log-add (nvme-cli $(dapu version | awk '{ print $3; exit }'))"
sed 's/^/  /' /tmp/dapu.txt
item() { sed -n "s/^$1 *: *//p" /tmp/dapu.txt | head -1; }
u=33554432
w=$(item host_bytes_written | sed -n 's/.*sectors: //p')
[ "$w" = $(( $(vf host_write_bytes) / u )) ]; chk $? "dapustor host_bytes_written $w = D0h $(vf host_write_bytes) B / 32 MiB"
w=$(item nand_bytes_written | sed -n 's/.*sectors: //p')
[ "$w" = $(( $(vf nand_write_bytes) / u )) ]; chk $? "dapustor nand_bytes_written $w = D0h $(vf nand_write_bytes) B / 32 MiB"
w=$(item wear_leveling | sed -n 's/.*\(min: .*\)/\1/p')
want="min: $(vf erase_min), max: $(vf erase_max), avg: $(( $(vf erase_avg_milli) / 1000 ))"
[ "$w" = "$want" ]; chk $? "dapustor wear_leveling '$w' = D0h erase counts '$want'"
[ "$(vf erase_max)" -gt 0 ]; chk $? "erase counts after the overwrites (max $(vf erase_max))"
# the extended page CBh, which the plugin prints when the drive has it
w=$(item lifetime_write_amplification | awk '{ print $NF }')
[ "$w" = "$(vf waf_milli)" ]; chk $? "dapustor lifetime_write_amplification $w = D0h WAF x1000 $(vf waf_milli)"
w=$(item temp_since_born | sed -n 's/.*\(min: .*\)/\1/p')
case $w in "min: "[1-9]*", max: "[1-9]*", cur: "[1-9]*) r=0 ;; *) r=1 ;; esac
chk $r "dapustor temp_since_born '$w'"
w=$(item power_loss_protection | awk '{ print $NF }')
[ "$w" = 1 ]; chk $? "dapustor power_loss_protection $w"
exit $GUEST_FAIL
GUEST
} >"$tmp/wear.sh"

{
    echo "$GUEST_PRELUDE"
    echo "$DAPU_PRELUDE"
    echo "HEAVY_CUT=$heavy_cut"
    cat <<'GUEST'
sleep 3
t=$(smart temperature)
# nvme-cli prints kelvin in JSON
[ "$t" -ge 343 ]; chk $? "smart-log temperature $t K >= warning 343 K in 67 C air"
cw=$(smart critical_warning)
[ $((cw & 2)) = 2 ]; chk $? "smart-log critical_warning $cw has the temperature bit"
nvme smart-log /dev/nvme0 | grep -iE 'temperature|warning|thm' | sed 's/^/  /'
nvme ocp smart-add-log /dev/nvme0 | grep -i thrott | sed 's/^/  /'
nvme ocp smart-add-log /dev/nvme0 | grep -q 'Current throttling status.*0x2'
chk $? "ocp smart-add-log: heavy throttling (status 0x2)"
out=$(nvme get-feature /dev/nvme0 -f 0x10 2>&1); chk $? "get-feature 0x10 (HCTM): $out"
nvme telemetry-log /dev/nvme0 --output-file=/tmp/th.bin >/dev/null 2>&1
chk $? "nvme telemetry-log: host-initiated (07h)"
/guest/h3100-tlog /tmp/th.bin >/tmp/th.txt; chk $? "h3100-tlog decodes 07h"
sed -n '1,4p' /tmp/th.txt | sed 's/^/  /'
grep -q '^log 07h (host-initiated), host generation 1, controller data available' /tmp/th.txt
chk $? "07h: generation 1, controller-initiated data available"
[ "$(grep -c '^die ' /tmp/th.txt)" -gt 0 ] && grep -q '^channel ' /tmp/th.txt
chk $? "07h: per-die and per-channel busy time"
nvme telemetry-log /dev/nvme0 --controller-init --output-file=/tmp/tc.bin >/dev/null 2>&1
chk $? "nvme telemetry-log --controller-init (08h)"
/guest/h3100-tlog /tmp/tc.bin >/tmp/tc.txt; chk $? "h3100-tlog decodes 08h"
grep -A3 '^throttle changes' /tmp/tc.txt | sed 's/^/  /'
grep -q '^reason: heavy thermal throttling' /tmp/tc.txt && grep -q 'level [01] -> 2$' /tmp/tc.txt
chk $? "08h: taken when heavy throttling began, with the change that started it"
thr=$(dapu smart-log-add | sed -n 's/^thermal_throttle_status *: *//p')
echo "  dapustor thermal_throttle_status: $thr"
case $thr in *" $HEAVY_CUT%, cnt: "[1-9]*) r=0 ;; *) r=1 ;; esac
chk $r "dapustor thermal_throttle_status: heavy throttling cuts $HEAVY_CUT%, transitions counted"
exit $GUEST_FAIL
GUEST
} >"$tmp/hot.sh"

[ -n "$nvme13" ]; check $? "Debian 13's nvme-cli for the guest (scripts/guest/guest-nvme-cli.sh trixie)"
if [ -x "$vlog" ]; then
    run_guest wear "$disk" "$tmp/wear.sh" --file "$vlog" "${nvme13_files[@]}" \
        --device-opts "model-params=$tiny,timing=off"
else
    bad "no h3100-vlog at $vlog (the test command builds it)"
fi
run_guest hot "$disk" "$tmp/hot.sh" "${nvme13_files[@]}" --file "$tlog" \
    --device-opts "model-params=user_bytes=56M,,ambient_k=340,,thermal_tau_ms=200"
finish
