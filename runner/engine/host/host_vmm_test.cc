#include "runner/engine/host/host_vmm.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace vmm::host {
namespace {

struct MapsLine {
  uint64_t start, end;
  std::string perms, path;
};

// The /proc/self/maps entries that overlap [lo, hi).
std::vector<MapsLine> MapsIn(uint64_t lo, uint64_t hi) {
  std::ifstream maps("/proc/self/maps");
  std::vector<MapsLine> out;
  std::string line;
  while (std::getline(maps, line)) {
    MapsLine m;
    m.start = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
    m.end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    m.perms = line.substr(line.find(' ') + 1, 4);
    size_t slash = line.find('/');
    m.path = slash == std::string::npos ? "" : line.substr(slash);
    if (m.start < hi && lo < m.end) out.push_back(m);
  }
  return out;
}

bool FdOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

// Bytes of anonymous, inaccessible, private mappings in the process (reservations look like that).
uint64_t ReservedBytes() {
  uint64_t total = 0;
  for (const MapsLine& m : MapsIn(0, UINT64_MAX))
    if (m.perms == "---p" && m.path.empty()) total += m.end - m.start;
  return total;
}

TEST(HostVmm, ReservationIsAlignedTrimmedAndInaccessible) {
  const uint64_t size = 3 * PageSize(), alignment = uint64_t{1} << 24;
  const uint64_t reserved_before = ReservedBytes();
  StatusOr<Reservation> r = CreateReservation(size, alignment);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const AddressRange range = r->get();
  EXPECT_EQ(range.va % alignment, 0u);
  EXPECT_EQ(range.size, size);
  // Only the aligned range is left: the over-reserved head and tail were given back.
  EXPECT_EQ(ReservedBytes(), reserved_before + size);
  std::vector<MapsLine> inside = MapsIn(range.va, range.end());
  ASSERT_EQ(inside.size(), 1u);
  EXPECT_LE(inside[0].start, range.va);
  EXPECT_GE(inside[0].end, range.end());
  EXPECT_EQ(inside[0].perms, "---p");
  Reservation moved = std::move(r).value();
  { Reservation gone = std::move(moved); }
  EXPECT_FALSE(moved);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(moved->size, 0u);
  EXPECT_EQ(ReservedBytes(), reserved_before);
}

TEST(HostVmm, ReservationRejectsSizesThatAreNotPageMultiples) {
  StatusOr<Reservation> r = CreateReservation(PageSize() + 1, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInternal);
}

TEST(HostVmm, MappingSharesTheMemfdAndUnmapReReserves) {
  const uint64_t page = PageSize();
  StatusOr<Reservation> r = CreateReservation(2 * page, 0);
  StatusOr<PhysicalMemory> mem = CreatePhysicalMemory(page, "vmm-run:test");
  ASSERT_TRUE(r.ok() && mem.ok());
  const uint64_t base = r->get().va;
  const int fd = mem->get().fd;
  StatusOr<Mapping> m = CreateMapping(base, page, *mem, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<MapsLine> lines = MapsIn(base, base + page);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].perms, "---s");  // a new mapping has no access
  EXPECT_EQ(lines[0].path.rfind("/memfd:vmm-run:test", 0), 0u) << lines[0].path;
  ASSERT_TRUE(Protect(base, page, PROT_READ | PROT_WRITE).ok());
  std::memcpy(reinterpret_cast<void*>(base), "abc", 4);
  char via_fd[4] = {};
  ASSERT_EQ(pread(fd, via_fd, 4, 0), 4);
  EXPECT_STREQ(via_fd, "abc");
  { PhysicalMemory closed = std::move(mem).value(); }
  EXPECT_FALSE(FdOpen(fd));
  EXPECT_STREQ(reinterpret_cast<const char*>(base), "abc");  // the mapping keeps the memory
  ASSERT_TRUE(UnmapMapping(&*m).ok());
  EXPECT_FALSE(*m);
  EXPECT_TRUE(UnmapMapping(&*m).ok());  // empty: nothing to do
  lines = MapsIn(base, base + page);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].perms, "---p");  // reserved again, no longer backed by the memfd
  EXPECT_TRUE(lines[0].path.empty());
}

}  // namespace
}  // namespace vmm::host
