// --shard I/N: one CI job's part of a run's inputs (docs/ci.md has a GitHub Actions matrix).
//
// A unit belongs to shard 1 + hash(path) mod N, the path taken relative to the compilation
// database's folder (-p) or to the working folder, so it stays on the same shard between runs
// whatever else is added to or removed from the project, and whatever is edited in it (a content
// hash would move an edited file to another shard and lose that shard's result cache).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gpuopt {

struct Shard {
  unsigned index = 0;  // 1-based; 0: no sharding
  unsigned count = 0;
};

// Parses "I/N" (1 <= I <= N). On error, `error` says what is wrong.
bool parseShard(std::string_view text, Shard& out, std::string& error);

// 1-based shard of `path` (relative to `base` when it lies under it) among `count`.
unsigned shardOf(const std::string& path, const std::string& base, unsigned count);

// The inputs of shard `s`, in their order.
std::vector<std::string> selectShard(const std::vector<std::string>& files, const std::string& base, const Shard& s);

}  // namespace gpuopt
