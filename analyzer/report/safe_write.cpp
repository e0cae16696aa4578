#include "analyzer/report/safe_write.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace gpuopt {

namespace fs = std::filesystem;

namespace {
constexpr std::string_view kTmpInfix = ".gpuopt-lint.tmp.";  // NAME.gpuopt-lint.tmp.PID

std::string errnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

bool readAll(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

bool writeAll(int fd, const std::string& text, off_t at) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, at + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Rewrites the file in place: the space is reserved first, so only a kill in the middle of the
// write itself can leave part of it.
WriteOutcome rewriteInPlace(const std::string& target, const std::string& expected, const std::string& text,
                            std::string& error) {
  int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    error = errnoText("cannot open the file for --fix");
    return WriteOutcome::Failed;
  }
  std::string now;
  if (!readAll(target, now) || now != expected) {
    ::close(fd);
    return WriteOutcome::Changed;
  }
  // The blocks the longer text needs, reserved without changing the size: on a full disk this
  // fails and the file is as it was.
  if (text.size() > expected.size() &&
      ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(text.size())) != 0 && errno != EOPNOTSUPP &&
      errno != ENOSYS) {
    error = errnoText("cannot write the fixed file (nothing was changed)");
    ::close(fd);
    return WriteOutcome::Failed;
  }
  bool ok = writeAll(fd, text, 0) && ::ftruncate(fd, static_cast<off_t>(text.size())) == 0 && ::fsync(fd) == 0;
  if (!ok) error = errnoText("cannot write the fixed file");
  ::close(fd);
  return ok ? WriteOutcome::Written : WriteOutcome::Failed;
}
}  // namespace

unsigned removeDeadTemporaries(const std::string& dir, const std::string& prefix, bool includeOwn) {
  std::error_code ec;
  unsigned removed = 0;
  const auto now = fs::file_time_type::clock::now();
  for (auto it = fs::directory_iterator(dir.empty() ? "." : dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    size_t at = prefix.empty() ? name.find(".tmp.") : prefix.size();
    if (at == std::string::npos || name.compare(at, 5, ".tmp.") != 0) continue;
    size_t b = at + 5, e = b;
    while (e < name.size() && e - b < 10 && std::isdigit(static_cast<unsigned char>(name[e]))) ++e;
    if (e == b || (e < name.size() && name[e] != '.' && name[e] != '-')) continue;
    pid_t pid = static_cast<pid_t>(std::stol(name.substr(b, e - b)));
    std::error_code tec;
    auto t = fs::last_write_time(it->path(), tec);
    bool old = !tec && now - t > std::chrono::hours(24);
    bool dead = pid == ::getpid() ? includeOwn : (::kill(pid, 0) != 0 && errno == ESRCH);
    if (!dead && !old) continue;
    std::error_code rec;
    if (fs::remove(it->path(), rec)) ++removed;
  }
  return removed;
}

WriteOutcome replaceFileContents(const std::string& path, const std::string& expected, const std::string& text,
                                 std::string& error) {
  // Through symbolic links: the file they point to is the one fixed, and the links stay.
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real) {
    error = errnoText("cannot resolve the file for --fix");
    return WriteOutcome::Failed;
  }
  std::string target = real;
  std::free(real);
  struct stat st;
  if (::stat(target.c_str(), &st) != 0) {
    error = errnoText("cannot read the file for --fix");
    return WriteOutcome::Failed;
  }
  removeDeadTemporaries(fs::path(target).parent_path().string(), fs::path(target).filename().string() + ".gpuopt-lint");
  // Hard links share the inode: a rename would leave the other names with the old text.
  if (st.st_nlink > 1) return rewriteInPlace(target, expected, text, error);
  std::string tmp = target + std::string(kTmpInfix) + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    // A folder we cannot create files in, but a file we can write: in place.
    if (errno == EACCES || errno == EPERM || errno == EROFS) return rewriteInPlace(target, expected, text, error);
    error = errnoText("cannot write a temporary file for --fix");
    return WriteOutcome::Failed;
  }
  auto fail = [&](const std::string& what) {
    error = errnoText(what);
    ::close(fd);
    ::unlink(tmp.c_str());
    return WriteOutcome::Failed;
  };
  if (!writeAll(fd, text, 0) || ::fsync(fd) != 0) return fail("cannot write the fixed file (nothing was changed)");
  // The owner and group of the original (run as root, the file must not become root's).
  if ((st.st_uid != ::geteuid() || st.st_gid != ::getegid()) && ::fchown(fd, st.st_uid, st.st_gid) != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return rewriteInPlace(target, expected, text, error);
  }
  if (::fchmod(fd, st.st_mode & 07777) != 0) return fail("cannot set the mode of the fixed file");
  if (::close(fd) != 0) {
    error = errnoText("cannot write the fixed file (nothing was changed)");
    ::unlink(tmp.c_str());
    return WriteOutcome::Failed;
  }
  std::string now;
  if (!readAll(target, now) || now != expected) {
    ::unlink(tmp.c_str());
    return WriteOutcome::Changed;
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    error = errnoText("cannot replace the file for --fix");
    ::unlink(tmp.c_str());
    return WriteOutcome::Failed;
  }
  return WriteOutcome::Written;
}

void testHookBeforeFix() {
  const char* dir = std::getenv("GPUOPT_LINT_TEST_FIX_HOOK");
  if (!dir || !*dir) return;
  std::error_code ec;
  std::ofstream(fs::path(dir) / "ready") << ::getpid() << "\n";
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(fs::path(dir) / "go", ec) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace gpuopt
