// The program's call sites, across the translation units of a compile database (issue 26: a launch
// wrapper defined in one unit and called from others, `axpy_ongpu(n, a, x, 1, y, 1)` in twenty C
// files). Read by lexing every file of the database and the headers beside them (no parse, no
// preprocessing: analyzer/engine/program_scan.cpp), so that a wrapper's parameter that no caller in
// its own unit binds still gets the value every caller in the program passes. Clang-free (the
// result cache checks a stored result's facts against it).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/frontend/cache.h"

namespace gpuopt {

struct ProgramCallSite {
  std::string file;  // absolute, normalised
  unsigned line = 0;
  // Each argument's value when it is an integer literal (`1`, `-1`, `0x10u`, `(4)`), else nullopt.
  std::vector<std::optional<int64_t>> args;
};

class ProgramCalls {
 public:
  // The call sites of the functions named `name` (unqualified), as written: `name(...)`, also after
  // `ns::`; empty when none.
  const std::vector<ProgramCallSite>& callsOf(const std::string& name) const;
  // Files in which `name` appears other than as a call or a declaration (its address taken, passed
  // as an argument, a template argument list after it): every call through such a use is unknown.
  const std::vector<std::string>& otherUsesOf(const std::string& name) const;
  // What a result that asked about `name` depended on: its sites (file and arguments, not lines)
  // and other uses; equal when the answer is the same.
  std::string fingerprint(const std::string& name) const;
  size_t files() const { return files_; }

  // What the index was read from: the database file, each file lexed (size and time) and each
  // folder listed (its source files' names). A stored index serves while every one is unchanged.
  std::vector<FileStamp> sources;

  // Building (program_scan.cpp).
  void addCall(const std::string& name, ProgramCallSite site) { calls_[name].push_back(std::move(site)); }
  void addOtherUse(const std::string& name, const std::string& file);
  void setFiles(size_t n) { files_ = n; }

 private:
  std::map<std::string, std::vector<ProgramCallSite>> calls_;
  std::map<std::string, std::vector<std::string>> otherUses_;
  size_t files_ = 0;
  // Loaded for the launcher: only every name's fingerprint (the call sites themselves are left out).
  bool fingerprintsOnly_ = false;
  std::map<std::string, std::string> fingerprints_;
  friend std::shared_ptr<const ProgramCalls> loadStoredProgram(const std::string&, const std::string&, bool);
  friend void storeProgram(const std::string&, const std::string&, const ProgramCalls&);
};

// The result cache's copy of a database's index (`CACHE/v1/program/`), as the last run read it,
// when every file and folder it was read from is unchanged; nullptr otherwise. With
// `fingerprintsOnly` (the launcher, which only checks stored results' facts), the names'
// fingerprints without their sites: a small file, read in a few milliseconds.
std::shared_ptr<const ProgramCalls> loadStoredProgram(const std::string& cacheDir, const std::string& dbDir,
                                                      bool fingerprintsOnly);
void storeProgram(const std::string& cacheDir, const std::string& dbDir, const ProgramCalls& calls);

}  // namespace gpuopt
