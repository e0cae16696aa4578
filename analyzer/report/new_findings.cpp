#include "analyzer/report/new_findings.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

namespace gpuopt {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
std::string normal(const std::string& path, const std::string& base = "") {
  std::error_code ec;
  fs::path p = base.empty() ? fs::absolute(path, ec) : fs::path(base) / path;
  return fs::weakly_canonical(p, ec).lexically_normal().string();
}

std::string readAll(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::stringstream ss;
  if (in) ss << in.rdbuf();
  return ss.str();
}

// Runs argv in `cwd`; stdout and stderr captured apart. Returns the exit status (127: not started).
int capture(const std::vector<std::string>& argv, const std::string& cwd, std::string& out, std::string& err) {
  char outName[] = "/tmp/gpuopt-lint-git-out.XXXXXX", errName[] = "/tmp/gpuopt-lint-git-err.XXXXXX";
  int fo = mkstemp(outName), fe = mkstemp(errName);
  if (fo < 0 || fe < 0) return 127;
  pid_t pid = fork();
  if (pid == 0) {
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(127);
    dup2(fo, 1);
    dup2(fe, 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (pid > 0)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  close(fo);
  close(fe);
  bool ok = false;
  out = readAll(outName, ok);
  err = readAll(errName, ok);
  std::remove(outName);
  std::remove(errName);
  if (pid < 0) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string firstLine(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}
}  // namespace

// --- baseline ---------------------------------------------------------------------------------------

bool writeBaseline(const std::string& path, const std::vector<FileResult>& results, size_t& written, std::string& error) {
  std::string dir = fs::path(normal(path)).parent_path().string();
  json findings = json::array();
  for (const auto& r : results)
    for (const auto& d : r.diags) {
      std::string abs = normal(d.span.begin.file);
      fs::path rel = fs::path(abs).lexically_relative(dir);
      std::string file = rel.empty() || *rel.begin() == ".." ? abs : rel.generic_string();
      findings.push_back({{"file", file},
                          {"rule", d.ruleId},
                          {"fingerprint", d.fingerprint},
                          {"line", d.span.begin.line},
                          {"message", d.message}});
    }
  json doc = {{"tool", "gpuopt-lint"},
              {"version", 1},
              {"about", "findings gpuopt-lint --baseline does not report: matched by file (relative to this "
                        "file's folder), rule and fingerprint; the line and message are for reading only"},
              {"findings", findings}};
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  // A message or file name with bytes that are not UTF-8: written as U+FFFD, never an abort.
  out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  out.flush();
  if (!out) {
    error = "cannot write the baseline '" + path + "'";
    return false;
  }
  written = findings.size();
  return true;
}

bool Baseline::load(const std::string& path, std::string& error) {
  bool ok = false;
  std::string text = readAll(path, ok);
  if (!ok) {
    error = path + ": cannot read the baseline (write one with --write-baseline " + path + ")";
    return false;
  }
  std::string dir = fs::path(normal(path)).parent_path().string();
  try {
    json doc = json::parse(text);
    if (!doc.is_object() || doc.value("tool", "") != "gpuopt-lint" || !doc.contains("findings") || !doc["findings"].is_array())
      throw std::runtime_error("not a gpuopt-lint baseline (no 'findings' list)");
    if (doc.value("version", 0) != 1) throw std::runtime_error("baseline version " + doc["version"].dump() + " is not 1");
    for (const auto& f : doc["findings"]) {
      std::string file = f.at("file").get<std::string>();
      std::string abs = fs::path(file).is_absolute() ? normal(file) : normal(file, dir);
      ++entries_[{abs, f.at("rule").get<std::string>(), f.at("fingerprint").get<std::string>()}];
    }
  } catch (const std::exception& e) {
    error = path + ": invalid baseline: " + e.what();
    return false;
  }
  return true;
}

size_t Baseline::apply(std::vector<FileResult>& results) {
  auto left = entries_;
  size_t removed = 0;
  for (auto& r : results)
    std::erase_if(r.diags, [&](const Diagnostic& d) {
      auto it = left.find({normal(d.span.begin.file), d.ruleId, d.fingerprint});
      if (it == left.end() || it->second == 0) return false;
      --it->second;
      ++removed;
      return true;
    });
  unmatched_ = 0;
  for (const auto& [k, n] : left) unmatched_ += n;
  return removed;
}

// --- changed lines ----------------------------------------------------------------------------------

bool ChangedLines::parse(const std::string& diff, const std::string& root, const std::string& cwd, std::string& error) {
  static const std::regex hunk(R"(^@@ -[0-9]+(?:,[0-9]+)? \+([0-9]+)(?:,([0-9]+))? @@)");
  std::istringstream in(diff);
  std::string line, current;
  bool sawFile = false;
  auto resolve = [&](std::string p) {
    // "+++ b/src/k.cu\t2026-..." (diff -u puts a date after a tab).
    if (auto tab = p.find('\t'); tab != std::string::npos) p.erase(tab);
    if (p.size() >= 2 && p.front() == '"' && p.back() == '"') p = p.substr(1, p.size() - 2);
    std::error_code ec;
    std::vector<std::string> tries;
    if (p.rfind("b/", 0) == 0) {
      if (!root.empty()) tries.push_back(normal(p.substr(2), root));
      tries.push_back(normal(p.substr(2), cwd));
    }
    if (!root.empty()) tries.push_back(normal(p, root));
    tries.push_back(fs::path(p).is_absolute() ? normal(p) : normal(p, cwd));
    for (const auto& t : tries)
      if (fs::exists(t, ec)) return t;
    return tries.back();
  };
  unsigned at = 0, left = 0;  // inside a hunk: the next new-side line number, new-side lines left
  auto mark = [&](unsigned n) {
    auto& v = ranges_[current];
    if (!v.empty() && v.back().second + 1 == n) v.back().second = n;
    else v.push_back({n, n});
  };
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (left > 0 || (!line.empty() && line[0] == '-' && line.rfind("--- ", 0) != 0)) {
      // A hunk's body: context lines and '+' lines count on the new side; '-' lines do not.
      if (line.empty() || line[0] == ' ') ++at, --left;
      else if (line[0] == '+') mark(at++), --left;
      continue;  // '-' and '\ No newline at end of file'
    }
    if (line.rfind("+++ ", 0) == 0) {
      sawFile = true;
      std::string p = line.substr(4);
      current = p == "/dev/null" ? std::string() : resolve(p);
      continue;
    }
    std::smatch m;
    if (std::regex_search(line, m, hunk)) {
      at = static_cast<unsigned>(std::stoul(m[1].str()));
      left = m[2].matched ? static_cast<unsigned>(std::stoul(m[2].str())) : 1;
      if (current.empty()) left = 0;  // a deleted file
    }
  }
  if (!sawFile && diff.find_first_not_of(" \t\r\n") != std::string::npos) {
    error = "the diff has no '+++ FILE' header: give a unified diff (git diff -U0, diff -u)";
    return false;
  }
  return true;
}

bool ChangedLines::fromGit(const std::string& rev, const std::string& cwd, std::vector<std::string>& files, std::string& error) {
  std::string out, err;
  if (capture({"git", "rev-parse", "--show-toplevel"}, cwd, out, err) != 0) {
    error = "--diff " + rev + ": not in a git repository (" + firstLine(err.empty() ? out : err) + ")";
    return false;
  }
  std::string root = firstLine(out);
  if (capture({"git", "rev-parse", "--verify", "--quiet", rev + "^{commit}"}, cwd, out, err) != 0) {
    error = "--diff " + rev + ": git does not know this revision";
    return false;
  }
  const bool listFiles = files.empty();
  std::vector<std::string> args = {"git", "-c", "core.quotePath=false", "diff", "-U0", "--no-color", "--no-ext-diff", "-M", rev, "--"};
  if (listFiles) args.insert(args.end(), {"*.cu", "*.cuh"});
  else args.insert(args.end(), files.begin(), files.end());
  if (capture(args, cwd, out, err) != 0) {
    error = "--diff " + rev + ": git diff failed: " + firstLine(err);
    return false;
  }
  if (!parse(out, root, cwd, error)) return false;
  // Files git does not track are new: every line of them is changed.
  std::vector<std::string> untracked = {"git", "ls-files", "--others", "--exclude-standard", "-z", "--"};
  if (listFiles) untracked.insert(untracked.end(), {"*.cu", "*.cuh"});
  else untracked.insert(untracked.end(), files.begin(), files.end());
  if (capture(untracked, cwd, out, err) == 0) {
    std::string f;
    std::istringstream in(out);
    while (std::getline(in, f, '\0'))
      if (!f.empty()) whole_[normal(f, cwd)] = true;
  }
  if (listFiles) {
    std::set<std::string> seen;
    auto rel = [&](const std::string& abs) {
      fs::path r = fs::path(abs).lexically_relative(normal(cwd));
      return r.empty() || *r.begin() == ".." ? abs : r.string();
    };
    for (const auto& [f, v] : ranges_)
      if (!v.empty() && seen.insert(f).second) files.push_back(rel(f));
    for (const auto& [f, w] : whole_)
      if (seen.insert(f).second) files.push_back(rel(f));
  }
  return true;
}

bool ChangedLines::changed(const std::string& file, unsigned line) const {
  std::string f = normal(file);
  if (whole_.count(f)) return true;
  auto it = ranges_.find(f);
  if (it == ranges_.end()) return false;
  for (const auto& [a, b] : it->second)
    if (line >= a && line <= b) return true;
  return false;
}

std::vector<std::string> ChangedLines::files() const {
  std::vector<std::string> out;
  for (const auto& [f, v] : ranges_)
    if (!v.empty()) out.push_back(f);
  for (const auto& [f, w] : whole_)
    if (!ranges_.count(f)) out.push_back(f);
  return out;
}

size_t ChangedLines::apply(std::vector<FileResult>& results) const {
  size_t removed = 0;
  for (auto& r : results)
    std::erase_if(r.diags, [&](const Diagnostic& d) {
      bool keep = changed(d.span.begin.file, d.span.begin.line);
      for (const auto& rel : d.related) keep = keep || changed(rel.begin.file, rel.begin.line);
      removed += keep ? 0 : 1;
      return !keep;
    });
  return removed;
}

}  // namespace gpuopt
