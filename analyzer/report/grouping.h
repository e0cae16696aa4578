// Post-processing of a file's findings, before output: repeats of one pattern in one kernel are
// folded into one finding, and every finding gets a fingerprint that survives moved lines.
#pragma once
#include <vector>

#include "analyzer/report/diagnostic.h"
#include "analyzer/report/source_cache.h"

namespace gpuopt {

// The pattern of a finding: its rule, kernel and message with the quoted source text and the
// loop context taken out ("uncoalesced global load '…': a warp touches 32 sectors for 4 useful").
std::string findingPattern(const Diagnostic& d);

// Folds findings of one pattern in one kernel into the first: the others become its `related`
// places and the message says "and N more like it in 'kernel' (lines ...)". Findings outside a
// kernel and compile errors are left alone.
void groupRepeats(std::vector<Diagnostic>& diags);

// Sets `fingerprint` on every finding: a hash of the rule, the kernel, the finding's source text
// with blanks collapsed, and how many findings before it in the file share those three.
void assignFingerprints(std::vector<Diagnostic>& diags, SourceCache& sources);

}  // namespace gpuopt
