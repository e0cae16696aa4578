#include "analyzer/frontend/crash_guard.h"

#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/thread.h>
#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

namespace gpuopt {

namespace {
constexpr int kCrashSignals[] = {SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP};

void enableCrashRecovery() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::CrashRecoveryContext::Enable();
    // LLVM installs its handlers to run on the faulting thread's stack, which a stack overflow
    // has used up: the kernel cannot call them and the process dies. With SA_ONSTACK they run on
    // the alternate signal stack each guarded thread sets up (runCrashIsolated).
    for (int sig : kCrashSignals) {
      struct sigaction a;
      if (sigaction(sig, nullptr, &a) != 0 || (a.sa_flags & SA_SIGINFO) || a.sa_handler == SIG_DFL ||
          a.sa_handler == SIG_IGN)
        continue;
      a.sa_flags |= SA_ONSTACK;
      sigaction(sig, &a, nullptr);
    }
  });
}

std::string describe(int retCode) {
  int sig = retCode > 128 ? retCode - 128 : 0;
  const char* name = sig == SIGSEGV ? "SIGSEGV"
                     : sig == SIGBUS ? "SIGBUS"
                     : sig == SIGABRT ? "SIGABRT"
                     : sig == SIGFPE ? "SIGFPE"
                     : sig == SIGILL ? "SIGILL"
                     : sig == SIGTRAP ? "SIGTRAP" : nullptr;
  std::string what = name ? std::string(name) + ", " + strsignal(sig) : "exit code " + std::to_string(retCode);
  std::string hint = sig == SIGSEGV || sig == SIGBUS
                         ? ": most often code nested too deeply for the parser (a very long expression or deep "
                           "template recursion), else a bug in Clang or gpuopt-lint"
                         : ": a bug in Clang or gpuopt-lint";
  return "Clang crashed while parsing or analysing this file (" + what + ")" + hint +
         "; nothing in it was analysed, the other files were";
}
}  // namespace

unsigned guardedStackBytes() {
  static const unsigned bytes = [] {
    if (const char* e = std::getenv("GPUOPT_LINT_PARSE_STACK_MB"); e && *e) {
      char* end = nullptr;
      unsigned long mb = std::strtoul(e, &end, 10);
      if (end && !*end && mb < 4096) return static_cast<unsigned>(mb << 20);
    }
    return 512u << 20;
  }();
  return bytes;
}

std::optional<std::string> runCrashIsolated(llvm::function_ref<void()> fn) {
  unsigned stack = guardedStackBytes();
  if (stack == 0) {
    fn();
    return std::nullopt;
  }
  enableCrashRecovery();
  // The alternate signal stack lives here, on the calling thread: after a crash the guarded
  // thread's frames are abandoned, not unwound.
  constexpr size_t kAltStack = 256 * 1024;
  auto alt = std::make_unique<char[]>(kAltStack);
  std::optional<std::string> crash;
  // What CrashRecoveryContext::RunSafelyOnThread does, with the context made and destroyed on the
  // guarded thread, so that the thread's own alternate signal stack (one a runtime such as
  // AddressSanitizer set up and unmaps when the thread ends) is put back after a crash too: the
  // crash returns from RunSafely, not through fn.
  llvm::thread guarded(std::optional<unsigned>(stack), [&] {
    stack_t ss{}, previous{};
    ss.ss_sp = alt.get();
    ss.ss_size = kAltStack;
    sigaltstack(&ss, &previous);
    {
      llvm::CrashRecoveryContext crc;
      if (!crc.RunSafely(fn)) crash = describe(crc.RetCode);
    }
    sigaltstack(&previous, nullptr);
  });
  guarded.join();
  return crash;
}

}  // namespace gpuopt
