// Post-processing of a file's findings, before output: repeats of one pattern in one kernel are
// folded into one finding, and every finding gets a fingerprint that survives moved lines.
#pragma once
#include <string>
#include <vector>

#include "analyzer/report/diagnostic.h"
#include "analyzer/report/output.h"
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

// A list for a message: the first `shown` names quoted, then a count ("'a', 'b', 'c' and 5 more").
std::string compactList(const std::vector<std::string>& names, size_t shown = 3);
// "; in instantiation 'k<float>'", "; in instantiations 'a', 'b', 'c' and 5 more" (empty: none).
std::string instantiationSuffix(const std::vector<std::string>& names);

// One finding per place in a run: a header (or included file) linted through several inputs, or
// a place reached by several instantiations, gives one finding. Findings of one rule at one place
// (file, line, column) are folded into the first: its `units` list the inputs that reached it
// (named in the message when more than one: "; reached from 3 translation units ('a.cu', ...)"),
// its `instantiations` the union of theirs (none: every instantiation somewhere). Compile errors
// are kept apart by message.
void mergeAcrossInputs(std::vector<FileResult>& results);

// One finding per statement line: findings of one rule on one line of one function (the load of
// 'a[i]' and the store of 'b[j]' of one statement, every array reference of a stencil line) are
// folded into the most severe, then highest-impact one (the first by column among equals), so
// the message, fix and severity shown are one finding's; the others become its notes ("also
// here: <message>", then their own notes) and related locations, their fixes joined (identical
// edits once); "; and N more on this line" ends the message. Compile errors are kept.
void foldSameLine(std::vector<Diagnostic>& diags);

// Messages longer than kMaxMessageBytes are cut at a word, ending in " ... (N bytes: the full text
// in JSON and SARIF)"; `fullMessage` keeps the whole text. Compile errors are not cut (the
// folders searched for a missing header are the fix).
inline constexpr size_t kMaxMessageBytes = 600;
void capMessage(Diagnostic& d);

// --min-impact: drops findings whose impact is known and below `min`.
void dropBelowImpact(std::vector<FileResult>& results, double min);
// --sort impact: findings by impact, highest first (unknown counts as 1; ties in place order).
// `flat`: one list across files (one FileResult per finding, input errors first); else within
// each file, files ordered by their top finding.
void sortByImpact(std::vector<FileResult>& results, bool flat);

}  // namespace gpuopt
