#!/usr/bin/env python3
"""Agreement of `gpuopt-lint profile` verdicts with the hardware on programs none of us wrote.

Joins Nsight Compute exports recorded on the GPU machine (scripts/gpu-profile-programs.sh with
CORPUS=...; never committed: they quote third-party source) with the corpus checkouts under
/work/corpus, and tabulates the verdict of every finding that profile judges, by half of the fixed
tuning/test split (bench/corpus.tsv). Writes a TSV of paths, lines, rules, verdicts and figures
(no source text).

  bench/profile_agreement.py --lint build/bin/gpuopt-lint --exports DIR --programs corpus/programs.txt \
      [--corpus /work/corpus] [--tsv bench/profile-agreement.tsv]
"""
import argparse
import collections
import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def halves():
    out = {}
    with open(os.path.join(HERE, "corpus.tsv")) as f:
        for row in csv.reader(f, delimiter="\t"):
            if len(row) >= 4:
                out[(row[0], row[1])] = row[3]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lint", required=True)
    ap.add_argument("--exports", required=True, help="folder with one export folder per program")
    ap.add_argument("--programs", required=True, help="programs.txt: NAME DIR SOURCES... [-- FLAGS]")
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--tsv")
    a = ap.parse_args()
    half = halves()
    rows = []
    for line in open(a.programs):
        parts = line.split()
        if not parts:
            continue
        name, folder, rest = parts[0], parts[1], parts[2:]
        srcs, flags = (rest[: rest.index("--")], rest[rest.index("--") + 1 :]) if "--" in rest else (rest, [])
        exp = os.path.join(a.exports, name)
        if not os.path.exists(os.path.join(exp, "source.csv")):
            continue
        project = folder.split("/")[0]
        # the corpus' own copy; include paths relative to the program's folder
        cwd = os.path.join(a.corpus, folder)
        inc = []
        for fl in flags:
            if fl.startswith("-I") and not os.path.isabs(fl[2:]):
                inc.append("-I" + os.path.normpath(os.path.join(cwd, fl[2:])))
            elif fl.startswith("-D") or fl.startswith("-std"):
                inc.append(fl)
        files = [s for s in srcs if s.endswith(".cu")]
        cmd = [a.lint, "profile", "--no-config", "--no-cache", "--format", "json", "--import", exp] + files + ["--"] + inc
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        try:
            report = json.loads(r.stdout)
        except json.JSONDecodeError:
            print(f"{name}: no JSON (exit {r.returncode}): {r.stderr[-300:]}", file=sys.stderr)
            continue
        for f in report.get("files", []):
            for d in f.get("findings", []):
                m = d.get("measured")
                if not m:
                    continue
                path = os.path.relpath(os.path.join(cwd, d["location"]["file"]), os.path.join(a.corpus, project))
                rows.append({
                    "program": name, "project": project, "path": path,
                    "half": half.get((project, path), "?"), "line": d["location"]["line"], "rule": d["ruleId"],
                    "kernel": m.get("kernel", d.get("kernel", "")), "verdict": m["verdict"],
                    "predicted": m.get("predictedExcess", m.get("predictedWays", m.get("predictedActiveLanes", ""))),
                    "measured": m.get("measuredExcess", m.get("measuredWays", m.get("measuredActiveLanes", ""))),
                    "matched": m.get("instructionsMatched", ""),
                })
    judged = ("bank-conflict", "uncoalesced-access", "divergent-branch")
    table = collections.Counter()
    for r in rows:
        rule = r["rule"] if r["rule"] in judged or r["rule"].startswith("measured-") else "other rules"
        table[(r["half"], rule, r["verdict"])] += 1
    print("| half | rule | verdict | findings |")
    print("|---|---|---|---|")
    for k in sorted(table):
        print(f"| {k[0]} | {k[1]} | {k[2]} | {table[k]} |")
    if a.tsv:
        with open(a.tsv, "w") as f:
            cols = ["half", "project", "path", "line", "rule", "kernel", "verdict", "predicted", "measured", "matched"]
            f.write("\t".join(cols) + "\n")
            for r in sorted(rows, key=lambda r: (r["half"], r["project"], r["path"], r["line"], r["rule"])):
                f.write("\t".join(str(r[c]) for c in cols) + "\n")


if __name__ == "__main__":
    main()
