#include "analyzer/frontend/preamble.h"
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
#include <filesystem>
#include <fstream>
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
    if (k >= line.size() || line[k] != '<') return out;
    size_t close = line.find('>', k + 1);
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
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
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
  unsigned errors = 0;
  std::string firstError;
};

class CollectingPCHAction : public clang::GeneratePCHAction {
 public:
  CollectingPCHAction(BuildInfo& info, std::string header, std::vector<std::string> toolkit)
      : info_(info), header_(std::move(header)), toolkit_(std::move(toolkit)) {}
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
      if (!clang::SrcMgr::isSystem(fi.getFileCharacteristic()) && !toolkit && info_.nonSystem.empty()) info_.nonSystem = name;
      if (std::find(info_.files.begin(), info_.files.end(), name) == info_.files.end()) info_.files.push_back(name);
    }
    clang::GeneratePCHAction::EndSourceFileAction();
  }

 private:
  BuildInfo& info_;
  std::string header_;
  std::vector<std::string> toolkit_;
};

class PCHFactory : public clang::tooling::FrontendActionFactory {
 public:
  PCHFactory(BuildInfo& info, std::string header, std::string out, std::vector<std::string> toolkit)
      : info_(info), header_(std::move(header)), out_(std::move(out)), toolkit_(std::move(toolkit)) {}
  bool runInvocation(std::shared_ptr<clang::CompilerInvocation> inv, clang::FileManager* files,
                     std::shared_ptr<clang::PCHContainerOperations> ops, clang::DiagnosticConsumer* dc) override {
    auto& fo = inv->getFrontendOpts();
    clang::InputKind kind = fo.Inputs.empty() ? clang::InputKind(clang::Language::CUDA) : fo.Inputs.front().getKind();
    fo.Inputs = {clang::FrontendInputFile(header_, kind.getHeader())};
    fo.OutputFile = out_;
    fo.ProgramAction = clang::frontend::GeneratePCH;
    return clang::tooling::FrontendActionFactory::runInvocation(std::move(inv), files, std::move(ops), dc);
  }
  std::unique_ptr<clang::FrontendAction> create() override {
    return std::make_unique<CollectingPCHAction>(info_, header_, toolkit_);
  }

 private:
  BuildInfo& info_;
  std::string header_, out_;
  std::vector<std::string> toolkit_;
};

class ErrorCounter : public clang::DiagnosticConsumer {
 public:
  explicit ErrorCounter(BuildInfo& info) : info_(info) {}
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& d) override {
    if (level < clang::DiagnosticsEngine::Error) return;
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
  static std::mutex guard;
  static std::map<std::string, bool> seen;
  auto quick = stampFile(path, false);
  if (!quick) return false;
  std::string id = path + "\n" + std::to_string(quick->size) + "\n" + std::to_string(quick->mtimeNs) + "\n" + expected;
  {
    std::lock_guard<std::mutex> g(guard);
    if (auto it = seen.find(id); it != seen.end()) return it->second;
  }
  auto full = stampFile(path, true);
  bool ok = full && full->hash == expected;
  std::lock_guard<std::mutex> g(guard);
  seen[id] = ok;
  return ok;
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
std::optional<Preamble> preambleFor(const std::string& cacheDir, const std::vector<std::string>& keyArgs,
                                    const std::vector<std::string>& includes, const MakeParseFS& makeFS,
                                    std::vector<std::string>* log, std::string& whyNot, bool& mayBuild) {
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
  for (const auto& i : includes) p.headerText += "#include <" + i + ">\n";
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
  // Build it: the parse command with the preamble header as the input.
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
  PCHFactory factory(info, p.headerPath, tmp, toolkit);
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
  } else if (!info.nonSystem.empty()) {
    m.reason = "the preamble would hold " + info.nonSystem + ", which is not a system header";
  } else if (!fs::exists(tmp, ec)) {
    m.reason = "the preamble was not written";
  } else {
    m.usable = true;
  }
  for (const auto& f : info.files)
    if (auto s = stampFile(f, false)) m.deps.push_back(*s);
  json j;
  j["usable"] = m.usable;
  j["reason"] = m.reason;
  j["includes"] = includes;
  j["deps"] = json::array();
  for (const auto& d : m.deps) j["deps"].push_back({d.path, d.size, d.mtimeNs});
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

}  // namespace

std::optional<Preamble> getPreamble(const std::string& cacheDir, const std::vector<std::string>& args,
                                    const std::vector<std::string>& layoutDirs, const std::string& file,
                                    const MakeParseFS& makeFS, std::vector<std::string>* log, bool& mayBuild) {
  if (cacheDir.empty() || args.empty()) return std::nullopt;
  // The key: the command without the file and without the project-layout folders (searched last,
  // -idirafter, they cannot change which system header an include finds).
  std::vector<std::string> keyArgs;
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
  auto includes = leadingSystemIncludes(text);
  if (!includes.empty()) {
    if (auto p = preambleFor(cacheDir, keyArgs, includes, makeFS, log, whyNot, mayBuild)) return p;
    if (log) log->push_back(file + ": preamble of its leading includes not used (" + whyNot + ")");
  }
  if (auto p = preambleFor(cacheDir, keyArgs, {}, makeFS, log, whyNot, mayBuild)) return p;
  if (log) log->push_back(file + ": no preamble (" + whyNot + ")");
  return std::nullopt;
}

}  // namespace gpuopt
