#include "analyzer/app/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <regex>
#include <sstream>

#include "analyzer/rule/rule_info.h"
#include "analyzer/report/suppression.h"

namespace gpuopt {
namespace fs = std::filesystem;

std::string findConfigFile(const std::string& file) {
  std::error_code ec;
  fs::path dir = fs::absolute(file, ec).parent_path();
  while (!dir.empty()) {
    for (const char* name : {".gpuopt-lint.yaml", ".gpuopt-lint.yml"})
      if (fs::exists(dir / name, ec)) return (dir / name).string();
    if (dir == dir.root_path()) break;
    dir = dir.parent_path();
  }
  return {};
}

namespace {
std::vector<std::string> splitWords(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string w; std::getline(ss, w, ',');)
    if (!w.empty()) out.push_back(w);
  return out;
}

std::vector<std::string> stringList(const YAML::Node& n, const std::string& key) {
  std::vector<std::string> out;
  if (n.IsScalar()) { out.push_back(n.as<std::string>()); return out; }
  if (!n.IsSequence()) throw YAML::RepresentationException(n.Mark(), "'" + key + "' must be a list of strings");
  for (const auto& x : n) out.push_back(x.as<std::string>());
  return out;
}

void checkRule(const YAML::Node& where, const std::string& id) {
  std::string pat = id[0] == '-' ? id.substr(1) : id;
  for (const auto& r : allRuleInfos())
    if (globMatch(pat, r.id)) return;
  throw YAML::RepresentationException(where.Mark(), "unknown rule '" + pat + "'");
}
}  // namespace

namespace {
bool loadConfigChain(const std::string& path, ResolvedOptions& out, std::string& error, std::vector<std::string>& chain) {
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (root.IsNull()) { out.configPath = path; return true; }
    if (!root.IsMap()) throw YAML::RepresentationException(root.Mark(), "the configuration must be a mapping");
    // extend: the other file first, whatever the order of the keys.
    if (const YAML::Node ext = root["extend"]) {
      if (!ext.IsScalar()) throw YAML::RepresentationException(ext.Mark(), "'extend' must be the path of another configuration file");
      fs::path base = fs::path(path).parent_path();
      std::error_code ec;
      fs::path parent = fs::weakly_canonical(base / ext.as<std::string>(), ec);
      if (!fs::exists(parent, ec))
        throw YAML::RepresentationException(ext.Mark(), "'extend': " + (base / ext.as<std::string>()).string() + " does not exist");
      if (std::find(chain.begin(), chain.end(), parent.string()) != chain.end())
        throw YAML::RepresentationException(ext.Mark(), "'extend': " + parent.string() + " extends itself (through " +
                                                            fmt::format("{}", fmt::join(chain, " -> ")) + ")");
      chain.push_back(parent.string());
      if (!loadConfigChain(parent.string(), out, error, chain)) return false;
      out.extended.insert(out.extended.begin(), parent.string());
    }
    for (const auto& kv : root) {
      std::string key = kv.first.as<std::string>();
      const YAML::Node& v = kv.second;
      if (key == "extend") {
        continue;
      } else if (key == "rules") {
        auto list = stringList(v, key);
        for (const auto& r : list) checkRule(v, r);
        out.enabledPatterns.insert(out.enabledPatterns.end(), list.begin(), list.end());  // after an extended file's
      } else if (key == "severity") {
        if (!v.IsMap()) throw YAML::RepresentationException(v.Mark(), "'severity' must map rule ids to note/warning/error");
        for (const auto& s : v) {
          std::string id = s.first.as<std::string>();
          checkRule(s.first, id);
          Severity sev;
          if (!parseSeverity(s.second.as<std::string>(), sev))
            throw YAML::RepresentationException(s.second.Mark(), "severity must be note, warning or error");
          out.severities[id] = sev;
        }
      } else if (key == "fail-on") {
        if (!parseSeverity(v.as<std::string>(), out.failOn))
          throw YAML::RepresentationException(v.Mark(), "'fail-on' must be note, warning or error");
      } else if (key == "block-dim") {
        // [X, Y, Z] for every kernel no launch in the code gives a shape; {NAME: [X, Y, Z], ...} per
        // kernel ("*" for every kernel).
        auto dims = [&](const YAML::Node& n) {
          std::vector<unsigned> d;
          if (n.IsScalar()) d.push_back(n.as<unsigned>());
          else for (const auto& x : n) d.push_back(x.as<unsigned>());
          if (d.empty() || d.size() > 3) throw YAML::RepresentationException(n.Mark(), "'block-dim' must be 1 to 3 numbers");
          unsigned long long total = 1;
          for (auto x : d) total *= x;
          if (total == 0 || total > 1024) throw YAML::RepresentationException(n.Mark(), "'block-dim' must have 1 to 1024 threads");
          return std::array<unsigned, 3>{d[0], d.size() > 1 ? d[1] : 1, d.size() > 2 ? d[2] : 1};
        };
        auto& m = out.analysis.model;
        if (v.IsMap()) {
          for (const auto& kv2 : v) {
            std::string name = kv2.first.as<std::string>();
            auto d = dims(kv2.second);
            if (name == "*") m.blockX = d[0], m.blockY = d[1], m.blockZ = d[2], m.blockDimGiven = true;
            else m.kernelBlocks[name] = d;
          }
        } else {
          auto d = dims(v);
          m.blockX = d[0], m.blockY = d[1], m.blockZ = d[2];
          m.blockDimGiven = true;
        }
      } else if (key == "max-instantiations") {
        int n = -1;
        try {
          n = v.as<int>();
        } catch (const YAML::Exception&) {
        }
        if (n < 0) throw YAML::RepresentationException(v.Mark(), "'max-instantiations' must be a whole number (0: every instantiation)");
        out.analysis.model.maxInstantiations = static_cast<unsigned>(n);
      } else if (key == "gpu-arch") {
        out.analysis.frontend.gpuArch = v.as<std::string>();
        if (out.analysis.frontend.gpuArch.rfind("sm_", 0) != 0) throw YAML::RepresentationException(v.Mark(), "'gpu-arch' must be sm_XX");
      } else if (key == "compiler-args") {
        auto list = stringList(v, key);
        out.analysis.frontend.extraArgs.insert(out.analysis.frontend.extraArgs.end(), list.begin(), list.end());
      } else if (key == "exclude") {
        fs::path base = fs::path(path).parent_path();
        for (const auto& g : stringList(v, key)) out.enabledPatterns.push_back("!exclude:" + (base / g).string());
      } else if (key == "per-file-ignores") {
        // ruff's per-file-ignores: {glob relative to this file's folder: [rule ids or globs]}.
        if (!v.IsMap()) throw YAML::RepresentationException(v.Mark(), "'per-file-ignores' must map path globs to lists of rules");
        fs::path base = fs::path(path).parent_path();
        for (const auto& e : v) {
          auto rules = stringList(e.second, "per-file-ignores");
          for (const auto& r : rules) checkRule(e.second, r);
          fs::path glob = fs::path(e.first.as<std::string>()).is_absolute() ? fs::path(e.first.as<std::string>())
                                                                            : base / e.first.as<std::string>();
          out.perFileIgnores.push_back({glob.lexically_normal().string(), rules});
        }
      } else if (key == "header-filter") {
        std::string re = v.as<std::string>();
        try {
          std::regex check(re, std::regex::extended);
        } catch (const std::regex_error& e) {
          throw YAML::RepresentationException(v.Mark(), "'header-filter' is not a valid regular expression: " + std::string(e.what()));
        }
        out.analysis.headerFilter = re;
      } else if (key == "options") {
        if (!v.IsMap()) throw YAML::RepresentationException(v.Mark(), "'options' must map rule ids to option maps");
        for (const auto& r : v) {
          std::string id = r.first.as<std::string>();
          const RuleInfo* info = findRuleInfo(id);
          if (!info) throw YAML::RepresentationException(r.first.Mark(), "unknown rule '" + id + "' (options take exact rule ids)");
          if (!r.second.IsMap()) throw YAML::RepresentationException(r.second.Mark(), "options of '" + id + "' must be a mapping");
          for (const auto& o : r.second) {
            std::string name = o.first.as<std::string>();
            // Every rule takes `min-impact` (rules/cost.h: below it a finding is a note).
            if (name == "min-impact") {
              out.analysis.model.ruleOptions[id + "." + name] = o.second.as<double>();
              continue;
            }
            // A misspelled option would silently keep the default: an error, as an unknown key is.
            if (info->options.empty())
              throw YAML::RepresentationException(o.first.Mark(), "rule '" + id + "' has no options (see gpuopt-lint --explain " + id + ")");
            if (!ruleHasOption(*info, name)) {
              std::string known(info->options);
              std::replace(known.begin(), known.end(), ' ', ',');
              throw YAML::RepresentationException(o.first.Mark(), "unknown option '" + name + "' for rule '" + id +
                                                                      "' (its options: " + fmt::format("{}", fmt::join(splitWords(known), ", ")) + ")");
            }
            out.analysis.model.ruleOptions[id + "." + name] = o.second.as<double>();
          }
        }
      } else {
        throw YAML::RepresentationException(kv.first.Mark(), "unknown key '" + key + "'");
      }
    }
    out.configPath = path;
    return true;
  } catch (const YAML::Exception& e) {
    error = fmt::format("{}:{}:{}: invalid configuration: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg);
    return false;
  }
}
}  // namespace

bool loadConfigFile(const std::string& path, ResolvedOptions& out, std::string& error) {
  std::error_code ec;
  std::vector<std::string> chain = {fs::weakly_canonical(path, ec).string()};
  return loadConfigChain(path, out, error, chain);
}

bool ignoredInFile(const ResolvedOptions& r, const std::string& file, const std::string& rule) {
  if (r.perFileIgnores.empty()) return false;
  std::error_code ec;
  std::string abs = fs::absolute(file, ec).lexically_normal().string();
  for (const auto& [glob, rules] : r.perFileIgnores) {
    if (!globMatch(glob, abs)) continue;
    for (const auto& g : rules)
      if (globMatch(g, rule)) return true;
  }
  return false;
}

bool resolveOptions(const CliOptions& cli, const std::string& file, ResolvedOptions& out, std::string& error) {
  out = ResolvedOptions{};
  out.analysis.frontend = cli.frontend;
  out.analysis.frontend.extraArgs.clear();
  if (!cli.noConfig) {
    std::string path = cli.configFile.empty() ? findConfigFile(file) : cli.configFile;
    if (!cli.configFile.empty() && !fs::exists(path)) {
      error = "configuration file '" + path + "' does not exist";
      return false;
    }
    if (!path.empty() && !loadConfigFile(path, out, error)) return false;
    if (!path.empty()) {
      std::string chain = path;
      for (const auto& e : out.extended) chain += ", extending " + e;
      out.log.push_back(file + ": configuration " + chain);
      // The nearest file is the whole configuration: say so when one above it is left out.
      std::error_code ec;
      fs::path dir = fs::absolute(out.extended.empty() ? path : out.extended.back(), ec).parent_path();
      if (cli.configFile.empty() && dir.has_parent_path() && dir != dir.root_path()) {
        std::string above = findConfigFile((dir.parent_path() / "x").string());
        if (!above.empty())
          out.log.push_back(file + ": " + (out.extended.empty() ? path : out.extended.back()) + " does not extend " +
                            above + ": its settings do not apply (add `extend: " +
                            fs::path(above).lexically_relative(fs::absolute(path, ec).parent_path()).string() + "` to inherit them)");
      }
    }
  }
  // Command line wins.
  if (cli.gpuArchGiven) out.analysis.frontend.gpuArch = cli.frontend.gpuArch;
  out.analysis.frontend.extraArgs.insert(out.analysis.frontend.extraArgs.end(), cli.frontend.extraArgs.begin(),
                                         cli.frontend.extraArgs.end());
  auto& m = out.analysis.model;
  if (cli.blockDim[0]) {
    m.blockX = cli.blockDim[0], m.blockY = cli.blockDim[1], m.blockZ = cli.blockDim[2];
    m.blockDimGiven = true;
  }
  for (const auto& [name, d] : cli.kernelBlockDims) m.kernelBlocks[name] = d;
  if (cli.maxInstantiations >= 0) m.maxInstantiations = static_cast<unsigned>(cli.maxInstantiations);
  if (!cli.failOn.empty()) parseSeverity(cli.failOn, out.failOn);
  if (cli.headerFilter) out.analysis.headerFilter = cli.headerFilter;
  // Enabled rules: config patterns, then --rules replaces, --disable removes.
  std::vector<std::string> patterns;
  for (const auto& p : out.enabledPatterns) {
    if (p.rfind("!exclude:", 0) == 0) {
      std::error_code ec;
      std::string abs = fs::absolute(file, ec).lexically_normal().string();
      if (globMatch(p.substr(9), abs)) out.excluded = true;
    } else {
      patterns.push_back(p);
    }
  }
  if (cli.rulesGiven) patterns = cli.rules;
  patterns.insert(patterns.end(), cli.checks.begin(), cli.checks.end());
  for (const auto& d : cli.disable) patterns.push_back("-" + d);
  bool anyPositive = false;
  for (const auto& p : patterns) anyPositive = anyPositive || p[0] != '-';
  for (const auto& r : allRuleInfos()) {
    bool on = !anyPositive;
    for (const auto& p : patterns) {
      if (p[0] == '-') { if (globMatch(p.substr(1), r.id)) on = false; }
      else if (globMatch(p, r.id)) on = true;
    }
    if (on) out.analysis.enabledRules.insert(std::string(r.id));
  }
  if (out.analysis.enabledRules.empty()) out.analysis.enabledRules.insert("(none)");
  return true;
}

std::string dumpConfig(const ResolvedOptions& r) {
  YAML::Emitter e;
  std::string from = r.configPath;
  for (const auto& x : r.extended) from += ", which extends " + x + ",";
  e << YAML::Comment(r.configPath.empty() ? "no .gpuopt-lint.yaml found; defaults and command line"
                                          : "from " + from + " and the command line");
  e << YAML::BeginMap;
  e << YAML::Key << "rules" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& id : r.analysis.enabledRules)
    if (id != "(none)") e << id;
  e << YAML::EndSeq;
  e << YAML::Key << "severity" << YAML::Value << YAML::BeginMap;
  for (const auto& info : allRuleInfos()) {
    auto it = r.severities.find(std::string(info.id));
    e << YAML::Key << std::string(info.id) << YAML::Value
      << std::string(severityName(it == r.severities.end() ? info.severity : it->second));
  }
  e << YAML::EndMap;
  e << YAML::Key << "fail-on" << YAML::Value << std::string(severityName(r.failOn));
  const auto& m = r.analysis.model;
  if (m.kernelBlocks.empty()) {
    e << YAML::Key << "block-dim" << YAML::Value << YAML::Flow << YAML::BeginSeq << m.blockX << m.blockY << m.blockZ << YAML::EndSeq;
  } else {
    e << YAML::Key << "block-dim" << YAML::Value << YAML::BeginMap;
    if (m.blockDimGiven) e << YAML::Key << "*" << YAML::Value << YAML::Flow << YAML::BeginSeq << m.blockX << m.blockY << m.blockZ << YAML::EndSeq;
    for (const auto& [name, d] : m.kernelBlocks)
      e << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginSeq << d[0] << d[1] << d[2] << YAML::EndSeq;
    e << YAML::EndMap;
  }
  e << YAML::Key << "max-instantiations" << YAML::Value << m.maxInstantiations;
  e << YAML::Key << "gpu-arch" << YAML::Value << r.analysis.frontend.gpuArch;
  e << YAML::Key << "compiler-args" << YAML::Value << YAML::Flow << r.analysis.frontend.extraArgs;
  if (r.analysis.headerFilter) e << YAML::Key << "header-filter" << YAML::Value << *r.analysis.headerFilter;
  e << YAML::Key << "options" << YAML::Value << YAML::BeginMap;
  for (const auto& [k, v] : m.ruleOptions) e << YAML::Key << k << YAML::Value << v;
  e << YAML::EndMap;
  if (!r.perFileIgnores.empty()) {
    e << YAML::Key << "per-file-ignores" << YAML::Value << YAML::BeginMap;
    for (const auto& [g, rules] : r.perFileIgnores) e << YAML::Key << g << YAML::Value << YAML::Flow << rules;
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

void applySeverities(const ResolvedOptions& r, std::vector<Diagnostic>& diags) {
  for (auto& d : diags) {
    auto it = r.severities.find(d.ruleId);
    if (it != r.severities.end()) d.severity = it->second;
  }
}

bool meetsFailThreshold(const ResolvedOptions& r, const Diagnostic& d) {
  return static_cast<int>(d.severity) >= static_cast<int>(r.failOn);
}

}  // namespace gpuopt
