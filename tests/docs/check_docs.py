#!/usr/bin/env python3
"""Check what the README and docs/ say against the code.

The reference pages are README.md, docs/**/*.md and tests/*/README.md.
records/*.md are append-only history: an old entry may name files, options,
tests and functions that have moved since, and carries its date and commit
by rule, so only `outside` reads records/.

Kinds of claim checked (each a TAP line):
  paths      every repository path a doc names in backticks or a link exists
             (a path that leaves the repository is `outside`'s)
  commands   every option a doc's shell block passes to one of our scripts
             or tools is in that program's --help
  tests      every meson test a doc names (`guest-NAME`, `device-NAME`,
             `plugin-...`) is registered
  functions  every `name()` a doc names is defined here or in QEMU
  cmd-table  docs/guide/usage.md's *Commands* table is the drive's command sets
             (hw/tables/nvme-cmds.h, read by the C preprocessor)
  log-table  its *Log pages* table is the drive's pages
             (include/h3100/log-pages.h)
  feat-table its *Features* table is hw/tables/features.h
  log-layouts its C0h table's byte ranges are the fields of
             hw/tables/ocp-log.h; its CAh and CBh tables name the
             items of include/h3100/dapustor-log.h
  props      its *Properties* table names every property of
             `-device dapustor-h3100,help`, and each default it gives in
             one backticked word is that help's default; every
             `-device dapustor-h3100,KEY=...` in a doc sets a property
  state-ver  the newest device state version its *Persistent drive state*
             names is H3100_DS_VERSION
  timeouts   no Check case of a unit or device test may run longer than
             meson lets the whole test run (meson introspect --tests)
  params     calibration.md's rows named by model parameters give the
             values of h3100-sim --profile h3100-0.8t --show-config
  dated      no reference page carries a date (2026-12-04, "on 12-04",
             "6 Dec 2026", "December 2026", "yesterday") or a commit id (a
             7-40 lowercase hex word with a digit and a letter): results of
             runs belong in records/.  A date our sources assign to a name
             (an epoch: NAME=2026-01-01...) is a fact, not a run's.
  outside    no page, records/ included, names a path that leaves the
             repository: a link target or a backticked path (read from the
             repository's root) that resolves outside it, or ../shared/;
             system paths (/usr/..., /dev/kvm) are not the repository's
  arch-files docs/design/architecture.md names every *.c and *.h under hw/
             and models/ (its path, or its file name in backticks)

Usage: check_docs.py [--build DIR] [--qemu BIN] [--qemu-src DIR] [ROOT]
       check_docs.py --self-test [options] [ROOT]
--self-test plants one wrong claim of each kind in a copy of ROOT and
fails unless the check then fails on exactly that kind, and plants right
claims that look wrong (hex constants, ranges, system paths) and fails
unless the check still passes.
Checks whose input is missing (no build dir, no QEMU) are skipped (TAP
SKIP), never passed.
"""
import argparse
import functools
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

DOCS = ["README.md", "docs/**/*.md", "tests/*/README.md"]
RECORDS = ["records/**/*.md"]
TOP = ("scripts/", "tests/", "hw/", "models/", "include/", "tools/",
       "docs/", "plugin/", ".ci/", "records/")
ARCH_DIRS = ("hw", "models")
ARCH_PAGE = "docs/design/architecture.md"
SRC_DIRS = ("hw", "models", "include", "tools", "tests", "plugin", "scripts")


class Ctx:
    def __init__(self, root, build, qemu, qemu_src):
        self.root = pathlib.Path(root)
        self.build = pathlib.Path(build) if build else None
        self.qemu = qemu
        self.qemu_src = pathlib.Path(qemu_src) if qemu_src else None
        self._src = None

    def docs(self):
        """the reference pages"""
        for pat in DOCS:
            yield from sorted(self.root.glob(pat))

    def records(self):
        for pat in RECORDS:
            yield from sorted(self.root.glob(pat))

    def inside(self, path):
        """whether PATH (absolute, or relative to the working directory)
        stays in the repository once its .. are taken"""
        top = os.path.normpath(os.path.abspath(self.root))
        path = os.path.normpath(os.path.abspath(path))
        return path == top or path.startswith(top + os.sep)

    def rel(self, p):
        return str(p.relative_to(self.root))

    def sources(self):
        """the text of every C, header, shell and Python file of ours"""
        if self._src is None:
            self._src = []
            for d in SRC_DIRS:
                for p in sorted((self.root / d).rglob("*")):
                    if p.suffix in (".c", ".h", ".sh", ".py", ".in") \
                            and p.is_file():
                        self._src.append(p.read_text(errors="replace"))
        return self._src


class Skip(Exception):
    pass


def code_spans(text):
    """(line number, backticked text) outside fenced blocks; a span may
    go over a line break"""
    lines, prose = text.split("\n"), []
    fence = False
    for line in lines:
        if line.lstrip().startswith("```"):
            fence = not fence
            prose.append("")
        else:
            prose.append("" if fence else line)
    body = "\n".join(prose)
    for m in re.finditer(r"`([^`]+)`", body):
        if m.group(1).count("\n") <= 1:
            yield body.count("\n", 0, m.start()) + 1, \
                " ".join(m.group(1).split())


def shell_lines(text):
    """(line number, command) of ```sh blocks, continuations joined"""
    fence, lang, acc, first = False, "", "", 0
    for n, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if s.startswith("```"):
            fence, lang = (not fence), s[3:].strip()
            continue
        if not fence or lang not in ("sh", "bash", "shell"):
            continue
        if not acc:
            first = n
        acc += " " + line.split(" #")[0].rstrip().rstrip("\\")
        if not line.rstrip().endswith("\\"):
            yield first, acc.strip()
            acc = ""


def table(text, heading):
    """rows (line number, cells) of the first table after HEADING"""
    lines = text.split("\n")
    try:
        i = next(k for k, l in enumerate(lines)
                 if re.match(r"#+\s+" + re.escape(heading) + r"\s*$", l))
    except StopIteration:
        return []
    rows, started = [], False
    for k in range(i + 1, len(lines)):
        l = lines[k]
        if l.startswith("|"):
            started = True
            cells = [c.strip() for c in l.strip().strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                rows.append((k + 1, cells))
        elif started or l.startswith("#"):
            break
    return rows[1:]                      # without the header row


# ---- paths --------------------------------------------------------------

PATH_RE = re.compile(r"^(\.?[\w./+-]+)")


def path_claims(ctx, p, text):
    for n, span in code_spans(text):
        tok = span.split()[0] if span.split() else ""
        if tok.startswith("build/tools/"):
            yield n, tok, ctx.root / "tools" / (tok.split("/")[2] + ".c")
            continue
        if not tok.startswith(TOP) or any(c in tok for c in "*<>{}$[|"):
            continue
        m = PATH_RE.match(tok)
        path = m.group(1).rstrip(".,:;")
        if re.search(r"/[A-Z]+(\.|/|$)", path):       # a placeholder: NAME
            continue
        yield n, path, ctx.root / path
    for m in re.finditer(r"\]\(([^)#\s]+)", text):
        target = m.group(1)
        if "://" in target:
            continue
        n = text.count("\n", 0, m.start()) + 1
        yield n, target, p.parent / target


def check_paths(ctx):
    bad = []
    for p in ctx.docs():
        text = p.read_text()
        for n, shown, path in path_claims(ctx, p, text):
            if not ctx.inside(path):
                continue                 # outside's
            # QEMU's own files (tests/qtest/fuzz/...) are named too
            if not os.path.exists(path) and not (
                    ctx.qemu_src and (ctx.qemu_src / shown).exists()):
                bad.append(f"{ctx.rel(p)}:{n}: names {shown}, which does "
                           "not exist")
    return bad


# ---- commands -----------------------------------------------------------

def program_of(ctx, word):
    if word.startswith("build/tools/"):
        if not ctx.build:
            raise Skip("no build directory")
        return ctx.build / "tools" / word.split("/")[2]
    if word.startswith(("scripts/", "tests/")) and word.endswith(
            (".sh", ".py")):
        return ctx.root / word
    return None


def help_text(prog, cache):
    if prog not in cache:
        try:
            r = subprocess.run([str(prog), "--help"], capture_output=True,
                               text=True, timeout=60,
                               stdin=subprocess.DEVNULL)
            cache[prog] = r.stdout + r.stderr
        except (OSError, subprocess.TimeoutExpired) as e:
            cache[prog] = f"<cannot run: {e}>"
    return cache[prog]


# scripts that hand the options they do not know to another
PASSES_ON = {"scripts/bench/sql-compare.sh": ["scripts/bench/sql-bench.sh"],
             "scripts/main.sh": ["scripts/bench/sql-bench.sh",
                                 "scripts/bench/sql-compare.sh",
                                 "build/tools/h3100-sim"]}


def passes_on(ctx, prog):
    progs = []
    if ctx.root in prog.parents:
        for w in PASSES_ON.get(ctx.rel(prog), []):
            try:
                progs.append(program_of(ctx, w))
            except Skip:
                pass
    return progs


def check_commands(ctx):
    bad, cache, skipped = [], {}, []
    for p in ctx.docs():
        for n, cmd in shell_lines(p.read_text()):
            words = cmd.replace("(", " ").replace(";", " ; ").split()
            prog = None
            for w in words:
                if "$" in w:
                    continue
                if w in (";", "&&", "||", "|"):
                    prog = None
                    continue
                try:
                    found = program_of(ctx, w)
                except Skip as e:
                    skipped.append(str(e))
                    prog = None
                    continue
                if found is not None:
                    prog = found
                    if not prog.exists():
                        bad.append(f"{ctx.rel(p)}:{n}: runs {w}, which does "
                                   "not exist")
                        prog = None
                    continue
                if prog is None or not w.startswith("--") or \
                        w in ("--", "--help"):
                    continue
                opt = w.split("=")[0]
                helps = [help_text(q, cache)
                         for q in [prog] + passes_on(ctx, prog)]
                if not any(re.search(re.escape(opt) + r"(?![\w-])", h)
                           for h in helps):
                    shown = ctx.rel(prog) if ctx.root in prog.parents \
                        else prog.name
                    bad.append(f"{ctx.rel(p)}:{n}: {opt} is not an option "
                               f"of {shown} (--help)")
    if skipped and not cache:
        raise Skip(skipped[0])
    return bad


# ---- tests --------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def introspect(build, what):
    """(exit status, output) of meson introspect --WHAT BUILD, run once: the
    self-test's copies share one build"""
    r = subprocess.run(["meson", "introspect", "--" + what, str(build)],
                       capture_output=True, text=True)
    return r.returncode, r.stdout


def meson_tests(ctx):
    """meson's tests of the build directory (introspect: no rebuild)"""
    if not ctx.build or not (ctx.build / "meson-info").is_dir():
        raise Skip("no configured build directory")
    status, out = introspect(ctx.build, "tests")
    if status:
        raise Skip("meson introspect --tests failed")
    return json.loads(out)


def registered_tests(ctx):
    """the names of meson's tests and of their suites (`plugin-extra`)"""
    tests = meson_tests(ctx)
    return ({t["name"] for t in tests} |
            {s.split(":")[-1] for t in tests for s in t.get("suite", [])})


def disabled_prefixes(ctx):
    """test names a build without the device or the plugin leaves out"""
    _, out = introspect(ctx.build, "buildoptions")
    opts = {o["name"]: o["value"] for o in json.loads(out or "[]")}
    off = ()
    if opts.get("plugin") == "disabled" or opts.get("device") == "disabled":
        off += ("plugin-",)
    if opts.get("device") == "disabled":
        off += ("device-", "guest-")
    return off


def check_tests(ctx):
    names = registered_tests(ctx)
    off = disabled_prefixes(ctx)
    bad = []
    pat = re.compile(r"^(guest|device|plugin)-[a-z0-9-]+$")
    for p in ctx.docs():
        for n, span in code_spans(p.read_text()):
            if pat.match(span) and span not in names and \
                    not span.startswith(off):
                bad.append(f"{ctx.rel(p)}:{n}: names test {span}, which "
                           "meson does not register")
    return bad


# ---- functions ----------------------------------------------------------

@functools.lru_cache(maxsize=None)
def qemu_defines(qemu_src, name):
    """whether QEMU's tree defines NAME(), grepped once"""
    r = subprocess.run(["grep", "-rqE", r"^[a-z].*\b" + name + r"\(",
                        "--include=*.c", "--include=*.h", str(qemu_src)],
                       capture_output=True)
    return r.returncode == 0


def check_functions(ctx):
    bad, seen = [], {}
    for p in ctx.docs():
        for n, span in code_spans(p.read_text()):
            m = re.fullmatch(r"([a-z_][a-z0-9_]*)\(\)", span)
            if not m:
                continue
            name = m.group(1)
            if name not in seen:
                defn = re.compile(r"(^|[\s*])" + name +
                                  r"\s*\([^;]*$|#define\s+" + name +
                                  r"\b|^" + name + r"\s*\(\)", re.M)
                seen[name] = any(name in t and defn.search(t)
                                 for t in ctx.sources())
                if not seen[name] and ctx.qemu_src:
                    seen[name] = qemu_defines(ctx.qemu_src, name)
            if not seen[name]:
                bad.append(f"{ctx.rel(p)}:{n}: names {name}(), defined "
                           "nowhere")
    return bad


# ---- tables -------------------------------------------------------------

def hexes(cell):
    return [int(h, 16) for h in re.findall(r"\b([0-9A-F]{2})h\b", cell)]


def set_diff(what, doc, code, where):
    bad = []
    for k in sorted(doc - code):
        bad.append(f"{where}: {what} {k} is in the doc, not in the code")
    for k in sorted(code - doc):
        bad.append(f"{where}: {what} {k} is in the code, not in the doc")
    return bad


# the device's tables, next to it; the other layouts are the model's
HW_TABLES = ("nvme-cmds.h", "features.h", "ocp-log.h")


def table_path(header):
    return (f"hw/tables/{header}" if header in HW_TABLES
            else f"include/h3100/{header}")


def x_rows(ctx, header, macros):
    """[(macro, (arguments))] of HEADER's X-lists (at table_path()) in
    their order, by the C preprocessor; None when it cannot read them"""
    src = f'#include "{ctx.root / table_path(header)}"\n'
    for k, m in enumerate(macros):
        src += f"#define D{k}(...) ITEM{k} (__VA_ARGS__)\n{m}(D{k})\n"
    r = subprocess.run(["cpp", "-P", "-I", str(ctx.root / "include"), "-"],
                       input=src, capture_output=True, text=True)
    if r.returncode:
        return None
    return [(macros[int(k)], tuple(a.strip() for a in args.split(",")))
            for k, args in re.findall(r"ITEM(\d+) \(([^()]*)\)", r.stdout)]


def x_list(ctx, header, macros):
    """{(macro, first argument as a number)} of HEADER's X-lists"""
    rows = x_rows(ctx, header, macros)
    return None if rows is None else {(m, int(a[0], 0)) for m, a in rows}


def nvme_cmds(ctx):
    got = x_list(ctx, "nvme-cmds.h",
                 ["H3100_ADMIN_COMMANDS", "H3100_IO_COMMANDS"])
    return None if got is None else {
        ("admin" if m == "H3100_ADMIN_COMMANDS" else "NVM", v)
        for m, v in got}


def check_cmd_table(ctx):
    usage = ctx.root / "docs/guide/usage.md"
    code = nvme_cmds(ctx)
    if code is None:
        return ["hw/tables/nvme-cmds.h: the C preprocessor cannot read "
                "it"]
    doc = {f"{cells[0]} {op:02X}h"
           for n, cells in table(usage.read_text(), "Commands")
           for op in hexes(cells[1])}
    return set_diff("command", doc, {f"{s} {o:02X}h" for s, o in code},
                    "docs/guide/usage.md *Commands* vs hw/tables/nvme-cmds.h")


def check_id_table(ctx, header, macro, heading, what):
    """docs/guide/usage.md's table under HEADING lists (as NNh in its first
    column) exactly the first arguments of HEADER's MACRO (table_path())"""
    got = x_list(ctx, header, [macro])
    if got is None:
        return [f"{table_path(header)}: the C preprocessor cannot read it"]
    doc = set()
    for n, cells in table((ctx.root / "docs/guide/usage.md").read_text(), heading):
        doc.update(hexes(cells[0]))
    return set_diff(what, {f"{v:02X}h" for v in doc},
                    {f"{v:02X}h" for _, v in got},
                    f"docs/guide/usage.md *{heading}* vs {table_path(header)}")


def check_log_table(ctx):
    return check_id_table(ctx, "log-pages.h", "H3100_LOG_PAGES", "Log pages",
                          "log page")


def check_feat_table(ctx):
    return check_id_table(ctx, "features.h", "H3100_FEATURES", "Features",
                          "feature")


# ---- log layouts ----------------------------------------------------------

def byte_ranges(cell):
    """{"HI:LO" or "N"} of a bytes cell: "37:32 / 39:38", "75:72, 79:76"."""
    return set(re.findall(r"\b\d+(?::\d+)?\b", cell))


def ocp_fields(ctx):
    """{"HI:LO"} of the named (not rsvd) fields of H3100_OCP_SMART_FIELDS"""
    rows = x_rows(ctx, "ocp-log.h", ["H3100_OCP_SMART_FIELDS"])
    if rows is None:
        return None
    got, off = set(), 0
    for _, (name, width) in rows:
        w = int(width, 0)
        if not name.startswith("rsvd"):
            got.add(str(off) if w == 1 else f"{off + w - 1}:{off}")
        off += w
    return got


def item_names(cells):
    return set(re.findall(r"`?([a-z][a-z0-9_]*)`?", cells[0]))


def check_log_layouts(ctx):
    """docs/guide/usage.md's C0h table has the byte ranges of the fields in
    hw/tables/ocp-log.h; its CAh and CBh tables name the items of
    include/h3100/dapustor-log.h"""
    usage = (ctx.root / "docs/guide/usage.md").read_text()
    bad = []
    code = ocp_fields(ctx)
    if code is None:
        return ["hw/tables/ocp-log.h: the C preprocessor cannot read it"]
    doc = set()
    for n, cells in table(usage, "C0h: OCP SMART / Health Information "
                          "Extended"):
        doc |= byte_ranges(cells[0])
    bad += set_diff("C0h bytes", doc, code,
                    "docs/guide/usage.md *C0h* vs hw/tables/ocp-log.h")
    for lid, heading, macro in (
            ("CAh", "CAh: DapuStor additional SMART", "H3100_DAPU_SMART_ITEMS"),
            ("CBh", "CBh: DapuStor extended additional SMART",
             "H3100_DAPU_EXT_ITEMS")):
        rows = x_rows(ctx, "dapustor-log.h", [macro])
        if rows is None:
            return bad + ["include/h3100/dapustor-log.h: the C preprocessor "
                          "cannot read it"]
        doc = set()
        for n, cells in table(usage, heading):
            doc |= item_names(cells)
        bad += set_diff(f"{lid} item", doc, {a[0] for _, a in rows},
                        f"docs/guide/usage.md *{lid}* vs include/h3100/"
                        f"dapustor-log.h")
    return bad


def device_help(ctx):
    if not ctx.qemu or not os.access(ctx.qemu, os.X_OK):
        raise Skip("no QEMU binary with the device")
    r = subprocess.run([ctx.qemu, "-nodefaults", "-machine", "none",
                        "-device", "dapustor-h3100,help"],
                       capture_output=True, text=True, timeout=60)
    props = {}
    for line in r.stdout.split("\n"):
        m = re.match(r"\s+([\w-]+)=<[^>]*>.*?(?:\(default: (.*)\))?\s*$",
                     line)
        if m:
            props[m.group(1)] = (m.group(2) or "").strip('"')
    if not props:
        return None
    return props


def check_props(ctx):
    props = device_help(ctx)
    if props is None:
        return ["-device dapustor-h3100,help printed no properties"]
    usage = ctx.root / "docs/guide/usage.md"
    rows = table(usage.read_text(), "Properties")
    doc = {}
    for n, cells in rows:
        for name in re.findall(r"`([\w-]+)`", cells[0]):
            doc[name] = (n, cells[1])
    # QEMU's own properties of every PCI device are not the drive's
    generic = {"addr", "romfile", "romsize", "rombar", "multifunction",
               "x-pcie-lnksta-dllla", "x-pcie-extcap-init",
               "failover_pair_id", "acpi-index", "x-pcie-err-unc-mask",
               "x-pcie-ari-nextfn-1", "x-max-bounce-buffer-size",
               "sriov-pf", "busnr", "x-pcie-ext-tag"}
    where = "docs/guide/usage.md *Properties* vs -device dapustor-h3100,help"
    bad = [f"{where}: property {k} is in the doc, not in the code"
           for k in sorted(set(doc) - set(props))]
    # the read-only and action properties have their own paragraphs
    named = {span for _, span in code_spans(usage.read_text())}
    bad += [f"{where}: property {k} is in the code, not in the doc"
            for k in sorted(set(props) - generic - set(doc) - named)]
    # and every property a doc's -device dapustor-h3100,... line sets
    named_any = set(props) | {"id", "bus", "addr", "help", "driver"}
    for p in ctx.docs():
        text = p.read_text()
        for m in re.finditer(r"dapustor-h3100,([^\s`\"']+)", text):
            opts = m.group(1).split(",,")[0]    # ",," escapes a value's comma
            for part in opts.split(","):
                key = part.split("=")[0]
                if key and key not in ("...",) and \
                        not re.search(r"[<>$]", key) and key not in named_any:
                    n = text.count("\n", 0, m.start()) + 1
                    bad.append(f"{ctx.rel(p)}:{n}: -device dapustor-h3100 "
                               f"has no property {key}")
    for name, (n, default) in doc.items():
        m = re.fullmatch(r"`([^`\s]+)`", default)
        if name in props and m and props[name] and \
                m.group(1) != props[name]:
            bad.append(f"docs/guide/usage.md:{n}: {name} defaults to "
                       f"{m.group(1)}, the device's help says "
                       f"{props[name]}")
    return bad


def check_state_ver(ctx):
    m = re.search(r"#define\s+H3100_DS_VERSION\s+(\d+)",
                  (ctx.root / "hw/h3100-state.c").read_text())
    code = int(m.group(1))
    text = (ctx.root / "docs/guide/usage.md").read_text()
    a = text.index("## Persistent drive state")
    b = text.index("\n## ", a + 1)
    said = [int(v) for v in re.findall(r"\bversions? (\d+)", text[a:b])]
    said += [int(v) for v in re.findall(r"\bversions? \d+-(\d+)", text[a:b])]
    if not said or max(said) != code:
        return [f"docs/guide/usage.md *Persistent drive state*: newest version "
                f"named {max(said) if said else 'none'}, H3100_DS_VERSION "
                f"is {code}"]
    return []


UNIT_NS = {"ns": 1, "us": 1000, "ms": 1000 * 1000, "s": 1000 ** 3}


def model_config(ctx, profile):
    if not ctx.build:
        raise Skip("no build directory")
    sim = ctx.build / "tools" / "h3100-sim"
    if not os.access(sim, os.X_OK):
        raise Skip("no h3100-sim built")
    r = subprocess.run([str(sim), "--profile", profile, "--show-config"],
                       capture_output=True, text=True, timeout=60)
    return dict(re.findall(r"^(\w+) = (\S+)$", r.stdout, re.M))


def check_params(ctx):
    """calibration.md's parameter rows whose first cell is parameter
    names (`a` or `a + b`): the value cell's first numbers are those of
    h3100-sim --profile h3100-0.8t --show-config (within 2%: the doc
    rounds), converted to the key's unit (_ns keys)"""
    cfg = model_config(ctx, "h3100-0.8t")
    doc = ctx.root / "docs/design/calibration.md"
    text = doc.read_text()
    bad = []
    for heading in re.findall(r"^#+ (.+)$", text, re.M):
        for n, cells in table(text, heading):
            if len(cells) < 2 or cells[0] == "parameter":
                continue
            keys = [k.strip() for k in cells[0].split(" + ")]
            if not all(k in cfg for k in keys):
                continue
            value = re.sub(r"(?<=\d),(?=\d{3})", "", cells[1])
            nums = re.findall(r"(?<![\w.-])(\d+(?:\.\d+)?)\s*(ns|us|ms|s)?\b",
                              value)
            if len(nums) < len(keys):
                continue
            for k, (num, unit) in zip(keys, nums):
                said = float(num)
                if k.endswith("_ns"):
                    said *= UNIT_NS.get(unit or "ns", 1)
                have = float(cfg[k])
                if abs(said - have) > 0.02 * max(abs(have), 1):
                    bad.append(f"docs/design/calibration.md:{n}: {k} is {cells[1]}"
                               f", the model's h3100-0.8t has {cfg[k]}")
    return bad


def check_timeouts(ctx):
    """a Check case's own timeout must fire before meson's for its test"""
    bad = []
    for t in meson_tests(ctx):
        exe = pathlib.Path(t["cmd"][0]).name
        m = re.fullmatch(r"test-(device-)?([a-z0-9_]+)", exe)
        if not m:
            continue
        src = ctx.root / "tests" / ("device" if m.group(1) else "unit") / \
            f"test_{m.group(2)}.c"
        if not src.exists():
            continue
        inner = [int(v) for v in re.findall(r"tcase_set_timeout\(\w+, (\d+)\)",
                                            src.read_text())]
        env = t.get("env") or {}
        if "CK_DEFAULT_TIMEOUT" in env:
            inner.append(int(env["CK_DEFAULT_TIMEOUT"]))
        if inner and max(inner) >= t["timeout"]:
            bad.append(f"{ctx.rel(src)}: a case may run {max(inner)} s, "
                       f"meson stops {t['name']} at {t['timeout']} s")
    return bad


# ---- dated: results of runs belong in records/ -----------------------------

MONTH = (r"(?:January|February|March|April|May|June|July|August|September|"
         r"October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|"
         r"Nov|Dec)\.?")
DAY = r"(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?"
MMDD = r"(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
# 2026-12-04 (a time may follow: 2026-12-04T10:00), 2026/12/04
ISO = (r"(?<!\d)(?:19|20)\d\d(?:-(?:0[1-9]|1[0-2])-|/(?:0[1-9]|1[0-2])/)"
       r"(?:0[1-9]|[12]\d|3[01])(?!\d)")
DATES = [re.compile(r) for r in (
    ISO,
    # MM-DD with a leading zero (12-04, 01-15): ranges have none (10-20,
    # 12-14); else only before a time of day (12-15 14:30) or after "dated"
    r"(?<![\w.:/-])(?:0[1-9]-(?:0[1-9]|[12]\d|3[01])|1[0-2]-0[1-9])"
    r"(?![\w:%-]|\.\d)",
    r"(?<![\w.:/-])" + MMDD + r"(?=,?\s+\d{1,2}:\d\d\b)",
    r"(?<=\bdated\s)" + MMDD + r"(?![\w:%-]|\.\d)",
    # 6 Dec 2026, 6 December, Dec 6, December 6, 2026, December 2026
    r"\b" + DAY + r"\s+" + MONTH + r"(?:,?\s+(?:19|20)\d\d)?(?!\w)",
    r"\b" + MONTH + r"\s+(?:" + DAY + r"(?:,?\s+(?:19|20)\d\d)?|"
    r"(?:19|20)\d\d)\b",
    r"(?i)\b(?:yesterday|tomorrow|last (?:night|week|month)|"
    r"this (?:morning|afternoon|evening|week))\b",
)]
# a commit id: a whole word of 7-40 lowercase hex digits, a digit and a
# letter among them; not 0x... or 1e0fh (the x and h join the word), not a
# piece of a name (slow-unit-928b58d8, a UUID's groups), of a number
# (3.87755633e-10) or of a path (corpus/<sha1>) unless a link's /commit/, not
# a file name (<sha1>.bin); 16 and 32 digits are EUI-64 and NGUID/UUID
# values, not commits
COMMIT = re.compile(r"(?=[0-9a-f]{7})"
                    r"(?:(?<=/commit/)|(?<=/commits/)|(?<![\w./-]))"
                    r"(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])"
                    r"(?!(?:[0-9a-f]{16}|[0-9a-f]{32})(?![0-9a-f]))"
                    r"[0-9a-f]{7,40}(?![\w-])(?!\.\w)")


def code_dates(ctx):
    """the ISO dates our sources assign to a name (NAME=2026-01-01...): a
    fixed epoch the page documents"""
    assigned = re.compile(r"\b[A-Za-z_]\w*\s*=\s*[\"']?$")
    return {m.group(0) for t in ctx.sources() for m in DATES[0].finditer(t)
            if assigned.search(t, max(0, m.start() - 80), m.start())}


def dated_claims(text, allowed):
    """(line number, date or commit id) of TEXT, each once a line; of
    overlapping dates the longest"""
    dates = sorted((m.start(), -m.end(), m.group(0))
                   for rx in DATES for m in rx.finditer(text))
    got, end = {}, -1
    for start, neg_end, date in dates:
        if start >= end:
            end = -neg_end
            if date not in allowed:
                got[text.count("\n", 0, start) + 1, "date " + date] = None
    for m in COMMIT.finditer(text):
        got[text.count("\n", 0, m.start()) + 1,
            "commit id " + m.group(0)] = None
    return sorted(got)


def check_dated(ctx):
    bad, allowed = [], code_dates(ctx)
    for p in ctx.docs():
        for n, what in dated_claims(p.read_text(), allowed):
            bad.append(f"{ctx.rel(p)}:{n}: a {what} belongs in records/")
    return bad


# ---- outside: no path leaves the repository --------------------------------

def link_targets(text):
    """(line number, target) of TEXT's links: [a](T), ![a](T), [a]: T"""
    for m in re.finditer(r"\]\(<?([^)>\s]+)|^\s*\[[^\]]+\]:\s*<?([^>\s]+)",
                         text, re.M):
        target = (m.group(1) or m.group(2)).split("#")[0]
        if target and "://" not in target and \
                not target.startswith(("mailto:", "/")):
            yield text.count("\n", 0, m.start()) + 1, target


def span_paths(root, text):
    """(line number, word, path) of backticked words with a .. component,
    read from ROOT or from where a `cd DIR && ...` before them went (after
    a cd to a system path, none is ours)"""
    for n, span in code_spans(text):
        words = re.split(r"[\s=,;:()'\"]+", span)
        base = root
        for prev, w in zip([""] + words, words):
            if base and "/" in w and not w.startswith("/") and \
                    ".." in w.split("/"):
                yield n, w, base / w
            if base and prev == "cd" and not w.startswith(("-", "$")):
                base = None if w.startswith(("/", "~")) else base / w


def outside_claims(ctx, p, text):
    """(line number, path) of TEXT's paths that leave the repository"""
    for n, target in link_targets(text):
        if not ctx.inside(p.parent / target):
            yield n, target
    for n, w, path in span_paths(ctx.root, text):
        if not ctx.inside(path):
            yield n, w
    for m in re.finditer(r"(?<![\w.])(?:\.\./)+shared\b\S*", text):
        yield text.count("\n", 0, m.start()) + 1, m.group(0).rstrip(".,;:`)")
    # the outside folder named as if it were ours
    for n, span in code_spans(text):
        if span.startswith("shared/") and not (ctx.root / "shared").exists():
            yield n, span.split()[0]


def check_outside(ctx):
    bad = []
    for p in list(ctx.docs()) + list(ctx.records()):
        seen = set()
        for n, path in outside_claims(ctx, p, p.read_text()):
            if (n, path) not in seen:
                seen.add((n, path))
                bad.append(f"{ctx.rel(p)}:{n}: names {path}, outside the "
                           "repository")
    return bad


# ---- arch-files: the architecture page names every source file -------------

def arch_sources(ctx):
    """the *.c and *.h under hw/ and models/, subfolders included"""
    for d in ARCH_DIRS:
        for p in sorted((ctx.root / d).rglob("*")):
            if p.suffix in (".c", ".h") and p.is_file():
                yield p


def check_arch_files(ctx):
    page = ctx.root / ARCH_PAGE
    text = page.read_text()
    words = {w.rstrip(".,;:") for _, span in code_spans(text)
             for w in span.split()}
    linked = {os.path.normpath(page.parent / t) for _, t in link_targets(text)}
    bad = []
    for p in arch_sources(ctx):
        rel = ctx.rel(p)
        said = re.search(r"(?<![\w./-])" + re.escape(rel) + r"(?![\w-])",
                         text)
        if not (said or p.name in words or rel in words or
                os.path.normpath(p) in linked):
            bad.append(f"{ARCH_PAGE}: does not name {rel}")
    return bad


CHECKS = [
    ("paths", check_paths),
    ("commands", check_commands),
    ("tests", check_tests),
    ("functions", check_functions),
    ("cmd-table", check_cmd_table),
    ("log-table", check_log_table),
    ("feat-table", check_feat_table),
    ("log-layouts", check_log_layouts),
    ("props", check_props),
    ("state-ver", check_state_ver),
    ("timeouts", check_timeouts),
    ("params", check_params),
    ("dated", check_dated),
    ("outside", check_outside),
    ("arch-files", check_arch_files),
]


def run(ctx, out=sys.stdout):
    """TAP lines; returns the kinds that failed"""
    failed = []
    print(f"1..{len(CHECKS)}", file=out)
    for i, (kind, fn) in enumerate(CHECKS, 1):
        try:
            bad = fn(ctx)
        except Skip as e:
            print(f"ok {i} - {kind} # SKIP {e}", file=out)
            continue
        for b in bad:
            print(f"# {b}", file=out)
        print(f"{'not ok' if bad else 'ok'} {i} - {kind}", file=out)
        if bad:
            failed.append(kind)
    return failed


# ---- self test: one planted wrong claim per kind --------------------------

def plant(root, path, old, new):
    """replace OLD by NEW in ROOT/PATH, or with OLD None add the file PATH
    holding NEW; returns what undoes it"""
    p = root / path
    if old is None:
        if p.exists():
            raise SystemExit(f"self-test: {path} exists already")
        made = [d for d in reversed(p.relative_to(root).parents)
                if not (root / d).exists()]
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(new)

        def undo():
            p.unlink()
            for d in reversed(made):
                (root / d).rmdir()
        return undo
    text = p.read_text()
    if old not in text:
        raise SystemExit(f"self-test: {path} no longer has {old!r}")
    p.write_text(text.replace(old, new, 1))
    return lambda: p.write_text(text)


PLANTS = [
    ("paths", "docs/guide/usage.md", "## Commands\n",
     "## Commands\n\nSee `scripts/no-such-script.sh`.\n"),
    ("commands", "docs/dev/testing.md", "scripts/guest/guest-image.sh ",
     "scripts/guest/guest-image.sh --no-such-option "),
    ("tests", "docs/dev/testing.md", "## Quick start\n",
     "## Quick start\n\nRun `guest-no-such-test`.\n"),
    ("functions", "docs/guide/usage.md", "## Commands\n",
     "## Commands\n\nSee `h3100_no_such_function()`.\n"),
    ("cmd-table", "docs/guide/usage.md", "| admin | 84h | Sanitize |",
     "| admin | 87h | No such command | planted |\n"
     "| admin | 84h | Sanitize |"),
    ("log-table", "docs/guide/usage.md", "| 05h | Commands Supported and Effects",
     "| 09h | Endurance Group | planted |\n| 05h | Commands Supported and "
     "Effects"),
    ("feat-table", "docs/guide/usage.md", "| 0Eh | Timestamp |",
     "| 0Ch | Autonomous Power State Transition | planted |\n"
     "| 0Eh | Timestamp |"),
    ("log-layouts", "docs/guide/usage.md", "| 120 | % free blocks |",
     "| 121 | % free blocks |"),
    ("log-layouts", "docs/guide/usage.md", "| `timed_workload_timer` |",
     "| `timed_workload_minutes` |"),
    ("props", "docs/guide/usage.md", "| `max-ioqpairs` | `128` |",
     "| `max-ioqpairs` | `64` |"),
    ("props", "docs/guide/telemetry.md", "dapustor-h3100,drive=d0,",
     "dapustor-h3100,drive=d0,no-such-property=1,"),
    ("state-ver", "docs/guide/usage.md", "since version 7",
     "since version 6"),
    ("timeouts", "tests/device/test_hostile.c", "tcase_set_timeout(tc, 540)",
     "tcase_set_timeout(tc, 900)"),
    ("params", "docs/design/calibration.md", "| cores | 4 |", "| cores | 6 |"),
    ("dated", "docs/guide/usage.md", "## Commands\n",
     "## Commands\n\nMeasured on 2026-12-04 at 10:00.\n"),
    ("dated", "docs/guide/usage.md", "## Commands\n",
     "## Commands\n\nRe-measured on 12-04.\n"),
    ("dated", "docs/dev/testing.md", "## Quick start\n",
     "## Quick start\n\nAs of 6 Dec 2026 the suite takes 26 minutes.\n"),
    ("dated", "docs/dev/testing.md", "## Quick start\n",
     "## Quick start\n\nThe guest kernel of December 2026.\n"),
    ("dated", "docs/dev/testing.md", "## Quick start\n",
     "## Quick start\n\nFixed in 5ece408.\n"),
    ("outside", "docs/guide/usage.md", "## Commands\n",
     "## Commands\n\nFigures: [the datasheet](../../../shared/reference/"
     "h3100.md).\n"),
    ("outside", "docs/guide/usage.md", "## Commands\n",
     "## Commands\n\nAs QEMU's `../qemu/hw/nvme/ctrl.c` does.\n"),
    ("outside", "docs/dev/testing.md", "## Quick start\n",
     "## Quick start\n\nThe review: ../shared/reports/review.md.\n"),
    # records/ are read by outside alone: the entry's date and commit, a
    # moved script, option, test, function and property fail nothing else
    ("outside", "records/planted.md", None,
     "# Planted\n\n## 2026-12-04 · 5ece408 · a planted run\n\n"
     "```sh\nscripts/guest/guest-image.sh --no-such-option\n"
     "scripts/old-name.sh\n```\n\n"
     "`scripts/old-name.sh`, `guest-no-such-test`, "
     "`h3100_no_such_function()`, `-device dapustor-h3100,drive=d0,"
     "no-such-property=1`; figures from "
     "`../shared/reference/h3100.md`.\n"),
    ("arch-files", "hw/h3100-planted.c", None, "/* planted */\n"),
    ("arch-files", "hw/planted/h3100-planted.h", None, "/* planted */\n"),
    ("arch-files", "models/planted.h", None, "/* planted */\n"),
    # right claims that look like wrong ones: no kind may fail
    (None, "docs/guide/usage.md", "## Commands\n",
     "## Commands\n\nRegisters 0x1234abcd and 1e0fh, a CDF of "
     "3.87755633e-10, the UUID 123e4567-e89b-12d3-a456-426614174000, EUI-64 "
     "00e04c0000000001, `slow-unit-928b58d8...`, `deadbeef`, 10-20% "
     "faster, 12-14 directives, runs of 14:06-14:11, 10.11.19-MariaDB-0+"
     "deb12u1, firmware H3D10060, `/usr/bin/qemu-system-x86_64`, "
     "`/dev/kvm`, `.../dapustor-h3100-model`, `cd build && ../scripts/"
     "test.sh`, [the README](../../README.md), PostgreSQL's "
     "`shared_buffers`.\n"),
]


def self_test(ctx):
    with tempfile.TemporaryDirectory(prefix="h3100-docs-") as tmp:
        copy = pathlib.Path(tmp) / "root"
        top = pathlib.Path(ctx.root).resolve()

        def build_trees(d, names):
            if pathlib.Path(d).resolve() != top:
                return []
            return [n for n in names if n == ".git" or n.startswith("build")]
        shutil.copytree(ctx.root, copy, symlinks=True, ignore=build_trees)
        base = Ctx(copy, ctx.build, ctx.qemu, ctx.qemu_src)
        print("1..%d" % (len(PLANTS) + 1))
        with open(os.devnull, "w") as null:
            clean = run(base, null)
        print(f"{'not ok' if clean else 'ok'} 1 - the unplanted copy passes"
              + (f" (fails {clean})" if clean else ""))
        ok = not clean
        for i, (kind, path, old, new) in enumerate(PLANTS, 2):
            undo = plant(copy, path, old, new)
            base = Ctx(copy, ctx.build, ctx.qemu, ctx.qemu_src)
            with open(os.devnull, "w") as null:
                failed = run(base, null)
            undo()
            good = failed == ([kind] if kind else [])
            ok &= good
            what = f"a wrong {kind} claim fails {kind} only" if kind else \
                "right claims that look wrong fail nothing"
            print(f"{'ok' if good else 'not ok'} {i} - {what} (failed: "
                  f"{', '.join(failed) or 'none'})")
        return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", nargs="?",
                    default=pathlib.Path(__file__).resolve().parents[2])
    ap.add_argument("--build")
    ap.add_argument("--qemu")
    ap.add_argument("--qemu-src")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    ctx = Ctx(a.root, a.build, a.qemu, a.qemu_src)
    if a.self_test:
        return 0 if self_test(ctx) else 1
    return 1 if run(ctx) else 0


if __name__ == "__main__":
    sys.exit(main())
