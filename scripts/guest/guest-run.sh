#!/usr/bin/env bash
# Boot the Linux guest (scripts/guest/guest-image.sh) with a dapustor-h3100 drive,
# run a shell script inside it, and print what the script printed.
#
#   scripts/guest/guest-run.sh [options] SCRIPT [-- QEMU-ARGS...]
#
#   --disk FILE         backing file for the H3100 (raw: created sparse, 256M,
#                       if missing); the namespace is sized to the file
#   --format FMT        the backing file's format (default raw; qcow2 ...:
#                       the namespace gets the image's virtual size)
#   --no-disk           boot without the H3100
#   --root-port         put the H3100 behind a PCIe root port (q35's root
#                       bus makes it an integrated endpoint, whose PCIe
#                       AER messages never reach the guest)
#   --device-opts OPTS  -device options after drive=d0, replacing the default
#                       model-params=user_bytes=<file size>
#   --file PATH         also copy PATH into the guest's /guest/ (repeatable)
#   --accel auto|kvm|tcg  default auto: KVM if a short probe boots, else TCG
#   --icount            -icount shift=auto,sleep=off (virtual time from
#                       instructions; implies TCG)
#   --icount-shift N    -icount shift=N,sleep=off (fixed: repeatable timings)
#                       Under -icount the guest's clock starts at
#                       GUEST_ICOUNT_EPOCH (2026-01-01T00:00:00) and
#                       follows virtual time (-rtc ...,clock=vm)
#   --flavour NAME      guest image flavour: default, or sql (MariaDB,
#                       sysbench and PostgreSQL, for scripts/bench/sql-bench.sh)
#   --kernel K          boot another generation of Debian's cloud kernel
#                       than the release's: 5.10, 6.1, 6.12 or newest
#                       (trixie-backports'; scripts/guest/guest-image.sh --kernel)
#   --firmware F        seabios (default) or ovmf (UEFI: Debian's ovmf,
#                       OVMF_CODE_4M.fd with a fresh copy of its variables)
#   --boot-image FILE:TAG  write a bootable drive image to FILE
#                       (scripts/guest/boot-image.sh: GPT, ESP with the kernel and
#                       the initramfs holding SCRIPT, systemd-boot and
#                       syslinux) whose kernel command line has
#                       h3100.boot=TAG; repeatable.  The firmware then boots
#                       from a drive (no -kernel): give the drives their
#                       bootindex (--device-opts, QEMU-ARGS); the script
#                       reads /proc/cmdline to see which one it came from
#   --qemu PATH         default build/qemu-system-x86_64 (or $H3100_QEMU)
#   --mem MB            guest RAM (default 1024)     --smp N   vCPUs (default 2)
#   --timeout S         kill the guest after S seconds (default 300)
#   --kill-on LINE      SIGKILL QEMU as soon as the guest script prints LINE
#                       (a line of its own): QEMU dies as in a crash, with
#                       no chance to write anything back; the script's
#                       output up to LINE is printed and the exit status is
#                       0 (the script should sleep after printing LINE)
#   --qmp-on LINE JSON  send the QMP command JSON to QEMU as soon as the
#                       guest script prints LINE, e.g. a power cut:
#                       '{"execute": "qom-set", "arguments": {"path":
#                       "/machine/peripheral/h0", "property": "power-cut",
#                       "value": "machine"}}' (the drive's id is h0).
#                       If QEMU then exits (a machine power cut: QEMU
#                       runs with -no-reboot), the script's output up to
#                       LINE is printed and the exit status is 0.
#                       Repeatable: the steps run in order, each when its
#                       LINE appears after the previous step's (at once
#                       when it is the previous step's LINE); JSON
#                       "wait:EVENT" waits (60 s at most) for the QMP
#                       event EVENT instead of sending a command
#   --qmp-log FILE      keep every QMP reply and event there (JSON lines)
#   --migrate-on LINE MODE  once the guest script prints LINE, hand the
#                       VM to a new QEMU with the same options: MODE live
#                       migrates it there while it runs, file saves it to
#                       a file (`migrate file:`), quits, and restores it in
#                       the new one (-incoming file:, as libvirt's save and
#                       restore); the script goes on there.  Repeatable:
#                       in order, each after the previous one's LINE
#                       (scripts/lib/migrate-on.py)
#   --mig-log FILE      keep each migration's final query-migrate reply
#                       there (JSON lines: downtime, bytes, times)
#   --loadvm NAME       start from the snapshot NAME of the --disk (a qcow2
#                       image that a `savevm NAME` of an earlier run wrote):
#                       the script goes on from where the snapshot has it
#   --append ARGS       extra kernel command line
#   --log FILE          keep the whole console log in FILE
#   --verbose           stream the console to stderr while it runs
#   --stream            stream the script's output to stderr while it runs
#                       (long runs: it is still printed on stdout at the end)
#   --pidfile FILE      QEMU writes its pid there (to watch its memory)
#   --make-initrd DIR   boot nothing: write the kernel and the initramfs
#                       holding SCRIPT to DIR/vmlinuz and DIR/initrd, for a
#                       QEMU started elsewhere (libvirt's, in the tests);
#                       its command line: console=ttyS0 panic=-1
#
# The script runs as root under busybox sh in /guest (the initramfs), with
# nvme-cli, lspci and busybox; the drive is /dev/nvme0 and /dev/nvme0n1.
# Its output goes to the second serial port (ttyS1), framed by
# ===H3100-GUEST-BEGIN=== / ===H3100-GUEST-END rc=N===, and is printed here
# on stdout; the kernel's console (ttyS0) is kept apart.  The guest then
# powers off.  Exit status: the script's, 124 on a time-out, 125 when the
# guest did not finish the script (the console log and whatever the script
# printed are then shown on stderr).  A boot that hangs or reports an RCU
# stall before the script begins is booted once more (docs/dev/testing.md).
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

qemu=${H3100_QEMU:-$H3100_BUILD/qemu-system-x86_64}
accel=${H3100_ACCEL:-auto}
disk=''
use_disk=1
devopts=''
root_port=0
icount=0
GUEST_ICOUNT_EPOCH=2026-01-01T00:00:00
ishift=auto
mem=1024
smp=2
tmo=300
append=''
keep_log=''
verbose=0
files=()
script=''
qemu_extra=()
flavour=default
kernel_ver=''
firmware=seabios
boot_images=()
format=raw
kill_on=''
qmp_steps=()
qmp_log=''
mig_steps=()
mig_log=''
loadvm=''
qmp_pid=''
stream=0
pidfile=''
make_initrd=''

while [ $# -gt 0 ]; do
    case $1 in
    --disk) disk=$2; shift ;;
    --format) format=$2; shift ;;
    --kill-on) kill_on=$2; shift ;;
    --qmp-on) qmp_steps+=("$2" "$3"); shift 2 ;;
    --qmp-log) qmp_log=$2; shift ;;
    --migrate-on) mig_steps+=("$2" "$3"); shift 2 ;;
    --mig-log) mig_log=$2; shift ;;
    --loadvm) loadvm=$2; shift ;;
    --no-disk) use_disk=0 ;;
    --root-port) root_port=1 ;;
    --device-opts) devopts=$2; shift ;;
    --file) files+=("$2"); shift ;;
    --accel) accel=$2; shift ;;
    --icount) icount=1 ;;
    --icount-shift) icount=1; ishift=$2; shift ;;
    --flavour) flavour=$2; shift ;;
    --kernel) kernel_ver=$2; shift ;;
    --firmware) firmware=$2; shift ;;
    --boot-image) boot_images+=("$2"); shift ;;
    --qemu) qemu=$2; shift ;;
    --mem) mem=$2; shift ;;
    --smp) smp=$2; shift ;;
    --timeout) tmo=$2; shift ;;
    --append) append=$2; shift ;;
    --log) keep_log=$2; shift ;;
    --verbose) verbose=1 ;;
    --stream) stream=1 ;;
    --pidfile) pidfile=$2; shift ;;
    --make-initrd) make_initrd=$2; use_disk=0; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    --) shift; qemu_extra=("$@"); break ;;
    -*) h3100_die "unknown option: $1 (try --help)" ;;
    *) [ -z "$script" ] || h3100_die "one script only ($script, $1)"; script=$1 ;;
    esac
    shift
done
[ -n "$script" ] || h3100_die "usage: $0 [options] SCRIPT (try --help)"
[ -f "$script" ] || h3100_die "no such script: $script"
[ -x "$qemu" ] || h3100_die "no QEMU at $qemu (scripts/test.sh builds it)"
case $accel in auto|kvm|tcg) ;; *) h3100_die "--accel: auto, kvm or tcg" ;; esac
case $firmware in seabios|ovmf) ;; *) h3100_die "--firmware: seabios or ovmf" ;; esac
[ "$use_disk" = 0 ] || [ -n "$disk" ] || h3100_die "--disk FILE or --no-disk"


gdir=$("$H3100_PROJECT/scripts/guest/guest-image.sh" --flavour "$flavour" \
       ${kernel_ver:+--kernel "$kernel_ver"} 2> >(grep -v 'cached image is current' >&2))
kernel=$gdir/vmlinuz
initrd=$gdir/initramfs.cpio.gz

h3100_tmpdir guest
qpid=''
# shellcheck disable=SC2317  # called by the trap
h3100_on_exit() {
    local p
    if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then
        kill "$qpid" 2>/dev/null || true
        wait "$qpid" 2>/dev/null || true
    fi
    [ -z "${mig_pid:-}" ] || kill "$mig_pid" 2>/dev/null || true
    # the QEMUs --migrate-on started
    for p in "$tmp"/qemu-*.pid; do
        if [ -s "$p" ]; then
            kill "$(cat "$p")" 2>/dev/null || true
        fi
    done
}
trap 'exit 130' INT TERM

# common QEMU arguments (no accelerator)
base_args=(-nodefaults -no-user-config -display none
           -machine q35 -m "$mem" -smp "$smp" -no-reboot)
if [ "$firmware" = ovmf ]; then
    ovmf=/usr/share/OVMF
    [ -f $ovmf/OVMF_CODE_4M.fd ] || h3100_die "no $ovmf/OVMF_CODE_4M.fd (apt-get install ovmf)"
    cp $ovmf/OVMF_VARS_4M.fd "$tmp/ovmf-vars.fd"
    base_args+=(-drive "if=pflash,format=raw,unit=0,readonly=on,file=$ovmf/OVMF_CODE_4M.fd"
                -drive "if=pflash,format=raw,unit=1,file=$tmp/ovmf-vars.fd")
fi

# --- accelerator ----------------------------------------------------------
# KVM is used only when a guest really boots with it: on some hosts /dev/kvm
# exists but guests hang.  The answer is cached per host boot and QEMU binary.
kvm_works() {
    [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
    local key cache=$gdir/kvm-probe out
    key="$(cat /proc/sys/kernel/random/boot_id 2>/dev/null) $(readlink -f "$qemu") $(stat -Lc %Y "$qemu")"
    if [ -f "$cache" ] && [ "$(sed -n 1p "$cache")" = "$key" ]; then
        [ "$(sed -n 2p "$cache")" = yes ]
        return
    fi
    h3100_say "probing KVM (10 s at most)"
    out=$(timeout -k 2 10 "$qemu" "${base_args[@]}" -accel kvm -kernel "$kernel" -initrd "$initrd" \
        -serial null -serial stdio \
        -append "console=ttyS0 panic=-1 h3100.wait=0" </dev/null 2>&1 || true)
    local ok=no
    case $out in *'===H3100-GUEST-END'*) ok=yes ;; esac
    printf '%s\n%s\n' "$key" "$ok" >"$cache"
    h3100_say "KVM $([ $ok = yes ] && echo works || echo 'does not boot a guest here; using TCG')"
    [ $ok = yes ]
}

if [ "$icount" = 1 ]; then
    [ "$accel" != kvm ] || h3100_die "--icount needs TCG, not KVM"
    accel=tcg
fi
if [ "$accel" = auto ]; then
    if kvm_works; then accel=kvm; else accel=tcg; fi
fi
accel_args=(-accel "$accel")
[ "$accel" = kvm ] && accel_args+=(-cpu host)
# under -icount the guest's calendar is virtual time too, from a fixed
# date: the host's date at boot is an input the run would depend on
[ "$icount" = 1 ] && accel_args+=(-icount "shift=$ishift,sleep=off"
                                  -rtc "base=$GUEST_ICOUNT_EPOCH,clock=vm")

# --- the initramfs: the cached image + a small archive with /guest ---------
mkdir -p "$tmp/extra/guest"
cp "$script" "$tmp/extra/guest/run.sh"
for f in "${files[@]}"; do cp -L "$f" "$tmp/extra/guest/"; done
# QEMU loads the plain archive at memory speed; the kernel unpacks a
# gzipped one at ~20 MB/s under TCG (5 s of a 12 s boot).  Firmware
# reads it from a drive image's ESP: there it stays small.
if [ ${#boot_images[@]} -gt 0 ]; then
    cp "$initrd" "$tmp/initrd"
else
    gzip -dc "$initrd" >"$tmp/initrd" || h3100_die "cannot unpack $initrd"
fi
# the next archive must start 4-byte aligned: pad the first one with zeros
sz=$(stat -c %s "$tmp/initrd")
truncate -s $(((sz + 511) / 512 * 512)) "$tmp/initrd"
# the same files give the same bytes: a copy's mtime in the archive made
# each boot's kernel start from different memory contents, and under
# -icount two boots of one configuration went apart from there
find "$tmp/extra" -exec touch -h -d @0 {} +
(cd "$tmp/extra" && find . -mindepth 1 | LC_ALL=C sort |
    cpio -o -H newc --quiet -R 0:0) >>"$tmp/initrd"

if [ -n "$make_initrd" ]; then
    mkdir -p "$make_initrd"
    cp "$kernel" "$make_initrd/vmlinuz"
    cp "$tmp/initrd" "$make_initrd/initrd"
    exit 0
fi

# --- how the kernel gets there: QEMU loads it, or firmware from a drive --------
cmdline="console=ttyS0 panic=-1 $append"
load_args=(-kernel "$kernel" -initrd "$tmp/initrd" -append "$cmdline")
if [ ${#boot_images[@]} -gt 0 ]; then
    load_args=()
    for b in "${boot_images[@]}"; do
        [ "${b%:*}" != "$b" ] || h3100_die "--boot-image FILE:TAG, not $b"
        "$H3100_PROJECT/scripts/guest/boot-image.sh" --out "${b%:*}" --kernel "$kernel" \
            --initrd "$tmp/initrd" --cmdline "$cmdline h3100.boot=${b##*:}" \
            --title "h3100 guest (${b##*:})" >/dev/null
    done
fi

# --- the drive ----------------------------------------------------------------
dev_args=()
if [ "$use_disk" = 1 ]; then
    if [ "$format" = raw ]; then
        [ -e "$disk" ] || truncate -s 256M "$disk"
        dsize=$(stat -Lc %s "$disk")
    else
        [ -e "$disk" ] || h3100_die "no $format image $disk (qemu-img create)"
        qimg=$(dirname "$(readlink -f "$qemu")")/qemu-img
        [ -x "$qimg" ] || qimg="qemu-img"
        dsize=$("$qimg" info -f "$format" --output=json "$disk" |
                awk -F'[:,]' '!d && /^    "virtual-size"/ { gsub(/ /, "", $2); print $2; d = 1 }')
        [ -n "$dsize" ] || h3100_die "cannot read the virtual size of $disk"
    fi
    [ -n "$devopts" ] || devopts="model-params=user_bytes=$dsize"
    dev_args=(-drive "file=$disk,if=none,id=d0,format=$format"
              -device "dapustor-h3100,id=h0,drive=d0,$devopts")
    if [ "$root_port" = 1 ]; then
        dev_args=(-device "pcie-root-port,id=rp0,chassis=1" "${dev_args[@]}")
        dev_args[${#dev_args[@]}-1]+=",bus=rp0"
    fi
fi

log=$tmp/console.log
gout=$tmp/guest.out
# the consoles append: a QEMU that takes the VM over writes on after them
serial_args=(-chardev "file,id=ser0,path=$log,append=on" -serial chardev:ser0
             -chardev "file,id=ser1,path=$gout,append=on" -serial chardev:ser1)
[ -z "$loadvm" ] || qemu_extra+=(-loadvm "$loadvm")
: >"$log"
: >"$gout"
# SIGKILL QEMU (not timeout(1), its parent) once the guest printed $kill_on
kill_at_line() {
    while kill -0 "$qpid" 2>/dev/null; do
        if grep -aqxF -- "$kill_on" < <(tr -d '\r' <"$gout"); then
            kill -KILL "$(cat "${pidfile:-$tmp/qemu.pid}")" && : >"$tmp/killed"
            return
        fi
        sleep 0.05
    done
}

# has the guest's script begun (printed its first line)?
script_began() { grep -aq '^===H3100-GUEST-BEGIN===' "$gout"; }

# Stop a boot whose kernel reports an RCU stall before the script began
# (see the second boot below) instead of waiting for the time-out.  QEMU
# gets SIGTERM: the drive's state is saved as on any ordinary exit.
stall_watch() {
    while kill -0 "$qpid" 2>/dev/null; do
        script_began && return
        if grep -aq 'rcu: INFO: .* detected stalls' "$log"; then
            # the script may have begun between the two looks: a stall
            # after its first line is the time-out's to judge
            script_began && return
            : >"$tmp/stalled"
            kill -TERM "$(cat "${pidfile:-$tmp/qemu.pid}")"
            return
        fi
        sleep 0.5
    done
}

# run the --qmp-on steps on QEMU's QMP socket as the guest prints their lines
qmp_steps_run() {
    python3 "$H3100_PROJECT/scripts/lib/qmp-steps.py" "$tmp/qmp.sock" "$gout" \
        "$tmp/acted" "$tmp/qmp.out" "${qmp_steps[@]}" 2>"$tmp/qmp.err"
    h3100_say "QMP steps: $(tail -n 1 "$tmp/qmp.err" 2>/dev/null)"
}

# the --migrate-on steps: the VM moves to new QEMUs as the guest prints
migrate_steps_run() {
    local a
    for a in "$qemu" "${base_args[@]}" "${accel_args[@]}" "${serial_args[@]}" \
             "${load_args[@]}" "${dev_args[@]}" "${qemu_extra[@]}"; do
        printf '%s\0' "$a"
    done >"$tmp/argv"
    python3 "$H3100_PROJECT/scripts/lib/migrate-on.py" "$tmp" "$tmp/argv" \
        "$gout" "$tmo" "$tmp/mig.out" "${mig_steps[@]}" 2>"$tmp/mig.err"
    h3100_say "migrations: $(tail -n 1 "$tmp/mig.err" 2>/dev/null)"
}

boot() {
    rm -f "$tmp/killed" "$tmp/acted" "$tmp/stalled" "$tmp/last.rc"
    : >"$log"
    : >"$gout"
    # a snapshot's script began in the run that took it
    [ -z "$loadvm" ] || echo '===H3100-GUEST-BEGIN===' >"$gout"
    h3100_say "booting ($accel$([ "$icount" = 1 ] && echo ', icount')${loadvm:+, from snapshot $loadvm}, timeout ${tmo}s)"
    start=$SECONDS
    timeout -k 5 "$tmo" "$qemu" "${base_args[@]}" "${accel_args[@]}" \
        "${serial_args[@]}" "${load_args[@]}" \
        -pidfile "${pidfile:-$tmp/qemu.pid}" -qmp "unix:$tmp/qmp.sock,server=on,wait=off" \
        "${dev_args[@]}" "${qemu_extra[@]}" </dev/null >"$tmp/qemu.err" 2>&1 &
    qpid=$!
    mig_pid=''
    if [ ${#mig_steps[@]} -gt 0 ]; then
        : >"$tmp/mig.out"
        migrate_steps_run &
        mig_pid=$!
    fi
    [ -z "$kill_on" ] || kill_at_line &
    [ "$1" != first ] || stall_watch &
    if [ ${#qmp_steps[@]} -gt 0 ]; then
        : >"$tmp/qmp.out"
        qmp_steps_run &
        qmp_pid=$!
    fi
    if [ "$verbose" = 1 ]; then
        tail -n +1 -f --pid="$qpid" "$log" | sed -u 's/\r//g' >&2 &
    fi
    if [ "$stream" = 1 ]; then
        tail -n +1 -f --pid="$qpid" "$gout" | sed -u 's/\r//g; s/^/  > /' >&2 &
    fi
    rc=0
    wait "$qpid" || rc=$?
    qpid=''
    if [ -n "$mig_pid" ]; then
        # the first QEMU quit when it handed the VM over: wait for the last
        wait "$mig_pid" 2>/dev/null || true
        if [ -s "$tmp/last.rc" ]; then
            rc=$(cat "$tmp/last.rc")
        else
            h3100_say "a migration failed: $(tail -n 3 "$tmp/mig.err" 2>/dev/null)"
            for f in "$tmp"/qemu-*.err; do
                [ -s "$f" ] && sed 's/^/  | /' "$f" >&2
            done
        fi
        cat "$tmp"/qemu-*.err >>"$tmp/qemu.err" 2>/dev/null || true
    fi
    elapsed=$((SECONDS - start))
}

boot first
# TCG guests here have hung, rarely, before the script began: once in the
# kernel's early PCI enumeration, before any driver touched the drive;
# once with vCPU 0 idle in HLT and its timer never firing (RCU stall
# reports every 21 s, each NMI waking it for a moment).  Both passed when
# run again.  A boot that timed out, or reported an RCU stall, before the
# script's first line gets one more boot (no stall watch); the console's
# lines say which it was.  A hang once the script runs still fails.
if [ ! -e "$tmp/killed" ] && [ ! -e "$tmp/acted" ] &&
   [ ${#mig_steps[@]} = 0 ] && [ -z "$loadvm" ] &&
   { [ -e "$tmp/stalled" ] || [ "$rc" = 124 ] || [ "$rc" = 137 ]; } &&
   ! script_began; then
    if [ -e "$tmp/stalled" ]; then
        h3100_say "the guest's kernel reported an RCU stall before the script began (${elapsed} s); booting again"
    else
        h3100_say "the guest hung before the script began (${elapsed} s); booting again"
    fi
    tr -d '\r' <"$log" |
        awk '/rcu: |NMI backtrace|nvme nvme0|h3100-guest/ && n++ < 8 { print "  | " $0 }' >&2
    tr -d '\r' <"$log" | tail -n 3 | sed 's/^/  | /' >&2
    boot again
fi
[ -z "$keep_log" ] || tr -d '\r' <"$log" >"$keep_log"
[ -z "$qmp_pid" ] || wait "$qmp_pid" 2>/dev/null || true
[ -z "$qmp_log" ] || cp "$tmp/qmp.out" "$qmp_log" 2>/dev/null || : >"$qmp_log"
[ -z "$mig_log" ] || cp "$tmp/mig.out" "$mig_log" 2>/dev/null || : >"$mig_log"

# guest_output_until LINE: what the guest's script printed before LINE
guest_output_until() {
    tr -d '\r' <"$gout" | awk -v k="$1" \
        'd { next } f && $0 == k { d = 1; next } f { print } $0 == "===H3100-GUEST-BEGIN===" { f = 1 }'
}
if [ -e "$tmp/killed" ]; then
    h3100_say "QEMU killed (SIGKILL) when the guest printed '$kill_on'"
    guest_output_until "$kill_on"
    exit 0
fi
end=$(tr -d '\r' <"$gout" | awk '!d && /^===H3100-GUEST-END rc=/ { print; d = 1 }')
# a QMP action (a power cut of the machine with -no-reboot) ended QEMU
if [ -z "$end" ] && [ -e "$tmp/acted" ] && [ "$rc" = 0 ]; then
    acted=$(cat "$tmp/acted")
    h3100_say "QEMU exited after the QMP command at '$acted'"
    guest_output_until "$acted"
    exit 0
fi
if [ -z "$end" ]; then
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        h3100_say "time-out after ${tmo}s; console log:"
        rc=124
    else
        h3100_say "QEMU exited ($rc) before the guest script finished; console log:"
        rc=125
    fi
    tr -d '\r' <"$log" | sed 's/^/  | /' >&2
    h3100_say "QEMU's messages:"
    sed 's/^/  | /' "$tmp/qemu.err" >&2
    h3100_say "the script's output so far:"
    tr -d '\r' <"$gout" | sed 's/^/  > /' >&2
    exit "$rc"
fi
if [ -s "$tmp/qemu.err" ]; then
    h3100_say "QEMU's messages:"
    sed 's/^/  | /' "$tmp/qemu.err" >&2
fi
tr -d '\r' <"$gout" | sed -n '/^===H3100-GUEST-BEGIN===$/,/^===H3100-GUEST-END rc=/p' |
    sed '1d;$d'
grc=${end#===H3100-GUEST-END rc=}
grc=${grc%%=*}
h3100_say "guest finished in ${elapsed}s (script exit $grc)"
exit "$grc"
