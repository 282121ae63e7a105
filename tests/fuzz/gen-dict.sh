#!/usr/bin/env bash
# The device fuzzer's dictionary: tests/fuzz/nvme.dict (registers,
# enable values, SGL types) and a token per opcode of the drive's
# command sets and per log page it serves, read from
# hw/tables/nvme-cmds.h and include/h3100/log-pages.h by the C
# preprocessor, so the lists are never copied.
#
#   tests/fuzz/gen-dict.sh [OUT]     (default: standard output)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-/dev/stdout}

opcodes() {
    printf '%s\n' '#include "tables/nvme-cmds.h"' \
        '#define H3100_DICT_OP(op, ...) H3100_DICT op' \
        'H3100_ADMIN_COMMANDS(H3100_DICT_OP)' \
        'H3100_IO_COMMANDS(H3100_DICT_OP)' \
        '#include "h3100/log-pages.h"' \
        'H3100_LOG_PAGES(H3100_DICT_OP)' |
        cpp -P -I"$root/hw" -I"$root/include" - |
        tr ' ' '\n' | awk '$0 == "H3100_DICT" { want = 1; next }
            want { want = 0; print }'
}

ops=$(opcodes)
[ -n "$ops" ] ||
    { echo "[h3100] error: no opcodes in nvme-cmds.h or log-pages.h" >&2; exit 1; }
{
    cat "$here/nvme.dict"
    echo "# opcodes and LIDs: hw/tables/nvme-cmds.h, include/h3100/log-pages.h"
    for op in $ops; do
        printf '"\\x%02x\\x00\\x00\\x00"\n' "$((op))"
    done | sort -u
} >"$out"
