#!/usr/bin/env python3
"""The report of one scripts/bench/sql-bench.sh run.

Reads what the guest sent back (the lines starting @@ among sysbench's or
pgbench's own output), the device's telemetry file and the model log
(decoded by h3100-vlog), and prints the run's figures, the drive during
the run and the drive report; with --summary, also writes the KEY=VALUE
summary that scripts/bench/sql-compare.sh and the guest-sql test read.

The numbers are formatted as awk formats them (the report was awk once
and its lines are read by people and by tests alike).
"""

import argparse
import os
import re
import subprocess
import sys

NUM = re.compile(r"\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def num(s):
    """A string's number as awk reads it: its numeric prefix, else 0."""
    m = NUM.match(s or "")
    return float(m.group(0)) if m else 0.0


def awk_str(x):
    """A number as awk prints it (%.6g, integers whole)."""
    if x == int(x) and abs(x) < 1e16:
        return "%d" % x
    return "%.6g" % x


def human(b):
    b = num(b) if isinstance(b, str) else float(b)
    units = ["B", "KB", "MB", "GB", "TB"]
    i = 0
    while b >= 1000 and i < len(units) - 1:
        b /= 1000
        i += 1
    return "%.2f %s" % (b, units[i])


def milli(v):
    v = int(v)
    return "%d.%03d" % (v // 1000, v % 1000)


class GuestOutput:
    """The guest's lines, and the @@ records among them."""

    def __init__(self, path):
        with open(path, errors="replace") as f:
            self.lines = f.read().splitlines()

    def records(self, tag):
        for line in self.lines:
            w = line.split()
            if w and w[0] == tag:
                yield w

    def smart(self, phase, key):
        """A SMART value from a phase ('' when the phase did not report it)."""
        for w in self.records("@@SMART"):
            if len(w) > 2 and w[1] == phase:
                a = w[2].split("=")
                if a[0] == key:
                    return a[1] if len(a) > 1 else ""
        return ""

    def info(self, key):
        for w in self.records("@@INFO"):
            if len(w) > 1 and w[1] == key:
                return " ".join(w[2:])
        return ""

    def mysql(self, key):
        for line in self.lines:
            f = re.split(r"[ =]", line)
            if f[0] == "@@MYSQL" and len(f) > 1 and f[1] == key:
                return f[2] if len(f) > 2 else ""
        return ""

    def steps(self):
        return "".join("%s=%s " % (w[2] if len(w) > 2 else "", w[1] if len(w) > 1 else "")
                       for w in self.records("@@STEP"))

    def bstat(self, phase, n):
        for w in self.records("@@BSTAT"):
            if len(w) > 1 and w[1] == phase:
                return int(w[n + 1]) if len(w) > n + 1 else 0
        return 0

    def bench(self, inst):
        """Instance INST's benchmark output."""
        out, on = [], False
        for line in self.lines:
            w = line.split()
            if w and w[0] == "@@BENCH-BEGIN":
                on = len(w) > 1 and w[1] == str(inst)
                continue
            if w and w[0] == "@@BENCH-END":
                on = False
            if on:
                out.append(line)
        return out

    def vlog_bytes(self, phase):
        for w in self.records("@@VLOG"):
            if len(w) > 1 and w[1] == phase:
                return bytes(int(h, 16) for h in w[2:])
        return b""


def sysbench_field(lines, key):
    """The rest of the first line holding KEY, after its colon."""
    for line in lines:
        if key in line:
            return re.sub(r"^[^:]*:[ \t]*", "", line, count=1)
    return ""


def pgbench_field(lines, key):
    """The first word after '=' or ':' of the first line starting with KEY."""
    for line in lines:
        if line.startswith(key):
            w = re.sub(r"^[^=:]*[=:] *", "", line, count=1).split()
            return w[0] if w else ""
    return ""


def word(s, n):
    w = s.split()
    return w[n] if len(w) > n else ""


def sum_series(pairs):
    """T:TPS,... with the instances' TPS summed per T, in order of T's first line."""
    order, v = [], {}
    for t, x in pairs:
        if t not in v:
            order.append(t)
            v[t] = 0.0
        v[t] += num(x)
    return ",".join("%s:%s" % (t, awk_str(v[t])) for t in order)


def hist_pct(lines, p):
    """The P-th percentile (ms) of sysbench's latency histograms, merged."""
    c, h = {}, False
    for line in lines:
        if line.startswith("Latency histogram"):
            h = True
            continue
        if h and re.match(r" *[0-9.]+ \|", line):
            w = line.split()
            c[w[0]] = c.get(w[0], 0.0) + num(w[-1])
            continue
        if h and "|" not in line and "value" not in line:
            h = False
    rows = sorted(c.items(), key=lambda kv: num(kv[0]))
    tot = sum(n for _, n in rows)
    s = 0.0
    for v, n in rows:
        s += n
        if s >= p / 100 * tot:
            return v
    return ""


def vlog_fields(tool, data=None, path=None):
    """NAME -> VALUE from h3100-vlog --fields (nothing without the tool or bytes)."""
    if not os.access(tool, os.X_OK):
        return {}
    if path is None and not data:
        return {}
    args = [tool, "--fields"] + ([path] if path else [])
    r = subprocess.run(args, input=data if path is None else None,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    fields = {}
    for line in r.stdout.decode(errors="replace").splitlines():
        k, _, v = line.partition("=")
        fields[k] = v
    return fields


def telemetry_rows(path):
    """Each telemetry row's KEY -> VALUE text, split as awk -F'[:,]' splits it."""
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if '"t":' not in line:
                continue
            f = re.split(r"[:,]", line)
            rows.append([(re.sub(r'[ "{]', "", f[i]), f[i + 1]) for i in range(len(f) - 1)])
    return rows


def device_latency(path):
    """The device's mean (over the rows, weighted by commands) and p99 (us)."""
    c = s = dt = 0.0
    for row in telemetry_rows(path):
        n = m = 0.0
        for k, v in row:
            if k == "interval":
                dt = num(v)
            if k == "iops":
                n = num(v)
            if k == "lat_mean_us":
                m = num(v)
        c += n * dt
        s += n * dt * m
    mean = "%.0f" % (s / c) if c else "-"
    p99 = ""
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if '"cdf":' not in line:
                continue
            line = re.sub(r"[][{}]", " ", line.replace('"cdf":', "", 1))
            fl = re.split(r"[ ,]+", line)
            i = 0
            while i + 1 < len(fl):
                if fl[i] != "":
                    lat, fr = fl[i], fl[i + 1]
                    i += 1
                    if num(fr) >= 0.99:
                        return mean, "%.0f" % num(lat)
                i += 1
    return mean, p99


def telemetry_line(path):
    rows = telemetry_rows(path)
    peak = p99 = temp = 0.0
    for row in rows:
        for k, v in row:
            if k == "iops" and num(v) > peak:
                peak = num(v)
            if k == "lat_p99_us" and num(v) > p99:
                p99 = num(v)
            if k == "temp_c":
                temp = num(v)
    return ("telemetry (host)           %d rows of 1 s; peak %.0f IOPS, worst p99 %.0f us, "
            "%.1f C at the end" % (len(rows), peak, p99, temp))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="the guest's output")
    for a in ("workdir", "engine", "drive", "dev-cap", "state", "timing", "workload",
              "tables", "table-size", "scale", "buffer-pool", "threads", "duration",
              "seed", "smp", "mem", "accel", "ishift", "disk", "vlog-tool"):
        ap.add_argument("--" + a, default="")
    ap.add_argument("--instances", type=int, default=1)
    ap.add_argument("--wall", type=int, default=0)
    ap.add_argument("--disk-alloc", default="", help="du -h of the backing file, if it is there")
    ap.add_argument("--plots", default="", help="h3100-plot.sh's output, if it drew the run")
    ap.add_argument("--summary", default="", help="write the KEY=VALUE summary here")
    o = ap.parse_args()
    g = GuestOutput(o.out)
    pg = o.engine == "postgres"
    p = print

    # the benchmark's figures, summed (rates) or merged (latency
    # distributions) over the instances
    per_inst = []
    tps, qps, lsum, errs = "0", "0", "0", "0"
    run_s = ""
    for k in range(1, o.instances + 1):
        b = g.bench(k)
        if pg:
            t, q, l = pgbench_field(b, "tps = "), "0", pgbench_field(b, "latency average")
            e = pgbench_field(b, "number of failed transactions")
            if k == 1:
                run_s = pgbench_field(b, "duration")
        else:
            t = word(sysbench_field(b, "transactions:").replace("(", "").replace(")", ""), 1)
            q = word(sysbench_field(b, "queries:").replace("(", "").replace(")", ""), 1)
            l = sysbench_field(b, "avg:")
            e = word(sysbench_field(b, "ignored errors:"), 0)
            if k == 1:
                run_s = sysbench_field(b, "total time:").replace("s", "")
        t, q, l, e = t or "0", q or "0", l or "0", e or "0"
        per_inst.append(t)
        tps, qps, lsum, errs = ("%.2f" % (num(tps) + num(t)), "%.2f" % (num(qps) + num(q)),
                                "%.4f" % (num(lsum) + num(l) * num(t)),
                                "%d" % int(num(errs) + num(e)))
    lavg = "%.2f" % (num(lsum) / num(tps)) if num(tps) > 0 else "-"
    if pg:
        qps = "-"

        def pglat(key):
            s = ""
            for w in g.records("@@PGLAT"):
                for f in w[1:]:
                    a = f.split("=")
                    if a[0] == key:
                        s += "%.2f" % (num(a[1] if len(a) > 1 else "") / 1000)
            return s
        lp95, lp99 = pglat("p95_us"), pglat("p99_us")
        # "progress: 2.0 s, 35.5 tps, lat 28.143 ms stddev 5.231, 0 failed"
        series = sum_series((awk_str(num(word(x, 1))), awk_str(num(word(x, 3))))
                            for x in g.lines if x.startswith("progress: "))
    else:
        lp95, lp99 = hist_pct(g.lines, 95), hist_pct(g.lines, 99)
        # "[ 10s ] thds: 4 tps: 31.20 ..."
        pairs = []
        for x in g.lines:
            if re.match(r"\[ *[0-9]+s \]", x):
                w = x.split()
                t = re.sub(r"s$", "", w[1] if len(w) > 1 else "")
                pairs += [(t, w[i + 1]) for i in range(len(w) - 1) if w[i] == "tps:"]
        series = sum_series(pairs)

    # the run's window, from the guest's snapshots just before and after it
    def sdelta(key):
        return int(num(g.smart("runend", key))) - int(num(g.smart("runstart", key)))
    rd, wr = sdelta("host_read_commands"), sdelta("host_write_commands")
    rd_bytes = sdelta("data_units_read") * 512000
    wr_bytes = sdelta("data_units_written") * 512000
    run_iops = "%.0f" % ((rd + wr) / num(run_s) if num(run_s) > 0 else 0)
    run_rpct = "%.0f" % (100 * rd / (rd + wr) if rd + wr else 0)

    def mean_us(ms, n):
        return "%.0f" % (1000 * ms / n) if n else "-"
    run_rlat = mean_us(g.bstat("runend", 4) - g.bstat("runstart", 4),
                       g.bstat("runend", 1) - g.bstat("runstart", 1))
    run_wlat = mean_us(g.bstat("runend", 8) - g.bstat("runstart", 8),
                       g.bstat("runend", 5) - g.bstat("runstart", 5))
    vs = {ph: vlog_fields(o.vlog_tool, data=g.vlog_bytes(ph)) for ph in ("runstart", "runend")}
    run_host = run_nand = ""
    run_waf = run_gc = run_moved = run_stalls = "-"
    if vs["runend"].get("version") and vs["runstart"].get("version"):
        def vd(key):
            return int(vs["runend"][key]) - int(vs["runstart"][key])
        run_host, run_nand = vd("host_write_bytes"), vd("nand_write_bytes")
        run_waf = "%.2f" % (run_nand / run_host) if run_host > 0 else "-"
        run_gc, run_moved, run_stalls = vd("gc_victims"), vd("gc_slots_moved"), vd("wbuf_stalls")
    # the device's own latency: telemetry rows (per virtual second) and the
    # session's distribution written at exit (the run is most of the session)
    tel = os.path.join(o.workdir, "telemetry.jsonl")
    has_tel = os.path.isfile(tel) and os.path.getsize(tel) > 0
    dev_mean, dev_p99 = device_latency(tel) if has_tel else ("-", "-")

    if o.drive == "qemu-nvme":
        drive_name = "QEMU's nvme device (the same image)"
    else:
        drive_name = "the DapuStor %s %s (%s%s)" % (o.drive.upper(), o.dev_cap, o.state,
                                                   "" if o.timing == "on" else ", timing off")
    if pg:
        what = "pgbench (TPC-B-like) on PostgreSQL"
        size = "scale %s (%d accounts), shared_buffers %s MiB" % (
            o.scale, int(num(o.scale)) * 100000, o.buffer_pool)
    else:
        what = "sysbench %s on MariaDB" % o.workload
        size = "%s tables x %s rows, buffer pool %s MiB" % (o.tables, o.table_size, o.buffer_pool)
    p("\n=== %s on %s (guest) ===" % (what, drive_name))
    p("drive       %s" % g.info("drive"))
    p("guest       Linux %s, %s%s, %s vCPU, %s MiB; %s; ext4 on /dev/nvme0n1" % (
        g.info("kernel"), o.accel, " icount shift=" + o.ishift if o.ishift else "",
        o.smp, o.mem, g.info("server")))
    p("workload    %s, %s, %s threads, %s s, seed %s" % (
        o.workload, size, o.threads, o.duration, o.seed))
    p("TPS         %s" % tps)
    if o.instances != 1:
        p("instances   %s on partitions of the drive: TPS %s" % (o.instances, " ".join(per_inst)))
    p("QPS         %s" % qps)
    p("latency     avg %s ms, p95 %s ms, p99 %s ms (%s)" % (
        lavg, lp95, lp99, "pgbench's transaction log" if pg else "sysbench's histogram"))
    if pg:
        p("errors      %s failed transactions" % errs)
    else:
        reconnects = sum(num(w[1] if len(w) > 1 else "") for w in g.records("reconnects:"))
        p("errors      %s ignored, %s reconnects" % (errs, awk_str(reconnects)))

    p("\n=== the drive during the run (%s s) ===" % run_s)
    p("commands    %s reads + %s writes: %s IOPS, %s%% reads; %s read, %s written (SMART)" % (
        rd, wr, run_iops, run_rpct, human(rd_bytes), human(wr_bytes)))
    p("latency     read %s us, write %s us mean (the guest block layer: /sys/block/nvme0n1/stat)"
      % (run_rlat, run_wlat))
    if dev_mean != "-":
        p("            %s us mean, %s us p99 in the device (telemetry; the whole session)"
          % (dev_mean, dev_p99))
    if run_host != "":
        p("NAND        %s written for %s from the host: WAF %s; reclaim %s runs, %s x 4 KiB moved; "
          "%s buffer stalls" % (human(run_nand), human(run_host), run_waf, run_gc, run_moved,
                                run_stalls))
    if o.summary:
        with open(o.summary, "w") as f:
            for k, v in (("drive", o.drive), ("state", o.state), ("timing", o.timing),
                         ("capacity", o.dev_cap), ("workload", o.workload), ("tps", tps),
                         ("qps", qps), ("lat_avg_ms", lavg), ("lat_p95_ms", lp95),
                         ("lat_p99_ms", lp99), ("errors", errs), ("run_s", run_s),
                         ("reads", rd), ("writes", wr), ("iops", run_iops),
                         ("read_pct", run_rpct), ("read_lat_us", run_rlat),
                         ("write_lat_us", run_wlat), ("dev_lat_mean_us", dev_mean),
                         ("dev_lat_p99_us", dev_p99), ("waf", run_waf),
                         ("reclaim_runs", run_gc), ("reclaim_moved", run_moved),
                         ("wbuf_stalls", run_stalls), ("wall_s", o.wall),
                         ("tps_series", series), ("instances", o.instances),
                         ("tps_instances", ",".join(per_inst))):
                f.write("%s=%s\n" % (k, v))

    p("\n=== drive report (nvme smart-log inside the guest; 1 data unit = 512,000 B) ===")
    row = "%-26s %14s %14s %14s %14s"
    p(row % ("SMART delta by phase", "mkfs", "bootstrap+prep", "run+shutdown", "total"))

    def delta(key, a, b):
        a, b = g.smart(a, key), g.smart(b, key)
        return str(int(num(b)) - int(num(a))) if a and b else "?"
    for k in ("data_units_written", "data_units_read", "host_write_commands",
              "host_read_commands"):
        p(row % (k, delta(k, "boot", "mkfs"), delta(k, "mkfs", "prepare"),
                 delta(k, "prepare", "end"), delta(k, "boot", "end")))
    duw_b, duw_e = g.smart("boot", "data_units_written"), g.smart("end", "data_units_written")
    if duw_b and duw_e:
        duw = int(num(duw_e)) - int(num(duw_b))
        dur = (int(num(g.smart("end", "data_units_read")))
               - int(num(g.smart("boot", "data_units_read"))))
        p("host bytes written         %s (%d data units x 512,000 B)" % (human(duw * 512000), duw))
        p("host bytes read            %s" % human(dur * 512000))
    p("percentage used            %s %%" % g.smart("end", "percent_used"))
    p("available spare            %s %%" % g.smart("end", "avail_spare"))
    p("media errors               %s" % g.smart("end", "media_errors"))
    # the model log's bytes (hex, from the guest's od), decoded by h3100-vlog
    vb = [h for w in g.records("@@VLOGHEX") for h in w[1:]]
    vf = {}
    bin_path = os.path.join(o.workdir, "last-vlog.bin")
    if len(vb) >= 256 and os.access(o.vlog_tool, os.X_OK):
        with open(bin_path, "wb") as f:
            f.write(bytes(int(h, 16) for h in vb))
        vf = vlog_fields(o.vlog_tool, path=bin_path)
    if vf.get("version"):
        p("NAND bytes written         %s (model log D0h; host bytes %s; since the drive "
          "started)" % (human(vf["nand_write_bytes"]), human(vf["host_write_bytes"])))
        p("WAF                        %s (NAND / host bytes; last %s s: %s)" % (
            milli(vf["waf_milli"]), vf["recent_window_s"], milli(vf["recent_waf_milli"])))
        p("reclaim                    %s runs, %s x 4 KiB moved; %s write-buffer stalls" % (
            vf["gc_victims"], vf["gc_slots_moved"], vf["wbuf_stalls"]))
        txt = os.path.join(o.workdir, "last-vlog.txt")
        with open(txt, "w") as f:
            subprocess.run([o.vlog_tool, bin_path], stdout=f, stderr=subprocess.STDOUT)
        p("(model log decoded by h3100-vlog: %s)" % txt)
    else:
        vendor = next((w[1:] for w in g.records("@@VENDOR")), [])
        p("NAND bytes written, WAF    model log D0h unavailable: %s" % (
            " " + " ".join(vendor) if vendor else ""))
    # the host's view: the device's telemetry file, one row per virtual second
    if has_tel:
        p(telemetry_line(tel))
        if o.plots:
            with open(o.plots) as f:
                p("(plots of the run: %s)" % f.read().replace("\n", " "))
    if o.engine == "mariadb":
        p("(MariaDB status after the run, before shutdown%s: Innodb_data_written %s, "
          "Innodb_os_log_written %s, Innodb_data_fsyncs %s)" % (
              "" if o.instances == 1 else " (instance 1)", human(g.mysql("Innodb_data_written")),
              human(g.mysql("Innodb_os_log_written")), g.mysql("Innodb_data_fsyncs")))
    p("(host: backing file %s%s; guest steps at uptime s: %s; wall %d s)" % (
        o.disk, ", %s allocated" % o.disk_alloc if o.disk_alloc else " (deleted)",
        g.steps(), o.wall))
    p("(guest output: %s)" % o.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
