#!/usr/bin/env bash
# The plugin as a Debian package (scripts/build-plugin.sh --deb).
#
#   scripts/lib/plugin-deb.sh OUTDIR PACKAGE VERSION MULTIARCH
#
# Packs OUTDIR's loader, device and wrapper with dpkg-deb into
# OUTDIR/dapustor-h3100-plugin_<project>+qemu<VERSION>_<arch>.deb:
#   /usr/lib/MULTIARCH/qemu/dapustor-h3100{,-impl}.so  (the directory
#       libvirt's AppArmor abstraction already lets QEMU map)
#   /usr/bin/qemu-system-x86_64-h3100
# It depends on exactly PACKAGE (= VERSION): an upgrade of QEMU waits for a
# plugin rebuilt for it, and a forced one meets the loader's refusal.
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ $# = 4 ] || h3100_die "usage: plugin-deb.sh OUTDIR PACKAGE VERSION MULTIARCH"
out=$1 pkg=$2 ver=$3 multiarch=$4
arch=$(dpkg --print-architecture)
proj=$(sed -n "s/^ *version: '\([^']*\)'.*/\1/p" "$H3100_PROJECT/meson.build" | sed -n 1p)
debver="$proj+qemu$(printf '%s' "${ver#*:}" | tr '~' '.')"
root=$out/deb-root
rm -rf "$root"
install -d "$root/DEBIAN" "$root/usr/lib/$multiarch/qemu" "$root/usr/bin" \
    "$root/usr/share/doc/dapustor-h3100-plugin"
install -m 644 "$out/dapustor-h3100.so" "$out/dapustor-h3100-impl.so" \
    "$root/usr/lib/$multiarch/qemu/"
install -m 755 "$out/qemu-system-x86_64-h3100" "$root/usr/bin/"
install -m 644 "$out/BUILD-INFO" "$H3100_PROJECT/docs/guide/plugin.md" \
    "$root/usr/share/doc/dapustor-h3100-plugin/"
cat >"$root/DEBIAN/control" <<CTRL
Package: dapustor-h3100-plugin
Version: $debver
Architecture: $arch
Maintainer: dapustor-h3100 developers <dapustor-h3100@localhost>
Depends: $pkg (= $ver)
Section: misc
Priority: optional
Installed-Size: $(du -sk "$root/usr" | cut -f1)
Description: DapuStor H3100 NVMe SSD as a plugin for Debian's QEMU
 The dapustor-h3100 PCIe NVMe device (a DapuStor H3100 enterprise SSD
 with its drive model) for the distribution's qemu-system-x86_64, loaded
 with LD_PRELOAD by qemu-system-x86_64-h3100, without rebuilding QEMU.
 Built for $pkg $ver only: the loader refuses any other QEMU build.
CTRL
deb=$out/dapustor-h3100-plugin_${debver}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
rm -rf "$root"
h3100_log "package: $deb"
