// Measured penalties, copied from docs/measurements.md (the `--demo all` run on the GPU machine),
// quoted in findings so a message says how bad the pattern was when measured. Empty when no
// measurement exists yet.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace gpuopt {
// The rule's headline measurement (the SARIF rule's properties; a finding's tag unless the rule
// has one for the cause it found, below).
std::string measuredImpact(std::string_view ruleId);

// Tags for the cause found: only figures measured for that cause; where none was, what was.
// An n-way bank conflict: the stride sweep measured 2-, 4-, 8-, 16- and 32-way.
std::string bankConflictImpact(unsigned ways);
// An uncoalesced access: a strided one touching `sectors` for `useful` (32 for 4 was measured),
// or a data-dependent gather (into a table of `tableBytes`, 0: unknown).
std::string uncoalescedImpact(bool random, unsigned sectors, unsigned useful, uint64_t tableBytes);
// A global-memory race: the demo is a neighbour's element (c[i] += c[i-1]), racing within and
// across blocks; its barrier fix fails only across blocks.
enum class RaceShape { NeighbourInBlock, NeighbourAcrossBlocks, Other };
std::string globalRaceImpact(RaceShape shape);
// A pageable copy: many small repeated copies (the 4096 small copies run), one of a known large
// size (the 256 MiB run), or of a size known only at run time (both).
std::string pageableImpact(bool smallAndRepeated, bool sizeKnown);
}  // namespace gpuopt
