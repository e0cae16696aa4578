#include "analyzer/frontend/program_calls.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer/frontend/cache.h"

#include <set>

namespace gpuopt {

const std::vector<ProgramCallSite>& ProgramCalls::callsOf(const std::string& name) const {
  static const std::vector<ProgramCallSite> none;
  auto it = calls_.find(name);
  return it == calls_.end() ? none : it->second;
}

const std::vector<std::string>& ProgramCalls::otherUsesOf(const std::string& name) const {
  static const std::vector<std::string> none;
  auto it = otherUses_.find(name);
  return it == otherUses_.end() ? none : it->second;
}

void ProgramCalls::addOtherUse(const std::string& name, const std::string& file) {
  auto& v = otherUses_[name];
  if (std::find(v.begin(), v.end(), file) == v.end()) v.push_back(file);
}

std::string ProgramCalls::fingerprint(const std::string& name) const {
  if (fingerprintsOnly_) {
    auto it = fingerprints_.find(name);
    return it != fingerprints_.end() ? it->second : hashText("");
  }
  // Sorted, so that the order the files were read in does not matter; lines left out, so that an
  // edit above a call keeps the answer.
  std::vector<std::string> parts;
  for (const auto& s : callsOf(name)) {
    std::string p = s.file + "(";
    for (const auto& a : s.args) p += (a ? std::to_string(*a) : std::string("?")) + ",";
    parts.push_back(p + ")");
  }
  for (const auto& f : otherUsesOf(name)) parts.push_back("&" + f);
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) out += p + ";";
  return hashText(out);
}

namespace {
using nlohmann::json;
namespace fs = std::filesystem;

std::string storedPath(const std::string& cacheDir, const std::string& dbDir, bool fingerprints) {
  std::error_code ec;
  const std::string abs = fs::weakly_canonical(dbDir, ec).string();
  return (fs::path(cacheDir) / "v1" / "program" / (hashText(abs) + (fingerprints ? ".fp.json" : ".json"))).string();
}

json stampsJson(const std::vector<FileStamp>& v) {
  json a = json::array();
  for (const auto& s : v) a.push_back({s.path, s.size, s.mtimeNs, s.hash});
  return a;
}
}  // namespace

void storeProgram(const std::string& cacheDir, const std::string& dbDir, const ProgramCalls& calls) {
  if (cacheDir.empty() || calls.sources.empty()) return;
  json full, fp;
  full["sources"] = fp["sources"] = stampsJson(calls.sources);
  full["files"] = calls.files_;
  json c = json::object(), o = json::object(), f = json::object();
  std::set<std::string> names;
  for (const auto& [name, sites] : calls.calls_) {
    json a = json::array();
    for (const auto& s : sites) {
      json args = json::array();
      for (const auto& v : s.args) args.push_back(v ? json(*v) : json(nullptr));
      a.push_back({s.file, s.line, args});
    }
    c[name] = a;
    names.insert(name);
  }
  for (const auto& [name, files] : calls.otherUses_) {
    o[name] = files;
    names.insert(name);
  }
  for (const auto& n : names) f[n] = calls.fingerprint(n);
  full["calls"] = c;
  full["otherUses"] = o;
  fp["fingerprints"] = f;
  std::error_code ec;
  fs::create_directories(fs::path(storedPath(cacheDir, dbDir, false)).parent_path(), ec);
  writeFileAtomically(storedPath(cacheDir, dbDir, false), full.dump());
  writeFileAtomically(storedPath(cacheDir, dbDir, true), fp.dump());
}

std::shared_ptr<const ProgramCalls> loadStoredProgram(const std::string& cacheDir, const std::string& dbDir,
                                                      bool fingerprintsOnly) {
  if (cacheDir.empty()) return nullptr;
  std::ifstream in(storedPath(cacheDir, dbDir, fingerprintsOnly), std::ios::binary);
  if (!in) return nullptr;
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("sources") || !j["sources"].is_array()) return nullptr;
  auto pc = std::make_shared<ProgramCalls>();
  try {
    for (const auto& s : j["sources"]) {
      FileStamp st;
      st.path = s.at(0).get<std::string>();
      st.size = s.at(1).get<uint64_t>();
      st.mtimeNs = s.at(2).get<int64_t>();
      st.hash = s.at(3).get<std::string>();
      if (!stampStillValid(st)) return nullptr;
      pc->sources.push_back(std::move(st));
    }
    if (fingerprintsOnly) {
      pc->fingerprintsOnly_ = true;
      for (const auto& [n, h] : j.at("fingerprints").items()) pc->fingerprints_[n] = h.get<std::string>();
      return pc;
    }
    pc->files_ = j.at("files").get<size_t>();
    for (const auto& [name, sites] : j.at("calls").items())
      for (const auto& s : sites) {
        ProgramCallSite site;
        site.file = s.at(0).get<std::string>();
        site.line = s.at(1).get<unsigned>();
        for (const auto& a : s.at(2)) site.args.push_back(a.is_null() ? std::nullopt : std::optional<int64_t>(a.get<int64_t>()));
        pc->addCall(name, std::move(site));
      }
    for (const auto& [name, files] : j.at("otherUses").items())
      for (const auto& f : files) pc->addOtherUse(name, f.get<std::string>());
  } catch (const std::exception&) {
    return nullptr;
  }
  return pc;
}

}  // namespace gpuopt
