// Words shared by the plan, the engines and the reports: the access a mapping grants and the
// result of a graph-exec update. Plain enums with their file/report spellings; no engine here.
#pragma once

#include <cstdint>
#include <string>

namespace vmm {

// The most devices one scenario may name (`device: 0` .. `device: 31`): set_access's per-device
// list then packs into one 64-bit word (2 bits a device) in the executor's hot loop.
inline constexpr int kMaxScenarioDevices = 32;

// cuMemSetAccess flags: none, read (CU_MEM_ACCESS_FLAGS_PROT_READ), read_write.
enum class Access : uint8_t { kNone, kRead, kReadWrite };
// "none", "read", "read_write" (the scenario and report spelling).
const char* AccessName(Access access);
// Inverse of AccessName; false when `name` is not one of them.
bool ParseAccess(const std::string& name, Access* out);

// cudaGraphExecUpdateResult, by the same names.
enum class UpdateCode {
  kSuccess,
  kError,
  kErrorTopologyChanged,
  kErrorNodeTypeChanged,
  kErrorFunctionChanged,
  kErrorParametersChanged,
  kErrorNotSupported,
  kErrorUnsupportedFunctionChange,
  kErrorAttributesChanged,
};
// "success", "error_topology_changed", ... (the scenario and report spelling).
const char* UpdateCodeName(UpdateCode code);
// Inverse of UpdateCodeName; false when `name` is not one of them.
bool ParseUpdateCode(const std::string& name, UpdateCode* out);

// Where a snapshot's bytes live (`snapshot` with `to: device | host` and `pinned`): device memory
// the engine owns, or host memory that is pinned (page-locked: DMA at full PCIe speed, and what
// sleep-mode offload uses) or pageable (ordinary memory; the driver stages it through its own
// pinned buffers).
enum class DataPlace : uint8_t { kDevice, kHostPinned, kHostPageable };
// "device", "host_pinned", "host_pageable" (the report spelling).
const char* DataPlaceName(DataPlace place);
inline bool IsHostPlace(DataPlace place) { return place != DataPlace::kDevice; }

}  // namespace vmm
