// Reports Clang parse time and gpuopt-lint analysis time (kernel model + rules) per file, for the
// files given and for a generated file with many kernels. Target: analysis <= 10% of parse.
//   gpuopt-bench [--kernels N] [--reps R] [--no-cuda] FILE...
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "analyzer/engine.h"
#include "analyzer/rule.h"

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
  std::vector<std::string> files;
  unsigned kernels = 200, reps = 3;
  bool noCuda = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--kernels" && i + 1 < argc) kernels = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a == "--reps" && i + 1 < argc) reps = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a == "--no-cuda") noCuda = true;
    else files.push_back(a);
  }
  auto dir = std::filesystem::temp_directory_path() / "gpuopt-bench";
  std::filesystem::create_directories(dir);
  std::string gen = (dir / fmt::format("generated_{}_kernels.cu", kernels)).string();
  std::ofstream(gen) << generated(kernels);
  files.push_back(gen);

  AnalysisOptions opts;
  opts.frontend.noCuda = noCuda;
  std::string err;
  std::string res = findResourceDir(opts.frontend, err);
  if (res.empty()) {
    std::cerr << err << "\n";
    return 2;
  }
  std::string cuda = findCudaPath(opts.frontend);
  auto rules = registerAllRules();
  std::cout << fmt::format("CUDA headers: {}; best of {} runs per file\n", cuda.empty() ? "bundled" : cuda, reps);
  std::cout << fmt::format("{:<48} {:>7} {:>10} {:>12} {:>10} {:>9}\n", "file", "kernels", "parse ms", "analysis ms",
                           "analysis %", "findings");
  double tp = 0, ta = 0;
  for (const auto& f : files) {
    double parse = 1e30, analysis = 1e30;
    FileAnalysis last;
    for (unsigned r = 0; r < reps; ++r) {
      FileAnalysis fa = analyzeFile(f, opts, rules, res, cuda);
      parse = std::min(parse, fa.parseMs);
      analysis = std::min(analysis, fa.analysisMs);
      last = std::move(fa);
    }
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
  return 0;
}
