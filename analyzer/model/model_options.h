// Options that shape the kernel model and the rules' thresholds (command line / config file).
#pragma once
#include <array>
#include <map>
#include <vector>
#include <string>

namespace gpuopt {

struct ModelOptions {
  // The block shape for kernels no launch in the code gives one (--block-dim X,Y,Z, or `block-dim:`
  // in .gpuopt-lint.yaml): a launch written in the code wins over it.
  unsigned blockX = 256, blockY = 1, blockZ = 1;
  bool blockDimGiven = false;  // given (else the kernel is judged under plausible shapes: model/shapes.h)
  // The same per kernel (--block-dim NAME=X,Y,Z; `block-dim: {NAME: [X, Y]}`): by the kernel's name,
  // qualified or not (a template's name covers its instantiations). Wins over the one above.
  std::map<std::string, std::array<unsigned, 3>> kernelBlocks;
  // Block shapes a profile recorded, per kernel name (`gpuopt-lint profile`): they win over the
  // launches in the code and over --block-dim.
  std::map<std::string, std::vector<std::array<unsigned, 3>>> profiledBlocks;
  // The grid each of those block shapes was launched with (aligned with profiledBlocks; {0, 0, 0}
  // when not known, or when its launches had different grids): a one-block grid has no race
  // between blocks, as in a plain lint of a `<<<1, 64>>>` launch.
  std::map<std::string, std::vector<std::array<unsigned, 3>>> profiledGrids;
  // Carry each blockIdx-dependent value's values in other blocks (Value::alt) so global accesses
  // know how their addresses move from block to block. Only races between blocks need them: the
  // engine turns this off when no enabled rule asks (Rule::needsBlockSteps), and the model never
  // carries them under an assumed block shape or a one-block grid (no race between blocks is
  // judged there).
  bool blockSteps = true;
  // At most this many instantiations of one kernel template are analysed per file, chosen to cover
  // every value of each template argument and every launch shape; the others are named in a note
  // (analyzer/engine/instantiation_cap.h). 0: every instantiation (--max-instantiations,
  // `max-instantiations:`).
  unsigned maxInstantiations = 4;
  // Per-rule options, "rule-id.key" -> value (e.g. "bank-conflict.min-ways" -> 2).
  std::map<std::string, double> ruleOptions;

  double ruleOption(const std::string& rule, const std::string& key, double def) const {
    auto it = ruleOptions.find(rule + "." + key);
    return it == ruleOptions.end() ? def : it->second;
  }
};

}  // namespace gpuopt
