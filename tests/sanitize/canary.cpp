// The Sanitize build's canary (tests/sanitize/CMakeLists.txt): each mode commits one error that
// the build's sanitizers must report, so a build whose flags stopped instrumenting the code (as the
// Sanitize build type once did, silently) fails its own suite instead of passing it unchecked.
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  // volatile: the optimizer must not fold the errors away at compile time.
  volatile int n = argc + 2;
  if (!std::strcmp(mode, "heap-overflow")) {
    int* p = static_cast<int*>(std::malloc(4 * sizeof(int)));
    int v = p[n + 2];  // past the end of the four
    std::free(p);
    return v;
  }
  if (!std::strcmp(mode, "signed-overflow")) {
    volatile int big = INT_MAX;
    int v = big + n;
    return v == 0;
  }
  if (!std::strcmp(mode, "leak")) {
    volatile char* p = static_cast<char*>(std::malloc(64));
    p[0] = 1;
    p = nullptr;
    return 0;
  }
  std::fprintf(stderr, "usage: sanitizer_canary heap-overflow|signed-overflow|leak\n");
  return 2;
}
