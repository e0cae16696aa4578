// The parse stage with its strategies: the file parsed with its own command; when that parse has
// errors, the host-side variant of the command; when the file still has errors of its own (or has
// kernels it does not launch), the files that include it, each with its own command (the
// includer strategy yields another command, resolved by the command stage, parse_command.h). The
// parse with the fewest errors in the file wins. Returns the winning parse and everything the
// parses depended on (the result cache's dependencies, stored by store_result.h).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "analyzer/engine/parse.h"
#include "analyzer/engine/parse_command.h"
#include "analyzer/frontend/cache.h"

namespace gpuopt::engine {

// What the parses of one file read and searched (a stored result is reused only while all of it
// is unchanged).
struct ParseDependencies {
  std::vector<std::pair<std::string, bool>> filesRead;  // by every parse made (path, system header)
  std::vector<FileStamp> preambleDeps;                  // of the preambles used
  // A parse with errors may miss a header that a later run finds (the user adds it): the folders
  // its includes are searched in become dependencies too (by the names they hold).
  std::vector<std::string> searchFolders;
  bool anyErrors = false;
  // A file tried through the files that include it depends on the other files of its folders
  // (which of them include it), on what the includers' parses read and on their commands' sources.
  IncluderScan scan;
  std::vector<std::string> commandFiles;   // compile databases and Makefiles of the includers tried
  std::vector<std::string> responseFiles;  // named by the database entries used
};

struct ParsedFile {
  ParseResult best;
  std::string usedIncluder;  // shown path of the includer the file was analysed through, if any
  ParseDependencies deps;
};

// `cmd` is the file's own command (commandForFile); `log` gets the --verbose lines.
ParsedFile parseWithStrategies(const std::string& file, const FileCommand& cmd, Parser& parser,
                               const AnalysisOptions& opts, const std::string& resourceDir,
                               const std::string& cudaPath, std::vector<std::string>& log);

}  // namespace gpuopt::engine
