// `gpuopt-lint profile`: Nsight Compute's per-source-line counters joined with the findings.
//
// Two separable halves. Measuring (runNcu): run the user's program under `ncu` with the
// SourceCounters, LaunchStats and SpeedOfLight sections and export the report's source page
// (`--page source --csv --print-source cuda,sass`) and raw page (`--page raw --csv`) into a folder.
// Joining (importExport, joinProfile): read such a folder (or one CSV), then give every finding on
// a profiled line the line's figures and a verdict, and add measured-only findings for lines whose
// counters show a problem no finding covers. The join needs no GPU, so CI tests it on committed
// exports (tests/data/ncu/).
#pragma once
#include <array>
#include <map>
#include <string>
#include <vector>

#include "analyzer/report/diagnostic.h"
#include "analyzer/report/output.h"

namespace gpuopt::profile {

// Exit statuses of `gpuopt-lint profile` beyond the linter's 0/1/2 (also in --help and README).
inline constexpr int kNoGpu = 3;           // no NVIDIA GPU or driver visible
inline constexpr int kNoNcu = 4;           // Nsight Compute (ncu) not found
inline constexpr int kNoPermission = 5;    // ERR_NVGPUCTRPERM: performance counters not allowed
inline constexpr int kNoLineInfo = 6;      // the program was built without -lineinfo
inline constexpr int kCommandNotFound = 7; // COMMAND does not exist or is not executable
inline constexpr int kCommandFailed = 8;   // COMMAND exited with a non-zero status
inline constexpr int kNoKernels = 9;       // the program launched no kernel (or none matched)
inline constexpr int kBuildFailed = 10;    // --try-fixes: the --build command failed

// One SASS instruction of a source line (deduplicated by address).
struct Instruction {
  std::string address, sass;
  double executed = 0;        // warp-level instructions executed (= requests for memory ops)
  double threadExecuted = 0;  // thread-level
  double predicatedOn = 0;    // thread-level, predicate true
  double samples = 0;         // warp stall samples
  std::string space, op;      // "Shared"/"Global"/..., "Load"/"Store"/...
  unsigned width = 0;         // bytes per lane ("Access Size", else from the opcode: LDG.E.64 -> 8)
  double sharedWavefronts = -1, sharedIdeal = -1, sharedWays = -1;  // -1: not in the export
  double sectors = -1, sectorsIdeal = -1;
};

struct Line {
  std::string file;  // as recorded by -lineinfo (the build machine's path)
  unsigned line = 0;
  std::string source;
  double executed = 0, threadExecuted = 0, samples = 0;
  std::vector<Instruction> instructions;
  double avgThreads() const { return executed > 0 ? threadExecuted / executed : 0; }
};

// One launch shape a profile recorded (grid {0, 0, 0}: not in the export).
struct Launch {
  std::array<unsigned, 3> block{1, 1, 1}, grid{0, 0, 0};
  bool operator==(const Launch&) const = default;
};

struct Kernel {
  std::string function;  // as ncu names it: "transposeShared(const float *, float *, int, int)"
  std::string name;      // base name: "transposeShared"
  std::vector<Line> lines;
  double samples = 0;    // all warp stall samples of the kernel
  // From the raw page: the launches profiled, their block shapes and summed duration.
  unsigned launches = 0;
  std::vector<std::array<unsigned, 3>> blocks;
  std::vector<Launch> shapes;  // the distinct (block, grid) pairs
  double durationUs = -1;
};

struct Profile {
  std::vector<Kernel> kernels;
  std::vector<std::string> warnings;  // ==WARNING== lines of the export
  bool noLineInfo = false;            // ncu: "No lineinfo available ..."
  std::string device;                 // from the raw page, when present
  unsigned launches = 0;              // launches in the raw page
  // How the profile was recorded (gpuopt-profile.json beside the pages, written by runNcu): ncu's
  // launch limit (-c; 0 unknown) and kernel filter (-k).
  unsigned launchLimit = 0;
  std::string kernelFilter;
};

// "void transposeUnrolled<(int)32, (int)8>(const float *, ...)" -> "transposeUnrolled".
std::string baseName(const std::string& function);

// Reads the source page (`--page source --csv --print-source cuda,sass`). False with `error` on a
// malformed export; an export of a program without line information reads fine, with noLineInfo.
bool importSourceCsv(const std::string& text, Profile& p, std::string& error);
// Reads the raw page (`--page raw --csv`): launches, block shapes and durations per kernel.
bool importRawCsv(const std::string& text, Profile& p, std::string& error);
// A folder written by runNcu (source.csv, raw.csv) or one CSV of either page. Returns 0, or an
// exit status (2 unreadable or malformed, kNoLineInfo, kNoKernels) with `error`.
int importExport(const std::string& path, Profile& p, std::string& error);

// Block shapes per kernel base name, for the lint (the analysis judges each kernel with the
// shapes the profile recorded), and the grid each was launched with (aligned with blockShapes:
// {0, 0, 0} when the launches of that block shape had different grids or the export has none).
std::map<std::string, std::vector<std::array<unsigned, 3>>> blockShapes(const Profile& p);
std::map<std::string, std::vector<std::array<unsigned, 3>>> gridShapes(const Profile& p);

// Where a run writes how it was recorded (launch limit, kernel filter), beside source.csv and raw.csv.
inline constexpr const char* kRecordFile = "gpuopt-profile.json";

struct JoinOptions {
  double tolerance = 0.2;         // confirmed when measured/predicted is within +-20%
  double excessRatio = 2.0;       // measured-only: wavefronts or sectors >= 2x the ideal ...
  double minShare = 0.01;         // ... on a line with at least 1% of the kernel's stall samples
  double minLanes = 24;           // measured-only divergence: under 24 of 32 lanes active ...
  double hotShare = 0.10;         // ... on a line with at least 10% of the kernel's stall samples
};

// Joins the profile into the lint results: measurements and verdicts on the findings, measured-
// only findings added (to the result of the file they are in, when linted), findings ranked by
// their line's share of stall samples. Lines are matched by path suffix, so a profile recorded on
// another machine joins with a checkout here.
void joinProfile(const Profile& p, std::vector<FileResult>& results, const JoinOptions& o = {});

// --- measuring --------------------------------------------------------------------------------

struct RunOptions {
  std::vector<std::string> command;  // COMMAND ARGS...
  std::string ncu;                   // path to ncu (found by findNcu when empty)
  std::string outDir;                // where report and CSVs go
  std::string kernelFilter;          // ncu -k
  unsigned launchCount = 20;         // ncu -c: profile at most this many launches
  std::string cwd;                   // working directory of COMMAND ("" = current)
  bool verbose = false;
};

// ncu on PATH, then $CUDA_PATH/bin, /usr/local/cuda/bin and /opt/nvidia/nsight-compute/*.
std::string findNcu(const std::string& cudaPath);
// True when an NVIDIA driver and device are visible (/dev/nvidiactl and /dev/nvidia0, or
// nvidia-smi -L lists one). $GPUOPT_LINT_SKIP_GPU_CHECK=1 skips it (ncu wrappers that profile on
// another host).
bool gpuVisible(std::string& why);
// Classifies what ncu printed and returned. 0 when a report with kernels was written.
int classifyNcuRun(const std::string& output, int exitStatus, const std::string& command, std::string& error);
// Profiles COMMAND and exports source.csv and raw.csv into outDir. Returns 0 or an exit status with
// `error` (what happened and what to do).
int runNcu(const RunOptions& o, std::string& error);
// Kernel durations (microseconds, one entry per launch) per base name, from COMMAND run `runs`
// times under ncu collecting only gpu__time_duration.
int measureKernelTimes(const RunOptions& o, unsigned runs, std::map<std::string, std::vector<double>>& usPerKernel,
                       std::string& error);

// Runs argv (argv[0] looked up on PATH) in `cwd`, output of both streams to `logFile`. Returns the
// exit status, 127 when it could not be started, 128+N when killed by signal N.
int runProcess(const std::vector<std::string>& argv, const std::string& cwd, const std::string& logFile);

}  // namespace gpuopt::profile
