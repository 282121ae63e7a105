#!/usr/bin/env python3
"""The device's own code per command, from bench-device-cpu.sh's profiles.

  perf_own_code.py ROWS PROFILES --objects DIR --period NS [--groups CONFIG:JOB]
                   [--plot-data FILE]

ROWS: device_cpu_report.py's rows, CONFIG JOB COMMANDS WALL_NS DEVICE_NS
VCPU_NS WAKES IRQS (the first five are read).  PROFILES: a directory with CONFIG.JOB.txt for each
profiled job, `perf report -n --no-children --sort symbol --stdio -q -g
none` of the device's threads sampled every NS of their CPU time
(`perf record -e cpu-clock -c NS`).  DIR: the QEMU build the runs used;
its objects (*.o, at any depth) say whose a symbol is: the device's own
when only the objects of hw/dapustor-h3100 (this project's hw/ and
models/, and its trace events) define it, QEMU's nvme's when only those
of hw/nvme do.  A name that other objects define too (a header's inline
function kept out of line) is nobody's own.

Prints, per profiled job: the device thread's ns per command (ROWS: its
idle rate subtracted), the profile's (samples x NS / commands, idle
included: a check on the sampling), and the own code's ns per command
and share of the samples (the device's for dapustor-h3100's
configurations, hw/nvme's for those named nvme*).  With --groups, one
job's profile in groups: own code, guest memory and DMA, interrupts, the
block layer, the main loop and locks, the kernel's sleeps and wake-ups.
--plot-data writes CONFIG/JOB THREAD_NS OWN_NS per profiled job, for gnuplot.
"""

import argparse
import os
import re
import subprocess
import sys

LINE = re.compile(r"^\s*([\d.]+)%\s+(\d+)\s+\[(.)\]\s+(\S+)")

GROUPS = [
    ("guest memory / DMA",
     r"^(address_space|flatview|memory_region|dma_|qemu_sglist|iov|pci_dma)"),
    ("interrupts", r"^(msix|msi_|apic|ioapic|cpu_interrupt|qemu_cpu_kick)"),
    ("block layer", r"^(blk_|bdrv_|null_|coroutine|qemu_co|qemu_coroutine)"),
]
KERNEL_SLEEP = r"schedule|task_switch|wake|futex|spin_unlock|hrtimeout|__switch_to"
MAIN_LOOP = (r"^(aio_|qemu_poll|ppoll|g_main|g_source|main_loop|timerlist|qemu_clock|"
             r"timer_|qemu_bh|event_notifier|qemu_mutex|qemu_cond|qemu_event|g_mutex|g_poll)")
KERNEL_LOOP = r"poll|eventfd|signalfd|fdget|syscall"


def object_owner(name):
    """Whose an object file is, by the name meson gives it."""
    if name.startswith("hw_dapustor-h3100_") or "trace-hw_dapustor_h3100" in name:
        return "h3100"
    if name.startswith("hw_nvme_") or "trace-hw_nvme." in name:
        return "nvme"
    return "other"


def own_symbols(objdir):
    """{'h3100': names, 'nvme': names}: the text symbols only those objects define."""
    objs = []
    for top, _, files in os.walk(objdir):
        objs += [os.path.join(top, f) for f in files if f.endswith(".o")]
    owners = {}
    for i in range(0, len(objs), 200):
        out = subprocess.run(["nm", "-A", "-P", "--defined-only"] + objs[i:i + 200],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, check=False).stdout
        for line in out.splitlines():
            path, _, rest = line.partition(": ")
            f = rest.split()
            if len(f) < 2 or f[1] not in "TtWw":
                continue
            owners.setdefault(f[0], set()).add(object_owner(os.path.basename(path)))
    sets = {"h3100": set(), "nvme": set()}
    for sym, who in owners.items():
        if len(who) == 1 and next(iter(who)) in sets:
            sets[next(iter(who))].add(sym)
    return sets


def read_profile(path):
    """[(samples, kernel, symbol)] of one perf report."""
    prof = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if m:
                prof.append((int(m.group(2)), m.group(3) == "k", m.group(4)))
    return prof


def job_profile(o, sets, cfg, job):
    """The profile of CFG's JOB and the symbols that are its device's own, or None."""
    path = os.path.join(o.profiles, "%s.%s.txt" % (cfg, job))
    if not os.path.exists(path):
        return None
    return read_profile(path), sets["nvme" if cfg.startswith("nvme") else "h3100"]


def group_of(sym, kernel, own):
    if sym in own:
        return "own code"
    for name, pat in GROUPS:
        if re.search(pat, sym):
            return name
    if kernel and re.search(KERNEL_SLEEP, sym):
        return "kernel: sleep / wake-up"
    if re.search(MAIN_LOOP, sym) or (kernel and re.search(KERNEL_LOOP, sym)):
        return "main loop, poll, locks"
    return "kernel: other" if kernel else "other"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rows")
    ap.add_argument("profiles")
    ap.add_argument("--objects", required=True)
    ap.add_argument("--period", type=int, required=True)
    ap.add_argument("--groups")
    ap.add_argument("--plot-data")
    o = ap.parse_args()
    sets = own_symbols(o.objects)
    if not sets["h3100"]:
        print("perf_own_code.py: no object of hw/dapustor-h3100 under %s" % o.objects,
              file=sys.stderr)
        return 1
    out = ["%-9s %-22s %9s %12s %10s %6s" % ("config", "job", "ns/cmd", "profiled",
                                              "own ns/cmd", "own %")]
    plot = []
    for line in open(o.rows):
        cfg, job, n, _, dev = line.split()[:5]
        found = job_profile(o, sets, cfg, job)
        if not found or not int(n):
            continue
        prof, own = found
        total = sum(s for s, _, _ in prof)
        mine = sum(s for s, _, sym in prof if sym in own)
        out.append("%-9s %-22s %9.0f %12.0f %10.0f %6.1f" % (
            cfg, job, float(dev) / int(n), total * o.period / int(n),
            mine * o.period / int(n), 100.0 * mine / total if total else 0))
        plot.append("%s/%s %.0f %.0f" % (cfg, job, float(dev) / int(n), mine * o.period / int(n)))
    out += ["",
            "(ns/cmd: the device thread's, idle subtracted; profiled: its perf",
            " samples x %d ns per command, idle included; own: the samples in" % o.period,
            " symbols only hw/dapustor-h3100's objects define (hw/ and models/), or",
            " hw/nvme's for nvme configurations)"]
    if o.groups:
        cfg, _, job = o.groups.partition(":")
        found = job_profile(o, sets, cfg, job)
        if found:
            prof, own = found
            total = sum(s for s, _, _ in prof) or 1
            groups = {}
            for s, k, sym in prof:
                g = group_of(sym, k, own)
                groups[g] = groups.get(g, 0) + s
            out += ["", "%s, %s: where the device thread's time goes (perf, self)" % (cfg, job)]
            out += ["  %5.1f%%  %s" % (100.0 * s / total, g)
                    for g, s in sorted(groups.items(), key=lambda x: (-x[1], x[0]))]
    print("\n".join(out))
    if o.plot_data:
        with open(o.plot_data, "w") as f:
            f.writelines(line + "\n" for line in plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
