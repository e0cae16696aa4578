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

// JSON-RPC 2.0 error codes (the Language Server Protocol uses the same).
inline constexpr int kParseError = -32700;      // the body is not JSON (or nested too deep to parse)
inline constexpr int kInvalidRequest = -32600;  // JSON, but not a request, notification or response
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// What a reader accepts: a body larger than maxBytes is skipped unread (its Content-Length is
// believed, so the next message is still found), one nested deeper than maxDepth is not parsed
// (nlohmann::json's copy, comparison and dump recurse once per level).
struct ReadLimits {
  unsigned long long maxBytes = 64ull << 20;  // 64 MiB: an 8 MiB source file with every byte escaped
  unsigned maxDepth = 512;                    // LSP messages nest fewer than 20 levels
};

// Reads one message. nullopt at the end of the input, or on an error (then `error` says what was
// wrong: a missing or bad Content-Length, a truncated body, a body that is not JSON, too large or
// too deep, and `code`, when given, gets kParseError or kInvalidRequest). After an error in a body
// the stream is at the next message, unless it failed (the input ended inside the message).
std::optional<nlohmann::json> readMessage(std::istream& in, std::string& error, int* code = nullptr,
                                          const ReadLimits& limits = {});
// Whether a parsed message has the shape JSON-RPC 2.0 gives a request, a notification or a
// response: an object with "jsonrpc": "2.0", a string "method" (requests and notifications), an
// "id" that is a string, a number or null, "params" an object or array when present. A batch (an
// array) is not: the Language Server Protocol has none. Returns nullopt when it is, else what is
// wrong (answered with kInvalidRequest).
std::optional<std::string> invalidRequest(const nlohmann::json& message);
// The nesting depth of a JSON text's arrays and objects (strings skipped), without parsing it.
unsigned jsonNestingDepth(std::string_view text, unsigned stopAt);
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
