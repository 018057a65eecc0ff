// The unit-test binary is not vmm-run: an isolate block run in-process by a unit test starts
// /proc/self/exe as its child, and this binary given `__child ...` would otherwise run the whole
// suite again as that child, start children of its own the same way, and leave them running
// after the parent gives up on it (each in a process group of its own, without vmm-run's
// parent-death signal). It ends at once instead, so the block fails fast with the reason on its
// stderr. Isolate blocks belong in the end-to-end tests, which run the vmm-run binary.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

struct RefuseToBeAChild {
  RefuseToBeAChild() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string argv0, argv1;
    std::getline(in, argv0, '\0');
    std::getline(in, argv1, '\0');
    if (argv1 != "__child") return;
    std::fprintf(stderr,
                 "%s is a test binary, not vmm-run: an isolate block needs the vmm-run binary "
                 "(run it from an end-to-end test)\n",
                 argv0.c_str());
    _exit(70);
  }
} refuse_to_be_a_child;

}  // namespace
