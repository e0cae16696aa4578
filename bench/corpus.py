#!/usr/bin/env python3
"""The real-code corpus: public CUDA projects, how each is built, and the fixed tuning/test split.

No fetched code is in this repository. bench/corpus-projects.tsv names each project (fetch source,
pinned commit, the folders that count, how its flags are produced, submodules); bench/corpus.tsv
lists, for every CUDA translation unit and every project header holding kernels, its half. The half
is decided by the path alone, before anyone looks at findings: the first byte of
sha256("PROJECT/RELATIVE/PATH") even => `tune`, odd => `test`. Tune on `tune`; report precision on
`test` only.

  bench/corpus.py prepare [--corpus DIR] [PROJECT...]   configure CMake projects (compile_commands.json
                                                        in PROJECT/build), dry-run Makefiles
                                                        (DIR/_flags/PROJECT/compile_commands.json)
  bench/corpus.py manifest [--corpus DIR] [--check]     write bench/corpus.tsv from the checkouts
                                                        (--check: say whether it would change)
  bench/corpus.py show [--corpus DIR]                   units and headers per project and half

The checkouts live in DIR/PROJECT at the pinned commits (DIR defaults to $GPUOPT_CORPUS or
/work/corpus); see /work/corpus/README.md for how they were fetched. Makefile projects are read with
`make -n -B` (nothing is built): every nvcc command it prints becomes an entry of a synthetic
database, with the architecture flags replaced by -arch=sm_90 (CUDA 13 dropped sm_20-sm_70, which
most of these Makefiles name). The other tools (realworld.py sweep, nvcc_agreement.py) import this
module for the commands of each unit.
"""
import argparse
import fnmatch
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECTS = os.path.join(HERE, "corpus-projects.tsv")
MANIFEST = os.path.join(HERE, "corpus.tsv")
DEFAULT_CORPUS = os.environ.get("GPUOPT_CORPUS", "/work/corpus")
NVCC = "/usr/local/cuda/bin/nvcc"
SOURCE_EXT = (".cu", ".cuh", ".h", ".hpp", ".hxx", ".hh", ".inl", ".inc", ".cuhpp", ".tcc", ".ipp",
              ".c", ".cc", ".cpp", ".cxx")
HEADER_EXT = (".cu", ".cuh", ".h", ".hpp", ".hxx", ".hh", ".inl", ".inc", ".cuhpp", ".tcc", ".ipp")
MANIFEST_COLS = ["project", "path", "kind", "half", "flags", "via"]


def half_of(project, rel):
    """The fixed split: by the path only, never by content or findings."""
    return "tune" if hashlib.sha256(f"{project}/{rel}".encode()).digest()[0] % 2 == 0 else "test"


def read_tsv(path):
    rows = []
    with open(path) as fh:
        head = fh.readline().rstrip("\n").split("\t")
        for line in fh:
            if line.strip() and not line.startswith("#"):
                cols = line.rstrip("\n").split("\t")
                rows.append(dict(zip(head, cols + [""] * (len(head) - len(cols)))))
    return rows


class Project:
    def __init__(self, row, corpus):
        self.__dict__.update(row)
        self.name = row["project"]
        self.corpus = os.path.abspath(corpus)
        self.root = os.path.join(self.corpus, self.name)
        self.scopes = [s for s in row["scope"].split(",") if s]
        self.excludes = [s for s in row["exclude"].split(",") if s]
        words = row["build"].split(None, 1)
        self.kind = words[0]                          # cmake, make or none
        self.build_args = self.expand(words[1]) if len(words) > 1 else ""
        self.units_mode = row["units"] or "all"      # db, all or none
        self.fixed_flags = shlex.split(self.expand(row["flags"]))

    def expand(self, s):
        return s.replace("{root}", self.root).replace("{corpus}", self.corpus)

    def in_scope(self, rel):
        return any(fnmatch.fnmatch(rel, g) for g in self.scopes) and \
            not any(fnmatch.fnmatch(rel, g) for g in self.excludes)

    @property
    def build_dir(self):
        return os.path.join(self.root, "build")

    @property
    def database(self):
        """The compile_commands.json a user has: CMake's, or the one made from `make -n`."""
        if self.kind == "cmake":
            return os.path.join(self.build_dir, "compile_commands.json")
        if self.kind == "make":
            return os.path.join(self.corpus, "_flags", self.name, "compile_commands.json")
        return None

    def db_entries(self):
        """Relative path -> entry, for the in-scope .cu files of the database (first entry wins)."""
        out = {}
        db = self.database
        if not db or not os.path.exists(db):
            return out
        for e in json.load(open(db)):
            f = os.path.normpath(os.path.join(e["directory"], e["file"]))
            rel = os.path.relpath(f, self.root)
            if is_cuda_entry(e, f) and not rel.startswith("..") and self.in_scope(rel):
                out.setdefault(rel, e)
        return out


def is_cuda_entry(e, path):
    """A CUDA unit of a database: a .cu file, or another name compiled as CUDA (`-x cu`, CMake's
    LANGUAGE CUDA on sputnik's `.cu.cc` files)."""
    if path.endswith(".cu"):
        return True
    argv = entry_argv(e)
    return any(a == "-x" and b == "cu" for a, b in zip(argv, argv[1:])) or "-xcu" in argv or "--x=cu" in argv


def load_projects(corpus=DEFAULT_CORPUS, names=None):
    ps = [Project(r, corpus) for r in read_tsv(PROJECTS)]
    if names:
        unknown = set(names) - {p.name for p in ps}
        if unknown:
            sys.exit(f"corpus: unknown project(s) {', '.join(sorted(unknown))} (see {PROJECTS})")
        ps = [p for p in ps if p.name in names]
    return ps


def load_manifest(path=MANIFEST):
    return read_tsv(path)


# ---------------------------------------------------------------- flags and commands

WITH_VALUE = {"-I", "-isystem", "-iquote", "-idirafter", "-include", "-imacros", "-D", "-U", "-x", "-Xcompiler",
              "--compiler-options", "-Xptxas", "-Xcudafe", "-Xnvlink", "-ccbin", "--compiler-bindir", "-std",
              "-maxrregcount", "--maxrregcount", "-t", "--threads", "--options-file", "-optf", "--include-path",
              "--pre-include", "--define-macro", "--undefine-macro", "--system-include", "-rdc",
              "--relocatable-device-code"}
ARCH_OPTS = ("-arch", "--gpu-architecture", "-gencode", "--generate-code", "-code", "--gpu-code")


def entry_argv(e):
    return e["arguments"] if "arguments" in e else shlex.split(e["command"])


def expand_response_files(args, cwd):
    """nvcc's `--options-file F`/`-optf F` and `@F`, read relative to the entry's directory."""
    out = []
    it = iter(args)
    for a in it:
        path = None
        if a in ("--options-file", "-optf"):
            path = next(it, "")
        elif a.startswith("--options-file="):
            path = a.split("=", 1)[1]
        elif a.startswith("@"):
            path = a[1:]
        if path is None:
            out.append(a)
            continue
        p = os.path.join(cwd, path)
        try:
            out += expand_response_files(shlex.split(open(p).read()), cwd)
        except OSError:
            out.append(a)
    return out


def strip_arch(flags):
    out = []
    it = iter(flags)
    for a in it:
        name = a.split("=", 1)[0]
        if name in ARCH_OPTS:
            if "=" not in a:
                next(it, None)
            continue
        out.append(a)
    return out


def compile_flags(argv, src):
    """The flags of one compile command: no compiler, source, output, -c, link options."""
    out = []
    it = iter(argv[1:])
    for a in it:
        if a in WITH_VALUE:
            out += [a, next(it, "")]
            continue
        if a in ("-o", "-MF", "-MT", "-MQ", "-odir", "--output-file", "-Xlinker", "--linker-options"):
            next(it, None)
            continue
        if a in ("-c", "--compile", "-M", "-MD", "-MMD", "-shared", "-dc", "-dw", "--device-c") or \
                a.startswith(("-l", "-L", "-o=", "--output-file=", "-Wl,")):
            continue
        if a.endswith((".o", ".a", ".so")) or a.endswith(tuple(SOURCE_EXT)) and not a.startswith("-"):
            continue  # the source itself, other sources and objects of a compile-and-link line
        out.append(a)
    return out


def has_std(flags):
    return any(a.startswith(("-std=", "--std=")) or a in ("-std", "--std") for a in flags)


def unit_flags(proj, rel, entry):
    """(cwd, flags) with which nvcc and gpuopt-lint see a file: its database entry's flags
    (response files expanded, architecture replaced by sm_90), else the project's fixed flags."""
    path = os.path.join(proj.root, rel)
    if entry is None:
        return os.path.dirname(path), list(proj.fixed_flags)
    cwd = entry["directory"]
    flags = compile_flags(expand_response_files(entry_argv(entry), cwd), path)
    return cwd, strip_arch(flags)


def nvcc_argv(flags, src):
    extra = [] if has_std(flags) else ["-std=c++17"]
    return [NVCC] + extra + flags + ["-arch=sm_90", "-c", src, "-o", "/dev/null"]


def lint_argv(proj, row, entries):
    """(cwd, arguments after the binary) with which a user lints this manifest row.

    Units in a CMake database: `-p BUILD FILE` from the project root. Units of Makefile projects:
    `FILE -- FLAGS` from the directory make ran the command in. Others: `FILE -- FIXED-FLAGS`.
    A header is linted as an input of its own, the way its includer (`via`) is linted."""
    path = os.path.join(proj.root, row["path"])
    key = row["path"] if row["kind"] == "unit" else row.get("via", "")
    if proj.kind == "cmake" and key in entries:
        return proj.root, ["-p", proj.build_dir, path]
    cwd, flags = unit_flags(proj, key, entries.get(key))
    if row["kind"] == "header" and not key:
        cwd = os.path.dirname(path)
    return cwd, [path] + (["--"] + flags if flags else [])


# ---------------------------------------------------------------- make dry runs

SHELL_SEP = {";", "&&", "||", "|", "&", "(", ")", ";;"}


def is_nvcc(word):
    return os.path.basename(word) == "nvcc"


def dry_run(dirpath, make_vars):
    try:
        r = subprocess.run(["make", "-n", "-B", "-k"] + make_vars, cwd=dirpath, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return []
    cmds = []
    for line in r.stdout.replace("\\\n", " ").splitlines():
        try:
            lex = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
            lex.whitespace_split = True
            toks = list(lex)
        except ValueError:
            continue
        cwd, cur = dirpath, []
        for t in toks + [";"]:
            if t not in SHELL_SEP:
                cur.append(t)
                continue
            if cur and cur[0] == "cd" and len(cur) > 1:
                cwd = os.path.normpath(os.path.join(cwd, cur[1]))
            elif cur and is_nvcc(cur[0]):
                cmds.append((cwd, cur))
            cur = []
    return cmds


def make_database(proj, files):
    """Run `make -n -B` in every in-scope folder with a Makefile; write the nvcc commands as a
    compile_commands.json (one entry per .cu; the Makefile of the file's own folder wins)."""
    make_vars = proj.build_args.split()
    dirs = sorted({os.path.dirname(os.path.join(proj.root, f)) for f in files})
    found = {}
    for d in dirs:
        if not any(os.path.exists(os.path.join(d, m)) for m in ("Makefile", "makefile", "GNUmakefile")):
            continue
        for cwd, argv in dry_run(d, make_vars):
            for a in argv[1:]:
                if not a.endswith(".cu") or a.startswith("-"):
                    continue
                src = os.path.normpath(os.path.join(cwd, a))
                rel = os.path.relpath(src, proj.root)
                if rel.startswith("..") or not os.path.exists(src):
                    continue
                rank = 0 if os.path.dirname(src) == d else 1
                if rel not in found or rank < found[rel][0]:
                    found[rel] = (rank, {"directory": cwd, "file": src, "arguments": argv})
    out = os.path.join(proj.corpus, "_flags", proj.name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "compile_commands.json"), "w") as fh:
        json.dump([v[1] for _, v in sorted(found.items())], fh, indent=1)
    return len(found)


def cmake_configure(proj):
    cmd = ["cmake", "-S", proj.root, "-B", proj.build_dir, "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
           "-DCMAKE_CUDA_ARCHITECTURES=90", f"-DCMAKE_CUDA_COMPILER={NVCC}"] + shlex.split(proj.build_args)
    print("  " + " ".join(shlex.quote(c) for c in cmd))
    log = os.path.join(proj.corpus, "_flags", f"{proj.name}.cmake.log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w") as fh:
        rc = subprocess.call(["nice", "-n", "10"] + cmd, stdout=fh, stderr=subprocess.STDOUT)
    return rc, log


def tracked_files(proj):
    r = subprocess.run(["git", "-C", proj.root, "ls-files"], capture_output=True, text=True, check=True)
    return [f for f in r.stdout.splitlines() if proj.in_scope(f) and os.path.isfile(os.path.join(proj.root, f))]


def prepare(args):
    for proj in load_projects(args.corpus, args.projects):
        if not os.path.isdir(proj.root):
            print(f"{proj.name}: no checkout at {proj.root}: fetch {proj.source} and check out {proj.commit}")
            continue
        head = subprocess.run(["git", "-C", proj.root, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        if head != proj.commit:
            print(f"{proj.name}: checkout is at {head or '?'}, the manifest pins {proj.commit}")
        if proj.kind == "cmake":
            if os.path.exists(proj.database) and not args.force:
                print(f"{proj.name}: {proj.database} exists (--force to configure again)")
                continue
            rc, log = cmake_configure(proj)
            ok = os.path.exists(proj.database)
            print(f"{proj.name}: cmake exit {rc}; database {'written' if ok else 'MISSING'} (log {log})")
        elif proj.kind == "make":
            n = make_database(proj, tracked_files(proj))
            print(f"{proj.name}: {n} .cu files compiled by nvcc in `make -n -B {proj.build_args}` -> {proj.database}")
        else:
            print(f"{proj.name}: no build; flags {' '.join(proj.fixed_flags) or '(none)'}")
    return 0


# ---------------------------------------------------------------- units, headers, includes

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
KERNEL_RE = re.compile(r"__global__")


def read_text(path):
    try:
        with open(path, errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def include_graph(proj, files, texts):
    """file -> files of the project it includes (relative paths), resolved by the including
    file's folder first, then by the longest matching path suffix among the project's files."""
    by_base = {}
    for f in files:
        by_base.setdefault(os.path.basename(f), []).append(f)
    fileset = set(files)
    graph = {}
    for f in files:
        outs = []
        for inc in INCLUDE_RE.findall(texts[f]):
            local = os.path.normpath(os.path.join(os.path.dirname(f), inc))
            if local in fileset:
                outs.append(local)
                continue
            cands = [c for c in by_base.get(os.path.basename(inc), []) if c.endswith("/" + inc) or c == inc]
            if cands:
                # the candidate sharing the longest folder prefix with the includer
                outs.append(max(cands, key=lambda c: len(os.path.commonprefix([c, f]))))
        graph[f] = outs
    return graph


def scan(proj):
    """The manifest rows of one project."""
    files = [f for f in tracked_files(proj) if f.endswith(SOURCE_EXT)]
    texts = {f: read_text(os.path.join(proj.root, f)) for f in files}
    graph = include_graph(proj, files, texts)
    entries = proj.db_entries()
    included = {g for outs in graph.values() for g in outs}
    units = {}
    if proj.units_mode != "none":
        for rel in entries:
            units[rel] = "db" if proj.kind == "cmake" else "make"
        if proj.units_mode == "all":
            for f in files:
                if f.endswith(".cu") and f not in units and f not in included:
                    units[f] = "fixed"
    rows = []
    for rel, how in sorted(units.items()):
        rows.append({"project": proj.name, "path": rel, "kind": "unit", "half": half_of(proj.name, rel),
                     "flags": how, "via": ""})
    # which unit reaches each file: units with build flags first, then in path order
    via = {}
    for u in sorted(units, key=lambda u: (units[u] == "fixed", u)):
        seen, todo = set(), [u]
        while todo:
            f = todo.pop()
            for g in graph.get(f, []):
                if g not in seen:
                    seen.add(g)
                    todo.append(g)
                    via.setdefault(g, u)
    for f in sorted(files):
        if f in units or not f.endswith(HEADER_EXT) or not KERNEL_RE.search(texts[f]):
            continue
        v = via.get(f, "")
        how = units[v] if v else "fixed"
        rows.append({"project": proj.name, "path": f, "kind": "header", "half": half_of(proj.name, f),
                     "flags": how, "via": v})
    return rows


def write_manifest(rows, path):
    with open(path, "w") as fh:
        fh.write("# The fixed tuning/test split of the real-code corpus (bench/corpus.py manifest; bench/corpus.py explains it).\n")
        fh.write("\t".join(MANIFEST_COLS) + "\n")
        for r in rows:
            fh.write("\t".join(r[c] for c in MANIFEST_COLS) + "\n")


def read_manifest_rows(path):
    with open(path) as fh:
        lines = [l for l in fh if not l.startswith("# ")]
    head = lines[0].rstrip("\n").split("\t")
    return [dict(zip(head, l.rstrip("\n").split("\t"))) for l in lines[1:] if l.strip()]


def manifest(args):
    rows = []
    for proj in load_projects(args.corpus, args.projects):
        if not os.path.isdir(proj.root):
            sys.exit(f"corpus: no checkout of {proj.name} at {proj.root}")
        rows += scan(proj)
    if args.projects and os.path.exists(MANIFEST):  # keep the other projects' rows
        rows = [r for r in read_manifest_rows(MANIFEST) if r["project"] not in args.projects] + rows
    order = [p.name for p in load_projects(args.corpus)]
    rows.sort(key=lambda r: (order.index(r["project"]), r["kind"] != "unit", r["path"]))
    if args.check:
        old = read_manifest_rows(MANIFEST) if os.path.exists(MANIFEST) else []
        same = old == rows
        print("manifest unchanged" if same else f"manifest would change ({len(old)} -> {len(rows)} rows)")
        return 0 if same else 1
    write_manifest(rows, MANIFEST)
    print(f"wrote {MANIFEST}: {len(rows)} rows")
    return show(args)


def show(args):
    rows = read_manifest_rows(MANIFEST)
    print(f"{'project':24} {'units':>6} {'tune':>5} {'test':>5} {'headers':>8} {'tune':>5} {'test':>5}")
    tot = [0] * 6
    for proj in load_projects(args.corpus):
        rs = [r for r in rows if r["project"] == proj.name]
        c = [sum(1 for r in rs if r["kind"] == k and (h is None or r["half"] == h))
             for k in ("unit", "header") for h in (None, "tune", "test")]
        tot = [a + b for a, b in zip(tot, c)]
        print(f"{proj.name:24} {c[0]:6} {c[1]:5} {c[2]:5} {c[3]:8} {c[4]:5} {c[5]:5}")
    print(f"{'all':24} {tot[0]:6} {tot[1]:5} {tot[2]:5} {tot[3]:8} {tot[4]:5} {tot[5]:5}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("prepare", "manifest", "show"):
        s = sub.add_parser(name)
        s.add_argument("--corpus", default=DEFAULT_CORPUS)
        s.add_argument("projects", nargs="*")
        if name == "prepare":
            s.add_argument("--force", action="store_true", help="configure CMake projects again")
        if name == "manifest":
            s.add_argument("--check", action="store_true")
    args = p.parse_args()
    sys.exit({"prepare": prepare, "manifest": manifest, "show": show}[args.cmd](args))


if __name__ == "__main__":
    main()
