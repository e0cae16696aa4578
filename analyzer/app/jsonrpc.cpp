#include "analyzer/app/jsonrpc.h"

#include "analyzer/report/source_cache.h"

#include <algorithm>
#include <cctype>
#include <istream>
#include <ostream>

namespace gpuopt::lsp {

unsigned jsonNestingDepth(std::string_view text, unsigned stopAt) {
  unsigned depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
      continue;
    }
    if (c == '"') inString = true;
    else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > stopAt) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) --depth;
  }
  return deepest;
}

namespace {
// std::getline with a bounded line: a longer one is read to its end and cut (`cut` set), so a
// header that never ends cannot fill the memory.
bool readHeaderLine(std::istream& in, std::string& line, bool& cut) {
  constexpr size_t kMaxLine = 8192;
  line.clear();
  cut = false;
  std::streambuf* sb = in.rdbuf();
  for (;;) {
    int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(line.empty() && !cut ? std::ios::eofbit | std::ios::failbit : std::ios::eofbit);
      return !line.empty() || cut;
    }
    if (c == '\n') return true;
    if (line.size() < kMaxLine) line.push_back(static_cast<char>(c));
    else cut = true;
  }
}
}  // namespace

std::optional<nlohmann::json> readMessage(std::istream& in, std::string& error, int* code, const ReadLimits& limits) {
  error.clear();
  auto fail = [&](int c, std::string what) {
    error = std::move(what);
    if (code) *code = c;
    return std::nullopt;
  };
  long long length = -1;
  std::string line, headerError;  // a bad header line: the rest of the header is still read
  bool sawHeader = false, cut = false;
  while (readHeaderLine(in, line, cut)) {
    if (cut && headerError.empty()) headerError = "header line longer than 8192 bytes";
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (!sawHeader) continue;  // stray blank line between messages
      break;
    }
    sawHeader = true;
    auto colon = line.find(':');
    if (colon == std::string::npos) {
      if (line.size() > 200) line = line.substr(0, 200) + "...";
      if (headerError.empty()) headerError = "malformed header line '" + line + "'";
      continue;
    }
    std::string name = line.substr(0, colon), value = line.substr(colon + 1);
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    value.erase(0, value.find_first_not_of(" \t"));
    if (name == "content-length") {
      try {
        size_t pos = 0;
        length = std::stoll(value, &pos);
        if (pos != value.size() || length < 0) throw 0;
      } catch (...) {
        if (value.size() > 40) value = value.substr(0, 40) + "...";
        if (headerError.empty()) headerError = "bad Content-Length '" + value + "'";
      }
    }
  }
  if (!sawHeader) return std::nullopt;  // end of input
  if (!headerError.empty()) return fail(kParseError, headerError);
  if (length < 0) return fail(kParseError, in ? "message without Content-Length" : "input ended inside a header");
  if (static_cast<unsigned long long>(length) > limits.maxBytes) {
    // Skipped unread, in pieces: the memory stays bounded whatever the header says.
    for (long long left = length; left > 0 && in;) {
      long long n = std::min<long long>(left, 1 << 16);
      in.ignore(n);
      left -= in.gcount();
      if (in.gcount() < n) break;
    }
    return fail(kInvalidRequest, "message of " + std::to_string(length) + " bytes is larger than the limit of " +
                                     std::to_string(limits.maxBytes) + " bytes; skipped");
  }
  std::string body(static_cast<size_t>(length), '\0');
  in.read(body.data(), length);
  if (in.gcount() != length) {
    return fail(kParseError, "input ended inside a message body (" + std::to_string(in.gcount()) + " of " +
                                 std::to_string(length) + " bytes)");
  }
  if (unsigned depth = jsonNestingDepth(body, limits.maxDepth); depth > limits.maxDepth)
    return fail(kParseError, "message body nested deeper than " + std::to_string(limits.maxDepth) + " levels; not parsed");
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) return fail(kParseError, "message body is not JSON");
  return j;
}

std::optional<std::string> invalidRequest(const nlohmann::json& m) {
  if (m.is_array()) return std::string("a batch (a JSON array) is not a message of the Language Server Protocol");
  if (!m.is_object()) return std::string("a message must be a JSON object, not ") + m.type_name();
  auto v = m.find("jsonrpc");
  if (v == m.end() || !v->is_string() || v->get_ref<const std::string&>() != "2.0")
    return std::string("\"jsonrpc\" must be \"2.0\"");
  auto id = m.find("id");
  if (id != m.end() && !id->is_string() && !id->is_number_integer() && !id->is_null())
    return std::string("\"id\" must be a string or an integer, not ") + id->type_name();
  auto method = m.find("method");
  if (method == m.end()) {
    // A response (to a request of the server's): an id and a result or an error.
    if (id == m.end() || (!m.contains("result") && !m.contains("error")))
      return std::string("a message without \"method\" must be a response (\"id\" and \"result\" or \"error\")");
    return std::nullopt;
  }
  if (!method->is_string()) return std::string("\"method\" must be a string, not ") + method->type_name();
  auto params = m.find("params");
  if (params != m.end() && !params->is_object() && !params->is_array())
    return std::string("\"params\" must be an object or an array, not ") + params->type_name();
  return std::nullopt;
}

void writeMessage(std::ostream& out, const nlohmann::json& message) {
  std::string body = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out << "Content-Length: " << body.size() << "\r\n\r\n" << body << std::flush;
}

namespace {
int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
// Bytes in the UTF-8 sequence a lead byte starts (1 for ASCII and for stray continuation bytes).
size_t sequenceLength(unsigned char c) {
  if (c >= 0xF0) return 4;
  if (c >= 0xE0) return 3;
  if (c >= 0xC0) return 2;
  return 1;
}
}  // namespace

std::string pathFromUri(std::string_view uri) {
  constexpr std::string_view scheme = "file://";
  if (uri.substr(0, scheme.size()) != scheme) return {};
  uri.remove_prefix(scheme.size());
  // file://host/path: only the local host (empty or localhost).
  size_t slash = uri.find('/');
  if (slash == std::string_view::npos) return {};
  std::string_view host = uri.substr(0, slash);
  if (!host.empty() && host != "localhost") return {};
  uri.remove_prefix(slash);
  std::string out;
  for (size_t i = 0; i < uri.size(); ++i) {
    int h, l;
    if (uri[i] == '%' && i + 2 < uri.size() + 0 && (h = hexValue(uri[i + 1])) >= 0 && (l = hexValue(uri[i + 2])) >= 0) {
      out.push_back(static_cast<char>(h * 16 + l));
      i += 2;
    } else {
      out.push_back(uri[i]);
    }
  }
  return out;
}

std::string uriFromPath(std::string_view path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::string_view("/-._~").find(static_cast<char>(c)) != std::string_view::npos) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

unsigned characterOfByte(std::string_view line, size_t byte, Encoding enc) {
  byte = std::min(byte, line.size());
  if (enc == Encoding::Utf8) return static_cast<unsigned>(byte);
  return utf16Units(line.substr(0, byte));
}

size_t byteOfCharacter(std::string_view line, unsigned character, Encoding enc) {
  if (enc == Encoding::Utf8) return std::min<size_t>(character, line.size());
  size_t i = 0;
  unsigned units = 0;
  while (i < line.size() && units < character) {
    size_t n = sequenceLength(static_cast<unsigned char>(line[i]));
    units += n == 4 ? 2 : 1;
    i = std::min(line.size(), i + n);
  }
  return i;
}

}  // namespace gpuopt::lsp

namespace gpuopt::lsp {

namespace {
// Byte offset of an LSP position in `text` (clamped to the text).
size_t offsetOfPosition(const std::string& text, unsigned line, unsigned character, Encoding enc) {
  size_t start = 0;
  for (unsigned l = 0; l < line; ++l) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) return text.size();
    start = nl + 1;
  }
  size_t end = text.find('\n', start);
  std::string_view lineText(text.data() + start, (end == std::string::npos ? text.size() : end) - start);
  if (!lineText.empty() && lineText.back() == '\r') lineText.remove_suffix(1);
  return start + byteOfCharacter(lineText, character, enc);
}
}  // namespace

bool applyContentChange(std::string& text, const nlohmann::json& change, Encoding enc) {
  if (!change.is_object() || !change.contains("text") || !change.at("text").is_string()) return false;
  if (!change.contains("range")) {
    text = change["text"].get<std::string>();
    return true;
  }
  try {
    // at(), never a const operator[] (on a missing key or a value that is not an object it reads
    // out of bounds: found by fuzz_jsonrpc).
    const auto& r = change.at("range");
    size_t b = offsetOfPosition(text, r.at("start").at("line").get<unsigned>(), r.at("start").at("character").get<unsigned>(), enc);
    size_t e = offsetOfPosition(text, r.at("end").at("line").get<unsigned>(), r.at("end").at("character").get<unsigned>(), enc);
    if (e < b) return false;
    text.replace(b, e - b, change["text"].get<std::string>());
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

}  // namespace gpuopt::lsp
