// `gpuopt-lint merge-sarif [-o OUT] FILE...`: one SARIF log from the logs of several runs (the
// shards of a CI matrix, `--shard I/N`), so that code scanning receives one upload.
//
// Runs of the same tool become one run: the rules are the union (by id), the results are
// concatenated with their ruleIndex renumbered, the invocations are kept (one per shard; the run
// succeeded only if every one did). Paths stay relative to %SRCROOT% when every log has the same
// root; otherwise each result's paths are made absolute (file:// URIs) from its own log's root.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

namespace gpuopt {

// Merges the SARIF 2.1.0 logs `inputs` (JSON texts; `names` for messages) into `out`. Returns
// false with `error` naming the input and the problem.
bool mergeSarif(const std::vector<std::string>& inputs, const std::vector<std::string>& names, std::string& out,
                std::string& error);

// The subcommand: argv[1] == "merge-sarif". Exit status: 0, or 2 with a message on stderr.
int mergeSarifMain(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace gpuopt
