#include "analyzer/engine/parse_strategies.h"

#include <clang/Tooling/CompilationDatabase.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <fmt/format.h>
#include <string_view>

#include "analyzer/engine/compile_errors.h"
#include "analyzer/engine/parse.h"
#include "analyzer/report/output.h"

namespace gpuopt::engine {

namespace fs = std::filesystem;

namespace {
// The command with its language standard raised to C++20 (GNU dialect kept), if it names one
// below C++20.
std::optional<ParseCommand> asCxx20(ParseCommand pc) {
  bool changed = false;
  for (auto& a : pc.args)
    for (std::string_view dialect : {"-std=c++", "-std=gnu++"})
      if (a.rfind(dialect, 0) == 0) {
        std::string v = a.substr(dialect.size());
        if (v == "98" || v == "03" || v == "0x" || v == "11" || v == "1y" || v == "14" || v == "1z" || v == "17") {
          a = std::string(dialect) + "20";
          changed = true;
        }
      }
  if (!changed) return std::nullopt;
  return pc;
}
}  // namespace

ParsedFile parseWithStrategies(const std::string& file, const FileCommand& cmd, Parser& parser,
                               const AnalysisOptions& opts, const std::string& resourceDir,
                               const std::string& cudaPath, std::vector<std::string>& log) {
  ParsedFile out;
  ParseDependencies& deps = out.deps;
  deps.responseFiles = cmd.responseFiles;
  // An includer's command: the command stage again, for another file.
  auto commandFor = [&](const std::string& f, std::vector<std::string>& layout) {
    FileCommand c = commandForFile(f, opts.frontend, resourceDir, cudaPath, log);
    layout = std::move(c.layout);
    deps.responseFiles.insert(deps.responseFiles.end(), c.responseFiles.begin(), c.responseFiles.end());
    return std::move(c.pc);
  };
  const ParseCommand& pc = cmd.pc;
  const std::vector<std::string>& layout = cmd.layout;
  auto searched = [&](const ParseCommand& c) {
    for (auto& d : includeFolders(c.args, {"-I", "-iquote", "-idirafter", "-isystem"})) deps.searchFolders.push_back(std::move(d));
  };
  searched(pc);
  auto note = [&](const ParseResult& r) {
    deps.anyErrors = deps.anyErrors || r.rawErrors > 0;
    deps.filesRead.insert(deps.filesRead.end(), r.filesRead.begin(), r.filesRead.end());
    if (r.preamble) deps.preambleDeps.insert(deps.preambleDeps.end(), r.preamble->deps.begin(), r.preamble->deps.end());
  };

  ParseResult& best = out.best;
  best = parser.run(file, pc, layout);
  note(best);
  if (!best.crash.empty()) return out;  // Clang crashed: reported as such (reportParse), nothing else tried
  ParseCommand bestCmd = pc;  // the command of the parse kept so far
  // Host code calling what a __CUDA_ARCH__-dependent macro makes `__device__` (InfiniTAM's ORUtils):
  // read again below with the macro as both, which keeps the device-side view; a host-side parse
  // would instead reject the kernels calling them.
  auto hasArchMacros = [](const ParseResult& r) { return r.archDeviceMacros; };
  // (Errors of the preamble's headers came from its build, whose places this parse's AST does not
  // hold: a parse without it says whether such macros made them.)
  if (best.rawErrors && best.badTargetsUnread && best.preamble && !pc.bundledCuda) {
    parser.skipPreamble = true;
    ParseResult r = parser.run(file, pc, layout);
    parser.skipPreamble = false;
    note(r);
    if (r.crash.empty() && r.consumed && hasArchMacros(r)) best = std::move(r);
  }
  const bool archMacros = hasArchMacros(best);
  if (best.rawErrors && !pc.bundledCuda && !archMacros) {
    // Host code that calls host-only overloads (e.g. max(float, float) from the toolkit's host
    // math) does not compile device side: a host-side parse may do better.
    ParseResult h = parser.run(file, hostVariant(pc), layout);
    note(h);
    // Every device-side error inside a host-only function's body (a host helper calling a
    // device-only intrinsic through a macro that `__CUDA_ARCH__` picks: ccminer's ROTR32, seventh
    // stop check): nvcc's device pass does not compile host bodies, and its host pass sees the
    // host-side view, which the host-side parse checks. So the kernels keep the device-side view
    // (code under `__CUDA_ARCH__ >= 500` is what runs on sm_90), and the errors reported are the
    // host-side parse's.
    // (Every raw error at a place of one of those: errorTexts are "path:line:col: error: ...".)
    auto onlyHostBodies = [&]() {
      if (best.errors.empty() || best.errorTexts.size() != best.rawErrors) return false;
      std::set<std::pair<std::string, unsigned>> places;
      for (const CompileError& e : best.errors) {
        if (e.deviceCode || e.removedApi || e.nvccAccepts || e.templateKeyword || e.nvccWarning) return false;
        places.insert({fs::path(e.span.begin.file).filename().string(), e.span.begin.line});
      }
      for (const std::string& t : best.errorTexts) {
        const size_t c1 = t.find(':'), c2 = c1 == std::string::npos ? c1 : t.find(':', c1 + 1);
        if (c2 == std::string::npos) return false;
        unsigned line = 0;
        for (size_t i = c1 + 1; i < c2; ++i) {
          if (t[i] < '0' || t[i] > '9') return false;
          line = line * 10 + static_cast<unsigned>(t[i] - '0');
        }
        if (!places.count({fs::path(t.substr(0, c1)).filename().string(), line})) return false;
      }
      return true;
    };
    const bool onlyInHostBodies = onlyHostBodies();
    if (h.rawErrors < best.rawErrors && onlyInHostBodies && h.crash.empty()) {
      log.push_back(file + ": the device-side parse's " + std::to_string(best.rawErrors) + " errors (" +
                    best.errorTexts.front() + ") are all in host functions' bodies, which nvcc's device pass does "
                    "not compile; analysed device side, with the host-side parse's " + std::to_string(h.rawErrors) +
                    " errors");
      best.errors = h.errors;
      best.rawErrors = h.rawErrors;
      best.errorsInTarget = h.errorsInTarget;
      best.errorTexts = h.errorTexts;
    } else if (h.rawErrors < best.rawErrors) {
      bestCmd = hostVariant(pc);
      log.push_back(file + ": the device-side parse had " + std::to_string(best.rawErrors) + " errors (" +
                    best.errorTexts.front() + "); analysed with a host-side parse (" + std::to_string(h.rawErrors) +
                    " errors; code under __CUDA_ARCH__ is not seen)");
      keepDeviceCodeErrors(h, best);
      best = std::move(h);
    }
  }
  // `auto` parameters before C++20: GCC accepts them as an extension (with a warning) and so does
  // nvcc, in C++14 and C++17 alike; Clang does not. A parse as C++20, kept only when it has fewer
  // errors (flashinfer's headers, built with -std=c++17).
  if (best.rawErrors && std::any_of(best.errorTexts.begin(), best.errorTexts.end(), [](const std::string& t) {
        return t.find("'auto' not allowed in function prototype") != std::string::npos;
      })) {
    if (auto cxx20 = asCxx20(pc)) {
      ParseResult r = parser.run(file, *cxx20, layout);
      note(r);
      if (r.rawErrors < best.rawErrors) {
        log.push_back(fmt::format("{}: {} errors with `auto` parameters, which nvcc and GCC accept before C++20 as an "
                                  "extension; analysed with a C++20 parse ({} errors)",
                                  file, best.rawErrors, r.rawErrors));
        best = std::move(r);
        bestCmd = *cxx20;
      }
    }
  }
  // `C<T>::f<N>(x)` without `template`, which nvcc reads as a call of the member template f (the
  // class template's definition declares it one) and Clang as comparisons: the file read again
  // with the keyword inserted there (positions after it are reported where they are on disk).
  // Kept when it has fewer errors; the sites stay notes that say what was read.
  // A parse of the file read as nvcc reads it (a keyword or a declaration inserted) is kept with
  // fewer errors, or as many and more kernels analysed (Clang's recovery at such a place is no
  // error, but it keeps no instantiation of the function around it).
  auto readBetter = [&](const ParseResult& r) {
    return r.crash.empty() && r.consumed &&
           (r.rawErrors < best.rawErrors || (r.rawErrors == best.rawErrors && r.kernels > best.kernels) ||
            // as many errors and kernels, fewer places Clang could not read (the host code a
            // __CUDA_ARCH__-dependent macro broke: its launches are read again)
            (r.rawErrors == best.rawErrors && r.kernels == best.kernels && r.errors.size() < best.errors.size()));
  };
  auto keywordNote = [](const CompileError& e) { return e.templateKeyword; };
  std::map<std::string, std::vector<unsigned>> keywordsRead;  // where `best` was read with `template` inserted
  if (best.templateKeywordSites.empty() && best.preamble &&
      std::any_of(best.errors.begin(), best.errors.end(), keywordNote)) {
    // The notes came from the preamble's build (a header of the leading block): parse without it
    // to find where the keyword goes.
    parser.skipPreamble = true;
    ParseResult r = parser.run(file, bestCmd, layout);
    parser.skipPreamble = false;
    note(r);
    if (r.crash.empty() && r.consumed && !r.templateKeywordSites.empty()) best.templateKeywordSites = r.templateKeywordSites;
  }
  if (!best.templateKeywordSites.empty()) {
    std::map<std::string, std::vector<unsigned>> sites;
    for (const auto& [path, offset] : best.templateKeywordSites) sites[path].push_back(offset);
    for (auto& [path, offsets] : sites) {
      std::sort(offsets.begin(), offsets.end());
      offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    }
    parser.templateKeywords = sites;
    ParseResult r = parser.run(file, bestCmd, layout);
    parser.templateKeywords.clear();
    note(r);
    if (readBetter(r)) {
      log.push_back(fmt::format("{}: member templates called without `template` (`C<T>::f<N>(x)`) at {} places, "
                                "which nvcc accepts; analysed with the keyword read there as nvcc does ({} errors, {} "
                                "kernels before; {} errors, {} kernels after)",
                                file, [&] { size_t n = 0; for (const auto& [p, o] : sites) n += o.size(); return n; }(),
                                best.rawErrors, best.kernels, r.rawErrors, r.kernels));
      // The notes at those sites, from the parse that saw them (positions on disk), saying what
      // was read there (an "in included file" origin kept).
      for (const auto& e : best.errors)
        if (keywordNote(e)) {
          CompileError n = e;
          const size_t at = n.message.find(kNvccAcceptsMissingTemplateKeyword);
          n.message = (at == std::string::npos ? std::string() : n.message.substr(0, at)) + kNvccReadWithTemplateKeyword;
          r.errors.push_back(std::move(n));
        }
      best = std::move(r);
      keywordsRead = sites;
    }
  }
  // Out-of-line definitions of function templates with parameters no declaration has (cuSZ's
  // spline3.inl): nvcc and GCC read each as declaring another overload. The file read again with
  // that declaration inserted before each (on the definition's first line, so every line keeps
  // its number); kept when it has fewer errors, the places noted as read the way nvcc reads them.
  // (After a parse read with `template` inserted, the offsets are mapped back to the file on disk
  // and the keywords inserted again.)
  if (!best.declarationSites.empty()) {
    TextInsertions sites;
    for (const auto& [path, offset, text] : best.declarationSites) {
      unsigned onDisk = offset;
      if (auto it = keywordsRead.find(path); it != keywordsRead.end()) {
        unsigned before = 0;
        for (size_t i = 0; i < it->second.size(); ++i)
          if (it->second[i] + LintedFiles::kTemplateKeywordLength * i < offset) before = static_cast<unsigned>(i + 1);
        onDisk = offset - before * LintedFiles::kTemplateKeywordLength;
      }
      sites[path].push_back({onDisk, text});
    }
    for (auto& [path, v] : sites) {
      std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      v.erase(std::unique(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), v.end());
    }
    parser.declarations = sites;
    parser.templateKeywords = keywordsRead;
    parser.skipPreamble = archMacros && !best.preamble;  // (read as the parse that found the sites)
    ParseResult r = parser.run(file, bestCmd, layout);
    parser.skipPreamble = false;
    parser.declarations.clear();
    parser.templateKeywords.clear();
    note(r);
    if (readBetter(r)) {
      log.push_back(fmt::format("{}: {} places where nvcc reads a declaration Clang rejects (out-of-line template "
                                "definitions matching no declaration of their namespace, specializations differing "
                                "from their template in `__host__` only, macros `__device__` only under __CUDA_ARCH__); "
                                "analysed read as nvcc does ({} errors, {} "
                                "kernels before; {} errors, {} kernels after)",
                                file, best.declarationSites.size(), best.rawErrors, best.kernels, r.rawErrors, r.kernels));
      for (const auto& e : best.errors)
        if (e.templateKeyword && !keywordsRead.empty()) {
          r.errors.push_back(e);  // the notes of the keywords read again
        } else if (e.unmatchedDefinition || e.targetSpecialization || e.archDeviceMacro) {
          CompileError n = e;
          const char* accepts = e.unmatchedDefinition    ? kNvccAcceptsUnmatchedDefinition
                                : e.targetSpecialization ? kNvccAcceptsTargetSpecialization
                                                         : kNvccAcceptsArchDeviceMacro;
          const size_t at = n.message.find(accepts);
          n.message = (at == std::string::npos ? std::string() : n.message.substr(0, at)) +
                      (e.unmatchedDefinition    ? kNvccReadUnmatchedDefinition
                       : e.targetSpecialization ? kNvccReadTargetSpecialization
                                                : kNvccReadArchDeviceMacro);
          r.errors.push_back(std::move(n));
        }
      best = std::move(r);
    }
  }
  std::string& usedIncluder = out.usedIncluder;
  auto triedIncluder = [&](const std::string& inc, const ParseResult& r) {
    note(r);
    for (auto& src : commandSources(inc, opts.frontend.compileCommandsDir)) deps.commandFiles.push_back(std::move(src));
  };
  if (best.errorsInTarget > 0) {
    // A kernel file that only compiles inside the file that includes it: analyse it there.
    std::vector<std::string> dbFiles;  // entries of the database (if any) are candidates too
    if (std::string dir = findCompileCommandsDir(file, opts.frontend.compileCommandsDir); !dir.empty()) {
      std::string err;
      if (auto db = clang::tooling::CompilationDatabase::loadFromDirectory(dir, err)) dbFiles = db->getAllFiles();
    }
    for (const auto& inc : findIncluders(file, opts.otherInputs, dbFiles, 3, &deps.scan)) {
      std::vector<std::string> incLayout;
      ParseCommand ipc = commandFor(inc, incLayout);
      searched(ipc);
      ParseResult r = parser.run(inc, ipc, incLayout, file, file);
      triedIncluder(inc, r);
      if (r.rawErrors && !ipc.bundledCuda && r.errorsInTarget) {
        ParseResult h = parser.run(inc, hostVariant(ipc), incLayout, file, file);
        triedIncluder(inc, h);
        if (h.errorsInTarget < r.errorsInTarget) {
          keepDeviceCodeErrors(h, r);
          r = std::move(h);
        }
      }
      std::string shown = relativePath(inc, fs::current_path().string());
      log.push_back(fmt::format("{}: tried through {}, which includes it: {} errors in the file", file, shown,
                                r.errorsInTarget));
      if (r.errorsInTarget < best.errorsInTarget) {
        best = std::move(r);
        usedIncluder = shown;
      }
      if (best.errorsInTarget == 0) break;
    }
    if (!usedIncluder.empty()) log.push_back(file + ": does not compile alone; analysed as included by " + usedIncluder);
  } else if ((best.assumedKernels > 0 || best.uninstantiatedKernels > 0) && best.errorsInTarget == 0) {
    // Kernels with no launch in this file, or kernel templates nothing here instantiates (a
    // header of kernel templates linted alone): a file that includes it (main.cu's `#include
    // "kernel.cu"`, the unit that instantiates the header's templates) may launch them, and its
    // parse gives their block shapes and template arguments.
    for (const auto& inc : findIncluders(file, opts.otherInputs, {}, 3, &deps.scan)) {
      std::vector<std::string> incLayout;
      ParseCommand ipc = commandFor(inc, incLayout);
      searched(ipc);
      ParseResult r = parser.run(inc, ipc, incLayout, file, file);
      triedIncluder(inc, r);
      std::string shown = relativePath(inc, fs::current_path().string());
      const bool launches = r.assumedKernels < best.assumedKernels;
      const bool instantiates = r.uninstantiatedKernels < best.uninstantiatedKernels;
      if (r.consumed && r.errorsInTarget == 0 && r.kernels >= best.kernels && r.assumedKernels <= best.assumedKernels &&
          (launches || (instantiates && r.kernels > best.kernels))) {
        if (launches)
          log.push_back(fmt::format("{}: {} of its kernels have no launch here; analysed as included by {}, which "
                                    "launches {}", file, best.assumedKernels, shown,
                                    best.assumedKernels - r.assumedKernels));
        else
          log.push_back(fmt::format("{}: {} of its kernel templates are instantiated nowhere here; analysed as "
                                    "included by {}, which instantiates {}", file, best.uninstantiatedKernels, shown,
                                    best.uninstantiatedKernels - r.uninstantiatedKernels));
        best = std::move(r);
        usedIncluder = shown;
        break;
      }
    }
  }
  // nvcc's host pass: an `#error` it reaches where the device-side parse did not (`#if
  // __CUDA_ARCH__ < 350`, true where __CUDA_ARCH__ is not defined).
  std::set<unsigned> lines;
  for (const auto& e : best.errors)
    if (e.span.begin.file == file) lines.insert(e.span.begin.line);
  for (auto& e : hostPassErrors(parser, file, pc)) {
    if (!lines.insert(e.span.begin.line).second) continue;
    log.push_back(fmt::format("{}:{}: an #error nvcc's host pass reaches", file, e.span.begin.line));
    best.errors.push_back(std::move(e));
    ++best.rawErrors;
    ++best.errorsInTarget;
    best.errorTexts.push_back(best.errors.back().span.begin.file + ":" + std::to_string(best.errors.back().span.begin.line) +
                              ": error: " + best.errors.back().message);
  }
  return out;
}

}  // namespace gpuopt::engine
