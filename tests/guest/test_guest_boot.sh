#!/usr/bin/env bash
# Guest boot test: SeaBIOS and OVMF boot Linux from the drive when its
# bootindex says so, with another bootable disk present, and boot the
# other disk when its bootindex comes first.
#
#   tests/guest/test_guest_boot.sh [QEMU]
#
# Two bootable images (scripts/guest/boot-image.sh: GPT, ESP with kernel,
# initramfs, systemd-boot and syslinux), one on the H3100 (h3100.boot=h3100
# on its kernel command line), one on a virtio-blk disk (h3100.boot=other).
# No -kernel: the firmware reads kernel and initramfs through its own
# driver.  For each firmware and each order, the guest checks which disk it
# came from; when it came from the H3100, the device's trace shows the
# firmware's own NVMe queues (SeaBIOS: a polled pair; OVMF: its pairs)
# created before Linux's.  Prints ok / not ok lines and 'N passed, N failed'.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

for fw in seabios ovmf; do
    for first in h3100 other; do
        label="$fw, $first first"
        if [ $first = h3100 ]; then hi=1 oi=2; else hi=2 oi=1; fi
        rm -f "$tmp/h.img" "$tmp/o.img" "$tmp/trace.log"
        {
            echo "$GUEST_PRELUDE"
            cat <<GUEST
got=\$(tr ' ' '\n' </proc/cmdline | sed -n 's/^h3100.boot=//p')
[ "\$got" = $first ]; chk \$? "the firmware booted the $first disk (h3100.boot=\$got)"
[ -e /dev/nvme0n1 ]; chk \$? "the H3100 is there"
[ "\$(dd if=/dev/nvme0n1 bs=1 skip=512 count=8 2>/dev/null)" = "EFI PART" ]; chk \$? "its GPT reads"
exit \$GUEST_FAIL
GUEST
        } >"$tmp/boot.sh"
        run_guest "$label" "$tmp/h.img" "$tmp/boot.sh" --firmware $fw \
            --boot-image "$tmp/h.img:h3100" --boot-image "$tmp/o.img:other" \
            --device-opts "bootindex=$hi,model-params=user_bytes=$((256 << 20))" \
            --timeout 400 -- \
            -drive "file=$tmp/o.img,if=none,id=o0,format=raw" \
            -device "virtio-blk-pci,drive=o0,bootindex=$oi" \
            -D "$tmp/trace.log" -trace h3100_admin_create_cq -trace h3100_io_rw
        if [ $first = h3100 ]; then
            # the firmware's queues: those before Linux's first interrupt CQ
            fwq=$(awk '/h3100_admin_create_cq/ && / flags 0x3/ { exit } /h3100_admin_create_cq/ { n++ } END { print n + 0 }' "$tmp/trace.log")
            fwr=$(awk '/h3100_admin_create_cq/ && / flags 0x3/ { exit } /h3100_io_rw/ && / write 0 / { n++ } END { print n + 0 }' "$tmp/trace.log")
            [ "$fwq" -ge 1 ] && [ "$fwr" -ge 100 ]
            check $? "$label: $fw's NVMe driver made $fwq queue(s) and read $fwr times before Linux"
        fi
    done
done
finish
