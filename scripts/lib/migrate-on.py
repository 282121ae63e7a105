#!/usr/bin/env python3
"""Migrate a guest as it prints lines (scripts/guest/guest-run.sh --migrate-on).

    migrate-on.py DIR ARGV GUEST_OUT TIMEOUT LOG LINE MODE [LINE MODE ...]

ARGV is a file holding the QEMU command line, NUL-separated, without its
-qmp and -pidfile options; the QEMU running it listens for QMP on
DIR/qmp.sock.  For each step, once GUEST_OUT (the guest script's output)
has LINE after the previous step's, the running QEMU hands the VM to a
new one started from ARGV:

  live   the new QEMU starts with -incoming unix:DIR/mig-N.sock and the
         VM migrates to it while it runs (`migrate`), then the old one
         quits;
  file   the old QEMU saves the VM to DIR/vm-N.state (`migrate file:`)
         and quits, then the new one starts with -incoming file:... (what
         libvirt's save and restore do).

Generation N's QEMU listens for QMP on DIR/qmp-N.sock and writes its pid
to DIR/qemu-N.pid (generation 0 is the first QEMU).  Each step appends
the source's final query-migrate reply to LOG as a JSON line.  When the
steps are done this waits for the last QEMU and writes its exit status to
DIR/last.rc (124: killed after TIMEOUT seconds), then exits; the last line
on stderr says how it went.
"""
import json
import os
import signal
import subprocess
import sys
import time

from qmp import Qmp, guest_lines


def wait_line(gout, line, pos):
    while True:
        lines = guest_lines(gout)
        if line in lines[pos:]:
            return pos + lines[pos:].index(line) + 1
        time.sleep(0.05)


def start(argv, d, gen, incoming, timeout):
    extra = ['-qmp', 'unix:%s/qmp-%d.sock,server=on,wait=off' % (d, gen),
             '-pidfile', '%s/qemu-%d.pid' % (d, gen), '-incoming', incoming]
    err = open('%s/qemu-%d.err' % (d, gen), 'w')
    return subprocess.Popen(['timeout', '-k', '5', str(timeout)] + argv +
                            extra, stdin=subprocess.DEVNULL, stdout=err,
                            stderr=err)


def migrate(q, uri, log):
    q.cmd('migrate-set-parameters', **{'max-bandwidth': 10 ** 10})
    r = q.cmd('migrate', uri=uri)
    if 'error' in r:
        raise SystemExit('migrate: %s' % r['error'])
    while True:
        r = q.cmd('query-migrate')['return']
        if r.get('status') in ('completed', 'failed', 'cancelled'):
            log.write(json.dumps(r) + '\n')
            log.flush()
            if r['status'] != 'completed':
                raise SystemExit('migration %s: %s' %
                                 (r['status'], r.get('error-desc')))
            return
        time.sleep(0.05)


def main():
    d, argv_file, gout, timeout, logpath = sys.argv[1:6]
    steps = list(zip(sys.argv[6::2], sys.argv[7::2]))
    argv = open(argv_file, 'rb').read().decode().split('\0')[:-1]
    log = open(logpath, 'a')
    q = Qmp('%s/qmp.sock' % d)
    proc = None
    pos = 0
    for gen, (line, mode) in enumerate(steps, 1):
        pos = wait_line(gout, line, pos)
        if mode == 'live':
            sock = '%s/mig-%d.sock' % (d, gen)
            new = start(argv, d, gen, 'unix:' + sock, timeout)
            while not os.path.exists(sock):
                if new.poll() is not None:
                    raise SystemExit('QEMU %d exited at start' % gen)
                time.sleep(0.02)
            migrate(q, 'unix:' + sock, log)
            q.cmd('quit')
        elif mode == 'file':
            path = '%s/vm-%d.state' % (d, gen)
            migrate(q, 'file:' + path, log)
            q.cmd('quit')
            time.sleep(0.2)
            new = start(argv, d, gen, 'file:' + path, timeout)
        else:
            raise SystemExit('unknown mode ' + mode)
        q = Qmp('%s/qmp-%d.sock' % (d, gen))
        proc = new
        print('step %d: %s at %r' % (gen, mode, line), file=sys.stderr)
    rc = proc.wait() if proc else 0
    with open('%s/last.rc' % d, 'w') as f:
        f.write('%d\n' % rc)
    print('%d migrations done, the last QEMU exited %d' % (len(steps), rc),
          file=sys.stderr)


if __name__ == '__main__':
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    main()
