// Reports Clang parse time and gpuopt-lint analysis time (kernel model + rules) per file, for the
// files given and for a generated file with many kernels. Target: analysis <= 10% of parse.
// Then the caches (issue 10), side by side per file: a parse without any cache ("bare"), a cold
// first run (building the precompiled preamble in an empty cache), a first run with a warm
// preamble, and the whole `gpuopt-lint` process on an unchanged file (result cache).
// Targets: warm <= 0.5x bare, cold <= 2x bare, unchanged <= 0.05 s.
//   gpuopt-bench [--kernels N] [--reps R] [--no-cuda] [--no-cache-bench] FILE... [-- COMPILER-ARGS]
#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "analyzer/engine/engine.h"
#include "analyzer/rule/rule.h"

using namespace gpuopt;

static std::string generated(unsigned kernels) {
  std::string s = "#define TILE 32\n";
  for (unsigned k = 0; k < kernels; ++k) {
    switch (k % 4) {
      case 0:
        s += fmt::format(
            "__global__ void reduce{0}(const int* in, int* out) {{\n  __shared__ int s[256];\n  unsigned t = threadIdx.x;\n"
            "  s[t] = in[blockIdx.x * 256 + t];\n  __syncthreads();\n  for (unsigned st = 1; st < blockDim.x; st *= 2) {{\n"
            "    if (t % (2 * st) == 0) s[t] += s[t + st];\n    __syncthreads();\n  }}\n  if (t == 0) out[blockIdx.x] = s[0];\n}}\n",
            k);
        break;
      case 1:
        s += fmt::format(
            "__global__ void transpose{0}(const float* a, float* b, int n) {{\n  __shared__ float m[TILE][TILE + 1];\n"
            "  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;\n"
            "  for (int k = 0; k < TILE; k += 8) m[threadIdx.y + k][threadIdx.x] = a[(y + k) * n + x];\n  __syncthreads();\n"
            "  x = blockIdx.y * TILE + threadIdx.x; y = blockIdx.x * TILE + threadIdx.y;\n"
            "  for (int k = 0; k < TILE; k += 8) b[(y + k) * n + x] = m[threadIdx.x][threadIdx.y + k];\n}}\n",
            k);
        break;
      case 2:
        s += fmt::format(
            "__global__ void stencil{0}(const float* in, float* out, int n) {{\n  __shared__ float t[258];\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  t[threadIdx.x + 1] = in[i];\n"
            "  if (threadIdx.x == 0) t[0] = i > 0 ? in[i - 1] : 0.f;\n  if (threadIdx.x == blockDim.x - 1) t[blockDim.x + 1] = in[i + 1];\n"
            "  __syncthreads();\n  if (i < n) out[i] = 0.25f * t[threadIdx.x] + 0.5f * t[threadIdx.x + 1] + 0.25f * t[threadIdx.x + 2];\n}}\n",
            k);
        break;
      default:
        s += fmt::format(
            "__global__ void matmul{0}(const float* M, const float* N, float* P, int w) {{\n  int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
            "  int c = blockIdx.x * blockDim.x + threadIdx.x;\n  float acc = 0;\n  for (int k = 0; k < w; ++k) acc += M[r * w + k] * N[k * w + c];\n"
            "  P[r * w + c] = acc;\n}}\n",
            k);
        break;
    }
  }
  s += "void launch(int* a, int* b, float* f, float* g) {\n";
  for (unsigned k = 0; k < kernels; ++k) {
    if (k % 4 == 0) s += fmt::format("  reduce{}<<<64, 256>>>(a, b);\n", k);
    if (k % 4 == 1) s += fmt::format("  transpose{}<<<dim3(64, 64), dim3(32, 8)>>>(f, g, 2048);\n", k);
    if (k % 4 == 3) s += fmt::format("  matmul{}<<<dim3(64, 64), dim3(16, 16)>>>(f, f, g, 1024);\n", k);
  }
  return s + "}\n";
}

int main(int argc, char** argv) {
  gpuopt::tuneAllocatorForAnalysis();  // as gpuopt-lint does
  std::vector<std::string> files, extra;
  unsigned kernels = 200, reps = 3;
  bool noCuda = false, cacheBench = true;
  std::string only;  // --rules a,b: only these rules (to compare with a binary that had fewer)
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--kernels" && i + 1 < argc) kernels = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a == "--reps" && i + 1 < argc) reps = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a == "--no-cuda") noCuda = true;
    else if (a == "--no-cache-bench") cacheBench = false;
    else if (a == "--rules" && i + 1 < argc) only = argv[++i];
    else if (a == "--") {  // compiler arguments for every file, as gpuopt-lint takes them
      for (++i; i < argc; ++i) extra.push_back(argv[i]);
    } else files.push_back(a);
  }
  auto dir = std::filesystem::temp_directory_path() / "gpuopt-bench";
  std::filesystem::create_directories(dir);
  std::string gen = (dir / fmt::format("generated_{}_kernels.cu", kernels)).string();
  std::ofstream(gen) << generated(kernels);
  files.push_back(gen);

  AnalysisOptions opts;
  opts.frontend.noCuda = noCuda;
  opts.frontend.extraArgs = extra;
  std::string extraWords;
  for (const auto& e : extra) extraWords += " '" + e + "'";
  std::string err;
  std::string res = findResourceDir(opts.frontend, err);
  if (res.empty()) {
    std::cerr << err << "\n";
    return 2;
  }
  std::string cuda = findCudaPath(opts.frontend);
  auto rules = registerAllRules();
  if (!only.empty()) {
    // As `gpuopt-lint --rules`: only these rules run (and the model carries only what they need).
    for (llvm::StringRef rest = only; !rest.empty();) {
      auto [id, tail] = rest.split(',');
      opts.enabledRules.insert(id.trim().str());
      rest = tail;
    }
    for (const auto& id : opts.enabledRules)
      if (std::none_of(rules.begin(), rules.end(), [&](const auto& r) { return r->info().id == id; })) {
        std::cerr << "--rules: unknown rule id '" << id << "'\n";
        return 2;
      }
    std::cout << fmt::format("rules: {}\n", only);
  }
  std::cout << fmt::format("CUDA headers: {}; best of {} runs per file\n", cuda.empty() ? "bundled" : cuda, reps);
  std::cout << fmt::format("{:<48} {:>7} {:>10} {:>12} {:>10} {:>9}\n", "file", "kernels", "parse ms", "analysis ms",
                           "analysis %", "findings");
  double tp = 0, ta = 0;
  std::map<std::string, double> phases;  // of the best run of each file
  for (const auto& f : files) {
    double parse = 1e30, analysis = 1e30;
    FileAnalysis last;
    std::map<std::string, double> bestPhases;
    for (unsigned r = 0; r < reps; ++r) {
      FileAnalysis fa = analyzeFile(f, opts, rules, res, cuda);
      parse = std::min(parse, fa.parseMs);
      if (fa.analysisMs < analysis) bestPhases = fa.phaseMs;
      analysis = std::min(analysis, fa.analysisMs);
      last = std::move(fa);
    }
    for (const auto& [k, v] : bestPhases) phases[k] += v;
    if (!last.result.errors.empty()) {
      std::cout << f << ": " << last.result.errors[0].message << "\n";
      continue;
    }
    tp += parse, ta += analysis;
    std::string name = std::filesystem::path(f).filename().string();
    std::cout << fmt::format("{:<48} {:>7} {:>10.1f} {:>12.1f} {:>9.1f}% {:>9}\n", name, last.kernels, parse, analysis,
                             100.0 * analysis / parse, last.result.diags.size());
  }
  std::cout << fmt::format("{:<48} {:>7} {:>10.1f} {:>12.1f} {:>9.1f}%\n", "total", "", tp, ta, 100.0 * ta / tp);
  // Where the analysis time goes, largest first (the best run of each file, summed).
  std::vector<std::pair<double, std::string>> byCost;
  for (const auto& [k, v] : phases) byCost.push_back({v, k});
  std::sort(byCost.rbegin(), byCost.rend());
  std::string line;
  for (const auto& [v, k] : byCost)
    if (v >= 0.05) line += fmt::format("{}{} {:.1f}", line.empty() ? "" : ", ", k, v);
  std::cout << "analysis ms by phase: " << line << "\n";
  if (!cacheBench) return 0;
  if (cuda.empty()) {
    std::cout << "\ncaches: the precompiled preamble is only used with a CUDA toolkit (none here)\n";
    return 0;
  }

  // The caches, side by side per file (ms of analyzeFile; the unchanged run is the whole process).
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
  auto root = dir / "cache";
  std::cout << fmt::format("\ncaches, best of {} (cold: once, each file with an empty cache)\n", reps);
  std::cout << fmt::format("{:<40} {:>9} {:>9} {:>6} {:>9} {:>6} {:>9} {:>11}  {}\n", "file", "bare ms", "cold ms", "x",
                           "warm ms", "x", "lookup ms", "unchanged", "same findings");
  double worstCold = 0, worstWarm = 0, worstUnchanged = 0, sumBare = 0, sumWarm = 0;
  bool allSame = true;
  int n = 0;
  for (const auto& f : files) {
    AnalysisOptions plain = opts;
    double bare = 1e30;
    FileAnalysis ref;
    for (unsigned r = 0; r < reps; ++r) {
      auto t = Clock::now();
      ref = analyzeFile(f, plain, rules, res, cuda);
      bare = std::min(bare, ms(t));
    }
    if (!ref.result.errors.empty()) continue;
    std::filesystem::remove_all(root);
    AnalysisOptions cached = opts;
    cached.cache.dir = root.string();
    // As a one-file run of gpuopt-lint on this machine: a core to spare builds the preamble beside the parse.
    cached.cache.backgroundPreamble = std::thread::hardware_concurrency() >= 2;
    auto t = Clock::now();
    FileAnalysis cold = analyzeFile(f, cached, rules, res, cuda);
    double coldMs = ms(t);
    double warm = 1e30;
    bool same = fileResultToJson(cold.result) == fileResultToJson(ref.result);
    for (unsigned r = 0; r < reps; ++r) {
      std::filesystem::remove_all(root / "v1" / "results");
      t = Clock::now();
      FileAnalysis w = analyzeFile(f, cached, rules, res, cuda);
      warm = std::min(warm, ms(t));
      same = same && fileResultToJson(w.result) == fileResultToJson(ref.result);
    }
    // The unchanged file: in process (the lookup), and the whole process as a pre-commit hook runs it.
    double lookup = 1e30;
    for (unsigned r = 0; r < reps; ++r) {
      t = Clock::now();
      FileAnalysis hit = analyzeFile(f, cached, rules, res, cuda);
      lookup = std::min(lookup, ms(t));
      // (a file analysed through its includers is not stored: it is analysed again, the same)
      same = same && fileResultToJson(hit.result) == fileResultToJson(ref.result);
    }
    double unchanged = 1e30;
    std::string cmd = fmt::format("'{}' -q --cache-dir '{}' --cuda-path '{}' '{}'{} >/dev/null 2>&1", GPUOPT_LINT_BIN,
                                  root.string(), cuda, f, extra.empty() ? "" : " --" + extraWords);
    std::system(cmd.c_str());  // stores the result
    for (unsigned r = 0; r < reps; ++r) {
      t = Clock::now();
      std::system(cmd.c_str());
      unchanged = std::min(unchanged, ms(t));
    }
    allSame = allSame && same;
    worstCold = std::max(worstCold, coldMs / bare);
    worstWarm = std::max(worstWarm, warm / bare);
    worstUnchanged = std::max(worstUnchanged, unchanged);
    sumBare += bare, sumWarm += warm, ++n;
    std::string name = std::filesystem::path(f).filename().string();
    std::cout << fmt::format("{:<40} {:>9.0f} {:>9.0f} {:>6.2f} {:>9.0f} {:>6.2f} {:>9.1f} {:>8.0f} ms  {}\n", name, bare,
                             coldMs, coldMs / bare, warm, warm / bare, lookup, unchanged, same ? "yes" : "NO");
  }
  std::filesystem::remove_all(root);
  // What a run costs before it reads a file: the launcher (no Clang libraries), and the analyzer
  // it runs for changed files (loading the Clang and LLVM shared libraries). Each through a shell,
  // as the unchanged runs above.
  auto startup = [&](const char* bin) {
    double best = 1e30;
    for (unsigned r = 0; r < std::max(reps, 5u); ++r) {
      auto t = Clock::now();
      std::system(fmt::format("'{}' --version >/dev/null 2>&1", bin).c_str());
      best = std::min(best, ms(t));
    }
    return best;
  };
  std::cout << fmt::format("process start-up alone (--version): launcher gpuopt-lint {:.1f} ms, analyzer "
                           "gpuopt-lint-engine {:.1f} ms\n", startup(GPUOPT_LINT_BIN), startup(GPUOPT_ENGINE_BIN));
  std::cout << fmt::format("{} files: warm preamble {:.2f}x of bare in total, worst {:.2f}x (target <= 0.5x); cold worst "
                           "{:.2f}x (target <= 2x); unchanged file worst {:.0f} ms (target <= 50 ms); findings {}\n",
                           n, sumWarm / sumBare, worstWarm, worstCold, worstUnchanged,
                           allSame ? "identical" : "DIFFER");
  return allSame ? 0 : 1;
}
