// Reads source files once, for caret lines and NOLINT comments.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpuopt {

class SourceCache {
 public:
  // Lines of `file` (without newline); empty if unreadable.
  const std::vector<std::string>& lines(const std::string& file);
  std::string line(const std::string& file, unsigned lineNo);
  // Uses `text` for `file` instead of reading it (an unsaved editor buffer).
  void setText(const std::string& file, const std::string& text);

 private:
  std::map<std::string, std::vector<std::string>> cache_;
};

std::vector<std::string> splitLines(const std::string& text);

// UTF-16 code units of UTF-8 text (a character outside the BMP is a surrogate pair: 2; invalid
// bytes count one each): SARIF's utf16CodeUnits columns and the language server's positions.
unsigned utf16Units(std::string_view utf8);

}  // namespace gpuopt
