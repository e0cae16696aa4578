#include "analyzer/frontend/nvcc_args.h"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string_view>

namespace gpuopt {
namespace fs = std::filesystem;

std::string TranslatedArg::origin() const {
  std::string s = "`" + spelled + "`";
  if (!responseFile.empty()) s += " (from " + responseFile + ")";
  return s;
}

std::vector<std::string> TranslatedCommand::args() const {
  std::vector<std::string> out;
  for (const auto& k : kept) out.insert(out.end(), k.args.begin(), k.args.end());
  return out;
}

std::vector<std::string> TranslatedCommand::includeOrigins() const {
  std::vector<std::string> out;
  for (const auto& k : kept) {
    if (k.args.empty()) continue;
    const std::string& f = k.args[0];
    bool include = f.rfind("-I", 0) == 0 || f == "-isystem" || f == "-iquote" || f == "-idirafter";
    if (!include) continue;
    std::string flat;
    for (const auto& a : k.args) flat += (flat.empty() ? "" : " ") + a;
    out.push_back(flat + " from " + k.origin());
  }
  return out;
}

std::vector<std::string> splitResponseFile(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  bool inWord = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\')) cur += text[++i];
      else cur += c;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (inWord) out.push_back(cur);
      cur.clear();
      inWord = false;
      continue;
    }
    inWord = true;
    if (c == '"' || c == '\'') quote = c;
    else if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] == '\n') ++i;  // a continued line
      else cur += text[++i];
    } else cur += c;
  }
  if (inWord) out.push_back(cur);
  return out;
}

namespace {

std::optional<std::string> readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool isNvccName(const std::string& argv0) {
  std::string base = fs::path(argv0).filename().string();
  return base == "nvcc" || base == "nvcc.exe";
}

// nvcc's options that take a value, long and short names (nvcc --help of CUDA 13), other than the
// ones translated below. Dropped with their value, in every spelling (`-o f`, `-o=f`).
const std::set<std::string_view>& nvccValueOptions() {
  static const std::set<std::string_view> s = {
      "--output-file", "-o", "--library", "-l", "--library-path", "-L", "--output-directory", "-odir",
      "--archiver-binary", "-arbin", "--cudart", "-cudart", "--cudadevrt", "-cudadevrt", "--libdevice-directory",
      "-ldir", "--target-directory", "-target-dir", "--optimization-info", "-opt-info", "--optimize", "-O", "--dopt",
      "-dopt", "--ftemplate-backtrace-limit", "-ftemplate-backtrace-limit", "--ftemplate-depth", "-ftemplate-depth",
      "--x", "-x", "--machine", "-m", "--linker-options", "-Xlinker", "--archive-options", "-Xarchive",
      "--ptxas-options", "-Xptxas", "--nvlink-options", "-Xnvlink", "-Xcudafe", "--cudafe-options",
      "--static-global-template-stub", "-static-global-template-stub", "--device-entity-has-hidden-visibility",
      "-device-entity-has-hidden-visibility", "--threads", "-t", "--split-compile", "-split-compile",
      "--split-compile-extended", "-split-compile-extended", "--fdevice-time-trace", "--keep-dir", "-keep-dir",
      "--time", "--run-args", "-run-args", "--input-drive-prefix", "-idp", "--dependency-drive-prefix", "-ddp",
      "--drive-prefix", "-dp", "--dependency-target-name", "-MT", "--dependency-output", "-MF", "-MQ",
      "--gpu-architecture", "-arch", "--gpu-code", "-code", "--generate-code", "-gencode",
      "--relocatable-device-code", "-rdc", "--entries", "-e", "--maxrregcount", "-maxrregcount", "--ftz", "-ftz",
      "--prec-div", "-prec-div", "--prec-sqrt", "-prec-sqrt", "--fmad", "-fmad", "--default-stream",
      "-default-stream", "--diag-error", "-diag-error", "--diag-suppress", "-diag-suppress", "--diag-warn",
      "-diag-warn", "--host-linker-script", "-hls", "--brief-diagnostics", "-brief-diag", "--jump-table-density",
      "-jtd", "--device-stack-protector", "-device-stack-protector", "--compress-mode", "-compress-mode",
      "--frandom-seed", "-frandom-seed", "--sanitize", "-sanitize"};
  return s;
}

// GCC's and Clang's options that take a separate value (and are not translated).
const std::set<std::string_view>& hostValueOptions() {
  static const std::set<std::string_view> s = {
      "-o", "-MF", "-MT", "-MQ", "-MJ", "-x", "-target", "--target", "-Xclang", "-mllvm", "-Xlinker", "-Xarch_device",
      "-Xarch_host", "-Xcuda-ptxas", "-Xcuda-fatbinary", "-isysroot", "--sysroot", "-arch", "-L", "-l", "-aux-info",
      "-dumpdir", "-dumpbase", "-dumpbase-ext", "--param", "-Xassembler", "-Xpreprocessor"};
  return s;
}

// Splits nvcc's list values ("a,b") as nvcc does.
std::vector<std::string> commaList(const std::string& v) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= v.size()) {
    size_t end = v.find(',', start);
    std::string part = v.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!part.empty()) out.push_back(part);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

struct Translator {
  const std::string& directory;
  const ReadTextFn& read;
  const std::function<bool(const std::string&)>& keepUnknown;
  TranslatedCommand out;
  std::set<std::string> readFiles;  // response files being read (a file naming itself is read once)
  int depth = 0;

  std::string absolute(const std::string& path) const {
    if (path.empty() || (path[0] != '/' && directory.empty())) return path;
    std::string s = (path[0] == '/' ? fs::path(path) : fs::path(directory) / path).lexically_normal().string();
    if (s.size() > 1 && s.back() == '/') s.pop_back();  // `-I"/p/src/.."` is /p
    return s;
  }
  void keep(std::vector<std::string> args, const std::string& spelled, const std::string& rsp) {
    out.kept.push_back(TranslatedArg{std::move(args), spelled, rsp});
  }

  // A flag whose value is a path or a macro: `-I`, `-isystem`, `-iquote`, `-idirafter`, `-include`,
  // `-imacros`, `-D`, `-U`, under any of their names. Returns the canonical flag or empty.
  static std::string valueFlag(std::string_view name, bool nvcc) {
    static const std::map<std::string_view, std::string_view> names = {
        {"-I", "-I"}, {"--include-path", "-I"}, {"-isystem", "-isystem"}, {"--system-include", "-isystem"},
        {"-iquote", "-iquote"}, {"-idirafter", "-idirafter"}, {"-include", "-include"},
        {"--pre-include", "-include"}, {"-imacros", "-imacros"}, {"-D", "-D"}, {"--define-macro", "-D"},
        {"-U", "-U"}, {"--undefine-macro", "-U"}};
    auto it = names.find(name);
    if (it == names.end()) return {};
    if (!nvcc && name.rfind("--", 0) == 0) return {};
    return std::string(it->second);
  }

  void addValue(const std::string& flag, const std::string& value, bool nvccList, const std::string& spelled,
                const std::string& rsp) {
    std::vector<std::string> values = nvccList ? commaList(value) : std::vector<std::string>{value};
    for (const auto& v : values) {
      if (flag == "-D" || flag == "-U") keep({flag + v}, spelled, rsp);
      else if (flag == "-I") keep({"-I" + absolute(v)}, spelled, rsp);
      else if (flag == "-include" || flag == "-imacros") {
        // Relative to the working folder when it exists there, else found on the include path.
        std::error_code ec;
        std::string p = absolute(v);
        keep({flag, fs::exists(p, ec) ? p : v}, spelled, rsp);
      } else keep({flag, absolute(v)}, spelled, rsp);
    }
  }

  void hostOption(const std::vector<std::string>& words, size_t& i, const std::string& spelled, const std::string& rsp);

  // Reads the response file `path` (as written) and translates its words.
  void responseFile(const std::string& path, const std::string& spelled, const std::string& rsp) {
    std::string abs = absolute(path);
    if (depth > 8 || !readFiles.insert(abs).second) return;
    auto text = read ? read(abs) : readText(abs);
    if (!text) {
      out.problems.push_back("cannot read the response file " + abs + " named by `" + spelled + "`" +
                             (rsp.empty() ? "" : " (in " + rsp + ")"));
      return;
    }
    out.responseFiles.push_back(abs);
    ++depth;
    words(splitResponseFile(*text), spelled, /*start=*/0);
    --depth;
  }

  void words(const std::vector<std::string>& w, const std::string& rsp, size_t start);
};

void Translator::hostOption(const std::vector<std::string>& w, size_t& i, const std::string& spelled,
                            const std::string& rsp) {
  const std::string& a = w[i];
  bool hasNext = i + 1 < w.size();
  // GCC's spellings: separate (`-I dir`), joined (`-Idir`) or `=` for -isystem (sysroot-relative).
  for (std::string_view f : {"-isystem", "-iquote", "-idirafter", "-include", "-imacros", "-I", "-D", "-U"}) {
    if (a == f) {
      if (hasNext) addValue(std::string(f), w[++i], false, spelled, rsp);
      return;
    }
    if (a.size() > f.size() && a.compare(0, f.size(), f) == 0) {
      std::string v = a.substr(f.size());
      if (v[0] == '=' && f != "-D" && f != "-U") v = v.substr(1);
      addValue(std::string(f), v, false, spelled, rsp);
      return;
    }
  }
  if (a.rfind("-std=", 0) == 0) {
    keep({a}, spelled, rsp);
    return;
  }
  if (a == "-fopenmp" || a.rfind("-fopenmp=", 0) == 0) {
    // GCC's OpenMP: the pragmas are the host compiler's; nvcc's front end sees _OPENMP defined
    // (GCC 9-12 define it as 201511) and finds GCC's omp.h.
    if (!out.hostOpenMP) keep({"-D_OPENMP=201511"}, spelled, rsp);
    out.hostOpenMP = true;
    return;
  }
  out.dropped.push_back(spelled == a ? a : spelled + " (" + a + ")");
}

void Translator::words(const std::vector<std::string>& w, const std::string& rsp, size_t start) {
  const bool nvcc = out.isNvcc;
  bool forwardUnknown = false;
  for (size_t i = start; i < w.size(); ++i) {
    const std::string& a = w[i];
    bool hasNext = i + 1 < w.size();
    auto nextValue = [&](std::string& spelled) {
      std::string v = hasNext ? w[++i] : std::string();
      spelled += " " + v;
      return v;
    };
    if (a.empty()) continue;
    // Response files.
    if (a[0] == '@' && a.size() > 1) {
      responseFile(a.substr(1), a, rsp);
      continue;
    }
    std::string name = a, value;
    bool hasEq = false;
    if (a.rfind("-", 0) == 0) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
        hasEq = true;
      }
    }
    if (name == "--options-file" || name == "-optf") {
      std::string spelled = a;
      std::string v = hasEq ? value : nextValue(spelled);
      for (const auto& f : commaList(v)) responseFile(f, spelled, rsp);
      continue;
    }
    if (a == "-forward-unknown-to-host-compiler" || a == "--forward-unknown-to-host-compiler") {
      forwardUnknown = true;
      continue;
    }
    // Host compiler options: each comma-separated part, split at blanks as the host's shell would.
    if (nvcc && (name == "-Xcompiler" || name == "--compiler-options")) {
      std::string spelled = a;
      std::string v = hasEq ? value : nextValue(spelled);
      std::vector<std::string> hw;
      // A quoted group (`-Xcompiler "\"-DH=1 -I inc\""`) reaches the host compiler's command
      // line, where the shell splits it again: split the words once more.
      for (const auto& part : commaList(v))
        for (const auto& word : splitResponseFile(part)) {
          auto split = splitResponseFile(word);
          hw.insert(hw.end(), split.begin(), split.end());
        }
      for (size_t j = 0; j < hw.size(); ++j) hostOption(hw, j, spelled, rsp);
      continue;
    }
    if (nvcc && (name == "-ccbin" || name == "--compiler-bindir")) {
      std::string spelled = a;
      std::string v = hasEq ? value : nextValue(spelled);
      out.hostCompiler = v.find('/') != std::string::npos ? absolute(v) : v;
      out.dropped.push_back(spelled);
      continue;
    }
    // Include folders and macros, in every spelling.
    if (std::string flag = valueFlag(name, nvcc); !flag.empty()) {
      std::string spelled = a;
      std::string v = hasEq ? value : nextValue(spelled);
      addValue(flag, v, nvcc, spelled, rsp);
      continue;
    }
    bool joined = false;
    for (std::string_view f : {"-isystem", "-iquote", "-idirafter", "-include", "-imacros", "-I", "-D", "-U"}) {
      if (a.size() > f.size() && a.compare(0, f.size(), f) == 0) {
        std::string v = a.substr(f.size());
        if (v[0] == '=' && f != "-D" && f != "-U") v = v.substr(1);  // -I=dir (nvcc), -isystem=dir
        addValue(std::string(f), v, nvcc && (f == "-I" || f == "-D" || f == "-U" || f == "-isystem"), a, rsp);
        joined = true;
        break;
      }
    }
    if (joined) continue;
    if (name == "-std" || name == "--std") {
      std::string spelled = a;
      std::string v = hasEq ? value : nextValue(spelled);
      keep({"-std=" + v}, spelled, rsp);
      continue;
    }
    // nvcc's own options that change what the front end sees: the macros nvcc defines for them.
    static const std::map<std::string_view, std::string_view> defines = {
        {"--extended-lambda", "-D__CUDACC_EXTENDED_LAMBDA__"}, {"-extended-lambda", "-D__CUDACC_EXTENDED_LAMBDA__"},
        {"--expt-extended-lambda", "-D__CUDACC_EXTENDED_LAMBDA__"},
        {"-expt-extended-lambda", "-D__CUDACC_EXTENDED_LAMBDA__"},
        {"--expt-relaxed-constexpr", "-D__CUDACC_RELAXED_CONSTEXPR__"},
        {"-expt-relaxed-constexpr", "-D__CUDACC_RELAXED_CONSTEXPR__"}, {"-G", "-D__CUDACC_DEBUG__"},
        {"--device-debug", "-D__CUDACC_DEBUG__"}, {"-dc", "-D__CUDACC_RDC__"}, {"--device-c", "-D__CUDACC_RDC__"}};
    if (nvcc) {
      if (auto d = defines.find(a); d != defines.end()) {
        keep({std::string(d->second)}, a, rsp);
        continue;
      }
      if ((name == "-rdc" || name == "--relocatable-device-code")) {
        std::string spelled = a;
        std::string v = hasEq ? value : nextValue(spelled);
        if (v == "true") keep({"-D__CUDACC_RDC__"}, spelled, rsp);
        else out.dropped.push_back(spelled);
        continue;
      }
      if (name == "-default-stream" || name == "--default-stream") {
        std::string spelled = a;
        std::string v = hasEq ? value : nextValue(spelled);
        if (v == "per-thread") keep({"-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1"}, spelled, rsp);
        else out.dropped.push_back(spelled);
        continue;
      }
    }
    if (a == "-fopenmp" || a.rfind("-fopenmp=", 0) == 0) {
      std::vector<std::string> one = {a};
      size_t j = 0;
      hostOption(one, j, a, rsp);
      continue;
    }
    if (nvcc ? nvccValueOptions().count(name) > 0 : (!hasEq && hostValueOptions().count(name) > 0)) {
      std::string spelled = a;
      if (!hasEq) nextValue(spelled);
      out.dropped.push_back(spelled);
      continue;
    }
    // The source, -c, and options with no meaning for a parse.
    if (a == "-c" || a[0] != '-') continue;
    bool warning = a.rfind("-W", 0) == 0 && a.rfind("-Wl,", 0) != 0 && a.rfind("-Wp,", 0) != 0 && a.rfind("-Wa,", 0) != 0;
    if (!warning && keepUnknown && keepUnknown(a)) {
      keep({a}, a, rsp);
      continue;
    }
    // Unknown options nvcc forwards to the host compiler (-forward-unknown-to-host-compiler) are
    // the host's; the host options that matter were handled above.
    out.dropped.push_back(forwardUnknown ? a + " (host compiler)" : a);
  }
}

}  // namespace

TranslatedCommand translateCompileCommand(const std::vector<std::string>& cmd, const std::string& directory,
                                          const ReadTextFn& read,
                                          const std::function<bool(const std::string&)>& keepUnknown) {
  Translator t{directory, read, keepUnknown, {}, {}, 0};
  if (cmd.empty()) return t.out;
  t.out.isNvcc = isNvccName(cmd[0]);
  t.words(cmd, "", 1);
  // A Clang driver compiles this unit: what Clang accepts and nvcc does not (a constexpr function
  // called from device code without --expt-relaxed-constexpr) is no error here.
  if (!t.out.isNvcc && fs::path(cmd[0]).filename().string().find("clang") != std::string::npos)
    t.keep({"-D__GPUOPT_LINT_CLANG_DRIVER__=1"}, cmd[0], "");
  return std::move(t.out);
}

std::string hostCompilerIncludeDir(const std::string& ccbin) {
  static std::mutex m;
  static std::map<std::string, std::string> memo;
  std::lock_guard<std::mutex> lock(m);
  if (auto it = memo.find(ccbin); it != memo.end()) return it->second;
  std::string& answer = memo[ccbin];
  // nvcc's rule: -ccbin names the compiler or the folder holding it; by default `c++` on PATH (gcc
  // on Linux).
  std::vector<std::string> candidates;
  std::error_code ec;
  if (!ccbin.empty()) {
    if (fs::is_directory(ccbin, ec)) {
      for (const char* n : {"g++", "c++", "gcc"})
        if (fs::exists(fs::path(ccbin) / n, ec)) candidates.push_back((fs::path(ccbin) / n).string());
    } else candidates.push_back(ccbin);
  } else candidates = {"g++", "c++", "gcc"};
  for (const auto& c : candidates) {
    if (c.find_first_of("'\"\\$`") != std::string::npos) continue;
    std::string cmd = "'" + c + "' -print-file-name=include 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) continue;
    std::array<char, 1024> buf{};
    std::string outText;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) outText.append(buf.data(), n);
    int status = pclose(p);
    while (!outText.empty() && (outText.back() == '\n' || outText.back() == '\r')) outText.pop_back();
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !outText.empty() && outText[0] == '/' &&
        fs::is_directory(outText, ec)) {
      answer = fs::path(outText).lexically_normal().string();
      break;
    }
  }
  return answer;
}

}  // namespace gpuopt
