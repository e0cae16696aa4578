// Helpers for tests that run the gpuopt-lint binary.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <regex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gpuopt::test {

// Shell words for a run whose parse crashes on purpose: what the crashed parse was building is
// abandoned, not freed (analyzer/frontend/crash_guard.h), so in the Sanitize build (make sanitize)
// LeakSanitizer's check at exit is left out for that run; every other check stays. No effect in
// other builds.
inline const std::string kNoLeakCheckAfterCrash = "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\"";

struct RunResult {
  int rc = -1;
  std::string out, err;
};

inline std::string readFile(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void writeFile(const std::string& p, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(p).parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// Runs `args` (shell words, already quoted where needed) with the binary; captures both streams.
// `env`: NAME='value' words set for the run.
inline RunResult runLint(const std::string& args, const std::string& cwd = "", const std::string& env = "") {
  static int counter = 0;
  std::string errFile = (std::filesystem::temp_directory_path() / ("gpuopt-test-err-" + std::to_string(::getpid()) + "-" +
                                                                   std::to_string(counter++)))
                            .string();
  // The tests' cache (preambles, stored results) is theirs: in the build folder, never ~/.cache.
  std::string cmd = (cwd.empty() ? "" : "cd '" + cwd + "' && ") + std::string("XDG_CACHE_HOME='") + GPUOPT_TEST_CACHE_DIR +
                    "' " + env + " '" + GPUOPT_LINT_BIN + "' " + args +
                    " 2>'" + errFile + "'";
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = readFile(errFile);
  std::filesystem::remove(errFile);
  return r;
}

// Two folders deep under the system's temporary folder: a kernel with no launch is searched for an
// includer in its folder and the two above, and those then hold folders only, never the source
// files other processes (nvcc's tmpxft_*.cpp, other tests) create and remove in /tmp, which would
// make a stored result stale between two runs of one test.
inline std::string tempDir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / "gpuopt-tests" / std::to_string(::getpid()) / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

// The "// expect: rule-id[, rule-id]" annotations of a source text: (line, rule) pairs. A rule id
// may carry the severity the finding must have: `expect: missing-syncthreads(warning)`.
inline std::vector<std::tuple<int, std::string, std::string>> expectAnnotationsWithSeverity(const std::string& text) {
  std::vector<std::tuple<int, std::string, std::string>> out;
  std::istringstream in(text);
  std::string line;
  static const std::regex re(R"(expect: ([a-z-]+(?:\([a-z]+\))?(\s*,\s*[a-z-]+(?:\([a-z]+\))?)*))");
  for (int n = 1; std::getline(in, line); ++n) {
    std::smatch m;
    if (!std::regex_search(line, m, re)) continue;
    std::stringstream ids(m[1].str());
    for (std::string id; std::getline(ids, id, ',');) {
      id.erase(0, id.find_first_not_of(' '));
      std::string severity;
      if (size_t p = id.find('('); p != std::string::npos) {
        severity = id.substr(p + 1, id.size() - p - 2);
        id.erase(p);
      }
      out.emplace_back(n, id, severity);
    }
  }
  return out;
}

inline std::vector<std::pair<int, std::string>> expectAnnotations(const std::string& text) {
  std::vector<std::pair<int, std::string>> out;
  for (const auto& [line, rule, severity] : expectAnnotationsWithSeverity(text)) out.emplace_back(line, rule);
  return out;
}

}  // namespace gpuopt::test
