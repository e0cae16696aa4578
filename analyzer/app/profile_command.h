// `gpuopt-lint profile [options] [FILE...] -- COMMAND [ARGS...]` (or `--import DIR`): the driver's
// side of analyzer/profile/profile.*: options, measuring or importing, the files to lint, the join, and
// --try-fixes. The lint itself stays in the driver (tools/gpuopt_lint.cpp).
#pragma once
#include <array>
#include <map>
#include <string>
#include <vector>

#include "analyzer/app/cli.h"
#include "analyzer/report/output.h"
#include "analyzer/profile/profile.h"

namespace gpuopt::profile {

struct Command {
  std::string importPath;            // --import DIR|CSV: join an existing export, run nothing
  std::vector<std::string> command;  // after --
  std::string ncu;                   // --ncu PATH
  std::string kernelFilter;          // -k / --kernel REGEX (ncu's -k)
  unsigned launchCount = 20;         // -c / --launch-count N
  std::string outDir;                // --out DIR: keep the report and CSVs there
  bool tryFixes = false;             // --try-fixes
  std::string build;                 // --build "CMD"
  unsigned runs = 5;                 // --runs N: timed runs per variant for --try-fixes
  Profile profile;                   // filled by measure()
  std::string workDir;               // temporary folder (removed at the end unless --out)
};

std::string profileUsage();
// Splits `gpuopt-lint profile ...`: profile options and lint options before `--`, COMMAND after.
bool parseProfileCommandLine(int argc, char** argv, CliOptions& o, Command& c, std::string& error);
// Runs COMMAND under ncu (or imports), fills c.profile; adds the profiled source files to o.files
// when none were given. Returns 0 or an exit status (profile.h) with `error`.
int measure(Command& c, CliOptions& o, std::string& error);
// Joins the profile into the results; with --try-fixes, measures the fixed kernels too (progress
// and problems to `log`). Returns 0 or an exit status with `error`.
int joinAndTryFixes(Command& c, std::vector<FileResult>& results, const std::string& cwd, std::string& error);
// Removes the temporary folder.
void finish(Command& c);

}  // namespace gpuopt::profile
