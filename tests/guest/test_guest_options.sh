#!/usr/bin/env bash
# Guest driver-option matrix: the Linux nvme driver options that change its
# path, on two kernel generations (Debian 12's 6.1 and Debian's 6.12).
#
#   tests/guest/test_guest_options.sh [QEMU]
#
# Two boots per kernel, each with two of the options on a fresh sparse
# 256 MiB drive (the options act on separate things: the data pointer and
# the queue size; polled queues and the I/O timeout of the interrupt
# queues), each running fio random write + verify (4k-128k, QD 8), and
# showing each option took effect, in the guest and in the device's trace
# events:
#   nvme.sgl_threshold=1     every I/O is described by an SGL
#                            (trace h3100_map_sgl)
#   nvme.io_queue_depth=2    I/O queues of 2 entries (h3100_admin_create_sq)
#   nvme.poll_queues=2       polled queues (CQs created without IEN) and
#                            fio io_uring --hipri on them
#   nvme_core.io_timeout=5   the drive drops its commands (power cut of the
#                            drive, qom-set power-cut drive) while the guest
#                            reads: Linux times out after 5 s, resets the
#                            controller, and the read completes
# Prints ok / not ok lines and 'N passed, N failed'.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips;
# H3100_KERNELS (default "6.1 6.12").
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

cut='{"execute": "qom-set", "arguments": {"path": "/machine/peripheral/h0", "property": "power-cut", "value": "drive"}}'
fio_verify='fio --name=opt --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 --rw=randwrite --bsrange=4k-128k --iodepth=8 --size=16M --verify=crc32c --verify_fatal=1 --randrepeat=1'

# guest script for OPTIONS: fio verify, then what shows each option worked
# shellcheck disable=SC2016  # the $ expand in the guest
guest_script() {
    echo "$GUEST_PRELUDE"
    echo "uname -r | sed 's/^/  kernel /'"
    echo "$fio_verify >/tmp/fio.out 2>&1; r=\$?; chk \$r \"fio write + verify (rc \$r)\""
    echo "[ \$r = 0 ] || tail -5 /tmp/fio.out"
    for opt in "$@"; do
        option_check "$opt"
    done
    echo 'exit $GUEST_FAIL'
}

# the guest's check that OPTION took effect
# shellcheck disable=SC2016  # the $ expand in the guest
option_check() {
    case $1 in
    nvme.sgl_threshold=1)
        echo 'p=$(cat /sys/module/nvme/parameters/sgl_threshold); chk $([ "$p" = 1 ]; echo $?) "sgl_threshold $p"' ;;
    nvme.io_queue_depth=2)
        echo 'p=$(cat /sys/module/nvme/parameters/io_queue_depth); chk $([ "$p" = 2 ]; echo $?) "io_queue_depth $p, nr_requests $(cat /sys/block/nvme0n1/queue/nr_requests)"' ;;
    nvme.poll_queues=2)
        cat <<'GUEST'
p=$(cat /sys/block/nvme0n1/queue/io_poll); chk $([ "$p" = 1 ]; echo $?) "the queue polls (io_poll $p)"
fio --name=poll --filename=/dev/nvme0n1 --ioengine=io_uring --hipri=1 --direct=1 \
    --rw=randread --bs=4k --iodepth=4 --size=16M --runtime=3 --time_based=1 >/tmp/poll.out 2>&1
r=$?; chk $r "fio io_uring --hipri (polled completions) (rc $r): $(grep -oE 'IOPS=[^,]*' /tmp/poll.out)"
[ $r = 0 ] || tail -5 /tmp/poll.out
GUEST
        ;;
    nvme_core.io_timeout=5)
        cat <<'GUEST'
p=$(cat /sys/block/nvme0n1/queue/io_timeout); chk $([ "$p" = 5000 ]; echo $?) "I/O timeout $p ms"
t0=$(cut -d' ' -f1 /proc/uptime)
# reads go on until Linux has logged the time-out, so one is in flight
# whenever the host's power cut lands (one 1 MiB read could end before it)
timed_out() { dmesg | grep -qE 'nvme nvme0: I/O (tag )?[0-9]+.*timeout'; }
(rc=0; i=0
 while [ $i -lt 1000 ] && ! timed_out; do
     dd if=/dev/nvme0n1 of=/dev/null bs=4k count=256 skip=1000 iflag=direct 2>/dev/null || rc=$?
     i=$((i + 1))
 done
 echo "rc $rc" >/tmp/dd.rc) &
echo "@cut"
i=0; while [ ! -s /tmp/dd.rc ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
t1=$(cut -d' ' -f1 /proc/uptime)
grep -q 'rc 0' /tmp/dd.rc; chk $? "a read in flight across the drive's power cut completes ($(cat /tmp/dd.rc 2>/dev/null || echo 'no end'))"
s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }')
chk $([ "$s" -ge 4 ] && [ "$s" -le 40 ]; echo $?) "after the 5 s timeout and a controller reset: ${s} s"
dmesg | grep -E 'nvme nvme0: (I/O|Abort|resetting|controller)' | sed 's/^\[[^]]*\] /  /' | head -4
timed_out; chk $? "Linux logged the I/O timeout"
GUEST
        ;;
    esac
}

# trace_check LABEL OPTION: the device's trace shows OPTION took effect
trace_check() {
    local m n
    case $2 in
    nvme.sgl_threshold=1)
        n=$(grep -c 'h3100_map_sgl' "$tmp/trace.log")
        [ "$n" -ge 400 ]; check $? "$1: the device mapped $n SGLs" ;;
    nvme.io_queue_depth=2)
        m=$(grep -c 'h3100_admin_create_sq' "$tmp/linux-queues.log")
        n=$(grep 'h3100_admin_create_sq' "$tmp/linux-queues.log" | grep -vc ' size 2 ')
        [ "$m" -ge 1 ] && [ "$n" = 0 ]; check $? "$1: $m I/O SQs created, all of 2 entries" ;;
    nvme.poll_queues=2)
        n=$(grep 'h3100_admin_create_cq' "$tmp/linux-queues.log" | grep -c ' flags 0x1$')
        [ "$n" -ge 1 ]; check $? "$1: $n CQs created without interrupts (polled)" ;;
    esac
}

for k in ${H3100_KERNELS:-6.1 6.12}; do
    kopt=()
    [ "$k" = 6.1 ] || kopt=(--kernel "$k")
    for opts in "nvme.sgl_threshold=1 nvme.io_queue_depth=2" \
                "nvme.poll_queues=2 nvme_core.io_timeout=5"; do
        label="$k $opts"
        disk=$tmp/d.raw
        rm -f "$disk" "$tmp/trace.log"
        truncate -s 256M "$disk"
        # shellcheck disable=SC2086  # a list of options
        guest_script $opts >"$tmp/opt.sh"
        extra=()
        case " $opts " in
        *" nvme_core.io_timeout=5 "*) extra=(--qmp-on @cut "$cut") ;;
        esac
        run_guest "$label" "$disk" "$tmp/opt.sh" "${kopt[@]}" --append "$opts" \
            --timeout 300 "${extra[@]}" -- -D "$tmp/trace.log" \
            -trace h3100_map_sgl -trace h3100_admin_create_sq -trace h3100_admin_create_cq
        # the queues Linux created: SeaBIOS makes a polled pair first, and
        # Linux's first CQ has interrupts
        awk '/h3100_admin_create_cq/ && / flags 0x3/ { on = 1 } on' \
            "$tmp/trace.log" >"$tmp/linux-queues.log"
        for opt in $opts; do
            trace_check "$k $opt" "$opt"
        done
    done
done
finish
