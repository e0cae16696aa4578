#include "analyzer/app/profile_command.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "analyzer/report/fix.h"

namespace gpuopt::profile {

namespace fs = std::filesystem;

std::string profileUsage() {
  return R"(usage: gpuopt-lint profile [options] [FILE...] -- COMMAND [ARGS...]
       gpuopt-lint profile [options] --import DIR|CSV [FILE...]

Runs COMMAND under Nsight Compute (ncu), reads the per-source-line counters of the kernels it
launches, lints the source files the profile names (or FILE...) with the block shapes the profile
recorded, and joins the two. Every finding on a profiled line gets the line's measured figures and
a verdict: confirmed (the measured n-way conflict, sectors per request or active lanes agree with
the prediction within 20%), differs (both numbers shown), or not executed in this run. Findings are
ranked by their line's share of the kernel's warp-stall samples. Lines whose counters show a
problem no finding covers become measured-only findings: measured-bank-conflict and
measured-uncoalesced (2x the ideal shared wavefronts / global sectors or more, on a line with at
least 1% of the kernel's samples) and measured-divergence (under 24 of 32 lanes active on a line
with at least 10%). Build COMMAND's CUDA code with nvcc -lineinfo.

Profile options:
  --import DIR|CSV        join an existing export instead of running anything: a folder with
                          source.csv and raw.csv (what --out keeps), or one CSV of
                          `ncu -i REPORT --page source --csv --print-source cuda,sass`
  --ncu PATH              Nsight Compute's CLI (default: ncu on PATH, $CUDA_PATH/bin,
                          /usr/local/cuda/bin, /opt/nvidia/nsight-compute/*)
  -k, --kernel REGEX      profile only the kernels whose name matches
  -c, --launch-count N    profile at most N kernel launches (default 20)
  --out DIR               keep the report (profile.ncu-rep), source.csv, raw.csv and ncu.log in DIR
  --try-fixes             for findings with a mechanical fix (e.g. shared-array padding): copy the
                          current folder (without .git) to a temporary folder, apply the fixes
                          there, build the copy with and without them (--build), run COMMAND in
                          both and report the kernel's time before and after next to the finding
                          (median of --runs runs under ncu). Your files are never touched.
  --build CMD             with --try-fixes: the build command, run by /bin/sh in each copy
  --runs N                with --try-fixes: timed runs per variant (default 5)

Every lint option works as well (--format, --rules, --block-dim, -p, --config, ...). Compiler
arguments come from the configuration file or compile_commands.json: here `--` starts COMMAND,
except with --import (nothing runs): `profile --import DIR FILE... -- -DN=64 -Iinclude` passes
compiler arguments as in a plain lint. --verbose lists the SASS instructions behind each verdict.

Exit status: 0 no findings, 1 findings, 2 usage or input error, 3 no NVIDIA GPU visible, 4 ncu not
found, 5 no permission for the GPU's performance counters (ERR_NVGPUCTRPERM), 6 the program was
built without -lineinfo, 7 COMMAND not found, 8 COMMAND failed, 9 no kernel was profiled,
10 the --build command failed. COMMAND (7), the GPU (3) and ncu (4) are checked in that order
before anything runs.
)";
}

bool parseProfileCommandLine(int argc, char** argv, CliOptions& o, Command& c, std::string& error) {
  std::vector<std::string> args(argv + 2, argv + argc);  // after "profile"
  std::vector<std::string> lint;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i], value;
    bool inlineValue = false;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      value = a.substr(a.find('=') + 1), a = a.substr(0, a.find('=')), inlineValue = true;
    }
    auto need = [&](std::string& out) {
      if (inlineValue) return out = value, true;
      if (i + 1 >= args.size()) {
        error = "option '" + a + "' needs a value";
        return false;
      }
      out = args[++i];
      return true;
    };
    auto count = [&](unsigned& out) {
      std::string v;
      if (!need(v)) return false;
      try {
        size_t pos = 0;
        long n = std::stol(v, &pos);
        if (pos != v.size() || n <= 0 || n > 100000) throw 0;
        out = static_cast<unsigned>(n);
      } catch (...) {
        error = "option '" + a + "' expects a positive number, got '" + v + "'";
        return false;
      }
      return true;
    };
    if (a == "--") {
      // With --import nothing runs: what follows is the compiler's, as in a plain lint.
      if (!c.importPath.empty()) {
        lint.insert(lint.end(), args.begin() + static_cast<long>(i), args.end());
        break;
      }
      c.command.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (a == "--import") { if (!need(c.importPath)) return false; }
    else if (a == "--ncu") { if (!need(c.ncu)) return false; }
    else if (a == "-k" || a == "--kernel") { if (!need(c.kernelFilter)) return false; }
    else if (a == "-c" || a == "--launch-count") { if (!count(c.launchCount)) return false; }
    else if (a == "--out") { if (!need(c.outDir)) return false; }
    else if (a == "--try-fixes") c.tryFixes = true;
    else if (a == "--build") { if (!need(c.build)) return false; }
    else if (a == "--runs") { if (!count(c.runs)) return false; }
    else lint.push_back(args[i]);
  }
  if (!parseCommandLine(lint, o, error)) return false;
  if (o.help) return true;
  if (c.importPath.empty() && c.command.empty()) {
    error = "profile: nothing to profile: give '-- COMMAND [ARGS...]' (a program built with nvcc -lineinfo) or "
            "--import DIR";
    return false;
  }
  if (c.tryFixes && c.build.empty()) {
    error = "profile: --try-fixes needs --build \"CMD\" (how to rebuild the program after a fix)";
    return false;
  }
  if (c.tryFixes && c.command.empty()) {
    error = "profile: --try-fixes needs '-- COMMAND' to run the rebuilt program";
    return false;
  }
  if (o.fix) {
    error = "profile: --fix is not available here (use --try-fixes to measure fixes in a copy)";
    return false;
  }
  return true;
}

namespace {
bool isSystemPath(const std::string& p) {
  return p.rfind("/usr/", 0) == 0 || p.rfind("/opt/", 0) == 0 || p.find("/cuda/") != std::string::npos ||
         p.find("/targets/x86_64-linux/include/") != std::string::npos;
}

// A profiled file here: the recorded path, or the longest suffix of it that exists under cwd.
// A path under cwd wins: a profile recorded on another machine (or in another checkout) joins the
// files here.
std::string locate(const std::string& recorded, const fs::path& cwd) {
  std::error_code ec;
  fs::path rec = fs::path(recorded).lexically_normal();
  if (fs::is_regular_file(rec, ec)) {
    auto rel = rec.lexically_relative(cwd);
    if (!rel.empty() && *rel.begin() != "..") return rel.string();
  }
  std::vector<std::string> comps;
  for (const auto& c : fs::path(recorded).lexically_normal())
    if (c != "/" && !c.empty()) comps.push_back(c.string());
  for (size_t n = comps.size() > 1 ? comps.size() - 1 : comps.size(); n >= 1; --n) {
    fs::path rel;
    for (size_t i = comps.size() - n; i < comps.size(); ++i) rel /= comps[i];
    if (fs::is_regular_file(cwd / rel, ec)) return rel.string();
  }
  if (fs::is_regular_file(rec, ec)) return rec.string();
  return {};
}

std::string makeTempDir() {
  std::string tmpl = (fs::temp_directory_path() / "gpuopt-profile-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  return mkdtemp(buf.data()) ? std::string(buf.data()) : std::string();
}

std::string tail(const std::string& file, size_t n = 2000) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > n ? s.substr(s.size() - n) : s;
}

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

bool copyTree(const fs::path& from, const fs::path& to, const fs::path& skip, std::string& error) {
  std::error_code ec;
  fs::create_directories(to, ec);
  for (const auto& e : fs::directory_iterator(from, ec)) {
    if (e.path().filename() == ".git") continue;
    std::error_code ec2;
    if (!skip.empty() && fs::equivalent(e.path(), skip, ec2)) continue;
    fs::copy(e.path(), to / e.path().filename(),
             fs::copy_options::recursive | fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing, ec2);
    if (ec2) {
      error = "copying " + e.path().string() + " to " + to.string() + ": " + ec2.message();
      return false;
    }
  }
  if (ec) {
    error = "reading " + from.string() + ": " + ec.message();
    return false;
  }
  return true;
}
}  // namespace

int measure(Command& c, CliOptions& o, std::string& error) {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (c.command.size() || c.tryFixes) {
    // Checked in this order, each with its exit status: COMMAND (7), a GPU (3), ncu (4). Without a
    // GPU nothing can be measured, so a missing ncu is said only on a machine that has one.
    if (!c.command.empty()) {
      const std::string& cmd = c.command.front();
      auto runnable = [](const fs::path& p) {
        std::error_code e;
        return fs::is_regular_file(p, e) && access(p.c_str(), X_OK) == 0;
      };
      bool found = false;
      if (cmd.find('/') != std::string::npos) {
        found = runnable(cmd);
      } else if (const char* path = std::getenv("PATH")) {
        std::stringstream ss(path);
        for (std::string dir; !found && std::getline(ss, dir, ':');) found = runnable(fs::path(dir.empty() ? "." : dir) / cmd);
      }
      if (!found) {
        error = "cannot run '" + cmd + "': it does not exist or is not executable" +
                (cmd.find('/') == std::string::npos ? " (not on PATH; give a path, e.g. ./" + cmd + ")" : std::string());
        return kCommandNotFound;
      }
    }
    std::string why;
    if (!gpuVisible(why)) {
      error = why;
      return kNoGpu;
    }
    if (c.ncu.empty()) c.ncu = findNcu(o.frontend.cudaPath);
    else if (access(c.ncu.c_str(), X_OK) != 0) {
      error = "--ncu " + c.ncu + ": not an executable";
      return kNoNcu;
    }
    if (c.ncu.empty()) {
      error = "Nsight Compute's command line (ncu) was not found on PATH, in $CUDA_PATH/bin, /usr/local/cuda/bin or "
              "/opt/nvidia/nsight-compute: install it (it ships with the CUDA toolkit) or give --ncu PATH";
      return kNoNcu;
    }
  }
  std::string from = c.importPath;
  if (from.empty()) {
    c.workDir = c.outDir.empty() ? makeTempDir() : c.outDir;
    if (c.workDir.empty()) {
      error = "cannot create a temporary folder in " + fs::temp_directory_path().string();
      return 2;
    }
    RunOptions r;
    r.command = c.command;
    r.ncu = c.ncu;
    r.outDir = c.workDir;
    r.kernelFilter = c.kernelFilter.empty() ? "" : "regex:" + c.kernelFilter;
    r.launchCount = c.launchCount;
    r.verbose = o.frontend.verbose;
    if (!o.quiet) std::cerr << "gpuopt-lint: profiling '" << c.command.front() << "' with " << c.ncu << "\n";
    int rc = runNcu(r, error);
    if (rc) return rc;
    from = c.workDir;
  }
  int rc = importExport(from, c.profile, error);
  if (rc) return rc;
  if (o.files.empty()) {
    std::set<std::string> recorded, found, missing;
    for (const auto& k : c.profile.kernels)
      for (const auto& l : k.lines) recorded.insert(l.file);
    for (const auto& f : recorded) {
      if (isSystemPath(f)) continue;
      std::string here = locate(f, cwd);
      (here.empty() ? missing : found).insert(here.empty() ? f : here);
    }
    if (found.empty()) {
      std::string list;
      for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
      error = "the profile names source files that are not here (" + (list.empty() ? std::string("none") : list) +
              "): run from the folder you built in, or give the FILEs to lint";
      return 2;
    }
    if (!missing.empty() && !o.quiet)
      for (const auto& m : missing) std::cerr << "gpuopt-lint: profiled file not found here, not linted: " << m << "\n";
    o.files.assign(found.begin(), found.end());
  }
  return 0;
}

int joinAndTryFixes(Command& c, std::vector<FileResult>& results, const std::string& cwd, std::string& error) {
  joinProfile(c.profile, results);
  if (!c.tryFixes) return 0;
  // Findings with a mechanical fix on lines that ran.
  std::map<std::string, std::vector<Diagnostic*>> byFile;
  size_t n = 0;
  for (auto& r : results)
    for (auto& d : r.diags)
      if (!d.fixIts.empty() && d.measured && d.measured->verdict != "not executed in this run") {
        byFile[d.span.begin.file].push_back(&d);
        ++n;
      }
  if (n == 0) {
    std::cerr << "gpuopt-lint: --try-fixes: no finding with a mechanical fix ran in this profile\n";
    return 0;
  }
  if (c.workDir.empty()) c.workDir = makeTempDir();
  fs::path base = fs::path(c.workDir) / "try-fixes";
  fs::path before = base / "before", after = base / "after";
  std::error_code ec;
  fs::remove_all(base, ec);
  for (const auto& dir : {before, after})
    if (!copyTree(cwd, dir, c.workDir, error)) return 2;
  for (const auto& [file, diags] : byFile) {
    std::string rel = relativePath(file, cwd);
    if (rel.empty() || rel[0] == '/') {
      std::cerr << "gpuopt-lint: --try-fixes: " << file << " is outside the current folder; its fixes are not tried\n";
      continue;
    }
    std::ifstream in(after / rel, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<Diagnostic> ds;
    for (const auto* d : diags) {
      Diagnostic copy = *d;
      for (auto& fx : copy.fixIts) fx.span.begin.file = (after / rel).string();
      ds.push_back(std::move(copy));
    }
    std::string fixed = applyFixesToText(ss.str(), ds);
    std::ofstream out(after / rel, std::ios::binary | std::ios::trunc);
    out << fixed;
  }
  for (const auto& dir : {before, after}) {
    std::cerr << "gpuopt-lint: --try-fixes: building " << dir.string() << "\n";
    int rc = runProcess({"/bin/sh", "-c", c.build}, dir.string(), (dir / "gpuopt-build.log").string());
    if (rc != 0) {
      error = tail((dir / "gpuopt-build.log").string()) + "\ngpuopt-lint: error: --build \"" + c.build + "\" failed in " +
              dir.string() + " (exit status " + std::to_string(rc) + ")";
      return kBuildFailed;
    }
  }
  std::map<std::string, std::vector<double>> tBefore, tAfter;
  for (auto [dir, times] : {std::pair{before, &tBefore}, std::pair{after, &tAfter}}) {
    RunOptions r;
    r.command = c.command;
    r.ncu = c.ncu;
    r.outDir = (dir / "gpuopt-times").string();
    r.cwd = dir.string();
    r.kernelFilter = c.kernelFilter.empty() ? "" : "regex:" + c.kernelFilter;
    r.launchCount = c.launchCount;
    std::cerr << "gpuopt-lint: --try-fixes: timing " << c.runs << " runs in " << dir.string() << "\n";
    int rc = measureKernelTimes(r, c.runs, *times, error);
    if (rc) return rc;
  }
  for (auto& [file, diags] : byFile)
    for (auto* d : diags) {
      std::string k = d->measured->kernel.empty() ? baseName(d->function) : d->measured->kernel;
      double b = median(tBefore[k]), a = median(tAfter[k]);
      if (b <= 0 || a <= 0) continue;
      d->measured->values.push_back({"kernelMicrosecondsBefore", b});
      d->measured->values.push_back({"kernelMicrosecondsAfter", a});
      d->measured->values.push_back({"fixSpeedup", b / a});
      d->measured->text += fmt::format("; --try-fixes: '{}' took {:.1f} us before and {:.1f} us after the fix ({:.2f}x, "
                                       "median of {} runs)",
                                       k, b, a, b / a, c.runs);
    }
  return 0;
}

void finish(Command& c) {
  if (!c.workDir.empty() && c.outDir.empty()) {
    std::error_code ec;
    fs::remove_all(c.workDir, ec);
  }
}

}  // namespace gpuopt::profile
