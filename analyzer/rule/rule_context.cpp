#include "analyzer/rule/rule_context.h"
#include "analyzer/report/grouping.h"
#include "analyzer/rule/rule_info.h"

#include <clang/Lex/Lexer.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "analyzer/frontend/cache.h"
#include "rules/cost.h"
#include "rules/impact.h"

namespace gpuopt {

namespace fs = std::filesystem;

namespace {
std::string absoluteNormal(llvm::StringRef name) {
  std::error_code ec;
  return fs::absolute(fs::path(name.str()), ec).lexically_normal().string();
}
bool under(const std::string& path, const std::string& dir) {
  if (dir.empty()) return false;
  std::string d = dir.back() == '/' ? dir : dir + "/";
  return path.rfind(d, 0) == 0;
}
}  // namespace

LintedFiles::LintedFiles(const clang::SourceManager& sm, Settings s) : sm_(sm), s_(std::move(s)) {
  // Validated when the options were read (resolveOptions); an invalid one here lints no header.
  if (s_.headerFilter && !s_.headerFilter->empty()) {
    try {
      headerFilter_.emplace(*s_.headerFilter, std::regex::extended | std::regex::nosubs);
    } catch (const std::regex_error&) {
      s_.headerFilter = std::string();
    }
  }
}

bool LintedFiles::isInput(clang::SourceLocation loc) const {
  if (loc.isInvalid()) return false;
  const clang::FileID fid = sm_.getFileID(sm_.getExpansionLoc(loc));
  if (s_.targetPath.empty()) return fid == sm_.getMainFileID();
  auto entry = sm_.getFileEntryRefForID(fid);
  std::error_code ec;
  return entry && fs::weakly_canonical(absoluteNormal(entry->getName()), ec).string() == s_.targetPath;
}

bool LintedFiles::containsFile(clang::FileID fid) const {
  if (fid.isInvalid()) return false;
  auto [it, fresh] = cache_.try_emplace(fid.getHashValue(), false);
  if (!fresh) return it->second;
  bool linted = false;
  auto entry = sm_.getFileEntryRefForID(fid);
  if (!s_.targetPath.empty()) {
    if (entry) {
      std::error_code ec;
      linted = fs::weakly_canonical(absoluteNormal(entry->getName()), ec).string() == s_.targetPath;
      if (!linted) {
        // Analysed through an includer: the target's own includes (its project headers, or those
        // --header-filter selects) are its files too, as they would be in its own parse; what the
        // includer brings in besides is not.
        bool fromTarget = false;
        for (clang::SourceLocation inc = sm_.getIncludeLoc(fid); inc.isValid() && !fromTarget;
             inc = sm_.getIncludeLoc(sm_.getFileID(inc))) {
          auto incEntry = sm_.getFileEntryRefForID(sm_.getFileID(inc));
          fromTarget = incEntry && fs::weakly_canonical(absoluteNormal(incEntry->getName()), ec).string() == s_.targetPath;
        }
        linted = fromTarget && includedFileLinted(fid, absoluteNormal(entry->getName()));
      }
    }
  } else if (fid == sm_.getMainFileID()) {
    linted = true;
  } else if (entry) {
    linted = includedFileLinted(fid, absoluteNormal(entry->getName()));
  }
  cache_[fid.getHashValue()] = linted;
  return linted;
}

bool LintedFiles::includedFileLinted(clang::FileID fid, const std::string& path) const {
  bool linted = false;
  if (s_.headerFilter) {
    // --header-filter: the regex alone says which included files are linted.
    linted = headerFilter_ && std::regex_search(path, *headerFilter_);
  } else {
    bool projectDir = false;
    for (const auto& d : s_.projectDirs) projectDir = projectDir || under(path, d);
    linted = (projectDir || !clang::SrcMgr::isSystem(sm_.getFileCharacteristic(sm_.getLocForStartOfFile(fid)))) &&
             under(path, s_.projectRoot);
  }
  for (const auto& ex : s_.excluded) linted = linted && !under(path, ex);
  return linted;
}

bool LintedFiles::contains(clang::SourceLocation loc) const {
  if (loc.isInvalid()) return false;
  return containsFile(sm_.getFileID(sm_.getExpansionLoc(loc)));
}

bool LintedFiles::inScope(clang::SourceLocation loc) const {
  if (loc.isInvalid()) return false;
  auto e = sm_.getExpansionLoc(loc);
  return sm_.isInMainFile(e) || contains(e);
}

bool LintedFiles::inProject(clang::SourceLocation loc) const {
  if (loc.isInvalid()) return false;
  auto e = sm_.getExpansionLoc(loc);
  if (inScope(e)) return true;
  clang::FileID fid = sm_.getFileID(e);
  auto [it, fresh] = projectCache_.try_emplace(fid.getHashValue(), false);
  if (!fresh) return it->second;
  auto entry = sm_.getFileEntryRefForID(fid);
  if (!entry || clang::SrcMgr::isSystem(sm_.getFileCharacteristic(e))) return false;
  std::string path = absoluteNormal(entry->getName());
  bool own = under(path, s_.projectRoot);
  for (const auto& ex : s_.excluded) own = own && !under(path, ex);
  it->second = own;
  return own;
}

std::map<std::string, std::string> fixedFileHashes(const clang::SourceManager& sm, const LintedFiles& files,
                                                   const std::vector<Diagnostic>& diags) {
  std::set<std::string> names;
  for (const auto& d : diags)
    if (!d.fixIts.empty()) {
      names.insert(d.span.begin.file);
      for (const auto& f : d.fixIts) names.insert(f.span.begin.file);
    }
  std::map<std::string, std::string> out;
  // Each by its name (not by walking the SourceManager's file table: with a precompiled preamble
  // it holds entries of the PCH that are not this parse's files).
  for (const auto& name : names) {
    auto ref = sm.getFileManager().getOptionalFileRef(name);
    if (!ref) continue;
    clang::FileID fid = sm.translateFile(*ref);
    if (fid.isInvalid() || !files.containsFile(fid)) continue;
    if (auto text = sm.getBufferDataOrNone(fid)) out[name] = hashText(*text);
  }
  return out;
}

unsigned LintedFiles::columnOnDisk(clang::FileID fid, unsigned line, unsigned col) const {
  if (s_.insertedColumns.empty()) return col;
  auto entry = sm_.getFileEntryRefForID(fid);
  if (!entry) return col;
  std::error_code ec;
  auto it = s_.insertedColumns.find(fs::weakly_canonical(absoluteNormal(entry->getName()), ec).string());
  if (it == s_.insertedColumns.end()) return col;
  // Right to left: each insertion's column counts the ones before it on its line.
  for (auto p = it->second.rbegin(); p != it->second.rend(); ++p) {
    const unsigned at = (*p)[1], len = (*p)[2];
    if ((*p)[0] != line || col <= at) continue;
    col = col >= at + len ? col - len : at;
  }
  return col;
}

std::string LintedFiles::displayName(clang::FileID fid) const {
  if (fid == sm_.getMainFileID() && s_.targetPath.empty()) return s_.mainName;
  auto entry = sm_.getFileEntryRefForID(fid);
  if (!entry) return std::string(sm_.getBufferName(sm_.getLocForStartOfFile(fid)));
  std::string path = absoluteNormal(entry->getName());
  if (!s_.targetPath.empty()) {
    std::error_code ec;
    if (fs::weakly_canonical(path, ec).string() == s_.targetPath) return s_.targetName;
  }
  if (fid == sm_.getMainFileID()) return s_.mainName;
  std::error_code ec;
  auto rel = fs::path(path).lexically_relative(fs::current_path(ec));
  if (!ec && !rel.empty() && *rel.begin() != "..") return rel.string();
  return path;
}

SourceSpan RuleContext::span(clang::SourceRange r) const {
  SourceSpan s;
  auto b = sm().getExpansionLoc(r.getBegin());
  auto e = sm().getExpansionLoc(r.getEnd());
  // End of the last token.
  auto eTok = clang::Lexer::getLocForEndOfToken(e, 0, sm(), ctx_.getLangOpts());
  if (eTok.isValid()) e = eTok.getLocWithOffset(-1);
  s.begin.file = files_.displayName(sm().getFileID(b));
  s.begin.line = sm().getExpansionLineNumber(b);
  s.begin.col = files_.columnOnDisk(sm().getFileID(b), s.begin.line, sm().getExpansionColumnNumber(b));
  s.endLine = sm().getExpansionLineNumber(e);
  s.endCol = files_.columnOnDisk(sm().getFileID(e), s.endLine, sm().getExpansionColumnNumber(e));
  if (s.endLine < s.begin.line || (s.endLine == s.begin.line && s.endCol < s.begin.col)) {
    s.endLine = s.begin.line;
    s.endCol = s.begin.col;
  }
  return s;
}

std::string RuleContext::text(clang::SourceRange r) const {
  auto cr = clang::CharSourceRange::getTokenRange(sm().getExpansionRange(r).getAsRange());
  // An expression that is one argument of a macro (`CP_ASYNC_CG(dst, &Q[addr + i], 16)`'s source
  // operand): the argument as written, not the whole invocation.
  if (clang::SourceLocation b = r.getBegin(), e = r.getEnd();
      b.isMacroID() && e.isMacroID() && sm().isMacroArgExpansion(b) && sm().isMacroArgExpansion(e)) {
    clang::SourceLocation sb = sm().getSpellingLoc(b), se = sm().getSpellingLoc(e);
    if (sb.isValid() && se.isValid() && sm().getFileID(sb) == sm().getFileID(se) && !sm().isBeforeInTranslationUnit(se, sb))
      cr = clang::CharSourceRange::getTokenRange(sb, se);
  }
  std::string t = clang::Lexer::getSourceText(cr, sm(), ctx_.getLangOpts()).str();
  std::replace(t.begin(), t.end(), '\n', ' ');
  // Collapse runs of spaces (a CRLF file's carriage returns and tabs are spaces too).
  std::string out;
  for (char c : t) {
    if (c == '\t' || c == '\r' || c == '\v' || c == '\f') c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(c);
  }
  return out;
}

Diagnostic RuleContext::make(const RuleInfo& info, SourceSpan where, std::string message) const {
  Diagnostic d;
  d.ruleId = std::string(info.id);
  d.severity = info.severity;
  d.span = std::move(where);
  d.message = std::move(message);
  d.demo = std::string(info.demo);
  d.function = function_;
  // Every finding names its demo and, where one was measured, the penalty it showed (a rule sets
  // the tag of the cause it found; said once per run in text).
  if (auto impact = measuredImpact(info.id); !impact.empty()) d.measuredTag = impact;
  else if (!info.demo.empty()) d.measuredTag = "see --demo " + std::string(info.demo);
  return d;
}

void RuleContext::setFunction(std::string name, std::string instantiation, std::string group) {
  function_ = std::move(name);
  instantiation_ = std::move(instantiation);
  group_ = std::move(group);
  if (!variant_.empty()) {  // one of several launch shapes: a variant of its own
    instantiation_ = instantiation_.empty() ? variant_ : instantiation_ + "' with '" + variant_;
    if (group_.empty()) group_ = "launches of " + function_;
  }
  if (!instantiation_.empty()) instancesOf_[group_].insert(instantiation_);
}

namespace {
// "(assumed: the launch at line 176 has a block size known only at run time" (or "at main.cu:176"
// for a launch in an includer): instantiations launched at different places give the same
// finding; compared without the place.
constexpr std::string_view kRuntimeLaunch = "the launch at ";
constexpr std::string_view kRuntimeTail = " has a block size known only";
std::string withoutLaunchLine(const std::string& msg, std::string* place) {
  size_t p = msg.find(kRuntimeLaunch);
  if (p == std::string::npos) return msg;
  size_t q = p + kRuntimeLaunch.size(), e = msg.find(kRuntimeTail, q);
  if (e == std::string::npos || e - q > 200) return msg;
  if (place) *place = msg.substr(q, e - q);  // "line 176" or "main.cu:176"
  return msg.substr(0, q) + "#" + msg.substr(e);
}
}  // namespace

// What another instantiation's message says differently at the same place: from the first word
// that differs, up to 8 words or the end of the clause ("16-way bank conflict on shared load").
std::string figureDifference(const std::string& kept, const std::string& other) {
  // Words that only join others ("sectors for 4 useful"): a figure neither starts after one nor ends on one.
  static const std::set<std::string> joins = {"for", "at", "of", "to", "in", "by", "and", "or", "than", "from", "is", "are"};
  auto words = [](const std::string& s) {
    std::vector<std::string> w;
    size_t i = 0;
    while (i < s.size()) {
      size_t j = s.find(' ', i);
      if (j == std::string::npos) j = s.size();
      if (j > i) w.push_back(s.substr(i, j - i));
      i = j + 1;
    }
    return w;
  };
  auto a = words(kept), b = words(other);
  size_t k = 0;
  while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
  // A number alone says nothing ("0 at 32 different addresses"): start at the word it names ("bank
  // 0 at ..."), unless that word only joins ("sectors for 4 useful": "4 useful" says it).
  size_t limit = 8;
  if (k > 0 && k < b.size() && !b[k].empty() && llvm::isDigit(b[k][0])) {
    const std::string& prev = b[k - 1];
    if (!prev.empty() && llvm::isAlpha(prev[0]) && !joins.count(prev)) --k, ++limit;
  }
  std::string out;
  for (size_t n = 0; k < b.size() && n < limit; ++k, ++n) {
    bool last = b[k].back() == ';' || b[k].back() == ':' || b[k].back() == ',';
    out += (out.empty() ? "" : " ") + (last ? b[k].substr(0, b[k].size() - 1) : b[k]);
    if (last) break;
  }
  // Cut at the word limit, the figure must still read as a phrase: not ending inside a parenthesis
  // it opened ("15 sectors for 2 useful (13.3% efficiency) (at") or on a joining word.
  for (bool changed = true; changed && !out.empty();) {
    changed = false;
    int depth = 0;
    size_t open = std::string::npos;
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i] == '(') { if (depth++ == 0) open = i; }
      else if (out[i] == ')' && depth > 0 && --depth == 0) open = std::string::npos;
    if (depth > 0 && open != std::string::npos) {
      out.erase(open);
      changed = true;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back(), changed = true;
    size_t sp = out.rfind(' ');
    std::string lastWord = sp == std::string::npos ? out : out.substr(sp + 1);
    if ((joins.count(lastWord) || lastWord == "the" || lastWord == "a") && sp != std::string::npos) {
      out.erase(sp);
      changed = true;
    }
  }
  return out;
}

void RuleContext::report(Diagnostic d) {
  if (capturing_) {
    captured_.push_back(std::move(d));
    return;
  }
  // The static cost (rules/cost.h): a rule that does not estimate it (correctness: a wrong result
  // is worth acting on wherever it is) says 1. Below the rule's `min-impact` a finding is a note.
  if (d.impact < 0) d.impact = 1;
  if (d.impact < opts_.ruleOption(d.ruleId, "min-impact", kDefaultMinImpact)) {
    d.severity = Severity::Note;
    d.impactText += d.impactText.empty() ? "low impact" : ": low impact";
  } else if (!testUnit_.empty() && d.severity != Severity::Note) {
    const RuleInfo* info = findRuleInfo(d.ruleId);
    if (info && info->severity == Severity::Warning) {
      d.severity = Severity::Note;
      d.impactText += (d.impactText.empty() ? "" : ": ") + fmt::format("in a unit test ({})", testUnit_);
    }
  }
  std::string line;
  std::string key = withoutLaunchLine(d.message, &line);
  for (size_t i = 0; i < diags_.size(); ++i) {
    const auto& e = diags_[i];
    if (e.ruleId == d.ruleId && e.span.begin.file == d.span.begin.file && e.span.begin.line == d.span.begin.line &&
        e.span.begin.col == d.span.begin.col) {
      // One finding per place: another instantiation (or launch shape, or a second access of one
      // expression) at the same place. Its figures may differ: those are named, not reported again.
      // The same place, another fix (a padding counted in the elements of a template's type).
      if (!instantiation_.empty() && seen_[i].group == group_ && !d.fixHint.empty() && d.fixHint != e.fixHint) {
        auto& of = seen_[i].otherFixes;
        if (std::none_of(of.begin(), of.end(), [&](const std::string& x) { return x.substr(x.find('\t') + 1) == d.fixHint; }))
          of.push_back(instantiation_ + "\t" + d.fixHint);
      }
      if (seen_[i].key != key) {
        auto& dif = seen_[i].differing;
        if (!instantiation_.empty() && seen_[i].group == group_ &&
            std::none_of(dif.begin(), dif.end(), [&](const std::string& x) { return x.substr(0, x.find('\t')) == instantiation_; }))
          dif.push_back(instantiation_ + "\t" + figureDifference(seen_[i].key, key));  // name TAB what differs
        return;
      }
      if (!instantiation_.empty() && seen_[i].group == group_) seen_[i].instantiations.push_back(instantiation_);
      if (!line.empty() && std::find(seen_[i].lines.begin(), seen_[i].lines.end(), line) == seen_[i].lines.end())
        seen_[i].lines.push_back(line);
      return;
    }
  }
  diags_.push_back(std::move(d));
  Seen s{group_, instantiation_.empty() ? std::vector<std::string>{} : std::vector<std::string>{instantiation_}, key, {}};
  if (!line.empty()) s.lines.push_back(line);
  seen_.push_back(std::move(s));
}

void RuleContext::finishInstantiations() {
  for (size_t i = 0; i < diags_.size(); ++i) {
    const Seen& s = seen_[i];
    if (s.lines.size() > 1) {  // "the launches at lines 176, 183 have block sizes known only at run time"
      std::string& m = diags_[i].message;
      size_t p = m.find(kRuntimeLaunch), e = p == std::string::npos ? p : m.find(kRuntimeTail, p);
      if (e != std::string::npos) {
        bool lines = std::all_of(s.lines.begin(), s.lines.end(), [](const std::string& l) { return l.rfind("line ", 0) == 0; });
        std::vector<std::string> places;
        for (const auto& l : s.lines) places.push_back(lines ? l.substr(5) : l);
        m.replace(p, e + kRuntimeTail.size() - p,
                  fmt::format("the launches at {}{} have block sizes known only", lines ? "lines " : "", fmt::join(places, ", ")));
      }
    }
    if (!s.otherFixes.empty()) {  // "fix: ... (in 'k<float>'); in 'k<__half>': pad ... by 2 elements"
      Diagnostic& d = diags_[i];
      if (!s.instantiations.empty()) d.fixHint += " (in '" + s.instantiations.front() + "')";
      for (size_t n = 0; n < s.otherFixes.size() && n < 3; ++n) {
        const std::string& x = s.otherFixes[n];
        size_t tab = x.find('\t');
        d.fixHint += "; in '" + x.substr(0, tab) + "': " + x.substr(tab + 1);
      }
      if (s.otherFixes.size() > 3) d.fixHint += fmt::format("; and {} more instantiations with other fixes", s.otherFixes.size() - 3);
      // One edit of the template's text cannot be right for every instantiation: no mechanical fix.
      d.fixIts.clear();
    }
    if (s.instantiations.empty()) continue;
    auto all = instancesOf_.find(s.group);
    std::set<std::string> mine(s.instantiations.begin(), s.instantiations.end());
    Diagnostic& d = diags_[i];
    bool launch = s.group.rfind("launches of ", 0) == 0;
    std::string differ;
    if (!s.differing.empty()) {  // the same place with other figures: named compactly, not reported again
      std::string named;  // the first three with their figures, then a count: "'k<double>' (16-way ...)"
      for (size_t n = 0; n < s.differing.size() && n < 3; ++n) {
        const std::string& x = s.differing[n];
        size_t tab = x.find('\t');
        std::string inst = x.substr(0, tab), figure = tab == std::string::npos ? std::string() : x.substr(tab + 1);
        named += (n ? ", '" : "'") + inst + "'" + (figure.empty() ? std::string() : " (" + figure + ")");
      }
      if (s.differing.size() > 3) named += fmt::format(" and {} more", s.differing.size() - 3);
      differ = launch ? fmt::format("; other figures for {} more launch shape{}", s.differing.size(), s.differing.size() == 1 ? "" : "s")
                      : "; other figures in " + named;
    }
    if (all == instancesOf_.end() || mine == all->second) {  // every instantiation: nothing to say
      d.message += differ;
      continue;
    }
    if (launch) {
      std::string list;
      for (const auto& n : mine) list += (list.empty() ? "" : " and ") + n;
      d.message += fmt::format("; for {}", list) + differ;
      continue;
    }
    d.instantiations.assign(mine.begin(), mine.end());
    d.message += instantiationSuffix(d.instantiations) + differ;
  }
}

}  // namespace gpuopt
