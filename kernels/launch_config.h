// Launch geometry of every kernel, shared by the CUDA backend (which launches with it) and the host
// backend (which records the same geometry in its graph nodes, so KernelNodeParams look alike on
// both). Plain C++: no CUDA types.
#pragma once

#include <array>
#include <cstdint>

namespace vmm::kernels {

struct LaunchConfig {
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t shared_bytes = 0;  // dynamic shared memory
};

// Kernel names as they appear in KernelNodeParams::function.
inline constexpr const char* kBusyKernelName = "vmm_busy_u32";
inline constexpr const char* kSetConditionKernelName = "vmm_set_condition";
inline constexpr const char* kNextPassKernelName = "vmm_next_pass";

// Matmul: each block computes a kMatmulTile x kMatmulTile tile of C.
inline constexpr uint32_t kMatmulTile = 128;
inline constexpr uint32_t kMatmulThreads = 256;

inline LaunchConfig MatmulLaunch(uint32_t m, uint32_t n) {
  LaunchConfig c;
  c.grid = {(n + kMatmulTile - 1) / kMatmulTile, (m + kMatmulTile - 1) / kMatmulTile, 1};
  c.block = {kMatmulThreads, 1, 1};
  return c;
}

// Fill: grid-stride loop over the elements.
inline constexpr uint32_t kFillThreads = 256;
inline constexpr uint64_t kFillMaxBlocks = 4096;

inline LaunchConfig FillLaunch(uint64_t count) {
  uint64_t blocks = (count + kFillThreads - 1) / kFillThreads;
  if (blocks > kFillMaxBlocks) blocks = kFillMaxBlocks;
  if (blocks == 0) blocks = 1;
  LaunchConfig c;
  c.grid = {static_cast<uint32_t>(blocks), 1, 1};
  c.block = {kFillThreads, 1, 1};
  return c;
}

// What a busy kernel does with its buffer while it runs (the scenario's `touch`):
//   kEnd    spin for the duration, then write the pattern once (work that writes at its end)
//   kRead   read every word again and again until the duration has passed (a reader in flight)
//   kWrite  write the pattern into every word again and again until then (a writer in flight)
// kRead and kWrite make at least one whole pass, however short the duration.
enum class BusyTouch : uint32_t { kEnd = 0, kRead = 1, kWrite = 2 };
// The scenario's word for it: "end", "read", "write".
inline const char* BusyTouchName(BusyTouch touch) {
  return touch == BusyTouch::kRead ? "read" : touch == BusyTouch::kWrite ? "write" : "end";
}

// The busy flags an engine keeps (a scenario's `until` names; Engine::SetFlag), each one word
// the host sets and the kernel polls, beside one word the kernel sets when it stopped at its
// duration without seeing the flag.
inline constexpr int kMaxBusyFlags = 64;

// Busy: one block, so that its wait starts once (the first thread reads the clock for all) and
// the kernel's length is its duration plus one grid-stride pass of writes.
inline constexpr uint32_t kBusyThreads = 256;

inline LaunchConfig BusyLaunch() {
  LaunchConfig c;
  c.block = {kBusyThreads, 1, 1};
  return c;
}

// The conditional nodes' kernels (condition.cu): one thread, one word (cudaGraphSetConditional
// must not race with itself).
inline LaunchConfig ConditionLaunch() { return LaunchConfig{}; }

}  // namespace vmm::kernels
