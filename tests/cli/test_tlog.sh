#!/usr/bin/env bash
# h3100-tlog decodes a Telemetry log page (07h / 08h) laid out as
# include/h3100/telemetry-log.h says, and refuses, with one line and
# exit 1, a file that is not one or does not hold what its header says.
#
#   tests/cli/test_tlog.sh H3100-TLOG
set -uo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/lib.sh"
tlog=$1
h3100_tmpdir tlog
# shellcheck source=tests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"

# page LID DIES: 4096 bytes for one die and one channel; host 3 GB and
# NAND 7.5 GB written, 2 s of model time, die 0 busy 1 s, one reclaim
# victim (superblock 5, 100 slots) of 3
page() {
    python3 - "$1" "$2" <<'PY'
import struct, sys
b = bytearray(4096)
struct.pack_into('<B', b, 0, int(sys.argv[1], 16))
struct.pack_into('<HHH', b, 8, 1, 2, 7)
b[384:384 + 14] = b'host-initiated'
s = 512
b[s:s + 4] = b'H3TL'
struct.pack_into('<HHIIQ', b, s + 4, 1, 0, int(sys.argv[2]), 1, 2000000000)
struct.pack_into('<QQ', b, s + 80, 3000000000, 7500000000)
struct.pack_into('<QQ', b, 1024, 1000000000, 500000000)
struct.pack_into('<QQII', b, 1536, 3, 0, 1, 0)
struct.pack_into('<QIII', b, 1536 + 24, 1000000000, 5, 100, 0)
sys.stdout.buffer.write(b)
PY
}
page 07 1 >"$tmp/good"
out=$("$tlog" "$tmp/good"); rc=$?
[ $rc = 0 ]; check $? "decodes a 07h page (exit $rc)"
case $out in *"log 07h (host-initiated)"*) r=0 ;; *) r=1 ;; esac
check $r "names the page"
case $out in *"WAF 2.500"*) r=0 ;; *) r=1 ;; esac
check $r "WAF from host and NAND bytes"
case $out in *"die     0    busy 1000000000 ns (50.0%)"*) r=0 ;; *) r=1 ;; esac
check $r "die 0 busy half the model time"
case $out in *"superblock 5, 100 slots to move"*) r=0 ;; *) r=1 ;; esac
check $r "the reclaim history"
"$tlog" <"$tmp/good" >/dev/null; check $? "reads stdin"

refused() {  # refused LABEL FILE: exit 1, one line on stderr
    local err rc
    err=$("$tlog" "$2" 2>&1 >/dev/null); rc=$?
    [ $rc = 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ]
    check $? "refuses $1 with one line: $err"
}
head -c 1000 "$tmp/good" >"$tmp/short"; refused "a truncated page" "$tmp/short"
page 02 1 >"$tmp/lid"; refused "another log page" "$tmp/lid"
page 07 100 >"$tmp/dies"; refused "a snapshot whose dies do not fit" "$tmp/dies"
: >"$tmp/empty"; refused "an empty file" "$tmp/empty"
tap_summary
