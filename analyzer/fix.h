// --fix: apply the diagnostics' FixIts to a file, atomically (temp file + rename).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "analyzer/diagnostic.h"

namespace gpuopt {

// Returns the text with the fixes applied (overlapping or duplicate fixes applied once).
std::string applyFixesToText(const std::string& text, const std::vector<Diagnostic>& diags, unsigned* applied = nullptr);
// With dryRun, prints a diff to `out` instead of writing. Returns false with `error` on failure.
bool applyFixes(const std::string& file, const std::vector<Diagnostic>& diags, bool dryRun, std::ostream& out,
                std::string& error);

}  // namespace gpuopt
