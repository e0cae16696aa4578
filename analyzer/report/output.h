// Output formats, all fed from the same Diagnostic model: text (clang style), json, sarif, github.
#pragma once
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "analyzer/report/diagnostic.h"
#include "analyzer/report/source_cache.h"

namespace gpuopt {

enum class OutputFormat { Text, Json, Sarif, Github };
bool parseOutputFormat(std::string_view s, OutputFormat& out);

// How much of one kernel the model analysed (KernelModel::coverage): its memory accesses as written
// and how many were reached, and the lines it did not analyse with the reason ("0 findings" must
// mean "checked").
struct KernelCoverage {
  std::string kernel;  // the kernel (an instantiation's full name)
  SourceSpan where;
  unsigned accessesTotal = 0, accessesReached = 0;
  struct Gap {
    std::string file;
    unsigned firstLine = 0, lastLine = 0;
    std::string reason;
  };
  std::vector<Gap> unanalysed;
  // Instantiations of a kernel template not analysed at all, said of the template as a whole
  // (analyzer/engine/instantiation_cap.h: "26 of its 34 instantiations in this file were not
  // analysed: ..."); empty for a kernel that was analysed.
  std::string whole;
  // `whole` names instantiations the cap left out (their accesses are these; the analysed ones have
  // entries of their own).
  bool capped = false;
  bool partly() const { return accessesReached < accessesTotal || !whole.empty(); }
  // "kernel 'k': lines 12-18 were not analysed: ... (7 of 10 memory accesses analysed)"
  std::string text() const;
};

struct FileResult {
  std::string file;
  std::vector<KernelCoverage> coverage;  // one per analysed kernel
  std::vector<Diagnostic> diags;
  std::vector<InputError> errors;
  int kernels = -1;      // kernels analysed (-1: not analysed at all)
  std::string includer;  // the file it was analysed through, when it does not compile alone
  // The content hash (hashText) of each file a fix edits, as the analysis read it: --fix leaves a
  // file alone when it changed since (applyFixes).
  std::map<std::string, std::string> sourceHashes;
  // The functions whose call sites in the program's other files the analysis read (a launch
  // wrapper's callers in a compile database's other units), with the answer's fingerprint
  // (ProgramCalls::fingerprint): the result cache serves the result only while they are the same.
  std::map<std::string, std::string> programFacts;
};

// Where the rule docs are published (SARIF helpUri, the language server's codeDescription).
inline constexpr const char* kDocsBaseUri = "https://github.com/gpuopt-lint/gpuopt-lint/blob/main/docs/rules/";

struct OutputContext {
  bool color = false;
  std::string cwd;          // SARIF/JSON paths are made relative to it
  std::string repoRoot;     // GitHub annotation paths are relative to it ($GITHUB_WORKSPACE or the
                            // repository's root; empty: cwd)
  std::string toolVersion;  // for SARIF
  std::string docsBaseUri;  // helpUri prefix for rules
  bool verbose = false;     // text: the SASS instructions behind each measurement (`profile --verbose`)
};

std::string relativePath(const std::string& path, const std::string& cwd);

void writeText(std::ostream& os, const std::vector<FileResult>& results, const OutputContext& oc,
               SourceCache& sources);
void writeJson(std::ostream& os, const std::vector<FileResult>& results, const OutputContext& oc);
void writeSarif(std::ostream& os, const std::vector<FileResult>& results, const OutputContext& oc);
void writeGithub(std::ostream& os, const std::vector<FileResult>& results, const OutputContext& oc);

// --statistics (ruff): findings counted per rule, most frequent first; "[*]" marks rules whose
// findings here all have a mechanical fix (--fix). Text or JSON.
void writeStatistics(std::ostream& os, const std::vector<FileResult>& results, bool json);

// GitHub workflow-command escaping (exposed for tests).
std::string githubEscapeData(std::string_view s);
std::string githubEscapeProperty(std::string_view s);

}  // namespace gpuopt
