// Which instantiations of a kernel template the engine analyses (issue 31: analysis that grows
// with distinct work, not with instantiations). A production file can instantiate one kernel
// template dozens of times (ggml's flash-attention tile: 34 instantiations of one template, each a
// kernel model of thousands of accesses), and the findings of all of them are folded into one per
// place anyway (analyzer/report/grouping.h). At most `cap` instantiations of one template are
// analysed per file; they are chosen so that every value each template argument takes in the file,
// and every block shape the launches give, is in at least one analysed instantiation (greedily:
// the instantiation adding the most values not yet covered first, source order among equals), then
// the first of the rest in source order up to the cap. The others are named in a note on the
// template (KernelCoverage::whole), never skipped in silence.
#pragma once
#include <clang/AST/Decl.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace gpuopt::engine {

struct CappedTemplate {
  const clang::FunctionDecl* first = nullptr;  // its first instantiation (where the note points)
  unsigned total = 0;                          // instantiations of the template in the file
  std::vector<const clang::FunctionDecl*> skipped;  // in source order
};

// `kernels`: the file's kernels in source order (instantiations and plain kernels alike);
// `features(k)`: what distinguishes an instantiation for the model (its template arguments, one
// "position=value" string each, and its launch shapes). `cap` 0: no cap. Returns the templates
// with more than `cap` instantiations, and puts the instantiations not analysed in `skip`.
std::vector<CappedTemplate> capInstantiations(const std::vector<const clang::FunctionDecl*>& kernels, unsigned cap,
                                              const std::function<std::vector<std::string>(const clang::FunctionDecl*)>& features,
                                              std::set<const clang::FunctionDecl*>& skip);

// The "position=value" strings of an instantiation's template arguments (packs flattened).
std::vector<std::string> templateArgumentFeatures(const clang::FunctionDecl* k);

}  // namespace gpuopt::engine
