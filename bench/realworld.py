#!/usr/bin/env python3
"""gpuopt-lint over real code bases, one file at a time, as a new user would run it.

No third-party code is in this repository: point it at checkouts you fetched yourself
(Rodinia's `cuda/` tree, HeCBench's `src/*-cuda/`, NVIDIA's cuda-samples, ...).

  bench/realworld.py coverage [--lint BIN] [--jobs N] [--timeout S] [--json OUT] ROOT...

`coverage` lints every `.cu` file under each ROOT (for HeCBench: `HeCBench/src --match '-cuda/'`), each
file in its own process under a time limit, and prints per code base: files, files whose kernels
were analysed, files with no kernel (host code only), files ending in exit status 2 (nothing
analysable) with their first error, crashes, time-outs, kernels analysed, findings per rule, and
the slowest file and the peak memory of one file. Exit status 1 if any file crashed or timed out.

  bench/realworld.py sample RECORDS.json [-n 100] [--seed 2026] [--out sample.tsv]
  bench/realworld.py precision JUDGED.tsv

  bench/realworld.py recheck JUDGED.tsv [--base DIR] [--lint BIN] [--jobs N]

`recheck` lints again, with the current binary, every `.cu` file of the benchmark folders that hold
the judged findings (paths relative to --base, where the coverage run ran) and says which judged
findings are still reported (a line listed among a grouped finding's repeats counts): precision among those that remain, false alarms gone, and (the
number to watch) true findings lost.

  bench/realworld.py sweep --label L [--half tune|test] [--project P] [--kind unit|header] [--jobs 2]
  bench/realworld.py summary --label L [--half ...]
  bench/realworld.py compare BEFORE AFTER [--half ...] [-v]

`sweep` lints every row of the real-code corpus (bench/corpus.tsv, made by bench/corpus.py: the
pinned projects of bench/corpus-projects.tsv, checked out under $GPUOPT_CORPUS or /work/corpus)
as a user would: `-p BUILD FILE` with a CMake database, `FILE -- FLAGS` with a Makefile's flags,
one process per row under a time limit, `--format json`. Each row's JSON and record are stored in
RESULTS/LABEL/PROJECT/PATH.{json,rec.json} (default RESULTS: /work/corpus/results; outside the
repository, the messages quote fetched code); rows already stored are skipped (--force). `summary`
prints per project and per half: rows, rows with kernels analysed, exit statuses, crashes,
time-outs, kernels, compile-error findings, findings and distinct places, CPU and wall seconds,
peak memory, findings per rule. `compare` sets two labels side by side: findings and places per
rule, places gone and new (-v lists them), exit status changes, kernels, CPU seconds.

`sample` draws a reproducible sample of findings (at least 10 per rule) from a coverage run's
records for judging by hand, with the messages (which quote the judged code: keep that copy out of
the repository; bench/realworld-sample.tsv is the one drawn on 2026-11-22 without them, all 113 rows judged); `precision` prints the precision per rule once the verdicts are filled in.
"""
import argparse
import collections
import concurrent.futures as cf
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LINT = os.path.join(HERE, "..", "build", "bin", "gpuopt-lint")
sys.path.insert(0, HERE)
import corpus_sweep  # noqa: E402  (sweep, summary, compare over bench/corpus.tsv)


def measured(lint, path, timeout):
    """lint_one under /usr/bin/time for the peak resident memory of that one process."""
    if os.path.exists("/usr/bin/time"):
        wrapper = ["/usr/bin/time", "-f", "GPUOPT_MAXRSS_KB=%M"]
    else:
        wrapper = []
    start = time.monotonic()
    proc = subprocess.Popen(wrapper + [lint, "--format", "json", "-j", "1", os.path.abspath(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        timed_out = True
    err = err.decode(errors="replace")
    rss = None
    m = re.search(r"GPUOPT_MAXRSS_KB=(\d+)", err)
    if m:
        rss = int(m.group(1)) / 1024.0
        err = err[:m.start()]
    rc = proc.returncode
    if m is None and "Command terminated by signal" in err:
        rc = -1
    rec = {"file": path, "rc": rc, "seconds": time.monotonic() - start, "timeout": timed_out, "rss_mb": rss,
           "kernels": None, "findings": [], "error": "", "crash": False, "includer": ""}
    if timed_out:
        return rec
    if "Command terminated by signal" in err or rc not in (0, 1, 2):
        rec["crash"] = True
        rec["error"] = err[-300:]
        return rec
    try:
        j = json.loads(out)
    except ValueError:
        rec["crash"] = True
        rec["error"] = "output is not JSON: " + err[-300:]
        return rec
    f = j["files"][0]
    rec["kernels"] = f.get("kernels")
    rec["includer"] = f.get("includer", "")
    rec["findings"] = [(x["ruleId"], x["location"]["file"], x["location"]["line"], x["message"]) for fi in j["files"]
                       for x in fi["findings"]]
    # Repeats of one pattern are grouped into one finding ("and N more like it (lines ...)"): each
    # of those lines is reported too, as the finding's related locations.
    rec["grouped"] = [(x["ruleId"], r["file"], r["line"], "(grouped with line %d) %s" % (x["location"]["line"], x["message"]))
                      for fi in j["files"] for x in fi["findings"] for r in x.get("related", [])]
    if f["errors"]:
        msg = f["errors"][0]["message"].split("\n")
        rec["error"] = msg[1].strip() if len(msg) > 1 else msg[0]
    return rec


def cu_files(root):
    out = []
    for d, _, names in os.walk(root):
        out += [os.path.join(d, n) for n in names if n.endswith(".cu")]
    return sorted(out)


def coverage(args):
    lint = os.path.abspath(args.lint)
    if not os.access(lint, os.X_OK):
        sys.exit(f"realworld: {lint} not found; build it first (make build-tool)")
    roots = [r for r in args.roots if os.path.isdir(r)]
    if not roots:
        print("realworld: no checkout given or found; nothing to measure")
        return 0
    records = []
    t0 = time.monotonic()
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        pat = re.compile(args.match) if args.match else None
        futs = {ex.submit(measured, lint, f, args.timeout): r for r in roots for f in cu_files(r)
                if not pat or pat.search(f)}
        for i, fut in enumerate(cf.as_completed(futs), 1):
            rec = fut.result()
            rec["root"] = futs[fut]
            records.append(rec)
            if sys.stderr.isatty():
                print(f"\r\033[K[{i}/{len(futs)}] {rec['file']}", end="", file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        print("\r\033[K", end="", file=sys.stderr)
    bad = 0
    for root in roots:
        rs = [r for r in records if r["root"] == root]
        n = len(rs)
        analysed = [r for r in rs if (r["kernels"] or 0) > 0]
        nokernel = [r for r in rs if r["kernels"] == 0 and r["rc"] in (0, 1)]
        exit2 = [r for r in rs if r["rc"] == 2 and not r["crash"]]
        crashes = [r for r in rs if r["crash"]]
        timeouts = [r for r in rs if r["timeout"]]
        via = [r for r in rs if r["includer"]]
        rules = collections.Counter(x[0] for r in rs for x in r["findings"])
        print(f"== {root}")
        print(f"files {n}: kernels analysed in {len(analysed)}, no kernel in {len(nokernel)}, "
              f"exit 2 in {len(exit2)} ({100.0 * len(exit2) / max(1, n):.1f}%), crashes {len(crashes)}, "
              f"time-outs {len(timeouts)} (limit {args.timeout} s); analysed through an includer: {len(via)}")
        print(f"kernels analysed {sum(r['kernels'] or 0 for r in rs)}; findings "
              + ", ".join(f"{k} {v}" for k, v in sorted(rules.items())))
        if rs:
            slow = max(rs, key=lambda r: r["seconds"])
            print(f"slowest file {slow['seconds']:.1f} s ({slow['file']}); mean {sum(r['seconds'] for r in rs) / n:.2f} s")
            mem = [r for r in rs if r.get("rss_mb")]
            if mem:
                big = max(mem, key=lambda r: r["rss_mb"])
                print(f"peak memory of one file {big['rss_mb']:.0f} MiB ({big['file']})")
        for r in exit2:
            print(f"  exit 2: {r['file']}: {r['error'][:200]}")
        for r in crashes + timeouts:
            print(f"  {'CRASH' if r['crash'] else 'TIME-OUT'}: {r['file']}: {r['error'][:200]}")
        bad += len(crashes) + len(timeouts)
    print(f"total {len(records)} files in {time.monotonic() - t0:.0f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(records, fh, indent=1)
    return 1 if bad else 0


def sample(args):
    """A reproducible sample of findings across rules, from the records `coverage --json` wrote."""
    import random
    records = json.load(open(args.records))
    by_rule = collections.defaultdict(list)
    seen = set()
    for r in records:
        for rule, path, line, msg in r["findings"]:
            if rule == "compile-error":
                continue
            key = (os.path.normpath(path), line, rule)  # relative to where coverage ran
            if key in seen:
                continue
            seen.add(key)
            by_rule[rule].append((key[0], line, rule, msg))
    rng = random.Random(args.seed)
    total = sum(len(v) for v in by_rule.values())
    out = []
    for rule, items in sorted(by_rule.items()):
        # Every rule gets at least 10 (or all it has), the rest in proportion to its share.
        n = min(len(items), max(10, round(args.n * len(items) / max(1, total))))
        out += rng.sample(items, n)
    w = open(args.out, "w") if args.out else sys.stdout
    w.write("path\tline\trule\tverdict\treason\tmessage\n")
    for path, line, rule, msg in out:
        w.write(f"{path}\t{line}\t{rule}\t\t\t{msg.replace(chr(9), ' ')}\n")
    return 0


def precision(args):
    """Precision per rule from a judged sample (verdict TRUE or FALSE in the fourth column)."""
    counts = collections.defaultdict(lambda: [0, 0])
    for i, row in enumerate(open(args.judgements)):
        if i == 0 or not row.strip():
            continue
        cols = row.rstrip("\n").split("\t")
        verdict = cols[3].strip().upper()
        if verdict not in ("TRUE", "FALSE"):
            continue
        counts[cols[2]][0 if verdict == "TRUE" else 1] += 1
    allt = allf = 0
    for rule, (t, f) in sorted(counts.items()):
        allt, allf = allt + t, allf + f
        print(f"{rule:22} {t:3} true {f:3} false  precision {100.0 * t / max(1, t + f):5.1f}%")
    print(f"{'all':22} {allt:3} true {allf:3} false  precision {100.0 * allt / max(1, allt + allf):5.1f}%")
    return 0


def read_judged(path):
    rows = []
    for i, row in enumerate(open(path)):
        if i == 0 or not row.strip():
            continue
        cols = row.rstrip("\n").split("\t")
        verdict = cols[3].strip().upper() if len(cols) > 3 else ""
        if verdict in ("TRUE", "FALSE"):
            rows.append((os.path.normpath(cols[0]), int(cols[1]), cols[2], verdict))
    return rows


def bench_folder(path):
    """The benchmark a sampled path belongs to: HeCBench/src/NAME-cuda, or Rodinia's cuda/NAME."""
    parts = path.split(os.sep)
    for i, p in enumerate(parts):
        if p.endswith("-cuda") or (i > 0 and parts[i - 1] == "cuda"):
            return os.sep.join(parts[:i + 1])
    return os.path.dirname(path)


def recheck(args):
    lint = os.path.abspath(args.lint)
    judged = read_judged(args.judgements)
    folders = sorted({bench_folder(p) for p, _, _, _ in judged})
    files = [f for d in folders for f in cu_files(os.path.join(args.base, d))]
    found = set()
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for rec in ex.map(lambda f: measured(lint, f, args.timeout), files):
            for rule, path, line, _ in rec["findings"] + rec.get("grouped", []):
                found.add((os.path.normpath(os.path.relpath(os.path.abspath(path), os.path.abspath(args.base))), line, rule))
    stats = collections.defaultdict(lambda: collections.Counter())
    for path, line, rule, verdict in judged:
        kept = (path, line, rule) in found
        stats[rule][("kept " if kept else "gone ") + verdict] += 1
        if args.verbose:
            print(f"{'kept' if kept else 'gone'} {verdict:5} {rule} {path}:{line}")
    tot = collections.Counter()
    print(f"{len(files)} files of {len(folders)} benchmarks linted again with {lint}")
    for rule, c in sorted(stats.items()):
        tot.update(c)
        kt, kf = c["kept TRUE"], c["kept FALSE"]
        print(f"{rule:22} remaining {kt:3} true {kf:3} false  precision {100.0 * kt / max(1, kt + kf):5.1f}%; "
              f"false alarms gone {c['gone FALSE']}, true findings lost {c['gone TRUE']}")
    kt, kf = tot["kept TRUE"], tot["kept FALSE"]
    print(f"{'all':22} remaining {kt:3} true {kf:3} false  precision {100.0 * kt / max(1, kt + kf):5.1f}%; "
          f"false alarms gone {tot['gone FALSE']}, true findings lost {tot['gone TRUE']}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("coverage", help="exit status, kernels and findings per file")
    c.add_argument("roots", nargs="*")
    c.add_argument("--lint", default=DEFAULT_LINT)
    c.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    c.add_argument("--timeout", type=float, default=120.0)
    c.add_argument("--json", help="write every file's record here")
    c.add_argument("--match", help="only files whose path matches this regular expression "
                                   "(HeCBench: --match '/src/[^/]*-cuda/')")
    s = sub.add_parser("sample", help="a reproducible sample of findings to judge by hand")
    s.add_argument("records", help="the --json file of a coverage run")
    s.add_argument("-n", type=int, default=100)
    s.add_argument("--seed", type=int, default=2026)
    s.add_argument("--out")
    q = sub.add_parser("precision", help="precision per rule from judged findings")
    q.add_argument("judgements", help="TSV: path, line, rule, verdict (TRUE/FALSE), reason, message")
    r = sub.add_parser("recheck", help="which judged findings the current binary still reports")
    r.add_argument("judgements", help="the judged TSV (bench/realworld-sample.tsv)")
    r.add_argument("--base", default=".", help="folder the judged paths are relative to")
    r.add_argument("--lint", default=DEFAULT_LINT)
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    r.add_argument("--timeout", type=float, default=120.0)
    r.add_argument("-v", "--verbose", action="store_true", help="one line per judged finding")
    corpus_sweep.add_parsers(sub, DEFAULT_LINT)
    args = p.parse_args()
    if args.cmd in corpus_sweep.COMMANDS:
        sys.exit(corpus_sweep.COMMANDS[args.cmd](args))
    if args.cmd == "coverage":
        sys.exit(coverage(args))
    if args.cmd == "sample":
        sys.exit(sample(args))
    if args.cmd == "precision":
        sys.exit(precision(args))
    if args.cmd == "recheck":
        sys.exit(recheck(args))


if __name__ == "__main__":
    main()
