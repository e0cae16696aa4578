// `gpuopt-lint lsp`: a Language Server Protocol server on stdin/stdout. It lints a document when
// it is opened or saved, and 300 ms after the last change (the unsaved text, over the file on
// disk, with the other open documents as well), through the same lintFile the command line uses,
// with the same configuration (.gpuopt-lint.yaml, the command line given after `lsp`) and
// compile_commands.json. Each finding is a diagnostic: rule id as `code`, its doc as
// `codeDescription`, notes and the other places of a grouped pattern as `relatedInformation`;
// findings with a mechanical fix (--fix) offer it as a quick-fix code action.
#pragma once
#include <iosfwd>
#include <string>

#include "analyzer/app/cli.h"

namespace gpuopt {

// Serves until the client sends `exit` (status 0 after `shutdown`, 1 without) or the input ends
// (1). Status 2 when the analysis cannot run at all (no Clang resource directory). `log` gets what
// an editor shows in its server log (stderr).
int runLanguageServer(const CliOptions& cli, std::istream& in, std::ostream& out, std::ostream& log,
                      const std::string& version);

}  // namespace gpuopt
