// What a rule gets while checking: reporting, source locations, options.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/Basic/SourceManager.h>

#include <array>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/report/diagnostic.h"
#include "analyzer/model/model_options.h"
#include "analyzer/rule/rule_info.h"

namespace gpuopt {

// Which files of a translation unit are linted, and under which name they are reported.
// Normally: the main file and the project's own files it includes (not system or toolkit headers,
// and only files under the project root). When a file that does not compile alone is analysed
// through a file that includes it, that file ("target") and the files it includes, by the same
// test, are linted (not the includer's other files).
class LintedFiles {
 public:
  static constexpr unsigned kTemplateKeywordLength = 9;  // "template "
  struct Settings {
    std::string mainName;              // the main file, as given on the command line
    std::string targetPath;            // canonical path of the target; empty: normal mode
    std::string targetName;            // the target, as given on the command line
    std::string projectRoot;           // included files outside it are not linted
    std::vector<std::string> excluded; // path prefixes never linted (toolkit, Clang, bundled headers)
    // Project folders searched with -idirafter (projectLayoutIncludeDirs): Clang counts headers
    // found there as system headers, but they are the project's own.
    std::vector<std::string> projectDirs;
    // --header-filter (AnalysisOptions::headerFilter): replaces the project-root test for included
    // files when set.
    std::optional<std::string> headerFilter;
    // Files read with `template ` (kTemplateKeywordLength bytes) inserted (Parser::templateKeywords): canonical path -> where each
    // insertion starts in the text Clang read, (line, column), in order; columnOnDisk maps back.
    // Also the declarations inserted before unmatched template definitions (Parser::declarations).
    std::map<std::string, std::vector<std::array<unsigned, 3>>> insertedColumns;  // (line, column, length)
  };
  LintedFiles(const clang::SourceManager& sm, Settings s);
  bool contains(clang::SourceLocation loc) const;
  // The column on disk of a position of the text Clang read (Settings::insertedColumns).
  unsigned columnOnDisk(clang::FileID fid, unsigned line, unsigned col) const;
  bool containsFile(clang::FileID fid) const;
  // Whether the location is in the file the user named: the main file, or the target when a
  // header is analysed through its includer (not the headers either brings in).
  bool isInput(clang::SourceLocation loc) const;
  // Whether the file is in the translation unit's own code (main file or linted): traversal scope.
  bool inScope(clang::SourceLocation loc) const;
  // Whether the file is the project's own code whatever is linted (the main file, a linted file,
  // or a file under the project root that is not a system, toolkit or bundled header): where
  // launches are looked for, so that a kernel file linted through its includer sees the launch in
  // another file the includer brings in (sss: main.cu includes moves.cpp, which launches).
  bool inProject(clang::SourceLocation loc) const;
  // The name a file is reported under: as given for the main file and the target, else its path
  // (relative to the working directory when inside it).
  std::string displayName(clang::FileID fid) const;
  const Settings& settings() const { return s_; }

 private:
  // An included file (not the main file or the target): the project's own, or --header-filter's.
  bool includedFileLinted(clang::FileID fid, const std::string& path) const;
  const clang::SourceManager& sm_;
  mutable std::unordered_map<unsigned, bool> projectCache_;
  Settings s_;
  std::optional<std::regex> headerFilter_;
  mutable std::unordered_map<unsigned, bool> cache_;
};

// The content hash (hashText) of each linted file a finding's fix edits, as this parse read it
// (FileResult::sourceHashes: --fix leaves alone a file that changed since).
std::map<std::string, std::string> fixedFileHashes(const clang::SourceManager& sm, const LintedFiles& files,
                                                   const std::vector<Diagnostic>& diags);

class RuleContext {
 public:
  RuleContext(clang::ASTContext& ctx, const ModelOptions& opts, const LintedFiles& files)
      : ctx_(ctx), opts_(opts), files_(files) {}

  clang::ASTContext& ast() const { return ctx_; }
  const clang::SourceManager& sm() const { return ctx_.getSourceManager(); }
  const ModelOptions& options() const { return opts_; }
  double option(const RuleInfo& r, const std::string& key, double def) const {
    return opts_.ruleOption(std::string(r.id), key, def);
  }

  // Only code in the linted files is reported (the main file and the project's own includes).
  bool inLintedFile(clang::SourceLocation loc) const { return files_.contains(loc); }
  const LintedFiles& files() const { return files_; }
  SourceSpan span(clang::SourceRange r) const;
  SourceSpan span(const clang::Stmt* s) const { return span(s->getSourceRange()); }
  SourceSpan span(const clang::Decl* d) const { return span(d->getSourceRange()); }
  std::string text(clang::SourceRange r) const;  // source text of a range, one line
  std::string text(const clang::Stmt* s) const { return text(s->getSourceRange()); }

  Diagnostic make(const RuleInfo& info, SourceSpan where, std::string message) const;
  // The kernel the following findings are in (set by the engine around each kernel's checks). For
  // a template kernel, `instantiation` names the instantiation ("transpose<double>") and `group`
  // the template: findings that differ between instantiations say which they are for.
  void setFunction(std::string name, std::string instantiation = {}, std::string group = {});
  // Kernels this file launches only in code that never runs (LintConsumer: a dead branch, a group
  // the preprocessor skips): named as not analysed; rules over the whole unit leave them alone.
  void setNotRunKernels(std::set<const clang::FunctionDecl*> ks) { notRun_ = std::move(ks); }
  bool notRunKernel(const clang::FunctionDecl* f) const { return f && notRun_.count(f->getCanonicalDecl()); }
  // The kernel is analysed once per block shape it is launched with: findings that not every
  // shape has say which launch they are for.
  void setLaunchVariant(std::string variant) { variant_ = std::move(variant); }
  // After the last kernel: "; in instantiation 'k<double>'" on findings not made by every
  // instantiation of their template.
  void finishInstantiations();
  void report(Diagnostic d);
  // The translation unit is a unit test (the file the user named defines GoogleTest, Catch2,
  // doctest or Boost.Test cases; `framework` names it): its launches check behaviour, not speed,
  // so the performance rules' findings (default severity warning) are notes there. Correctness
  // findings keep their severity.
  void setTestUnit(std::string framework) { testUnit_ = std::move(framework); }
  const std::string& testUnit() const { return testUnit_; }
  // Between these, report() collects the findings (as made, no merging) instead of keeping them:
  // the engine compares a kernel's findings under several guessed block shapes (model/shapes.h).
  void beginCapture() {
    capturing_ = true;
    captured_.clear();
  }
  std::vector<Diagnostic> endCapture() {
    capturing_ = false;
    return std::move(captured_);
  }
  std::vector<Diagnostic>& diagnostics() { return diags_; }

 private:
  std::set<const clang::FunctionDecl*> notRun_;
  clang::ASTContext& ctx_;
  const ModelOptions& opts_;
  const LintedFiles& files_;
  std::vector<Diagnostic> diags_;
  bool capturing_ = false;
  std::vector<Diagnostic> captured_;
  std::string function_, instantiation_, group_, variant_;
  std::string testUnit_;
  std::map<std::string, std::set<std::string>> instancesOf_;  // template -> instantiations analysed
  struct Seen {
    std::string group;
    std::vector<std::string> instantiations;
    std::string key;                 // the message with the line of a run-time-shaped launch left out
    std::vector<std::string> lines;  // those launches' lines, when instantiations differ in them
    std::vector<std::string> differing;  // instantiations with other figures at the same place
    // Instantiations whose fix differs (a padding in elements of a template's element type):
    // "name TAB fix hint".
    std::vector<std::string> otherFixes;
  };
  std::vector<Seen> seen_;  // parallel to diags_
};

// What `other` (another instantiation's message at the same place) says differently from `kept`:
// from the first differing word, up to 8 words or the end of the clause, never ending inside a
// parenthesis it opened or on a joining word ("15 sectors for 2 useful (13.3% efficiency)").
std::string figureDifference(const std::string& kept, const std::string& other);

}  // namespace gpuopt
