// Command-line parsing (no Clang needed).
#pragma once
#include <string>
#include <vector>

#include "analyzer/engine.h"
#include "analyzer/output.h"

namespace gpuopt {

struct CliOptions {
  std::vector<std::string> files;
  FrontendOptions frontend;
  OutputFormat format = OutputFormat::Text;
  std::string color = "auto";
  std::vector<std::string> rules;    // --rules (ids or globs)
  std::vector<std::string> disable;  // --disable
  bool rulesGiven = false;
  unsigned blockDim[3] = {0, 0, 0};  // --block-dim (0 = not given)
  std::string configFile;            // --config
  bool noConfig = false;
  bool dumpConfig = false;
  bool listRules = false, help = false, version = false, quiet = false;
  std::string explain;
  std::string demo;
  bool demoJson = false;
  bool fix = false, dryRun = false;
  bool noGroup = false;  // --no-group: one finding per place, repeats not folded
  unsigned jobs = 0;  // 0 = number of cores
  bool gpuArchGiven = false;
  std::string failOn;  // --fail-on
};

bool parseCommandLine(int argc, char** argv, CliOptions& o, std::string& error);
bool parseCommandLine(const std::vector<std::string>& args, CliOptions& o, std::string& error);
std::string usageText();

}  // namespace gpuopt
