#!/usr/bin/env python3
"""The table of scripts/bench/bench-device-cpu.sh, from its samples.

  device_cpu_report.py SAMPLES CMDS --rows ROWS --io THREAD --main THREAD
                       --configs LIST --commands N

SAMPLES: one line per QEMU thread at each mark of each job,
CONFIG WHAT JOB NOW_NS THREAD RUNTIME_NS WAKES (WHAT: begin or end).
CMDS: CONFIG JOB COMMANDS [IRQS], the commands the drive counted in each
job and the interrupts the guest took from its I/O queues.
THREAD: the device thread's name with an IOThread (--io) and without
(--main).  Writes ROWS, per configuration and job, CONFIG JOB COMMANDS
WALL_NS DEVICE_NS VCPU_NS WAKES IRQS (- when CMDS has none): the device
thread's run time and
wake-ups between the job's marks less its idle phase's rate times the
job's wall time (at least 0); prints the table, its notes and each
configuration's ratio to QEMU's nvme.
"""

import argparse
import math
import re
import sys


def div(a, b):
    """a / b as C's doubles give it: x / 0 is inf, 0 / 0 a NaN (negative, as x86's)."""
    if b:
        return a / b
    return math.copysign(math.inf, a) if a else -math.nan


def fmt(spec, x):
    """printf's %W.Pf of x, NaN included ("-nan", as glibc prints x86's)."""
    if math.isnan(x):
        width = re.match(r"%(\d*)", spec).group(1)
        return ("%" + width + "s") % ("-nan" if math.copysign(1, x) < 0 else "nan")
    return spec % x


def rows(samples, cmds, io, main):
    """The ROWS lines, as text (the table is made from the rounded figures)."""
    wall, dev, wakes, cpu, order = {}, {}, {}, {}, []
    for line in samples:
        f = line.split()
        if len(f) < 7:
            f += [""] * (7 - len(f))
        cfg, side, job, now, thread, run, sw = f[:7]
        key = (cfg, job)
        wall[key, side] = float(now or 0)
        if thread == (io if cfg == "iothread" else main) or (
                re.fullmatch(r"iot[12]", cfg) and re.fullmatch(r"IO_io[12]", thread)):
            dev[key, side] = dev.get((key, side), 0.0) + float(run or 0)
            wakes[key, side] = wakes.get((key, side), 0.0) + float(sw or 0)
        if re.fullmatch(r"CPU_[0-9]+/TCG", thread):
            cpu[key, side] = cpu.get((key, side), 0.0) + float(run or 0)
        if key not in order:
            order.append(key)
    idle, idle_wakes, out = {}, {}, []
    for key in order:
        cfg, job = key

        def span(m):
            return m.get((key, "end"), 0.0) - m.get((key, "begin"), 0.0)
        w, d, c, z = span(wall), span(dev), span(cpu), span(wakes)
        if job == "idle":
            idle[cfg] = d / w if w > 0 else 0
            idle_wakes[cfg] = z / w if w > 0 else 0
            continue
        d -= idle.get(cfg, 0) * w
        z -= idle_wakes.get(cfg, 0) * w
        n, irqs = cmds.get(key, (0, None))
        out.append("%s %s %d %.0f %.0f %.0f %.0f %s" % (cfg, job, int(n), w, max(d, 0), c,
                                                       max(z, 0), "-" if irqs is None else
                                                       "%d" % irqs))
    return out


def table(rows_text, configs, commands):
    out = ["%-9s %-20s %8s %7s %12s %8s %8s %8s %11s" % (
        "config", "job", "commands", "kIOPS", "device ns", "ns/cmd", "wakes/cmd", "irqs/cmd",
        "vCPU ns/cmd")]
    per_cmd, jobs = {}, []
    for line in rows_text:
        cfg, job, n, w, d, c, z, q = line.split()
        n, w, d, c, z = int(n), float(w), float(d), float(c), float(z)
        out.append("%-9s %-20s %8d %s %12.0f %s %s %s %s" % (
            cfg, job, n, fmt("%7.1f", div(n, w) * 1e6), d, fmt("%8.0f", div(d, n)),
            fmt("%8.2f", div(z, n)), "%8s" % q if q == "-" else fmt("%8.2f", div(int(q), n)),
            fmt("%11.0f", div(c, n))))
        per_cmd[cfg, job] = div(d, n)
        if job not in jobs:
            jobs.append(job)
    out += ["",
            "(device thread: the main loop, or the IOThread for iothread, or the main",
            " loop and IOThreads io1 and io2 summed for iot1 and iot2; its idle run",
            " time and wake-ups subtracted; wakes: the device thread's voluntary",
            " context switches; irqs: the guest's interrupts from the I/O queues;",
            " vCPU: the TCG vCPU threads; null-co backend, fio",
            " libaio O_DIRECT in a 1-vCPU TCG guest (2 vCPUs and 2 fio jobs for iot1,",
            " iot2, deep and nvme-deep), %s commands per job and fio job)" % commands]
    # the ratio to QEMU's nvme (nvme-deep for deep's job), per job,
    # configurations in the run's order
    refs = ("nvme", "nvme-deep")
    cfgs = [c for c in configs.split(",") if c not in refs + ("mix",)]
    ref = {job: per_cmd[r, job] for r in refs for job in jobs if (r, job) in per_cmd}
    if ref:
        out += ["", "%-22s" % "ratio to nvme" + "".join(" %9s" % c for c in cfgs)]
        for job in jobs:
            if job not in ref:
                continue
            out.append("%-22s" % job + "".join(
                " %9s" % (fmt("%.2f", div(per_cmd[c, job], ref[job]))
                          if (c, job) in per_cmd else "-") for c in cfgs))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("samples")
    ap.add_argument("cmds")
    ap.add_argument("--rows", required=True)
    ap.add_argument("--io", required=True)
    ap.add_argument("--main", required=True)
    ap.add_argument("--configs", required=True)
    ap.add_argument("--commands", required=True)
    o = ap.parse_args()
    cmds = {}
    with open(o.cmds) as f:
        for line in f:
            w = line.split()
            if len(w) >= 2:
                cmds[w[0], w[1]] = (float(w[2]) if len(w) > 2 else 0,
                                    int(w[3]) if len(w) > 3 else None)
    with open(o.samples) as f:
        r = rows(f, cmds, o.io, o.main)
    with open(o.rows, "w") as f:
        f.writelines(line + "\n" for line in r)
    print("\n".join(table(r, o.configs, o.commands)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
