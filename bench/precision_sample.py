#!/usr/bin/env python3
"""Reproducible stratified sample of gpuopt-lint findings on the TEST half (a stored sweep, default s5).

Population: every finding (ruleId != compile-error, all severities) of every record whose
half is "test" under results/s5 AND whose own file is in the test half (half_of(project, file)
== "test": findings in tune-half headers are dropped), de-duplicated by (project, file, line, rule) keeping the first
in sorted record order; sorted by (project, file, line, rule); grouped by rule; per rule
random.Random(f"2611-{rule}").sample(group, min(N, len(group))), N = -n (15).
Messages come from the tool's full JSON output beside each record (X.json for X.rec.json),
since the records hold only [rule, severity, file, line]. Writes --out (not committed: it holds the messages, which quote code).
Usage: bench/precision_sample.py --label s5 -n 15 --out /tmp/sample.tsv; judged verdicts: bench/precision-test-s5.tsv.
A later, independent sample: --seed S --exclude bench/precision-test-s5.tsv (places judged before are not drawn).
"""
import glob, hashlib, json, os, random, sys
from collections import defaultdict

import argparse
ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--label", default="s5", help="the sweep under $GPUOPT_CORPUS/results/")
ap.add_argument("-n", type=int, default=15, help="findings per rule (all when fewer)")
ap.add_argument("--out", default="sample.tsv", help="the sample to judge (messages included: keep it out of the repository)")
ap.add_argument("--seed", default="2611", help="seed prefix (per rule: SEED-RULE; default %(default)s, the s5 sample's)")
ap.add_argument("--exclude", action="append", default=[],
                help="a judged TSV (columns project, file, line, rule): its places are not drawn again (repeatable)")
args = ap.parse_args()
CORPUS = os.environ.get("GPUOPT_CORPUS", "/work/corpus")
S5 = os.path.join(CORPUS, "results", args.label)

def half_of(project, path):
    return "tune" if hashlib.sha256(f"{project}/{path}".encode()).digest()[0] % 2 == 0 else "test"

def load_messages(rec_path, cwd, root):
    """The tool's full JSON output sits beside each record (X.json for X.rec.json)."""
    out = {}
    full = rec_path[: -len(".rec.json")] + ".json"
    if not os.path.exists(full):
        return out
    for fobj in json.load(open(full)).get("files", []):
        for f in fobj.get("findings", []):
            loc = f.get("location", {})
            rel = os.path.relpath(os.path.join(cwd, loc.get("file", "")), root)  # tool paths are relative to cwd
            out.setdefault((f.get("ruleId"), rel, loc.get("line")), f.get("message", ""))
    return out

recs = sorted(glob.glob(f"{S5}/**/*.rec.json", recursive=True))
seen, pop = set(), []
# Places an earlier sample judged (and whose causes were then worked on): not drawn again, so the new
# sample measures places nobody has looked at.
for path in args.exclude:
    with open(path) as f:
        head = None
        for line in f:
            if line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            if head is None:
                head = cols
                continue
            r = dict(zip(head, cols))
            seen.add((r["project"], r["file"], int(r["line"]), r["rule"]))
for rp in recs:
    d = json.load(open(rp))
    if d.get("half") != "test":
        continue
    msgs = load_messages(rp, d["cwd"], os.path.join(CORPUS, d["project"]))
    for rule, sev, file, line in d.get("findings") or []:
        if rule == "compile-error":
            continue
        if half_of(d["project"], file) != "test":
            continue
        key = (d["project"], file, line, rule)
        if key in seen:
            continue
        seen.add(key)
        pop.append(dict(project=d["project"], record_path=d["path"], file=file, line=line,
                        rule=rule, severity=sev, message=msgs.get((rule, file, line), "")))
pop.sort(key=lambda x: (x["project"], x["file"], x["line"], x["rule"]))
groups = defaultdict(list)
for x in pop:
    groups[x["rule"]].append(x)

rows = []
for rule in sorted(groups, key=lambda r: (len(groups[r]), r)):
    g = groups[rule]
    print(f"{rule}\tpopulation={len(g)}")
    for x in random.Random(f"{args.seed}-{rule}").sample(g, min(args.n, len(g))):
        msg = x["message"]
        rows.append((x, " ".join(msg.split())[:300]))

with open(args.out, "w") as o:
    o.write("n\tproject\trecord_path\tfile\tline\trule\tseverity\tfile_half\tmessage\n")
    for n, (x, msg) in enumerate(rows, 1):
        o.write(f"{n}\t{x['project']}\t{x['record_path']}\t{x['file']}\t{x['line']}\t{x['rule']}\t"
                f"{x['severity']}\t{half_of(x['project'], x['file'])}\t{msg}\n")
print(f"total population={len(pop)} sampled={len(rows)}", file=sys.stderr)
