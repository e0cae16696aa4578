#include "analyzer/cache.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/BLAKE3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "analyzer/frontend.h"

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

std::string hashText(std::string_view text) {
  llvm::BLAKE3 h;
  h.update(llvm::StringRef(text.data(), text.size()));
  auto r = h.final<16>();
  return llvm::toHex(r, /*LowerCase=*/true);
}

const std::string& toolIdentity() {
  static const std::string id = [] {
    std::string s = std::string("gpuopt-lint ") + GPUOPT_VERSION_STRING + "; llvm " + LLVM_VERSION_STRING;
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
      auto size = fs::file_size(exe, ec);
      auto t = fs::last_write_time(exe, ec);
      if (!ec)
        s += "; exe " + exe.string() + " " + std::to_string(size) + " " +
             std::to_string(t.time_since_epoch().count());
    }
    llvm::BLAKE3 h;
    for (const auto& [path, text] : bundledCudaHeaders()) {
      h.update(llvm::StringRef(path.data(), path.size()));
      h.update(llvm::StringRef(text.data(), text.size()));
    }
    s += "; bundled " + llvm::toHex(h.final<16>(), true);
    return s;
  }();
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

static std::optional<std::string> readWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<FileStamp> stampFile(const std::string& path, bool withHash) {
  std::error_code ec;
  FileStamp s;
  s.path = path;
  s.size = fs::file_size(path, ec);
  if (ec) return std::nullopt;
  s.mtimeNs = fs::last_write_time(path, ec).time_since_epoch().count();
  if (ec) return std::nullopt;
  if (withHash) {
    auto text = readWhole(path);
    if (!text) return std::nullopt;
    s.hash = hashText(*text);
  }
  return s;
}

bool stampStillValid(const FileStamp& s) {
  std::error_code ec;
  uint64_t size = fs::file_size(s.path, ec);
  if (ec || size != s.size) return false;
  if (s.hash.empty()) {
    auto t = fs::last_write_time(s.path, ec);
    return !ec && t.time_since_epoch().count() == s.mtimeNs;
  }
  auto text = readWhole(s.path);
  return text && hashText(*text) == s.hash;
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
  return j;
}

FileResult resultFrom(const json& j) {
  FileResult r;
  r.file = j.at("file").get<std::string>();
  r.kernels = j.at("kernels").get<int>();
  r.includer = j.at("includer").get<std::string>();
  for (const auto& d : j.at("diags")) r.diags.push_back(diagFrom(d));
  for (const auto& e : j.at("errors")) r.errors.push_back({e.at(0).get<std::string>(), e.at(1).get<std::string>()});
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

std::optional<CachedAnalysis> loadCachedResult(const std::string& cacheDir, const std::string& file,
                                               const std::string& key) {
  auto text = readWhole(entryPath(cacheDir, file));
  if (!text) return std::nullopt;
  try {
    json j = json::parse(*text);
    if (j.at("key").get<std::string>() != key) return std::nullopt;
    for (const auto& d : j.at("deps")) {
      FileStamp s;
      s.path = d.at(0).get<std::string>();
      s.size = d.at(1).get<uint64_t>();
      s.mtimeNs = d.at(2).get<int64_t>();
      s.hash = d.at(3).get<std::string>();
      if (!stampStillValid(s)) return std::nullopt;
    }
    CachedAnalysis a;
    a.result = resultFrom(j.at("result"));
    a.kernels = j.at("kernels").get<unsigned>();
    for (const auto& l : j.at("log")) a.log.push_back(l.get<std::string>());
    return a;
  } catch (const std::exception&) {
    return std::nullopt;  // corrupt or from another format: ignored, replaced by the next store
  }
}

void storeCachedResult(const std::string& cacheDir, const std::string& file, const std::string& key,
                       const std::vector<FileStamp>& deps, const CachedAnalysis& a) {
  json j;
  j["key"] = key;
  j["deps"] = json::array();
  for (const auto& d : deps) j["deps"].push_back({d.path, d.size, d.mtimeNs, d.hash});
  j["result"] = resultJson(a.result);
  j["kernels"] = a.kernels;
  j["log"] = a.log;
  std::string text;
  try {
    text = j.dump();
  } catch (const std::exception&) {
    return;  // text that is not UTF-8 (a message quoting the source): not stored
  }
  writeFileAtomically(entryPath(cacheDir, file), text);
}

}  // namespace gpuopt
