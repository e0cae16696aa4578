// main() for a fuzz target built without libFuzzer (the normal build, `make test`): runs every
// file named (or every file of every folder named) through LLVMFuzzerTestOneInput, then as many
// inputs again made by a fixed pseudo-random mutation of them (bit flips, truncation, duplication,
// inserted brackets), so the seed corpus and its neighbours are checked on every build in a few
// seconds. libFuzzer's own search runs with `make fuzz`.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  unsigned mutations = 2000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("-mutations=", 0) == 0) {
      mutations = static_cast<unsigned>(std::strtoul(a.c_str() + 11, nullptr, 10));
      continue;
    }
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(a)) {
      for (const auto& e : std::filesystem::directory_iterator(a)) files.push_back(e.path());
    } else {
      files.push_back(a);
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      inputs.push_back(ss.str());
    }
  }
  for (const auto& s : inputs) LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  std::mt19937 rng(33);
  for (unsigned n = 0; n < mutations && !inputs.empty(); ++n) {
    std::string s = inputs[rng() % inputs.size()];
    unsigned edits = 1 + rng() % 4;
    for (unsigned e = 0; e < edits; ++e) {
      size_t at = s.empty() ? 0 : rng() % s.size();
      switch (rng() % 5) {
        case 0: if (!s.empty() && at > 0) s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8))); break;
        case 1: s.resize(at); break;
        case 2: s.insert(at, s.substr(at, rng() % 64)); break;
        case 3: s.insert(at, std::string(rng() % 2000, "[{\"\\"[rng() % 4])); break;
        case 4: if (at > 0) s.erase(at, rng() % 16); break;
      }
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  std::printf("%zu inputs and %u mutations of them ran without a failure\n", inputs.size(), mutations);
  return 0;
}
