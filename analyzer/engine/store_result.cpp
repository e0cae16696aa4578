#include "analyzer/engine/store_result.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace gpuopt::engine {

namespace fs = std::filesystem;

void storeAnalysis(const std::string& file, const std::string& key, const FileAnalysis& fa,
                   const ParseDependencies& deps, const AnalysisOptions& opts, const std::string& resourceDir,
                   const std::string& cudaPath) {
  // System headers (toolkit, Clang, the C++ library) are trusted by size and time; the project's
  // files are compared by content.
  std::vector<std::pair<std::string, bool>> filesRead = deps.filesRead;
  std::sort(filesRead.begin(), filesRead.end());
  filesRead.erase(std::unique(filesRead.begin(), filesRead.end()), filesRead.end());
  std::vector<FileStamp> stamps;
  bool complete = true;  // a dependency that cannot be stamped: not stored
  auto add = [&](std::optional<FileStamp> st) {
    if (st) stamps.push_back(std::move(*st));
    else complete = false;
  };
  for (const auto& [f, system] : filesRead) add(stampFile(f, !system));
  stamps.insert(stamps.end(), deps.preambleDeps.begin(), deps.preambleDeps.end());
  // The includer search: the source files its folders hold, the files it read and the
  // includers' command sources by content. After errors, the names in the folders
  // includes are searched in (a missing header that appears).
  std::set<std::string> searchedIn;
  if (deps.anyErrors) {
    std::vector<std::string> dirs = deps.searchFolders;
    for (const auto& [f, system] : filesRead)
      if (!system) dirs.push_back(fs::path(f).parent_path().string());
    auto excluded = excludedPrefixes(resourceDir, cudaPath);  // toolkit, Clang, bundled (in memory)
    for (auto d : dirs) {
      std::error_code ec;
      d = fs::absolute(d.empty() ? std::string(".") : d, ec).lexically_normal().string();
      if (ec || d.empty()) continue;
      if (std::any_of(excluded.begin(), excluded.end(), [&](const std::string& p) { return d.rfind(p, 0) == 0; }))
        continue;
      // A folder that does not exist (yet): its parent's names tell when it appears.
      while (!fs::is_directory(d, ec) && fs::path(d).has_parent_path() && fs::path(d).parent_path() != fs::path(d))
        d = fs::path(d).parent_path().string();
      if (d.size() > 1 && d.back() == '/') d.pop_back();
      searchedIn.insert(d);
    }
  }
  for (const auto& d : searchedIn) add(stampFolder(d, false));
  for (const auto& d : std::set<std::string>(deps.scan.folders.begin(), deps.scan.folders.end())) add(stampFolder(d, true));
  // The files scanned for includers, by content as the headers read are: a save or checkout
  // that leaves them as they were keeps the result.
  for (const auto& f : std::set<std::string>(deps.scan.files.begin(), deps.scan.files.end())) add(stampFile(f, true));
  for (const auto& f : std::set<std::string>(deps.commandFiles.begin(), deps.commandFiles.end())) add(stampFile(f, true));
  // The response files the database entries named (CMake's includes_CUDA.rsp), by content.
  for (const auto& f : std::set<std::string>(deps.responseFiles.begin(), deps.responseFiles.end())) add(stampFile(f, true));
  if (complete) storeCachedResult(opts.cache.dir, file, key, stamps, CachedAnalysis{fa.result, fa.kernels, fa.log});
}

}  // namespace gpuopt::engine
