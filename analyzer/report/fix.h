// --fix: apply the diagnostics' FixIts to a file, atomically (temp file + rename).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "analyzer/report/diagnostic.h"

namespace gpuopt {

struct FileResult;

// Returns the text with the fixes applied (overlapping or duplicate fixes applied once).
std::string applyFixesToText(const std::string& text, const std::vector<Diagnostic>& diags, unsigned* applied = nullptr);
// With dryRun, prints the fixes as a unified diff to `out` instead of writing (paths "a/PATH" and
// "b/PATH", PATH = `diffPath` or else `file`: git apply and patch -p1 take it). Returns false with
// `error` on failure. `expectedHash` (FileResult::sourceHashes): the hash of the text the fixes were
// computed from; a file that no longer holds it is not written (false, `skipped` set). The write goes
// through replaceFileContents (analyzer/report/safe_write.h).
bool applyFixes(const std::string& file, const std::vector<Diagnostic>& diags, bool dryRun, std::ostream& out,
                std::string& error, const std::string& diffPath = "", const std::string& expectedHash = "",
                bool* skipped = nullptr);
// A unified diff (3 lines of context) from `before` to `after` of the file named `path`.
std::string unifiedDiff(const std::string& before, const std::string& after, const std::string& path);

// Byte offset of a 1-based (line, column) in `text`.
size_t byteOffset(const std::string& text, unsigned line, unsigned col);

// --export-fixes: the findings and their fixes as clang-tidy's YAML (TranslationUnitDiagnostics),
// which clang-apply-replacements reads. Paths are absolute, offsets in bytes. Returns false with
// `error` when the file cannot be written.
bool exportFixes(const std::string& path, const std::vector<FileResult>& results, const std::string& cwd,
                 std::string& error);

}  // namespace gpuopt
