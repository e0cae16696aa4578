#!/usr/bin/env python3
"""Proof that a refactoring changed no behaviour: the findings of one gpuopt-lint build on a fixed
set of inputs, stored as files, and a byte-for-byte comparison of two such sets.

  bench/snapshot.py write BIN OUTDIR [--list FILES.txt] [--jobs 2]
  bench/snapshot.py compare OLD NEW

Each case is one gpuopt-lint process, `--format json --no-cache --verbose` plus the case's
arguments, run in the case's folder; three files per case: NAME.json (stdout), NAME.log (stderr,
the --verbose log, with timings such as "412 ms" or "1.2 s" replaced by T: they are not behaviour)
and NAME.rc (the exit status). The cases, each with the CUDA toolkit and with --no-cuda:
- samples/*.cu and tests/fixtures/*.cu, run from the repository root;
- every .cu/.cuh/.cpp file of tests/projects/*, run from its project folder as the tests run them,
  and main.cu with kernel.cu given together;
- a compile_commands.json project written to /tmp/gpuopt-lint-snapshot-db (a kept and a dropped
  flag, a missing header, `-x cuda`, a host-only entry): `-p build`, and `-p build extra.cu`;
- with --list, every file it names (one path a line: real CUDA code outside this repository, such
  as a cuda-samples checkout; never commit it), run from the file's folder.

Run it from the repository root. Exit status of `compare`: 0 when every file is identical.
"""
import argparse
import concurrent.futures
import filecmp
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

DB = Path("/tmp/gpuopt-lint-snapshot-db")
TIMING = re.compile(rb"\b[0-9]+(\.[0-9]+)? ?(ms|s)\b")


def write_db_project():
    shutil.rmtree(DB, ignore_errors=True)
    (DB / "src").mkdir(parents=True)
    (DB / "build").mkdir()
    (DB / "src/a.cu").write_text("__global__ void a(float* x) { x[threadIdx.x * N * 8] = 0; }\n")
    (DB / "src/b.cu").write_text('#include "missing.h"\n__global__ void b(float* x) { x[threadIdx.x] = 0; }\n'
                                 "void f() { g(); }\n")
    (DB / "src/host.cpp").write_text("int main() { return 0; }\n")
    (DB / "src/c.cpp").write_text("__global__ void c(float* x) { x[threadIdx.x * 16] = 0; }\n")
    (DB / "extra.cu").write_text("__global__ void e(float* x) { x[threadIdx.x * 8] = 0; }\n")
    d = DB / "build"
    (d / "compile_commands.json").write_text(
        f'[{{"directory": "{d}", "file": "../src/a.cu", "command": "nvcc -DN=4 -arch=sm_80 -I../src -c ../src/a.cu"}},\n'
        f' {{"directory": "{d}", "file": "../src/b.cu", "command": "nvcc -c ../src/b.cu -o b.o"}},\n'
        f' {{"directory": "{d}", "file": "../src/c.cpp", "command": "clang++ -x cuda -std=c++17 -c ../src/c.cpp"}},\n'
        f' {{"directory": "{d}", "file": "../src/host.cpp", "command": "g++ -c ../src/host.cpp"}}]\n')


def cases(root, listfile):
    out = []  # (name, folder, args)
    real = [l.strip() for l in open(listfile)] if listfile else []
    for mode in ([], ["--no-cuda"]):
        tag = "nocuda" if mode else "cuda"
        for f in sorted(root.glob("samples/*.cu")) + sorted(root.glob("tests/fixtures/*.cu")):
            rel = f.relative_to(root).as_posix()
            out.append((f"{tag}__{rel.replace('/', '_')}", root, mode + [rel]))
        for p in sorted(x for x in (root / "tests/projects").iterdir() if x.is_dir()):
            files = sorted(f.relative_to(p).as_posix() for f in p.rglob("*") if f.suffix in (".cu", ".cuh", ".cpp"))
            for f in files:
                out.append((f"{tag}__projects_{p.name}__{f.replace('/', '_')}", p, mode + [f]))
        out.append((f"{tag}__projects_included_kernel__both", root / "tests/projects/included_kernel",
                    mode + ["main.cu", "kernel.cu"]))
        out.append((f"{tag}__db", DB, mode + ["-p", "build"]))
        out.append((f"{tag}__db_extra", DB, mode + ["-p", "build", "extra.cu"]))
        for f in real:
            if f:
                p = Path(f)
                out.append((f"{tag}__real__{f.strip('/').replace('/', '_')}", p.parent, mode + [p.name]))
    return out


def run(bin_, outdir, case):
    name, folder, args = case
    r = subprocess.run([bin_, "--format", "json", "--no-cache", "--verbose"] + args, cwd=folder,
                       capture_output=True)
    (outdir / f"{name}.json").write_bytes(r.stdout)
    (outdir / f"{name}.log").write_bytes(TIMING.sub(b"T", r.stderr))
    (outdir / f"{name}.rc").write_text(f"{r.returncode}\n")


def write(args):
    root = Path.cwd()
    if not (root / "samples").is_dir() or not (root / "tests/fixtures").is_dir():
        sys.exit("run from the repository root")
    bin_ = str(Path(args.bin).resolve())
    outdir = Path(args.outdir).resolve()
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    write_db_project()
    cs = cases(root, args.list)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        list(ex.map(lambda c: run(bin_, outdir, c), cs))
    print(f"{len(cs)} cases written to {outdir}")


def compare(args):
    old, new = Path(args.old), Path(args.new)
    names = sorted({p.name for p in old.iterdir()} | {p.name for p in new.iterdir()})
    bad = [n for n in names if not (old / n).exists() or not (new / n).exists()
           or not filecmp.cmp(old / n, new / n, shallow=False)]
    for n in bad[:20]:
        print(f"differs: {n}")
        if (old / n).exists() and (new / n).exists():
            subprocess.run(["diff", str(old / n), str(new / n)], check=False)
    if bad:
        print(f"DIFFERENT: {len(bad)} of {len(names)} files ({old} vs {new})")
        sys.exit(1)
    print(f"byte-identical: {len(names)} files, {len(names) // 3} cases ({old} vs {new})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("bin")
    w.add_argument("outdir")
    w.add_argument("--list")
    w.add_argument("--jobs", type=int, default=2)
    w.set_defaults(func=write)
    c = sub.add_parser("compare")
    c.add_argument("old")
    c.add_argument("new")
    c.set_defaults(func=compare)
    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
