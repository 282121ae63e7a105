#!/usr/bin/env bash
# The plugin's loader, wrapper and package (docs/guide/plugin.md).
#
#   tests/plugin/test_plugin.sh PLUGIN_DIR IN_TREE_QEMU
#
# PLUGIN_DIR is scripts/build-plugin.sh's OUTDIR (built with --deb).
# Checks: the distribution's binary lists the device through the wrapper,
# with its properties; the loader preloaded into /bin/true, sh and qemu-img
# changes nothing and leaves no LD_PRELOAD to children; it refuses with one
# line and exit 1 another QEMU build (the in-tree 10.0.13), a binary that
# exports nothing (Debian's microvm QEMU), the same version with another
# build id (a copy of the binary with its build id changed), another
# version (the loader built for the other series' Debian 13 version, in the
# stock binary) and another ABI (the device library with one QOM size of
# plugin/h3100-abi.c's table patched); the .deb
# depends on exactly the installed qemu-system-x86, holds the loader and
# device where AppArmor lets QEMU map them, and its wrapper, unpacked,
# runs the device; dpkg would install it here.
# Prints ok / not ok lines and 'N passed, N failed'; exit 1 on a failure.
# Skips (exit 77, one line saying why) on a machine whose QEMU cannot take
# the plugin (scripts/build-plugin.sh --check) or is not the one PLUGIN_DIR
# was built for.
# Environment: H3100_INTREE_LIBS, a directory of libraries the in-tree
# QEMU needs and this system lacks (a Debian 12 build in a Debian 13 root:
# libaio.so.1, which trixie renamed libaio.so.1t64), for that binary only.
set -uo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/lib.sh"
[ $# = 2 ] || { echo "usage: $0 PLUGIN_DIR IN_TREE_QEMU" >&2; exit 2; }
plugin=$(readlink -f "$1")
intree=$(readlink -f "$2")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# skip SENTENCE: no matching QEMU here, said, never a silent pass
skip() { echo "1..0 # SKIP $*"; exit 77; }
why=$("$here/../../scripts/build-plugin.sh" --check 2>&1 >/dev/null) ||
    skip "no QEMU here that can take the plugin: ${why#\[h3100\] error: }"
[ -f "$plugin/BUILD-INFO" ] || skip "no plugin in $plugin (scripts/build-plugin.sh did not run)"
loader=$plugin/dapustor-h3100.so
wrapper=$plugin/qemu-system-x86_64-h3100
stock=$(sed -n 's/^binary: //p' "$plugin/BUILD-INFO")
pkgver=$(sed -n 's/^package: //p' "$plugin/BUILD-INFO")
installed=$(dpkg-query -W -f='${Version}' "${pkgver%% *}" 2>/dev/null) || installed=none
[ "$installed" = "${pkgver#* }" ] ||
    skip "the plugin was built for ${pkgver%% *} ${pkgver#* }; installed here: $installed"

h3100_tmpdir plugin
# shellcheck source=tests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"

# --- the device in the stock binary -------------------------------------------
"$wrapper" -device help >"$tmp/help" 2>&1
grep -q '^name "dapustor-h3100", bus PCI' "$tmp/help"
check $? "$stock ($pkgver) lists dapustor-h3100 through the wrapper"
"$wrapper" -device dapustor-h3100,help >"$tmp/props" 2>&1
nprops=$(grep -c '=<' "$tmp/props")
grep -q 'model-params=<str>' "$tmp/props" && [ "$nprops" -ge 40 ]
check $? "-device dapustor-h3100,help: $nprops properties"
echo '{"execute":"qmp_capabilities"}
{"execute":"query-pci"}
{"execute":"quit"}' |
    "$wrapper" -M q35 -accel tcg -nodefaults -display none -qmp stdio \
        -blockdev null-co,node-name=n0,size=3200631791616 \
        -device dapustor-h3100,drive=n0,id=nvme0 >"$tmp/qmp" 2>&1
grep -q '"qdev_id": "nvme0"' "$tmp/qmp" &&
    grep -q '"id": {"device": 4248, "subsystem-vendor": 7739, "vendor": 7739' "$tmp/qmp"
check $? "query-pci on the stock binary shows 1e3b:1098"

# --- harmless where it is not wanted --------------------------------------------
out=$(LD_PRELOAD=$loader /bin/true 2>&1)
rc=$?
[ "$rc" = 0 ] && [ -z "$out" ]
check $? "preloaded into /bin/true: exit $rc, no output"
out=$(LD_PRELOAD="$loader" sh -c 'echo "[${LD_PRELOAD-unset}]"' 2>&1)
[ "$out" = "[unset]" ]
check $? "a child of a preloaded sh inherits no LD_PRELOAD: $out"
out=$(LD_PRELOAD="$loader $tmp/nothing.so" sh -c 'echo "[${LD_PRELOAD-unset}]"' 2>/dev/null)
[ "$out" = "[$tmp/nothing.so]" ]
check $? "other LD_PRELOAD entries stay: $out"
if command -v qemu-img >/dev/null; then
    out=$(LD_PRELOAD=$loader qemu-img --version 2>&1 | sed -n 1p)
    [[ $out == "qemu-img version"* ]]
    check $? "preloaded into qemu-img (not qemu-system-*): $out"
fi
# QEMU's own children (here the shell of an exec: migration) inherit none
printf '%s\n' '{"execute":"qmp_capabilities"}' \
    "{\"execute\":\"migrate\",\"arguments\":{\"uri\":\"exec:env >$tmp/child.env\"}}" |
    "$wrapper" -M q35 -accel tcg -nodefaults -display none -S -qmp stdio >"$tmp/mig.qmp" 2>&1 &
qpid=$!
for _ in $(seq 100); do [ -s "$tmp/child.env" ] && break; sleep 0.1; done
sleep 0.2
kill "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null
[ -s "$tmp/child.env" ] && ! grep -q '^LD_PRELOAD=' "$tmp/child.env"
check $? "a child of QEMU started by the wrapper has no LD_PRELOAD ($(grep -c . "$tmp/child.env" 2>/dev/null || echo 0) variables)"

# --- refusals: one line, exit 1 ---------------------------------------------------
# refused LABEL EXPECT-REGEX CMD...: exit 1, one line on stderr matching it
refused() {
    local label=$1 want=$2 rc lines
    shift 2
    "$@" -M none -display none -S </dev/null >"$tmp/r.out" 2>"$tmp/r.err"
    rc=$?
    lines=$(wc -l <"$tmp/r.err")
    [ "$rc" = 1 ] && [ "$lines" = 1 ] && grep -qE "$want" "$tmp/r.err"
    check $? "$label: exit $rc, $lines line: $(cat "$tmp/r.err")"
}
built_for="^dapustor-h3100: this plugin was built for QEMU [0-9.]+ \\(Debian [^)]*\\); "
intree_env=(env ${H3100_INTREE_LIBS:+LD_LIBRARY_PATH=$H3100_INTREE_LIBS})
refused "another QEMU build (the in-tree $("${intree_env[@]}" "$intree" --version 2>&1 | awk 'NR == 1 { print $4 }'))" \
    "$built_for.*does not export QEMU's symbols" \
    "${intree_env[@]}" LD_PRELOAD="$loader" "$intree"
if [ -x /usr/bin/qemu-system-x86_64-microvm ]; then
    refused "a binary that exports nothing (Debian's qemu-system-x86_64-microvm)" \
        "$built_for.*does not export QEMU's symbols" \
        env LD_PRELOAD="$loader" /usr/bin/qemu-system-x86_64-microvm
fi
# the same version, another build: the stock binary with its build id changed
id=$(readelf -n "$stock" | awk '/Build ID:/ && !id { id = $3 } END { print id }')
cp "$stock" "$tmp/qemu-system-x86_64"
python3 - "$tmp/qemu-system-x86_64" "$id" <<'PY'
import sys
path, bid = sys.argv[1], bytes.fromhex(sys.argv[2])
data = bytearray(open(path, 'rb').read())
at = data.find(b'GNU\0' + bid)
assert at > 0 and data.find(b'GNU\0' + bid, at + 1) < 0
data[at + 4] ^= 0xff
open(path, 'wb').write(bytes(data))
PY
refused "the same version with another build id (a rebuild)" \
    "$built_for.*that version but build id [0-9a-f]+, not one of" \
    env LD_PRELOAD="$loader" "$tmp/qemu-system-x86_64"
# another version: the loader as built for Debian 13's QEMU of the other
# series (trixie's 10.0.13, trixie-backports' 11.1.3), in the stock binary
stock_up=${pkgver#* }
stock_up=${stock_up#*:}
stock_up=${stock_up%%[+~-]*}
case $stock_up in
10.0.*) other=11.1.3 other_pkg='Debian 1:11.1.3+ds-2~bpo13+1' ;;
*) other=10.0.13 other_pkg='Debian 1:10.0.13+ds-0+deb13u1' ;;
esac
gcc -O2 -fPIC -shared -std=gnu11 -DH3100_QEMU_VERSION="\"$other\"" \
    -DH3100_QEMU_PKGVERSION="\"$other_pkg\"" \
    -DH3100_QEMU_BUILD_IDS='"00"' -o "$tmp/dapustor-h3100.so" \
    "$here/../../plugin/h3100-loader.c" -ldl
refused "a plugin for another version ($other) in $stock ($stock_up)" \
    "built for QEMU ${other//./\\.} .*this process is QEMU ${stock_up//./\\.} \\(Debian " \
    env LD_PRELOAD="$tmp/dapustor-h3100.so" "$stock"
# another ABI: the loader and the device as built, but the device's table of
# QOM sizes (plugin/h3100-abi.c) says PCIDevice is 8 bytes larger
mkdir "$tmp/abi"
cp "$loader" "$plugin/dapustor-h3100-impl.so" "$tmp/abi/"
python3 - "$tmp/abi/dapustor-h3100-impl.so" <<'PY'
import struct, sys
path = sys.argv[1]
data = bytearray(open(path, 'rb').read())
at = data.find(b'H3100-QOM-SIZES\0')
if at < 0 or data.find(b'H3100-QOM-SIZES\0', at + 1) >= 0:
    sys.exit('no single QOM size table in ' + path)
pci = at + 16 + 2 * 8               # object, device, pci-device, memory-region
size, = struct.unpack_from('<Q', data, pci)
struct.pack_into('<Q', data, pci, size + 8)
open(path, 'wb').write(bytes(data))
PY
refused "a plugin whose PCIDevice is 8 bytes off the binary's (its QOM size table patched)" \
    "$built_for.*its pci-device instances are [0-9]+ bytes, the plugin's [0-9]+ \\(another ABI\\)" \
    env LD_PRELOAD="$tmp/abi/dapustor-h3100.so" "$stock"

# --- the .deb ------------------------------------------------------------------------
deb=''
for f in "$plugin"/dapustor-h3100-plugin_*.deb; do [ -f "$f" ] && deb=$f; done
[ -n "$deb" ]
check $? "the package: $(basename "${deb:-none}")"
if [ -n "$deb" ]; then
    depends=$(dpkg-deb -f "$deb" Depends)
    [ "$depends" = "${pkgver%% *} (= ${pkgver#* })" ]
    check $? "it depends on exactly the installed QEMU: $depends"
    dpkg-deb -c "$deb" | awk '{ print $NF }' >"$tmp/contents"
    multiarch=$(gcc -print-multiarch)
    for f in "./usr/lib/$multiarch/qemu/dapustor-h3100.so" \
             "./usr/lib/$multiarch/qemu/dapustor-h3100-impl.so" \
             ./usr/bin/qemu-system-x86_64-h3100; do
        grep -qx -- "$f" "$tmp/contents"
        check $? "it installs ${f#.}"
    done
    mkdir "$tmp/root"
    dpkg-deb -x "$deb" "$tmp/root"
    grep -q '^name "dapustor-h3100"' \
        < <("$tmp/root/usr/bin/qemu-system-x86_64-h3100" -device help 2>&1)
    check $? "its wrapper, unpacked, runs the device from ../lib/$multiarch/qemu"
    dpkg --dry-run -i "$deb" >"$tmp/dpkg.out" 2>&1
    check $? "dpkg --dry-run -i accepts it here (its dependency is met)"
fi

tap_summary
