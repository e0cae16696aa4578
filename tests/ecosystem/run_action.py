#!/usr/bin/env python3
"""Runs a composite GitHub Action's steps (action.yml) on this machine, as GitHub's runner would,
without GitHub: inputs and their defaults, `${{ }}` expressions (the subset action.yml uses:
contexts, literals, ==, !=, !, &&, ||, success()/failure()/always()), each step's `if`, `env`,
`working-directory` and `shell: bash` (bash --noprofile --norc -eo pipefail), and the runner's
files GITHUB_OUTPUT, GITHUB_PATH and GITHUB_ENV. A `uses:` step (another action, such as the
SARIF upload) is not run: it is recorded with its evaluated `with:`, for the test to check.

    result = run_action(action_dir, workspace, inputs={...}, github={...}, env={...})

returns {"steps": [{"name", "id", "outcome", "exit"}], "uses": [{"uses", "with"}], "outputs": {...},
"conclusion": "success"|"failure", "log": str}."""
import os
import re
import subprocess
import tempfile

import yaml


class ExprError(Exception):
    pass


TOKEN = re.compile(r"\s*(?:(\|\||&&|==|!=|!|\(|\)|,)|'((?:[^']|'')*)'|(-?\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_.\-]*))")


def tokenize(s):
    pos, out = 0, []
    while pos < len(s):
        if s[pos:].strip() == "":
            break
        m = TOKEN.match(s, pos)
        if not m:
            raise ExprError("cannot read expression at %r" % s[pos:])
        op, string, num, name = m.groups()
        if op:
            out.append(("op", op))
        elif string is not None:
            out.append(("str", string.replace("''", "'")))
        elif num is not None:
            out.append(("num", float(num)))
        else:
            out.append(("name", name))
        pos = m.end()
    return out


def truthy(v):
    return v not in (None, False, "", 0, 0.0)


def to_str(v):
    if v is None:
        return ""
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def equal(a, b):
    # GitHub compares strings case-insensitively; other types by value after coercion to string.
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    if a is None or b is None:
        return a is b or to_str(a) == to_str(b)
    return to_str(a).lower() == to_str(b).lower()


class Evaluator:
    def __init__(self, contexts, status):
        self.contexts, self.status = contexts, status

    def evaluate(self, text):
        self.toks, self.i = tokenize(text), 0
        v = self.or_expr()
        if self.i != len(self.toks):
            raise ExprError("trailing tokens in %r" % text)
        return v

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, op=None):
        t = self.peek()
        if op is not None and t != ("op", op):
            raise ExprError("expected %r, got %r" % (op, t))
        self.i += 1
        return t

    def or_expr(self):
        v = self.and_expr()
        while self.peek() == ("op", "||"):
            self.take()
            r = self.and_expr()
            v = v if truthy(v) else r
        return v

    def and_expr(self):
        v = self.cmp()
        while self.peek() == ("op", "&&"):
            self.take()
            r = self.cmp()
            v = r if truthy(v) else v
        return v

    def cmp(self):
        v = self.unary()
        t = self.peek()
        if t in (("op", "=="), ("op", "!=")):
            self.take()
            r = self.unary()
            return equal(v, r) if t[1] == "==" else not equal(v, r)
        return v

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.primary()

    def primary(self):
        kind, val = self.take()
        if kind == "op" and val == "(":
            v = self.or_expr()
            self.take(")")
            return v
        if kind in ("str", "num"):
            return val
        if kind == "name":
            if val in ("true", "false"):
                return val == "true"
            if val == "null":
                return None
            if self.peek() == ("op", "("):
                self.take()
                self.take(")")
                if val == "success":
                    return self.status == "success"
                if val == "failure":
                    return self.status == "failure"
                if val in ("always", "cancelled"):
                    return val == "always"
                raise ExprError("unknown function %s()" % val)
            v = self.contexts
            for part in val.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            return v
        raise ExprError("unexpected %r" % val)


def interpolate(text, ev):
    if not isinstance(text, str):
        return to_str(text)
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: to_str(ev.evaluate(m.group(1))), text)


def read_outputs(path):
    out, lines, i = {}, open(path).read().split("\n"), 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        m = re.match(r"^([^=<]+)<<(.+)$", line)
        if m:
            name, delim, value = m.group(1), m.group(2), []
            while i < len(lines) and lines[i] != delim:
                value.append(lines[i])
                i += 1
            i += 1
            out[name] = "\n".join(value)
        elif "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
        else:
            raise ExprError("malformed line in the runner's output file: %r" % line)
    return out


def run_action(action_dir, workspace, inputs=None, github=None, env=None, timeout=900):
    action = yaml.safe_load(open(os.path.join(action_dir, "action.yml")))
    assert action["runs"]["using"] == "composite", "only composite actions"
    given = dict(inputs or {})
    for k in given:
        if k not in action.get("inputs", {}):
            raise ExprError("input %r is not declared in action.yml" % k)
    ins = {k: to_str(given.get(k, spec.get("default", ""))) for k, spec in action.get("inputs", {}).items()}
    gh = {"workspace": workspace, "event_name": "push", "action_ref": "", "event": {}}
    gh.update(github or {})
    tmp = tempfile.mkdtemp(prefix="run-action-")
    base_env = dict(os.environ)
    base_env.update(env or {})
    base_env.update({
        "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": workspace,
        "GITHUB_ACTION_PATH": os.path.abspath(action_dir), "GITHUB_EVENT_NAME": gh["event_name"],
        "RUNNER_TEMP": os.path.join(tmp, "runner-temp"),
    })
    os.makedirs(base_env["RUNNER_TEMP"], exist_ok=True)
    contexts = {"inputs": ins, "github": gh, "steps": {}, "env": {}, "runner": {"temp": base_env["RUNNER_TEMP"]}}
    result = {"steps": [], "uses": [], "outputs": {}, "log": ""}
    status = "success"
    extra_path, extra_env = [], {}
    for n, step in enumerate(action["runs"]["steps"]):
        name = step.get("name", step.get("uses", "step %d" % n))
        ev = Evaluator(contexts, status)
        cond = step.get("if")
        if cond is None:
            run_it = status == "success"
        else:
            expr = cond.strip()
            m = re.fullmatch(r"\$\{\{(.*)\}\}", expr, re.S)
            expr = m.group(1) if m else expr
            if not re.search(r"\b(success|failure|always|cancelled)\(\)", expr):
                expr = "success() && (%s)" % expr
            run_it = truthy(ev.evaluate(expr))
        rec = {"name": name, "id": step.get("id"), "outcome": "skipped", "exit": None}
        result["steps"].append(rec)
        if not run_it:
            result["log"] += "== %s: skipped\n" % name
            continue
        if "uses" in step:
            result["uses"].append({"uses": step["uses"], "with": {k: interpolate(v, ev) for k, v in (step.get("with") or {}).items()}})
            rec["outcome"] = "success"
            result["log"] += "== %s: uses %s (not run here)\n" % (name, step["uses"])
            continue
        assert step.get("shell") == "bash", "step %r: only shell: bash" % name
        step_env = dict(base_env)
        step_env.update(extra_env)
        step_env["PATH"] = ":".join(extra_path + [base_env.get("PATH", "")])
        for k, v in (step.get("env") or {}).items():
            step_env[k] = interpolate(v, ev)
        files = {}
        for f in ("GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_ENV"):
            files[f] = os.path.join(tmp, "%s_%d" % (f.lower(), n))
            open(files[f], "w").close()
            step_env[f] = files[f]
        script = os.path.join(tmp, "step_%d.sh" % n)
        with open(script, "w") as fh:
            fh.write(interpolate(step["run"], ev))
        cwd = os.path.join(workspace, interpolate(step.get("working-directory", "."), ev))
        p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], cwd=cwd, env=step_env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        result["log"] += "== %s (exit %d)\n%s" % (name, p.returncode, p.stdout)
        rec["exit"] = p.returncode
        rec["outcome"] = "success" if p.returncode == 0 else "failure"
        if step.get("id"):
            contexts["steps"][step["id"]] = {"outputs": read_outputs(files["GITHUB_OUTPUT"]), "outcome": rec["outcome"]}
        extra_path = [l for l in open(files["GITHUB_PATH"]).read().splitlines() if l][::-1] + extra_path
        extra_env.update(read_outputs(files["GITHUB_ENV"]))
        if p.returncode != 0:
            status = "failure"
    ev = Evaluator(contexts, status)
    result["outputs"] = {k: interpolate(spec.get("value", ""), ev) for k, spec in (action.get("outputs") or {}).items()}
    result["conclusion"] = status
    return result
