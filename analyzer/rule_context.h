// What a rule gets while checking: reporting, source locations, options.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/Basic/SourceManager.h>

#include <string>
#include <vector>

#include "analyzer/diagnostic.h"
#include "analyzer/model_options.h"
#include "analyzer/rule_info.h"

namespace gpuopt {

class RuleContext {
 public:
  RuleContext(clang::ASTContext& ctx, const ModelOptions& opts, std::string mainFile)
      : ctx_(ctx), opts_(opts), mainFile_(std::move(mainFile)) {}

  clang::ASTContext& ast() const { return ctx_; }
  const clang::SourceManager& sm() const { return ctx_.getSourceManager(); }
  const ModelOptions& options() const { return opts_; }
  double option(const RuleInfo& r, const std::string& key, double def) const {
    return opts_.ruleOption(std::string(r.id), key, def);
  }

  // Only code in the file being linted is reported (headers are linted when passed themselves).
  bool inMainFile(clang::SourceLocation loc) const;
  SourceSpan span(clang::SourceRange r) const;
  SourceSpan span(const clang::Stmt* s) const { return span(s->getSourceRange()); }
  SourceSpan span(const clang::Decl* d) const { return span(d->getSourceRange()); }
  std::string text(clang::SourceRange r) const;  // source text of a range, one line
  std::string text(const clang::Stmt* s) const { return text(s->getSourceRange()); }

  Diagnostic make(const RuleInfo& info, SourceSpan where, std::string message) const;
  void report(Diagnostic d);
  std::vector<Diagnostic>& diagnostics() { return diags_; }

 private:
  clang::ASTContext& ctx_;
  const ModelOptions& opts_;
  std::string mainFile_;
  std::vector<Diagnostic> diags_;
};

}  // namespace gpuopt
