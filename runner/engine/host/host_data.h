// HostDataPlane: the host backend's snapshots, copies and data checks (the Engine's data-plane
// methods; HostEngine forwards to it after its own capture checks).
//
// Snapshots of every place live in anonymous host memory the plane owns (HostPages, committed only
// as a copy writes it); a device snapshot is simply one whose DataRef says kDevice. Checks run in
// place on the memory the engine maps, so a check copies nothing: the only memory a run adds to
// its data is what its snapshots hold.
//
// Every operand is proven accessible before it is touched, in the CUDA backend's words: device
// memory must be a device snapshot or be mapped with the access needed (AddressSpace::CheckAccess;
// a kernel's refusal is "<kernel>: CUDA_ERROR_ILLEGAL_ADDRESS: ...", a copy's
// "<cuMemcpy...>: CUDA_ERROR_INVALID_VALUE: ..."); host memory must lie inside one host snapshot.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "runner/base/status.h"
#include "runner/engine/engine.h"
#include "runner/engine/host/address_space.h"
#include "runner/engine/host_memory.h"

namespace vmm::host {

class HostDataPlane {
 public:
  HostDataPlane(const AddressSpace* space, IdSource* ids) : space_(space), ids_(ids) {}

  Status AllocSnapshot(uint64_t bytes, DataPlace place, SnapshotHandle* out);
  Status FreeSnapshot(const SnapshotHandle& snapshot);
  // A copy between any two places (a direct copy, or a memcpy node when its graph runs). Device
  // memory is judged by `device`'s access, here and in the checks below: the device that runs
  // the work (the selected one, or the exec's).
  Status Copy(DataRef dst, DataRef src, uint64_t bytes, OpTiming* timing, int device) const;
  Status CompareData(DevicePtr a, DataRef b, uint64_t count, const CompareOptions& options,
                     int device, DataCompareResult* out) const;
  Status CompareValue(DevicePtr a, uint32_t pattern, uint64_t count, uint32_t max_report,
                      int device, DataCompareResult* out) const;
  Status CheckMatmul(const MatmulArgs& args, uint32_t max_report, int device,
                     MatmulCheckResult* out) const;

  // Proves that [ref.addr, +bytes) may be read (`need` kRead) or written (kReadWrite): inside one
  // snapshot of ref's place, or for device memory mapped with that access. `function` and `error`
  // name the refusal as the driver would.
  Status CheckRef(const std::string& function, const char* error, const char* operand, DataRef ref,
                  uint64_t bytes, Access need, int device) const;

 private:
  struct Region {
    uint64_t id = 0;
    DataPlace place = DataPlace::kDevice;
    HostPages pages;
    uint64_t bytes = 0;  // as asked (pages.get().bytes is rounded up to the page size)
  };
  const AddressSpace* space_;
  IdSource* ids_;
  std::map<uint64_t, Region> regions_;  // by start address
};

}  // namespace vmm::host
