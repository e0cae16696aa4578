// Fuzz target: the language server's reader (issue 33). Arbitrary bytes as the stdin of
// `gpuopt-lint lsp`: framing, Content-Length, JSON, nesting, the request-shape check and the
// content changes of didChange. The first byte picks the mode: a raw stream, or the rest framed
// with a correct Content-Length (so the JSON behind the framing is reached). Must never crash,
// allocate without bound or recurse without bound; a message read back after writeMessage must be
// the message written.
#include <cstdint>
#include <sstream>
#include <string>

#include "analyzer/app/jsonrpc.h"

using gpuopt::lsp::ReadLimits;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string stream = data[0] & 1 ? "Content-Length: " + std::to_string(rest.size()) + "\r\n\r\n" + rest : rest;
  std::istringstream in(stream);
  ReadLimits limits;
  limits.maxBytes = 1 << 20;
  for (int i = 0; i < 64; ++i) {
    std::string err;
    int code = 0;
    auto m = gpuopt::lsp::readMessage(in, err, &code, limits);
    if (!m) {
      if (err.empty() || !in) break;
      if (code != gpuopt::lsp::kParseError && code != gpuopt::lsp::kInvalidRequest) __builtin_trap();
      continue;
    }
    auto bad = gpuopt::lsp::invalidRequest(*m);
    // didChange's edits on a text, whatever their shape.
    if (!bad && m->is_object() && m->contains("params") && (*m)["params"].is_object()) {
      const auto& p = (*m)["params"];
      if (p.contains("contentChanges") && p["contentChanges"].is_array()) {
        std::string text = "line one\nline two é\n";
        for (const auto& c : p["contentChanges"])
          gpuopt::lsp::applyContentChange(text, c, data[0] & 2 ? gpuopt::lsp::Encoding::Utf8 : gpuopt::lsp::Encoding::Utf16);
      }
    }
    // What the server writes back reads as the same message.
    std::ostringstream out;
    gpuopt::lsp::writeMessage(out, *m);
    std::istringstream back(out.str());
    std::string err2;
    auto again = gpuopt::lsp::readMessage(back, err2, nullptr, limits);
    if (!again) __builtin_trap();
  }
  return 0;
}
