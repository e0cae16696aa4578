// Measuring: Nsight Compute run on a program (runNcu, exports), the checks before it, and kernel
// times for --try-fixes. Reading exports: import.cpp; joining them with findings: join.cpp.
#include "analyzer/profile/profile.h"
#include "analyzer/profile/join_detail.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpuopt::profile {

namespace fs = std::filesystem;

using detail::readFile;

// ---------------------------------------------------------------------------------------------
// Measuring

int runProcess(const std::vector<std::string>& argv, const std::string& cwd, const std::string& logFile) {
  if (argv.empty()) return 127;
  pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(127);
    int fd = open(logFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

std::string findNcu(const std::string& cudaPath) {
  auto exe = [](const fs::path& p) { return access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); };
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');)
      if (!dir.empty() && exe(fs::path(dir) / "ncu")) return (fs::path(dir) / "ncu").string();
  }
  std::vector<fs::path> dirs;
  if (!cudaPath.empty()) dirs.push_back(fs::path(cudaPath) / "bin");
  if (const char* c = std::getenv("CUDA_PATH")) dirs.push_back(fs::path(c) / "bin");
  dirs.push_back("/usr/local/cuda/bin");
  std::error_code ec;
  if (fs::is_directory("/opt/nvidia/nsight-compute", ec)) {
    std::vector<fs::path> versions;
    for (const auto& e : fs::directory_iterator("/opt/nvidia/nsight-compute", ec)) versions.push_back(e.path());
    std::sort(versions.rbegin(), versions.rend());  // newest first
    dirs.insert(dirs.end(), versions.begin(), versions.end());
  }
  for (const auto& d : dirs)
    if (exe(d / "ncu")) return (d / "ncu").string();
  return {};
}

bool gpuVisible(std::string& why) {
  if (const char* s = std::getenv("GPUOPT_LINT_SKIP_GPU_CHECK"); s && std::string(s) == "1") return true;
  std::error_code ec;
  if (fs::exists("/dev/nvidiactl", ec) && fs::exists("/dev/nvidia0", ec)) return true;
  why = "no NVIDIA GPU is visible on this machine (no /dev/nvidia0 and /dev/nvidiactl: no device, or no driver "
        "loaded); profile on a machine with a GPU, or record the profile there and join it here with --import DIR";
  return false;
}

int classifyNcuRun(const std::string& output, int exitStatus, const std::string& command, std::string& error) {
  auto has = [&](const char* s) { return output.find(s) != std::string::npos; };
  if (has("ERR_NVGPUCTRPERM")) {
    error = "Nsight Compute may not read the GPU's performance counters as this user (ERR_NVGPUCTRPERM): run as "
            "root, or allow it for all users (options nvidia NVreg_RestrictProfilingToAdminUsers=0 in "
            "/etc/modprobe.d, then reload the driver); see https://developer.nvidia.com/ERR_NVGPUCTRPERM";
    return kNoPermission;
  }
  if (has("does not exist or is not an executable") || exitStatus == 127) {
    error = "cannot run '" + command + "': it does not exist or is not executable (give a path, e.g. ./app)";
    return kCommandNotFound;
  }
  if (has("No CUDA-capable device") || has("no CUDA-capable device") || has("No supported GPU") ||
      has("no supported device") || has("ERR_NVGPU_NOT_FOUND")) {
    error = "ncu found no GPU it can profile: " + command + " ran without a usable NVIDIA device";
    return kNoGpu;
  }
  if (has("The application returned an error code") || (exitStatus != 0 && !has("==ERROR==")))
  {
    size_t pos = output.find("The application returned an error code");
    std::string code = pos == std::string::npos ? std::to_string(exitStatus) : output.substr(pos + 39, 8);
    code.erase(std::remove_if(code.begin(), code.end(), [](char c) { return !std::isdigit(static_cast<unsigned char>(c)); }),
               code.end());
    error = "'" + command + "' failed (exit status " + (code.empty() ? std::to_string(exitStatus) : code) +
            "); its output is in the log above. Profile a run that succeeds";
    return kCommandFailed;
  }
  if (has("No kernels were profiled")) {
    error = "'" + command + "' launched no kernel that ncu profiled" +
            (has("Available Kernels") ? " (none matched the kernel filter; the kernels it launched are listed above)"
                                      : " (does it launch any? check that it finds a GPU and its input)");
    return kNoKernels;
  }
  if (exitStatus != 0) {
    error = "ncu failed (exit status " + std::to_string(exitStatus) + ")";
    return kCommandFailed;
  }
  return 0;
}

namespace {
std::string quoteForLog(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + (a.find(' ') == std::string::npos ? a : "'" + a + "'");
  return s;
}

int exportPages(const std::string& ncu, const std::string& report, const std::string& outDir, std::string& error) {
  struct Page {
    const char* file;
    std::vector<std::string> args;
  };
  for (const Page& pg : {Page{"source.csv", {"--page", "source", "--csv", "--print-source", "cuda,sass"}},
                         Page{"raw.csv", {"--page", "raw", "--csv"}}}) {
    std::vector<std::string> argv = {ncu, "-i", report};
    argv.insert(argv.end(), pg.args.begin(), pg.args.end());
    std::string out = (fs::path(outDir) / pg.file).string();
    int rc = runProcess(argv, "", out);
    if (rc != 0) {
      error = "exporting " + std::string(pg.file) + " failed: " + quoteForLog(argv) + " (exit status " + std::to_string(rc) + ")";
      return 2;
    }
  }
  return 0;
}
}  // namespace

int runNcu(const RunOptions& o, std::string& error) {
  std::error_code ec;
  fs::create_directories(o.outDir, ec);
  std::string report = (fs::path(o.outDir) / "profile").string();
  std::vector<std::string> argv = {o.ncu, "--section", "SourceCounters", "--section", "LaunchStats", "--section",
                                   "SpeedOfLight", "--import-source", "yes", "-f", "-o", report,
                                   "-c", std::to_string(o.launchCount)};
  if (!o.kernelFilter.empty()) argv.insert(argv.end(), {"-k", o.kernelFilter});
  argv.insert(argv.end(), o.command.begin(), o.command.end());
  std::string log = (fs::path(o.outDir) / "ncu.log").string();
  int rc = runProcess(argv, o.cwd, log);
  bool ok = false;
  std::string output = readFile(log, ok);
  if (o.verbose) fmt::print(stderr, "gpuopt-lint: {}\n{}", quoteForLog(argv), output);
  int status = classifyNcuRun(output, rc, o.command.empty() ? "" : o.command[0], error);
  if (status == kCommandFailed || status == kNoKernels || status == kNoPermission) {
    // Show the program's own output: it says why.
    std::string tail = output.size() > 3000 ? output.substr(output.size() - 3000) : output;
    error = tail + (tail.empty() || tail.back() == '\n' ? "" : "\n") + "gpuopt-lint: error: " + error;
  }
  if (status != 0) return status;
  if (!fs::exists(report + ".ncu-rep", ec)) {
    error = "ncu wrote no report (" + report + ".ncu-rep); its output:\n" + output;
    return 2;
  }
  int e = exportPages(o.ncu, report + ".ncu-rep", o.outDir, error);
  if (e) return e;
  {
    std::ofstream rec(fs::path(o.outDir) / kRecordFile);
    rec << nlohmann::json{{"launchCount", o.launchCount}, {"kernelFilter", o.kernelFilter}, {"command", o.command}}
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  }
  if (output.find("No source files were imported") != std::string::npos) {
    // Keep going: the import says it precisely (no lineinfo).
  }
  return 0;
}

int measureKernelTimes(const RunOptions& o, unsigned runs, std::map<std::string, std::vector<double>>& usPerKernel,
                       std::string& error) {
  std::error_code ec;
  fs::create_directories(o.outDir, ec);
  for (unsigned i = 0; i < runs; ++i) {
    std::string report = (fs::path(o.outDir) / ("times-" + std::to_string(i))).string();
    std::vector<std::string> argv = {o.ncu, "--metrics", "gpu__time_duration.sum", "-f", "-o", report,
                                     "-c", std::to_string(o.launchCount)};
    if (!o.kernelFilter.empty()) argv.insert(argv.end(), {"-k", o.kernelFilter});
    argv.insert(argv.end(), o.command.begin(), o.command.end());
    std::string log = report + ".log";
    int rc = runProcess(argv, o.cwd, log);
    bool ok = false;
    int status = classifyNcuRun(readFile(log, ok), rc, o.command.empty() ? "" : o.command[0], error);
    if (status) return status;
    std::string csv = report + ".csv";
    if (runProcess({o.ncu, "-i", report + ".ncu-rep", "--page", "raw", "--csv"}, "", csv) != 0) {
      error = "could not export the timing report " + report + ".ncu-rep";
      return 2;
    }
    Profile p;
    std::string err;
    if (!importRawCsv(readFile(csv, ok), p, err)) {
      error = csv + ": " + err;
      return 2;
    }
    for (const auto& k : p.kernels)
      if (k.durationUs >= 0) usPerKernel[k.name].push_back(k.durationUs);
  }
  return 0;
}

}  // namespace gpuopt::profile
