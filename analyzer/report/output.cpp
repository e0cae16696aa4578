#include "analyzer/report/output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <ostream>

#include "analyzer/rule/embedded_docs.h"
#include "analyzer/rule/rule_info.h"
#include "analyzer/report/utf8.h"
#include "rules/impact.h"

namespace gpuopt {

using nlohmann::json;
namespace fs = std::filesystem;
// Text that is not UTF-8 (a message quoting source bytes) is written with U+FFFD in its place.
constexpr auto kReplace = json::error_handler_t::replace;

std::string relativePath(const std::string& path, const std::string& cwd) {
  if (path.empty() || cwd.empty()) return path;
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) return path;
  // A path that cannot be resolved (a symbolic link loop: ELOOP) keeps its spelled name.
  fs::path p = fs::weakly_canonical(abs, ec);
  if (ec || p.empty()) p = abs.lexically_normal();
  fs::path base = fs::weakly_canonical(fs::path(cwd), ec);
  if (ec || base.empty()) base = fs::path(cwd).lexically_normal();
  auto rel = p.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") return p.generic_string();
  return rel.generic_string();
}

// ---------------------------------------------------------------------------------------------
// Text
namespace {
struct Style {
  bool on;
  std::string bold() const { return on ? "\033[1m" : ""; }
  std::string red() const { return on ? "\033[1;31m" : ""; }
  std::string magenta() const { return on ? "\033[1;35m" : ""; }
  std::string cyan() const { return on ? "\033[1;36m" : ""; }
  std::string green() const { return on ? "\033[1;32m" : ""; }
  std::string reset() const { return on ? "\033[0m" : ""; }
};

void writeSnippet(std::ostream& os, const SourceSpan& sp, SourceCache& sources, const Style& st) {
  std::string text = sources.line(sp.begin.file, sp.begin.line);
  if (text.empty() || sp.begin.col == 0) return;
  std::string num = std::to_string(sp.begin.line);
  std::string pad(std::max<size_t>(5, num.size()), ' ');
  os << std::string(pad.size() - num.size(), ' ') << num << " | " << text << "\n";
  std::string marker;
  unsigned endCol = (sp.endLine == sp.begin.line && sp.endCol >= sp.begin.col)
                        ? sp.endCol
                        : static_cast<unsigned>(text.size());
  for (unsigned c = 1; c <= std::max<unsigned>(endCol, sp.begin.col) && c <= text.size() + 1; ++c) {
    if (c < sp.begin.col) marker += (c <= text.size() && text[c - 1] == '\t') ? '\t' : ' ';
    else if (c == sp.begin.col) marker += '^';
    else marker += '~';
  }
  os << pad << " | " << st.green() << marker << st.reset() << "\n";
}

void writeLoc(std::ostream& os, const SourcePos& p, const Style& st) {
  os << st.bold() << p.file << ":" << p.line << ":" << p.col << ": " << st.reset();
}
}  // namespace

std::string KernelCoverage::text() const {
  if (capped)  // (not "0 of N analysed": the instantiations analysed are reported on their own)
    return fmt::format("kernel '{}': {} (the {} memory accesses of those instantiations)", kernel, whole, accessesTotal);
  if (!whole.empty())
    return fmt::format("kernel '{}': {} ({} of {} memory accesses analysed)", kernel, whole, accessesReached, accessesTotal);
  std::string gaps;
  for (const auto& g : unanalysed) {
    std::string lines = g.firstLine == g.lastLine ? fmt::format("line {}", g.firstLine) : fmt::format("lines {}-{}", g.firstLine, g.lastLine);
    if (!where.begin.file.empty() && g.file != where.begin.file) lines += " of " + g.file;
    gaps += fmt::format("{}{} {} not analysed: {}", gaps.empty() ? "" : "; ", lines,
                        g.firstLine == g.lastLine ? "was" : "were", g.reason);
  }
  return fmt::format("kernel '{}': {} ({} of {} memory accesses analysed)", kernel, gaps, accessesReached, accessesTotal);
}

void writeText(std::ostream& os, const std::vector<FileResult>& results, const OutputContext& oc,
               SourceCache& sources) {
  Style st{oc.color};
  std::set<std::pair<std::string, std::string>> told;  // (rule, measured tag) said once per run
  for (const auto& r : results) {
    // Kernels analysed in part: said, so that no finding means the rest was checked.
    for (const auto& k : r.coverage) {
      if (!k.partly()) continue;
      writeLoc(os, k.where.begin, st);
      os << st.cyan() << "note: " << st.reset() << k.text() << "\n";
    }
    for (const auto& e : r.errors)
      os << st.bold() << e.file << ": " << st.red() << "error: " << st.reset() << st.bold()
         << e.message << st.reset() << "\n";
    for (const auto& d : r.diags) {
      writeLoc(os, d.span.begin, st);
      os << (d.severity == Severity::Error ? st.red() : st.magenta()) << severityName(d.severity)
         << ": " << st.reset() << st.bold() << d.message << (d.impactText.empty() ? "" : " [" + d.impactText + "]")
         << " [" << d.ruleId << "]" << st.reset()
         << "\n";
      writeSnippet(os, d.span, sources, st);
      for (const auto& n : d.notes) {
        writeLoc(os, n.span.begin, st);
        os << st.cyan() << "note: " << st.reset() << n.message << "\n";
        writeSnippet(os, n.span, sources, st);
      }
      if (!d.fixHint.empty()) os << "    fix: " << d.fixHint << "\n";
      if (!d.measuredTag.empty() && told.insert({d.ruleId, d.measuredTag}).second)
        os << "    [" << d.measuredTag << "]\n";
      if (d.measured) {
        os << "    measured: " << st.bold() << d.measured->verdict << st.reset() << ": " << d.measured->text << "\n";
        if (oc.verbose)
          for (const auto& in : d.measured->instructions) {
            os << "      " << (in.own ? "* " : "  ") << in.address << "  " << in.sass << ": " << fmt::format("{:.0f}", in.executed)
               << " requests";
            if (in.ideal > 0)
              os << fmt::format(", {:.0f} for {:.0f} ideal ({:.1f}x)", in.amount, in.ideal, in.amount / in.ideal);
            os << "\n";
          }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// JSON (simple, stable)
namespace {
json spanJson(const SourceSpan& s, const OutputContext& oc) {
  return {{"file", relativePath(s.begin.file, oc.cwd)},
          {"line", s.begin.line},
          {"column", s.begin.col},
          {"endLine", s.endLine},
          {"endColumn", s.endCol}};
}
}  // namespace

// What one place gathers (JSON fields, SARIF properties): the measured penalty of the cause, the
// full lists the message names only the first few of, the uncut message.
static void addPlaceFields(json& j, const Diagnostic& d) {
  if (d.impact >= 0) {
    j["impact"] = d.impact;
    if (!d.impactText.empty()) j["impactText"] = d.impactText;
  }
  if (!d.measuredTag.empty()) j["measuredImpact"] = d.measuredTag;
  if (!d.instantiations.empty()) j["instantiations"] = d.instantiations;
  if (!d.units.empty()) j["units"] = d.units;
  if (!d.fullMessage.empty()) j["fullMessage"] = d.fullMessage;
}

static json measuredJson(const Measurement& m) {
  json j = {{"verdict", m.verdict}, {"text", m.text}};
  if (!m.kernel.empty()) j["kernel"] = m.kernel;
  for (const auto& [k, v] : m.values) j[k] = v;
  if (!m.instructions.empty()) {
    json list = json::array();
    for (const auto& in : m.instructions)
      list.push_back({{"address", in.address}, {"sass", in.sass}, {"executed", in.executed}, {"amount", in.amount},
                      {"ideal", in.ideal}, {"own", in.own}});
    j["instructions"] = list;
  }
  return j;
}

void writeJson(std::ostream& os, const std::vector<FileResult>& results, const OutputContext& oc) {
  json files = json::array();
  for (const auto& r : results) {
    json f = {{"file", relativePath(r.file, oc.cwd)}, {"findings", json::array()}, {"errors", json::array()}};
    for (const auto& e : r.errors) f["errors"].push_back({{"file", relativePath(e.file, oc.cwd)}, {"message", e.message}});
    if (r.kernels >= 0) f["kernels"] = r.kernels;  // kernels analysed
    if (r.kernels >= 0) {
      unsigned reached = 0, total = 0, partly = 0;
      json cov = json::array();
      for (const auto& k : r.coverage) {
        reached += k.accessesReached, total += k.accessesTotal, partly += k.partly();
        json kj = {{"kernel", k.kernel}, {"location", spanJson(k.where, oc)}, {"accessesReached", k.accessesReached},
                   {"accessesTotal", k.accessesTotal}, {"unanalysed", json::array()}};
        if (!k.whole.empty()) kj["notAnalysed"] = k.whole;
        for (const auto& g : k.unanalysed)
          kj["unanalysed"].push_back({{"file", relativePath(g.file, oc.cwd)}, {"firstLine", g.firstLine}, {"lastLine", g.lastLine},
                                      {"reason", g.reason}});
        cov.push_back(std::move(kj));
      }
      f["accessesReached"] = reached;
      f["accessesTotal"] = total;
      f["partlyAnalysed"] = partly;
      f["kernelCoverage"] = std::move(cov);
    }
    if (!r.includer.empty()) f["includer"] = relativePath(r.includer, oc.cwd);
    for (const auto& d : r.diags) {
      json j = {{"ruleId", d.ruleId},
                {"severity", std::string(severityName(d.severity))},
                {"message", d.message},
                {"location", spanJson(d.span, oc)},
                {"notes", json::array()}};
      for (const auto& n : d.notes) j["notes"].push_back({{"message", n.message}, {"location", spanJson(n.span, oc)}});
      if (!d.fixHint.empty()) j["fix"] = d.fixHint;
      if (!d.demo.empty()) j["demo"] = d.demo;
      if (!d.function.empty()) j["kernel"] = d.function;
      if (!d.fingerprint.empty()) j["fingerprint"] = d.fingerprint;
      addPlaceFields(j, d);
      if (d.measured) {
        j["measured"] = measuredJson(*d.measured);
        if (!d.predicted.empty()) j["predicted"] = d.predicted;
      }
      if (!d.related.empty()) {
        j["related"] = json::array();
        for (const auto& r : d.related) j["related"].push_back(spanJson(r, oc));
      }
      if (!d.fixIts.empty()) {
        j["fixIts"] = json::array();
        for (const auto& fx : d.fixIts) j["fixIts"].push_back({{"location", spanJson(fx.span, oc)}, {"replacement", fx.replacement}});
      }
      f["findings"].push_back(std::move(j));
    }
    files.push_back(std::move(f));
  }
  // Messages may quote source bytes that are not UTF-8: written as U+FFFD, never an abort.
  os << json{{"tool", "gpuopt-lint"}, {"version", oc.toolVersion}, {"files", files}}.dump(2, ' ', false, kReplace) << "\n";
}

// ---------------------------------------------------------------------------------------------
// --statistics
void writeStatistics(std::ostream& os, const std::vector<FileResult>& results, bool asJson) {
  struct Count {
    size_t n = 0, fixable = 0;
  };
  std::map<std::string, Count> counts;
  for (const auto& r : results)
    for (const auto& d : r.diags) {
      auto& c = counts[d.ruleId];
      ++c.n;
      if (!d.fixIts.empty()) ++c.fixable;
    }
  std::vector<std::pair<std::string, Count>> rows(counts.begin(), counts.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.n > b.second.n; });
  auto summary = [](const std::string& id) {
    const RuleInfo* info = findRuleInfo(id);
    return info ? std::string(info->summary) : std::string();
  };
  if (asJson) {
    json out = json::array();
    for (const auto& [id, c] : rows)
      out.push_back({{"code", id}, {"count", c.n}, {"fixable", c.fixable}, {"summary", summary(id)}});
    os << out.dump(2, ' ', false, kReplace) << "\n";
    return;
  }
  size_t width = 0;
  for (const auto& [id, c] : rows) width = std::max(width, id.size());
  for (const auto& [id, c] : rows) {
    std::string n = std::to_string(c.n);
    os << std::string(n.size() < 5 ? 5 - n.size() : 0, ' ') << n << "  " << id << std::string(width - id.size(), ' ')
       << "  " << (c.fixable == c.n ? "[*] " : "    ") << summary(id) << "\n";
  }
}

// ---------------------------------------------------------------------------------------------
// SARIF 2.1.0
namespace {
std::string sarifLevel(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "warning";
}

// First paragraph under a markdown heading, for fullDescription.
std::string docSection(std::string_view md, std::string_view heading) {
  auto pos = md.find(heading);
  if (pos == std::string_view::npos) return {};
  pos = md.find('\n', pos);
  if (pos == std::string_view::npos) return {};
  auto end = md.find("\n## ", pos);
  std::string s(md.substr(pos + 1, end == std::string_view::npos ? std::string_view::npos : end - pos - 1));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  while (!s.empty() && s.front() == '\n') s.erase(0, 1);
  return s;
}

// The run declares columnKind utf16CodeUnits (what GitHub code scanning and Visual Studio read):
// the byte columns of a span become UTF-16 code units of its lines.
json sarifRegion(const SourceSpan& s, SourceCache& sources) {
  auto units = [&](unsigned line, unsigned byteCol) {  // 1-based byte column -> 1-based UTF-16 column
    std::string text = sources.line(s.begin.file, line);
    if (byteCol == 0 || text.empty()) return std::max(1u, byteCol);
    return utf16Units(std::string_view(text).substr(0, std::min<size_t>(byteCol - 1, text.size()))) + 1 +
           (byteCol - 1 > text.size() ? static_cast<unsigned>(byteCol - 1 - text.size()) : 0u);
  };
  json r = {{"startLine", std::max(1u, s.begin.line)}, {"startColumn", units(s.begin.line, std::max(1u, s.begin.col))}};
  unsigned endLine = std::max(s.endLine, s.begin.line);
  r["endLine"] = std::max(1u, endLine);
  // SARIF endColumn is exclusive: one past the span's last character.
  unsigned endCol = (endLine == s.begin.line) ? std::max(s.endCol, s.begin.col) + 1 : s.endCol + 1;
  r["endColumn"] = units(endLine, std::max(1u, endCol));
  return r;
}

// RFC 3986: a path in a URI keeps unreserved characters and '/', the rest percent-encoded.
std::string uriPath(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') out += static_cast<char>(c);
    else out += {'%', hex[c >> 4], hex[c & 15]};
  }
  return out;
}

// Relative to %SRCROOT% (the working directory) when inside it, else an absolute file:// URI.
json artifactLocation(const std::string& file, const OutputContext& oc) {
  // Bytes of a file name that are not UTF-8 are percent-encoded (uriPath spells every byte
  // outside ASCII so).
  std::string rel = relativePath(file, oc.cwd);
  if (!rel.empty() && rel[0] == '/') return {{"uri", "file://" + uriPath(rel)}};
  return {{"uri", uriPath(rel)}, {"uriBaseId", "%SRCROOT%"}};
}

json sarifLocation(const SourceSpan& s, const OutputContext& oc, SourceCache& sources) {
  return {{"physicalLocation", {{"artifactLocation", artifactLocation(s.begin.file, oc)}, {"region", sarifRegion(s, sources)}}}};
}
}  // namespace

void writeSarif(std::ostream& os, const std::vector<FileResult>& results, const OutputContext& oc) {
  SourceCache sources;
  json rules = json::array();
  std::vector<std::string> ruleIds;
  for (const auto& info : allRuleInfos()) {
    std::string id(info.id);
    const EmbeddedDoc* doc = findRuleDoc(info.id);
    std::string md = doc ? std::string(doc->markdown) : std::string();
    std::string full = docSection(md, "## What it does");
    if (full.empty()) full = std::string(info.summary);
    // name: a readable identifier distinct from the id (SARIF1001), e.g. "BankConflict".
    std::string name;
    bool up = true;
    for (char c : id) {
      if (c == '-') { up = true; continue; }
      name += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      up = false;
    }
    json r = {{"id", id},
              {"name", name},
              {"shortDescription", {{"text", std::string(info.summary)}}},
              {"fullDescription", {{"text", full}}},
              {"help", {{"text", md.empty() ? std::string(info.summary) : md}, {"markdown", md.empty() ? std::string(info.summary) : md}}},
              {"helpUri", oc.docsBaseUri + id + ".md"},
              {"defaultConfiguration", {{"level", sarifLevel(info.severity)}}},
              {"properties", {{"demo", std::string(info.demo)}}}};
    // The rule's measured penalties (rules/impact.cpp): said here once, not on every result.
    if (std::string tag = measuredImpact(info.id); !tag.empty()) r["properties"]["measuredImpact"] = tag;
    rules.push_back(std::move(r));
    ruleIds.push_back(id);
  }
  // Measured-only findings of `gpuopt-lint profile` (analyzer/profile/profile.cpp; docs/profile.md).
  static const std::pair<const char*, const char*> kMeasured[] = {
      {"measured-bank-conflict", "shared-memory bank conflicts the profiler measured and no finding predicted"},
      {"measured-uncoalesced", "global-memory traffic above the ideal the profiler measured and no finding predicted"},
      {"measured-divergence", "a hot line with few active lanes the profiler measured and no finding predicted"}};
  for (const auto& [id, summary] : kMeasured) {
    bool used = false;
    for (const auto& r : results)
      for (const auto& d : r.diags) used = used || d.ruleId == id;
    if (!used) continue;
    std::string name;
    bool up = true;
    for (const char* c = id; *c; ++c) {
      if (*c == '-') { up = true; continue; }
      name += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(*c))) : *c;
      up = false;
    }
    rules.push_back({{"id", id},
                     {"name", name},
                     {"shortDescription", {{"text", summary}}},
                     {"fullDescription", {{"text", summary}}},
                     {"helpUri", "https://github.com/gpuopt-lint/gpuopt-lint/blob/main/docs/profile.md"},
                     {"defaultConfiguration", {{"level", "warning"}}}});
    ruleIds.push_back(id);
  }
  json sarifResults = json::array();
  json notifications = json::array();
  for (const auto& r : results) {
    for (const auto& k : r.coverage)
      if (k.partly())
        notifications.push_back({{"level", "note"},
                                 {"message", {{"text", k.text()}}},
                                 {"locations", json::array({sarifLocation(k.where, oc, sources)})},
                                 {"properties", {{"accessesReached", k.accessesReached}, {"accessesTotal", k.accessesTotal}}}});
    for (const auto& e : r.errors)
      notifications.push_back({{"level", "error"},
                               {"message", {{"text", e.message}}},
                               {"locations", json::array({{{"physicalLocation", {{"artifactLocation", artifactLocation(e.file, oc)}}}}})}});
    for (const auto& d : r.diags) {
      std::string text = d.message;
      if (!d.fixHint.empty()) text += " Fix: " + d.fixHint;
      json res = {{"ruleId", d.ruleId},
                  {"level", sarifLevel(d.severity)},
                  {"message", {{"text", text}}},
                  {"locations", json::array({sarifLocation(d.span, oc, sources)})}};
      auto it = std::find(ruleIds.begin(), ruleIds.end(), d.ruleId);
      if (it != ruleIds.end()) res["ruleIndex"] = static_cast<int>(it - ruleIds.begin());
      if (!d.fingerprint.empty()) res["partialFingerprints"] = {{"gpuoptLint/v1", d.fingerprint}};
      json props = json::object();
      addPlaceFields(props, d);
      if (!props.empty()) res["properties"] = props;
      if (d.measured) {
        res["properties"]["measured"] = measuredJson(*d.measured);
        if (!d.predicted.empty()) res["properties"]["predicted"] = d.predicted;
        res["message"]["text"] = text + " Measured (" + d.measured->verdict + "): " + d.measured->text + ".";
      }
      if (!d.notes.empty() || !d.related.empty()) {
        json related = json::array();
        int id = 0;
        for (const auto& n : d.notes) {
          json loc = sarifLocation(n.span, oc, sources);
          loc["id"] = id++;
          loc["message"] = {{"text", n.message}};
          related.push_back(std::move(loc));
        }
        for (const auto& r : d.related) {
          json loc = sarifLocation(r, oc, sources);
          loc["id"] = id++;
          loc["message"] = {{"text", "another place with the same pattern"}};
          related.push_back(std::move(loc));
        }
        res["relatedLocations"] = std::move(related);
      }
      if (!d.fixIts.empty()) {
        json changes = json::array();
        for (const auto& fx : d.fixIts)
          changes.push_back({{"artifactLocation", artifactLocation(fx.span.begin.file, oc)},
                             {"replacements", json::array({{{"deletedRegion", sarifRegion(fx.span, sources)},
                                                             {"insertedContent", {{"text", fx.replacement}}}}})}});
        res["fixes"] = json::array({{{"description", {{"text", d.fixHint.empty() ? "apply fix" : d.fixHint}}},
                                     {"artifactChanges", changes}}});
      }
      sarifResults.push_back(std::move(res));
    }
  }
  json run = {{"tool",
               {{"driver",
                 {{"name", "gpuopt-lint"},
                  {"version", oc.toolVersion},
                  {"informationUri", "https://github.com/gpuopt-lint/gpuopt-lint"},
                  {"rules", rules}}}}},
              {"originalUriBaseIds", {{"%SRCROOT%", {{"uri", "file://" + uriPath(oc.cwd) + (oc.cwd.ends_with('/') ? "" : "/")}}}}},
              {"columnKind", "utf16CodeUnits"},
              {"results", sarifResults}};
  bool failed = false;  // inputs that could not be analysed (notes on kernels analysed in part are no failure)
  for (const auto& n : notifications) failed = failed || n["level"] == "error";
  run["invocations"] = json::array({{{"executionSuccessful", !failed},
                                     {"toolExecutionNotifications", notifications}}});
  json log = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
              {"version", "2.1.0"},
              {"runs", json::array({run})}};
  os << log.dump(2, ' ', false, kReplace) << "\n";
}

// ---------------------------------------------------------------------------------------------
// GitHub Actions workflow commands
std::string githubEscapeData(std::string_view s) {
  // The runner reads UTF-8: source bytes that are not are written as U+FFFD.
  std::string out;
  for (char c : toValidUtf8(s)) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string githubEscapeProperty(std::string_view s) {
  std::string out;
  for (char c : githubEscapeData(s)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

void writeGithub(std::ostream& os, const std::vector<FileResult>& results, const OutputContext& oc) {
  // GitHub matches annotations to files by their path from the repository's root.
  const std::string& root = oc.repoRoot.empty() ? oc.cwd : oc.repoRoot;
  std::set<std::pair<std::string, std::string>> told;  // (rule, measured tag) said once per run
  for (const auto& r : results) {
    for (const auto& e : r.errors)
      os << "::error file=" << githubEscapeProperty(relativePath(e.file, root))
         << ",title=" << githubEscapeProperty("gpuopt-lint") << "::" << githubEscapeData(e.message) << "\n";
    for (const auto& d : r.diags) {
      std::string cmd = d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "notice";
      std::string msg = d.message;
      for (const auto& n : d.notes)
        msg += "\nnote (line " + std::to_string(n.span.begin.line) + "): " + n.message;
      if (!d.fixHint.empty()) msg += "\nfix: " + d.fixHint;
      if (!d.measuredTag.empty() && told.insert({d.ruleId, d.measuredTag}).second) msg += "\n[" + d.measuredTag + "]";
      if (d.measured) msg += "\nmeasured (" + d.measured->verdict + "): " + d.measured->text;
      os << "::" << cmd << " file=" << githubEscapeProperty(relativePath(d.span.begin.file, root))
         << ",line=" << d.span.begin.line << ",col=" << d.span.begin.col;
      if (d.span.endLine >= d.span.begin.line) os << ",endLine=" << d.span.endLine;
      if (d.span.endLine == d.span.begin.line) os << ",endColumn=" << d.span.endCol;
      os << ",title=" << githubEscapeProperty("gpuopt-lint " + d.ruleId) << "::" << githubEscapeData(msg) << "\n";
    }
  }
}

}  // namespace gpuopt
