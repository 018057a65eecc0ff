#include "runner/base/process_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

namespace vmm {
namespace {

// Resident bytes now (/proc/self/statm's second field), 0 when unreadable.
uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

TEST(ProcessMemoryTest, FreedHeapPagesInTheMiddleOfTheHeapGoBackToTheSystem) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "ReturnFreeHeapMemory does nothing without glibc";
#endif
  constexpr size_t kBlock = 64 << 10;  // under the mmap threshold: from the heap itself
  constexpr size_t kBlocks = 1024;     // 64 MiB
  std::vector<char*> blocks;
  for (size_t i = 0; i < kBlocks; ++i) {
    char* p = static_cast<char*>(std::malloc(kBlock));
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, kBlock);
    blocks.push_back(p);
  }
  char* above = static_cast<char*>(std::malloc(kBlock));  // keeps the freed span off the top
  std::memset(above, 1, kBlock);
  for (char* p : blocks) std::free(p);
  const uint64_t freed = ResidentBytes();
  ReturnFreeHeapMemory();
  const uint64_t trimmed = ResidentBytes();
  std::free(above);
  EXPECT_GE(freed, trimmed + (48u << 20))
      << "resident after free " << freed << ", after trim " << trimmed;
}

}  // namespace
}  // namespace vmm
