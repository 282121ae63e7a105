#!/usr/bin/env bash
# Write a drive image that BIOS and UEFI firmware boot Linux from: GPT, an
# EFI system partition (FAT32) holding the kernel and initramfs,
# systemd-boot for UEFI (OVMF), syslinux behind a GPT-aware MBR for BIOS
# (SeaBIOS), and optionally a root file system image as partition 2.
# Nothing is mounted: the FAT is written with mtools, the partitions with
# sgdisk and dd.
#
#   scripts/guest/boot-image.sh --out IMG --kernel VMLINUZ --initrd INITRD \
#       --cmdline 'console=ttyS0 ...' [--size 256M] [--esp-mb 96] \
#       [--root FSIMG] [--title NAME]
#
#   --out IMG        the image (raw; created or overwritten)
#   --size SIZE      its size (default 256M; with --root: at least what
#                    the partitions need)
#   --esp-mb N       the EFI system partition's size (default 96 MiB)
#   --root FSIMG     a file system image (mkfs.ext4 -d ...) copied into
#                    partition 2 (GPT type Linux x86-64 root)
#   --title NAME     the boot menu entry's title (default Linux)
#
# The ESP has the legacy-BIOS-bootable attribute, so gptmbr.bin chains to
# syslinux in it; systemd-boot is EFI/BOOT/BOOTX64.EFI, the removable-media
# path every UEFI firmware tries.  Both menus have one entry, no time-out.
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

out='' kernel='' initrd='' cmdline='' size=256M esp_mb=96 root='' title=Linux
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=$2; shift ;;
    --kernel) kernel=$2; shift ;;
    --initrd) initrd=$2; shift ;;
    --cmdline) cmdline=$2; shift ;;
    --size) size=$2; shift ;;
    --esp-mb) esp_mb=$2; shift ;;
    --root) root=$2; shift ;;
    --title) title=$2; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
if [ -z "$out" ] || [ ! -f "$kernel" ] || [ ! -f "$initrd" ]; then
    h3100_die "usage: $0 --out IMG --kernel FILE --initrd FILE [--cmdline ARGS] (try --help)"
fi
case $esp_mb in ''|*[!0-9]*) h3100_die "--esp-mb: a number of MiB" ;; esac
[ "$esp_mb" -ge 40 ] || h3100_die "--esp-mb: at least 40 (FAT32)"
[ -z "$root" ] || [ -f "$root" ] || h3100_die "--root: no file $root"

SDBOOT=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
GPTMBR=/usr/lib/syslinux/mbr/gptmbr.bin
for f in "$SDBOOT" "$GPTMBR" /usr/bin/mcopy /usr/bin/syslinux /sbin/sgdisk /sbin/mkfs.vfat; do
    [ -e "$f" ] || h3100_die "missing $f (scripts/install-deps.sh installs: ${H3100_PKGS_BOOT[*]})"
done

h3100_tmpdir boot

# --- the ESP, as a file of its own -------------------------------------------
esp=$tmp/esp.img
truncate -s "${esp_mb}M" "$esp"
mkfs.vfat -F 32 -n H3100BOOT "$esp" >/dev/null
mmd -i "$esp" ::/EFI ::/EFI/BOOT ::/loader ::/loader/entries ::/syslinux
mcopy -i "$esp" "$kernel" ::/vmlinuz
mcopy -i "$esp" "$initrd" ::/initrd.img
mcopy -i "$esp" "$SDBOOT" ::/EFI/BOOT/BOOTX64.EFI
printf 'default h3100.conf\ntimeout 0\nconsole-mode keep\n' >"$tmp/loader.conf"
printf 'title %s\nlinux /vmlinuz\ninitrd /initrd.img\noptions %s\n' \
    "$title" "$cmdline" >"$tmp/h3100.conf"
printf 'DEFAULT linux\nPROMPT 0\nTIMEOUT 0\nLABEL linux\n  LINUX /vmlinuz\n  INITRD /initrd.img\n  APPEND %s\n' \
    "$cmdline" >"$tmp/syslinux.cfg"
mcopy -i "$esp" "$tmp/loader.conf" ::/loader/loader.conf
mcopy -i "$esp" "$tmp/h3100.conf" ::/loader/entries/h3100.conf
mcopy -i "$esp" "$tmp/syslinux.cfg" ::/syslinux/syslinux.cfg
syslinux --install --directory /syslinux "$esp"

# --- the disk: GPT, the ESP at 1 MiB, the root after it ------------------------
rm -f "$out"
truncate -s "$size" "$out"
need=$(( (1 + esp_mb + 1) * 1048576 ))
[ -z "$root" ] || need=$((need + $(stat -c %s "$root")))
[ "$(stat -c %s "$out")" -ge "$need" ] || h3100_die "--size: the partitions need $need bytes"
parts=(-n "1:2048:+${esp_mb}M" -t 1:ef00 -c 1:EFI -A 1:set:2)
[ -z "$root" ] || parts+=(-n "2:0:+$(( $(stat -c %s "$root") / 1024 ))K" -t 2:8304 -c 2:root)
# (sgdisk -q would not write the table: its messages go to /dev/null)
sgdisk "${parts[@]}" "$out" >/dev/null
dd if="$esp" of="$out" bs=1M seek=1 conv=notrunc status=none
if [ -n "$root" ]; then
    start=$(sgdisk -i 2 "$out" | awk '/First sector/ { print $3 }')
    dd if="$root" of="$out" bs=1M seek=$((start * 512)) oflag=seek_bytes \
        conv=notrunc,sparse status=none
fi
dd if="$GPTMBR" of="$out" bs=440 count=1 conv=notrunc status=none
printf '%s\n' "$out"
