// Private to the launch index (launch_index.cpp, launch_shapes.cpp, launch_buffers.cpp): helpers
// the three share.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>

#include <initializer_list>
#include <map>
#include <utility>
#include <vector>

namespace gpuopt::launch_detail {

// Whether a local variable is assigned after its initialisation anywhere in its function
// (`threads = 128;` before a second launch): then its initialiser is not the launch's value.
bool reassigned(const clang::VarDecl* vd);

// The keys a launch of `k` is recorded under in the index's maps (each once or more): its
// declaration, its template pattern and its primary template's; lookupKernel finds any of them.
template <class F>
void forEachKernelKey(const clang::FunctionDecl* k, F&& add) {
  for (const clang::FunctionDecl* f : std::initializer_list<const clang::FunctionDecl*>{k, k->getCanonicalDecl(), k->getTemplateInstantiationPattern()})
    if (f) add(f->getCanonicalDecl());
  if (auto* prim = k->getPrimaryTemplate()) add(prim->getTemplatedDecl()->getCanonicalDecl());
}

// A kernel's entry in one of the index's maps: by its declaration, its template pattern, or its
// primary template.
template <class Map>
const typename Map::mapped_type* lookupKernel(const Map& map, const clang::FunctionDecl* k) {
  for (const clang::FunctionDecl* f : std::initializer_list<const clang::FunctionDecl*>{k->getCanonicalDecl(), k->getTemplateInstantiationPattern()}) {
    if (!f) continue;
    auto it = map.find(f->getCanonicalDecl());
    if (it != map.end()) return &it->second;
  }
  if (auto* prim = k->getPrimaryTemplate()) {
    auto it = map.find(prim->getTemplatedDecl()->getCanonicalDecl());
    if (it != map.end()) return &it->second;
  }
  return nullptr;
}

// What the host code does with buffers, collected by the launch index's walk for the buffer facts
// (launch_buffers.cpp): cudaMalloc'ed pointers, the calls of each function, and every launch.
struct HostCalls {
  std::map<const clang::VarDecl*, std::vector<const clang::Expr*>> mallocs;
  std::map<const clang::FunctionDecl*, std::vector<const clang::CallExpr*>> callsOf;
  std::vector<std::pair<const clang::FunctionDecl*, const clang::CallExpr*>> kernelCalls;
};

}  // namespace gpuopt::launch_detail
