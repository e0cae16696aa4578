#include "analyzer/app/lsp_server.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fmt/format.h>
#include <istream>
#include <map>
#include <mutex>
#include <ostream>
#include <thread>
#include <tuple>

#include "analyzer/app/config.h"
#include "analyzer/app/jsonrpc.h"
#include "analyzer/app/lint.h"
#include "analyzer/rule/rule.h"
#include "analyzer/rule/rule_info.h"

namespace gpuopt {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// Typing pauses shorter than this do not start an analysis (a parse takes 0.1 to a few seconds).
constexpr auto kDebounce = std::chrono::milliseconds(300);

std::string normalPath(const std::string& p) {
  std::error_code ec;
  return fs::absolute(p, ec).lexically_normal().string();
}

struct Document {
  std::string path;  // absolute
  std::string text;
  long long version = 0;
  // The last analysis published: the version and text it saw, and its findings in this file.
  long long lintedVersion = -1;
  std::string lintedText;
  std::vector<Diagnostic> diags;
};

class Server {
 public:
  Server(const CliOptions& cli, std::ostream& out, std::ostream& log, LintEnvironment env, std::string version)
      : cli_(cli), out_(out), log_(log), env_(std::move(env)), version_(std::move(version)) {}

  int run(std::istream& in) {
    std::thread worker([this] { work(); });
    int status = 1;  // the input ended without `exit`
    for (;;) {
      std::string err;
      int code = lsp::kParseError;
      auto msg = lsp::readMessage(in, err, &code);
      if (!msg) {
        if (err.empty()) break;  // the end of the input
        // Not JSON, too large, too deep: answered with the id unknown (null), as JSON-RPC says.
        log(err);
        if (in || code == lsp::kInvalidRequest) replyError(nullptr, code, err);
        if (!in) break;  // it ended inside the message
        continue;
      }
      if (auto bad = lsp::invalidRequest(*msg)) {
        log("invalid message: " + *bad);
        // The id, when it is one, else null.
        json id = nullptr;
        if (msg->is_object() && msg->contains("id") && ((*msg)["id"].is_string() || (*msg)["id"].is_number_integer()))
          id = (*msg)["id"];
        replyError(id, lsp::kInvalidRequest, "invalid request: " + *bad);
        continue;
      }
      if (msg->value("method", "") == "exit") {
        status = shutdown_ ? 0 : 1;
        break;
      }
      try {
        handle(*msg);
      } catch (const json::exception& e) {
        // A message of the wrong shape: answer requests, log notifications.
        log(std::string("malformed message: ") + e.what());
        if (msg->contains("id")) replyError((*msg)["id"], lsp::kInvalidParams, std::string("invalid params: ") + e.what());
      } catch (const std::exception& e) {
        log(std::string("internal error: ") + e.what());
        if (msg->contains("id")) replyError((*msg)["id"], lsp::kInternalError, std::string("internal error: ") + e.what());
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker.join();
    return status;
  }

 private:
  void log(const std::string& s) {
    std::lock_guard<std::mutex> lock(outMu_);
    log_ << "gpuopt-lint lsp: " << s << std::endl;
  }
  void send(const json& m) {
    std::lock_guard<std::mutex> lock(outMu_);
    lsp::writeMessage(out_, m);
  }
  void reply(const json& id, json result) { send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}); }
  void replyError(const json& id, int code, const std::string& message) {
    send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
  }
  void notify(const std::string& method, json params) {
    send({{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }

  void handle(const json& msg) {
    std::string method = msg.value("method", "");
    bool isRequest = msg.contains("id");
    if (method.empty()) return;  // a response to a request of ours (none are sent)
    const json params = msg.value("params", json::object());
    if (!initialized_ && method != "initialize") {
      if (isRequest) replyError(msg["id"], -32002, "the server is not initialized");
      return;
    }
    if (method == "initialize") {
      // UTF-8 positions when the client offers them (LSP 3.17), else the default UTF-16.
      std::string encoding = "utf-16";
      if (params.contains("capabilities")) {
        auto general = params["capabilities"].value("general", json::object());
        for (const auto& e : general.value("positionEncodings", json::array()))
          if (e == "utf-8") encoding = "utf-8";
      }
      enc_ = encoding == "utf-8" ? lsp::Encoding::Utf8 : lsp::Encoding::Utf16;
      initialized_ = true;
      reply(msg["id"], {{"capabilities",
                         {{"positionEncoding", encoding},
                          {"textDocumentSync", {{"openClose", true}, {"change", 1}, {"save", {{"includeText", false}}}}},
                          {"codeActionProvider", {{"codeActionKinds", {"quickfix"}}}}}},
                        {"serverInfo", {{"name", "gpuopt-lint"}, {"version", version_}}}});
    } else if (method == "shutdown") {
      shutdown_ = true;
      reply(msg["id"], nullptr);
    } else if (method == "textDocument/didOpen") {
      const auto& td = params.at("textDocument");
      std::string uri = td.at("uri").get<std::string>();
      std::string path = lsp::pathFromUri(uri);
      if (path.empty()) {
        log("not a local file, not linted: " + uri);
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      Document& d = docs_[uri];
      d.path = normalPath(path);
      d.text = td.at("text").get<std::string>();
      d.version = td.value("version", 0);
      schedule(uri, Clock::now());
    } else if (method == "textDocument/didChange") {
      std::string uri = params.at("textDocument").at("uri").get<std::string>();
      std::lock_guard<std::mutex> lock(mu_);
      auto it = docs_.find(uri);
      if (it == docs_.end()) return;
      for (const auto& c : params.at("contentChanges"))
        if (!lsp::applyContentChange(it->second.text, c, enc_)) log("malformed content change ignored for " + uri);
      it->second.version = params["textDocument"].value("version", it->second.version + 1);
      schedule(uri, Clock::now() + kDebounce);
    } else if (method == "textDocument/didSave") {
      std::string uri = params.at("textDocument").at("uri").get<std::string>();
      std::lock_guard<std::mutex> lock(mu_);
      auto it = docs_.find(uri);
      if (it == docs_.end()) return;
      if (params.contains("text") && params["text"].is_string()) it->second.text = params["text"].get<std::string>();
      schedule(uri, Clock::now());
    } else if (method == "textDocument/didClose") {
      std::string uri = params.at("textDocument").at("uri").get<std::string>();
      {
        std::lock_guard<std::mutex> lock(mu_);
        docs_.erase(uri);
        pending_.erase(uri);
      }
      notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}});
    } else if (method == "textDocument/codeAction") {
      json actions = codeActions(params);
      reply(msg["id"], std::move(actions));
    } else if (isRequest) {
      replyError(msg["id"], lsp::kMethodNotFound, "method not supported: " + method);
    }
  }

  // With mu_ held.
  void schedule(const std::string& uri, Clock::time_point due) {
    pending_[uri] = due;
    cv_.notify_all();
  }

  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (pending_.empty()) {
        cv_.wait(lock);
        continue;
      }
      auto next = std::min_element(pending_.begin(), pending_.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; });
      if (next->second > Clock::now()) {
        cv_.wait_until(lock, next->second);
        continue;
      }
      std::string uri = next->first;
      pending_.erase(next);
      auto it = docs_.find(uri);
      if (it == docs_.end()) continue;
      // The open documents, as the editor has them, replace the files on disk.
      std::map<std::string, std::string> overlays;
      for (const auto& [u, d] : docs_) overlays[d.path] = d.text;
      std::string path = it->second.path, text = it->second.text;
      long long version = it->second.version;
      lock.unlock();
      SourceCache sources;
      for (const auto& [p, t] : overlays) sources.setText(p, t);
      std::vector<Diagnostic> diags;
      json published;
      try {
        std::tie(diags, published) = lint(path, overlays, sources);
      } catch (const std::exception& e) {
        // The server stays up: the document shows why it has no findings.
        log(path + ": internal error: " + e.what());
        diags.clear();
        published = json::array({errorDiagnostic(std::string("gpuopt-lint could not analyse this file: internal error: ") + e.what())});
      }
      lock.lock();
      it = docs_.find(uri);
      // A newer text is waiting: this result is already out of date.
      if (it == docs_.end() || pending_.count(uri)) continue;
      it->second.lintedVersion = version;
      it->second.lintedText = text;
      it->second.diags = std::move(diags);
      json params = {{"uri", uri}, {"diagnostics", std::move(published)}};
      if (version) params["version"] = version;
      notify("textDocument/publishDiagnostics", std::move(params));
    }
  }

  // An error about the whole file, at its start.
  static json errorDiagnostic(const std::string& message) {
    return {{"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 0}}}}},
            {"severity", 1},
            {"source", "gpuopt-lint"},
            {"message", message}};
  }

  // Lints one file; returns its findings and the LSP diagnostics to publish.
  std::pair<std::vector<Diagnostic>, json> lint(const std::string& path, const std::map<std::string, std::string>& overlays,
                                                SourceCache& sources) {
    json out = json::array();
    auto inputError = [&](const std::string& message) { out.push_back(errorDiagnostic(message)); };
    ResolvedOptions ro;
    std::string err;
    if (!resolveOptions(cli_, path, ro, err)) {
      inputError(err);
      return {{}, out};
    }
    if (ro.excluded) return {{}, out};
    ro.analysis.overlays = overlays;
    for (const auto& [p, t] : overlays) ro.analysis.otherInputs.push_back(p);
    auto start = Clock::now();
    FileAnalysis fa = lintFile(path, ro, env_, !cli_.noGroup, sources);
    if (cli_.frontend.verbose) {
      for (const auto& l : fa.log) log(l);
      log(fmt::format("{}: {} findings in {:.0f} ms", path, fa.result.diags.size(),
                      std::chrono::duration<double, std::milli>(Clock::now() - start).count()));
    }
    for (const auto& e : fa.result.errors) inputError("gpuopt-lint could not analyse this file: " + e.message);
    std::vector<Diagnostic> mine;
    for (auto& d : fa.result.diags)
      if (normalPath(d.span.begin.file) == path) mine.push_back(std::move(d));
    for (const auto& d : mine) out.push_back(toLsp(d, sources));
    return {std::move(mine), out};
  }

  json position(const std::vector<std::string>& lines, unsigned line1, size_t byte0) const {
    if (line1 == 0) return {{"line", 0}, {"character", 0}};
    std::string_view text = line1 <= lines.size() ? std::string_view(lines[line1 - 1]) : std::string_view();
    return {{"line", line1 - 1}, {"character", lsp::characterOfByte(text, byte0, enc_)}};
  }
  // An inclusive gpuopt-lint span as an LSP range (end exclusive).
  json range(const SourceSpan& s, SourceCache& sources) const {
    const auto& lines = sources.lines(s.begin.file);
    json start = position(lines, s.begin.line, s.begin.col ? s.begin.col - 1 : 0);
    json end = s.endLine >= s.begin.line && s.endLine ? position(lines, s.endLine, s.endCol)
                                                      : position(lines, s.begin.line, s.begin.col);
    return {{"start", start}, {"end", end}};
  }

  json toLsp(const Diagnostic& d, SourceCache& sources) const {
    json j = {{"range", range(d.span, sources)},
              {"severity", d.severity == Severity::Error ? 1 : d.severity == Severity::Warning ? 2 : 3},
              {"code", d.ruleId},
              {"source", "gpuopt-lint"},
              {"message", d.fixHint.empty() ? d.message : d.message + "\nfix: " + d.fixHint}};
    if (findRuleInfo(d.ruleId)) j["codeDescription"] = {{"href", std::string(kDocsBaseUri) + d.ruleId + ".md"}};
    json related = json::array();
    auto place = [&](const SourceSpan& s, const std::string& message) {
      related.push_back({{"location", {{"uri", lsp::uriFromPath(normalPath(s.begin.file))}, {"range", range(s, sources)}}},
                         {"message", message}});
    };
    for (const auto& n : d.notes) place(n.span, n.message);
    for (const auto& r : d.related) place(r, "another place of this pattern");
    if (!related.empty()) j["relatedInformation"] = std::move(related);
    return j;
  }

  json codeActions(const json& params) {
    std::string uri = params.at("textDocument").at("uri").get<std::string>();
    unsigned first = params.at("range").at("start").at("line").get<unsigned>();
    unsigned last = params.at("range").at("end").at("line").get<unsigned>();
    json actions = json::array();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = docs_.find(uri);
    // Fixes are offered only for the text they were computed from.
    if (it == docs_.end() || it->second.lintedVersion != it->second.version) return actions;
    const Document& doc = it->second;
    SourceCache sources;
    sources.setText(doc.path, doc.lintedText);
    for (const auto& d : doc.diags) {
      if (d.fixIts.empty() || d.span.begin.line == 0) continue;
      unsigned b = d.span.begin.line - 1, e = std::max(d.span.endLine, d.span.begin.line) - 1;
      bool touches = b <= last && e >= first;
      for (const auto& n : d.notes)  // the declaration a fix edits
        touches = touches || (n.span.begin.line >= first + 1 && n.span.begin.line <= last + 1);
      if (!touches) continue;
      json edits = json::array();
      for (const auto& f : d.fixIts) {
        if (normalPath(f.span.begin.file) != doc.path) continue;
        edits.push_back({{"range", range(f.span, sources)}, {"newText", f.replacement}});
      }
      if (edits.empty()) continue;
      actions.push_back({{"title", "gpuopt-lint: " + (d.fixHint.empty() ? "apply the fix for " + d.ruleId : d.fixHint)},
                         {"kind", "quickfix"},
                         {"isPreferred", true},
                         {"diagnostics", json::array({toLsp(d, sources)})},
                         {"edit", {{"changes", {{uri, std::move(edits)}}}}}});
    }
    return actions;
  }

  const CliOptions& cli_;
  std::ostream& out_;
  std::ostream& log_;
  LintEnvironment env_;
  std::string version_;
  lsp::Encoding enc_ = lsp::Encoding::Utf16;
  bool initialized_ = false, shutdown_ = false;
  std::mutex outMu_;
  std::mutex mu_;  // docs_, pending_, stop_
  std::condition_variable cv_;
  std::map<std::string, Document> docs_;              // by URI
  std::map<std::string, Clock::time_point> pending_;  // URI -> when to lint it
  bool stop_ = false;
};

}  // namespace

int runLanguageServer(const CliOptions& cli, std::istream& in, std::ostream& out, std::ostream& log,
                      const std::string& version) {
  LintEnvironment env;
  std::string err;
  env.resourceDir = findResourceDir(cli.frontend, err);
  if (env.resourceDir.empty()) {
    log << "gpuopt-lint lsp: error: " << err << std::endl;
    return 2;
  }
  env.cudaPath = findCudaPath(cli.frontend);
  env.rules = registerAllRules();
  Server server(cli, out, log, std::move(env), version);
  return server.run(in);
}

}  // namespace gpuopt
