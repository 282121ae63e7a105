#!/usr/bin/env python3
"""Under `set -o pipefail`, no pipeline may end in a reader that stops early.

A reader that exits before its input ends (head, grep -q, grep -m, sed's q,
an awk program that calls exit) makes the writer die of SIGPIPE.  pipefail
reports that as the pipeline's status, so `x=$(writer | head -n1)` stops a
`set -e` script without a word, and `writer | grep -q X` is false although
X was found -- whenever the writer still had output after the match: a
race.  sql-bench.sh stopped that way after about one run in ten.  Readers
on a pipe read it all (`awk '!d && ... { print; d = 1 }'`), or the writer
goes into a process substitution (`grep -q X < <(writer)`).

Usage: test_pipe_readers.py PROJECT_DIR   (TAP output)
"""
import pathlib
import re
import sys

EARLY = [
    (re.compile(r"(?<![|])\|\s*head\b"), "head"),
    (re.compile(r"(?<![|])\|\s*grep\s+(-\S*\s+)*-[A-Za-z]*[qlm]"), "grep -q/-l/-m"),
    (re.compile(r"(?<![|])\|\s*sed\b[^|]*[;{'\s]q\b"), "sed q"),
]
AWK = re.compile(r"(?<![|])\|\s*awk\b(.*)")
END_BLOCK = re.compile(r"END\s*\{[^}]*\}")
PIPEFAIL = re.compile(r"^\s*set\s+-[A-Za-z]*o\s+pipefail", re.M)


def logical_lines(text):
    """(first line number, text) with backslash and pipe continuations joined"""
    start, buf = None, ""
    for n, line in enumerate(text.splitlines(), 1):
        if start is None:
            start = n
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        if re.search(r"(?<![|])\|$", stripped):
            buf += stripped + " "
            continue
        yield start, buf + line
        start, buf = None, ""
    if buf:
        yield start, buf


def early_readers(text):
    """(line number, reader) of every pipeline that ends in an early reader"""
    found = []
    for n, line in logical_lines(text):
        if line.lstrip().startswith("#"):
            continue
        for pattern, what in EARLY:
            if pattern.search(line):
                found.append((n, what))
        m = AWK.search(line)
        if m and re.search(r"\bexit\b", END_BLOCK.sub("", m.group(1))):
            found.append((n, "awk exit"))
    return found


SAMPLES_BAD = [
    "x=$(cmd | head -n1)",
    "cmd | grep -q pat",
    "cmd | grep -E -m1 pat",
    "cmd 2>&1 | grep -qw pngcairo",
    "x=$(cmd | awk '$1 == k { print $2; exit }')",
    "x=$(cmd | sed -n '/a/{p;q}')",
    "cmd |\n    head -n 3",
]
SAMPLES_GOOD = [
    "x=$(cmd | awk '!d && $1 == k { print $2; d = 1 }')",
    "grep -q pat < <(cmd)",
    "cmd | awk '/x/ { f = 1 } END { exit !f }'",
    "a || head -n1 file",
    "x=$(sed -n '/a/{p;q}' file)",
    "find d -name x -print -quit",
]


def main():
    root = pathlib.Path(sys.argv[1])
    print("1..2")
    missed = [s for s in SAMPLES_BAD if not early_readers(s)]
    wrong = [s for s in SAMPLES_GOOD if early_readers(s)]
    ok = not missed and not wrong
    for s in missed:
        print(f"# not flagged: {s!r}")
    for s in wrong:
        print(f"# flagged wrongly: {s!r}")
    print(f"{'ok' if ok else 'not ok'} 1 - the check tells early readers from whole ones")

    files = sorted(set(root.glob("scripts/**/*.sh")) | set(root.glob("tests/**/*.sh"))
                   | {root / ".ci/run"})
    bad = []
    for f in files:
        if not f.is_file():
            continue
        text = f.read_text(errors="replace")
        if not PIPEFAIL.search(text):
            continue
        for n, what in early_readers(text):
            bad.append(f"{f.relative_to(root)}:{n}: pipeline ends in {what}")
    for b in bad:
        print(f"# {b}")
    print(f"{'not ok' if bad else 'ok'} 2 - no pipeline under pipefail ends in an early reader"
          f" ({len(files)} scripts)")
    return 0 if ok and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
