#!/usr/bin/env bash
# Install Debian on an emulated H3100 as its root disk, the way an
# installer does it, then boot it through UEFI into systemd, reboot it and
# shut it down.
#
#   scripts/guest/install-debian.sh [--out DIR] [--size 4G] [--suite bookworm]
#                             [--timeout 1800] [--keep]
#
#   1. debootstrap (Debian's packages: minbase, systemd, the cloud kernel,
#      initramfs-tools, systemd-boot, nvme-cli) into a tree, turned into a
#      tar archive; cached in $H3100_CACHE/debian/ by suite and recipe.
#   2. The installer: the test guest (scripts/guest/guest-run.sh) with two
#      drives: the archive as "installation medium" (an H3100 with serial
#      INSTALL-MEDIA), and the target H3100 (DIR/h3100.raw, sparse, with
#      its state file DIR/h3100.h3s).  Inside Linux it partitions the
#      target (GPT: 256 MiB ESP, ext4 root), makes the file systems,
#      unpacks the system, puts systemd-boot, the kernel and the
#      initramfs on the ESP and writes fstab and the boot entry
#      (root=PARTUUID=...).
#   3. Boot from the target through OVMF (bootindex=0, no -kernel): the
#      firmware's NVMe driver loads systemd-boot, kernel and initramfs;
#      Linux mounts its root from the drive; systemd reaches
#      multi-user.target.  A unit of ours (h3100-check.service) reports on
#      the second serial port: boot number, failed units, root device,
#      fstrim.timer (enabled and active) and one fstrim run, the drive's
#      unsafe-shutdown count.  Boot 1 reboots, boot 2 powers off; Linux
#      gives the controller its shutdown notification both times (trace
#      event h3100_ctrl_shutdown).
#   Each step prints its time; the last lines are the checks (ok / not ok)
#   and exit status 0 when all pass.
#
#   --out DIR      where the drive, its state and the logs go (default: a
#                  new directory under ${TMPDIR:-/tmp}; kept with --keep)
#   --size SIZE    the drive's namespace (default 4G; sparse on the host)
#   --suite NAME   Debian suite for debootstrap (default: the host's)
#   --timeout S    for each QEMU run (default 1800)
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

out='' size=4G suite='' tmo=1800 keep=0
qemu=${H3100_QEMU:-$H3100_BUILD/qemu-system-x86_64}
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=$2; keep=1; shift ;;
    --size) size=$2; shift ;;
    --suite) suite=$2; shift ;;
    --timeout) tmo=$2; shift ;;
    --keep) keep=1 ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
[ -x "$qemu" ] || h3100_die "no QEMU at $qemu (scripts/test.sh builds it)"
[ "$(id -u)" = 0 ] || h3100_die "debootstrap needs root (run as root or with sudo)"
for f in /usr/sbin/debootstrap /usr/share/OVMF/OVMF_CODE_4M.fd; do
    [ -e "$f" ] || h3100_die "missing $f (scripts/install-deps.sh installs: ${H3100_PKGS_BOOT[*]})"
done
[ -n "$suite" ] || suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
if [ -z "$out" ]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/h3100-debian.XXXXXX")
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ "$keep" = 1 ] || trap 'rm -rf "$out"' EXIT
H3100_SAY_T0=$SECONDS   # h3100_say: seconds since now

# --- 1. the system, as a tar archive -------------------------------------------
PKGS=systemd-sysv,udev,kmod,linux-image-cloud-amd64,initramfs-tools,systemd-boot-efi,util-linux,e2fsprogs,dosfstools,nvme-cli,procps
# the host's Debian mirror (not its security archive)
mirror=$(awk '($1 == "URIs:" || $1 == "deb") && $2 !~ /security/ { print $2; exit }' \
         /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}

# configure_tree ROOT: what an installer would set up besides fstab
configure_tree() {
    local r=$1
    echo h3100-debian >"$r/etc/hostname"
    printf '127.0.0.1 localhost\n127.0.1.1 h3100-debian\n' >"$r/etc/hosts"
    chroot "$r" passwd -d root >/dev/null
    cat >"$r/usr/local/sbin/h3100-check" <<'EOF'
#!/bin/sh
# Report on the second serial port, then reboot (boot 1) or power off.
n=$(cat /var/lib/h3100-boots 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" >/var/lib/h3100-boots
sync
{
    echo "@boot $n"
    echo "@kernel $(uname -r)"
    echo "@uptime $(cut -d' ' -f1 /proc/uptime)"
    echo "@target $(systemctl is-active multi-user.target)"
    echo "@failed $(systemctl --failed --no-legend | wc -l) $(systemctl --failed --no-legend | tr -s ' ' | cut -d' ' -f2 | tr '\n' ' ')"
    echo "@root $(findmnt -no SOURCE /) $(findmnt -no FSTYPE /)"
    echo "@esp $(findmnt -no SOURCE /boot/efi)"
    echo "@fstrim-timer $(systemctl is-enabled fstrim.timer) $(systemctl is-active fstrim.timer)"
    echo "@fstrim $(fstrim -v / 2>&1)"
    echo "@unsafe $(nvme smart-log /dev/nvme0 | awk -F: '/unsafe_shutdowns/ { gsub(/ /, "", $2); print $2 }')"
    echo "@end"
} >/dev/ttyS1 2>&1
if [ "$n" = 1 ]; then systemctl --no-block reboot; else systemctl --no-block poweroff; fi
EOF
    chmod 755 "$r/usr/local/sbin/h3100-check"
    cat >"$r/etc/systemd/system/h3100-check.service" <<'EOF'
[Unit]
Description=dapustor-h3100: report the boot, then reboot or power off
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/h3100-check

[Install]
WantedBy=multi-user.target
EOF
    chroot "$r" systemctl enable h3100-check.service >/dev/null 2>&1
    chroot "$r" apt-get clean
}

recipe_id=$( { echo "$suite $PKGS $mirror"; declare -f configure_tree; } |
            sha256sum | cut -c1-12)
cache=$H3100_CACHE/debian
tarball=$cache/$suite-$recipe_id.tar
mkdir -p "$cache"
if [ -f "$tarball" ]; then
    h3100_say "[1/3] using the cached system $(basename "$tarball") ($(du -h "$tarball" | cut -f1))"
else
    h3100_say "[1/3] debootstrap $suite (minbase + $PKGS) from $mirror"
    tree=$cache/tree.$$
    rm -rf "$tree"
    debootstrap --variant=minbase --include="$PKGS" "$suite" "$tree" "$mirror" \
        >"$out/debootstrap.log" 2>&1 ||
        { tail -20 "$out/debootstrap.log" >&2; rm -rf "$tree"; h3100_die "debootstrap failed"; }
    configure_tree "$tree"
    ls "$tree"/boot/vmlinuz-* "$tree"/boot/initrd.img-* >/dev/null ||
        h3100_die "no kernel or initramfs in the tree"
    tar -C "$tree" --numeric-owner -cpf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    rm -rf "$tree"
    h3100_say "      system archive $(du -h "$tarball" | cut -f1)"
fi

# --- 2. the installer ------------------------------------------------------------
media=$out/media.raw
cp --sparse=always "$tarball" "$media"
msz=$(( ($(stat -c %s "$media") + 1048575) / 1048576 * 1048576 ))
truncate -s "$msz" "$media"
disk=$out/h3100.raw
state=$out/h3100.h3s
rm -f "$disk" "$state"
truncate -s "$size" "$disk"
dsz=$(stat -c %s "$disk")

cat >"$out/install.sh" <<'EOF'
# (busybox sh in the test guest) install Debian from the medium
set -u
dev_by_serial() {
    for c in /sys/class/nvme/nvme*; do
        [ "$(tr -d ' ' <"$c/serial")" = "$1" ] && { echo "/dev/$(basename "$c")n1"; return; }
    done
}
for c in /sys/class/nvme/nvme*; do
    s=$(tr -d ' ' <"$c/serial")
    [ "$s" = INSTALL-MEDIA ] || tgt=/dev/$(basename "$c")n1
done
i=0; while [ ! -e /dev/nvme1n1 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
med=$(dev_by_serial INSTALL-MEDIA)
echo "medium $med, target $tgt"
fail() { echo "FAILED: $*"; exit 1; }
sgdisk -Z "$tgt" >/dev/null 2>&1
sgdisk -n 1:2048:+256M -t 1:ef00 -c 1:EFI -n 2:0:0 -t 2:8304 -c 2:root "$tgt" >/dev/null || fail sgdisk
i=0; while [ ! -e "${tgt}p2" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -e "${tgt}p2" ] || fail "no ${tgt}p2 after partitioning"
puuid=$(sgdisk -i 2 "$tgt" | awk '/unique GUID/ { print tolower($4) }')
euuid=$(sgdisk -i 1 "$tgt" | awk '/unique GUID/ { print tolower($4) }')
mkfs.fat -F 32 -n ESP "${tgt}p1" >/dev/null || fail mkfs.fat
mkfs.ext4 -q -F -L root "${tgt}p2" || fail mkfs.ext4
mkdir -p /target && mount -t ext4 "${tgt}p2" /target || fail "mount root"
t=$(cut -d' ' -f1 /proc/uptime)
tar -xpf "$med" -C /target || fail "unpacking the system"
echo "unpacked $(du -sm /target | cut -f1) MiB in $(awk -v a="$t" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.0f", b - a }') s"
k=$(ls /target/boot/vmlinuz-* | tail -n1); r=$(ls /target/boot/initrd.img-* | tail -n1)
mkdir -p /target/boot/efi
cat >/target/etc/fstab <<FSTAB
PARTUUID=$puuid / ext4 errors=remount-ro 0 1
PARTUUID=$euuid /boot/efi vfat umask=0077 0 2
FSTAB
e="${tgt}p1"
printf 'default debian.conf\ntimeout 0\n' >/tmp/loader.conf
printf 'title Debian on the H3100\nlinux /vmlinuz\ninitrd /initrd.img\noptions root=PARTUUID=%s rw console=ttyS0\n' "$puuid" >/tmp/debian.conf
mmd -i "$e" ::/EFI ::/EFI/BOOT ::/loader ::/loader/entries || fail mmd
mcopy -i "$e" /target/usr/lib/systemd/boot/efi/systemd-bootx64.efi ::/EFI/BOOT/BOOTX64.EFI || fail "systemd-boot"
mcopy -i "$e" "$k" ::/vmlinuz && mcopy -i "$e" "$r" ::/initrd.img || fail "kernel to the ESP"
mcopy -i "$e" /tmp/loader.conf ::/loader/loader.conf && mcopy -i "$e" /tmp/debian.conf ::/loader/entries/debian.conf || fail "boot entry"
umount /target || fail umount
sync
echo "installed: root PARTUUID=$puuid, $(basename "$k"), $(basename "$r")"
echo "@installed"
EOF

h3100_say "[2/3] installing from the medium ($(du -h "$tarball" | cut -f1)) onto the H3100 ($size) inside the test guest"
"$H3100_PROJECT/scripts/guest/guest-run.sh" --qemu "$qemu" --disk "$disk" --mem 2048 \
    --device-opts "model-params=user_bytes=$dsz,state=$state" --timeout "$tmo" \
    "$out/install.sh" -- \
    -drive "file=$media,if=none,id=m0,format=raw" \
    -device "dapustor-h3100,drive=m0,serial=INSTALL-MEDIA,timing=off,model-params=user_bytes=$msz" \
    >"$out/install.out" 2>"$out/install.err" || true
sed 's/^/      /' "$out/install.out" >&2
grep -qx '@installed' "$out/install.out" || { cat "$out/install.err" >&2; h3100_die "the installation failed"; }

# --- 3. boot it through UEFI, reboot, power off --------------------------------------
h3100_say "[3/3] booting the installed system through OVMF (reboot, then power off)"
cp /usr/share/OVMF/OVMF_VARS_4M.fd "$out/ovmf-vars.fd"
: >"$out/report.txt"
tb=$SECONDS
rc=0
timeout -k 5 "$tmo" "$qemu" -nodefaults -no-user-config -display none \
    -machine q35 -m 2048 -smp 2 -accel tcg \
    -drive "if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd" \
    -drive "if=pflash,format=raw,unit=1,file=$out/ovmf-vars.fd" \
    -serial "file:$out/console.log" -serial "file:$out/report.txt" \
    -drive "file=$disk,if=none,id=d0,format=raw" \
    -device "dapustor-h3100,id=h0,drive=d0,bootindex=0,model-params=user_bytes=$dsz,state=$state" \
    -D "$out/trace.log" -trace h3100_ctrl_shutdown </dev/null >"$out/qemu.err" 2>&1 || rc=$?
boot_s=$((SECONDS - tb))
tr -d '\r' <"$out/report.txt" | sed 's/^/      /' >&2

# --- the checks ---------------------------------------------------------------------------
fails=0
check() {
    if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fails=$((fails + 1)); fi
}
rep() { tr -d '\r' <"$out/report.txt" | awk -v k="@$1" -v n="$2" '$1 == "@boot" { b = $2 } !d && b == n && $1 == k { $1 = ""; sub(/^ /, ""); print; d = 1 }'; }
check "$rc" "QEMU ended with the guest's power-off (rc $rc, ${boot_s} s for both boots)"
for n in 1 2; do
    [ "$(rep target $n)" = active ]; check $? "boot $n: systemd reached multi-user.target (uptime $(rep uptime $n) s)"
    [ "$(rep failed $n | cut -d' ' -f1)" = 0 ]; check $? "boot $n: no failed units ($(rep failed $n))"
    case $(rep root $n) in /dev/nvme0n1p2\ ext4) r=0 ;; *) r=1 ;; esac
    check $r "boot $n: root is $(rep root $n)"
done
[ "$(rep fstrim-timer 1)" = "enabled active" ]; check $? "fstrim.timer: $(rep fstrim-timer 1)"
case $(rep fstrim 1) in *trimmed*) r=0 ;; *) r=1 ;; esac
check $r "fstrim on the drive: $(rep fstrim 1)"
[ "$(rep unsafe 2)" = "$(rep unsafe 1)" ]; check $? "no unsafe shutdown counted by the reboot ($(rep unsafe 1) -> $(rep unsafe 2))"
n=$(grep -c h3100_ctrl_shutdown "$out/trace.log" 2>/dev/null || echo 0)
[ "$n" -ge 2 ]; check $? "the controller got its shutdown notification at the reboot and the power-off ($n)"
flags=$(od -An -tu4 -j108 -N4 "$state" | tr -d ' ')
[ "$flags" = 0 ]; check $? "the drive's state file is clean after the power-off"
h3100_say "done in $((SECONDS - H3100_SAY_T0)) s ($([ "$keep" = 1 ] && echo "kept in $out" || echo "removed"))"
[ "$fails" = 0 ]
