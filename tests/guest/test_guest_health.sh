#!/usr/bin/env bash
# Guest health test: the drive's life seen with standard tools inside Linux.
#
#   tests/guest/test_guest_health.sh [QEMU]
#
# Boot 1, a tiny drive (56 MiB user, one die: reclaim starts at once,
# timing=off for speed): fio random 4 KiB overwrites of 3.4 x the capacity,
# then `nvme ocp smart-add-log` reports physical media (NAND) bytes written
# larger than the host bytes of `nvme smart-log`, and h3100-vlog (copied
# in) decodes the vendor log CAh: WAF x1000 = NAND / host bytes, reclaim
# runs > 0.  Boot 2, a drive in 67 C air (model-params ambient_k=340): the
# SMART composite temperature passes the warning threshold, the critical
# warning has its temperature bit, the OCP log shows heavy throttling, and
# Host Controlled Thermal Management (get-feature 0x10) answers.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

vlog=$GUEST_HERE/../../build/tools/h3100-vlog
[ -n "${H3100_VLOG:-}" ] && vlog=$H3100_VLOG
tiny="user_bytes=56M,,channels=1,,dies_per_channel=1,,pages_per_block=48,,blocks_per_plane=64,,spare_blocks_per_plane=4,,grown_bad_ppm=0"
disk=$tmp/h3100.raw
truncate -s $((56 * 1024 * 1024)) "$disk"

{
    echo "$GUEST_PRELUDE"
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
nvme get-log /dev/nvme0 --log-id=0xca --log-len=512 --raw-binary >/tmp/vlog.bin 2>/dev/null
/guest/h3100-vlog /tmp/vlog.bin >/tmp/vlog.txt; chk $? "h3100-vlog decodes the vendor log"
sed -n '1,12p' /tmp/vlog.txt | sed 's/^/  /'
hb=$(awk '/^host bytes written / && !/recent/ { print $4; exit }' /tmp/vlog.txt)
nb=$(awk '/^NAND bytes written / && !/recent/ { print $4; exit }' /tmp/vlog.txt)
waf=$(awk '/^WAF \(lifetime\)/ { print $NF; exit }' /tmp/vlog.txt)
want=$(awk -v n="$nb" -v h="$hb" 'BEGIN { if (h > 0) printf "%.3f", int(n * 1000 / h) / 1000 }')
[ -n "$waf" ] && [ "$waf" = "$want" ]; chk $? "vendor log: WAF $waf = NAND $nb / host $hb ($want)"
runs=$(awk '/^reclaim runs/ { print $NF; exit }' /tmp/vlog.txt)
[ "${runs:-0}" -gt 0 ]; chk $? "vendor log: reclaim runs $runs"
exit $GUEST_FAIL
GUEST
} >"$tmp/wear.sh"

{
    echo "$GUEST_PRELUDE"
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
exit $GUEST_FAIL
GUEST
} >"$tmp/hot.sh"

if [ -x "$vlog" ]; then
    run_guest wear "$disk" "$tmp/wear.sh" --file "$vlog" \
        --device-opts "model-params=$tiny,timing=off"
else
    bad "no h3100-vlog at $vlog (the test command builds it)"
fi
run_guest hot "$disk" "$tmp/hot.sh" \
    --device-opts "model-params=user_bytes=56M,,ambient_k=340,,thermal_tau_ms=200"
finish
