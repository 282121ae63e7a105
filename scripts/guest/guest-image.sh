#!/usr/bin/env bash
# Build (or reuse) the Linux guest used by the guest tests: Debian's cloud
# kernel (NVMe built in) and a busybox initramfs holding the tools listed in
# the recipe below, copied from the host's Debian packages with their shared
# libraries.  Nothing is installed in the host's /boot.
#
#   scripts/guest/guest-image.sh            build if the recipe changed; print the dir
#   scripts/guest/guest-image.sh --force    rebuild even if cached
#   scripts/guest/guest-image.sh --check    exit 0 if the cached image is current
#   scripts/guest/guest-image.sh --flavour sql   the image with MariaDB + sysbench
#                                     (scripts/bench/sql-bench.sh), in guest-sql/
#   scripts/guest/guest-image.sh --kernel K  another generation of Debian's cloud
#                                     kernel than the release's, in guest-K/:
#                                     5.10 (bullseye's), 6.1 (bookworm's),
#                                     6.12 (trixie's; bookworm-backports has
#                                     it too), newest (trixie-backports'
#                                     newest).  A kernel the host's apt does
#                                     not know comes through a private apt
#                                     configuration (scripts/lib/private-apt.sh)
#
# The image lives in ${H3100_CACHE:-~/.cache/dapustor-h3100}/guest/:
#   vmlinuz, initramfs.cpio.gz, recipe (what it was built from).
# It is rebuilt when this script or any package version in the recipe
# changes.  Environment: H3100_CACHE, H3100_GUEST_KERNEL (kernel meta
# package, default linux-image-cloud-amd64).
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"
# shellcheck source=scripts/lib/private-apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/private-apt.sh"

# --- recipe -----------------------------------------------------------------
# Host packages whose files go into the initramfs (installed on the host with
# apt when missing).  Later images add fio, e2fsprogs, xfsprogs, ...
if ! declare -p H3100_PKGS_GUEST >/dev/null 2>&1; then
    H3100_PKGS_GUEST=(busybox-static nvme-cli pciutils pci.ids cpio)
fi
# Binaries copied with their libraries (ldd).  busybox supplies the shell,
# dd, sha256sum, awk, poweroff, ...
GUEST_BINS=(/bin/busybox /usr/sbin/nvme /usr/bin/lspci)
# Plain data files copied as they are (skipped when absent).
GUEST_DATA=(/usr/share/misc/pci.ids)
KERNEL_META=${H3100_GUEST_KERNEL:-linux-image-cloud-amd64}

# --- recipe additions for the guest tests (tests/guest/) ---------------------
# fio (libaio + io_uring engines built in), e2fsprogs (mke2fs/mkfs.ext4,
# e2fsck), xfsprogs (mkfs.xfs, xfs_repair).  XFS is a module in Debian's cloud
# kernel (ext4 is built in): GUEST_KMODS are paths inside the kernel package's
# lib/modules/VERSION/, in load order; they go to the same place in the
# initramfs and are listed in /etc/h3100-kmods (tests insmod them).
for _p in fio e2fsprogs xfsprogs gdisk dosfstools mtools; do
    case " ${H3100_PKGS_GUEST[*]} " in *" $_p "*) ;; *) H3100_PKGS_GUEST+=("$_p") ;; esac
done
unset _p
GUEST_BINS+=(/usr/bin/fio /usr/sbin/mke2fs /usr/sbin/mkfs.ext4 /usr/sbin/e2fsck
             /usr/sbin/mkfs.xfs /usr/sbin/xfs_repair)
# partitioning and FAT without mounting it (scripts/guest/install-debian.sh
# installs Debian onto the drive from inside this guest)
GUEST_BINS+=(/usr/sbin/sgdisk /usr/sbin/mkfs.fat /usr/bin/mcopy /usr/bin/mmd)
# mtools converts file names through iconv's code page 850
for _p in /usr/lib/*/gconv/IBM850.so /usr/lib/*/gconv/gconv-modules \
          /usr/lib/*/gconv/gconv-modules.cache /usr/lib/*/gconv/gconv-modules.d/*; do
    [ -e "$_p" ] && GUEST_DATA+=("$_p")
done
GUEST_DATA+=(/etc/mke2fs.conf)
# xfs; raid0 for the four-drive RAID 0 (tests/guest/test_guest_multi.sh);
# evdev and button: the ACPI power button that `virsh shutdown` presses
# (tests/guest/test_guest_libvirt.sh).  Names: the modules they need
# (libcrc32c, md-mod on older kernels) come along, from each module's
# "depends=", so one list serves every kernel generation.
GUEST_KMODS=(xfs raid0 evdev button)
# copy_kmods ROOT KDIR: GUEST_KMODS and what they depend on, from the kernel
# packages unpacked in KDIR, into ROOT's lib/modules (unpacked from .ko.xz
# for busybox's insmod), listed in load order in ROOT/etc/h3100-kmods.  A
# name the packages lack is built into the kernel.
copy_kmods() {
    local root=$1 kdir=$2 m f rel
    KMOD_ORDER=()
    KMOD_FILES=()
    for m in "${GUEST_KMODS[@]}"; do kmod_add "$kdir" "$m"; done
    : >"$root/etc/h3100-kmods"
    for f in "${KMOD_FILES[@]}"; do
        rel=${f#"$kdir"}
        rel=/usr/lib/modules/${rel#*/lib/modules/}
        rel=${rel%.xz}
        mkdir -p "$root$(dirname "$rel")"
        case $f in *.xz) xz -dc "$f" >"$root$rel" ;; *) cp "$f" "$root$rel" ;; esac
        echo "$rel" >>"$root/etc/h3100-kmods"
    done
}
# kmod_add KDIR NAME: NAME after the modules it depends on, in KMOD_ORDER
# (names) and KMOD_FILES (their files)
kmod_add() {
    local kdir=$1 f dep
    case " ${KMOD_ORDER[*]} " in *" $2 "*) return 0 ;; esac
    f=$(kmod_path "$kdir" "$2")
    if [ -z "$f" ]; then
        h3100_say "      module $2: built in"
        return 0
    fi
    for dep in $(kmod_depends "$f" | tr , ' '); do kmod_add "$kdir" "$dep"; done
    KMOD_ORDER+=("$2")
    KMOD_FILES+=("$f")
}
# kmod_path KDIR NAME: the module's file ('-' and '_' are one in names)
kmod_path() {
    local n=$2 u=${2//-/_}
    find "$1" -path '*/lib/modules/*' \( -name "$n.ko" -o -name "$n.ko.xz" -o \
        -name "$u.ko" -o -name "$u.ko.xz" \) -print -quit
}
# kmod_depends FILE: the "depends=" of the module's .modinfo strings
kmod_depends() {
    case $1 in *.xz) xz -dc "$1" ;; *) cat "$1" ;; esac |
        tr '\0' '\n' | awk '!d && sub(/^depends=/, "") { print; d = 1 }'
}
# Tools taken from their Debian packages without installing them on the
# host (installing mdadm would start its monitor there, a database package
# its server): package, then the files to copy (colon-separated), with
# their shared libraries.  The packages and whatever they depend on that
# the host lacks are downloaded and unpacked in the build directory
# (stage_debs); GUEST_DEB_DATA are more files (globs) from there.
GUEST_DEB_TOOLS=(mdadm:/sbin/mdadm)
GUEST_DEB_DATA=()
# --- end of the guest tests' additions ---------------------------------------

# --- recipe additions for the SQL workload (scripts/bench/sql-bench.sh) -------
# Used ONLY by the 'sql' flavour (`--flavour sql`, cached apart in
# $H3100_CACHE/guest-sql/), so the default image stays small.  MariaDB's
# server, client and the files its bootstrap needs (English errmsg.sys,
# charsets, the system-table SQL; no help tables, no sys schema), and
# sysbench with its Lua scripts; PostgreSQL's server, initdb and pgbench
# with what initdb reads (the catalog files, PL/pgSQL, the text-search
# dictionaries); about 25 MB more gzipped.  All taken from their packages
# (GUEST_DEB_TOOLS): no database server is installed on the host.
PG=/usr/lib/postgresql/15
GUEST_DEB_TOOLS_SQL=(mariadb-server-core:/usr/sbin/mariadbd
                     mariadb-client-core:/usr/bin/mariadb
                     sysbench:/usr/bin/sysbench
                     "postgresql-15:$PG/bin/postgres:$PG/bin/initdb:$PG/bin/pgbench:$PG/bin/pg_ctl")
GUEST_DEB_DATA_SQL=(/usr/share/mysql/english/errmsg.sys
                    /usr/share/mysql/mysql_system_tables.sql
                    /usr/share/mysql/mysql_performance_tables.sql
                    /usr/share/mysql/mysql_system_tables_data.sql
                    '/usr/share/mysql/charsets/*' '/usr/share/sysbench/*.lua'
                    "$PG/lib/plpgsql.so" "$PG/lib/dict_snowball.so"
                    '/usr/share/postgresql/15/*.sql' '/usr/share/postgresql/15/*.bki'
                    '/usr/share/postgresql/15/*.txt' '/usr/share/postgresql/15/*.sample'
                    /usr/share/postgresql/15/catalog_version
                    '/usr/share/postgresql/15/extension/plpgsql*'
                    '/usr/share/postgresql/15/timezonesets/*'
                    '/usr/share/postgresql/15/tsearch_data/*')
# sql_flavour: add the lists above to the recipe (after the option parsing)
sql_flavour() {
    GUEST_DEB_TOOLS+=("${GUEST_DEB_TOOLS_SQL[@]}")
    GUEST_DEB_DATA+=("${GUEST_DEB_DATA_SQL[@]}")
}
# --- end of the SQL workload's additions -------------------------------------

GUEST_DIR=$H3100_CACHE/guest
force=0
check=0
flavour=default
kernel=
while [ $# -gt 0 ]; do
    case $1 in
    --force) force=1 ;;
    --check) check=1 ;;
    --flavour) flavour=$2; shift ;;   # default | sql (scripts/bench/sql-bench.sh)
    --kernel) kernel=$2; shift ;;     # '' (the release's) | 5.10 | 6.1 | 6.12 | newest
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done

case $flavour in
default) ;;
sql) GUEST_DIR=$H3100_CACHE/guest-sql; sql_flavour ;;
*) h3100_die "--flavour: default or sql" ;;
esac
# Debian's release of each kernel generation (--kernel), when the host's
# apt does not have it: fetched with a private apt configuration
# (scripts/lib/private-apt.sh), never installed
kernel_suite() {
    case $1 in
    5.10) echo bullseye ;;
    6.1) echo bookworm ;;
    6.12) echo trixie ;;
    newest) echo trixie-backports ;;
    *) h3100_die "--kernel: 5.10, 6.1, 6.12 or newest, or none for the release's kernel" ;;
    esac
}
[ -z "$kernel" ] || kernel_suite "$kernel" >/dev/null
# the release's own generation is the default image
host_meta_ver() { apt_cache policy "$KERNEL_META" | awk '/Candidate:/ { print $2 }'; }
case $kernel in ''|newest) ;; *)
    case $(host_meta_ver) in "$kernel".*) kernel='' ;; esac ;;
esac
[ -z "$kernel" ] || GUEST_DIR=$GUEST_DIR-$kernel

# resolve_kernel: KAPT, the apt options that know the kernel (the host's,
# or a private suite's), and KPKGS, its packages: the image package behind
# the meta package (its candidate; with --kernel K the first K.x version
# the host's apt knows, else the suite's; newest: trixie-backports'
# candidate) and the packages holding its vmlinuz and modules (linux-binary-
# and linux-modules-, since Linux 6.17's packaging).
KAPT=()
KPKGS=()
resolve_kernel() {
    local meta=$KERNEL_META ver='' img
    if [ -n "$kernel" ]; then
        [ "$kernel" = newest ] ||
            ver=$(apt_cache madison "$KERNEL_META" |
                  awk -v k="$kernel" '!d && $3 ~ "^"k"\\." { print $3; d = 1 }')
        if [ -z "$ver" ]; then
            papt_init "$(kernel_suite "$kernel")"
            KAPT=("${PAPT_OPTS[@]}")
            [ "$kernel" = newest ] ||
                ver=$(apt_cache "${KAPT[@]}" madison "$KERNEL_META" |
                      awk -v k="$kernel" '!d && $3 ~ "^"k"\\." { print $3; d = 1 }')
        fi
        [ -z "$ver" ] || meta="$KERNEL_META=$ver"
    fi
    img=$(apt_cache "${KAPT[@]}" depends "$meta" 2>/dev/null |
          awk '!d && /Depends: linux-image-/ { print $2; d = 1 }')
    [ -n "$img" ] || return 0
    KPKGS=("$img")
    while read -r p; do KPKGS+=("$p"); done < <(apt_cache "${KAPT[@]}" depends "$img" |
        awk '/Depends: linux-(binary|modules)-/ { print $2 }')
}

# HOST_PKG_STATUS and HOST_PKG_VERSION of each guest package the host's
# dpkg knows (one dpkg-query: 50 ms each here)
declare -A HOST_PKG_STATUS=() HOST_PKG_VERSION=()
read_host_pkgs() {
    local p st v
    HOST_PKG_STATUS=() HOST_PKG_VERSION=()
    while read -r p st v; do
        [ -n "${HOST_PKG_STATUS[$p]:-}" ] && continue
        HOST_PKG_STATUS[$p]=$st HOST_PKG_VERSION[$p]=$v
    done < <(dpkg-query -W -f='${Package} ${db:Status-Status} ${Version}\n' \
                 "${H3100_PKGS_GUEST[@]}" 2>/dev/null || true)
}

ensure_host_pkgs() {
    local missing=() p
    read_host_pkgs
    for p in "${H3100_PKGS_GUEST[@]}"; do
        [ "${HOST_PKG_STATUS[$p]:-}" = installed ] || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        h3100_say "installing on the host: ${missing[*]}"
        h3100_as_root env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends "${missing[@]}" >&2
        read_host_pkgs
    fi
}

# The recipe: this script's text, the kernel package and every guest
# package with its version.  Its hash names the image.
recipe() {
    local p
    printf 'script %s\n' "$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"
    for p in "${KPKGS[@]}"; do
        printf 'kernel %s %s\n' "$p" "$(apt_cache "${KAPT[@]}" policy "$p" |
            awk '/Candidate:/ { print $2 }')"
    done
    for p in "${H3100_PKGS_GUEST[@]}"; do
        printf 'pkg %s %s\n' "$p" "${HOST_PKG_VERSION[$p]:-}"
    done
    for p in "${GUEST_DEB_TOOLS[@]}"; do
        printf 'deb %s %s\n' "${p%%:*}" "$(apt_cache policy "${p%%:*}" |
            awk '/Candidate:/ { print $2 }')"
    done
}

# stage_debs STAGE PKG...: download PKG and every package in its
# dependency closure that the host has not installed, and unpack them all
# into STAGE (nothing is installed; dpkg-deb -x).
stage_debs() {
    local stage=$1 p deb need=() sandbox=()
    shift
    [ "$(id -u)" -ne 0 ] || sandbox=(-o APT::Sandbox::User=root)
    need=("$@")
    while read -r p; do
        case " ${need[*]} " in *" $p "*) continue ;; esac
        [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
            need+=("$p")
    done < <(apt_cache depends --recurse --no-recommends --no-suggests \
                 --no-conflicts --no-breaks --no-replaces --no-enhances "$@" |
             grep -E '^[a-z0-9][a-z0-9.+-]*$' | sort -u)
    mkdir -p "$stage/../debs" "$stage"
    h3100_say "      unpacking ${#need[@]} packages: ${need[*]}"
    (cd "$stage/../debs" && apt-get "${sandbox[@]}" download "${need[@]}" >&2) ||
        h3100_die "apt-get download ${need[*]} failed"
    for deb in "$stage"/../debs/*.deb; do
        dpkg-deb -x "$deb" "$stage"
    done
}

# copy_deb_tools ROOT WORK: GUEST_DEB_TOOLS and GUEST_DEB_DATA, from their
# packages unpacked in WORK/stage.
copy_deb_tools() {
    local root=$1 stage=$2/stage t f files pkgs=() g
    for t in "${GUEST_DEB_TOOLS[@]}"; do pkgs+=("${t%%:*}"); done
    stage_debs "$stage" "${pkgs[@]}"
    for t in "${GUEST_DEB_TOOLS[@]}"; do
        IFS=: read -ra files <<<"${t#*:}"
        for f in "${files[@]}"; do
            [ -e "$stage$f" ] || f=/usr$f     # merged /usr
            copy_bin_from "$root" "$stage" "$f"
        done
    done
    for g in "${GUEST_DEB_DATA[@]}"; do
        for f in $stage$g; do
            [ -e "$f" ] || h3100_die "no ${f#"$stage"} in the unpacked packages"
            mkdir -p "$root$(dirname "${f#"$stage"}")"
            cp -L "$f" "$root${f#"$stage"}"
        done
    done
}

# copy_file ROOT PATH: copy PATH (following symlinks) to the same path in ROOT.
copy_file() {
    local root=$1 f=$2
    mkdir -p "$root$(dirname "$f")"
    cp -L "$f" "$root$f"
}

# copy_bin ROOT PATH: copy an executable and every shared library it needs.
copy_bin() {
    copy_bin_from "$1" "" "$2"
}

# copy_bin_from ROOT SRC PATH: copy SRC/PATH to ROOT/PATH, and every
# shared library it needs from the host.
copy_bin_from() {
    local root=$1 src=$2 bin=$3 lib
    [ -e "$src$bin" ] || h3100_die "guest binary $src$bin not found"
    mkdir -p "$root$(dirname "$bin")"
    cp -L "$src$bin" "$root$bin"
    # ldd prints "name => /path (addr)" or "/path (addr)"; static: nothing.
    # Libraries unpacked in SRC are found there and keep their path.
    local libpath=''
    [ -z "$src" ] || libpath=$(find "$src" -name '*.so*' -printf '%h\n' 2>/dev/null |
                                sort -u | tr '\n' :)
    while read -r lib; do
        if [ -n "$src" ] && [ "${lib#"$src"/}" != "$lib" ]; then
            lib=${lib#"$src"}
            [ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")"
                                    cp -L "$src$lib" "$root$lib"; }
        else
            [ -e "$root$lib" ] || copy_file "$root" "$lib"
        fi
    done < <(LD_LIBRARY_PATH=$libpath ldd "$src$bin" 2>/dev/null | awk '
        $2 == "=>" && $3 ~ /^\// { print $3; next }
        $1 ~ /^\// { print $1 }')
    if grep -q 'not found' < <(LD_LIBRARY_PATH=$libpath ldd "$src$bin" 2>/dev/null); then
        h3100_die "$bin: $(LD_LIBRARY_PATH=$libpath ldd "$src$bin" | grep 'not found' | tr -s ' \t' ' ')"
    fi
}

write_init() {
    cat >"$1/init" <<'EOF'
#!/bin/sh
# dapustor-h3100 guest init: mount the basics, run /guest/run.sh with its
# output framed by markers on the second serial port (ttyS1; the kernel's
# console is ttyS0), power off.
/bin/busybox --install -s
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /tmp /run /root
mount -t tmpfs tmpfs /tmp
up() { cut -d' ' -f1 /proc/uptime; }
echo "h3100-guest: init at $(up) s" >/dev/console
out=/dev/ttyS1
[ -c "$out" ] || out=/dev/console
stty -F "$out" raw -echo 2>/dev/null
cmd=$(cat /proc/cmdline)
wait_s=10
case " $cmd " in *" h3100.wait="*) wait_s=${cmd##*h3100.wait=}; wait_s=${wait_s%% *} ;; esac
# wait for the NVMe namespace if there is an NVMe PCI function (class
# 010802); the driver probes asynchronously
if grep -qs 0x010802 /sys/bus/pci/devices/*/class; then
    i=0
    while [ ! -e /dev/nvme0n1 ] && [ "$i" -lt $((wait_s * 10)) ]; do
        sleep 0.1; i=$((i + 1))
    done
    [ -e /dev/nvme0n1 ] || echo "h3100-guest: no /dev/nvme0n1 after $wait_s s" >/dev/console
fi
cd /guest 2>/dev/null || cd /
echo "h3100-guest: running /guest/run.sh at $(up) s" >/dev/console
echo "===H3100-GUEST-BEGIN===" >"$out"
if [ -f /guest/run.sh ]; then
    sh /guest/run.sh </dev/null >"$out" 2>&1
    rc=$?
else
    echo "no /guest/run.sh in the initramfs" >"$out"
    rc=127
fi
echo "===H3100-GUEST-END rc=$rc===" >"$out"
echo "h3100-guest: script exit $rc at $(up) s; powering off" >/dev/console
sync
poweroff -f
EOF
    chmod 755 "$1/init"
}

# fetch_kernel WORK: the kernel's packages into $GUEST_DIR/debs (only the
# current ones are kept there), unpacked into WORK/k
fetch_kernel() {
    local work=$1 p deb missing=() sandbox=()
    mkdir -p "$GUEST_DIR/debs" "$work/k"
    for p in "${KPKGS[@]}"; do
        [ -n "$(find "$GUEST_DIR/debs" -name "${p}_*.deb" -print -quit)" ] ||
            missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        h3100_say "[1/4] downloading ${missing[*]}"
        # as root, apt's _apt user cannot write into our private dir
        [ "$(id -u)" -ne 0 ] || sandbox=(-o APT::Sandbox::User=root)
        mkdir -p "$work/dl"
        (cd "$work/dl" && apt-get "${sandbox[@]}" "${KAPT[@]}" download "${KPKGS[@]}" >&2) ||
            h3100_die "apt-get download ${KPKGS[*]} failed"
        rm -f "$GUEST_DIR"/debs/*.deb
        mv "$work"/dl/*.deb "$GUEST_DIR/debs/"
    else
        h3100_say "[1/4] using the kernel packages in $GUEST_DIR/debs"
    fi
    h3100_say "[2/4] unpacking the kernel ($(du -ch "$GUEST_DIR"/debs/*.deb | tail -1 | cut -f1))"
    for deb in "$GUEST_DIR"/debs/*.deb; do dpkg-deb -x "$deb" "$work/k"; done
    # /boot/vmlinuz-VER, or (linux-binary-) /usr/lib/modules/VER/vmlinuz
    for p in "$work"/k/boot/vmlinuz-* "$work"/k/usr/lib/modules/*/vmlinuz; do
        [ -f "$p" ] && cp "$p" "$work/vmlinuz"
    done
    [ -f "$work/vmlinuz" ] || h3100_die "no vmlinuz in ${KPKGS[*]}"
}

build() {
    local rec=$1 work root p
    work=$(mktemp -d "$GUEST_DIR/build.XXXXXX")
    # shellcheck disable=SC2064  # expand now: $work is local
    trap "rm -rf '$work'" EXIT
    root=$work/root
    fetch_kernel "$work"

    h3100_say "[3/4] assembling the initramfs: ${GUEST_BINS[*]}"
    mkdir -p "$root"/usr/bin "$root"/usr/sbin "$root"/usr/lib "$root"/usr/lib64
    for p in bin sbin lib lib64; do ln -s "usr/$p" "$root/$p"; done
    mkdir -p "$root"/{proc,sys,dev,tmp,run,root,etc,guest,mnt}
    for p in "${GUEST_BINS[@]}"; do copy_bin "$root" "$p"; done
    ln -s busybox "$root/usr/bin/sh"
    for p in "${GUEST_DATA[@]}"; do [ -e "$p" ] && copy_file "$root" "$p"; done
    echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
    echo 'root:x:0:' >"$root/etc/group"
    printf '%s' "$rec" >"$root/etc/h3100-guest-recipe"
    copy_kmods "$root" "$work/k"   # guest tests: kernel modules (xfs, md)
    copy_deb_tools "$root" "$work"
    write_init "$root"

    h3100_say "[4/4] packing (cpio + gzip)"
    (cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
        cpio -o -H newc --quiet -R 0:0) | gzip -6 >"$work/initramfs.cpio.gz"

    mv -f "$work/vmlinuz" "$GUEST_DIR/vmlinuz"
    mv -f "$work/initramfs.cpio.gz" "$GUEST_DIR/initramfs.cpio.gz"
    printf '%s' "$rec" >"$GUEST_DIR/recipe"
    rm -rf "$work"
    trap - EXIT
    h3100_say "done: kernel $(du -h "$GUEST_DIR/vmlinuz" | cut -f1)," \
        "initramfs $(du -h "$GUEST_DIR/initramfs.cpio.gz" | cut -f1)"
}

mkdir -p "$GUEST_DIR"
# one builder at a time (guest-run.sh calls this script before every boot)
exec 9>"$GUEST_DIR/.lock"
flock 9
resolve_kernel
[ ${#KPKGS[@]} -gt 0 ] || h3100_die "no ${kernel:+$kernel }kernel behind $KERNEL_META (apt-get update?)"
if [ "$check" = 0 ]; then
    ensure_host_pkgs
else
    read_host_pkgs
fi
rec=$(recipe)
if [ "$force" = 0 ] && [ -f "$GUEST_DIR/recipe" ] && [ -f "$GUEST_DIR/vmlinuz" ] &&
   [ -f "$GUEST_DIR/initramfs.cpio.gz" ] && [ "$(cat "$GUEST_DIR/recipe")" = "$rec" ]; then
    [ "$check" = 1 ] || h3100_say "cached image is current ($GUEST_DIR)"
    [ "$check" = 1 ] || printf '%s\n' "$GUEST_DIR"
    exit 0
fi
[ "$check" = 0 ] || exit 1
h3100_say "building the guest image in $GUEST_DIR"
start=$SECONDS
build "$rec"
h3100_say "built in $((SECONDS - start)) s"
printf '%s\n' "$GUEST_DIR"
