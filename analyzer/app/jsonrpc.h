// The Language Server Protocol's base layer (Clang-free, unit-tested): JSON-RPC messages framed by
// a "Content-Length" header, file URIs, and positions (LSP counts UTF-16 code units by default;
// gpuopt-lint's columns are 1-based bytes).
#pragma once
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gpuopt::lsp {

// Reads one message. nullopt at the end of the input, or on a framing error (then `error` says
// what was wrong: a missing or bad Content-Length, a truncated body, a body that is not JSON).
std::optional<nlohmann::json> readMessage(std::istream& in, std::string& error);
// Writes one message with its header, and flushes.
void writeMessage(std::ostream& out, const nlohmann::json& message);

// file:// URIs (percent-encoded, as editors send them). pathFromUri returns empty for another scheme.
std::string pathFromUri(std::string_view uri);
std::string uriFromPath(std::string_view absolutePath);

enum class Encoding { Utf16, Utf8 };
// The LSP character offset of a 0-based byte offset within a line (a partial UTF-8 sequence
// counts as its whole character).
unsigned characterOfByte(std::string_view line, size_t byte, Encoding enc);
// The 0-based byte offset of an LSP character offset within a line (clamped to the line).
size_t byteOfCharacter(std::string_view line, unsigned character, Encoding enc);

}  // namespace gpuopt::lsp

namespace gpuopt::lsp {
// Applies one entry of textDocument/didChange's contentChanges: the whole text, or a range edit.
// Returns false when the change is malformed.
bool applyContentChange(std::string& text, const nlohmann::json& change, Encoding enc);
}  // namespace gpuopt::lsp
