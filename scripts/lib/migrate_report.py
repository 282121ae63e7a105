#!/usr/bin/env python3
"""The table of scripts/bench/bench-migrate.sh, from what its runs left.

  migrate_report.py DIR ROW [ROW ...] [--window-start S] [--margin S]

Each ROW is NAME:DRIVE:STATE (DRIVE h3100 or nvme; STATE empty, half,
full, or - for QEMU's nvme, which keeps no state of its own).  DIR holds,
per NAME:
  NAME.trace  QEMU's trace (-trace ... -D) of every QEMU of the run: the
              drive's vmstate_downtime_save / _load, and the H3100's
              h3100_mig_round, h3100_mig_complete, h3100_vmstate_save;
  NAME.mig    the source's final query-migrate reply (JSON lines; the last);
  NAME.out    the guest's output: "FIO rc=0 write_iops=N" and fio's
              latency log, one "@lat TIME_MS, NS, DIR, BS, OFFSET" line per
              100 ms (log_avg_msec=100 with log_max_value=1: the slowest
              command that completed in each 100 ms of guest time).
Writes NAME.rounds (ROUND BYTES PAGES_DUE, the H3100's rounds) and
NAME.lat (SECONDS WORST_MS, the 100 ms maxima) for the plots, and prints
the table, the 6.4 TB extrapolation (from the H3100's full row) and one
line per row on the guest's stall.

The stall is the slowest command fio saw within the switch's window, in
the guest's own time: from --window-start (default 5: the migration is
started 5 s into fio) to the end of the migration (its total time) plus
--margin (default 3: the destination's start before the migrate command,
and the first run after it).  base_ms is the median of the 100 ms maxima
outside that window: what the slowest command of a tenth of a second
takes when nothing migrates.
"""

import argparse
import json
import re
import statistics
import sys

EVENT = re.compile(r"vmstate_downtime_(save|load) type=\S+ idstr=(\S+) "
                   r"instance_id=\d+ downtime=(-?\d+)")
ROUND = re.compile(r"h3100_mig_round round (\d+): (\d+) bytes sent, (\d+) pages due")
COMPLETE = re.compile(r"h3100_mig_complete last round: (\d+) bytes of map, (\d+) of core")
RUNTIME = re.compile(r"h3100_vmstate_save runtime state (\d+) bytes")
FIO = re.compile(r"^FIO rc=0 write_iops=(\d+)", re.M)


def drive_section(drive, idstr):
    """Is the vmstate section idstr one of the drive's?"""
    if drive == "h3100":
        return "dapustor-h3100" in idstr
    return re.search(r"(^|/)nvme$", idstr) is not None


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def parse_row(d, name, drive, state, window_start, margin):
    trace = read("%s/%s.trace" % (d, name))
    mig_lines = [l for l in read("%s/%s.mig" % (d, name)).splitlines() if l.strip()]
    mig = json.loads(mig_lines[-1]) if mig_lines else {}
    ram = mig.get("ram", {})
    row = {"name": name, "drive": drive, "state": state,
           "downtime": mig.get("downtime", 0), "total_s": mig.get("total-time", 0) / 1000,
           "ram_mb": ram.get("normal-bytes", 0) / 1e6,
           "total_mb": ram.get("transferred", 0) / 1e6}
    us = {"save": 0, "load": 0}
    for m in EVENT.finditer(trace):
        if drive_section(drive, m.group(2)):
            us[m.group(1)] += int(m.group(3))
    row["dev_save"], row["dev_load"] = us["save"] / 1000, us["load"] / 1000
    rounds = [tuple(int(x) for x in m.groups()) for m in ROUND.finditer(trace)]
    with open("%s/%s.rounds" % (d, name), "w") as f:
        for r in rounds:
            f.write("%d %d %d\n" % r)
    if drive == "h3100":
        last = COMPLETE.findall(trace)
        last_map, core = (int(x) for x in last[-1]) if last else (0, 0)
        rt = RUNTIME.findall(trace)
        row["dev_mb"] = (sum(r[1] for r in rounds) + last_map + core +
                         (int(rt[-1]) if rt else 0)) / 1e6
        row["core_kb"] = core / 1000
        row["rounds"] = len(rounds)
    else:
        row["dev_mb"] = row["core_kb"] = row["rounds"] = None
    out = read("%s/%s.out" % (d, name))
    m = FIO.search(out)
    row["fio_iops"] = int(m.group(1)) if m else None
    lat = []
    for line in out.splitlines():
        if line.startswith("@lat "):
            f = [x.strip() for x in line[5:].split(",")]
            lat.append((int(f[0]) / 1000, int(f[1]) / 1e6))
    with open("%s/%s.lat" % (d, name), "w") as f:
        for t, ms in lat:
            f.write("%.3f %.3f\n" % (t, ms))
    end = window_start + row["total_s"] + margin
    inside = [(ms, t) for t, ms in lat if window_start <= t <= end]
    outside = [ms for t, ms in lat if not window_start <= t <= end and t >= 1]
    row["window"] = (window_start, end)
    row["stall"] = max(inside) if inside else None
    row["base"] = statistics.median(outside) if outside else None
    row["out_max"] = max(outside) if outside else None
    times = [t for t, _ in lat]
    gaps = [(b - a, a) for a, b in zip(times, times[1:])]
    row["gap"] = max(gaps) if gaps else None
    return row


def cell(x, spec, dash="-"):
    return dash if x is None else spec % x


def table(rows):
    head = ("%-6s %-6s %6s %9s %9s %9s %8s %9s %8s %8s %9s %6s %9s %9s %8s" %
            ("drive", "state", "mapped", "downtime", "dev_save", "dev_load", "total_s",
             "dev_MB", "core_KB", "ram_MB", "total_MB", "rounds", "fio_iops", "stall_ms",
             "base_ms"))
    lines = [head]
    for r in rows:
        mapped = {"empty": "0", "half": "50%", "full": "100%"}.get(r["state"], "-")
        lines.append("%-6s %-6s %6s %7dms %7.1fms %7.1fms %8.1f %9s %8s %8.1f %9.1f %6s %9s %9s %8s" % (
            r["drive"], r["state"], mapped, r["downtime"], r["dev_save"], r["dev_load"],
            r["total_s"], cell(r["dev_mb"], "%.1f"), cell(r["core_kb"], "%.1f"), r["ram_mb"],
            r["total_mb"], cell(r["rounds"], "%d"), cell(r["fio_iops"], "%d"),
            cell(r["stall"] and r["stall"][0], "%.1f"), cell(r["base"], "%.1f")))
    return lines


def extrapolate(rows):
    """6.4 TB: eight times the dies, blocks and map.  The last round is not
    eight times larger: QEMU stops the VM once what is due fits in its
    downtime limit at the bandwidth it measured, whatever the capacity; the
    core (block tables, superblocks) is, and goes at this run's rate."""
    full = [r for r in rows if r["drive"] == "h3100" and r["state"] == "full"]
    if not full or not full[-1]["total_s"]:
        return []
    r = full[-1]
    rate = r["dev_mb"] / r["total_s"]
    more = r["core_kb"] * 7 / 1000 / rate * 1000
    return ["", "6.4 TB fully written, extrapolated from the 0.8 TB row: map %.0f MB (x8), "
            "about %.0f s at this run's %.0f MB/s; core %.1f MB (x8), %.0f ms more in the "
            "downtime: about %.0f ms of the device's" % (
                r["dev_mb"] * 8, r["total_s"] * 8, rate, r["core_kb"] * 8 / 1000, more,
                r["dev_save"] + r["dev_load"] + more)]


def stall_notes(rows):
    lines = ["", "stall: the slowest command fio saw in each 100 ms of guest time "
             "(log_max_value), in the switch's window"]
    for r in rows:
        if r["stall"] is None:
            lines.append("  %-12s no latency log" % r["name"])
            continue
        lines.append("  %-12s %.1f ms at %.1f s (window %.1f-%.1f s); outside it: median "
                     "%.1f ms, max %.1f ms; longest step between log entries %.0f ms at %.1f s" % (
                         r["name"], r["stall"][0], r["stall"][1], r["window"][0],
                         r["window"][1], r["base"] or 0, r["out_max"] or 0,
                         r["gap"][0] * 1000 if r["gap"] else 0, r["gap"][1] if r["gap"] else 0))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("rows", nargs="+")
    ap.add_argument("--window-start", type=float, default=5.0)
    ap.add_argument("--margin", type=float, default=3.0)
    a = ap.parse_args()
    rows = []
    for spec in a.rows:
        name, drive, state = spec.split(":")
        if drive not in ("h3100", "nvme"):
            sys.exit("migrate_report.py: drive h3100 or nvme, not %r" % drive)
        rows.append(parse_row(a.dir, name, drive, state, a.window_start, a.margin))
    print("\n".join(table(rows) + extrapolate(rows) + stall_notes(rows)))


if __name__ == "__main__":
    main()
