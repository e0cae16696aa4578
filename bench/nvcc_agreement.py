#!/usr/bin/env python3
"""nvcc as the oracle for what compiles (issue 27): where gpuopt-lint and nvcc disagree on real code.

  bench/nvcc_agreement.py [--label baseline] [--half tune|test] [--project P] [--kind unit|header]
                          [--jobs 2] [--lint BIN] [--list]

For every row of bench/corpus.tsv, nvcc 13 compiles the file with the row's own flags
(corpus.unit_flags: the database or Makefile entry with response files expanded, architecture
replaced): `nvcc [-std=c++17 unless the flags name one] FLAGS -arch=sm_90 -c FILE -o /dev/null`,
from the entry's folder. A header holding kernels is compiled through a one-line .cu that includes
it, with its includer's flags; as the project uses it through that includer, a header counts as
compiling when it compiles alone or its includer does. A header no manifest unit includes, that
does not compile alone, is compiled through a source file beside it that includes it, with the
flags its folder's Makefile gives that file (`make -n -B`; a .c file compiled with `--x cu`), else
the project's flags and `-x cu`. nvcc results are cached in
RESULTS/_nvcc/cache.json (keyed by folder, command and the file's content; they do not change with
our binary).

gpuopt-lint's side is the sweep stored under RESULTS/LABEL (bench/realworld.py sweep, the same
rows, the same flags); rows the sweep has not stored are linted first when --lint is given.

Counted, per project and kind: nvcc passes / fails; disagreements both ways: compile-error findings
(severity error) where nvcc succeeds ("false errors"), nvcc errors with no compile-error finding
("missed errors"); files whose nvcc failure is a header that is not installed here (third-party:
no file of that name in the project) are set apart, with how many compile-error findings each one
gets and whether one of them names the header. The figures go to RESULTS/LABEL/nvcc_agreement.md.
"""
import argparse
import collections
import concurrent.futures as cf
import fcntl
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus  # noqa: E402
import corpus_sweep  # noqa: E402

MISSING_RES = [re.compile(r"fatal error: ([^:\s]+): No such file or directory"),
               re.compile(r'cannot open source file "([^"]+)"')]
ERROR_RE = re.compile(r"(\berror\b|\bfatal\b)", re.I)


# Files written for a verifier whose compiler force-includes a header of its own that declares the
# annotations: GPUVerify's test suite is compiled by GPUVerify.py with `-include cuda.h` from
# bugle's include-blang (its annotations __requires, __enabled, __assert, __axiom, ... and curand),
# which is not installed; nvcc, given `#include <cuda.h>`, reads the toolkit's. Such a file depends
# on a third-party header that nvcc does not have, like a missing mpi.h, but nvcc says so as an
# undeclared reserved name (or, for `__axiom(...);` at file scope, a declaration without a type).
# gpuopt-lint declares the annotations on purpose (analyzer/cuda_stub/gpuopt_gpuverify.h) so that
# these kernels are analysed: the rows are counted apart ("verifier hdr"), not as disagreements.
VERIFIER_HEADERS = {"gpuverify": "GPUVerify's cuda.h (bugle include-blang, force-included by GPUVerify.py)"}
ANNOTATION_RE = re.compile(r'identifier "(__[A-Za-z_]\w*)" is undefined')


def verifier_header(project, text):
    """The verifier's header a row's nvcc failure comes from, or None."""
    if project not in VERIFIER_HEADERS or not text:
        return None
    if ANNOTATION_RE.search(text):
        return VERIFIER_HEADERS[project]
    m = re.match(r"(.+?)\((\d+)\): error: this declaration has no storage class or type specifier", text)
    if m:
        try:
            line = open(m.group(1), errors="replace").read().splitlines()[int(m.group(2)) - 1]
        except (OSError, IndexError):
            return None
        if re.match(r"\s*__\w+\s*\(", line):  # `__axiom(...);` at file scope
            return VERIFIER_HEADERS[project]
    return None


def error_file(text):
    """The file an nvcc error line names (`F(12): error` or `F:12:3: fatal error`)."""
    m = re.match(r"(.+?)(?:\((\d+)\)|:(\d+):\d+):", text)
    return os.path.normpath(m.group(1)) if m else None


def first_error(text):
    for line in text.splitlines():
        if ERROR_RE.search(line) and not re.search(r"\bwarning\b", line, re.I):
            return line.strip()[:400]
    return text.strip().splitlines()[-1][:400] if text.strip() else ""


def missing_header(text):
    for line in text.splitlines():
        if ERROR_RE.search(line):
            for rx in MISSING_RES:
                m = rx.search(line)
                if m:
                    return m.group(1)
            return None  # the first error is something else
    return None


class Cache:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.data = json.load(open(path)) if os.path.exists(path) else {}

    def get(self, key):
        return self.data.get(key)

    def put(self, key, value):
        """Merge into the file under a lock: several runs (other helpers' too) share one cache."""
        with self.lock, open(self.path + ".lock", "w") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            try:
                disk = json.load(open(self.path)) if os.path.exists(self.path) else {}
            except ValueError:
                disk = {}
            disk.update(self.data)
            disk[key] = value
            self.data = disk
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "w") as fh:
                json.dump(disk, fh)
            os.replace(tmp, self.path)


def file_hash(path):
    try:
        return hashlib.sha256(open(path, "rb").read()).hexdigest()[:16]
    except OSError:
        return "missing"


def run_nvcc(cache, cwd, argv, main_file, timeout):
    key = hashlib.sha256(json.dumps([cwd, argv, file_hash(main_file)]).encode()).hexdigest()
    hit = cache.get(key)
    if hit is not None and hit["rc"] < 0 and not hit.get("timeout"):
        hit = None  # killed from outside (a stopped run): no verdict
    if timeout is None or hit is not None and not (hit.get("timeout") and timeout > hit["seconds"] + 1):
        return hit  # timeout None: the cache only; a cached time-out is tried again with a longer limit
    start = time.monotonic()
    try:
        r = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           errors="replace", timeout=timeout)
        rc, out, timed_out = r.returncode, r.stdout + r.stderr, False
    except subprocess.TimeoutExpired as e:
        rc, out, timed_out = -9, (e.stdout or "") if isinstance(e.stdout, str) else "", True
    res = {"rc": rc, "seconds": round(time.monotonic() - start, 2), "timeout": timed_out,
           "first_error": "" if rc == 0 else first_error(out), "missing": None if rc == 0 else missing_header(out),
           "command": argv, "cwd": cwd}
    cache.put(key, res)
    return res


def nvcc_row(cache, proj, row, entries, tiny_dir, timeout):
    path = os.path.join(proj.root, row["path"])
    if row["kind"] == "unit":
        cwd, flags = corpus.unit_flags(proj, row["path"], entries.get(row["path"]))
        return run_nvcc(cache, cwd, corpus.nvcc_argv(flags, path), path, timeout)
    via = row.get("via", "")
    cwd, flags = corpus.unit_flags(proj, via, entries.get(via)) if via else (os.path.dirname(path), list(proj.fixed_flags))
    tiny = os.path.join(tiny_dir, proj.name, row["path"] + ".include.cu")
    os.makedirs(os.path.dirname(tiny), exist_ok=True)
    with open(tiny, "w") as fh:
        fh.write(f'#include "{path}"\n')
    alone = run_nvcc(cache, cwd, corpus.nvcc_argv(flags, tiny), path, timeout)
    if via or alone is None or alone["rc"] == 0:
        return alone
    # No manifest unit includes it (units are .cu files) and it does not compile alone: a sibling
    # source that includes it, such as a .c file the Makefile compiles with `--x cu`, is how nvcc
    # sees the header in its project.
    includer = sibling_includer(path)
    if not includer:
        return alone
    cwd2, flags2 = cwd, flags + ["-x", "cu"]
    for c, argv in corpus.dry_run(os.path.dirname(includer), proj.build_args.split()):
        if any(os.path.normpath(os.path.join(c, a)) == includer for a in argv[1:]):
            # the folder's Makefile compiles it: its nvcc command's flags (`--x cu` among them)
            cwd2, flags2 = c, corpus.strip_arch(corpus.compile_flags(corpus.expand_response_files(argv, c), includer))
            break
    through = run_nvcc(cache, cwd2, corpus.nvcc_argv(flags2, includer), includer, timeout)
    return through if through is not None and through["rc"] == 0 else alone


def sibling_includer(header):
    """A source file beside `header` (.cu, .c, .cpp, .cc) that includes it by its quoted name."""
    folder, name = os.path.split(header)
    pattern = re.compile(r'^\s*#\s*include\s*"' + re.escape(name) + '"', re.M)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    for n in names:
        if os.path.splitext(n)[1] in (".cu", ".c", ".cpp", ".cc"):
            try:
                if pattern.search(open(os.path.join(folder, n), errors="replace").read()):
                    return os.path.join(folder, n)
            except OSError:
                continue
    return None


def lint_side(rec, json_path):
    """Messages of the compile errors of a stored sweep row: compile-error findings of severity
    error, and the errors of files in which nothing could be analysed (exit 2)."""
    msgs = []
    try:
        j = json.load(open(json_path))
        for f in j.get("files", []):
            if isinstance(f.get("errors"), list):  # nothing analysable (exit 2): the error is the file's
                msgs += [e.get("message", "") for e in f["errors"]]
            for x in f.get("findings", []):
                if x.get("ruleId") == "compile-error" and x.get("severity") == "error":
                    msgs.append(x.get("message", ""))
    except (OSError, ValueError):
        msgs = ["" for f in rec["findings"] if f[0] == "compile-error" and f[1] == "error"]
    return msgs


def first_lint_error(out_dir, r):
    msgs = lint_side({"findings": []}, os.path.join(out_dir, r["project"], r["path"] + ".json"))
    if not msgs:
        return ""
    lines = msgs[0].split("\n")
    # an exit-2 message lists Clang's errors below its first line: the first of them is the cause
    return "error: " + (re.sub(r"^.*?error: ", "", lines[1].strip()) if len(lines) > 1 and "error:" in lines[1] else lines[0])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--label", default="baseline", help="the sweep to compare with (default %(default)s)")
    p.add_argument("--corpus", default=corpus.DEFAULT_CORPUS)
    p.add_argument("--results", default=corpus_sweep.DEFAULT_RESULTS)
    p.add_argument("--project", action="append")
    p.add_argument("--half", choices=["tune", "test"])
    p.add_argument("--kind", choices=["unit", "header", "all"], default="all")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=600.0, help="per nvcc run (default %(default)s s)")
    p.add_argument("--nice", type=int, default=10)
    p.add_argument("--lint", help="lint rows the sweep has not stored with this binary")
    p.add_argument("--nvcc-only", action="store_true", help="fill the nvcc cache, compare nothing")
    p.add_argument("--cached-only", action="store_true",
                   help="run no nvcc: rows without a cached nvcc result are counted as pending")
    p.add_argument("--list", action="store_true", help="list every disagreement (paths, first errors)")
    p.add_argument("--sample", type=int, metavar="N",
                   help="a fixed subset: per project and kind, the N rows first in sha256(project/path) order "
                        "(rows outside it are not counted; for projects whose nvcc results are too slow to compute)")
    args = p.parse_args()
    if args.nice:
        os.nice(args.nice)
    projects = {q.name: q for q in corpus.load_projects(args.corpus)}
    rows = corpus_sweep.select(corpus.read_manifest_rows(corpus.MANIFEST), args)
    if args.sample:
        key = lambda r: hashlib.sha256(f"sample/{r['project']}/{r['path']}".encode()).hexdigest()
        picked = collections.defaultdict(list)
        for r in sorted(rows, key=key):
            if len(picked[(r["project"], r["kind"])]) < args.sample:
                picked[(r["project"], r["kind"])].append(r)
        rows = [r for group in picked.values() for r in group]
    nv_dir = os.path.join(args.results, "_nvcc")
    os.makedirs(nv_dir, exist_ok=True)
    cache = Cache(os.path.join(nv_dir, "cache.json"))
    entries = {name: q.db_entries() for name, q in projects.items() if any(r["project"] == name for r in rows)}
    out_dir = os.path.join(args.results, args.label)
    nv = {}
    # units first (a header's verdict needs its includer's)
    units = {(r["project"], r["path"]) for r in rows if r["kind"] == "unit"}
    vias = [r for r in corpus.read_manifest_rows(corpus.MANIFEST) if r["kind"] == "unit" and (r["project"], r["path"]) not in units
            and any(h["project"] == r["project"] and h.get("via") == r["path"] for h in rows if h["kind"] == "header")]
    for batch in (sorted(rows, key=lambda r: r["kind"] != "unit") + vias,):
        with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            futs = {ex.submit(nvcc_row, cache, projects[r["project"]], r, entries.setdefault(r["project"], projects[r["project"]].db_entries()),
                              os.path.join(nv_dir, "tiny"), None if args.cached_only else args.timeout): r for r in batch}
            for i, fut in enumerate(cf.as_completed(futs), 1):
                r = futs[fut]
                nv[(r["project"], r["path"], r["kind"])] = fut.result()
                if sys.stderr.isatty() or i % 50 == 0:
                    print(f"[nvcc {i}/{len(futs)}] {r['project']}/{r['path']}", file=sys.stderr, flush=True)
    if args.nvcc_only:
        print(f"nvcc results cached for {len(nv)} rows in {cache.path}")
        return 0
    if args.lint:
        lint = os.path.abspath(args.lint)
        missing = [r for r in rows if not os.path.exists(os.path.join(out_dir, r["project"], r["path"] + ".rec.json"))]
        with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            list(ex.map(lambda r: corpus_sweep.lint_row(lint, projects[r["project"]], r, entries[r["project"]], 300.0,
                                                        ["--cache-dir", os.path.join(out_dir, "_cache")], out_dir), missing))
    return report(args, rows, nv, projects, out_dir)


def report(args, rows, nv, projects, out_dir):
    order = list(projects)
    groups = collections.defaultdict(collections.Counter)
    listing = []
    cascade = collections.Counter()
    for r in rows:
        base = os.path.join(out_dir, r["project"], r["path"])
        if not os.path.exists(base + ".rec.json"):
            groups[(r["project"], r["kind"])]["no lint result"] += 1
            continue
        rec = json.load(open(base + ".rec.json"))
        res = nv[(r["project"], r["path"], r["kind"])]
        if res is None or res.get("timeout"):
            groups[(r["project"], r["kind"])]["nvcc pending" if res is None else "nvcc time-out"] += 1
            continue
        ok = res["rc"] == 0
        if r["kind"] == "header" and not ok and r.get("via"):
            via = nv.get((r["project"], r["via"], "unit"))
            ok = bool(via and via["rc"] == 0)
            if via and not ok:
                # The header fails alone (it needs its includer's declarations) and so does its
                # includer: the includer's reason is the header's when it is a missing header (the
                # header is used only through it); an error in the includer's own code says nothing
                # of the header, which nvcc then never judged.
                if via.get("missing"):
                    res = via
                elif error_file(via.get("first_error", "")) == os.path.join(projects[r["project"]].root, r["via"]):
                    groups[(r["project"], r["kind"])]["includer fails in its own code"] += 1
                    listing.append(("includer-fails", r, via, 0, None))
                    continue
        msgs = lint_side(rec, base + ".json")
        g = groups[(r["project"], r["kind"])]
        g["rows"] += 1
        g["nvcc ok" if ok else "nvcc fails"] += 1
        if rec["timeout"] or rec["crash"]:
            g["lint crash/time-out"] += 1
            continue
        verifier = None if ok else verifier_header(r["project"], res.get("first_error", ""))
        if verifier:
            g["verifier header"] += 1
            g["  ...analysed, no compile-error" if not msgs and rec.get("kernels") else "  ...compile-error or no kernel"] += 1
            listing.append(("verifier-header", r, res, len(msgs), rec["rc"]))
            continue
        third = None
        if not ok and res.get("missing"):
            name = os.path.basename(res["missing"])
            in_project = subprocess.run(["git", "-C", projects[r["project"]].root, "ls-files", f"*{name}"],
                                        capture_output=True, text=True).stdout.strip()
            third = None if in_project else res["missing"]
        if third:
            g["missing third-party header"] += 1  # or a header no longer in the project
            named = any(third in m or os.path.basename(third) in m for m in msgs)
            g["  ...one finding naming it" if named and len(msgs) == 1 else
              "  ...naming it among more findings" if named else "  ...not named"] += 1
            cascade[min(len(msgs), 10)] += 1
            listing.append(("third-party", r, res, len(msgs), rec["rc"]))
            continue
        if ok and msgs:
            g["DISAGREE: compile-error, nvcc ok"] += 1
            listing.append(("false-error", r, res, len(msgs), rec["rc"]))
        elif ok and rec["rc"] == 2:
            g["exit 2, nvcc ok"] += 1
            listing.append(("exit2-nvcc-ok", r, res, len(msgs), rec["rc"]))
        elif not ok and not msgs:
            g["DISAGREE: nvcc error, no compile-error"] += 1
            listing.append(("missed-error", r, res, len(msgs), rec["rc"]))
        elif not ok:
            g["both fail"] += 1
        else:
            g["both ok"] += 1
    keys = ["rows", "nvcc ok", "nvcc fails", "both ok", "both fail", "DISAGREE: compile-error, nvcc ok",
            "DISAGREE: nvcc error, no compile-error", "exit 2, nvcc ok", "missing third-party header",
            "  ...one finding naming it", "  ...naming it among more findings", "  ...not named",
            "verifier header", "  ...analysed, no compile-error", "includer fails in its own code",
            "lint crash/time-out", "no lint result", "nvcc pending", "nvcc time-out"]
    short = ["rows", "nvcc ok", "nvcc fails", "both ok", "both fail", "false errors", "missed errors",
             "exit 2 nvcc ok", "3rd-party hdr", "one naming it", "named among more", "not named", "verifier hdr",
             "analysed clean", "includer fails", "lint crash/TO",
             "no lint", "nvcc pending", "nvcc TO"]
    md = [f"## nvcc agreement, sweep `{args.label}`", "",
          "| project | kind | " + " | ".join(short) + " |", "|" + "---|" * (len(short) + 2)]
    tot = {k: collections.Counter() for k in ("unit", "header")}
    for p in order:
        for kind in ("unit", "header"):
            g = groups.get((p, kind))
            if g:
                tot[kind].update(g)
                md.append(f"| {p} | {kind} | " + " | ".join(str(g.get(k, 0)) for k in keys) + " |")
    for kind in ("unit", "header"):
        md.append(f"| **all** | {kind} | " + " | ".join(str(tot[kind].get(k, 0)) for k in keys) + " |")
    md += ["", "compile-error findings per file whose nvcc failure is a missing third-party header: "
           + ", ".join(f"{k if k < 10 else '10+'}: {v}" for k, v in sorted(cascade.items()))]
    missing = collections.Counter(os.path.basename(x[2]["missing"]) for x in listing if x[0] == "third-party")
    md += ["", "missing third-party headers: " + ", ".join(f"{k} {v}" for k, v in missing.most_common())]
    def cause(text):
        m = re.search(r"(?:error|fatal)\s*:?\s*(.*)", text)
        return re.sub(r"\d+", "N", (m.group(1) if m else text).strip())[:120]
    for cls, title in (("missed-error", "nvcc's first error where gpuopt-lint reports no compile error"),
                       ("false-error", "gpuopt-lint's first compile-error finding where nvcc compiles")):
        if cls == "missed-error":
            c = collections.Counter(cause(x[2]["first_error"]) for x in listing if x[0] == cls)
        else:
            c = collections.Counter(cause(first_lint_error(out_dir, x[1])) for x in listing if x[0] == cls)
        if c:
            md += ["", f"{title} (most frequent first):", ""]
            md += [f"- {n} x {k}" for k, n in c.most_common(25)]
    if args.list:
        md += ["", "### disagreements", ""]
        for cls, r, res, n, rc in sorted(listing, key=lambda x: (x[0], x[1]["project"], x[1]["path"])):
            md.append(f"- {cls} {r['project']}/{r['path']} ({r['kind']}, lint exit {rc}, {n} compile-error"
                      f" findings): nvcc: " + ("ok" if res["rc"] == 0 else
                                               f"ok through {r['via']} (alone: {res['first_error'][:160]})"
                                               if cls == "false-error" else res["first_error"][:200]))
    text = "\n".join(md) + "\n"
    if not args.project and not args.half and args.kind == "all" and not args.sample:
        with open(os.path.join(out_dir, "nvcc_agreement.md"), "w") as fh:
            fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    main()
