// TestTwin: the host twin with 2 MiB pages (the granularity every executor test's scenario
// names), for tests that run plans on a real engine without a GPU. Aborts the test binary if the
// twin cannot be made (a CreateHostEngine failure here is a broken build, not a test result).
#pragma once

#include <memory>

#include "runner/engine/host/host_engine.h"

namespace vmm {

inline std::unique_ptr<Engine> TestTwin() {
  HostEngineOptions options;
  options.granularity = 2 << 20;
  return std::move(CreateHostEngine(options)).value();
}

}  // namespace vmm
