#!/usr/bin/env python3
"""Run QMP steps as a guest prints lines (scripts/guest-run.sh --qmp-on).

    qmp-steps.py SOCKET GUEST_OUT ACTED LOG LINE JSON [LINE JSON ...]

Connects to QEMU's QMP socket (retrying while QEMU starts), then for each
step waits until GUEST_OUT (the guest script's serial output) has the line
LINE after the previous step's line (no wait when the previous step had
the same LINE), and sends JSON, or with
"wait:EVENT" waits up to 60 s for that QMP event.  Before each command,
ACTED gets the step's LINE (the caller tells a QEMU that exited on
purpose from a crash).  Every reply and event goes to LOG as a JSON line;
the last line on stderr says how the steps went.  Exits when the steps are
done or QEMU is gone.
"""
import json
import select
import socket
import sys
import time


def connect(path):
    for _ in range(600):
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            return s
        except OSError:
            time.sleep(0.05)
    raise SystemExit('no QMP socket at ' + path)


def guest_lines(path):
    try:
        with open(path, 'rb') as f:
            text = f.read().decode('utf-8', 'replace')
    except OSError:
        return []
    return [ln.rstrip('\r') for ln in text.split('\n')]


def main():
    sock, gout, acted, logpath = sys.argv[1:5]
    steps = list(zip(sys.argv[5::2], sys.argv[6::2]))
    s = connect(sock)
    # one file per direction: a text file open for both drops what it has
    # read ahead (an event behind a reply) when it is written to
    fr, fw = s.makefile('r'), s.makefile('w')
    log = open(logpath, 'a', buffering=1)
    events = []

    def read():
        line = fr.readline()
        if not line:
            raise EOFError
        msg = json.loads(line)
        log.write(json.dumps(msg) + '\n')
        if 'event' in msg:
            events.append(msg['event'])
        return msg

    def command(text):
        fw.write(text + '\n')
        fw.flush()
        while True:
            msg = read()
            if 'event' not in msg:
                return msg

    # the greeting, maybe after events: QEMU's monitor sends events before
    # its connection handler greets (tests/device/qtest.c, qt_qmp_connect)
    while 'QMP' not in read():
        pass
    command('{"execute": "qmp_capabilities"}')
    pos = 0
    done = 0
    try:
        prev = None
        for line, cmd in steps:
            # consecutive steps on one line run one after the other
            while line != prev:
                lines = guest_lines(gout)
                if line in lines[pos:]:
                    pos += lines[pos:].index(line) + 1
                    break
                # meanwhile: events, or QEMU's end (EOF)
                if select.select([s], [], [], 0.05)[0]:
                    read()
            prev = line
            if cmd.startswith('wait:'):
                name = cmd[5:]
                s.settimeout(60)
                try:
                    while name not in events:
                        read()
                except socket.timeout:
                    print('no %s event within 60 s' % name, file=sys.stderr)
                    return
                s.settimeout(None)
                events.remove(name)
            else:
                with open(acted, 'w') as a:
                    a.write(line)
                reply = command(cmd)
                if 'error' in reply:
                    print('step at %r: %s' % (line, reply['error']),
                          file=sys.stderr)
            done += 1
    except (EOFError, OSError, ValueError) as e:
        print('QEMU gone after %d of %d steps (%s)' % (done, len(steps),
              type(e).__name__), file=sys.stderr)
        return
    print('%d of %d steps done' % (done, len(steps)), file=sys.stderr)


if __name__ == '__main__':
    main()
