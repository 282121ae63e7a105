#!/usr/bin/env bash
# h3100-vlog decodes a model log page (D0h) laid out as
# include/h3100/vlog.h says, in its readable and its --fields form, and
# refuses a page of another version or a short one.
#
#   tests/cli/test_vlog.sh H3100-VLOG
set -uo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/lib.sh"
vlog=$1
h3100_tmpdir vlog
# shellcheck source=tests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"

# page VERSION: 512 bytes; version, size 512, host bytes 3 GB at 8,
# NAND bytes 7.5 GB at 16, WAF 2500 at 24, free superblocks 9 of 40
# at 144, drive time 1.5 s at 248
page() {
    python3 - "$1" <<'PY'
import struct, sys
b = bytearray(512)
struct.pack_into('<HHI', b, 0, int(sys.argv[1]), 512, 60)
struct.pack_into('<QQQ', b, 8, 3000000000, 7500000000, 2500)
struct.pack_into('<II', b, 144, 9, 40)
struct.pack_into('<Q', b, 248, 1500000000)
sys.stdout.buffer.write(b)
PY
}
page 1 >"$tmp/p1"
page 2 >"$tmp/p2"
head -c 100 "$tmp/p1" >"$tmp/short"

out=$("$vlog" "$tmp/p1"); check $? "a version-1 page decodes"
grep -q '^host bytes written  *3000000000 (3.000 GB)' <<<"$out"; check $? "host bytes at offset 8"
grep -q '^WAF (lifetime)  *2.500$' <<<"$out"; check $? "WAF x1000 at offset 24"
grep -q '^free superblocks  *9 of 40$' <<<"$out"; check $? "free superblocks at 144, of 148"
grep -q '^drive time (this run)  *1.500 s$' <<<"$out"; check $? "drive time at 248"

kv=$("$vlog" --fields <"$tmp/p1"); check $? "--fields reads stdin"
grep -qx 'nand_write_bytes=7500000000' <<<"$kv"; check $? "--fields: nand_write_bytes"
grep -qx 'superblocks=40' <<<"$kv"; check $? "--fields: superblocks"
grep -qx 'now_ns=1500000000' <<<"$kv"; check $? "--fields: now_ns, the last field"
[ "$(grep -c '=' <<<"$kv")" -ge 38 ]; check $? "--fields: every field ($(grep -c '=' <<<"$kv") lines)"

"$vlog" "$tmp/p2" >/dev/null 2>"$tmp/e"; r=$?
[ "$r" = 1 ] && [ "$(wc -l <"$tmp/e")" = 1 ]; check $? "version 2 refused with one line (exit $r)"
"$vlog" "$tmp/short" >/dev/null 2>"$tmp/e"; r=$?
[ "$r" = 1 ] && [ "$(wc -l <"$tmp/e")" = 1 ]; check $? "a short page refused with one line (exit $r)"

tap_summary
