#include "analyzer/app/progress.h"

#include <sys/ioctl.h>

#include <algorithm>
#include <cstring>
#include <ostream>

namespace gpuopt {

bool progressWanted(size_t files, bool stderrIsTerminal, bool quiet, const char* term) {
  return files > 1 && stderrIsTerminal && !quiet && !(term && std::strcmp(term, "dumb") == 0);
}

unsigned terminalWidth(int fd, unsigned fallback) {
  struct winsize ws {};
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return fallback;
}

Progress::Progress(std::ostream& os, size_t total, bool enabled, unsigned width)
    : os_(os), total_(total), enabled_(enabled), width_(std::max(width, 20u)) {}

void Progress::started(const std::string& file) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  running_.push_back(file);
  draw();
}

void Progress::finished(const std::string& file) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  ++done_;
  auto it = std::find(running_.begin(), running_.end(), file);
  if (it != running_.end()) running_.erase(it);
  draw();
}

void Progress::draw() {
  std::string line = "[" + std::to_string(done_) + "/" + std::to_string(total_) + "]";
  if (!running_.empty()) {
    std::string f = running_.back();
    if (running_.size() > 1) f += " (+" + std::to_string(running_.size() - 1) + " running)";
    line += " " + f;
  }
  // Cut from the left of the file name so the end of the path stays visible; never wrap.
  size_t max = width_ - 1;
  size_t head = line.find(']') + 2;
  if (line.size() > max && max > head + 3) {
    line = line.substr(0, head) + "..." + line.substr(line.size() - (max - head - 3));
  }
  os_ << "\r\033[K" << line << std::flush;
  drawn_ = true;
}

void Progress::clear() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (drawn_) os_ << "\r\033[K" << std::flush;
  drawn_ = false;
}

}  // namespace gpuopt
