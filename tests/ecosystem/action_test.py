#!/usr/bin/env python3
"""The GitHub Action (action.yml) run locally, step by step, without GitHub (run_action.py plays
the runner): install from the .deb, lint the changed files / all / a compilation database, the SARIF
upload step's inputs (recorded, not sent), and the verdict step's exit status.

usage: action_test.py REPO PACKAGE_DIR BUILD_BIN_DIR"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_action import run_action  # noqa: E402

repo, bindir = sys.argv[1], os.path.abspath(sys.argv[3])
deb = glob.glob(os.path.join(os.path.abspath(sys.argv[2]), "gpuopt-lint_*.deb"))[0]
work = tempfile.mkdtemp(prefix="action-test-")
failures = []


def check(cond, what, result=None):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
        if result is not None:
            print(result["log"][-6000:])


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL)


BAD = "__global__ void k(float* b, const float* a) {\n  int i = threadIdx.x;\n  b[i] = a[32 * i];\n}\n"
CLEAN = "__global__ void k(float* a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] *= 2.0f;\n}\n"
ws = os.path.join(work, "ws")
os.makedirs(ws)
os.environ.update({"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
                   "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": work, "XDG_CACHE_HOME": os.path.join(work, "cache")})
git("init", "-q", cwd=ws)
open(os.path.join(ws, "clean.cu"), "w").write(CLEAN)
git("add", ".", cwd=ws)
git("commit", "-qm", "base", cwd=ws)
base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws, check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
os.makedirs(os.path.join(ws, "src dir"))
open(os.path.join(ws, "src dir", "bad.cu"), "w").write(BAD)
git("add", ".", cwd=ws)
git("commit", "-qm", "head", cwd=ws)
pr = {"event_name": "pull_request", "event": {"pull_request": {"base": {"sha": base}}}}
on_path = {"PATH": bindir + ":" + os.environ["PATH"]}


def sarif_results(path):
    d = json.load(open(path))
    return [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in d["runs"][0]["results"]]


def step(r, name):
    return next(s for s in r["steps"] if s["name"] == name)


# 1. A pull request adding a file with a warning: installed from the .deb (unpacked), only the
# changed file linted, the SARIF uploaded although there are findings, then the job fails (1).
r = run_action(repo, ws, inputs={"package": "file://" + deb, "install": "extract"}, github=pr)
check(step(r, "Install gpuopt-lint")["outcome"] == "success", "pr: the .deb installs (extract)", r)
check("src dir/bad.cu" in r["log"] and "clean.cu" not in r["log"].split("+ gpuopt-lint", 1)[-1].split("\n")[0],
      "pr: only the changed file is linted", r)
check(len(r["uses"]) == 1 and r["uses"][0]["uses"].startswith("github/codeql-action/upload-sarif@")
      and r["uses"][0]["with"] == {"sarif_file": "gpuopt-lint.sarif", "category": "gpuopt-lint"},
      "pr: the SARIF is uploaded although there are findings: %s" % r["uses"], r)
sarif = os.path.join(ws, "gpuopt-lint.sarif")
check(os.path.exists(sarif) and sarif_results(sarif) == [("uncoalesced-access", "src%20dir/bad.cu")] or
      os.path.exists(sarif) and sarif_results(sarif) == [("uncoalesced-access", "src dir/bad.cu")],
      "pr: the SARIF holds the finding: %s" % (sarif_results(sarif) if os.path.exists(sarif) else "none"), r)
check(step(r, "Fail on the configured severity")["exit"] == 1 and r["conclusion"] == "failure",
      "pr: the job fails with exit status 1 after the upload", r)
check(r["outputs"] == {"exit-code": "1", "sarif-file": "gpuopt-lint.sarif"}, "pr: outputs %s" % r["outputs"], r)
check("uncoalesced global load" in r["log"], "pr: the findings are in the log as text", r)
os.remove(sarif)

# 2. fail-on: error: a warning is uploaded but does not fail the job; annotations on request.
r = run_action(repo, ws, inputs={"install": "none", "fail-on": "error", "annotations": "true"}, github=pr, env=on_path)
check(r["conclusion"] == "success" and len(r["uses"]) == 1, "fail-on error: uploaded, the job passes", r)
check("::warning file=src dir/bad.cu,line=3" in r["log"], "annotations: a workflow command for the finding", r)

# 3. fail-on never (--exit-zero) and files: all.
r = run_action(repo, ws, inputs={"install": "none", "fail-on": "never", "files": "all"}, github=pr, env=on_path)
check(r["conclusion"] == "success" and "clean.cu" in r["log"], "fail-on never, files all: both files, passes", r)

# 4. A push to a new branch (before = 0...0): nothing to compare with, every tracked file.
r = run_action(repo, ws, inputs={"install": "none"}, env=on_path,
               github={"event_name": "push", "event": {"before": "0" * 40}})
check("every tracked CUDA file" in r["log"] and r["outputs"]["exit-code"] == "1", "push, new branch: all files", r)

# 5. A pull request that changes no CUDA file: an empty SARIF is uploaded (code scanning closes
# fixed alerts), the job passes.
r = run_action(repo, ws, inputs={"install": "none"}, env=on_path,
               github={"event_name": "pull_request", "event": {"pull_request": {"base": {"sha": "HEAD"}}}})
check(r["conclusion"] == "success" and len(r["uses"]) == 1 and sarif_results(sarif) == [],
      "no CUDA file changed: empty SARIF uploaded, passes", r)

# 6. Exit status 2 (an input that cannot be reported on: a folder named like a source file; a file
# with compile errors is reported, exit 1, docs/rules/compile-error.md): the SARIF (with the other
# file's finding and the error) is still uploaded, the job fails with 2 and says why.
os.mkdir(os.path.join(ws, "broken.cu"))
r = run_action(repo, ws, inputs={"install": "none", "files": "broken.cu src*/bad.cu"}, env=on_path, github=pr)
check(len(r["uses"]) == 1 and ("uncoalesced-access", "src%20dir/bad.cu") in sarif_results(sarif) or
      len(r["uses"]) == 1 and ("uncoalesced-access", "src dir/bad.cu") in sarif_results(sarif),
      "exit 2: the SARIF is uploaded with the other file's finding", r)
check(step(r, "Fail on the configured severity")["exit"] == 2 and "could not analyse" in r["log"],
      "exit 2: the job fails with 2 and says an input could not be analysed", r)

# 7. A usage error: no SARIF to upload (the upload step is skipped), the job fails with 2.
r = run_action(repo, ws, inputs={"install": "none", "args": "--no-such-option"}, env=on_path, github=pr)
check(not r["uses"] and step(r, "Upload SARIF to code scanning")["outcome"] == "skipped"
      and step(r, "Fail on the configured severity")["exit"] == 2, "usage error: no upload, exit 2", r)
os.rmdir(os.path.join(ws, "broken.cu"))

# 8. A compilation database: every CUDA unit of it.
bdir = os.path.join(ws, "build")
os.makedirs(bdir)
json.dump([{"directory": ws, "file": os.path.join(ws, "src dir", "bad.cu"),
            "arguments": ["nvcc", "-c", "src dir/bad.cu", "-o", "bad.o"]}], open(os.path.join(bdir, "compile_commands.json"), "w"))
r = run_action(repo, ws, inputs={"install": "none", "compile-commands-dir": "build", "fail-on": "warning"}, env=on_path, github=pr)
check("compile_commands.json" in r["log"] and r["outputs"]["exit-code"] == "1" and
      sarif_results(sarif) and sarif_results(sarif)[0][0] == "uncoalesced-access", "database: linted", r)

# 9. A wrong input value is an error, not a silent default.
r = run_action(repo, ws, inputs={"install": "none", "fail-on": "warnings"}, env=on_path, github=pr)
check(r["conclusion"] == "failure" and "fail-on must be" in r["log"], "fail-on typo: an error", r)

# 10. changed-lines-only: a pull request that adds a strided load to a file that already has one:
# only the new line is reported; a baseline hides the old one as well.
head1 = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws, check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
with open(os.path.join(ws, "src dir", "bad.cu"), "a") as fh:
    fh.write("__global__ void k2(float* b, const float* a) { b[threadIdx.x] = a[64 * threadIdx.x]; }\n")
git("commit", "-qam", "another", cwd=ws)
pr2 = {"event_name": "pull_request", "event": {"pull_request": {"base": {"sha": head1}}}}
r = run_action(repo, ws, inputs={"install": "none", "changed-lines-only": "true"}, github=pr2, env=on_path)
lines = [x["locations"][0]["physicalLocation"]["region"]["startLine"] for x in json.load(open(sarif))["runs"][0]["results"]]
check(lines == [5] and r["outputs"]["exit-code"] == "1", "changed-lines-only: only the added line (got lines %s)" % lines, r)
r = run_action(repo, ws, inputs={"install": "none"}, github=pr2, env=on_path)
check(len(sarif_results(sarif)) == 2, "without it: both findings of the changed file", r)
subprocess.run(["gpuopt-lint", "--write-baseline", "base.json", "src dir/bad.cu"], cwd=ws, env=dict(os.environ, **on_path),
               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = run_action(repo, ws, inputs={"install": "none", "baseline": "base.json"}, github=pr2, env=on_path)
check(sarif_results(sarif) == [] and r["conclusion"] == "success", "baseline: known findings hidden, passes", r)
os.remove(os.path.join(ws, "base.json"))

# 11. The README's workflow, as printed: it uses this action at the released version, with inputs
# the action declares; run with them (gpuopt-lint already on PATH instead of apt).
import re  # noqa: E402
import yaml  # noqa: E402
block = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "readme_block.py"),
                        os.path.join(repo, "README.md"), "workflow"], check=True, stdout=subprocess.PIPE, text=True).stdout
wf = yaml.safe_load(block)
version = re.search(r"project\(gpuopt-lint VERSION ([0-9.]+)", open(os.path.join(repo, "CMakeLists.txt")).read()).group(1)
uses = [st for job in wf["jobs"].values() for st in job["steps"] if st.get("uses", "").startswith("gpuopt-lint/gpuopt-lint@")]
check(len(uses) == 1 and uses[0]["uses"] == "gpuopt-lint/gpuopt-lint@v" + version,
      "README workflow: uses the action at v%s: %s" % (version, [u.get("uses") for u in uses]))
job = next(iter(wf["jobs"].values()))
check(job.get("permissions", {}).get("security-events") == "write", "README workflow: may upload to code scanning")
if uses:
    inputs = dict(uses[0].get("with") or {})
    r = run_action(repo, ws, inputs=dict(inputs, install="none"), github=pr, env=on_path)
    check(r["outputs"]["exit-code"] == "1" and len(r["uses"]) == 1 and r["conclusion"] == "failure",
          "README workflow: runs, uploads, fails on the warning (inputs %s)" % inputs, r)

shutil.rmtree(work, ignore_errors=True)
print("%d failed" % len(failures))
sys.exit(1 if failures else 0)
