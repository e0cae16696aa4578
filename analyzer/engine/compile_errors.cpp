#include "analyzer/engine/compile_errors.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <llvm/Support/Path.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "analyzer/rule/rule_context.h"

namespace gpuopt {

namespace {
// The identifier `name` if the parse has it, without adding it: IdentifierTable::get is inline and
// would allocate in Clang's identifier table from this binary's copy of the allocator code, whose
// slab poisoning (under AddressSanitizer) the uninstrumented libclang does not undo (the sanitized
// suite saw the PCH reader write identifier names into such a slab). Identifiers a precompiled
// preamble holds are asked of the PCH reader (libclang's own code).
const clang::IdentifierInfo* findIdentifier(clang::ASTContext& ctx, llvm::StringRef name) {
  auto it = ctx.Idents.find(name);
  if (it != ctx.Idents.end()) return it->second;
  if (auto* external = ctx.Idents.getExternalIdentifierLookup()) return external->get(name);
  return nullptr;
}
bool macroDefined(clang::ASTContext& ctx, llvm::StringRef name) {
  const clang::IdentifierInfo* id = findIdentifier(ctx, name);
  return id && id->hasMacroDefinition();
}
// CUDA 13 removed these cudaDeviceProp fields; the attribute that gives the same value.
const std::map<std::string, std::string>& removedDevicePropFields() {
  static const std::map<std::string, std::string> m = {
      {"clockRate", "cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, device)"},
      {"memoryClockRate", "cudaDeviceGetAttribute(&value, cudaDevAttrMemoryClockRate, device)"},
      {"computeMode", "cudaDeviceGetAttribute(&value, cudaDevAttrComputeMode, device)"},
      {"kernelExecTimeoutEnabled", "cudaDeviceGetAttribute(&value, cudaDevAttrKernelExecTimeout, device)"},
      {"deviceOverlap", "the asyncEngineCount field (or cudaDevAttrGpuOverlap)"},
      {"maxTexture1DLinear", "cudaDeviceGetTexture1DLinearMaxWidth()"},
      {"cooperativeMultiDeviceLaunch", "nothing: multi-device cooperative launches were removed; launch per device"},
  };
  return m;
}

// The quoted name in a Clang message: "no member named 'clockRate' in 'cudaDeviceProp'".
std::string firstQuoted(const std::string& m) {
  size_t a = m.find('\'');
  if (a == std::string::npos) return {};
  size_t b = m.find('\'', a + 1);
  return b == std::string::npos ? std::string() : m.substr(a + 1, b - a - 1);
}
}  // namespace

std::string compileErrorHint(const std::string& msg) {
  if (msg.find("in 'cudaDeviceProp'") != std::string::npos) {
    std::string field = firstQuoted(msg);
    auto it = removedDevicePropFields().find(field);
    if (it != removedDevicePropFields().end())
      return fmt::format(" (CUDA 13 removed cudaDeviceProp::{}, and nvcc 13 rejects it too: use {})", field, it->second);
    return " (this field was removed from cudaDeviceProp in CUDA 12/13; read it with "
           "cudaDeviceGetAttribute(&value, cudaDevAttr..., device))";
  }
  // CCCL 3 (CUDA 13) removed CUB's functors; their libcu++ replacements.
  if (msg.find("in namespace 'cub'") != std::string::npos &&
      (msg.rfind("no member named ", 0) == 0 || msg.rfind("no type named ", 0) == 0 ||
       msg.rfind("no template named ", 0) == 0)) {
    static const std::map<std::string, std::string> functors = {
        {"Sum", "cuda::std::plus<>"},         {"Difference", "cuda::std::minus<>"},
        {"Division", "cuda::std::divides<>"}, {"Max", "cuda::maximum<> (<cuda/functional>)"},
        {"Min", "cuda::minimum<> (<cuda/functional>)"}, {"Equality", "cuda::std::equal_to<>"},
        {"Inequality", "cuda::std::not_equal_to<>"}};
    auto it = functors.find(firstQuoted(msg));
    if (it != functors.end())
      return fmt::format(" (CUDA 13's CCCL removed cub::{}, and nvcc 13 rejects it too: use {})", it->first, it->second);
  }
  if (msg.find("in namespace 'thrust'") != std::string::npos &&
      (msg.rfind("no member named ", 0) == 0 || msg.rfind("no type named ", 0) == 0 ||
       msg.rfind("no template named ", 0) == 0)) {
    static const std::map<std::string, std::string> removed = {
        {"identity", "cuda::std::identity (<cuda/std/functional>; not a template)"},
        {"unary_function", "nothing: a functor needs no base class"},
        {"binary_function", "nothing: a functor needs no base class"}};
    auto it = removed.find(firstQuoted(msg));
    if (it != removed.end())
      return fmt::format(" (CUDA 13's CCCL removed thrust::{}, and nvcc 13 rejects it too: use {})", it->first, it->second);
  }
  // cuSPARSE's SpMV/SpMM algorithm enumerators CUDA 11 deprecated and CUDA 12 removed.
  if (msg.rfind("use of undeclared identifier ", 0) == 0) {
    static const std::map<std::string, std::string> cusparse = {
        {"CUSPARSE_MV_ALG_DEFAULT", "CUSPARSE_SPMV_ALG_DEFAULT"}, {"CUSPARSE_CSRMV_ALG1", "CUSPARSE_SPMV_CSR_ALG1"},
        {"CUSPARSE_CSRMV_ALG2", "CUSPARSE_SPMV_CSR_ALG2"},       {"CUSPARSE_COOMV_ALG", "CUSPARSE_SPMV_COO_ALG1"},
        {"CUSPARSE_MM_ALG_DEFAULT", "CUSPARSE_SPMM_ALG_DEFAULT"}, {"CUSPARSE_CSRMM_ALG1", "CUSPARSE_SPMM_CSR_ALG1"},
        {"CUSPARSE_COOMM_ALG1", "CUSPARSE_SPMM_COO_ALG1"},       {"CUSPARSE_COOMM_ALG2", "CUSPARSE_SPMM_COO_ALG2"},
        {"CUSPARSE_COOMM_ALG3", "CUSPARSE_SPMM_COO_ALG3"}};
    auto it = cusparse.find(firstQuoted(msg));
    if (it != cusparse.end())
      return fmt::format(" (CUDA 12 removed {}, and nvcc 13 rejects it too: use {})", it->first, it->second);
  }
  std::string callee = msg.rfind("no matching function for call to ", 0) == 0 ? firstQuoted(msg) : std::string();
  if (callee == "cudaMemAdvise")
    return " (CUDA 13 changed cudaMemAdvise to take a cudaMemLocation instead of a device number, and nvcc 13 "
           "rejects the old call too: cudaMemAdvise(ptr, bytes, advice, cudaMemLocation{cudaMemLocationTypeDevice, "
           "device}), or cudaMemLocationTypeHost for the CPU)";
  if (callee == "cudaMemPrefetchAsync")
    return " (CUDA 13 changed cudaMemPrefetchAsync to take a cudaMemLocation and flags, and nvcc 13 rejects the old "
           "call too: cudaMemPrefetchAsync(ptr, bytes, cudaMemLocation{cudaMemLocationTypeDevice, device}, 0, "
           "stream))";
  if (callee == "cudaDeviceSynchronize")
    return " (calling cudaDeviceSynchronize() from device code was removed in CUDA 12, and nvcc 13 rejects it too: "
           "wait for child grids with a tail launch (cudaStreamTailLaunch) or a separate kernel)";
  if (callee == "cudaLaunchCooperativeKernelMultiDevice")
    return " (removed in CUDA 13: launch a cooperative kernel on each device with cudaLaunchCooperativeKernel)";
  return {};
}

bool isMissingHeader(const std::string& message) {
  return message.find("file not found") != std::string::npos;
}

std::string missingHeaderHint(const IncludeSearchContext& ctx) {
  if (!ctx.database) {
    std::string s = " (the rest of the file was analysed without it; ";
    if (!ctx.source.empty()) {
      s += "searched the folders of " + ctx.source;
      if (!ctx.folders.empty()) {
        s += " (";
        for (size_t i = 0; i < ctx.folders.size(); ++i) s += (i ? ", " : "") + ctx.folders[i];
        s += ")";
      }
      return s + "; pass its folder with -I after '--')";
    }
    return s + "pass its folder with -I after '--', or -p with a compile_commands.json)";
  }
  std::string s = " (the rest of the file was analysed without it; not in the include folders of " + ctx.source;
  if (ctx.folders.empty()) return s + ", which names none: add the folder to the build's include directories)";
  s += ": ";
  const size_t shown = 6;
  for (size_t i = 0; i < ctx.folders.size() && i < shown; ++i) s += (i ? "; " : "") + ctx.folders[i];
  if (ctx.folders.size() > shown) s += fmt::format("; and {} more", ctx.folders.size() - shown);
  return s + "; install it or add its folder to the build's include directories)";
}

void foldErrorsAfterMissingHeaders(std::vector<Diagnostic>& errors, size_t foldable, size_t maxFindings, size_t maxNotes) {
  std::vector<Diagnostic> out;
  std::vector<size_t> folded;  // per finding of `out`: errors folded into it
  long owner = -1;
  for (size_t i = 0; i < errors.size(); ++i) {
    Diagnostic& e = errors[i];
    if (i >= foldable) owner = -1;
    // Another header of the same library's folder as the last missing one, in the same file
    // (`rapidjson/document.h`, then `rapidjson/writer.h`): one cause, one -I fixes both; nvcc
    // stops at the first.
    if (isMissingHeader(e.message) && owner >= 0) {
      const Diagnostic& h = out[static_cast<size_t>(owner)];
      const std::string a = firstQuoted(h.message), b = firstQuoted(e.message);
      const size_t slash = a.find('/');
      if (slash != std::string::npos && slash > 0 && b.compare(0, slash + 1, a, 0, slash + 1) == 0 &&
          e.span.begin.file == h.span.begin.file && e.span.begin.line >= h.span.begin.line) {
        size_t& n = folded[static_cast<size_t>(owner)];
        if (n++ < maxNotes) out[static_cast<size_t>(owner)].notes.push_back({e.span, "error: '" + b + "' file not found"});
        continue;
      }
    }
    if (isMissingHeader(e.message)) {
      out.push_back(std::move(e));
      folded.push_back(0);
      owner = static_cast<long>(out.size()) - 1;
      continue;
    }
    // Only what comes after the header in the source: an error at an earlier line of the same file
    // (an instantiation Clang reports at the end of the file) is nvcc's too.
    const Diagnostic* header = owner < 0 ? nullptr : &out[static_cast<size_t>(owner)];
    if (!header || (e.span.begin.file == header->span.begin.file && e.span.begin.line < header->span.begin.line)) {
      out.push_back(std::move(e));
      folded.push_back(0);
      continue;
    }
    Diagnostic& o = out[static_cast<size_t>(owner)];
    size_t& n = folded[static_cast<size_t>(owner)];
    if (n++ < maxNotes) {
      o.notes.push_back({e.span, "error: " + e.message});
      for (auto& note : e.notes) o.notes.push_back(std::move(note));
    } else {
      // Kernels named at a folded error are still named.
      for (auto& note : e.notes) o.notes.push_back(std::move(note));
    }
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (folded[i] > 0)
      out[i].message += fmt::format("; {} later error{} may follow from it (nvcc stops here){}", folded[i],
                                    folded[i] == 1 ? "" : "s",
                                    folded[i] > maxNotes ? fmt::format(": the first {} are notes", maxNotes)
                                                         : std::string(folded[i] == 1 ? ": a note" : ": notes"));
  if (out.size() > maxFindings) {
    size_t more = out.size() - maxFindings;
    out.resize(maxFindings);
    out.back().message += fmt::format(" (and {} more compile errors not shown)", more);
  }
  errors = std::move(out);
}

namespace {

// The APIs of gpuopt_legacy_cuda.h: what replaced them.
std::string legacyReplacement(std::string name) {
  if (name.rfind("__gpuopt_texture", 0) == 0) name = "textureReference";
  if (name.rfind("__gpuopt_surface", 0) == 0) name = "surfaceReference";
  static const std::map<std::string, std::string> thread = {
      {"cudaThreadSynchronize", "cudaDeviceSynchronize()"},   {"cudaThreadExit", "cudaDeviceReset()"},
      {"cudaThreadSetLimit", "cudaDeviceSetLimit()"},         {"cudaThreadGetLimit", "cudaDeviceGetLimit()"},
      {"cudaThreadGetCacheConfig", "cudaDeviceGetCacheConfig()"},
      {"cudaThreadSetCacheConfig", "cudaDeviceSetCacheConfig()"}};
  if (auto it = thread.find(name); it != thread.end())
    return fmt::format("'{}' was removed in CUDA 12 and nvcc 13 rejects it: use {}", name, it->second);
  bool surface = name.rfind("surf", 0) == 0 || name.find("Surface") != std::string::npos ||
                 name.find("surface") != std::string::npos;
  return fmt::format("texture and surface references were removed in CUDA 12 and nvcc 13 rejects '{}': use {}", name,
                     surface ? "surface objects (cudaSurfaceObject_t from cudaCreateSurfaceObject, surf2Dwrite(v, obj, "
                               "x, y))"
                             : "texture objects (cudaTextureObject_t from cudaCreateTextureObject, read with "
                               "tex1Dfetch<T>(obj, i) or tex2D<T>(obj, x, y))");
}

bool isUnmaskedVote(const std::string& name) { return name == "__ballot" || name == "__any" || name == "__all"; }

bool isUnmaskedShuffle(const std::string& name) {
  return name == "__shfl" || name == "__shfl_up" || name == "__shfl_down" || name == "__shfl_xor" || isUnmaskedVote(name);
}

std::string shuffleReplacement(const std::string& name) {
  // The votes are still declared (deprecated): nvcc 13's front end only warns, and ptxas rejects
  // the `vote` without `.sync` they become for sm_70 and later (checked with nvcc 13.0 -c, sm_90).
  if (isUnmaskedVote(name))
    return fmt::format("'{}' without a mask does not exist for sm_70 and later (CUDA 9 replaced it): nvcc 13 only "
                       "warns that it is deprecated, and ptxas rejects the 'vote' without '.sync' it compiles to, "
                       "so the file does not build: use {}_sync(0xffffffff, ...) with the mask of the lanes that "
                       "take part",
                       name, name);
  return fmt::format("'{}' without a mask does not exist for sm_70 and later (CUDA 9 replaced it) and nvcc 13 "
                     "rejects it: use {}_sync(0xffffffff, ...) with the mask of the lanes that take part",
                     name, name);
}

bool endsWith(llvm::StringRef s, llvm::StringRef tail) { return s.ends_with(tail); }

// The headers of curand's MTGP32 generator that Clang's CUDA runtime wrapper includes in every
// parse (to fix up its blockDim/threadIdx declarations) and nvcc never includes by itself.
bool isForcedMtgp32Header(llvm::StringRef path) {
  return endsWith(path, "/curand_mtgp32_kernel.h") || endsWith(path, "/curand_mtgp32.h");
}

// Whether the parse's own code asked for the MTGP32 declarations the way nvcc needs: one of the
// headers that bring them in was included by something other than Clang's wrapper (a guard
// defined only by those headers, which the wrapper never includes, or an #include directive of the
// forced headers outside the wrapper's own inclusion of them).
bool mtgp32IncludedForNvcc(clang::ASTContext& ctx, const std::vector<std::pair<clang::SourceLocation, std::string>>& includes) {
  for (const char* guard : {"CURAND_KERNEL_H_", "CURAND_MTGP32_HOST_H"})
    if (macroDefined(ctx, guard)) return true;
  auto& sm = ctx.getSourceManager();
  for (const auto& [hash, path] : includes) {
    if (!isForcedMtgp32Header(path)) continue;
    if (hash.isInvalid()) return true;
    llvm::StringRef from = sm.getFilename(sm.getExpansionLoc(hash));
    if (!endsWith(from, "__clang_cuda_runtime_wrapper.h") && !isForcedMtgp32Header(from)) return true;
  }
  return false;
}

struct RemovedApiFinder : clang::RecursiveASTVisitor<RemovedApiFinder> {
  clang::ASTContext& ctx;
  const LintedFiles& files;
  std::string legacyHeader, bundledDir;
  bool mtgp32Missing = false;  // MTGP32 declarations are there only because Clang's wrapper put them there
  std::vector<RemovedApiUse> uses;
  std::set<std::pair<unsigned, unsigned>> lines;  // (file id, line): one per line

  RemovedApiFinder(clang::ASTContext& c, const LintedFiles& f, const std::string& bundled)
      : ctx(c), files(f), legacyHeader(bundled + "/gpuopt_legacy_cuda.h"), bundledDir(bundled) {}

  // A declaration of the MTGP32 headers nvcc would not have seen: what to include.
  std::string missingForNvcc(const clang::NamedDecl* d) const {
    if (!mtgp32Missing || !d) return {};
    // Declared there alone: the header also redeclares what every CUDA file has (blockDim,
    // threadIdx, builtins such as __syncthreads).
    if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d); fd && fd->getBuiltinID()) return {};
    std::string file = fileOf(d);
    if (!isForcedMtgp32Header(file)) return {};
    for (const clang::Decl* r : d->redecls())
      if (r->getLocation().isInvalid() || !isForcedMtgp32Header(fileOf(llvm::cast<clang::NamedDecl>(r)))) return {};
    std::string name = d->getDeclName().isIdentifier() ? d->getNameAsString() : std::string("curand");
    return fmt::format("'{}' is declared by {}, which Clang's CUDA headers include in every file but nvcc does "
                       "not: nvcc 13 rejects this use (identifier undefined); #include <curand_kernel.h>",
                       name, llvm::sys::path::filename(file).str());
  }

  // printf declared only by Clang's CUDA runtime wrapper (for device code): nvcc's host pass, which
  // reads every __device__ body too, has no printf without <stdio.h> or <cstdio> ("identifier
  // "printf" is undefined", nvcc 13 -c).
  std::string wrapperOnlyPrintf(const clang::NamedDecl* d) const {
    const auto* fd = llvm::dyn_cast_or_null<clang::FunctionDecl>(d);
    if (!fd || !fd->getDeclName().isIdentifier() || fd->getName() != "printf") return {};
    // Every printf the file can see (the host one <cstdio> declares is an overload, not a
    // redeclaration, of the __device__ one) comes from those headers.
    auto lookup = ctx.getTranslationUnitDecl()->lookup(fd->getDeclName());
    for (const clang::NamedDecl* r : lookup) {
      std::string f = fileOf(r);
      if (llvm::sys::path::filename(f) != "__clang_cuda_runtime_wrapper.h" && f.rfind(bundledDir, 0) != 0) return {};
    }
    return "'printf' is declared by Clang's CUDA headers in every file, but nvcc only with <cstdio> (its host "
           "pass reads device code too): nvcc 13 rejects this use (identifier \"printf\" is undefined); "
           "#include <cstdio>";
  }

  std::string fileOf(const clang::Decl* d) const {
    auto& sm = ctx.getSourceManager();
    auto loc = sm.getExpansionLoc(d->getLocation());
    if (loc.isInvalid()) return {};
    return std::string(sm.getFilename(loc));
  }
  // What replaced `d`, if it is a removed API; empty otherwise.
  std::string removed(const clang::NamedDecl* d) const {
    if (!d || !d->getDeclName().isIdentifier()) return {};
    std::string name = d->getNameAsString();
    std::string file = fileOf(d);
    if (file == legacyHeader) {
      if (const auto* rd = llvm::dyn_cast<clang::RecordDecl>(d->getDeclContext()))
        return legacyReplacement(rd->getNameAsString().find("surface") != std::string::npos ? "surfaceReference"
                                                                                               : "textureReference");
      return legacyReplacement(name);
    }
    if (isUnmaskedShuffle(name)) {
      auto& sm = ctx.getSourceManager();
      auto loc = sm.getExpansionLoc(d->getLocation());
      if (loc.isValid() && (sm.isInSystemHeader(loc) || file.rfind(bundledDir, 0) == 0)) return shuffleReplacement(name);
    }
    return {};
  }
  void report(clang::SourceLocation at, const std::string& message) {
    if (message.empty() || at.isInvalid()) return;
    auto& sm = ctx.getSourceManager();
    auto e = sm.getExpansionLoc(at);
    if (!files.contains(e)) return;
    if (!lines.insert({sm.getFileID(e).getHashValue(), sm.getExpansionLineNumber(e)}).second) return;
    uses.push_back({e.getRawEncoding(), message});
  }
  const clang::NamedDecl* primary(const clang::NamedDecl* d) const {
    if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d))
      if (const auto* t = fd->getPrimaryTemplate()) return t;
    return d;
  }
  // The function whose body is being visited (a lambda's body counts as its enclosing function's).
  std::vector<const clang::FunctionDecl*> within;
  bool TraverseDecl(clang::Decl* d) {
    auto* fd = llvm::dyn_cast_or_null<clang::FunctionDecl>(d);
    if (fd) within.push_back(fd);
    bool ok = clang::RecursiveASTVisitor<RemovedApiFinder>::TraverseDecl(d);
    if (fd) within.pop_back();
    return ok;
  }
  // Maskless votes and the functions they are in: reported once the device code nvcc generates is
  // known (reportGeneratedVotes).
  std::vector<std::tuple<clang::SourceLocation, std::string, const clang::FunctionDecl*>> votes;
  bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
    const clang::NamedDecl* d = primary(e->getDecl());
    std::string why = removed(d);
    // nvcc's front end only warns about `__ballot(x)`; ptxas rejects the `vote` it compiles to, so
    // the file fails only where device code is generated for the call: not in a device function no
    // kernel reaches, nor in a template nothing instantiates (moderngpu's ctascan.cuh in warp-ctc,
    // checked with nvcc 13 -c).
    if (!why.empty() && d->getDeclName().isIdentifier() && isUnmaskedVote(d->getNameAsString())) {
      votes.emplace_back(e->getLocation(), std::move(why), within.empty() ? nullptr : within.back());
      return true;
    }
    if (why.empty()) why = missingForNvcc(d);
    if (why.empty()) why = wrapperOnlyPrintf(d);
    report(e->getLocation(), why);
    return true;
  }
  // A call with dependent arguments in a template is looked up when the template is instantiated
  // (nvcc does not reject `__shfl_up(v, 1)` in a template nothing instantiates): the instantiations
  // are visited instead, and a use there is reported at the template's line.
  bool shouldVisitTemplateInstantiations() const { return true; }
  // nvcc: "zero-sized variable is not allowed in device code" (a __device__, __shared__ or
  // __constant__ variable, or a local of a function compiled for the GPU, whose type has size 0:
  // `T a[0]`, a struct holding only one); Clang accepts zero-length arrays as a GNU extension.
  bool VisitVarDecl(clang::VarDecl* v) {
    if (llvm::isa<clang::ParmVarDecl>(v) || v->isInvalidDecl()) return true;
    clang::QualType t = v->getType();
    if (t.isNull() || t->isDependentType() || t->isIncompleteType() || t->isReferenceType()) return true;
    bool device = v->hasAttr<clang::CUDADeviceAttr>() || v->hasAttr<clang::CUDASharedAttr>() ||
                  v->hasAttr<clang::CUDAConstantAttr>();
    if (!device && v->isLocalVarDecl())
      if (const auto* f = llvm::dyn_cast_or_null<clang::FunctionDecl>(v->getParentFunctionOrMethod()))
        device = f->hasAttr<clang::CUDADeviceAttr>() || f->hasAttr<clang::CUDAGlobalAttr>();
    if (!device || v->getDeclContext()->isDependentContext() || !ctx.getTypeSizeInChars(t).isZero()) return true;
    report(v->getLocation(),
           fmt::format("zero-sized variable '{}' is not allowed in device code, and nvcc 13 rejects it (Clang accepts "
                       "a zero-length array as a GNU extension): give it at least one element, or declare it "
                       "`extern __shared__ T name[]` and size it at launch",
                       v->getNameAsString()));
    return true;
  }
  bool VisitMemberExpr(clang::MemberExpr* e) {
    report(e->getMemberLoc(), removed(e->getMemberDecl()));
    return true;
  }
  bool VisitTypeLoc(clang::TypeLoc tl) {
    const clang::Type* t = tl.getTypePtr();
    const clang::NamedDecl* d = nullptr;
    if (const auto* ts = llvm::dyn_cast<clang::TemplateSpecializationType>(t)) d = ts->getTemplateName().getAsTemplateDecl();
    else if (const auto* td = llvm::dyn_cast<clang::TypedefType>(t)) d = td->getDecl();
    else if (const auto* rt = llvm::dyn_cast<clang::RecordType>(t)) d = rt->getDecl();
    if (d && fileOf(d) == legacyHeader) report(tl.getBeginLoc(), legacyReplacement(d->getNameAsString()));
    else if (d) report(tl.getBeginLoc(), missingForNvcc(d));
    return true;
  }
};

bool generatedFromKernel(const clang::FunctionDecl* f) { return f->hasAttr<clang::CUDAGlobalAttr>(); }

// The functions nvcc compiles for the device without relocatable device code: the kernels with a
// body (instantiated, for templates) and every function they call or name, transitively.
std::set<const clang::FunctionDecl*> deviceCodeOf(clang::ASTContext& ctx) {
  struct Kernels : clang::RecursiveASTVisitor<Kernels> {
    std::vector<const clang::FunctionDecl*> todo;
    bool shouldVisitTemplateInstantiations() const { return true; }
    bool VisitFunctionDecl(clang::FunctionDecl* f) {
      if (f->hasAttr<clang::CUDAGlobalAttr>() && f->doesThisDeclarationHaveABody() && !f->isDependentContext())
        todo.push_back(f);
      return true;
    }
  } kernels;
  kernels.TraverseAST(ctx);
  std::set<const clang::FunctionDecl*> seen;
  std::vector<const clang::FunctionDecl*> todo;
  for (const auto* k : kernels.todo)
    if (seen.insert(k->getCanonicalDecl()).second) todo.push_back(k);
  while (!todo.empty()) {
    const clang::FunctionDecl* f = todo.back();
    todo.pop_back();
    const clang::FunctionDecl* def = f->getDefinition();
    if (!def || !def->hasBody()) continue;
    struct Refs : clang::RecursiveASTVisitor<Refs> {
      std::vector<const clang::FunctionDecl*> fns;
      bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
        if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(e->getDecl())) fns.push_back(fd);
        return true;
      }
      bool VisitMemberExpr(clang::MemberExpr* e) {
        if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(e->getMemberDecl())) fns.push_back(fd);
        return true;
      }
      bool VisitCXXConstructExpr(clang::CXXConstructExpr* c) {
        fns.push_back(c->getConstructor());
        return true;
      }
      bool VisitCallExpr(clang::CallExpr* c) {
        if (const auto* fd = c->getDirectCallee()) fns.push_back(fd);
        return true;
      }
    } refs;
    refs.TraverseStmt(def->getBody());
    if (const auto* ctor = llvm::dyn_cast<clang::CXXConstructorDecl>(def))
      for (const auto* init : ctor->inits())
        if (init->getInit()) refs.TraverseStmt(init->getInit());
    for (const auto* fd : refs.fns)
      if (fd && seen.insert(fd->getCanonicalDecl()).second) todo.push_back(fd);
  }
  return seen;
}

// Calls from the kernels (and the device functions they reach) to __device__ functions with no
// definition here: ptxas's "Unresolved extern function" without relocatable device code.
// A definition Clang dropped as an overload by target of this `__host__ __device__` function (the
// same name and type, no device attribute, invalid): nvcc takes it as this function's definition
// (benign_diagnostics.h, err_cuda_ovl_target).
bool hasDroppedHostDefinition(const clang::FunctionDecl* fd) {
  const clang::FunctionDecl* primary = fd;
  if (const auto* t = fd->getPrimaryTemplate()) primary = t->getTemplatedDecl();
  else if (const auto* p = fd->getTemplateInstantiationPattern()) primary = p;
  const clang::DeclContext* dc = primary->getDeclContext()->getRedeclContext();
  for (const clang::Decl* d : dc->decls()) {
    const auto* other = llvm::dyn_cast<clang::FunctionDecl>(d);
    if (const auto* ft = llvm::dyn_cast<clang::FunctionTemplateDecl>(d)) other = ft->getTemplatedDecl();
    if (!other || other == primary || !other->isInvalidDecl() || !other->doesThisDeclarationHaveABody()) continue;
    if (other->getDeclName() == primary->getDeclName() && !other->hasAttr<clang::CUDADeviceAttr>()) return true;
  }
  return false;
}

struct UndefinedDeviceCalls : clang::RecursiveASTVisitor<UndefinedDeviceCalls> {
  RemovedApiFinder& out;
  std::set<const clang::FunctionDecl*> seen;
  std::vector<const clang::FunctionDecl*> todo;
  explicit UndefinedDeviceCalls(RemovedApiFinder& f) : out(f) {}
  bool shouldVisitTemplateInstantiations() const { return true; }
  bool VisitFunctionDecl(clang::FunctionDecl* f) {
    if (f->hasAttr<clang::CUDAGlobalAttr>() && f->doesThisDeclarationHaveABody() && !f->isDependentContext() &&
        seen.insert(f).second)
      todo.push_back(f);
    return true;
  }
  void run(clang::ASTContext& ctx) {
    TraverseAST(ctx);
    auto& sm = ctx.getSourceManager();
    while (!todo.empty()) {
      const clang::FunctionDecl* f = todo.back();
      todo.pop_back();
      struct Calls : clang::RecursiveASTVisitor<Calls> {
        std::vector<std::pair<const clang::CallExpr*, const clang::FunctionDecl*>> calls;
        bool VisitCallExpr(clang::CallExpr* c) {
          if (const auto* fd = c->getDirectCallee()) calls.push_back({c, fd});
          return true;
        }
      } calls;
      calls.TraverseStmt(f->getBody());
      for (auto [call, fd] : calls.calls) {
        if (!fd->hasAttr<clang::CUDADeviceAttr>() || fd->getBuiltinID() || fd->isDeleted()) continue;
        if (const clang::FunctionDecl* def = fd->getDefinition()) {
          if (def->hasBody() && !def->isDependentContext() && seen.insert(def).second) todo.push_back(def);
          continue;
        }
        if (const auto* pattern = fd->getTemplateInstantiationPattern(); pattern && pattern->isDefined()) continue;
        if (hasDroppedHostDefinition(fd)) continue;
        auto loc = sm.getExpansionLoc(fd->getLocation());
        if (loc.isInvalid() || sm.isInSystemHeader(loc) || out.fileOf(fd).rfind(out.bundledDir, 0) == 0) continue;
        out.report(call->getBeginLoc(),
                   fmt::format("'{}' is a __device__ function with no definition in this translation unit: nvcc "
                               "compiles device code as one program unless given -rdc=true (or -dc), and ptxas "
                               "rejects the call (Unresolved extern function); define it in this file or build "
                               "with relocatable device code",
                               fd->getNameAsString()));
      }
    }
  }
};

// Calls from __global__ and __device__ functions of constexpr functions that carry no execution
// space of their own (std::min, std::numeric_limits<T>::max, a user's `constexpr int twice(int)`, a
// constexpr constructor): nvcc takes them as __host__ and rejects the call unless given
// --expt-relaxed-constexpr (checked with nvcc 13 -c: also in constant-evaluated contexts, a
// constexpr variable's initialiser or an array bound; std::move and std::forward are allowed);
// Clang makes every constexpr function implicitly __host__ __device__ and accepts it.
struct ConstexprHostCalls : clang::RecursiveASTVisitor<ConstexprHostCalls> {
  RemovedApiFinder& out;
  explicit ConstexprHostCalls(RemovedApiFinder& f) : out(f) {}
  bool shouldVisitTemplateInstantiations() const { return true; }
  static bool deviceOnly(const clang::FunctionDecl* f) {
    const auto* g = f->getAttr<clang::CUDAGlobalAttr>();
    const auto* d = f->getAttr<clang::CUDADeviceAttr>();
    const auto* h = f->getAttr<clang::CUDAHostAttr>();
    if (g) return true;
    return d && !d->isImplicit() && (!h || h->isImplicit());
  }
  // The callee nvcc reads as host-only: constexpr, with no execution space written.
  static bool hostConstexpr(const clang::FunctionDecl* f) {
    if (!f || !f->isConstexpr() || f->isImplicit() || f->isDefaulted() || f->getBuiltinID()) return false;
    if (const auto* md = llvm::dyn_cast<clang::CXXMethodDecl>(f); md && md->getParent()->isLambda()) return false;
    const clang::FunctionDecl* p = f->getTemplateInstantiationPattern() ? f->getTemplateInstantiationPattern() : f;
    // Clang's own device overloads of std::min and std::max (its cuda_wrappers/algorithm), which
    // nvcc does not have: it sees libstdc++'s, constexpr and host-only.
    if (f->isInStdNamespace() && f->getIdentifier() && (f->getName() == "min" || f->getName() == "max")) {
      const auto& sm = f->getASTContext().getSourceManager();
      if (sm.getFilename(sm.getSpellingLoc(p->getLocation())).contains("cuda_wrappers")) return true;
    }
    for (const clang::FunctionDecl* x : {f, p}) {
      if (const auto* d = x->getAttr<clang::CUDADeviceAttr>(); d && !d->isImplicit()) return false;
      if (x->hasAttr<clang::CUDAGlobalAttr>()) return false;
    }
    if (f->isInStdNamespace() && f->getIdentifier() && (f->getName() == "move" || f->getName() == "forward"))
      return false;
    if (const auto* rd = llvm::dyn_cast<clang::CXXRecordDecl>(f->getDeclContext());
        rd && rd->isInStdNamespace() && rd->getIdentifier() && rd->getName() == "initializer_list")
      return false;
    return true;
  }
  void check(clang::SourceLocation at, const clang::FunctionDecl* callee, const clang::FunctionDecl* caller) {
    if (!hostConstexpr(callee)) return;
    out.report(at, fmt::format("calling a constexpr __host__ function ('{}') from a {} function ('{}'): nvcc rejects "
                               "it unless given --expt-relaxed-constexpr (Clang makes constexpr functions "
                               "__host__ __device__ and accepts it); mark the function __host__ __device__, call a "
                               "device overload (min, fmaxf), or build with --expt-relaxed-constexpr",
                               callee->getNameAsString(), caller->hasAttr<clang::CUDAGlobalAttr>() ? "__global__" : "__device__",
                               caller->getNameAsString()));
  }
  bool VisitFunctionDecl(clang::FunctionDecl* f) {
    if (!f->doesThisDeclarationHaveABody() || f->isDependentContext() || !deviceOnly(f)) return true;
    if (!out.files.contains(out.ctx.getSourceManager().getExpansionLoc(f->getLocation()))) return true;
    struct Calls : clang::RecursiveASTVisitor<Calls> {
      ConstexprHostCalls* self;
      const clang::FunctionDecl* caller;
      bool shouldVisitLambdaBody() const { return false; }
      bool VisitCallExpr(clang::CallExpr* c) {
        self->check(c->getBeginLoc(), c->getDirectCallee(), caller);
        return true;
      }
      bool VisitCXXConstructExpr(clang::CXXConstructExpr* c) {
        self->check(c->getBeginLoc(), c->getConstructor(), caller);
        return true;
      }
    } calls;
    calls.self = this;
    calls.caller = f;
    calls.TraverseStmt(f->getBody());
    return true;
  }
};

}  // namespace

std::vector<RemovedApiUse> findRemovedApiUses(clang::ASTContext& ctx, const LintedFiles& files,
                                              const std::string& bundledDir,
                                              const std::vector<std::pair<clang::SourceLocation, std::string>>& includes) {
  RemovedApiFinder f(ctx, files, bundledDir);
  f.mtgp32Missing = !mtgp32IncludedForNvcc(ctx, includes);
  f.TraverseAST(ctx);
  const bool rdc = macroDefined(ctx, "__CUDACC_RDC__");
  // With relocatable device code every external device function is compiled; without it only what
  // the kernels reach.
  std::set<const clang::FunctionDecl*> generated;
  if (!rdc) generated = deviceCodeOf(ctx);
  for (auto& [at, why, fn] : f.votes) {
    const clang::FunctionDecl* def = fn ? fn->getDefinition() : nullptr;
    const bool emitted = def && !def->isDependentContext() &&
                         (rdc ? def->isExternallyVisible() || generatedFromKernel(def) : generated.count(def->getCanonicalDecl()) > 0);
    if (emitted) f.report(at, why);
  }
  if (!rdc) UndefinedDeviceCalls(f).run(ctx);
  // (A Clang command: Clang is the compiler, and it accepts them.)
  if (!macroDefined(ctx, "__CUDACC_RELAXED_CONSTEXPR__") && !macroDefined(ctx, "__GPUOPT_LINT_CLANG_DRIVER__"))
    ConstexprHostCalls(f).TraverseAST(ctx);
  return std::move(f.uses);
}

const char* const kNvccWarnsSharedInit =
    "dynamic initialization of a function-scope __shared__ variable: nvcc 13 only warns (#20054-D) and runs no "
    "constructor, but Clang's CUDA mode rejects it ('initialization is not supported for __shared__ variables'), so "
    "the kernel declaring it could not be analysed; a type whose default constructor is empty (initialised by one "
    "thread after the declaration) compiles for both";

const char* const kNvccAcceptsOwnParameters =
    "a function template defined with its own template parameters written as arguments (`C<T>::f<E>(...)`): nvcc "
    "takes it as the template's definition, Clang as a partial specialization, which C++ does not allow, so "
    "gpuopt-lint cannot read this definition and what it calls or launches is not analysed; without the argument "
    "list (`C<T>::f(...)`) it means the same and compiles with both";

const char* const kNvccAcceptsMissingTemplateKeyword =
    "a member template of a dependent type called without the `template` keyword (`T::f<N>(x)`): nvcc accepts "
    "it, Clang reads the `<` as less-than and drops the instantiations of the function around it, so gpuopt-lint "
    "cannot analyse that function or what it calls or launches; `T::template f<N>(x)` means the same and compiles "
    "with both";

const char* const kNvccReadWithTemplateKeyword =
    "a member template of a class template called without the `template` keyword (`C<T>::f<N>(x)`): nvcc accepts "
    "it (C's definition declares f a member template), Clang and GCC need `C<T>::template f<N>(x)`; gpuopt-lint "
    "read it here as nvcc does, so the code around it is analysed";

const char* const kNvccAcceptsUnmatchedDefinition =
    "an out-of-line definition of a function template whose parameters match no declaration of its namespace: nvcc "
    "(EDG) and GCC take it as declaring another overload, Clang rejects it and drops its body, so gpuopt-lint cannot "
    "analyse what calls it; declaring it with these parameters (or fixing the declaration) compiles with both";

const char* const kNvccReadUnmatchedDefinition =
    "an out-of-line definition of a function template whose parameters match no declaration of its namespace: nvcc "
    "(EDG) and GCC take it as declaring another overload (Clang rejects it); gpuopt-lint read it here as nvcc does, "
    "so the code that calls it is analysed; declaring it with these parameters compiles with both";

const char* const kNvccAcceptsTargetSpecialization =
    "an explicit specialization that is `__host__ __device__` of a function template that is `__device__` only (or "
    "the other way round): nvcc matches it to the template, Clang counts the attributes as part of the signature and "
    "rejects it, so gpuopt-lint cannot analyse what calls it; the same attributes on both compile with both";

const char* const kNvccReadTargetSpecialization =
    "an explicit specialization that is `__host__ __device__` of a function template that is `__device__` only (or "
    "the other way round): nvcc matches it to the template (Clang rejects it); gpuopt-lint read both as `__host__ "
    "__device__` here, as nvcc matches them, so the code that calls it is analysed; the same attributes on both "
    "compile with both";

const char* const kNvccAcceptsArchDeviceMacro =
    "host code calling functions a macro makes `__device__` only where __CUDA_ARCH__ is defined: nvcc compiles the "
    "file twice, and its host pass reads them as host functions (the macro is empty there); Clang reads the file "
    "once with __CUDA_ARCH__ defined and rejects the call, so gpuopt-lint cannot analyse what it reaches (Clang's CUDA "
    "documentation calls such __CUDA_ARCH__-dependent attributes unsupported; `__host__ __device__` compiles with both)";

const char* const kNvccReadArchDeviceMacro =
    "host code calling functions a macro makes `__device__` only where __CUDA_ARCH__ is defined: nvcc's host pass "
    "reads them as host functions (Clang's one parse rejects the call); gpuopt-lint read the macro as `__device__ "
    "__host__` here, the two passes at once, so the code is analysed; `__host__ __device__` compiles with both";

const char* const kNvccAcceptsTemplateTemplateArgument =
    "a class template with non-type (or more) parameters given for a template template parameter that takes only "
    "types (`template <class...> class M` given `table<class K, class V, int B>`): nvcc's front end (EDG) accepts "
    "it, and nvcc compiles the file where the host code it generates spells the specialization out (a typedef of "
    "a type list; its host compiler rejects the same use in an alias or a call); Clang rejects it and drops what "
    "depends on it, so gpuopt-lint cannot analyse the code this instantiates; a parameter list that matches the "
    "template's (`template <class, class, auto...> class M`) or passing the specialization as a type compiles "
    "with all of them";

std::string staticMemberThroughReferenceNote(const StaticThroughReference& r) {
  return fmt::format(
      "'{0}.{1}' reads the static data member '{2}::{1}' through the reference '{0}' in a constant expression: "
      "nvcc (and GCC) accept it, as the object of a static member is not read; Clang rejects it before C++23 "
      "(P2280), so gpuopt-lint reads the constant as unknown in this function; `{2}::{1}` means the same and "
      "compiles with both",
      r.reference, r.member, r.cls);
}

std::optional<StaticThroughReference> staticMemberThroughReference(clang::ASTContext& ctx, clang::SourceLocation loc) {
  auto& sm = ctx.getSourceManager();
  struct Find : clang::RecursiveASTVisitor<Find> {
    clang::SourceManager& sm;
    clang::SourceLocation at;
    std::optional<StaticThroughReference> found;
    Find(clang::SourceManager& s, clang::SourceLocation l) : sm(s), at(l) {}
    bool VisitMemberExpr(clang::MemberExpr* m) {
      const auto* member = llvm::dyn_cast<clang::VarDecl>(m->getMemberDecl());
      const auto* base = llvm::dyn_cast<clang::DeclRefExpr>(m->getBase()->IgnoreParenImpCasts());
      if (!member || !member->isStaticDataMember() || !base) return true;
      const auto* var = llvm::dyn_cast<clang::VarDecl>(base->getDecl());
      if (var && var->getType()->isReferenceType() && sm.getExpansionLoc(base->getBeginLoc()) == at) {
        const auto* cls = llvm::dyn_cast<clang::NamedDecl>(member->getDeclContext());
        found = StaticThroughReference{var->getNameAsString(), member->getNameAsString(),
                                       cls ? cls->getQualifiedNameAsString() : std::string("T")};
      }
      return !found;
    }
  } f(sm, loc);
  f.TraverseAST(ctx);
  return f.found;
}

const char* const kNvccAcceptsNonLiteralInConstexpr =
    "a variable of non-literal type in a constexpr function template: nvcc (and GCC) accept it in a template, "
    "Clang rejects it before C++23 and drops the function, so gpuopt-lint cannot analyse it or what calls it; with "
    "-std=c++23, or without `constexpr` on the function, it compiles with both";

const char* const kNvccAcceptsThisInConstantExpression =
    "a static member read through `this->` in a constant expression (`if constexpr (this->flag)`): nvcc (and "
    "GCC) accept it, Clang rejects the use of `this` and drops the function, so gpuopt-lint cannot analyse it or "
    "what calls it; without `this->` (`if constexpr (flag)`) it means the same and compiles with both";

bool nvccAcceptsInContext(clang::ASTContext& ctx, clang::SourceLocation loc, bool nonLiteral) {
  auto& sm = ctx.getSourceManager();
  if (loc.isInvalid()) return false;
  // The innermost function definition (pattern, not instantiation) whose body holds loc.
  struct Find : clang::RecursiveASTVisitor<Find> {
    clang::SourceManager& sm;
    clang::SourceLocation at;
    const clang::FunctionDecl* found = nullptr;
    Find(clang::SourceManager& s, clang::SourceLocation l) : sm(s), at(l) {}
    bool contains(clang::SourceRange r) const {
      auto b = sm.getExpansionLoc(r.getBegin()), e = sm.getExpansionLoc(r.getEnd());
      return b.isValid() && e.isValid() && sm.getFileID(b) == sm.getFileID(at) && !sm.isBeforeInTranslationUnit(at, b) &&
             !sm.isBeforeInTranslationUnit(e, at);
    }
    bool TraverseDecl(clang::Decl* d) {
      if (!d) return true;
      if (!llvm::isa<clang::TranslationUnitDecl>(d) && !contains(d->getSourceRange())) return true;
      return clang::RecursiveASTVisitor<Find>::TraverseDecl(d);
    }
    bool VisitFunctionDecl(clang::FunctionDecl* f) {
      if (f->doesThisDeclarationHaveABody() && contains(f->getSourceRange())) found = f;
      return true;
    }
  } f(sm, loc);
  f.TraverseAST(ctx);
  if (!f.found) return false;
  if (nonLiteral) return f.found->isTemplated();
  // `this->NAME` written at loc, NAME a static data member of the method's class.
  bool invalid = false;
  llvm::StringRef buf = sm.getBufferData(sm.getFileID(loc), &invalid);
  if (invalid) return false;
  llvm::StringRef text = buf.substr(sm.getFileOffset(loc));
  if (!text.consume_front("this")) return false;
  text = text.ltrim();
  if (!text.consume_front("->")) return false;
  text = text.ltrim();
  size_t n = 0;
  while (n < text.size() && (llvm::isAlnum(text[n]) || text[n] == '_')) ++n;
  if (n == 0) return false;
  const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(f.found);
  if (!m) return false;
  const clang::IdentifierInfo* id = findIdentifier(ctx, text.substr(0, n));
  if (!id) return false;
  auto r = m->getParent()->lookup(clang::DeclarationName(id));
  for (const clang::NamedDecl* d : r)
    if (const auto* v = llvm::dyn_cast<clang::VarDecl>(d); v && v->isStaticDataMember()) return true;
  return false;
}

bool nvccFindsMemberTemplate(clang::ASTContext& ctx, clang::SourceLocation loc, clang::SourceLocation* nameLoc) {
  auto& sm = ctx.getSourceManager();
  if (loc.isInvalid()) return false;
  const clang::SourceLocation at = sm.getExpansionLoc(loc);
  // The dependent name written at loc, `Q::f`, and its qualifier's type, in a template's pattern.
  // Member access (`obj.f<4>()`, `p->f<4>()` on an object of a dependent type other than the class
  // being defined, which Clang accepts): nvcc 13 rejects it too, whatever the object's type.
  struct Find : clang::RecursiveASTVisitor<Find> {
    clang::SourceManager& sm;
    clang::SourceLocation at;
    const clang::Type* owner = nullptr;
    clang::DeclarationName name;
    clang::SourceLocation nameAt;
    Find(clang::SourceManager& s, clang::SourceLocation l) : sm(s), at(l) {}
    bool here(clang::SourceLocation l) const { return l.isValid() && sm.getExpansionLoc(l) == at; }
    bool VisitDependentScopeDeclRefExpr(clang::DependentScopeDeclRefExpr* e) {
      if (!owner && (here(e->getBeginLoc()) || here(e->getNameInfo().getLoc())))  // Clang points at the start
        if (const clang::Type* t = e->getQualifier().getAsType())
          owner = t, name = e->getDeclName(), nameAt = e->getNameInfo().getLoc();
      return true;
    }
  } f(sm, at);
  f.TraverseAST(ctx);
  if (!f.owner || f.name.isEmpty()) return false;
  // A specialization of a known class template (`Caster<A>`, `Ref<N>`) or the class being defined:
  // EDG looks the name up in the template's definition and takes a member template as one. A
  // template parameter (`R::f<4>()`, `r.get<4>()` with `R const& r`) it cannot look into: nvcc 13
  // rejects those too ("expected an expression").
  const clang::CXXRecordDecl* rd = nullptr;
  const clang::Type* t = f.owner->getUnqualifiedDesugaredType();
  if (const auto* ts = t->getAs<clang::TemplateSpecializationType>()) {
    if (const auto* td = llvm::dyn_cast_or_null<clang::ClassTemplateDecl>(ts->getTemplateName().getAsTemplateDecl()))
      rd = td->getTemplatedDecl();
  } else if (const auto* inj = t->getAs<clang::InjectedClassNameType>()) {
    rd = inj->getDecl();
  } else {
    rd = t->getAsCXXRecordDecl();
  }
  if (!rd || !rd->hasDefinition()) return false;
  for (const clang::NamedDecl* d : rd->getDefinition()->lookup(f.name))
    if (llvm::isa<clang::FunctionTemplateDecl>(d) || llvm::isa<clang::VarTemplateDecl>(d)) {
      if (nameLoc) *nameLoc = f.nameAt;
      return true;
    }
  return false;
}

bool nvccOnlyWarnsAtSharedInit(clang::ASTContext& ctx, clang::SourceLocation loc) {
  struct Find : clang::RecursiveASTVisitor<Find> {
    clang::SourceManager& sm;
    clang::SourceLocation at;
    bool found = false;
    Find(clang::SourceManager& s, clang::SourceLocation l) : sm(s), at(l) {}
    bool shouldVisitTemplateInstantiations() const { return true; }
    bool VisitVarDecl(clang::VarDecl* v) {
      if (sm.getExpansionLoc(v->getLocation()) != at || !v->hasAttr<clang::CUDASharedAttr>() || !v->isLocalVarDecl())
        return true;
      const clang::Expr* init = v->getInit();
      if (const auto* ewc = llvm::dyn_cast_or_null<clang::ExprWithCleanups>(init)) init = ewc->getSubExpr();
      const auto* ce = llvm::dyn_cast_or_null<clang::CXXConstructExpr>(init);
      // No initializer written: the default constructor, implicitly (`__shared__ T s;`).
      if (ce && ce->getNumArgs() == 0 && !ce->isListInitialization() && ce->getParenOrBraceRange().isInvalid())
        found = true;
      return !found;
    }
  } f(ctx.getSourceManager(), loc);
  f.TraverseAST(ctx);
  return f.found;
}

namespace {
// Whether each location lies in the source range of a function definition that `pick` selects.
template <class Pick>
std::vector<bool> inFunctionsWhere(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& locs, Pick pick) {
  struct Ranges : clang::RecursiveASTVisitor<Ranges> {
    Pick* pick = nullptr;
    std::vector<clang::SourceRange> ranges;
    bool VisitFunctionDecl(clang::FunctionDecl* f) {
      if (f->doesThisDeclarationHaveABody() && (*pick)(f)) ranges.push_back(f->getSourceRange());
      return true;
    }
  } r;
  r.pick = &pick;
  r.TraverseAST(ctx);
  auto& sm = ctx.getSourceManager();
  std::vector<bool> out;
  for (const auto& loc : locs) {
    bool in = false;
    for (const auto& range : r.ranges) {
      auto b = sm.getExpansionLoc(range.getBegin()), e = sm.getExpansionLoc(range.getEnd());
      if (loc.isValid() && b.isValid() && e.isValid() && sm.getFileID(b) == sm.getFileID(loc) &&
          !sm.isBeforeInTranslationUnit(loc, b) && !sm.isBeforeInTranslationUnit(e, loc)) {
        in = true;
        break;
      }
    }
    out.push_back(in);
  }
  return out;
}
}  // namespace

std::vector<bool> inDeviceCode(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& locs) {
  return inFunctionsWhere(ctx, locs, [](const clang::FunctionDecl* f) {
    return f->hasAttr<clang::CUDADeviceAttr>() || f->hasAttr<clang::CUDAGlobalAttr>();
  });
}

std::vector<bool> inTemplatePattern(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& locs) {
  return inFunctionsWhere(ctx, locs, [](const clang::FunctionDecl* f) { return f->isTemplated(); });
}

std::vector<bool> inInstantiatedTemplatePattern(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& locs) {
  struct Patterns : clang::RecursiveASTVisitor<Patterns> {
    bool shouldVisitTemplateInstantiations() const { return true; }
    std::set<const clang::FunctionDecl*> used;
    bool VisitFunctionDecl(clang::FunctionDecl* f) {
      // Used, or given a body: an instantiation Clang could not make (an error in a non-dependent
      // part of the pattern) is left invalid, with no body, but it is used.
      if (f->isTemplateInstantiation() && (f->doesThisDeclarationHaveABody() || f->isUsed()))
        if (const clang::FunctionDecl* p = f->getTemplateInstantiationPattern()) used.insert(p->getCanonicalDecl());
      return true;
    }
  } p;
  p.TraverseAST(ctx);
  return inFunctionsWhere(ctx, locs, [&](const clang::FunctionDecl* f) {
    return f->isTemplated() && p.used.count(f->getCanonicalDecl()) > 0;
  });
}

std::vector<bool> atVariableDeclaration(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& locs) {
  struct Vars : clang::RecursiveASTVisitor<Vars> {
    std::set<clang::SourceLocation> at;
    bool VisitVarDecl(clang::VarDecl* v) {
      at.insert(v->getLocation());
      return true;
    }
  } v;
  v.TraverseAST(ctx);
  auto& sm = ctx.getSourceManager();
  std::vector<bool> out;
  for (const auto& loc : locs) out.push_back(v.at.count(loc) > 0 || v.at.count(sm.getExpansionLoc(loc)) > 0);
  return out;
}

namespace {
// The function whose name is at `loc`: a function template's pattern (`templated`), or a
// function that is not one (an explicit specialization).
struct DefinitionAt : clang::RecursiveASTVisitor<DefinitionAt> {
  const clang::SourceManager* sm = nullptr;
  clang::SourceLocation loc;
  bool templated = true;
  const clang::FunctionDecl* found = nullptr;
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool VisitFunctionDecl(clang::FunctionDecl* fd) {
    if (!found && (fd->getDescribedFunctionTemplate() != nullptr) == templated && sm->getExpansionLoc(fd->getLocation()) == loc)
      found = fd;
    return !found;
  }
};
}  // namespace

std::optional<UnmatchedDefinition> unmatchedTemplateDefinition(clang::ASTContext& ctx, clang::SourceLocation loc) {
  auto& sm = ctx.getSourceManager();
  if (loc.isInvalid()) return std::nullopt;
  DefinitionAt v;
  v.sm = &sm;
  v.loc = loc;
  v.TraverseDecl(ctx.getTranslationUnitDecl());
  const clang::FunctionDecl* fd = v.found;
  if (!fd || !fd->getQualifierLoc() || !fd->getBody()) return std::nullopt;
  const clang::FunctionTemplateDecl* ftd = fd->getDescribedFunctionTemplate();
  // Namespaces only: a class's member is a different case (nvcc rejects it too).
  for (const clang::DeclContext* dc = fd->getDeclContext(); dc && !dc->isTranslationUnit(); dc = dc->getParent())
    if (!llvm::isa<clang::NamespaceDecl>(dc)) return std::nullopt;
  const clang::SourceLocation begin = ftd->getBeginLoc(), body = fd->getBody()->getBeginLoc();
  const clang::SourceLocation qBegin = fd->getQualifierLoc().getBeginLoc(), name = fd->getLocation();
  for (auto l : {begin, body, qBegin, name})
    if (l.isInvalid() || !l.isFileID()) return std::nullopt;
  const clang::FileID fid = sm.getFileID(begin);
  if (sm.getFileID(body) != fid || sm.getFileID(qBegin) != fid || sm.getFileID(name) != fid) return std::nullopt;
  const unsigned b = sm.getFileOffset(begin), e = sm.getFileOffset(body), qb = sm.getFileOffset(qBegin),
                 n = sm.getFileOffset(name);
  if (!(b <= qb && qb <= n && n < e)) return std::nullopt;
  const llvm::StringRef buf = sm.getBufferData(fid);
  if (e > buf.size()) return std::nullopt;
  // The namespaces as written (`::` at the front: from the global scope, where such a definition is).
  std::string qualifier = buf.substr(qb, n - qb).str();
  std::vector<std::string> names;
  for (size_t at = 0; at < qualifier.size();) {
    size_t next = qualifier.find("::", at);
    if (next == std::string::npos) break;
    std::string part = llvm::StringRef(qualifier).substr(at, next - at).trim().str();
    at = next + 2;
    if (part.empty() && names.empty()) continue;
    if (part.empty() || !std::all_of(part.begin(), part.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
      return std::nullopt;
    names.push_back(part);
  }
  if (names.empty()) return std::nullopt;
  // The head without the qualifier, on one line: `//` comments dropped, no directive inside.
  std::string head = buf.substr(b, qb - b).str() + buf.substr(n, e - n).str();
  std::string line;
  for (size_t at = 0; at <= head.size();) {
    size_t nl = head.find('\n', at);
    std::string part = head.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    if (auto c = part.find("//"); c != std::string::npos) part.erase(c);
    if (llvm::StringRef(part).trim().starts_with("#")) return std::nullopt;
    if (!part.empty() && part.back() == '\\') return std::nullopt;
    line += part + " ";
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  std::string decl;
  for (const auto& ns : names) decl += "namespace " + ns + " { ";
  decl += llvm::StringRef(line).trim().str() + "; ";
  for (size_t i = 0; i < names.size(); ++i) decl += "} ";
  return UnmatchedDefinition{fid, b, decl};
}

namespace {
// Every function (instantiations of class and function templates too) whose name is at one of
// `locs` (expansion locations): a walk of the declaration contexts (class members included).
struct FunctionsAt {
  const clang::SourceManager* sm = nullptr;
  std::set<clang::SourceLocation> locs;
  std::map<clang::SourceLocation, std::vector<const clang::FunctionDecl*>> found;
  void function(const clang::FunctionDecl* fd) {
    clang::SourceLocation l = sm->getExpansionLoc(fd->getLocation());
    if (locs.count(l)) found[l].push_back(fd);
  }
  void walk(const clang::DeclContext* dc, int depth = 0) {
    if (!dc || depth > 32) return;
    for (const clang::Decl* d : dc->decls()) {
      if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d)) function(fd);
      if (const auto* ft = llvm::dyn_cast<clang::FunctionTemplateDecl>(d)) {
        function(ft->getTemplatedDecl());
        for (const clang::FunctionDecl* s : ft->specializations()) function(s);
      }
      if (const auto* ct = llvm::dyn_cast<clang::ClassTemplateDecl>(d)) {
        walk(ct->getTemplatedDecl(), depth + 1);
        for (const clang::ClassTemplateSpecializationDecl* s : ct->specializations()) walk(s, depth + 1);
      } else if (const auto* inner = llvm::dyn_cast<clang::DeclContext>(d); inner && !llvm::isa<clang::FunctionDecl>(d)) {
        walk(inner, depth + 1);
      }
    }
  }
};
// Whether line `line` (1-based) of `text` lies inside an #if/#ifdef/#ifndef/#elif group whose
// condition names __CUDA_ARCH__ (or its #else).
bool underCudaArchCondition(llvm::StringRef text, unsigned line) {
  std::vector<bool> open;
  unsigned n = 1;
  for (size_t at = 0; at < text.size() && n < line; ++n) {
    size_t nl = text.find('\n', at);
    llvm::StringRef l = text.slice(at, nl == llvm::StringRef::npos ? text.size() : nl).ltrim();
    at = nl == llvm::StringRef::npos ? text.size() : nl + 1;
    if (!l.consume_front("#")) continue;
    l = l.ltrim();
    const bool arch = l.contains("__CUDA_ARCH__");
    if (l.starts_with("ifdef") || l.starts_with("ifndef") || l.starts_with("if")) open.push_back(arch);
    else if (l.starts_with("elif") && !open.empty()) open.back() = open.back() || arch;
    else if (l.starts_with("endif") && !open.empty()) open.pop_back();
  }
  return std::find(open.begin(), open.end(), true) != open.end();
}
}  // namespace

std::vector<UnmatchedDefinition> archDeviceSites(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& candidates) {
  auto& sm = ctx.getSourceManager();
  if (candidates.empty()) return {};
  FunctionsAt v;
  v.sm = &sm;
  for (auto l : candidates)
    if (l.isValid()) v.locs.insert(l);
  v.walk(ctx.getTranslationUnitDecl());
  std::vector<UnmatchedDefinition> out;
  std::set<std::pair<clang::FileID, unsigned>> seen;
  for (auto l : v.locs) {
    auto it = v.found.find(l);
    if (it == v.found.end()) return {};
    bool any = false;
    for (const clang::FunctionDecl* fd : it->second) {
      const auto* dev = fd->getAttr<clang::CUDADeviceAttr>();
      if (!dev || dev->isImplicit() || fd->hasAttr<clang::CUDAHostAttr>()) continue;
      // From the attribute outwards through the macros that expanded to it: the `__device__`
      // token written in a project macro's body, on a #define line under a __CUDA_ARCH__ test.
      for (clang::SourceLocation m = dev->getLocation(); m.isMacroID(); m = sm.getImmediateMacroCallerLoc(m)) {
        clang::SourceLocation sp = sm.getSpellingLoc(m);
        if (sp.isInvalid() || sm.isInSystemHeader(sp)) continue;
        bool invalid = false;
        const char* at = sm.getCharacterData(sp, &invalid);
        if (invalid || llvm::StringRef(at).substr(0, 10) != "__device__") continue;
        const clang::FileID fid = sm.getFileID(sp);
        llvm::StringRef buf = sm.getBufferData(fid, &invalid);
        if (invalid) continue;
        const unsigned off = sm.getFileOffset(sp);
        const size_t bol = buf.rfind('\n', off);
        llvm::StringRef lineText = buf.slice(bol == llvm::StringRef::npos ? 0 : bol + 1, off).ltrim();
        if (!lineText.consume_front("#") || !lineText.ltrim().starts_with("define")) continue;
        if (!underCudaArchCondition(buf, sm.getSpellingLineNumber(sp))) continue;
        if (seen.insert({fid, off + 10}).second) out.push_back({fid, off + 10, " __host__"});
        any = true;
        break;
      }
      if (any) break;
    }
    if (!any) return {};
  }
  return out;
}

std::vector<UnmatchedDefinition> hostDeviceSpecializationSites(clang::ASTContext& ctx, clang::SourceLocation loc) {
  auto& sm = ctx.getSourceManager();
  if (loc.isInvalid()) return {};
  DefinitionAt v;
  v.sm = &sm;
  v.loc = loc;
  v.templated = false;
  v.TraverseDecl(ctx.getTranslationUnitDecl());
  const clang::FunctionDecl* fd = v.found;
  if (!fd || !fd->getIdentifier()) return {};
  // Written attributes only (not the implicit host-device of constexpr functions).
  auto written = [](const clang::Decl* d, auto* tag) {
    using A = std::remove_pointer_t<decltype(tag)>;
    const A* a = d->getAttr<A>();
    return a && !a->isImplicit() ? a : nullptr;
  };
  const auto* specHost = written(fd, static_cast<clang::CUDAHostAttr*>(nullptr));
  const auto* specDevice = written(fd, static_cast<clang::CUDADeviceAttr*>(nullptr));
  if (!specDevice) return {};
  std::vector<UnmatchedDefinition> out;
  auto insertAt = [&](const clang::Attr* device) {
    clang::SourceLocation l = sm.getExpansionLoc(device->getLocation());
    if (l.isInvalid() || sm.isInSystemHeader(l)) return false;
    out.push_back({sm.getFileID(l), sm.getFileOffset(l), "__host__ "});
    return true;
  };
  for (const clang::NamedDecl* nd : fd->getDeclContext()->getRedeclContext()->lookup(fd->getDeclName())) {
    const auto* ftd = llvm::dyn_cast<clang::FunctionTemplateDecl>(nd);
    if (!ftd) continue;
    const clang::FunctionDecl* t = ftd->getTemplatedDecl();
    if (t->getNumParams() != fd->getNumParams()) continue;
    const auto* tHost = written(t, static_cast<clang::CUDAHostAttr*>(nullptr));
    const auto* tDevice = written(t, static_cast<clang::CUDADeviceAttr*>(nullptr));
    if (!tDevice || static_cast<bool>(tHost) == static_cast<bool>(specHost)) continue;
    if (!insertAt(tHost ? static_cast<const clang::Attr*>(specDevice) : tDevice)) return {};
  }
  return out;
}

}  // namespace gpuopt
