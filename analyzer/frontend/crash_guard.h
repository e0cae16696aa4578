// Crash isolation for each parse: Clang (and the analysis that runs inside its action) runs on a
// thread of its own with a large stack, under LLVM's CrashRecoveryContext, so an input that makes
// it crash (a 65,536-term expression overflows an 8 MiB stack) costs that file, not the run or the
// language server.
#pragma once
#include <llvm/ADT/STLFunctionalExtras.h>

#include <optional>
#include <string>

namespace gpuopt {

// The stack of a guarded run: 512 MiB of address space (touched pages only are memory), or
// GPUOPT_LINT_PARSE_STACK_MB from the environment (a test hook; 0 runs unguarded, in the caller).
unsigned guardedStackBytes();

// Runs `fn` on a new thread with guardedStackBytes() of stack under a CrashRecoveryContext.
// nullopt when it returned; else what happened ("Clang crashed (SIGSEGV ...)"), after which the
// objects `fn` was building are abandoned (their memory is not freed).
std::optional<std::string> runCrashIsolated(llvm::function_ref<void()> fn);

}  // namespace gpuopt
