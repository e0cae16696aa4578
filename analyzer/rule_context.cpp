#include "analyzer/rule_context.h"

#include <clang/Lex/Lexer.h>

#include <algorithm>

#include "rules/impact.h"

namespace gpuopt {

bool RuleContext::inMainFile(clang::SourceLocation loc) const {
  if (loc.isInvalid()) return false;
  return sm().isInMainFile(sm().getExpansionLoc(loc));
}

SourceSpan RuleContext::span(clang::SourceRange r) const {
  SourceSpan s;
  auto b = sm().getExpansionLoc(r.getBegin());
  auto e = sm().getExpansionLoc(r.getEnd());
  // End of the last token.
  auto eTok = clang::Lexer::getLocForEndOfToken(e, 0, sm(), ctx_.getLangOpts());
  if (eTok.isValid()) e = eTok.getLocWithOffset(-1);
  s.begin.file = sm().isInMainFile(b) ? mainFile_ : std::string(sm().getFilename(b));
  s.begin.line = sm().getExpansionLineNumber(b);
  s.begin.col = sm().getExpansionColumnNumber(b);
  s.endLine = sm().getExpansionLineNumber(e);
  s.endCol = sm().getExpansionColumnNumber(e);
  if (s.endLine < s.begin.line || (s.endLine == s.begin.line && s.endCol < s.begin.col)) {
    s.endLine = s.begin.line;
    s.endCol = s.begin.col;
  }
  return s;
}

std::string RuleContext::text(clang::SourceRange r) const {
  auto cr = clang::CharSourceRange::getTokenRange(sm().getExpansionRange(r).getAsRange());
  std::string t = clang::Lexer::getSourceText(cr, sm(), ctx_.getLangOpts()).str();
  std::replace(t.begin(), t.end(), '\n', ' ');
  // Collapse runs of spaces.
  std::string out;
  for (char c : t) {
    if (c == '\t') c = ' ';
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
  // Every finding names its demo and, where one was measured, the penalty it showed.
  if (auto impact = measuredImpact(info.id); !impact.empty()) d.message += " [" + impact + "]";
  else if (!info.demo.empty()) d.message += " [see --demo " + std::string(info.demo) + "]";
  return d;
}

void RuleContext::report(Diagnostic d) {
  for (const auto& e : diags_)
    if (e.ruleId == d.ruleId && e.span.begin.line == d.span.begin.line &&
        e.span.begin.col == d.span.begin.col && e.message == d.message)
      return;  // same finding from another template instantiation
  diags_.push_back(std::move(d));
}

}  // namespace gpuopt
