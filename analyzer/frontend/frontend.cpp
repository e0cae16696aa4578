#include "analyzer/frontend/frontend.h"
#include "analyzer/frontend/nvcc_args.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <set>
#include <tuple>

#include <fmt/format.h>

#ifndef GPUOPT_CLANG_RESOURCE_DIR
#define GPUOPT_CLANG_RESOURCE_DIR ""
#endif

namespace gpuopt {
namespace fs = std::filesystem;

std::optional<std::string> checkInputFile(const std::string& path, unsigned long long maxBytes) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return std::string("no such file");
  if (fs::is_directory(st)) return std::string("is a directory (pass the .cu files, e.g. dir/*.cu)");
  if (!fs::is_regular_file(st)) return std::string("not a regular file");
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
  static const std::array<std::string_view, 11> ok = {".cu", ".cuh", ".cuda", ".h", ".hh", ".hpp",
                                                      ".hxx", ".cpp", ".cc", ".cxx", ".inl"};
  if (std::find(ok.begin(), ok.end(), ext) == ok.end())
    return fmt::format("not a CUDA source file (extension '{}'; expected .cu or .cuh, or a C++ "
                       "source/header)", ext.empty() ? std::string("none") : ext);
  auto size = fs::file_size(path, ec);
  if (ec) return std::string("cannot read file size");
  if (size > maxBytes)
    return fmt::format("file too large ({} bytes, limit {}; raise it with --max-file-size)", size, maxBytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string("cannot open file for reading");
  std::array<char, 8192> buf{};
  in.read(buf.data(), buf.size());
  auto n = in.gcount();
  if (std::find(buf.begin(), buf.begin() + n, '\0') != buf.begin() + n)
    return std::string("binary file (contains NUL bytes), not CUDA source");
  return std::nullopt;
}

std::string findResourceDir(const FrontendOptions& o, std::string& error) {
  std::vector<std::pair<std::string, std::string>> candidates;
  if (!o.resourceDir.empty()) candidates.emplace_back(o.resourceDir, "--resource-dir");
  else if (const char* env = std::getenv("GPUOPT_LINT_RESOURCE_DIR"); env && *env)
    candidates.emplace_back(env, "$GPUOPT_LINT_RESOURCE_DIR");
  else candidates.emplace_back(GPUOPT_CLANG_RESOURCE_DIR, "the build's Clang");
  for (auto& [dir, from] : candidates) {
    if (!dir.empty() && fs::exists(fs::path(dir) / "include" / "__clang_cuda_runtime_wrapper.h")) return dir;
    error = fmt::format("Clang resource directory '{}' (from {}) has no include/__clang_cuda_runtime_wrapper.h; "
                        "install clang-22 or pass --resource-dir=$(clang-22 -print-resource-dir)",
                        dir, from);
  }
  return {};
}

static bool looksLikeCuda(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p / "include" / "cuda_runtime.h", ec);
}

std::string findCudaPath(const FrontendOptions& o, std::vector<std::string>* log) {
  auto say = [&](std::string s) { if (log) log->push_back(std::move(s)); };
  if (o.noCuda) { say("CUDA toolkit: not used (--no-cuda)"); return {}; }
  if (!o.cudaPath.empty()) {
    if (looksLikeCuda(o.cudaPath)) { say("CUDA toolkit: " + o.cudaPath + " (--cuda-path)"); return o.cudaPath; }
    say("CUDA toolkit: --cuda-path " + o.cudaPath + " has no include/cuda_runtime.h; ignoring it");
  }
  if (const char* env = std::getenv("CUDA_PATH"); env && *env && looksLikeCuda(env)) {
    say(std::string("CUDA toolkit: ") + env + " ($CUDA_PATH)");
    return env;
  }
  if (const char* path = std::getenv("PATH")) {
    std::string p(path);
    size_t start = 0;
    while (start <= p.size()) {
      size_t end = p.find(':', start);
      fs::path dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
      std::error_code ec;
      if (!dir.empty() && fs::exists(dir / "nvcc", ec)) {
        fs::path root = fs::canonical(dir / "nvcc", ec).parent_path().parent_path();
        if (!ec && looksLikeCuda(root)) { say("CUDA toolkit: " + root.string() + " (nvcc on PATH)"); return root.string(); }
      }
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  if (looksLikeCuda("/usr/local/cuda")) { say("CUDA toolkit: /usr/local/cuda"); return "/usr/local/cuda"; }
  say("CUDA toolkit: none found; parsing with gpuopt-lint's bundled CUDA declarations");
  return {};
}

std::vector<std::string> filterCompileCommand(const std::vector<std::string>& cmd, const std::string& directory,
                                              std::vector<std::string>& dropped) {
  // nvcc's, GCC's and Clang's spellings, response files: analyzer/frontend/nvcc_args.cpp.
  TranslatedCommand t = translateCompileCommand(cmd, directory);
  dropped.insert(dropped.end(), t.dropped.begin(), t.dropped.end());
  dropped.insert(dropped.end(), t.problems.begin(), t.problems.end());
  return t.args();
}

std::string findCompileCommandsDir(const std::string& file, const std::string& explicitDir) {
  std::error_code ec;
  if (!explicitDir.empty()) return explicitDir;
  fs::path dir = fs::absolute(file, ec).parent_path();
  while (!dir.empty()) {
    if (fs::exists(dir / "compile_commands.json", ec)) return dir.string();
    if (dir == dir.root_path()) break;
    dir = dir.parent_path();
  }
  return {};
}

ParseCommand buildParseCommand(const std::string& file, const FrontendOptions& o,
                               const std::string& resourceDir, const std::string& cudaPath,
                               const std::vector<std::string>& dbArgs,
                               const std::vector<std::string>& layoutDirs) {
  ParseCommand pc;
  auto& a = pc.args;
  a = {"clang++", "-fsyntax-only", "-x", "cuda", "-resource-dir", resourceDir,
       "--cuda-gpu-arch=" + o.gpuArch, "-Wno-unknown-cuda-version", "-w", "-ferror-limit=0", "-fno-caret-diagnostics",
       // nvcc accepts `register` in C++17 (GCC and EDG warn); Clang's warning is an error by default.
       "-Wno-register",
       // `X::template f(args)` without a template argument list: nvcc (EDG) and GCC accept it
       // (CUB 2.x's thread_store.cuh); Clang 19+ makes it an error by default.
       "-Wno-missing-template-arg-list-after-template-kw"};
  bool hasStd = std::any_of(dbArgs.begin(), dbArgs.end(), [](const std::string& s) { return s.rfind("-std=", 0) == 0; }) ||
                std::any_of(o.extraArgs.begin(), o.extraArgs.end(), [](const std::string& s) { return s.rfind("-std=", 0) == 0; });
  if (!hasStd) a.push_back("-std=c++17");
  if (!cudaPath.empty()) {
    // Device-side parse: kernels (and code under __CUDA_ARCH__) as the GPU sees them; host function
    // bodies are in the same AST, so one parse serves every rule.
    a.push_back("--cuda-device-only");
    a.push_back("-fgpu-rdc");  // device-side kernel launches (dynamic parallelism) parse
    a.push_back("--cuda-path=" + cudaPath);
    // CUDA 13 moved the C++ core libraries (cuda/std, cub, thrust) under include/cccl. nvcc.profile
    // gives it as SYSTEM_INCLUDES (`-isystem`), searched after every -I of the command: a project
    // that brings its own CUB or Thrust (-I third_party/cub) gets its own, as with nvcc.
    if (fs::exists(fs::path(cudaPath) / "include" / "cccl")) {
      a.push_back("-isystem");
      a.push_back(cudaPath + "/include/cccl");
    }
    // Host min/max overloads nvcc has and Clang lacks (analyzer/cuda_stub/gpuopt_nvcc_compat.h).
    a.push_back("-include");
    a.push_back(std::string(kBundledIncludeDir) + "/gpuopt_nvcc_compat.h");
  } else {
    // Bundled declarations: host-side parse (device-only references to host math would be
    // errors without the toolkit's device overloads).
    pc.bundledCuda = true;
    a.push_back("--cuda-host-only");
    a.push_back("-fgpu-rdc");  // device-side kernel launches (dynamic parallelism) parse
    a.push_back("-nocudainc");
    a.push_back("-nocudalib");
    a.push_back("-isystem" + std::string(kBundledIncludeDir));  // system headers, as the toolkit's are
    a.push_back("-include");
    a.push_back(std::string(kBundledIncludeDir) + "/gpuopt_cuda_builtin.h");
  }
  a.push_back("-D__GPUOPT_LINT__=1");
  a.insert(a.end(), dbArgs.begin(), dbArgs.end());
  a.insert(a.end(), o.extraArgs.begin(), o.extraArgs.end());
  for (const auto& d : layoutDirs) {
    a.push_back("-idirafter");
    a.push_back(d);
  }
  a.push_back(file);
  return pc;
}

std::string repositoryRoot(const std::string& file) {
  std::error_code ec;
  fs::path dir = fs::absolute(file, ec).lexically_normal().parent_path();
  while (!dir.empty()) {
    if (fs::exists(dir / ".git", ec)) return dir.string();
    if (dir == dir.root_path()) break;
    dir = dir.parent_path();
  }
  return {};
}

std::vector<std::string> projectLayoutIncludeDirs(const std::string& file) {
  std::error_code ec;
  fs::path dir = fs::absolute(file, ec).lexically_normal().parent_path();
  std::string root = repositoryRoot(file);
  std::vector<std::string> out;
  auto add = [&](const fs::path& p) {
    if (!fs::is_directory(p, ec)) return;
    std::string s = p.lexically_normal().string();
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  add(dir);
  for (int level = 0; !dir.empty(); ++level) {
    for (const char* sub : {"include", "inc", "common", "common/inc", "Common"}) add(dir / sub);
    if (!root.empty() ? dir.string() == root : level >= 4) break;
    if (dir == dir.root_path()) break;
    dir = dir.parent_path();
  }
  // The repository root itself, last: `#include "kernels/common.cuh"` written from the root, as
  // a build run there (-I.) resolves it.
  if (!root.empty()) add(root);
  return out;
}

std::vector<std::string> commandSources(const std::string& file, const std::string& explicitDbDir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (std::string dir = findCompileCommandsDir(file, explicitDbDir); !dir.empty())
    for (const char* name : {"compile_commands.json", "compile_flags.txt"})
      if (fs::path p = fs::path(dir) / name; fs::exists(p, ec)) out.push_back(p.string());
  std::string mk;
  std::vector<std::string> included;
  makefileFlags(file, &mk, &included);
  if (!mk.empty()) out.push_back(mk);
  out.insert(out.end(), included.begin(), included.end());
  return out;
}

std::vector<std::string> makefileFlags(const std::string& file, std::string* makefile, std::vector<std::string>* included) {
  std::error_code ec;
  fs::path dir = fs::absolute(file, ec).lexically_normal().parent_path();
  fs::path mk;
  for (int up = 0; up < 3 && mk.empty() && !dir.empty(); ++up) {
    for (const char* n : {"GNUmakefile", "makefile", "Makefile"})
      if (fs::is_regular_file(dir / n, ec)) {
        mk = dir / n;
        break;
      }
    if (mk.empty()) {
      if (dir == dir.root_path()) break;
      dir = dir.parent_path();
    }
  }
  std::vector<std::string> out;
  if (mk.empty()) return out;
  if (makefile) *makefile = mk.string();
  int depth = 0;
  std::set<std::string> read;  // Makefiles read (an `include` cycle is read once)
  std::function<void(const fs::path&)> readMakefile;
  auto take = [&](const std::string& l) {
    // Conditional blocks: flags for other configurations (DEBUG, another vendor) are not ours.
    std::string t = l.substr(l.find_first_not_of(" \t") == std::string::npos ? l.size() : l.find_first_not_of(" \t"));
    if (t.rfind("ifeq", 0) == 0 || t.rfind("ifneq", 0) == 0 || t.rfind("ifdef", 0) == 0 || t.rfind("ifndef", 0) == 0) {
      ++depth;
      return;
    }
    if (t.rfind("endif", 0) == 0) {
      depth = std::max(0, depth - 1);
      return;
    }
    if (depth > 0 || t.empty() || t[0] == '#' || (!l.empty() && l[0] == '\t')) return;  // recipes are not flags
    std::istringstream words(t);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    // `include common.mk` (also -include, sinclude): its flags are the project's too (relative to
    // the Makefile's folder, where make runs; names with make variables are not followed).
    if (!w.empty() && (w[0] == "include" || w[0] == "-include" || w[0] == "sinclude")) {
      for (size_t i = 1; i < w.size(); ++i)
        if (w[i].find('$') == std::string::npos)
          readMakefile(fs::path(w[i]).is_absolute() ? fs::path(w[i]) : mk.parent_path() / w[i]);
      return;
    }
    for (size_t i = 0; i < w.size(); ++i) {
      std::string x = w[i];
      std::string flag = x.rfind("-I", 0) == 0 ? "-I" : x.rfind("-D", 0) == 0 ? "-D" : "";
      if (flag.empty()) continue;
      std::string value = x.size() > 2 ? x.substr(2) : (i + 1 < w.size() ? w[++i] : "");
      if (value.empty() || value.find('$') != std::string::npos || value.find('`') != std::string::npos) continue;
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
        value = value.substr(1, value.size() - 2);
      if (flag == "-I") {
        fs::path p = fs::path(value).is_absolute() ? fs::path(value) : mk.parent_path() / value;
        if (!fs::is_directory(p, ec)) continue;
        value = p.lexically_normal().string();
      }
      std::string a = flag + value;
      if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
    }
  };
  readMakefile = [&](const fs::path& path) {
    std::string key = path.lexically_normal().string();
    if (read.size() > 16 || !read.insert(key).second || !fs::is_regular_file(path, ec)) return;
    if (included && key != mk.string()) included->push_back(key);
    std::ifstream in(path);
    std::string line, logical;
    int outer = depth;  // an included file's conditionals are its own
    depth = 0;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty() && line.back() == '\\') {
        logical += line.substr(0, line.size() - 1) + " ";
        continue;
      }
      take(logical + line);
      logical.clear();
    }
    if (!logical.empty()) take(logical);
    depth = outer;
  };
  readMakefile(mk);
  return out;
}

bool normalizeLaunchChevrons(std::string& text) {
  bool changed = false;
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  size_t pos = 0;
  while ((pos = text.find("<<", pos)) != std::string::npos) {
    size_t j = pos + 2;
    while (j < text.size() && blank(text[j])) ++j;
    // `<<` blanks `<`, and not `<< <<` (a shift of a shift is not valid C++ either, but be strict).
    if (j == pos + 2 || j >= text.size() || text[j] != '<' || (j + 1 < text.size() && text[j + 1] == '<')) {
      pos += 2;
      continue;
    }
    // Not an operator's name with template arguments (`friend ostream& operator << <>(...)`), and
    // only a launch that closes with `>>` within the statement.
    size_t b = pos;
    while (b > 0 && blank(text[b - 1])) --b;
    const bool opName = b >= 8 && text.compare(b - 8, 8, "operator") == 0 &&
                        (b == 8 || !(std::isalnum(static_cast<unsigned char>(text[b - 9])) || text[b - 9] == '_'));
    size_t close = text.find(">>", j + 1);
    size_t end = text.find(';', j + 1);
    if (opName || close == std::string::npos || (end != std::string::npos && end < close)) {
      pos += 2;
      continue;
    }
    // Move the third '<' next to the first two; the blanks go after it.
    std::rotate(text.begin() + static_cast<long>(pos + 2), text.begin() + static_cast<long>(j),
                text.begin() + static_cast<long>(j + 1));
    changed = true;
    // The closing `>> >` of the same launch: the first `>>` after it (within the statement).
    {
      size_t m = close + 2;
      while (m < text.size() && blank(text[m])) ++m;
      if (m > close + 2 && m < text.size() && text[m] == '>') {
        std::rotate(text.begin() + static_cast<long>(close + 2), text.begin() + static_cast<long>(m),
                    text.begin() + static_cast<long>(m + 1));
      }
    }
    pos = j + 1;
  }
  return changed;
}

std::vector<IncludeDirective> scanIncludes(const std::string& text) {
  std::vector<IncludeDirective> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    size_t i = pos;
    auto skip = [&] { while (i < eol && (text[i] == ' ' || text[i] == '\t')) ++i; };
    skip();
    if (i < eol && text[i] == '#') {
      ++i;
      skip();
      if (text.compare(i, 7, "include") == 0) {
        i += 7;
        skip();
        if (i < eol && (text[i] == '"' || text[i] == '<')) {
          char close = text[i] == '"' ? '"' : '>';
          size_t e = text.find(close, i + 1);
          if (e != std::string::npos && e < eol) out.push_back({text.substr(i + 1, e - i - 1), close == '>'});
        }
      }
    }
    pos = eol + 1;
  }
  return out;
}

bool isSourceExtension(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
  for (const char* e : {".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".inl"})
    if (ext == e) return true;
  return false;
}

namespace {
std::string readSmallFile(const fs::path& p) {
  std::error_code ec;
  if (fs::file_size(p, ec) > (4u << 20) || ec) return {};
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
}  // namespace

std::vector<std::string> findIncluders(const std::string& target, const std::vector<std::string>& inputs,
                                       const std::vector<std::string>& dbFiles, size_t max, IncluderScan* scanned) {
  std::error_code ec;
  auto canon = [&](const fs::path& p) { return fs::weakly_canonical(fs::absolute(p, ec), ec).string(); };
  // The candidates: given files first, then the folders around the target.
  std::vector<std::string> cands;
  std::map<std::string, int> rank;  // 0 input, 1 database entry, 2 found in a folder
  auto addCand = [&](const fs::path& p, int r) {
    std::string c = canon(p);
    if (c.empty() || !isSourceExtension(c)) return;
    auto [it, fresh] = rank.emplace(c, r);
    if (fresh) cands.push_back(c);
    else it->second = std::min(it->second, r);
  };
  for (const auto& f : inputs) addCand(f, 0);
  for (const auto& f : dbFiles) addCand(f, 1);
  fs::path dir = fs::path(canon(target)).parent_path();
  for (int up = 0; up < 3 && !dir.empty(); ++up) {
    if (scanned) scanned->folders.push_back(dir.string());
    size_t n = 0;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (++n > 2000) break;
      if (it->is_regular_file(ec)) addCand(it->path(), 2);
    }
    if (dir == dir.root_path()) break;
    // Not above the repository (a `.git` folder, or the file a worktree has): what lies outside
    // it is no includer of its files, and a busy /tmp or home folder would make every stored
    // result of the repository stale.
    if (fs::exists(dir / ".git", ec)) break;
    dir = dir.parent_path();
  }
  // Who includes whom, among the candidates (and the target).
  std::string tgt = canon(target);
  std::map<std::string, std::vector<std::string>> includedBy;  // file -> candidates including it
  for (const auto& c : cands) {
    if (c == tgt) continue;
    std::string text = readSmallFile(c);
    if (scanned) scanned->files.push_back(c);
    if (text.find("include") == std::string::npos) continue;
    fs::path cdir = fs::path(c).parent_path();
    auto layout = projectLayoutIncludeDirs(c);
    if (scanned) {
      // Where its includes resolve: a file added to one of these folders can change that.
      scanned->folders.push_back(cdir.string());
      scanned->folders.insert(scanned->folders.end(), layout.begin(), layout.end());
    }
    for (const auto& inc : scanIncludes(text)) {
      std::vector<fs::path> tries = {cdir / inc.spelled};
      for (const auto& d : layout) tries.push_back(fs::path(d) / inc.spelled);
      for (const auto& t : tries) {
        if (!fs::exists(t, ec)) continue;
        std::string r = canon(t);
        if (rank.count(r) || r == tgt) includedBy[r].push_back(c);
        break;
      }
    }
  }
  // Walk up from the target to the outermost includers.
  std::vector<std::pair<std::string, int>> found;  // file, depth
  std::set<std::string> seen = {tgt};
  std::vector<std::pair<std::string, int>> stack = {{tgt, 0}};
  while (!stack.empty()) {
    auto [f, depth] = stack.back();
    stack.pop_back();
    for (const auto& inc : includedBy[f]) {
      if (!seen.insert(inc).second) continue;
      found.push_back({inc, depth + 1});
      if (depth < 4) stack.push_back({inc, depth + 1});
    }
  }
  auto isRoot = [&](const std::string& f) { return includedBy[f].empty(); };
  auto isCu = [](const std::string& f) { return fs::path(f).extension() == ".cu"; };
  std::stable_sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
    return std::make_tuple(!isRoot(a.first), rank[a.first], !isCu(a.first), a.second) <
           std::make_tuple(!isRoot(b.first), rank[b.first], !isCu(b.first), b.second);
  });
  std::vector<std::string> out;
  for (const auto& [f, d] : found) {
    if (out.size() >= max) break;
    out.push_back(f);
  }
  return out;
}

}  // namespace gpuopt
