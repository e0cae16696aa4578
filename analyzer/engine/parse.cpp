#include "analyzer/engine/parse.h"

#include <clang/Frontend/CompilerInstance.h>
#include <clang/Basic/DiagnosticLex.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <clang/Tooling/Tooling.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <fmt/format.h>
#include <functional>
#include <limits>
#include <optional>
#include <set>

#include "analyzer/engine/compile_errors.h"
#include "analyzer/engine/lint_consumer.h"
#include "analyzer/frontend/crash_guard.h"
#include "analyzer/frontend/nvcc_lexing.h"
#include "analyzer/frontend/preamble.h"
#include "analyzer/rule/rule_context.h"

namespace gpuopt::engine {

namespace fs = std::filesystem;

namespace {
// A file with a launch written `<< <` (which nvcc accepts) is read with the chevrons joined; the
// text keeps its length, so every location stays where it was. Likewise `extern "C"__global__`
// (splitReservedLiteralSuffixes: the literal moves one column left).
class PatchedFile : public llvm::vfs::File {
 public:
  PatchedFile(llvm::vfs::Status st, std::string text)
      : st_(llvm::vfs::Status::copyWithNewSize(st, text.size())), text_(std::move(text)) {}
  llvm::ErrorOr<llvm::vfs::Status> status() override { return st_; }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> getBuffer(const llvm::Twine& name, int64_t, bool, bool) override {
    return llvm::MemoryBuffer::getMemBufferCopy(text_, name.str());
  }
  std::error_code close() override { return {}; }

 private:
  llvm::vfs::Status st_;
  std::string text_;
};

class LaunchChevronFS : public llvm::vfs::ProxyFileSystem {
 public:
  LaunchChevronFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs, std::vector<std::string> skip,
                  std::map<std::string, std::vector<unsigned>> keywords = {}, TextInsertions declarations = {})
      : ProxyFileSystem(std::move(fs)), skip_(std::move(skip)), keywords_(std::move(keywords)),
        declarations_(std::move(declarations)) {}
  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>> openFileForRead(const llvm::Twine& path) override {
    auto f = ProxyFileSystem::openFileForRead(path);
    std::string p = path.str();
    if (!f || p.rfind("/usr/", 0) == 0) return f;
    for (const auto& s : skip_)
      if (!s.empty() && p.rfind(s, 0) == 0) return f;
    auto st = (*f)->status();
    auto buf = (*f)->getBuffer(path);
    if (!st || !buf) return ProxyFileSystem::openFileForRead(path);
    std::string text = (*buf)->getBuffer().str();
    bool changed = text.find("<<") != std::string::npos && normalizeLaunchChevrons(text);
    changed = splitReservedLiteralSuffixes(text) || changed;  // `extern "C"__global__` (nvcc_lexing.h)
    changed = pragmaMacrosAsOperators(text) || changed;       // `#define UNROLL #pragma unroll`
    changed = commaSeparateAsmOperands(text) || changed;      // `: "r"(a) "r"(b))`
    // The member templates nvcc reads without `template` (the offsets are those of the text as
    // patched above, which keeps every length).
    // The declarations of unmatched template definitions too (Parser::declarations).
    if (!keywords_.empty() || !declarations_.empty()) {
      auto inserts = insertionsFor(canonicalPath(p), keywords_, declarations_);
      if (!inserts.empty()) {
        text = insertTexts(text, inserts);
        changed = true;
      }
    }
    if (!changed) return ProxyFileSystem::openFileForRead(path);
    return std::unique_ptr<llvm::vfs::File>(new PatchedFile(*st, std::move(text)));
  }

 private:
  std::vector<std::string> skip_;
  std::map<std::string, std::vector<unsigned>> keywords_;
  TextInsertions declarations_;
};

// Every #include and the file it resolved to (ErrorCollector::includes).
class IncludeLog : public clang::PPCallbacks {
 public:
  explicit IncludeLog(ErrorCollector& errs) : errs_(errs) {}
  void InclusionDirective(clang::SourceLocation hash, const clang::Token&, llvm::StringRef, bool, clang::CharSourceRange,
                          clang::OptionalFileEntryRef file, llvm::StringRef, llvm::StringRef, const clang::Module*, bool,
                          clang::SrcMgr::CharacteristicKind) override {
    if (file) errs_.includes.emplace_back(hash, std::string(file->getFileEntry().tryGetRealPathName()));
  }

 private:
  ErrorCollector& errs_;
};

// The groups of #if/#ifdef the preprocessor skipped (ErrorCollector::skippedRanges).
class SkippedLog : public clang::PPCallbacks {
 public:
  explicit SkippedLog(ErrorCollector& errs) : errs_(errs) {}
  void SourceRangeSkipped(clang::SourceRange range, clang::SourceLocation) override { errs_.skippedRanges.push_back(range); }

 private:
  ErrorCollector& errs_;
};

// --verbose: includes resolved through the project-layout fallback folders.
class LayoutLog : public clang::PPCallbacks {
 public:
  LayoutLog(const std::vector<std::string>& dirs, std::vector<std::string>& log) : dirs_(dirs), log_(log) {}
  void InclusionDirective(clang::SourceLocation, const clang::Token&, llvm::StringRef name, bool,
                          clang::CharSourceRange, clang::OptionalFileEntryRef file, llvm::StringRef searchPath,
                          llvm::StringRef, const clang::Module*, bool, clang::SrcMgr::CharacteristicKind) override {
    if (!file) return;
    std::string sp = fs::path(searchPath.str()).lexically_normal().string();
    for (size_t i = 1; i < dirs_.size(); ++i)  // dirs_[0] is the file's own folder
      if (sp == dirs_[i]) {
        log_.push_back(fmt::format("#include \"{}\" found in the project-layout folder {}", name.str(), sp));
        return;
      }
  }

 private:
  const std::vector<std::string>& dirs_;
  std::vector<std::string>& log_;
};

class LintAction : public clang::ASTFrontendAction {
 public:
  LintAction(ParseResult& out, const AnalysisOptions& opts, const std::vector<std::unique_ptr<Rule>>& rules,
             const LintedFiles::Settings& files, ErrorCollector& errs, const std::vector<std::string>& layoutDirs)
      : out_(out), opts_(opts), rules_(rules), files_(files), errs_(errs), layoutDirs_(layoutDirs) {}
  bool BeginSourceFileAction(clang::CompilerInstance& ci) override {
    // A missing #include is fatal to Clang (nothing after it would be checked): make it a plain
    // error so the rest of the file is parsed and analysed.
    ci.getDiagnostics().setFatalsAsError(true);
    ci.getPreprocessor().addPPCallbacks(std::make_unique<IncludeLog>(errs_));
    ci.getPreprocessor().addPPCallbacks(std::make_unique<SkippedLog>(errs_));
    if (!layoutDirs_.empty())
      ci.getPreprocessor().addPPCallbacks(std::make_unique<LayoutLog>(layoutDirs_, out_.log));
    return true;
  }
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&, llvm::StringRef) override {
    return makeLintConsumer(out_, opts_, rules_, files_, start_, errs_);
  }
  // The files the parse read (what a stored result depends on): every file entered, not the
  // in-memory ones (bundled headers, the preamble's header).
  void EndSourceFileAction() override {
    const auto& sm = getCompilerInstance().getSourceManager();
    for (unsigned i = 0; i < sm.local_sloc_entry_size(); ++i) {
      const auto& e = sm.getLocalSLocEntry(i);
      if (!e.isFile()) continue;
      auto entry = e.getFile().getContentCache().OrigEntry;
      if (!entry) continue;
      std::string name = std::string(entry->getName());
      if (name.rfind(std::string(kBundledIncludeDir), 0) == 0 || name.rfind("/gpuopt-lint-preamble/", 0) == 0) continue;
      out_.filesRead.emplace_back(std::move(name), clang::SrcMgr::isSystem(e.getFile().getFileCharacteristic()));
    }
  }

 private:
  ParseResult& out_;
  const AnalysisOptions& opts_;
  const std::vector<std::unique_ptr<Rule>>& rules_;
  LintedFiles::Settings files_;
  ErrorCollector& errs_;
  const std::vector<std::string>& layoutDirs_;
  Clock::time_point start_ = Clock::now();
};



// Runs the LintAction, with the precompiled preamble when there is one: the forced includes the
// preamble holds are dropped from the command and the PCH is loaded instead.
class LintActionFactory : public clang::tooling::FrontendActionFactory {
 public:
  LintActionFactory(std::function<std::unique_ptr<clang::FrontendAction>()> make, const Preamble* pre)
      : make_(std::move(make)), pre_(pre) {}
  bool runInvocation(std::shared_ptr<clang::CompilerInvocation> inv, clang::FileManager* files,
                     std::shared_ptr<clang::PCHContainerOperations> ops, clang::DiagnosticConsumer* dc) override {
    if (pre_) {
      auto& pp = inv->getPreprocessorOpts();
      pp.Includes.clear();
      pp.ImplicitPCHInclude = pre_->pchPath;
      // A project header whose time changed but whose bytes did not (the manifest's content
      // stamps already said so) is checked by content, not refused.
      inv->getHeaderSearchOpts().ValidateASTInputFilesContent = true;
    }
    return clang::tooling::FrontendActionFactory::runInvocation(std::move(inv), files, std::move(ops), dc);
  }
  std::unique_ptr<clang::FrontendAction> create() override { return make_(); }

 private:
  std::function<std::unique_ptr<clang::FrontendAction>()> make_;
  const Preamble* pre_;
};


}  // namespace

std::string canonicalPath(const std::string& p) {
  std::error_code ec;
  return fs::weakly_canonical(fs::absolute(p, ec), ec).string();
}

std::vector<std::string> excludedPrefixes(const std::string& resourceDir, const std::string& cudaPath) {
  std::vector<std::string> v = {std::string(kBundledIncludeDir)};
  for (const auto& p : {resourceDir, cudaPath})
    if (!p.empty()) {
      v.push_back(fs::absolute(p).lexically_normal().string());
      v.push_back(canonicalPath(p));
    }
  return v;
}

// The file system of a parse: the real one (with `<< <` launches joined), the bundled headers
// in memory, and `extraPath` (the preamble's header) when given.
void Parser::finishBackground(std::vector<std::string>& log) {
  for (auto& t : background)
    if (t.joinable()) t.join();
  background.clear();
  log.insert(log.end(), backgroundLog.begin(), backgroundLog.end());
  backgroundLog.clear();
  if (backgroundBuilt) preambleBuilt = true;
}

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> Parser::fileSystem(const std::string& extraPath,
                                                                   const std::string& extraText) {
  return parseFileSystem(opts, resourceDir, cudaPath, shadowedWrapperIncludes, extraPath, extraText, &templateKeywords,
                         &declarations);
}

std::vector<std::pair<unsigned, std::string>> insertionsFor(const std::string& path,
                                                            const std::map<std::string, std::vector<unsigned>>& keywords,
                                                            const TextInsertions& declarations) {
  std::vector<std::pair<unsigned, std::string>> out;
  if (auto it = keywords.find(path); it != keywords.end())
    for (unsigned off : it->second) out.push_back({off, "template "});
  if (auto it = declarations.find(path); it != declarations.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::string insertTexts(const std::string& text, const std::vector<std::pair<unsigned, std::string>>& inserts,
                        std::vector<std::array<unsigned, 3>>* at) {
  std::string out;
  out.reserve(text.size() + inserts.size() * 16);
  size_t from = 0;
  for (const auto& [off, piece] : inserts) {
    if (off < from || off > text.size()) continue;
    out.append(text, from, off - from);
    if (at) {
      const size_t nl = out.rfind('\n');
      const unsigned line = 1 + static_cast<unsigned>(std::count(out.begin(), out.end(), '\n'));
      const unsigned col = static_cast<unsigned>(out.size() - (nl == std::string::npos ? 0 : nl + 1)) + 1;
      at->push_back({line, col, static_cast<unsigned>(piece.size())});
    }
    out += piece;
    from = off;
  }
  out.append(text, from, std::string::npos);
  return out;
}

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> parseFileSystem(const AnalysisOptions& opts, const std::string& resourceDir,
                                                                const std::string& cudaPath,
                                                                const std::vector<std::string>& shadowedWrapperIncludes,
                                                                const std::string& extraPath, const std::string& extraText,
                                                                const std::map<std::string, std::vector<unsigned>>* templateKeywords,
                                                                const TextInsertions* declarations) {
  // Unsaved editor buffers (the language server) replace the files on disk, under the launch
  // chevron normalisation like any file.
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> real = llvm::vfs::getRealFileSystem();
  if (!opts.overlays.empty()) {
    auto buffers = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    for (const auto& [path, text] : opts.overlays)
      buffers->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(text, path));
    auto withBuffers = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(real);
    withBuffers->pushOverlay(buffers);
    real = withBuffers;
  }
  auto base = llvm::makeIntrusiveRefCnt<LaunchChevronFS>(real, excludedPrefixes(resourceDir, cudaPath),
                                                         templateKeywords ? *templateKeywords : std::map<std::string, std::vector<unsigned>>{},
                                                         declarations ? *declarations : TextInsertions{});
  auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(base);
  // The bundled headers (and the nvcc-compatibility header) live in memory.
  auto mem = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  for (const auto& [path, text] : bundledCudaHeaders())
    mem->addFile(std::string(kBundledIncludeDir) + "/" + std::string(path), 0, llvm::MemoryBuffer::getMemBuffer(text));
  if (!extraPath.empty()) mem->addFile(extraPath, 0, llvm::MemoryBuffer::getMemBufferCopy(extraText));
  // Clang's CUDA wrapper (in the resource folder) includes toolkit headers by quoted names, which
  // search the command's -I folders before the toolkit's: a project's own `cuda.h` (darknet's
  // src/cuda.h, which nvcc's headers never include) would replace the toolkit's. A header of that
  // name beside the wrapper is found first; it includes the toolkit's.
  for (const auto& name : shadowedWrapperIncludes) {
    std::string text = "#include \"" + (fs::path(cudaPath) / "include" / name).string() + "\"\n";
    mem->addFile((fs::path(resourceDir) / "include" / name).string(), 0, llvm::MemoryBuffer::getMemBufferCopy(text));
  }
  overlay->pushOverlay(mem);
  return overlay;
}

std::vector<std::string> includeFolders(const std::vector<std::string>& args,
                                        std::initializer_list<std::string_view> flags) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i)
    for (std::string_view f : flags) {
      std::string_view a = args[i];
      if (a == f && i + 1 < args.size()) out.push_back(args[i + 1]);
      else if (a.size() > f.size() && a.substr(0, f.size()) == f && (f == "-I" || a[f.size()] == '='))
        out.push_back(std::string(a.substr(f.size() + (f == "-I" ? 0 : 1))));
    }
  return out;
}

namespace {
std::vector<std::string> shadowedByProjectFolders(const std::vector<std::string>& args, const std::string& cudaPath) {
  static const char* const kWrapperIncludes[] = {
      "cuda.h", "cuda_runtime.h", "host_config.h", "host_defines.h", "driver_types.h", "device_functions.hpp",
      "math_functions.hpp", "device_double_functions.h", "device_atomic_functions.h", "device_atomic_functions.hpp",
      "sm_20_atomic_functions.hpp", "sm_20_intrinsics.hpp", "sm_32_atomic_functions.hpp", "sm_60_atomic_functions.hpp",
      "sm_61_intrinsics.hpp", "texture_fetch_functions.h", "texture_indirect_functions.h",
      "surface_indirect_functions.h", "curand_mtgp32_kernel.h", "math_functions_dbl_ptx3.hpp"};
  std::vector<std::string> out;
  if (cudaPath.empty()) return out;
  std::error_code ec;
  const std::string toolkit = fs::weakly_canonical(cudaPath, ec).string();
  const std::vector<std::string> dirs = includeFolders(args, {"-I", "-iquote"});
  for (const char* name : kWrapperIncludes)
    for (const auto& d : dirs) {
      fs::path p = fs::path(d) / name;
      if (!fs::exists(p, ec)) continue;
      std::string real = fs::weakly_canonical(p, ec).string();
      if (!toolkit.empty() && real.rfind(toolkit, 0) == 0) continue;  // the toolkit's own (-I/usr/local/cuda/include)
      out.push_back(name);
      break;
    }
  return out;
}
}  // namespace

// One parse of `file` (the translation unit), linting either it and its project includes or,
// with `target`, only that file.
ParseResult Parser::run(const std::string& file, const ParseCommand& cmd, const std::vector<std::string>& layoutDirs,
                        const std::string& target, const std::string& targetName) {
  shadowedWrapperIncludes = cmd.bundledCuda ? std::vector<std::string>{} : shadowedByProjectFolders(cmd.args, cudaPath);
  std::optional<Preamble> pre;
  std::vector<std::string> preLog;
  // Not with unsaved editor buffers: the file on disk is not what is parsed.
  // Nor when the strategies ask for a parse without one (skipPreamble).
  if (!cmd.bundledCuda && !opts.cache.dir.empty() && opts.cache.preamble && opts.overlays.empty() && !skipPreamble) {
    // The build may run on another thread after this call: its file system is made from copies.
    const std::string res = resourceDir, cuda = cudaPath;
    const std::vector<std::string> shadowed = shadowedWrapperIncludes;
    const AnalysisOptions* o = &opts;
    MakeParseFS makeFS = [o, res, cuda, shadowed](const std::string& p, const std::string& t) {
      return parseFileSystem(*o, res, cuda, shadowed, p, t);
    };
    DeferBuild defer;
    if (opts.cache.backgroundPreamble)
      defer = [this](std::function<bool(std::vector<std::string>*)> task) {
        background.emplace_back([this, task = std::move(task)] {
          std::vector<std::string> log;
          bool built = task(&log);
          std::lock_guard<std::mutex> g(backgroundMutex);
          backgroundLog.insert(backgroundLog.end(), log.begin(), log.end());
          backgroundBuilt = backgroundBuilt || built;
        });
      };
    pre = getPreamble(opts.cache.dir, cmd.args, layoutDirs, file, makeFS, &preLog, mayBuildPreamble, &defer);
    if (pre && pre->built) preambleBuilt = true;
    // `template` inserted into a file the preamble holds as on disk (a header of the leading block):
    // not with this preamble.
    if (pre && (!templateKeywords.empty() || !declarations.empty()))
      for (const FileStamp& d : pre->deps)
        if (templateKeywords.count(canonicalPath(d.path)) || declarations.count(canonicalPath(d.path))) {
          preLog.push_back(file + ": the preamble holds " + d.path + " as on disk, read here with `template` inserted: not used");
          pre.reset();
          break;
        }
  }
  ParseResult res = runOnce(file, cmd, layoutDirs, target, targetName, pre ? &*pre : nullptr);
  if (pre && !res.consumed && res.crash.empty()) {
    // The PCH could not be loaded (changed under us, or rejected): parse without it.
    preLog.push_back(file + ": the preamble " + pre->pchPath + " could not be used; parsed without it");
    pre.reset();
    res = runOnce(file, cmd, layoutDirs, target, targetName, nullptr);
  }
  if (pre)
    preLog.push_back(fmt::format("{}: parsed with the preamble {} ({} leading includes)", file, pre->pchPath, pre->includes));
  res.log.insert(res.log.begin(), preLog.begin(), preLog.end());
  res.preamble = std::move(pre);
  return res;
}

ParseResult Parser::runOnce(const std::string& file, const ParseCommand& cmd,
                            const std::vector<std::string>& layoutDirs, const std::string& target, const std::string& targetName, const Preamble* pre) {
  ParseResult res;
  res.ran = true;
  auto overlay = pre ? fileSystem(pre->headerPath, pre->headerText) : fileSystem();
  LintedFiles::Settings fs;
  fs.mainName = file;
  fs.targetPath = target.empty() ? std::string() : canonicalPath(target);
  fs.targetName = targetName;
  std::string root = repositoryRoot(file);
  fs.projectRoot = !root.empty() ? root : fs::absolute(file).lexically_normal().parent_path().parent_path().string();
  fs.excluded = excludedPrefixes(resourceDir, cudaPath);
  fs.projectDirs = layoutDirs;
  fs.headerFilter = opts.headerFilter;
  // Where `template ` was inserted: positions after it on its line are reported where they are on disk.
  std::set<std::string> inserted;
  for (const auto& [path, offsets] : templateKeywords) inserted.insert(path);
  for (const auto& [path, texts] : declarations) inserted.insert(path);
  for (const auto& path : inserted) {
    auto buf = llvm::MemoryBuffer::getFile(path);
    if (!buf) continue;
    std::vector<std::array<unsigned, 3>> at;
    std::string text = (*buf)->getBuffer().str();
    insertTexts(text, insertionsFor(path, templateKeywords, declarations), &at);
    fs.insertedColumns[path] = std::move(at);
  }
  auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions(), overlay);
  ErrorCollector errs;
  LintActionFactory factory([&] { return std::make_unique<LintAction>(res, opts, rules, fs, errs, layoutDirs); }, pre);
  clang::tooling::ToolInvocation inv(cmd.args, &factory, files.get(), std::make_shared<clang::PCHContainerOperations>());
  inv.setDiagnosticConsumer(&errs);
  bool ok = false;
  if (auto crash = runCrashIsolated([&] { ok = inv.run(); })) {
    // Worse than any parse that ran (fewest errors wins), so never kept over one.
    ParseResult crashed;
    crashed.ran = true;
    crashed.rawErrors = crashed.errorsInTarget = std::numeric_limits<size_t>::max();
    crashed.crash = *crash;
    return crashed;
  }
  // A header that is not found: where it was searched (the database entry and the flags that
  // gave the folders, or the Makefile), analyzer/engine/compile_errors.cpp.
  for (auto& e : res.errors)
    if (isMissingHeader(e.message))
      e.message += missingHeaderHint({cmd.flagsSource, cmd.fromDatabase, cmd.includeOrigins});
  if (!ok && errs.errors.empty() && errs.dropped == 0 && res.rawErrors == 0) {
    res.rawErrors = 1;  // the driver rejected the command
    res.errorTexts.push_back("error: the compiler driver rejected the command; try --verbose");
  }
  return res;
}

ParseCommand hostVariant(ParseCommand pc) {
  std::replace(pc.args.begin(), pc.args.end(), std::string("--cuda-device-only"), std::string("--cuda-host-only"));
  return pc;
}

std::vector<CompileError> hostPassErrors(Parser& parser, const std::string& file, const ParseCommand& cmd) {
  std::vector<CompileError> out;
  if (cmd.bundledCuda) return out;  // the bundled declarations parse the host side already
  auto fsys = parser.fileSystem();  // the text the parse reads (unsaved editor buffers included)
  {
    auto buf = fsys->getBufferForFile(file);
    if (!buf) return out;
    llvm::StringRef text = (*buf)->getBuffer();
    static const std::regex directive(R"((^|\n)[ \t]*#[ \t]*error\b)");
    if (!text.contains("__CUDA_ARCH__") || !std::regex_search(text.begin(), text.end(), directive)) return out;
  }
  struct HashErrors : clang::DiagnosticConsumer {
    std::vector<std::pair<unsigned, unsigned>> at;  // line, column in the main file
    std::vector<std::string> messages;
    void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
      clang::DiagnosticConsumer::HandleDiagnostic(level, info);
      if (info.getID() != clang::diag::err_pp_hash_error || !info.hasSourceManager()) return;
      auto& sm = info.getSourceManager();
      auto loc = sm.getExpansionLoc(info.getLocation());
      if (!sm.isInMainFile(loc)) return;
      llvm::SmallString<128> msg;
      info.FormatDiagnostic(msg);
      at.emplace_back(sm.getExpansionLineNumber(loc), sm.getExpansionColumnNumber(loc));
      messages.emplace_back(msg.str());
    }
  } errs;
  ParseCommand host = hostVariant(cmd);
  auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions(), fsys);
  clang::tooling::ToolInvocation inv(host.args, std::make_unique<clang::PreprocessOnlyAction>(), files.get(),
                                     std::make_shared<clang::PCHContainerOperations>());
  inv.setDiagnosticConsumer(&errs);
  if (runCrashIsolated([&] { inv.run(); })) return out;
  for (size_t i = 0; i < errs.at.size(); ++i) {
    CompileError e;
    e.span.begin.file = file;
    e.span.begin.line = e.span.endLine = errs.at[i].first;
    e.span.begin.col = e.span.endCol = errs.at[i].second;
    e.message = "#error " + errs.messages[i] + " (in nvcc's host pass, which compiles the file again without __CUDA_ARCH__ defined)";
    out.push_back(std::move(e));
  }
  return out;
}

void keepDeviceCodeErrors(ParseResult& host, const ParseResult& device) {
  std::set<std::pair<std::string, unsigned>> lines;
  for (const auto& e : host.errors) lines.insert({e.span.begin.file, e.span.begin.line});
  for (const auto& e : device.errors) {
    if (!e.deviceCode || e.removedApi || !lines.insert({e.span.begin.file, e.span.begin.line}).second) continue;
    host.errors.push_back(e);
    ++host.rawErrors;
    if (e.inTarget && !e.nvccWarning && !e.nvccAccepts) ++host.errorsInTarget;
  }
}

}  // namespace gpuopt::engine
