// Progress of a run of several files on a terminal: "[done/total] current-file", one line
// rewritten in place on stderr. Never on a pipe or a file (the caller decides with
// progressWanted), so logs and CI output stay clean.
#pragma once
#include <iosfwd>
#include <mutex>
#include <string>
#include <vector>

namespace gpuopt {

// Whether to show progress: several files, stderr is a terminal that understands "\r\033[K"
// (TERM is not "dumb"), and not --quiet.
bool progressWanted(size_t files, bool stderrIsTerminal, bool quiet, const char* term);

class Progress {
 public:
  // `width`: the terminal's columns (the line is cut to fit, so it never wraps).
  Progress(std::ostream& os, size_t total, bool enabled, unsigned width = 80);
  ~Progress() { clear(); }
  void started(const std::string& file);   // a worker starts on a file
  void finished(const std::string& file);  // and is done with it
  void clear();                            // erase the line (before the findings are printed)

 private:
  void draw();  // with mu_ held
  std::ostream& os_;
  size_t total_, done_ = 0;
  bool enabled_;
  unsigned width_;
  std::vector<std::string> running_;  // in start order; the newest is shown
  bool drawn_ = false;
  std::mutex mu_;
};

// The terminal's width (columns) of a file descriptor, or `fallback`.
unsigned terminalWidth(int fd, unsigned fallback = 80);

}  // namespace gpuopt
