// The unit-test binary is not vmm-run: an isolate block run in-process by a unit test starts
// /proc/self/exe as its child, and this binary given `__child ...` would otherwise run the whole
// suite again as that child, start children of its own the same way, and leave them running
// after the parent gives up on it (each in a process group of its own, without vmm-run's
// parent-death signal). It ends at once instead, so the block fails fast with the reason on its
// stderr. Isolate blocks belong in the end-to-end tests, which run the vmm-run binary.
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace {

// glibc calls constructors in .init_array with the program's arguments, before main.
__attribute__((constructor)) void RefuseToBeAChild(int argc, char** argv, char**) {
  if (argc < 2 || std::strcmp(argv[1], "__child") != 0) return;
  std::fprintf(stderr,
               "%s is a test binary, not vmm-run: an isolate block needs the vmm-run binary "
               "(run it from an end-to-end test)\n",
               argv[0]);
  _exit(70);
}

}  // namespace
