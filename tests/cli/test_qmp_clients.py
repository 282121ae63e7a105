#!/usr/bin/env python3
"""The scripts' QMP clients take events that come before the greeting.

QEMU's monitor sends events from its start, and only its connection
handler (in the monitor's own thread) switches it to capabilities
negotiation and greets: an event raised as a client connects (a
BLOCK_IO_ERROR stopping the VM) can reach the socket first.  A client
that takes the first line for the greeting is then one reply behind for
the rest of its life.  And a text file open for reading and writing
drops what it has read ahead when it is written to: an event that came
in one piece with a reply was lost when the next command went out.
Each client here meets a fake QEMU that sends an event before the
greeting, an event behind a reply, and a reply of its own to each
command.

Usage: test_qmp_clients.py PROJECT_DIR   (TAP output)
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading

EVENT = {'event': 'BLOCK_IO_ERROR', 'data': {'action': 'stop'},
         'timestamp': {'seconds': 0, 'microseconds': 0}}
STOP = {'event': 'STOP', 'timestamp': {'seconds': 0, 'microseconds': 0}}
GREETING = {'QMP': {'version': {}, 'capabilities': []}}


def fake_qemu(path):
    """Serve one client: an event, the greeting, then one reply per command,
    an error for qmp_capabilities and {"return": {"to": NAME}} otherwise,
    STOP's event behind stop's reply."""
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)

    def serve():
        conn, _ = srv.accept()

        def send(msg):
            conn.sendall((json.dumps(msg) + '\n').encode())

        send(EVENT)
        send(GREETING)
        for line in conn.makefile('r'):
            name = json.loads(line)['execute']
            if name == 'qmp_capabilities':
                send({'error': {'class': 'GenericError', 'desc': 'caps'}})
            elif name == 'stop':
                # the reply and an event in one piece: the client reads
                # the event ahead, then writes its next command
                conn.sendall((json.dumps({'return': {'to': name}}) + '\n' +
                              json.dumps(STOP) + '\n').encode())
            else:
                send({'return': {'to': name}})
        conn.close()
        srv.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return t


def test_qmp_class(project, tmp):
    """scripts/lib/qmp.py, the client of migrate-on.py and qmp-steps.py"""
    path = os.path.join(tmp, 'm.sock')
    t = fake_qemu(path)
    sys.path.insert(0, os.path.join(project, 'scripts/lib'))
    import qmp
    q = qmp.Qmp(path, wait=5)
    reply = q.cmd('query-status')
    q.close()
    t.join(5)
    return reply == {'return': {'to': 'query-status'}}, repr(reply)


def test_qmp_steps(project, tmp):
    path = os.path.join(tmp, 's.sock')
    gout = os.path.join(tmp, 'guest.out')
    with open(gout, 'w') as f:
        f.write('MARK\n')
    t = fake_qemu(path)
    r = subprocess.run(
        [sys.executable, os.path.join(project, 'scripts/lib/qmp-steps.py'),
         path, gout, os.path.join(tmp, 'acted'), os.path.join(tmp, 'log'),
         'MARK', '{"execute": "stop"}', 'MARK', '{"execute": "cont"}',
         'MARK', 'wait:STOP'],
        capture_output=True, text=True, timeout=90)
    t.join(5)
    # one reply behind, a step gets qmp_capabilities' error; with the
    # event read ahead and dropped, wait:STOP times out
    ok = 'step at' not in r.stderr and '3 of 3 steps done' in r.stderr
    return ok, r.stderr.strip().replace('\n', ' | ')


def main():
    project = sys.argv[1]
    tests = [test_qmp_class, test_qmp_steps]
    print('1..%d' % len(tests))
    failed = 0
    for i, test in enumerate(tests, 1):
        with tempfile.TemporaryDirectory() as tmp:
            ok, why = test(project, tmp)
        print('%s %d - %s%s' % ('ok' if ok else 'not ok', i, test.__name__,
                                '' if ok else ': ' + why))
        failed += not ok
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
