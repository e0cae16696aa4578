// Fuzz target: the result cache's reader (issue 33). Arbitrary bytes as a stored entry. The first
// byte picks the mode: the bytes as they are (the checksum must reject them), or the rest behind a
// correct checksum line (so the JSON reader behind it is reached). Must never crash; an entry it
// accepts must be written back and read again to the same result.
#include <cstdint>
#include <string>

#include "analyzer/frontend/cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string entry = data[0] & 1 ? "gpuopt-lint-result " + gpuopt::hashText(rest) + "\n" + rest : rest;
  auto r = gpuopt::parseResultEntry(entry, "KEY");
  if (!r) return 0;
  std::string text = gpuopt::resultEntryText("KEY", r->deps, r->analysis);
  if (text.empty()) return 0;  // not UTF-8: not stored
  auto again = gpuopt::parseResultEntry(text, "KEY");
  if (!again || gpuopt::fileResultToJson(again->analysis.result) != gpuopt::fileResultToJson(r->analysis.result))
    __builtin_trap();
  return 0;
}
