#include "analyzer/engine/parse_command.h"

#include <clang/Options/Options.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <llvm/Option/ArgList.h>

#include <filesystem>
#include <fmt/format.h>
#include <mutex>

#include "analyzer/frontend/nvcc_args.h"

namespace gpuopt {
namespace fs = std::filesystem;

namespace {
struct DbLookup {
  std::vector<std::string> args;
  bool found = false;
  TranslatedCommand translated;  // analyzer/frontend/nvcc_args.h: origins, response files, host compiler
  std::string entry;             // "the compile_commands.json entry for F in DIR/compile_commands.json"
};

void logTranslation(const TranslatedCommand& t, std::vector<std::string>& log) {
  for (const auto& k : t.kept) {
    std::string a;
    for (const auto& x : k.args) a += (a.empty() ? "" : " ") + x;
    log.push_back("  kept " + a + " from " + k.origin());
  }
  for (const auto& d : t.dropped) log.push_back("  dropped (not for Clang): " + d);
  for (const auto& p : t.problems) log.push_back("  " + p);
}

DbLookup compileDbArgs(const std::string& file, const FrontendOptions& fo, std::vector<std::string>& log) {
  DbLookup r;
  std::string dir = findCompileCommandsDir(file, fo.compileCommandsDir);
  if (dir.empty()) return r;
  std::string err;
  auto db = clang::tooling::CompilationDatabase::loadFromDirectory(dir, err);
  if (!db) {
    log.push_back("compile_commands.json in " + dir + " could not be read: " + err);
    return r;
  }
  std::error_code ec;
  auto abs = fs::absolute(file, ec).lexically_normal().string();
  auto cmds = db->getCompileCommands(abs);
  if (!cmds.empty() && !cmds.front().Heuristic.empty()) cmds.clear();  // inferred from another file: not used
  if (cmds.empty()) {
    log.push_back("compile_commands.json in " + dir + " has no entry for " + file + "; using defaults");
    return r;
  }
  // nvcc's spellings and response files (CMake's --options-file includes_CUDA.rsp).
  r.translated = translateCompileCommand(cmds.front().CommandLine, cmds.front().Directory);
  r.args = r.translated.args();
  r.found = true;
  r.entry = "the compile_commands.json entry for " + file + " in " +
            (fs::path(dir) / "compile_commands.json").lexically_normal().string();
  log.push_back("compile_commands.json: " + dir + " (kept " + std::to_string(r.args.size()) + " arguments)");
  logTranslation(r.translated, log);
  return r;
}
}  // namespace

bool clangKnowsOption(const std::string& arg) {
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  const llvm::opt::OptTable& table = clang::getDriverOptTable();
  const char* argv[] = {arg.c_str()};
  unsigned missingIndex = 0, missingCount = 0;
  llvm::opt::InputArgList args = table.ParseArgs(argv, missingIndex, missingCount,
                                                 llvm::opt::Visibility(clang::options::ClangOption));
  for (const llvm::opt::Arg* a : args)
    if (a->getOption().getKind() == llvm::opt::Option::UnknownClass || a->getOption().getID() == clang::options::OPT_UNKNOWN)
      return false;
  return missingCount == 0 && args.size() > 0;
}

FileCommand commandForFile(const std::string& f, const FrontendOptions& fo, const std::string& resourceDir,
                           const std::string& cudaPath, std::vector<std::string>& log) {
  FileCommand c;
  DbLookup db = compileDbArgs(f, fo, log);
  std::string hostCompiler = db.translated.hostCompiler;
  if (db.found) {
    c.pc.flagsSource = db.entry;
    c.pc.fromDatabase = true;
    c.pc.includeOrigins = db.translated.includeOrigins();
    for (const auto& p : db.translated.problems) c.pc.includeOrigins.push_back(p);
    c.responseFiles = db.translated.responseFiles;
  } else {
    // Built with make: its -I and -D flags are what a compilation database would have said.
    std::string mk;
    auto flags = makefileFlags(f, &mk);
    if (!flags.empty()) {
      std::string list;
      for (const auto& x : flags) list += " " + x;
      log.push_back(fmt::format("{}: flags from {}:{}", f, mk, list));
      db.args.insert(db.args.end(), flags.begin(), flags.end());
      c.pc.flagsSource = "the Makefile " + mk;
      for (const auto& x : flags)
        if (x.rfind("-I", 0) == 0) c.pc.includeOrigins.push_back(x);
    }
  }
  // The flags after `--`, as nvcc reads them (make's nvcc command pasted after `--`: -ccbin,
  // -Xcompiler, -I=dir); an option nvcc does not know and Clang does is Clang's.
  FrontendOptions o = fo;
  if (!fo.extraArgs.empty()) {
    std::vector<std::string> argv = {"nvcc"};
    argv.insert(argv.end(), fo.extraArgs.begin(), fo.extraArgs.end());
    std::error_code ec;
    TranslatedCommand t = translateCompileCommand(argv, fs::current_path(ec).string(), {}, clangKnowsOption);
    o.extraArgs = t.args();
    if (!t.hostCompiler.empty()) hostCompiler = t.hostCompiler;
    for (const auto& x : t.includeOrigins()) c.pc.includeOrigins.push_back(x + " (after '--')");
    log.push_back(f + ": the flags after '--':");
    logTranslation(t, log);
  }
  // The project-layout folders (the file's own, include/, common/, the repository root) stand in
  // for flags nobody gave: with a database entry, a Makefile's flags or flags after `--`, the
  // search path is the build's, as nvcc's is (an angle-bracket include of a header in the file's own
  // folder is then not found, as by nvcc: HeCBench interval's <boost/...>).
  const bool flagsGiven = db.found || !c.pc.flagsSource.empty() || !fo.extraArgs.empty();
  c.layout = flagsGiven ? std::vector<std::string>{} : projectLayoutIncludeDirs(f);
  c.pc = [&] {
    ParseCommand pc = buildParseCommand(f, o, resourceDir, cudaPath, db.args, c.layout);
    pc.flagsSource = c.pc.flagsSource;
    pc.fromDatabase = c.pc.fromDatabase;
    pc.includeOrigins = c.pc.includeOrigins;
    return pc;
  }();
  // nvcc's front end searches its host compiler's own include folder after the system folders:
  // GCC's omp.h, quadmath.h and openacc.h are found there whatever the flags.
  if (std::string dir = hostCompilerIncludeDir(hostCompiler); !dir.empty()) {
    c.pc.args.insert(c.pc.args.end() - 1, {"-idirafter", dir});
  }
  if (fo.verbose) {
    std::string cmd;
    for (const auto& a : c.pc.args) cmd += (cmd.empty() ? "" : " ") + a;
    log.push_back("parse: " + cmd);
  }
  return c;
}

}  // namespace gpuopt
