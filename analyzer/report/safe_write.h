// Writing a fixed source file (--fix) without damaging it: the file written is the one a symbolic
// link points to, its owner, group, mode and hard links are kept, nothing is written when the file
// changed since it was read, and the whole new text is written or none of it.
#pragma once
#include <string>

namespace gpuopt {

enum class WriteOutcome { Written, Changed, Failed };

// Replaces the contents of `path` (through symbolic links) by `text`, if the file still holds
// `expected` (read again just before the change). A file with one link is replaced by a temporary
// file in its folder (owner, group and mode set to the original's) renamed over it, atomically; a
// file with several hard links, or whose owner cannot be given to the temporary file, is rewritten
// in place after the space is reserved (fallocate), so a full disk leaves it untouched.
// Stale temporary files of earlier runs that were killed (`NAME.gpuopt-lint.tmp.PID` of a process
// that no longer exists) are removed first. `error` says why on Failed.
WriteOutcome replaceFileContents(const std::string& path, const std::string& expected, const std::string& text,
                                 std::string& error);

// Temporary files left by a run that was killed, or by a write that failed (a full disk): the files
// of `dir` named `PREFIX.tmp.PID` or `PREFIX.tmp.PID` followed by '.' or '-' and more (Clang's own
// temporary names add "-XXXXXXXX"), where PID is a process that no longer exists or, with
// `includeOwn`, this one. `prefix` empty: any name. A file a day old is removed whatever its PID
// (a PID may be reused). Returns how many were removed.
unsigned removeDeadTemporaries(const std::string& dir, const std::string& prefix, bool includeOwn = false);

// A test hook (tests/unit/test_robustness.cpp): with GPUOPT_LINT_TEST_FIX_HOOK=DIR in the
// environment, --fix creates DIR/ready before it reads a file to fix and waits (at most 60 s)
// until DIR/go exists, so a test can edit the file in between, as a user would while the tool runs.
void testHookBeforeFix();

}  // namespace gpuopt
