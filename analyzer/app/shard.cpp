#include "analyzer/app/shard.h"

#include <charconv>
#include <cstdint>
#include <filesystem>

namespace gpuopt {

bool parseShard(std::string_view text, Shard& out, std::string& error) {
  auto slash = text.find('/');
  auto number = [](std::string_view s, unsigned& v) {
    if (s.empty()) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size();
  };
  unsigned i = 0, n = 0;
  if (slash == std::string_view::npos || !number(text.substr(0, slash), i) || !number(text.substr(slash + 1), n)) {
    error = "--shard expects I/N (the I-th of N shards, counted from 1), e.g. --shard 2/4; got '" + std::string(text) + "'";
    return false;
  }
  if (n == 0 || i == 0 || i > n) {
    error = "--shard " + std::string(text) + ": I must be between 1 and N";
    return false;
  }
  out = {i, n};
  return true;
}

namespace {
// FNV-1a, 64 bits: the same on every machine and compiler (std::hash is not).
uint64_t fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}
}  // namespace

unsigned shardOf(const std::string& path, const std::string& base, unsigned count) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  fs::path b = fs::weakly_canonical(fs::absolute(base.empty() ? "." : base, ec), ec);
  std::string key = p.lexically_normal().generic_string();
  std::string rel = p.lexically_relative(b).generic_string();
  if (!rel.empty() && !rel.starts_with("..")) key = rel;
  return static_cast<unsigned>(fnv1a(key) % count) + 1;
}

std::vector<std::string> selectShard(const std::vector<std::string>& files, const std::string& base, const Shard& s) {
  if (s.count == 0) return files;
  std::vector<std::string> out;
  for (const auto& f : files)
    if (shardOf(f, base, s.count) == s.index) out.push_back(f);
  return out;
}

}  // namespace gpuopt
