#!/usr/bin/env python3
"""Issue 28: the static cost estimate against the hardware.

For each program of bench/impact/ (our own kernels), the linter's per-line estimate of global
traffic (rules/cost.h, written by the GPUOPT_COST_DUMP hook) is compared with the per-line global
sectors Nsight Compute measured on the H100 (bench/data/impact/NAME/source.csv, "L2 Theoretical
Sectors Global", summed over the line's instructions and the kernel's profiled launches). Both are
turned into shares of their kernel's total; the figure is Spearman's rank correlation of predicted
and measured shares over every (kernel, line) that either side gives traffic, pooled over all
kernels, with the per-kernel median beside it. Also: the same against the line's share of the
kernel's warp-stall samples. No GPU is needed: the exports are committed.

  bench/impact_rank.py [--lint build/bin/gpuopt-lint] [--data bench/data/impact] [--tsv OUT]
                       [--programs PATTERN,...] [--inlined file-line|caller|drop]

--programs picks the programs (folder names, shell patterns, comma-separated; default: every
program with an export). The sets: the tuning set (the estimate was improved while looking at it)
is `--programs linalg,stencil,reduce_scan,particles`; the held-out set (recorded before the
estimate was compared with it) is `--programs 'heldout_*'`.
"""
import argparse
import collections
import csv
import fnmatch
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0 + 1
        i = j + 1
    return r


def spearman(a, b):
    if len(a) < 3:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return None if va == 0 or vb == 0 else cov / (va * vb)


def _num(x):
    try:
        return float(x)
    except ValueError:
        return 0.0


def measured(path, source=None, inlined="file-line"):
    """{kernel: {line: (sectors, stall samples)}} from an ncu source page export.

    The export has one block per (launch, source file): code inlined from a CUDA header (the
    atomicAdd and __shfl_*_sync wrappers) is listed under the header's own line numbers.
    inlined="file-line" (the default, as first written) adds those rows to the kernel's line of the
    same number; "caller" gives them to their call site in the program's own file (`source`,
    matched by its name; see caller() below); "drop" leaves them out."""
    out = collections.defaultdict(lambda: collections.defaultdict(lambda: [0.0, 0.0]))
    blocks = []  # [function, file, [[line, sectors, stalls, [addresses]]]]
    header = None
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "File Path":
                cur_file = row[1]
                continue
            if row[0] == "Function Name":
                blocks.append([row[1], cur_file, []])
                continue
            if row[0] == "Line No":
                header = row
                continue
            if header is None or not blocks:
                continue
            if row[0].isdigit():
                sec_col = header.index("L2 Theoretical Sectors Global")
                stall_col = header.index("Warp Stall Sampling (All Samples)")
                blocks[-1][2].append([int(row[0]), _num(row[sec_col]), _num(row[stall_col]), [], row[1].lower()])
            elif row[0] == "" and row[2].startswith("0x") and blocks[-1][2]:
                blocks[-1][2][-1][3].append(int(row[2], 16))
    own = os.path.basename(source) if source else None

    def is_own(file):
        return own is None or os.path.basename(file) == own

    def caller(func, addr, text):
        """The call site of header code at `addr` in the launch whose own-file code surrounds it: the
        own-file line nearest in address among those that name the wrapper's kind (atomic, shfl,
        match, ballot/vote, as the header line does), else the own-file line just before it."""
        kinds = [k for k in ("atomic", "shfl", "match", "ballot", "vote") if k in text]
        for fn, file, lines in blocks:
            if fn != func or not is_own(file):
                continue
            addrs = [(a, ln, t) for ln, _, _, aa, t in lines for a in aa]
            if not addrs or not (min(a for a, _, _ in addrs) < addr < max(a for a, _, _ in addrs)):
                continue
            named = [(abs(a - addr), ln) for a, ln, t in addrs if any(k in t for k in kinds)]
            if named:
                return min(named)[1]
            return max((a, ln) for a, ln, _ in addrs if a < addr)[1]
        return None

    for func, file, lines in blocks:
        # "void sgemmTiled<32>(const float *, ...)": the name before the arguments and template
        # arguments, without a return type.
        kernel = re.split(r"[(<]", func)[0].strip().split()[-1]
        for ln, sec, stall, addrs, text in lines:
            if not is_own(file) and inlined != "file-line":
                if inlined == "drop" or not addrs:
                    continue
                ln = caller(func, min(addrs), text)
                if ln is None:
                    continue
            cell = out[kernel][ln]
            cell[0] += sec
            cell[1] += stall
    return out


def predicted(lint, source):
    """{kernel: {line: traffic}} from the linter's GPUOPT_COST_DUMP hook (first model per kernel)."""
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "cost.tsv")
        env = dict(os.environ, GPUOPT_COST_DUMP=dump)
        subprocess.run([lint, "--no-cache", "--no-config", "-q", "--format", "json", source], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        out = {}
        seen = set()
        if not os.path.exists(dump):
            return out
        cur = {}
        with open(dump) as f:
            for line in f:
                kernel, file, ln, traffic = line.rstrip("\n").split("\t")
                if not file.endswith(os.path.basename(source)):
                    continue
                cur.setdefault(kernel, []).append((int(ln), float(traffic)))
        for kernel, rows in cur.items():
            # A kernel modelled several times (launch shapes, instantiations): the first model's
            # lines, i.e. up to the first repeated line.
            lines = {}
            for ln, t in rows:
                if ln in lines:
                    break
                lines[ln] = t
            out[kernel] = lines
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lint", default=os.path.join(ROOT, "build/bin/gpuopt-lint"))
    ap.add_argument("--data", default=os.path.join(ROOT, "bench/data/impact"))
    ap.add_argument("--tsv", help="write per (kernel, line) predicted and measured shares here")
    ap.add_argument("--inlined", choices=["file-line", "caller", "drop"], default="file-line",
                    help="measured rows of code inlined from CUDA headers (atomicAdd, __shfl_*_sync): added to the "
                         "kernel line of the same number (file-line, as first written), to the calling line (caller), "
                         "or left out (drop)")
    ap.add_argument("--programs", default="*",
                    help="comma-separated shell patterns of the programs to compare (default: all)")
    args = ap.parse_args()
    patterns = [p.strip() for p in args.programs.split(",") if p.strip()]
    chosen = [name for name in sorted(os.listdir(args.data)) if any(fnmatch.fnmatchcase(name, p) for p in patterns)]
    if not chosen:
        print(f"impact_rank.py: no program in {args.data} matches --programs {args.programs}", file=sys.stderr)
        return 2
    pooled_p, pooled_m, pooled_s = [], [], []
    modelled_p, modelled_m = [], []  # kernels the linter estimated any traffic for
    unmodelled = []
    per_kernel, per_kernel_stall, rows = [], [], []
    for name in chosen:
        src = os.path.join(ROOT, "bench/impact", name + ".cu")
        csv_path = os.path.join(args.data, name, "source.csv")
        if not os.path.exists(src) or not os.path.exists(csv_path):
            continue
        meas = measured(csv_path, src, args.inlined)
        pred = predicted(args.lint, src)
        for kernel in sorted(meas):
            m = meas[kernel]
            p = pred.get(kernel, {})
            mt = sum(v[0] for v in m.values())
            st = sum(v[1] for v in m.values())
            pt = sum(p.values())
            if mt <= 0:
                continue
            lines = sorted(set(ln for ln, v in m.items() if v[0] > 0) | set(ln for ln, t in p.items() if t > 0))
            ps = [p.get(ln, 0.0) / pt if pt else 0.0 for ln in lines]
            ms = [m[ln][0] / mt if ln in m else 0.0 for ln in lines]
            ss = [m[ln][1] / st if ln in m and st else 0.0 for ln in lines]
            pooled_p += ps
            pooled_m += ms
            if pt > 0:
                modelled_p += ps
                modelled_m += ms
            else:
                unmodelled.append(f"{name}/{kernel}")
            pooled_s += ss
            rho = spearman(ps, ms)
            rho_s = spearman(ps, ss)
            per_kernel.append((name, kernel, len(lines), rho))
            per_kernel_stall.append(rho_s)
            for ln, a, b, c in zip(lines, ps, ms, ss):
                rows.append((name, kernel, ln, a, b, c))
    rho = spearman(pooled_p, pooled_m)
    rho_stall = spearman(pooled_p, pooled_s)
    valid = [r for _, _, _, r in per_kernel if r is not None]
    valid_s = [r for r in per_kernel_stall if r is not None]
    if len(pooled_p) < 3:
        print(f"impact_rank.py: fewer than 3 (kernel, line) pairs in {', '.join(chosen)}", file=sys.stderr)
        return 2
    print(f"programs: {', '.join(sorted(set(n for n, _, _, _ in per_kernel)))}")
    print(f"kernels with measured global traffic: {len(per_kernel)}; (kernel, line) pairs: {len(pooled_p)}")
    print(f"Spearman, predicted vs measured per-line share of global sectors, pooled: {rho:.3f}")
    rho_mod = spearman(modelled_p, modelled_m)
    if rho_mod is not None:
        print(f"  over the {len(per_kernel) - len(unmodelled)} kernels the linter estimated traffic for "
              f"({len(modelled_p)} pairs): {rho_mod:.3f}; no estimate (every modelled thread left early or "
              f"no global access modelled): {', '.join(unmodelled) or 'none'}")
    if valid:
        print(f"  per kernel (kernels with >= 3 lines and varying ranks: {len(valid)}): median {statistics.median(valid):.3f}, "
              f"min {min(valid):.3f}")
    if rho_stall is not None:
        print(f"Spearman, predicted traffic share vs measured share of warp-stall samples, pooled: {rho_stall:.3f}"
              + (f" (per-kernel median {statistics.median(valid_s):.3f})" if valid_s else ""))
    for name, kernel, n, r in per_kernel:
        print(f"  {name}/{kernel}: {n} lines, rho {'-' if r is None else f'{r:.3f}'}")
    if args.tsv:
        with open(args.tsv, "w") as f:
            f.write("program\tkernel\tline\tpredicted_share\tmeasured_sector_share\tmeasured_stall_share\n")
            for r in rows:
                f.write("{}\t{}\t{}\t{:.4f}\t{:.4f}\t{:.4f}\n".format(*r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
