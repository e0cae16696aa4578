#include "analyzer/frontend/preamble.h"

#include "analyzer/frontend/benign_diagnostics.h"
#include "analyzer/frontend/crash_guard.h"
#include "analyzer/report/safe_write.h"

#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Tooling/Tooling.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "analyzer/frontend/frontend.h"

namespace gpuopt {
namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> leadingSystemIncludes(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& op : leadingIncludes(text)) {
    if (op.front() != '<') break;
    out.push_back(op.substr(1, op.size() - 2));
  }
  return out;
}

std::vector<std::string> leadingIncludes(const std::string& text) {
  std::vector<std::string> out;
  size_t i = 0, n = text.size();
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
  while (i < n) {
    char c = text[i];
    if (blank(c) || c == '\n') { ++i; continue; }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {  // line comment (no continuation handling: stop on one)
      size_t e = text.find('\n', i);
      if (e != std::string::npos && e > 0 && text[e - 1] == '\\') return out;
      i = e == std::string::npos ? n : e + 1;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      size_t e = text.find("*/", i + 2);
      if (e == std::string::npos) return out;
      i = e + 2;
      continue;
    }
    if (c != '#') return out;
    // One directive line: only `#include <name>` followed by blanks or a comment is taken.
    size_t eol = text.find('\n', i);
    if (eol == std::string::npos) eol = n;
    std::string line = text.substr(i, eol - i);
    if (line.find('\\') != std::string::npos) return out;  // continuation lines: not worth the risk
    size_t k = 1;
    while (k < line.size() && blank(line[k])) ++k;
    if (line.compare(k, 7, "include") != 0) return out;
    k += 7;
    while (k < line.size() && blank(line[k])) ++k;
    if (k >= line.size() || (line[k] != '<' && line[k] != '"')) return out;
    char closing = line[k] == '<' ? '>' : '"';
    size_t close = line.find(closing, k + 1);
    if (close == std::string::npos) return out;
    std::string name = line.substr(k + 1, close - k - 1);
    std::string rest = line.substr(close + 1);
    size_t r = 0;
    while (r < rest.size() && blank(rest[r])) ++r;
    if (r < rest.size()) {
      if (rest.compare(r, 2, "//") != 0 && !(rest.compare(r, 2, "/*") == 0 && rest.find("*/", r + 2) != std::string::npos))
        return out;
    }
    if (name.empty() || name.find_first_of("\"<>") != std::string::npos) return out;
    std::string op = closing == '>' ? "<" + name + ">" : "\"" + name + "\"";
    if (std::find(out.begin(), out.end(), op) == out.end()) out.push_back(op);
    i = eol;
  }
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;

// What building a PCH found.
struct BuildInfo {
  std::vector<std::string> files;  // real files it read
  std::string nonSystem;           // a header in it that is not a system header, if any
  std::string unguarded;           // a project header without an include guard or #pragma once
  std::string kernel;              // a kernel defined in a project header (analysed from the parse)
  unsigned errors = 0;
  std::string firstError;
};

class CollectingPCHAction : public clang::GeneratePCHAction {
 public:
  CollectingPCHAction(BuildInfo& info, std::string header, std::string headerText, std::vector<std::string> toolkit)
      : info_(info), header_(std::move(header)), headerText_(std::move(headerText)), toolkit_(std::move(toolkit)) {}
  void EndSourceFileAction() override {
    const auto& sm = getCompilerInstance().getSourceManager();
    for (unsigned i = 0; i < sm.local_sloc_entry_size(); ++i) {
      const auto& e = sm.getLocalSLocEntry(i);
      if (!e.isFile()) continue;
      const auto& fi = e.getFile();
      auto entry = fi.getContentCache().OrigEntry;
      if (!entry) continue;  // <built-in>, <command line>
      std::string name = std::string(entry->getName());
      if (name == header_ || name.rfind(std::string(kBundledIncludeDir), 0) == 0) continue;
      // The toolkit's own headers count as system headers even through -I (CUDA 13's include/cccl).
      bool toolkit = std::any_of(toolkit_.begin(), toolkit_.end(), [&](const std::string& p) { return name.rfind(p, 0) == 0; });
      if (!clang::SrcMgr::isSystem(fi.getFileCharacteristic()) && !toolkit) {
        if (info_.nonSystem.empty()) info_.nonSystem = name;
        // The file's own include of a header the preamble names is skipped after the PCH only
        // when it is guarded (the headers those include are re-included, or not, as without it).
        auto& hs = getCompilerInstance().getPreprocessor().getHeaderSearchInfo();
        bool named = headerText_.find("#include \"" + name + "\"\n") != std::string::npos;
        if (named && info_.unguarded.empty() && !hs.isFileMultipleIncludeGuarded(*entry)) info_.unguarded = name;
      }
      if (std::find(info_.files.begin(), info_.files.end(), name) == info_.files.end()) info_.files.push_back(name);
    }
    // Kernels of project headers are linted from the parse that includes them: none in the PCH.
    const auto& ci = getCompilerInstance();
    if (ci.hasASTContext())
      for (const auto* d : ci.getASTContext().getTranslationUnitDecl()->decls()) {
        const auto* f = llvm::dyn_cast<clang::FunctionDecl>(d);
        if (const auto* ft = llvm::dyn_cast<clang::FunctionTemplateDecl>(d)) f = ft->getTemplatedDecl();
        if (!f || !f->hasAttr<clang::CUDAGlobalAttr>() || sm.isInSystemHeader(f->getLocation())) continue;
        info_.kernel = f->getNameAsString() + " (" + std::string(sm.getFilename(sm.getSpellingLoc(f->getLocation()))) + ")";
        break;
      }
    clang::GeneratePCHAction::EndSourceFileAction();
  }

 private:
  BuildInfo& info_;
  std::string header_, headerText_;
  std::vector<std::string> toolkit_;
};

class PCHFactory : public clang::tooling::FrontendActionFactory {
 public:
  PCHFactory(BuildInfo& info, std::string header, std::string headerText, std::string out, std::vector<std::string> toolkit)
      : info_(info), header_(std::move(header)), headerText_(std::move(headerText)), out_(std::move(out)),
        toolkit_(std::move(toolkit)) {}
  bool runInvocation(std::shared_ptr<clang::CompilerInvocation> inv, clang::FileManager* files,
                     std::shared_ptr<clang::PCHContainerOperations> ops, clang::DiagnosticConsumer* dc) override {
    auto& fo = inv->getFrontendOpts();
    clang::InputKind kind = fo.Inputs.empty() ? clang::InputKind(clang::Language::CUDA) : fo.Inputs.front().getKind();
    fo.Inputs = {clang::FrontendInputFile(header_, kind.getHeader())};
    fo.OutputFile = out_;
    fo.ProgramAction = clang::frontend::GeneratePCH;
    // Each input's content hash goes into the PCH, so that a header saved without a change (an
    // editor's save, a checkout that touches files) still matches it on load (parse.cpp).
    inv->getHeaderSearchOpts().ValidateASTInputFilesContent = true;
    return clang::tooling::FrontendActionFactory::runInvocation(std::move(inv), files, std::move(ops), dc);
  }
  std::unique_ptr<clang::FrontendAction> create() override {
    return std::make_unique<CollectingPCHAction>(info_, header_, headerText_, toolkit_);
  }

 private:
  BuildInfo& info_;
  std::string header_, headerText_, out_;
  std::vector<std::string> toolkit_;
};

class ErrorCounter : public clang::DiagnosticConsumer {
 public:
  explicit ErrorCounter(BuildInfo& info) : info_(info) {}
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& d) override {
    if (level < clang::DiagnosticsEngine::Error || clangWrapperOnlyError(d)) return;
    if (info_.errors++ == 0) {
      llvm::SmallString<128> msg;
      d.FormatDiagnostic(msg);
      info_.firstError = std::string(msg);
    }
  }

 private:
  BuildInfo& info_;
};

// One build at a time per key in this process (the -j workers); other processes may build the
// same key concurrently, which only costs time.
std::mutex& keyMutex(const std::string& key) {
  static std::mutex guard;
  static std::map<std::string, std::unique_ptr<std::mutex>> locks;
  std::lock_guard<std::mutex> g(guard);
  auto& m = locks[key];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

struct Manifest {
  bool usable = false;
  std::string reason;
  std::vector<FileStamp> deps;
  std::string pchHash;  // the PCH's content hash (BLAKE3) when it was stored
};

// A manifest is stored with its checksum (withChecksum): a damaged one is a miss, and so the
// preamble is built again.
constexpr std::string_view kManifestMagic = "gpuopt-lint-preamble";

std::optional<Manifest> readManifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  std::string whole = text.str();
  auto body = checkedBody(kManifestMagic, whole);
  if (!body) return std::nullopt;
  try {
    json j = json::parse(*body);
    Manifest m;
    m.usable = j.at("usable").get<bool>();
    m.reason = j.at("reason").get<std::string>();
    for (const auto& d : j.at("deps")) {
      FileStamp s;
      s.path = d.at(0).get<std::string>();
      s.size = d.at(1).get<uint64_t>();
      s.mtimeNs = d.at(2).get<int64_t>();
      if (d.size() > 3) s.hash = d.at(3).get<std::string>();
      m.deps.push_back(std::move(s));
    }
    m.pchHash = j.value("pch", "");
    if (m.usable && m.pchHash.empty()) return std::nullopt;
    return m;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Whether the PCH still holds the bytes its manifest recorded: a flipped bit in it could change
// what the headers declare. Hashed once per process for each PCH (path, size and time), so a run
// over many files that share it pays once (see docs/architecture.md, "Robustness").
bool pchIntact(const std::string& path, const std::string& expected) {
  // stampFile's hash is computed once per (path, size, mtime) in a process (contentHash's memo).
  auto full = stampFile(path, true);
  return full && full->hash == expected;
}

bool depsValid(const Manifest& m) {
  return std::all_of(m.deps.begin(), m.deps.end(), [](const FileStamp& s) { return stampStillValid(s); });
}

// Keeps the preamble folder under a size limit: the least recently built PCHs go first.
void evict(const fs::path& dir, uintmax_t limit) {
  std::error_code ec;
  std::vector<std::tuple<fs::file_time_type, uintmax_t, fs::path>> pchs;
  uintmax_t total = 0;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() != ".pch") continue;
    auto size = it->file_size(ec);
    auto t = it->last_write_time(ec);
    if (ec) { ec.clear(); continue; }
    pchs.emplace_back(t, size, it->path());
    total += size;
  }
  std::sort(pchs.begin(), pchs.end());
  for (const auto& [t, size, p] : pchs) {
    if (total <= limit) break;
    fs::remove(p, ec);
    fs::path man = p;
    fs::remove(man.replace_extension(".json"), ec);
    total -= size;
  }
}

// Builds (or finds) the PCH of the forced includes plus `includes`.
// `includes`: directive operands (`<x.h>`, or `"/abs/path/x.h"` for the project's own headers,
// which `projectHeaders` allows: guarded, no kernel in them).
std::optional<Preamble> buildPreamble(const std::string& cacheDir, const std::vector<std::string>& keyArgs,
                                      const std::vector<std::string>& includes, const MakeParseFS& makeFS,
                                      const std::string& key, Preamble p, const std::string& manifestPath,
                                      bool projectHeaders, std::vector<std::string>* log, std::string& whyNot);

std::optional<Preamble> preambleFor(const std::string& cacheDir, const std::vector<std::string>& keyArgs,
                                    const std::vector<std::string>& includes, const MakeParseFS& makeFS,
                                    std::vector<std::string>* log, std::string& whyNot, bool& mayBuild,
                                    const DeferBuild* defer) {
  const bool projectHeaders = std::any_of(includes.begin(), includes.end(), [](const std::string& i) { return i[0] == '"'; });
  std::error_code ec;
  std::string keyText = toolIdentity() + "\n" + fs::current_path(ec).string() + "\n";
  for (const auto& a : keyArgs) keyText += a + '\0';
  keyText += "\n";
  for (const auto& i : includes) keyText += i + "\n";
  std::string key = hashText(keyText);
  fs::path dir = fs::path(cacheDir) / "v1" / "preamble";
  Preamble p;
  p.pchPath = (dir / (key + ".pch")).string();
  p.headerPath = "/gpuopt-lint-preamble/" + key + ".h";
  for (const auto& i : includes) p.headerText += "#include " + i + "\n";
  p.includes = includes.size();
  std::string manifestPath = (dir / (key + ".json")).string();

  std::lock_guard<std::mutex> lock(keyMutex(key));
  if (auto m = readManifest(manifestPath); m && depsValid(*m)) {
    if (!m->usable) {
      whyNot = m->reason;
      return std::nullopt;
    }
    if (pchIntact(p.pchPath, m->pchHash)) {
      p.deps = std::move(m->deps);
      return p;
    }
    if (log && fs::exists(p.pchPath, ec)) log->push_back("preamble " + p.pchPath + ": damaged (its checksum differs); built again");
  }

  if (!mayBuild) {
    whyNot = "not built yet: one preamble is built per file and run, this one on a later run";
    return std::nullopt;
  }
  mayBuild = false;
  if (defer && *defer) {
    // Built on a core of its own while this file is parsed without it: the findings are the same (a
    // preamble only saves parsing), and later runs use it. The build takes the key's lock itself and
    // first looks whether another worker built it meanwhile.
    (*defer)([cacheDir, keyArgs, includes, makeFS, key, p, manifestPath, projectHeaders](std::vector<std::string>* blog) {
      std::lock_guard<std::mutex> again(keyMutex(key));
      if (auto m = readManifest(manifestPath); m && depsValid(*m) && (!m->usable || pchIntact(p.pchPath, m->pchHash))) return false;
      std::string why;
      return buildPreamble(cacheDir, keyArgs, includes, makeFS, key, p, manifestPath, projectHeaders, blog, why).has_value();
    });
    whyNot = "being built beside this parse, for later runs";
    return std::nullopt;
  }
  return buildPreamble(cacheDir, keyArgs, includes, makeFS, key, p, manifestPath, projectHeaders, log, whyNot);
}

// Builds the preamble `p` (its key's lock held by the caller): the parse command with the preamble
// header as the input, then the manifest.
std::optional<Preamble> buildPreamble(const std::string& cacheDir, const std::vector<std::string>& keyArgs,
                                      const std::vector<std::string>& includes, const MakeParseFS& makeFS,
                                      const std::string& key, Preamble p, const std::string& manifestPath,
                                      bool projectHeaders, std::vector<std::string>* log, std::string& whyNot) {
  std::error_code ec;
  fs::path dir = fs::path(cacheDir) / "v1" / "preamble";
  auto t0 = Clock::now();
  fs::create_directories(dir, ec);
  // What killed runs left (up to the size of a PCH each).
  removeDeadTemporaries(dir.string(), "");
  std::ostringstream tmpName;
  tmpName << p.pchPath << ".tmp." << ::getpid() << "." << std::this_thread::get_id();
  std::string tmp = tmpName.str();
  BuildInfo info;
  std::vector<std::string> args = keyArgs;
  args.push_back(p.headerPath);  // replaced by the factory; the driver needs an input
  auto vfs = makeFS(p.headerPath, p.headerText);
  auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions(), vfs);
  std::vector<std::string> toolkit;
  for (const auto& a : keyArgs)
    if (a.rfind("--cuda-path=", 0) == 0) {
      std::string dir = a.substr(12);
      toolkit.push_back((fs::path(dir) / "").string());
      toolkit.push_back((fs::weakly_canonical(dir, ec) / "").string());
    }
  PCHFactory factory(info, p.headerPath, p.headerText, tmp, toolkit);
  ErrorCounter counter(info);
  clang::tooling::ToolInvocation inv(args, &factory, files.get(), std::make_shared<clang::PCHContainerOperations>());
  inv.setDiagnosticConsumer(&counter);
  bool ok = false;
  if (auto crash = runCrashIsolated([&] { ok = inv.run(); })) {
    ok = false;
    info.errors = std::max(info.errors, 1u);
    info.firstError = *crash;
  }
  Manifest m;
  if (!ok || info.errors) {
    m.reason = info.errors ? "error in the preamble: " + info.firstError : "the preamble could not be built";
  } else if (!info.nonSystem.empty() && !projectHeaders) {
    m.reason = "the preamble would hold " + info.nonSystem + ", which is not a system header";
  } else if (!info.unguarded.empty()) {
    m.reason = "the preamble would hold " + info.unguarded + ", which has no include guard or #pragma once";
  } else if (!info.kernel.empty()) {
    m.reason = "the preamble would hold the kernel " + info.kernel + " (kernels are analysed from the parse)";
  } else if (!fs::exists(tmp, ec)) {
    m.reason = "the preamble was not written";
  } else {
    m.usable = true;
  }
  // The toolkit's headers by size and time; the project's by content too (an editor's save that
  // changes nothing, or a checkout that touches every file, keeps the preamble).
  for (const auto& f : info.files)
    if (auto s = stampFile(f, projectHeaders)) m.deps.push_back(*s);
  json j;
  j["usable"] = m.usable;
  j["reason"] = m.reason;
  j["includes"] = includes;
  j["deps"] = json::array();
  for (const auto& d : m.deps)
    j["deps"].push_back(d.hash.empty() ? json{d.path, d.size, d.mtimeNs} : json{d.path, d.size, d.mtimeNs, d.hash});
  bool stored = true;
  if (m.usable) {
    auto stamp = stampFile(tmp, true);
    stored = stamp.has_value();
    if (stamp) j["pch"] = stamp->hash;
  }
  if (m.usable && stored) {
    fs::rename(tmp, p.pchPath, ec);
    stored = !ec;
  }
  fs::remove(tmp, ec);
  // Clang's own temporary file (TMP-XXXXXXXX...) stays when writing failed (a full disk).
  removeDeadTemporaries(dir.string(), key + ".pch", /*includeOwn=*/true);
  // The reason may quote source bytes that are not UTF-8.
  if (stored)
    writeFileAtomically(manifestPath, withChecksum(kManifestMagic, j.dump(-1, ' ', false, json::error_handler_t::replace)));
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (log)
    log->push_back(fmt::format("preamble {} ({} leading includes): built in {:.0f} ms{}", p.pchPath, includes.size(), ms,
                               m.usable ? "" : "; not used: " + m.reason));
  if (!m.usable || !stored) {
    whyNot = stored ? m.reason : "the preamble could not be stored in " + dir.string();
    return std::nullopt;
  }
  evict(dir, uintmax_t(4) << 30);
  p.deps = std::move(m.deps);
  p.built = true;
  return p;
}

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Whether a header's first directive is `#pragma once`, or `#ifndef X` then `#define X` (an
// include guard; Clang's own check on the PCH build confirms it).
bool textuallyGuarded(const std::string& text) {
  std::istringstream in(text);
  std::string line, guard;
  bool inComment = false;
  while (std::getline(in, line)) {
    std::string t;
    for (size_t i = 0; i < line.size(); ++i) {  // strip comments
      if (inComment) {
        if (line.compare(i, 2, "*/") == 0) inComment = false, ++i;
        continue;
      }
      if (line.compare(i, 2, "//") == 0) break;
      if (line.compare(i, 2, "/*") == 0) { inComment = true, ++i; continue; }
      t += line[i];
    }
    std::istringstream words(t);
    std::string w0, w1, w2;
    words >> w0 >> w1 >> w2;
    if (w0.empty()) continue;
    if (w0 == "#") w0 += w1, w1 = w2;  // "# pragma once"
    if (guard.empty()) {
      if (w0 == "#pragma" && w1 == "once") return true;
      if (w0 == "#ifndef" && !w1.empty()) { guard = w1; continue; }
      return false;
    }
    return w0 == "#define" && w1 == guard;
  }
  return false;
}

// Where `#include "name"` in `file` leads: the file's folder, then -iquote and -I folders of
// `args`, in order (as Clang searches them), then the -idirafter ones; "" when none has it.
std::string resolveQuotedInclude(const std::string& name, const std::string& file, const std::vector<std::string>& args) {
  std::error_code ec;
  std::vector<fs::path> dirs{fs::absolute(file, ec).parent_path()};
  std::vector<fs::path> quote, angle, after;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto take = [&](const char* flag, std::vector<fs::path>& into) {
      size_t n = std::strlen(flag);
      if (a == flag && i + 1 < args.size()) into.push_back(args[++i]);
      else if (a.rfind(flag, 0) == 0 && a.size() > n) into.push_back(a.substr(a[n] == '=' ? n + 1 : n));
      else return false;
      return true;
    };
    if (!take("-iquote", quote) && !take("-idirafter", after)) take("-I", angle);
  }
  dirs.insert(dirs.end(), quote.begin(), quote.end());
  dirs.insert(dirs.end(), angle.begin(), angle.end());
  dirs.insert(dirs.end(), after.begin(), after.end());
  if (fs::path(name).is_absolute()) return fs::is_regular_file(name, ec) ? fs::path(name).lexically_normal().string() : "";
  for (const auto& d : dirs) {
    fs::path p = fs::absolute(d / name, ec).lexically_normal();
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

}  // namespace

std::optional<Preamble> getPreamble(const std::string& cacheDir, const std::vector<std::string>& args,
                                    const std::vector<std::string>& layoutDirs, const std::string& file,
                                    const MakeParseFS& makeFS, std::vector<std::string>* log, bool& mayBuild,
                                    const DeferBuild* defer) {
  if (cacheDir.empty() || args.empty()) return std::nullopt;
  // The key: the command without the file and without the project-layout folders (searched last,
  // -idirafter, they cannot change which system header an include finds).
  std::vector<std::string> keyArgs, allArgs(args.begin(), args.end() - 1);
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "-idirafter" && i + 1 < args.size() - 1 &&
        std::find(layoutDirs.begin(), layoutDirs.end(), args[i + 1]) != layoutDirs.end()) {
      ++i;
      continue;
    }
    keyArgs.push_back(args[i]);
  }
  std::string text;
  {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  std::string whyNot;
  // The whole leading block, the project's quoted headers included (resolved to the files the
  // parse finds, so units of one folder with the same block and flags share it), then its system
  // part, then the forced includes alone.
  std::vector<std::string> whole, system;
  // A project header without a guard cannot be in the PCH (the file's own include of it would
  // define it again); its leading includes can, and the block ends there: after the PCH the
  // parse reads the header itself, whose includes of them are then skipped by their guards.
  std::function<bool(const std::string&, const std::string&, int)> add = [&](const std::string& from,
                                                                          const std::string& body, int depth) {
    for (const auto& op : leadingIncludes(body)) {
      if (op[0] == '<') {
        if (whole.size() == system.size()) system.push_back(op);
        if (std::find(whole.begin(), whole.end(), op) == whole.end()) whole.push_back(op);
        continue;
      }
      std::string found = resolveQuotedInclude(op.substr(1, op.size() - 2), from, allArgs);
      if (found.empty()) return false;  // the parse will say it is missing
      std::string header = readText(found);
      if (!textuallyGuarded(header)) {
        if (depth < 4) add(found, header, depth + 1);
        return false;
      }
      std::string quoted = "\"" + found + "\"";
      if (std::find(whole.begin(), whole.end(), quoted) == whole.end()) whole.push_back(quoted);
    }
    return true;
  };
  add(file, text, 0);
  if (whole.size() > system.size()) {
    // The project's headers find theirs in the layout folders too: these are part of this key.
    if (auto p = preambleFor(cacheDir, allArgs, whole, makeFS, log, whyNot, mayBuild, defer)) return p;
    if (log) log->push_back(file + ": preamble of its leading includes and project headers not used (" + whyNot + ")");
  }
  const auto& includes = system;
  if (!includes.empty()) {
    if (auto p = preambleFor(cacheDir, keyArgs, includes, makeFS, log, whyNot, mayBuild, defer)) return p;
    if (log) log->push_back(file + ": preamble of its leading includes not used (" + whyNot + ")");
  }
  if (auto p = preambleFor(cacheDir, keyArgs, {}, makeFS, log, whyNot, mayBuild, defer)) return p;
  if (log) log->push_back(file + ": no preamble (" + whyNot + ")");
  return std::nullopt;
}

}  // namespace gpuopt
