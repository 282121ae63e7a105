#!/usr/bin/env bash
# Guest Streams test: the Streams directive driven from Linux with
# nvme-cli, and the WAF it saves.
#
#   tests/guest/test_guest_streams.sh [QEMU]
#
# One boot, a small drive (112 MiB user, one die, 26% spare: reclaim
# starts at once; timing=off for speed).  nvme-cli sees Directives in OACS, reads the
# Identify directive and the Streams parameters, enables Streams,
# allocates resources, and writes to a stream (`nvme write --dir-type=1
# --dir-spec=5`, which Get Status then lists).  h3100-hotcold (built
# static, copied in) writes hot data (80% of the writes to a fifth of the
# LBAs) and cold data: first mixed, then, after a Format, with hot on
# stream 1 and cold on stream 2.  The vendor log D0h (h3100-vlog
# --fields) gives each phase's WAF over its last 3 capacities of writes;
# with streams it must be at least 8% lower.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

tools=$H3100_BUILD/tools
small="user_bytes=112M,,channels=1,,dies_per_channel=1,,pages_per_block=24,,blocks_per_plane=192,,spare_blocks_per_plane=4,,grown_bad_ppm=0"
disk=$tmp/h3100.raw
truncate -s $((112 * 1024 * 1024)) "$disk"

{
    echo "$GUEST_PRELUDE"
    cat <<'GUEST'
N=/dev/nvme0
dir() { nvme "$@" 2>&1; }
oacs=$(ctrl oacs)
[ $(( oacs & 0x20 )) = 32 ]; chk $? "id-ctrl oacs $oacs has Directives (bit 5)"
out=$(dir dir-receive $N --namespace-id=1 --dir-type=0 --dir-oper=1 -H)
echo "$out" | sed -n '1,8p' | sed 's/^/  /'
echo "$out" | grep -qi 'stream.*supported'; chk $? "dir-receive: the Identify directive lists Streams"
dir dir-send $N --namespace-id=1 --dir-type=0 --dir-oper=1 --target-dir=1 --endir=1 >/dev/null
chk $? "dir-send: enable Streams"
out=$(dir dir-receive $N --namespace-id=1 --dir-type=1 --dir-oper=1 -H)
echo "$out" | sed 's/^/  /'
echo "$out" | grep -qiE 'max.*stream.*limit.*: *7'; chk $? "dir-receive: Streams parameters, MSL 7"
out=$(dir dir-receive $N --namespace-id=1 --dir-type=1 --dir-oper=3 --req-resource=2)
echo "  $out"
echo "$out" | grep -qiE '(result|dw0).*(0x)?0*2\b'; chk $? "dir-receive: allocate 2 streams"
dd if=/dev/urandom of=/tmp/blk bs=4096 count=1 2>/dev/null
dir write /dev/nvme0n1 --start-block=0 --block-count=7 --data-size=4096 \
    --data=/tmp/blk --dir-type=1 --dir-spec=5 >/dev/null
chk $? "nvme write --dir-type=1 --dir-spec=5"
out=$(dir dir-receive $N --namespace-id=1 --dir-type=1 --dir-oper=2 -H)
echo "$out" | sed 's/^/  /'
echo "$out" | grep -qE '(^|[^0-9])5$'; chk $? "dir-receive: Get Status lists stream 5"
dir dir-send $N --namespace-id=1 --dir-type=1 --dir-oper=2 >/dev/null
chk $? "dir-send: release resources"

# vlog_bytes: host ($vh) and NAND ($vn) bytes written, one read of log D0h
vlog_bytes() {
    nvme get-log $N --log-id=0xd0 --log-len=512 --raw-binary >/tmp/v.bin 2>/dev/null
    /guest/h3100-vlog --fields /tmp/v.bin >/tmp/v.txt
    vh=$(sed -n 's/^host_write_bytes=//p' /tmp/v.txt)
    vn=$(sed -n 's/^nand_write_bytes=//p' /tmp/v.txt)
}
# phase LABEL [--streams]: 2 capacities to settle, WAF x1000 over 3 more
phase() {
    label=$1; shift
    /guest/h3100-hotcold /dev/nvme0n1 --bytes 224M --seed 7 "$@" >/dev/null
    vlog_bytes; h0=$vh; n0=$vn
    /guest/h3100-hotcold /dev/nvme0n1 --bytes 336M --seed 8 "$@"
    chk $? "h3100-hotcold $label"
    vlog_bytes; h1=$vh; n1=$vn
    eval "waf_$label=$(( (n1 - n0) * 1000 / (h1 - h0) ))"
}
phase mixed
nvme format /dev/nvme0n1 --force >/dev/null 2>&1; chk $? "nvme format between the phases"
dir dir-send $N --namespace-id=1 --dir-type=0 --dir-oper=1 --target-dir=1 --endir=1 >/dev/null
phase streams --streams
echo "  WAF x1000: mixed $waf_mixed, hot and cold on their own streams $waf_streams"
[ "$waf_mixed" -gt 1200 ]; chk $? "mixed hot and cold data reclaims: WAF x1000 $waf_mixed > 1200"
[ $(( waf_streams * 100 )) -lt $(( waf_mixed * 92 )) ]
chk $? "streams lower WAF by more than 8%: $waf_streams vs $waf_mixed"
exit $GUEST_FAIL
GUEST
} >"$tmp/streams.sh"

if [ -x "$tools/h3100-vlog" ] && [ -x "$tools/h3100-hotcold" ]; then
    GUEST_TIMEOUT=480 run_guest streams "$disk" "$tmp/streams.sh" \
        --file "$tools/h3100-vlog" --file "$tools/h3100-hotcold" \
        --device-opts "model-params=$small,timing=off"
else
    bad "no h3100-vlog / h3100-hotcold in $tools (the test command builds them)"
fi
finish
