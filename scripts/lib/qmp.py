"""A QMP client and the guest-output reader for scripts/lib's step runners
(qmp-steps.py, migrate-on.py)."""
import json
import socket
import time


class Qmp:
    """QEMU's QMP socket at PATH, retried for WAIT seconds while QEMU
    starts; ON_MSG, if given, sees every message read."""

    def __init__(self, path, wait=60, on_msg=None):
        self.on_msg = on_msg
        deadline = time.time() + wait
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX)
                self.s.connect(path)
                break
            except OSError:
                if time.time() > deadline:
                    raise SystemExit('no QMP socket at ' + path)
                time.sleep(0.05)
        # one file per direction: a text file open for both drops what it
        # has read ahead (an event behind a reply) when it is written to
        self.r, self.w = self.s.makefile('r'), self.s.makefile('w')
        # the greeting, maybe after events: QEMU's monitor sends events
        # before its connection handler greets (tests/device/qtest.c)
        while 'QMP' not in self.read():
            pass
        self.send('{"execute": "qmp_capabilities"}')

    def read(self):
        line = self.r.readline()
        if not line:
            raise EOFError
        msg = json.loads(line)
        if self.on_msg:
            self.on_msg(msg)
        return msg

    def send(self, text):
        """Send the command TEXT (JSON); its reply, the events before it
        passed over."""
        self.w.write(text + '\n')
        self.w.flush()
        while True:
            msg = self.read()
            if 'event' not in msg:
                return msg

    def cmd(self, name, **args):
        msg = {'execute': name}
        if args:
            msg['arguments'] = args
        return self.send(json.dumps(msg))

    def close(self):
        self.r.close()
        self.w.close()
        self.s.close()


def guest_lines(path):
    """The lines of the guest's output file so far."""
    try:
        with open(path, 'rb') as f:
            text = f.read().decode('utf-8', 'replace')
    except OSError:
        return []
    return [ln.rstrip('\r') for ln in text.split('\n')]
