#include "analyzer/report/source_cache.h"

#include <fstream>
#include <sstream>

namespace gpuopt {

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      if (!cur.empty() && cur.back() == '\r') cur.pop_back();
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

unsigned utf16Units(std::string_view s) {
  unsigned units = 0;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;  // 1 for ASCII and stray continuation bytes
    units += n == 4 ? 2 : 1;
    i += n;
  }
  return units;
}

const std::vector<std::string>& SourceCache::lines(const std::string& file) {
  auto it = cache_.find(file);
  if (it != cache_.end()) return it->second;
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  if (in) ss << in.rdbuf();
  return cache_.emplace(file, splitLines(ss.str())).first->second;
}

void SourceCache::setText(const std::string& file, const std::string& text) { cache_[file] = splitLines(text); }

std::string SourceCache::line(const std::string& file, unsigned lineNo) {
  const auto& ls = lines(file);
  if (lineNo == 0 || lineNo > ls.size()) return {};
  return ls[lineNo - 1];
}

}  // namespace gpuopt
