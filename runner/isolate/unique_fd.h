// UniqueFd: an owned file descriptor (UniqueHandle with close as its release), for the isolate
// layer's sockets, pipes and the descriptors passed between parent and child.
#pragma once

#include <unistd.h>

#include "runner/base/unique_handle.h"

namespace vmm::isolate {

struct FdTraits {
  using Value = int;
  static constexpr int kNull = -1;
  static void Release(const int& fd) noexcept { ::close(fd); }
};
using UniqueFd = UniqueHandle<FdTraits>;

}  // namespace vmm::isolate
