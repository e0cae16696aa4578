"""`realworld.py sweep | summary | compare`: gpuopt-lint over the whole corpus of bench/corpus.tsv.

Each manifest row (a translation unit, or a header holding kernels) is linted the way a user lints
it (corpus.lint_argv: `-p BUILD FILE` for a CMake database, `FILE -- FLAGS` with the Makefile's
flags, else the project's fixed flags), one process per row under a time limit, with
`--format json -j 1`, under /usr/bin/time (CPU seconds, peak memory). Per row the JSON output and a
record are stored under RESULTS/LABEL/PROJECT/PATH.{json,rec.json} (outside the repository: the
messages quote fetched code); RESULTS/LABEL/summary.md and summary.json hold the tables.
"""
import collections
import concurrent.futures as cf
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time

import corpus

DEFAULT_RESULTS = os.path.join(corpus.DEFAULT_CORPUS, "results")
TIME_RE = re.compile(r"GPUOPT_TIME=(\d+) ([\d.]+) ([\d.]+)")


def run_measured(argv, cwd, timeout):
    """(rc, stdout, stderr, wall, cpu, rss_mb, timed_out) of one process under /usr/bin/time."""
    wrapper = ["/usr/bin/time", "-f", "GPUOPT_TIME=%M %U %S"] if os.path.exists("/usr/bin/time") else []
    start = time.monotonic()
    proc = subprocess.Popen(wrapper + argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)  # the process group this call started, nothing else
        out, err = proc.communicate()
        timed_out = True
    wall = time.monotonic() - start
    err = err.decode(errors="replace")
    rss = cpu = None
    m = TIME_RE.search(err)
    if m:
        rss, cpu = int(m.group(1)) / 1024.0, float(m.group(2)) + float(m.group(3))
        err = err[:m.start()] + err[m.end():]
    rc = proc.returncode
    if "Command terminated by signal" in err:
        rc = -int(re.search(r"signal (\d+)", err).group(1)) if re.search(r"signal (\d+)", err) else -1
    elif m and "Command exited with non-zero status" in err:
        err = re.sub(r"Command exited with non-zero status \d+\n?", "", err)
    return rc, out.decode(errors="replace"), err, wall, cpu, rss, timed_out


def place(cwd, loc_file, root):
    p = os.path.normpath(os.path.join(cwd, loc_file))
    rel = os.path.relpath(p, root)
    return p if rel.startswith("..") else rel


def lint_row(lint, proj, row, entries, timeout, extra, out_dir):
    cwd, argv = corpus.lint_argv(proj, row, entries)
    cmd = [lint, "--format", "json", "-j", "1"] + extra + argv
    rc, out, err, wall, cpu, rss, timed_out = run_measured(cmd, cwd, timeout)
    rec = {k: row[k] for k in ("project", "path", "kind", "half")}
    rec.update({"cwd": cwd, "argv": cmd, "rc": rc, "wall": wall, "cpu": cpu, "rss_mb": rss, "timeout": timed_out,
                "crash": False, "kernels": 0, "files": 0, "findings": [], "stderr": err[-2000:]})
    base = os.path.join(out_dir, row["project"], row["path"])
    os.makedirs(os.path.dirname(base), exist_ok=True)
    with open(base + ".json", "w") as fh:
        fh.write(out)
    if not timed_out:
        try:
            j = json.loads(out)
        except ValueError:
            j = None
        if j is None or rc not in (0, 1, 2):
            rec["crash"] = True
        else:
            for f in j.get("files", []):
                rec["files"] += 1
                rec["kernels"] += f.get("kernels") or 0
                for key in ("accessesReached", "accessesTotal", "partlyAnalysed"):
                    if isinstance(f.get(key), int):
                        rec[key] = rec.get(key, 0) + f[key]
                for x in f.get("findings", []):
                    loc = x.get("location", {})
                    rec["findings"].append([x.get("ruleId"), x.get("severity"),
                                            place(cwd, loc.get("file", ""), proj.root), loc.get("line", 0)])
    with open(base + ".rec.json", "w") as fh:
        json.dump(rec, fh)
    return rec


def select(rows, args):
    return [r for r in rows if (not args.project or r["project"] in args.project)
            and (not args.half or r["half"] == args.half) and (args.kind == "all" or r["kind"] == args.kind)]


def sweep(args):
    lint = os.path.abspath(args.lint)
    if not os.access(lint, os.X_OK):
        sys.exit(f"realworld: {lint} not found; build it first (make build-tool)")
    if args.nice:
        os.nice(args.nice)
    out_dir = os.path.join(args.results, args.label)
    os.makedirs(out_dir, exist_ok=True)
    projects = {p.name: p for p in corpus.load_projects(args.corpus)}
    rows = select(corpus.read_manifest_rows(corpus.MANIFEST), args)
    todo = [r for r in rows if args.force or
            not os.path.exists(os.path.join(out_dir, r["project"], r["path"] + ".rec.json"))]
    extra = ["--cache-dir", os.path.join(out_dir, "_cache")] if not args.no_cache else ["--no-cache"]
    version = subprocess.run([lint, "--version"], capture_output=True, text=True).stdout.strip()
    meta = {"label": args.label, "lint": lint, "version": version, "date": datetime.datetime.utcnow().isoformat() + "Z",
            "machine": f"{platform.node()} {os.cpu_count()} cores", "command": " ".join(sys.argv),
            "jobs": args.jobs, "timeout": args.timeout}
    meta_path = os.path.join(out_dir, "meta.json")
    old = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    runs = old.get("runs", [old] if old.get("elapsed_s") else [])
    entries = {}
    t0 = time.monotonic()
    print(f"sweep {args.label}: {len(todo)} of {len(rows)} rows to lint ({len(rows) - len(todo)} stored)", file=sys.stderr)
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = []
        for r in todo:
            p = projects[r["project"]]
            if p.name not in entries:
                entries[p.name] = p.db_entries()
            futs.append(ex.submit(lint_row, lint, p, r, entries[p.name], args.timeout, extra, out_dir))
        for i, fut in enumerate(cf.as_completed(futs), 1):
            rec = fut.result()
            if args.progress or sys.stderr.isatty():
                print(f"[{i}/{len(futs)}] rc {rec['rc']} {rec['wall']:.1f}s {rec['project']}/{rec['path']}",
                      file=sys.stderr, flush=True)
    elapsed = time.monotonic() - t0
    runs.append(dict(meta, elapsed_s=elapsed, rows=len(todo)))
    with open(meta_path, "w") as fh:  # the latest run's fields, and every run into this label
        json.dump(dict(meta, elapsed_s=sum(r.get("elapsed_s", 0) for r in runs), runs=runs), fh, indent=1)
    return summary(args)


def load_records(out_dir, args):
    wanted = {(r["project"], r["path"]) for r in select(corpus.read_manifest_rows(corpus.MANIFEST), args)}
    recs = []
    for d, _, names in os.walk(out_dir):
        for n in names:
            if n.endswith(".rec.json"):
                r = json.load(open(os.path.join(d, n)))
                if (r["project"], r["path"]) in wanted:
                    recs.append(r)
    return recs


def stats(rs):
    s = collections.OrderedDict()
    s["rows"] = len(rs)
    s["analysed"] = sum(1 for r in rs if r["kernels"] > 0)
    s["exit0"] = sum(1 for r in rs if r["rc"] == 0 and not r["timeout"])
    s["exit1"] = sum(1 for r in rs if r["rc"] == 1 and not r["timeout"])
    s["exit2"] = sum(1 for r in rs if r["rc"] == 2 and not r["timeout"])
    s["crash"] = sum(1 for r in rs if r["crash"])
    s["timeout"] = sum(1 for r in rs if r["timeout"])
    s["kernels"] = sum(r["kernels"] for r in rs)
    s["compile_errors"] = sum(1 for r in rs for f in r["findings"] if f[0] == "compile-error" and f[1] == "error")
    s["findings"] = sum(len(r["findings"]) for r in rs)
    s["places"] = len({(f[2], f[3], f[0]) for r in rs for f in r["findings"]})
    s["cpu_s"] = sum(r["cpu"] or 0 for r in rs)
    s["wall_s"] = sum(r["wall"] for r in rs)
    s["peak_rss_mb"] = max([r["rss_mb"] or 0 for r in rs] or [0])
    s["rules"] = dict(sorted(collections.Counter(f[0] for r in rs for f in r["findings"]).items()))
    for key in ("accessesReached", "accessesTotal", "partlyAnalysed"):
        if any(key in r for r in rs):
            s[key] = sum(r.get(key, 0) for r in rs)
    return s


COLS = [("rows", "rows"), ("analysed", "analysed"), ("exit0", "exit 0"), ("exit1", "exit 1"), ("exit2", "exit 2"),
        ("crash", "crash"), ("timeout", "time-out"), ("kernels", "kernels"), ("compile_errors", "compile-error"),
        ("findings", "findings"), ("places", "places"), ("cpu_s", "CPU s"), ("wall_s", "wall s"),
        ("peak_rss_mb", "peak MiB")]


def table(title, groups):
    lines = [f"### {title}", "", "| " + " | ".join(["group"] + [c[1] for c in COLS]) + " |",
             "|" + "---|" * (len(COLS) + 1)]
    for name, s in groups:
        vals = [f"{s[k]:.0f}" if isinstance(s[k], float) else str(s[k]) for k, _ in COLS]
        lines.append("| " + " | ".join([name] + vals) + " |")
    return lines


def summary(args):
    out_dir = os.path.join(args.results, args.label)
    recs = load_records(out_dir, args)
    meta = json.load(open(os.path.join(out_dir, "meta.json"))) if os.path.exists(os.path.join(out_dir, "meta.json")) else {}
    order = [p.name for p in corpus.load_projects(args.corpus)]
    md = [f"## gpuopt-lint corpus sweep `{args.label}`", "",
          f"binary {meta.get('lint', '?')} ({meta.get('version', '?')}), {meta.get('date', '?')}, "
          f"{meta.get('machine', '?')}, -j {meta.get('jobs', '?')}, limit {meta.get('timeout', '?')} s per row; "
          f"elapsed {meta.get('elapsed_s', 0):.0f} s in {len(meta.get('runs', [])) or 1} run(s); "
          f"last command `{meta.get('command', '')}`", ""]
    js = {}
    for kind in ("unit", "header"):
        groups = []
        for p in order:
            rs = [r for r in recs if r["project"] == p and r["kind"] == kind]
            if rs:
                groups.append((p, stats(rs)))
        for h in ("tune", "test"):
            groups.append((f"all {h}", stats([r for r in recs if r["kind"] == kind and r["half"] == h])))
        groups.append(("all", stats([r for r in recs if r["kind"] == kind])))
        js[kind] = dict(groups)
        md += table("translation units" if kind == "unit" else "headers holding kernels, linted as inputs", groups) + [""]
    rules = sorted({k for kind in js for s in js[kind].values() for k in s["rules"]})
    md += ["### findings per rule (units and headers)", "",
           "| " + " | ".join(["group"] + rules) + " |", "|" + "---|" * (len(rules) + 1)]
    for p in order + ["all tune", "all test", "all"]:
        c = collections.Counter()
        for kind in js:
            c.update(js[kind].get(p, {}).get("rules", {}))
        if c:
            md.append("| " + " | ".join([p] + [str(c.get(k, 0)) for k in rules]) + " |")
    bad = [r for r in recs if r["crash"] or r["timeout"]]
    if bad:
        md += ["", "### crashes and time-outs", ""]
        md += [f"- {'TIME-OUT' if r['timeout'] else 'CRASH rc %s' % r['rc']}: {r['project']}/{r['path']}" for r in bad]
    text = "\n".join(md) + "\n"
    if not args.project and not args.half:
        with open(os.path.join(out_dir, "summary.md"), "w") as fh:
            fh.write(text)
        with open(os.path.join(out_dir, "summary.json"), "w") as fh:
            json.dump(js, fh, indent=1)
    print(text)
    return 1 if bad else 0


def compare(args):
    a = {(r["project"], r["path"]): r for r in load_records(os.path.join(args.results, args.before), args)}
    b = {(r["project"], r["path"]): r for r in load_records(os.path.join(args.results, args.after), args)}
    both = sorted(set(a) & set(b))
    print(f"{args.before} -> {args.after}: {len(both)} rows in both ({len(set(a) - set(b))} only before, "
          f"{len(set(b) - set(a))} only after)")

    def places(recs):
        return collections.Counter((f[0], f"{r['project']}/{f[2]}" if not f[2].startswith("/") else f[2], f[3])
                                   for r in recs for f in r["findings"])
    pa, pb = places(a[k] for k in both), places(b[k] for k in both)
    rules = sorted({k[0] for k in pa} | {k[0] for k in pb})
    print(f"{'rule':24} {'findings':>17} {'places':>15} {'places gone':>12} {'places new':>11}")
    sa, sb = set(pa), set(pb)
    for rule in rules + [None]:
        fa = sum(v for k, v in pa.items() if rule in (None, k[0]))
        fb = sum(v for k, v in pb.items() if rule in (None, k[0]))
        xa = {k for k in sa if rule in (None, k[0])}
        xb = {k for k in sb if rule in (None, k[0])}
        print(f"{rule or 'all':24} {fa:7} -> {fb:7} {len(xa):6} -> {len(xb):6} {len(xa - xb):12} {len(xb - xa):11}")
    rcs = collections.Counter((a[k]["rc"], b[k]["rc"]) for k in both if a[k]["rc"] != b[k]["rc"])
    if rcs:
        print("exit status changes: " + ", ".join(f"{x}->{y}: {n}" for (x, y), n in sorted(rcs.items())))
    ka = sum(a[k]["kernels"] for k in both)
    kb = sum(b[k]["kernels"] for k in both)
    ca = sum(a[k]["cpu"] or 0 for k in both)
    cb = sum(b[k]["cpu"] or 0 for k in both)
    print(f"kernels {ka} -> {kb}; CPU {ca:.0f} s -> {cb:.0f} s")
    if args.verbose:
        for k in sorted(sa - sb):
            print(f"gone {k[0]} {k[1]}:{k[2]}")
        for k in sorted(sb - sa):
            print(f"new  {k[0]} {k[1]}:{k[2]}")
    return 0


def add_parsers(sub, default_lint):
    def common(s):
        s.add_argument("--corpus", default=corpus.DEFAULT_CORPUS, help="folder of the checkouts (default %(default)s)")
        s.add_argument("--results", default=DEFAULT_RESULTS, help="results folder (default %(default)s)")
        s.add_argument("--project", action="append", help="only this project (repeatable)")
        s.add_argument("--half", choices=["tune", "test"], help="only this half of the split")
        s.add_argument("--kind", choices=["unit", "header", "all"], default="all")
    s = sub.add_parser("sweep", help="lint every manifest row of the corpus, store per-file JSON and a summary")
    s.add_argument("--label", required=True, help="results go to RESULTS/LABEL")
    s.add_argument("--lint", default=default_lint)
    s.add_argument("--jobs", type=int, default=2)
    s.add_argument("--timeout", type=float, default=300.0)
    s.add_argument("--nice", type=int, default=10, help="niceness of the sweep (default %(default)s)")
    s.add_argument("--force", action="store_true", help="lint again rows whose record is stored")
    s.add_argument("--no-cache", action="store_true", help="pass --no-cache (default: a cache per label)")
    s.add_argument("--progress", action="store_true", help="one line per row on stderr")
    common(s)
    s = sub.add_parser("summary", help="print (and store) the tables of a sweep")
    s.add_argument("--label", required=True)
    common(s)
    s = sub.add_parser("compare", help="findings before/after per rule and per place between two sweeps")
    s.add_argument("before")
    s.add_argument("after")
    s.add_argument("-v", "--verbose", action="store_true", help="list the places gone and new")
    common(s)


COMMANDS = {"sweep": sweep, "summary": summary, "compare": compare}
