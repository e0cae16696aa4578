#include "analyzer/engine/instantiation_cap.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclTemplate.h>
#include <llvm/Support/raw_ostream.h>

#include <map>

namespace gpuopt::engine {

std::vector<std::string> templateArgumentFeatures(const clang::FunctionDecl* k) {
  std::vector<std::string> out;
  const clang::TemplateArgumentList* args = k->getTemplateSpecializationArgs();
  if (!args) return out;
  clang::PrintingPolicy policy(k->getASTContext().getLangOpts());
  unsigned pos = 0;
  std::function<void(const clang::TemplateArgument&)> add = [&](const clang::TemplateArgument& a) {
    if (a.getKind() == clang::TemplateArgument::Pack) {
      for (const auto& p : a.pack_elements()) add(p);
      return;
    }
    std::string s;
    llvm::raw_string_ostream os(s);
    a.print(policy, os, /*IncludeType=*/false);
    out.push_back(std::to_string(pos++) + "=" + s);
  };
  for (const auto& a : args->asArray()) add(a);
  return out;
}

std::vector<CappedTemplate> capInstantiations(const std::vector<const clang::FunctionDecl*>& kernels, unsigned cap,
                                              const std::function<std::vector<std::string>(const clang::FunctionDecl*)>& features,
                                              std::set<const clang::FunctionDecl*>& skip) {
  std::vector<CappedTemplate> out;
  if (cap == 0) return out;
  // Instantiations by template, in source order (the first instantiation's place orders templates).
  std::map<const clang::FunctionTemplateDecl*, std::vector<const clang::FunctionDecl*>> byTemplate;
  std::vector<const clang::FunctionTemplateDecl*> order;
  for (const clang::FunctionDecl* k : kernels) {
    const clang::FunctionTemplateDecl* t = k->getPrimaryTemplate();
    if (!t) continue;
    t = t->getCanonicalDecl();
    auto& v = byTemplate[t];
    if (v.empty()) order.push_back(t);
    v.push_back(k);
  }
  for (const clang::FunctionTemplateDecl* t : order) {
    const auto& inst = byTemplate[t];
    if (inst.size() <= cap) continue;
    std::vector<std::vector<std::string>> feats;
    for (const auto* k : inst) feats.push_back(features(k));
    std::set<std::string> covered;
    std::vector<bool> chosen(inst.size(), false);
    unsigned picked = 0;
    // Greedy cover of the values, then source order.
    while (picked < cap) {
      size_t best = inst.size();
      size_t bestGain = 0;
      for (size_t i = 0; i < inst.size(); ++i) {
        if (chosen[i]) continue;
        size_t gain = 0;
        for (const auto& f : feats[i]) gain += !covered.count(f);
        if (gain > bestGain) best = i, bestGain = gain;
      }
      if (best == inst.size()) break;  // every value covered
      chosen[best] = true;
      ++picked;
      covered.insert(feats[best].begin(), feats[best].end());
    }
    for (size_t i = 0; i < inst.size() && picked < cap; ++i)
      if (!chosen[i]) chosen[i] = true, ++picked;
    CappedTemplate c;
    c.first = inst.front();
    c.total = static_cast<unsigned>(inst.size());
    for (size_t i = 0; i < inst.size(); ++i)
      if (!chosen[i]) {
        c.skipped.push_back(inst[i]);
        skip.insert(inst[i]);
      }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace gpuopt::engine
