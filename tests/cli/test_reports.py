#!/usr/bin/env python3
"""The benchmark reporters on saved inputs: scripts/lib/sql_report.py (the
report of sql-bench.sh), scripts/lib/device_cpu_report.py (the table of
bench-device-cpu.sh), scripts/lib/perf_own_code.py (its own code per
command, from perf profiles and the objects of a build: here three
objects compiled from tests/cli/data/reports/own-code/) and
scripts/lib/migrate_report.py (the table of bench-migrate.sh) and
scripts/lib/bench_model.py (that of bench-model.sh, from stand-ins for
h3100-sim --bench, one too old to print its peak memory) print, line for
line, what the expected files in
tests/cli/data/reports/ hold.  The inputs are made up in the shape of the
real ones (the guest's @@ lines among sysbench's and pgbench's output, a
telemetry file, thread samples, migration traces and fio latency logs);
the expected outputs are what the reports' earlier awk versions printed for
them (for migrate_report.py, what it printed when it was written, checked
by hand).

Usage: test_reports.py PROJECT_DIR H3100_VLOG   (TAP output)
"""
import difflib
import os
import pathlib
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1])
vlog = sys.argv[2]
data = root / "tests" / "cli" / "data" / "reports"
lib = root / "scripts" / "lib"
results = []


def check(name, got, want):
    ok = got == want
    results.append(ok)
    print(("ok" if ok else "not ok") + " - " + name)
    if not ok:
        for line in difflib.unified_diff(want.splitlines(), got.splitlines(), "expected",
                                         "got", lineterm=""):
            print("# " + line)


def sql_case(name, engine, instances, telemetry, extra):
    with tempfile.TemporaryDirectory(prefix="h3100-reports.") as tmp:
        guest = data / ("sql-%s.guest" % name)
        if telemetry:
            (pathlib.Path(tmp) / "telemetry.jsonl").write_bytes(
                (data / "sql-telemetry.jsonl").read_bytes())
        disk = os.path.join(tmp, "disk.qcow2")
        summary = os.path.join(tmp, "summary.txt")
        args = [sys.executable, str(lib / "sql_report.py"), str(guest), "--workdir", tmp,
                "--engine", engine, "--instances", str(instances), "--dev-cap", "0.8T",
                "--state", "fresh", "--workload", "oltp_read_write", "--tables", "8",
                "--table-size", "100000", "--scale", "20", "--buffer-pool", "32",
                "--threads", "1", "--duration", "30", "--seed", "1", "--smp", "2",
                "--mem", "1536", "--disk", disk, "--wall", "321", "--summary", summary,
                "--vlog-tool", vlog] + extra
        got = subprocess.run(args, stdout=subprocess.PIPE, text=True, check=False).stdout
        want = (data / ("sql-%s.expected" % name)).read_text()
        want = (want.replace("@WORKDIR@", tmp).replace("@GUEST@", str(guest))
                .replace("@DISK@", disk))
        check("sql_report.py, %s: the report" % name, got, want)
        check("sql_report.py, %s: the summary" % name, pathlib.Path(summary).read_text(),
              (data / ("sql-%s.summary" % name)).read_text())


sql_case("sysbench", "mariadb", 2, True,
         ["--drive", "h3100", "--timing", "on", "--accel", "tcg", "--ishift", "1"])
sql_case("pgbench", "postgres", 1, False,
         ["--drive", "qemu-nvme", "--timing", "on", "--accel", "kvm", "--ishift", ""])

with tempfile.TemporaryDirectory(prefix="h3100-reports.") as tmp:
    rows = os.path.join(tmp, "rows.txt")
    got = subprocess.run(
        [sys.executable, str(lib / "device_cpu_report.py"), str(data / "device-cpu.samples"),
         str(data / "device-cpu.cmds"), "--rows", rows, "--io", "IO_io0",
         "--main", "qemu-system-x86", "--configs", "nvme,off,on,iothread,vwc,mix,iot1,iot2",
         "--commands", "20000"], stdout=subprocess.PIPE, text=True, check=False).stdout
    check("device_cpu_report.py: the table and the ratios", got,
          (data / "device-cpu.expected").read_text())
    check("device_cpu_report.py: rows.txt", pathlib.Path(rows).read_text() if
          os.path.exists(rows) else "", (data / "device-cpu.rows").read_text())

with tempfile.TemporaryDirectory(prefix="h3100-reports.") as tmp:
    own = data / "own-code"
    # meson's object names say whose an object is
    objs = {"h3100.c": "hw_dapustor-h3100_hw_h3100-complete.c.o",
            "nvme.c": "hw_nvme_ctrl.c.o", "other.c": "sub/util_aio-posix.c.o"}
    for src, obj in objs.items():
        os.makedirs(os.path.dirname(os.path.join(tmp, obj)), exist_ok=True)
        subprocess.run([os.environ.get("CC", "cc"), "-c", str(own / src), "-o",
                        os.path.join(tmp, obj)], check=True)
    got = subprocess.run(
        [sys.executable, str(lib / "perf_own_code.py"), str(own / "rows"), str(own / "prof"),
         "--objects", tmp, "--period", "100000", "--groups", "on:randread-qd32"],
        stdout=subprocess.PIPE, text=True, check=False).stdout
    check("perf_own_code.py: own code per command, a copied inline nobody's, the groups",
          got, (own / "expected").read_text())

with tempfile.TemporaryDirectory(prefix="h3100-reports.") as tmp:
    for name in ("nvme", "h3100-full"):
        for ext in ("trace", "mig", "out"):
            pathlib.Path(tmp, "%s.%s" % (name, ext)).write_bytes(
                (data / ("migrate-%s.%s" % (name, ext))).read_bytes())
    got = subprocess.run(
        [sys.executable, str(lib / "migrate_report.py"), tmp, "nvme:nvme:-",
         "h3100-full:h3100:full"], stdout=subprocess.PIPE, text=True, check=False).stdout
    check("migrate_report.py: the table, the extrapolation and the stall", got,
          (data / "migrate.expected").read_text())
    check("migrate_report.py: the rounds for the plot",
          pathlib.Path(tmp, "h3100-full.rounds").read_text(),
          "1 800000000 100000\n2 600000000 4000\n")

with tempfile.TemporaryDirectory(prefix="h3100-reports.") as tmp:
    # two h3100-sim stand-ins: an older one printing no peak memory
    sims = {"old": ["timed_4k_commands_per_host_sec: %s M/s",
                    "ftl_fastforward_page_writes_per_sec: %s M/s",
                    "timed_run_waf: 2.056", "memory_per_written_page: 9.49 bytes"],
            "new": ["profile: h3100-0.8t", "timed_4k_commands_per_host_sec: %s M/s",
                    "ftl_fastforward_page_writes_per_sec: %s M/s",
                    "timed_run_simulated_iops: 127.7 k", "timed_run_waf: 2.056",
                    "memory_per_written_page: 4.38 bytes",
                    "memory_peak_per_written_page: 4.89 bytes"]}
    figures = {("old", 1): ("1.81", "9.72"), ("new", 1): ("1.99", "7.54"),
               ("old", 2): ("1.89", "10.21"), ("new", 2): ("1.78", "7.24"),
               ("old", 3): ("1.79", "9.83"), ("new", 3): ("1.94", "7.50")}
    runs = ""
    for (side, run), (timed, ff) in figures.items():
        sim = os.path.join(tmp, "sim-%s-%d" % (side, run))
        text = "\n".join(sims[side]).replace("%s", timed, 1).replace("%s", ff, 1)
        pathlib.Path(sim).write_text("#!/bin/sh\ncat <<'EOF'\n%s\nEOF\n" % text)
        os.chmod(sim, 0o755)
        runs += subprocess.run(
            [sys.executable, str(lib / "bench_model.py"), "run", sim, "--profile",
             "h3100-0.8t", "--side", side, "--run", str(run)],
            stdout=subprocess.PIPE, text=True, check=False).stdout
    pathlib.Path(tmp, "runs.txt").write_text(runs)
    got = subprocess.run(
        [sys.executable, str(lib / "bench_model.py"), "table", os.path.join(tmp, "runs.txt"),
         "--base", "e4574b9716f3", "--profile", "h3100-0.8t"],
        stdout=subprocess.PIPE, text=True, check=False).stdout
    check("bench_model.py: each run's figures, the medians and the ratios", got,
          (data / "bench-model.expected").read_text())

print("1..%d" % len(results))
sys.exit(0 if all(results) else 1)
