#!/usr/bin/env python3
"""Run QMP steps as a guest prints lines (scripts/guest/guest-run.sh --qmp-on).

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

from qmp import Qmp, guest_lines


def main():
    sock, gout, acted, logpath = sys.argv[1:5]
    steps = list(zip(sys.argv[5::2], sys.argv[6::2]))
    log = open(logpath, 'a', buffering=1)
    events = []

    def seen(msg):
        log.write(json.dumps(msg) + '\n')
        if 'event' in msg:
            events.append(msg['event'])

    q = Qmp(sock, wait=30, on_msg=seen)
    s, read = q.s, q.read
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
                reply = q.send(cmd)
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
