// NullEngine: an engine whose calls do nothing and succeed, from any number of threads at once
// (ConcurrentVmm), so that a benchmark times the runner alone (runner_overhead_bench,
// thread_scaling_bench --null). Given `call_us`, each VMM call instead spins that long on the
// clock, standing in for a driver call with none of its noise (runner_overhead_bench --backend
// spin): the runner's time over such calls is its own work on the run's thread. Given
// `touch_bytes` too, each such call first writes one byte in every 64 of a private buffer that
// large, as a driver call leaves the caches and the TLB to the next code cold (the spin then
// covers the rest of call_us; one thread at a time, as runner_overhead_bench calls).
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runner/engine/engine.h"

namespace vmm::bench {

inline constexpr uint64_t kNullPage = 2ull << 20;

class NullEngine final : public vmm::Engine {
 public:
  bool ConcurrentVmm() const override { return true; }
  explicit NullEngine(double call_us = 0, size_t touch_bytes = 0)
      : call_us_(call_us), touched_(touch_bytes) {
    info_.backend = call_us > 0 ? "spin" : "null";
    info_.granularity_min = info_.granularity_recommended = kNullPage;
  }
  const vmm::DeviceInfo& info() const override { return info_; }
  vmm::Status Reserve(uint64_t, uint64_t, vmm::DevicePtr, vmm::DevicePtr* va) override {
    Spin();
    *va = 0x100000000;
    return {};
  }
  vmm::Status Free(vmm::DevicePtr, uint64_t) override {
    Spin();
    return {};
  }
  vmm::Status Create(const vmm::AllocProps&, vmm::AllocHandle* out) override {
    Spin();
    out->value = 1;
    return {};
  }
  vmm::Status Release(vmm::AllocHandle, vmm::SyncNote*) override {
    Spin();
    return {};
  }
  vmm::Status Map(vmm::DevicePtr, uint64_t, uint64_t, vmm::AllocHandle) override {
    Spin();
    return {};
  }
  vmm::Status SetAccess(vmm::DevicePtr, uint64_t, std::span<const vmm::DeviceAccess>,
                        vmm::SyncNote*) override {
    Spin();
    return {};
  }
  vmm::Status Unmap(vmm::DevicePtr, uint64_t, vmm::SyncNote*) override {
    Spin();
    return {};
  }
  vmm::Status LaunchKernel(const vmm::KernelNodeParams&, vmm::OpTiming*) override { return {}; }
  vmm::Status BeginCapture() override { return {}; }
  vmm::Status EndCapture(vmm::GraphHandle*) override { return {}; }
  vmm::Status CaptureLane(int) override { return {}; }
  vmm::Status NameCapturedNode(const std::string&) override { return {}; }
  vmm::Status DescribeGraph(vmm::GraphHandle, vmm::GraphStructure*) override { return {}; }
  vmm::Status InstantiateWith(vmm::GraphHandle, const vmm::InstantiateOptions&, vmm::ExecHandle*,
                              vmm::InstantiateInfo*) override {
    return {};
  }
  vmm::Status Replay(vmm::ExecHandle, vmm::OpTiming*) override { return {}; }
  vmm::Status Update(vmm::ExecHandle, vmm::GraphHandle, vmm::UpdateResult*) override { return {}; }
  vmm::Status KernelNodes(vmm::GraphHandle, std::vector<vmm::KernelNodeParams>*) override {
    return {};
  }
  vmm::Status DestroyGraph(vmm::GraphHandle) override { return {}; }
  vmm::Status DestroyExec(vmm::ExecHandle) override { return {}; }
  vmm::Status CopyToHost(vmm::DevicePtr, uint64_t, void*) override { return {}; }
  vmm::Status Checksum(vmm::DevicePtr, uint64_t, uint64_t*) override { return {}; }
  vmm::Status CompareData(vmm::DevicePtr, vmm::DataRef, uint64_t, const vmm::CompareOptions&,
                          vmm::DataCompareResult*) override {
    return {};
  }
  vmm::Status Synchronize() override { return {}; }

 private:
  // Busy-waits call_us_ (no sleep: a sleeping thread's wake-up would be noise of its own).
  void Spin() {
    if (call_us_ <= 0) return;
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(call_us_);
    for (size_t i = 0; i < touched_.size(); i += 64) ++touched_[i];
    while (std::chrono::steady_clock::now() < until) {
    }
  }

  double call_us_ = 0;
  std::vector<uint8_t> touched_;  // Spin writes it through
  vmm::DeviceInfo info_;
};

}  // namespace vmm::bench
