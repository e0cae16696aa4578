#!/usr/bin/env python3
"""Issue 28's actionable-share sample: warning/error findings of a stored sweep, drawn by place.

Population: every finding with severity warning or error (compile-error left out) of every record
of $GPUOPT_CORPUS/results/LABEL whose row is in HALF, and whose own file is in that half too
(corpus.half_of: a finding in a header of the other half is not drawn), optionally restricted to
some projects; de-duplicated by place (project, file, line, rule), the first in sorted record order
kept; places sorted by (project, file, line, rule); random.Random(SEED).sample(places, N).
Writes a TSV to judge (messages included: it quotes code, so keep it out of the repository); the
judged copy that is committed holds paths, lines, rules, verdicts and our own words only.

  bench/actionable_sample.py --label s16 --half test -n 40 --seed 2811 --out /tmp/act.tsv
"""
import argparse
import glob
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--label", required=True)
    ap.add_argument("--half", choices=["tune", "test"], default="test")
    ap.add_argument("-n", type=int, default=40)
    ap.add_argument("--seed", default="2811")
    ap.add_argument("--project", action="append", default=[], help="only these projects (repeatable)")
    ap.add_argument("--out", default="-")
    ap.add_argument("--corpus", default=corpus.DEFAULT_CORPUS)
    args = ap.parse_args()
    root = os.path.join(args.corpus, "results", args.label)
    places = {}
    for rec_path in sorted(glob.glob(f"{root}/**/*.rec.json", recursive=True)):
        rec = json.load(open(rec_path))
        if rec.get("half") != args.half or (args.project and rec["project"] not in args.project):
            continue
        proj_root = os.path.join(args.corpus, rec["project"])
        full = rec_path[: -len(".rec.json")] + ".json"
        if not os.path.exists(full):
            continue
        try:
            out = json.load(open(full))
        except ValueError:
            continue
        for fobj in out.get("files", []):
            for f in fobj.get("findings", []):
                if f.get("ruleId") == "compile-error" or f.get("severity") not in ("warning", "error"):
                    continue
                loc = f.get("location", {})
                rel = os.path.relpath(os.path.join(rec["cwd"], loc.get("file", "")), proj_root)
                if rel.startswith("..") or corpus.half_of(rec["project"], rel) != args.half:
                    continue
                key = (rec["project"], rel, loc.get("line"), f["ruleId"])
                places.setdefault(key, (rec["path"], f))
    keys = sorted(places)
    rng = random.Random(args.seed)
    drawn = rng.sample(keys, min(args.n, len(keys)))
    w = sys.stdout if args.out == "-" else open(args.out, "w")
    w.write(f"# {len(keys)} warning/error places in the population (label {args.label}, half {args.half}, "
            f"projects {','.join(args.project) or 'all'}), {len(drawn)} drawn with seed {args.seed}\n")
    w.write("n\tproject\trow\tfile\tline\trule\tseverity\timpact\tverdict\treason\tcause\tmessage\n")
    for i, key in enumerate(drawn, 1):
        row, f = places[key]
        msg = f.get("message", "").replace("\t", " ").replace("\n", " ")
        w.write(f"{i}\t{key[0]}\t{row}\t{key[1]}\t{key[2]}\t{key[3]}\t{f.get('severity')}\t{f.get('impact', '')}\t\t\t\t{msg}\n")
    print(f"{len(keys)} places, {len(drawn)} drawn", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
