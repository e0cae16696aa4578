#include "analyzer/frontend/cache.h"

// LLVM's BLAKE3 through its C interface: the C++ wrapper would pull LLVM's C++ support code
// into the launcher (see analyzer/CMakeLists.txt).
#include <llvm-c/blake3.h>
#include <llvm/Config/llvm-config.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyzer/engine/engine.h"
#include "analyzer/frontend/frontend.h"
#include "analyzer/report/safe_write.h"

#ifndef GPUOPT_VERSION_STRING
#define GPUOPT_VERSION_STRING "dev"
#endif

namespace gpuopt {
namespace fs = std::filesystem;
using nlohmann::json;

std::string defaultCacheDir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x && fs::path(x).is_absolute())
    return (fs::path(x) / "gpuopt-lint").string();
  if (const char* h = std::getenv("HOME"); h && *h) return (fs::path(h) / ".cache" / "gpuopt-lint").string();
  return {};
}

std::optional<std::string> cacheDirProblem(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return ec.message();
  if (!fs::is_directory(dir, ec)) return std::string("not a folder");
  // access(W_OK) says yes to root on a read-only mode: try to make a file.
  std::string probe = (fs::path(dir) / (".probe.tmp." + std::to_string(::getpid()))).string();
  std::ofstream out(probe, std::ios::binary | std::ios::trunc);
  if (!out) return std::string(std::strerror(errno));
  out.close();
  fs::remove(probe, ec);
  return std::nullopt;
}

namespace {
// 128 bits of BLAKE3 over the parts, in hex.
class Hasher {
 public:
  Hasher() { llvm_blake3_hasher_init(&h_); }
  void update(std::string_view s) { llvm_blake3_hasher_update(&h_, s.data(), s.size()); }
  std::string hex() const {
    uint8_t out[16];
    llvm_blake3_hasher_finalize(&h_, out, sizeof out);
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    for (uint8_t b : out) {
      s += digits[b >> 4];
      s += digits[b & 15];
    }
    return s;
  }

 private:
  llvm_blake3_hasher h_;
};
}  // namespace

std::string hashText(std::string_view text) {
  Hasher h;
  h.update(text);
  return h.hex();
}

std::string toolIdentityOf(const std::string& exePath) {
  std::string s = std::string("gpuopt-lint ") + GPUOPT_VERSION_STRING + "; llvm " + LLVM_VERSION_STRING;
  std::error_code ec;
  fs::path exe = fs::canonical(exePath, ec);
  if (!ec) {
    auto size = fs::file_size(exe, ec);
    auto t = fs::last_write_time(exe, ec);
    if (!ec)
      s += "; exe " + exe.string() + " " + std::to_string(size) + " " + std::to_string(t.time_since_epoch().count());
  }
  // The bundled headers are compiled into both the launcher and the analyzer: the same text.
  static const std::string bundled = [] {
    Hasher h;
    for (const auto& [path, text] : bundledCudaHeaders()) {
      h.update(path);
      h.update(text);
    }
    return h.hex();
  }();
  return s + "; bundled " + bundled;
}

const std::string& toolIdentity() {
  static const std::string id = toolIdentityOf("/proc/self/exe");
  return id;
}

bool writeFileAtomically(const std::string& path, std::string_view text) {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::ostringstream tmpName;
  tmpName << path << ".tmp." << ::getpid() << "." << std::this_thread::get_id() << "." << counter++;
  std::string tmp = tmpName.str();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

std::string withChecksum(std::string_view magic, std::string_view body) {
  return std::string(magic) + " " + hashText(body) + "\n" + std::string(body);
}

std::optional<std::string_view> checkedBody(std::string_view magic, std::string_view text) {
  if (text.size() <= magic.size() || text.substr(0, magic.size()) != magic || text[magic.size()] != ' ')
    return std::nullopt;
  size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  std::string_view body = text.substr(nl + 1);
  if (text.substr(magic.size() + 1, nl - magic.size() - 1) != hashText(body)) return std::nullopt;
  return body;
}

// One read into a buffer of the file's size (a stringstream copied a 23 MB PCH four times over).
static std::optional<std::string> readWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  std::streamoff size = in.tellg();
  if (size < 0) return std::nullopt;
  std::string text(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (size > 0 && !in.read(text.data(), size)) return std::nullopt;
  return text;
}

// The content hash of a file, read in 1 MiB pieces (a PCH is not held in memory to be hashed).
static std::optional<std::string> hashFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  Hasher h;
  std::vector<char> buf(size_t(1) << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) h.update(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) return std::nullopt;
  return h.hex();
}

namespace {
// A file's content hash, once per process for each (path, size, time): a run stamps and checks the
// same project files for many units (every unit of a folder depends on the folder's headers and on
// the files scanned for its includers).
std::optional<std::string> contentHash(const std::string& path, uint64_t size, int64_t mtime) {
  static std::mutex guard;
  static std::map<std::string, std::string> seen;
  std::string id = fmt::format("{}\n{}\n{}", path, size, mtime);
  {
    std::lock_guard<std::mutex> g(guard);
    if (auto it = seen.find(id); it != seen.end()) return it->second;
  }
  auto hash = hashFile(path);
  if (!hash) return std::nullopt;
  std::lock_guard<std::mutex> g(guard);
  seen[id] = *hash;
  return hash;
}
}  // namespace

std::optional<FileStamp> stampFile(const std::string& path, bool withHash) {
  std::error_code ec;
  FileStamp s;
  s.path = path;
  s.size = fs::file_size(path, ec);
  if (ec) return std::nullopt;
  s.mtimeNs = fs::last_write_time(path, ec).time_since_epoch().count();
  if (ec) return std::nullopt;
  if (withHash) {
    auto hash = contentHash(path, s.size, s.mtimeNs);
    if (!hash) return std::nullopt;
    s.hash = std::move(*hash);
  }
  return s;
}

namespace {
std::optional<std::string> folderNames(const std::string& path, bool sourcesOnly) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return std::nullopt;
  std::vector<std::string> names;
  size_t n = 0;
  for (auto it = fs::directory_iterator(path, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (++n > 2000) break;  // as far as findIncluders looks
    if (sourcesOnly && (!it->is_regular_file(ec) || !isSourceExtension(it->path()))) continue;
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::string all;
  for (const auto& x : names) all += x + '\0';
  return std::string(sourcesOnly ? "sources:" : "folder:") + hashText(all);
}
}  // namespace

std::optional<FileStamp> stampFolder(const std::string& path, bool sourcesOnly) {
  auto names = folderNames(path, sourcesOnly);
  if (!names) return std::nullopt;
  FileStamp s;
  s.path = path;
  s.hash = *names;
  return s;
}

bool stampStillValid(const FileStamp& s) {
  std::error_code ec;
  for (bool sourcesOnly : {false, true})
    if (s.hash.rfind(sourcesOnly ? "sources:" : "folder:", 0) == 0) {
      auto names = folderNames(s.path, sourcesOnly);
      return names && *names == s.hash;
    }
  uint64_t size = fs::file_size(s.path, ec);
  if (ec || size != s.size) return false;
  auto t = fs::last_write_time(s.path, ec);
  if (ec) return false;
  const int64_t mtime = t.time_since_epoch().count();
  if (s.hash.empty()) return mtime == s.mtimeNs;
  auto hash = contentHash(s.path, size, mtime);
  return hash && *hash == s.hash;
}

std::string resultKey(const std::string& file, const AnalysisOptions& opts, const std::string& resourceDir,
                      const std::string& cudaPath, const std::string& toolId) {
  std::error_code ec;
  const FrontendOptions& fo = opts.frontend;
  std::string k = toolId + "\n" + fs::current_path(ec).string() + "\n" + resourceDir + "\n" + cudaPath + "\nfile:" + file + "\n";
  // (Only what changes the analysis: --verbose, the output format and the other output options
  // change what is printed, not the findings, so they are not part of the key.)
  k += fmt::format("frontend:{}|{}|{}|{}|{}|{}\n", fo.compileCommandsDir, fo.cudaPath, fo.noCuda, fo.resourceDir,
                   fo.gpuArch, fo.maxFileBytes);
  for (const auto& a : fo.extraArgs) k += "extra:" + a + '\0';
  // What decides the parse command (commandForFile, analyzer/engine/parse_command.cpp): the compilation database's text and
  // the Makefile's (a database without an entry for the file falls back to the Makefile); the
  // project layout folders; then the command itself.
  for (const auto& src : commandSources(file, fo.compileCommandsDir))
    if (auto text = readWhole(src)) k += "source:" + src + " " + hashText(*text) + "\n";
  std::vector<std::string> flags = makefileFlags(file);
  auto layout = projectLayoutIncludeDirs(file);
  for (const auto& d : layout) k += "layout:" + d + "\n";
  for (const auto& a : buildParseCommand(file, fo, resourceDir, cudaPath, flags, layout).args) k += a + '\0';
  k += fmt::format("\nrules:{}\nblock:{},{},{},{}\n", fmt::join(opts.enabledRules, ","), opts.model.blockX,
                   opts.model.blockY, opts.model.blockZ, opts.model.blockDimGiven);
  for (const auto& [name, d] : opts.model.kernelBlocks) k += fmt::format("block:{}={},{},{}\n", name, d[0], d[1], d[2]);
  for (const auto& [name, value] : opts.model.ruleOptions) k += fmt::format("{}={}\n", name, value);
  k += fmt::format("max-instantiations:{}\n", opts.model.maxInstantiations);
  // Which included files are linted (--header-filter) and which other inputs may be includers.
  k += "header-filter:" + (opts.headerFilter ? "=" + *opts.headerFilter : std::string("-")) + "\n";
  for (const auto& o : opts.otherInputs) k += "input:" + o + "\n";
  return hashText(k);
}

std::optional<FileAnalysis> cachedAnalysis(const std::string& file, const AnalysisOptions& opts,
                                           const std::string& resourceDir, const std::string& cudaPath,
                                           const std::string& toolId, std::string* key) {
  if (opts.cache.dir.empty() || !opts.cache.results || !opts.overlays.empty()) return std::nullopt;
  std::string k = resultKey(file, opts, resourceDir, cudaPath, toolId);
  if (key) *key = k;
  auto c = loadCachedResult(opts.cache.dir, file, k);
  if (!c) return std::nullopt;
  // What it read of the program's other files: the same answers now (the launcher has the
  // fingerprints of the cache's copy of the index, or none when it is stale: the analyzer answers).
  for (const auto& [name, fp] : c->result.programFacts)
    if (!opts.programCalls || opts.programCalls->fingerprint(name) != fp) return std::nullopt;
  FileAnalysis fa;
  fa.result = std::move(c->result);
  fa.kernels = c->kernels;
  fa.log = std::move(c->log);
  fa.log.push_back(file + ": unchanged since the last run; findings from the result cache");
  fa.fromCache = true;
  return fa;
}

// --- serialisation ------------------------------------------------------------------------------

namespace {
json spanJson(const SourceSpan& s) {
  return json::array({s.begin.file, s.begin.line, s.begin.col, s.endLine, s.endCol});
}
SourceSpan spanFrom(const json& j) {
  SourceSpan s;
  s.begin.file = j.at(0).get<std::string>();
  s.begin.line = j.at(1).get<unsigned>();
  s.begin.col = j.at(2).get<unsigned>();
  s.endLine = j.at(3).get<unsigned>();
  s.endCol = j.at(4).get<unsigned>();
  return s;
}

json diagJson(const Diagnostic& d) {
  json j;
  j["rule"] = d.ruleId;
  j["severity"] = static_cast<int>(d.severity);
  j["span"] = spanJson(d.span);
  j["message"] = d.message;
  j["notes"] = json::array();
  for (const auto& n : d.notes) j["notes"].push_back({spanJson(n.span), n.message});
  j["fixHint"] = d.fixHint;
  j["fixIts"] = json::array();
  for (const auto& f : d.fixIts) j["fixIts"].push_back({spanJson(f.span), f.replacement});
  j["demo"] = d.demo;
  j["function"] = d.function;
  j["related"] = json::array();
  for (const auto& r : d.related) j["related"].push_back(spanJson(r));
  j["fingerprint"] = d.fingerprint;
  if (!d.measuredTag.empty()) j["measuredTag"] = d.measuredTag;
  if (!d.instantiations.empty()) j["instantiations"] = d.instantiations;
  j["impact"] = d.impact;
  if (!d.impactText.empty()) j["impactText"] = d.impactText;
  return j;
}

Diagnostic diagFrom(const json& j) {
  Diagnostic d;
  d.ruleId = j.at("rule").get<std::string>();
  int sev = j.at("severity").get<int>();
  if (sev < 0 || sev > 2) throw std::runtime_error("bad severity");
  d.severity = static_cast<Severity>(sev);
  d.span = spanFrom(j.at("span"));
  d.message = j.at("message").get<std::string>();
  for (const auto& n : j.at("notes")) d.notes.push_back({spanFrom(n.at(0)), n.at(1).get<std::string>()});
  d.fixHint = j.at("fixHint").get<std::string>();
  for (const auto& f : j.at("fixIts")) d.fixIts.push_back({spanFrom(f.at(0)), f.at(1).get<std::string>()});
  d.demo = j.at("demo").get<std::string>();
  d.function = j.at("function").get<std::string>();
  for (const auto& r : j.at("related")) d.related.push_back(spanFrom(r));
  d.fingerprint = j.at("fingerprint").get<std::string>();
  d.measuredTag = j.value("measuredTag", std::string());
  d.instantiations = j.value("instantiations", std::vector<std::string>());
  d.impact = j.value("impact", -1.0);
  d.impactText = j.value("impactText", std::string());
  return d;
}

json resultJson(const FileResult& r) {
  json j;
  j["file"] = r.file;
  j["kernels"] = r.kernels;
  j["includer"] = r.includer;
  j["diags"] = json::array();
  for (const auto& d : r.diags) j["diags"].push_back(diagJson(d));
  j["errors"] = json::array();
  for (const auto& e : r.errors) j["errors"].push_back({e.file, e.message});
  j["coverage"] = json::array();
  for (const auto& k : r.coverage) {
    json g = json::array();
    for (const auto& x : k.unanalysed) g.push_back({x.file, x.firstLine, x.lastLine, x.reason});
    j["coverage"].push_back({k.kernel, spanJson(k.where), k.accessesTotal, k.accessesReached, g, k.whole, k.capped});
  }
  j["sourceHashes"] = r.sourceHashes;
  if (!r.programFacts.empty()) j["programFacts"] = r.programFacts;
  return j;
}

FileResult resultFrom(const json& j) {
  FileResult r;
  r.file = j.at("file").get<std::string>();
  r.kernels = j.at("kernels").get<int>();
  r.includer = j.at("includer").get<std::string>();
  for (const auto& d : j.at("diags")) r.diags.push_back(diagFrom(d));
  for (const auto& e : j.at("errors")) r.errors.push_back({e.at(0).get<std::string>(), e.at(1).get<std::string>()});
  for (const auto& k : j.at("coverage")) {
    KernelCoverage c;
    c.kernel = k.at(0).get<std::string>();
    c.where = spanFrom(k.at(1));
    c.accessesTotal = k.at(2).get<unsigned>();
    c.accessesReached = k.at(3).get<unsigned>();
    for (const auto& x : k.at(4))
      c.unanalysed.push_back({x.at(0).get<std::string>(), x.at(1).get<unsigned>(), x.at(2).get<unsigned>(), x.at(3).get<std::string>()});
    c.whole = k.at(5).get<std::string>();
    c.capped = k.size() > 6 && k.at(6).get<bool>();
    r.coverage.push_back(std::move(c));
  }
  for (const auto& [f, h] : j.at("sourceHashes").items()) r.sourceHashes[f] = h.get<std::string>();
  if (j.contains("programFacts"))
    for (const auto& [n, h] : j.at("programFacts").items()) r.programFacts[n] = h.get<std::string>();
  return r;
}

std::string entryPath(const std::string& cacheDir, const std::string& file) {
  std::error_code ec;
  std::string abs = fs::absolute(file, ec).lexically_normal().string();
  // The name a file is reported under depends on how it was named on the command line and from where.
  std::string cwd = fs::current_path(ec).string();
  return (fs::path(cacheDir) / "v1" / "results" / (hashText(abs + "\n" + file + "\n" + cwd) + ".json")).string();
}
}  // namespace

std::string fileResultToJson(const FileResult& r) {
  return resultJson(r).dump(1, ' ', false, json::error_handler_t::replace);
}

// An entry is "gpuopt-lint-result <checksum>\n" followed by its JSON (withChecksum): a flipped
// bit, a truncated or emptied entry, an edit: a miss, never findings.
static constexpr std::string_view kEntryMagic = "gpuopt-lint-result";

std::optional<StoredResult> parseResultEntry(std::string_view text, const std::string& key) {
  auto checked = checkedBody(kEntryMagic, text);
  if (!checked) return std::nullopt;
  std::string_view body = *checked;
  try {
    json j = json::parse(body);
    if (j.at("key").get<std::string>() != key) return std::nullopt;
    StoredResult r;
    for (const auto& d : j.at("deps")) {
      FileStamp s;
      s.path = d.at(0).get<std::string>();
      s.size = d.at(1).get<uint64_t>();
      s.mtimeNs = d.at(2).get<int64_t>();
      s.hash = d.at(3).get<std::string>();
      r.deps.push_back(std::move(s));
    }
    r.analysis.result = resultFrom(j.at("result"));
    r.analysis.kernels = j.at("kernels").get<unsigned>();
    for (const auto& l : j.at("log")) r.analysis.log.push_back(l.get<std::string>());
    return r;
  } catch (const std::exception&) {
    return std::nullopt;  // from another format: ignored, replaced by the next store
  }
}

std::string resultEntryText(const std::string& key, const std::vector<FileStamp>& deps, const CachedAnalysis& a) {
  json j;
  j["key"] = key;
  j["deps"] = json::array();
  for (const auto& d : deps) j["deps"].push_back({d.path, d.size, d.mtimeNs, d.hash});
  j["result"] = resultJson(a.result);
  j["kernels"] = a.kernels;
  j["log"] = a.log;
  std::string body;
  try {
    body = j.dump();
  } catch (const std::exception&) {
    return {};  // text that is not UTF-8 (a message quoting the source): not stored
  }
  return withChecksum(kEntryMagic, body);
}

std::optional<CachedAnalysis> loadCachedResult(const std::string& cacheDir, const std::string& file,
                                               const std::string& key) {
  auto text = readWhole(entryPath(cacheDir, file));
  if (!text) return std::nullopt;
  auto r = parseResultEntry(*text, key);
  if (!r) return std::nullopt;
  for (const auto& s : r->deps)
    if (!stampStillValid(s)) return std::nullopt;
  return std::move(r->analysis);
}

void storeCachedResult(const std::string& cacheDir, const std::string& file, const std::string& key,
                       const std::vector<FileStamp>& deps, const CachedAnalysis& a) {
  std::string text = resultEntryText(key, deps, a);
  if (text.empty()) return;
  std::string path = entryPath(cacheDir, file);
  // Once per process: the temporary entries of runs that were killed.
  static std::once_flag cleaned;
  std::call_once(cleaned, [&] { removeDeadTemporaries(fs::path(path).parent_path().string(), ""); });
  writeFileAtomically(path, text);
}

}  // namespace gpuopt
