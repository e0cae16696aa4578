// The store stage: a file's analysis saved in the result cache under its key, with what the parses
// depended on (parse_strategies.h), each stamped (analyzer/frontend/cache.h): system headers by
// size and time, the project's files by content, the folders searched by the names they hold.
#pragma once
#include <string>

#include "analyzer/engine/engine.h"
#include "analyzer/engine/parse_strategies.h"

namespace gpuopt::engine {

// Stores nothing when a dependency cannot be stamped.
void storeAnalysis(const std::string& file, const std::string& key, const FileAnalysis& fa,
                   const ParseDependencies& deps, const AnalysisOptions& opts, const std::string& resourceDir,
                   const std::string& cudaPath);

}  // namespace gpuopt::engine
