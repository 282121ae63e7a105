#!/usr/bin/env python3
"""The figures of scripts/bench/bench-model.sh.

  bench_model.py run SIM --profile P --side S --run I >> RUNS
  bench_model.py table RUNS --base REV --profile P
  bench_model.py precondition SIM PROFILE... [--spec SPEC] [--seed N]

run: one `SIM --bench --profile P`, its figures as one line of RUNS:
SIDE RUN TIMED_M FASTFORWARD_M BYTES_PER_PAGE PEAK_BYTES_PER_PAGE WAF
(a figure an older build does not print is -).
table: every run, the median of each side and this tree's ratio to REV's.
precondition: how long SIM takes to precondition each profile's drive to
steady state (SPEC, default rand:2, as --bench and the datasheet do), on
one core: wall and CPU seconds, the most memory it held, and the page
writes per second that makes.
"""

import argparse
import re
import resource
import statistics
import subprocess
import sys
import time

FIELDS = {
    'timed_4k_commands_per_host_sec': 'timed',
    'ftl_fastforward_page_writes_per_sec': 'ff',
    'memory_per_written_page': 'bpage',
    'memory_peak_per_written_page': 'peak',
    'timed_run_waf': 'waf',
}
COLUMNS = ('timed', 'ff', 'bpage', 'peak', 'waf')


def parse_bench(text):
    """The figures of one `h3100-sim --bench` output, by FIELDS' names."""
    got = {}
    for line in text.splitlines():
        key, _, value = line.partition(':')
        m = re.match(r'\s*([0-9.]+)', value)
        if key in FIELDS and m:
            got[FIELDS[key]] = float(m.group(1))
    return got


def cmd_run(args):
    out = subprocess.run([args.sim, '--bench', '--profile', args.profile],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, check=True).stdout
    got = parse_bench(out)
    if 'timed' not in got or 'ff' not in got:
        sys.exit(f'bench_model.py: {args.sim} --bench printed no figures')
    print(args.side, args.run,
          ' '.join(f'{got[c]:.3f}' if c in got else '-' for c in COLUMNS))


def read_runs(path):
    runs = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 2 + len(COLUMNS):
                continue
            row = {'side': parts[0], 'run': int(parts[1])}
            for c, v in zip(COLUMNS, parts[2:]):
                row[c] = None if v == '-' else float(v)
            runs.append(row)
    return runs


def median(runs, side, column):
    values = [r[column] for r in runs if r['side'] == side and r[column] is not None]
    return statistics.median(values) if values else None


def fmt(v, spec):
    """@v as @spec gives it, or '-' as wide."""
    if v is not None:
        return format(v, spec)
    return format('-', '>' + spec.split('.')[0])


def cmd_table(args):
    runs = read_runs(args.runs)
    print(f'h3100-sim --bench --profile {args.profile}, '
          f'{sum(r["side"] == "new" for r in runs)} runs each, alternating\n')
    print(f'{"side":<5} {"run":>4} {"timed M/s":>10} {"ff M/s":>8} '
          f'{"B/page":>7} {"peak":>6} {"WAF":>6}')
    for r in runs:
        print(f'{r["side"]:<5} {r["run"]:>4} {fmt(r["timed"], "10.3f")} '
              f'{fmt(r["ff"], "8.3f")} {fmt(r["bpage"], "7.2f")} '
              f'{fmt(r["peak"], "6.2f")} {fmt(r["waf"], "6.3f")}')
    print()
    for column, what in (('timed', 'timed 4 KiB commands per host second'),
                         ('ff', 'fast-forward page writes per host second')):
        old, new = median(runs, 'old', column), median(runs, 'new', column)
        ratio = f'{new / old:.2f}x' if old and new is not None else '-'
        print(f'median {what}: {args.base} {fmt(old, ".3f")} M, '
              f'this tree {fmt(new, ".3f")} M: {ratio}')
    for column, what in (('bpage', 'at the end'), ('peak', 'at the peak')):
        new = median(runs, 'new', column)
        if new is not None:
            print(f'map memory per written page {what}: {new:.2f} B '
                  f'(a full 6.4 TB drive: {new * 6.4e12 / 4096 / 2**30:.1f} GiB)')


def cmd_precondition(args):
    print(f'\nprecondition {args.spec} to steady state, one core:')
    print(f'{"profile":<12} {"wall s":>8} {"cpu s":>8} {"max GiB":>8}')
    for profile in args.profiles:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        subprocess.run([args.sim, '--profile', profile, '--precondition',
                        args.spec, '--seed', str(args.seed), '--runtime',
                        '0.001'], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        # ru_maxrss is the largest child's so far, in KiB
        print(f'{profile:<12} {wall:8.1f} {cpu:8.1f} '
              f'{after.ru_maxrss / 2**20:8.2f}', flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('run')
    p.add_argument('sim')
    p.add_argument('--profile', required=True)
    p.add_argument('--side', required=True, choices=('old', 'new'))
    p.add_argument('--run', type=int, required=True)
    p = sub.add_parser('table')
    p.add_argument('runs')
    p.add_argument('--base', required=True)
    p.add_argument('--profile', required=True)
    p = sub.add_parser('precondition')
    p.add_argument('sim')
    p.add_argument('profiles', nargs='+')
    p.add_argument('--spec', default='rand:2')
    p.add_argument('--seed', type=int, default=1)
    args = ap.parse_args()
    {'run': cmd_run, 'table': cmd_table,
     'precondition': cmd_precondition}[args.cmd](args)


if __name__ == '__main__':
    main()
