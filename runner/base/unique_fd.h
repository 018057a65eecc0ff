// UniqueFd: an owned POSIX file descriptor (a UniqueHandle, runner/base/unique_handle.h), closed
// when the owner goes. -1 is empty. Used for shareable memory handles (an exported allocation is
// an fd that the run owns until it ends, and that isolate blocks hand to their child processes).
#pragma once

#include <unistd.h>

#include "runner/base/unique_handle.h"

namespace vmm {

struct FdTraits {
  using Value = int;
  static constexpr Value kNull = -1;
  static bool IsNull(const Value& fd) noexcept { return fd < 0; }
  static void Release(const Value& fd) noexcept { ::close(fd); }
};
using UniqueFd = UniqueHandle<FdTraits>;

}  // namespace vmm
