#include "analyzer/app/merge_sarif.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

namespace gpuopt {

using json = nlohmann::json;

namespace {

std::string rootOf(const json& run) {
  if (run.contains("originalUriBaseIds") && run["originalUriBaseIds"].contains("%SRCROOT%"))
    return run["originalUriBaseIds"]["%SRCROOT%"].value("uri", "");
  return "";
}

// A location relative to %SRCROOT% made absolute from `root` (a file:// URI ending in '/').
void absolutize(json& node, const std::string& root) {
  if (node.is_object()) {
    if (node.contains("uriBaseId") && node["uriBaseId"] == "%SRCROOT%" && node.contains("uri") && node["uri"].is_string()) {
      node["uri"] = root + node["uri"].get<std::string>();
      node.erase("uriBaseId");
    }
    for (auto& [k, v] : node.items()) absolutize(v, root);
  } else if (node.is_array()) {
    for (auto& v : node) absolutize(v, root);
  }
}

}  // namespace

bool mergeSarif(const std::vector<std::string>& inputs, const std::vector<std::string>& names, std::string& out,
                std::string& error) {
  std::vector<json> logs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    json log = json::parse(inputs[i], nullptr, false);
    const std::string& name = names[i];
    if (log.is_discarded() || !log.is_object()) {
      error = name + ": not a JSON document (is it a SARIF log from --format sarif?)";
      return false;
    }
    if (log.value("version", "") != "2.1.0" || !log.contains("runs") || !log["runs"].is_array()) {
      error = name + ": not a SARIF 2.1.0 log (no \"version\": \"2.1.0\" with a \"runs\" array)";
      return false;
    }
    for (const auto& run : log["runs"])
      if (!run.is_object() || !run.contains("tool") || !run["tool"].contains("driver") ||
          !run["tool"]["driver"].contains("name")) {
        error = name + ": a run without tool.driver.name";
        return false;
      }
    logs.push_back(std::move(log));
  }
  // Runs grouped by tool (name), in the order first seen.
  std::vector<std::string> order;
  std::map<std::string, std::vector<json>> byTool;
  for (const auto& log : logs)
    for (const auto& run : log["runs"]) {
      std::string tool = run["tool"]["driver"]["name"].get<std::string>();
      if (!byTool.count(tool)) order.push_back(tool);
      byTool[tool].push_back(run);
    }
  json runs = json::array();
  for (const auto& tool : order) {
    auto& group = byTool[tool];
    std::string root = rootOf(group.front());
    bool sameRoot = true;
    for (const auto& r : group) sameRoot = sameRoot && rootOf(r) == root;
    json merged = group.front();
    json rules = json::array();
    std::vector<std::string> ruleIds;
    json results = json::array(), invocations = json::array();
    for (auto& run : group) {
      const json runRules = run["tool"]["driver"].value("rules", json::array());
      for (const auto& r : runRules) {
        std::string id = r.value("id", "");
        if (std::find(ruleIds.begin(), ruleIds.end(), id) == ruleIds.end()) {
          ruleIds.push_back(id);
          rules.push_back(r);
        }
      }
      std::string runRoot = rootOf(run);
      for (auto res : run.value("results", json::array())) {
        if (res.contains("ruleId")) {
          auto it = std::find(ruleIds.begin(), ruleIds.end(), res["ruleId"].get<std::string>());
          if (it != ruleIds.end()) res["ruleIndex"] = static_cast<int>(it - ruleIds.begin());
          else res.erase("ruleIndex");
        }
        if (!sameRoot && !runRoot.empty()) absolutize(res, runRoot);
        results.push_back(std::move(res));
      }
      for (auto inv : run.value("invocations", json::array())) {
        if (!sameRoot && !runRoot.empty()) absolutize(inv, runRoot);
        invocations.push_back(std::move(inv));
      }
    }
    merged["tool"]["driver"]["rules"] = rules;
    merged["results"] = results;
    if (!invocations.empty()) merged["invocations"] = invocations;
    if (!sameRoot) merged.erase("originalUriBaseIds");
    runs.push_back(std::move(merged));
  }
  json log = logs.empty() ? json{{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"}, {"version", "2.1.0"}}
                          : logs.front();
  log["runs"] = runs;
  out = log.dump(2) + "\n";
  return true;
}

int mergeSarifMain(int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::string output;
  std::vector<std::string> files;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      out << "Usage: gpuopt-lint merge-sarif [-o OUT] FILE...\n\n"
             "One SARIF 2.1.0 log from several (the reports of the shards of a --shard I/N run): the runs of one\n"
             "tool become one run (rules united, results concatenated, one invocation per input). Writes to\n"
             "OUT, or to standard output.\n";
      return 0;
    }
    if (a == "-o" || a == "--output") {
      if (i + 1 >= argc) {
        err << "gpuopt-lint merge-sarif: error: " << a << " needs a file\n";
        return 2;
      }
      output = argv[++i];
    } else if (a.size() > 1 && a[0] == '-') {
      err << "gpuopt-lint merge-sarif: error: unknown option '" << a << "'\n";
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    err << "gpuopt-lint merge-sarif: error: no input files (usage: gpuopt-lint merge-sarif [-o OUT] FILE...)\n";
    return 2;
  }
  std::vector<std::string> texts;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      err << "gpuopt-lint merge-sarif: error: " << f << ": cannot be read\n";
      return 2;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    texts.push_back(ss.str());
  }
  std::string merged, error;
  if (!mergeSarif(texts, files, merged, error)) {
    err << "gpuopt-lint merge-sarif: error: " << error << "\n";
    return 2;
  }
  if (output.empty()) {
    out << merged;
    return 0;
  }
  std::ofstream o(output, std::ios::binary | std::ios::trunc);
  if (!(o << merged) || !o.flush()) {
    err << "gpuopt-lint merge-sarif: error: " << output << ": cannot be written\n";
    return 2;
  }
  return 0;
}

}  // namespace gpuopt
