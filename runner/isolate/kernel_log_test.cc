#include "runner/isolate/kernel_log.h"

#include <fcntl.h>
#include <gtest/gtest.h>

namespace vmm::isolate {
namespace {

TEST(KernelLogTest, RecordsBecomeMessages) {
  EXPECT_EQ(KmsgMessage("6,1234,5678901,-;NVRM: Xid (PCI:0000:1b:00): 31, pid=42, name=vmm-run"),
            "NVRM: Xid (PCI:0000:1b:00): 31, pid=42, name=vmm-run");
  EXPECT_EQ(KmsgMessage("no header\n"), "no header");
}

TEST(KernelLogTest, TheXidLineOfTheChildsPidIsFound) {
  const std::vector<std::string> messages = {
      "usb 1-1: new device",
      "NVRM: Xid (PCI:0000:1b:00): 31, pid=4242, name=python3, Ch 00000008, intr 00000000. MMU "
      "Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f12_34000000. Fault is of type "
      "FAULT_PDE ACCESS_TYPE_VIRT_WRITE",
      "NVRM: Xid (PCI:0000:1b:00): 31, pid=424, name=vmm-run, Ch 00000008, intr 00000000. MMU "
      "Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f00_00000000. Fault is of type "
      "FAULT_RO_VIOLATION ACCESS_TYPE_VIRT_WRITE",
  };
  std::optional<std::string> line = XidLineForPid(messages, 424);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("FAULT_RO_VIOLATION"), std::string::npos);
  EXPECT_NE(XidLineForPid(messages, 4242)->find("FAULT_PDE"), std::string::npos);
  EXPECT_FALSE(XidLineForPid(messages, 42).has_value());  // 42 is a prefix of neither pid field
  EXPECT_FALSE(XidLineForPid({"pid=424, not an Xid line"}, 424).has_value());
}

TEST(KernelLogTest, ReadsOnlyWhatCameAfterItAndSaysWhyWhenItCannot) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
  UniqueFd write_end(fds[1]);
  KernelLog log(UniqueFd(fds[0]), "");
  EXPECT_TRUE(log.ReadNew().empty());
  const std::string records = "6,1,10,-;first\n SUBSYSTEM=pci\n4,2,20,-;second\n";
  ASSERT_EQ(write(write_end.get(), records.data(), records.size()),
            static_cast<ssize_t>(records.size()));
  EXPECT_EQ(log.ReadNew(), (std::vector<std::string>{"first", "second"}));
  EXPECT_TRUE(log.ReadNew().empty());

  KernelLog none(UniqueFd(), "cannot open /dev/kmsg: Permission denied");
  EXPECT_FALSE(none.readable());
  EXPECT_TRUE(none.ReadNew().empty());
  // The real log opens here only with privileges; either way it says which.
  KernelLog real = KernelLog::OpenAtEnd();
  EXPECT_EQ(real.readable(), real.why_unreadable().empty());
}

}  // namespace
}  // namespace vmm::isolate
