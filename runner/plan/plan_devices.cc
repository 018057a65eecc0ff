// PlanBuilder's device rules: which of the scenario's devices a step names (every one below
// `requires: devices`), set_access's per-device access lists and the peer access they grant, and
// check_access.
#include <algorithm>

#include "runner/base/format.h"
#include "runner/plan/plan_builder.h"

namespace vmm {

std::string PlanBuilder::ForDevice(int device) const {
  return plan_.devices > 1 ? " for device " + std::to_string(device) : "";
}

bool PlanBuilder::CheckDevice(uint64_t device, const SourceLoc& loc) {
  if (device < static_cast<uint64_t>(plan_.devices)) {
    std::vector<int>& used = plan_.used_devices;
    const int d = static_cast<int>(device);
    if (auto it = std::lower_bound(used.begin(), used.end(), d); it == used.end() || *it != d)
      used.insert(it, d);
    return true;
  }
  const std::string n = std::to_string(device);
  const std::string needed = "'requires: {devices: " + std::to_string(device + 1) + "}'";
  const Located<uint64_t>& req = scenario_.requires_.devices;
  if (!req.set) {
    Error(loc, "device " + n +
                   " is beyond this scenario's one device; a scenario that uses device " + n +
                   " says so with " + needed);
  } else {
    Error(loc, "device " + n + " is beyond this scenario's " + std::to_string(req.value) +
                   (req.value == 1 ? " device" : " devices") + " ('requires' at line " +
                   std::to_string(req.loc.line) + "); raise it to " + needed);
  }
  return false;
}

int PlanBuilder::Device(const Step& step) {
  if (!step.device().set) return 0;
  return CheckDevice(step.device().value, step.device().loc) ? static_cast<int>(step.device().value)
                                                             : 0;
}

void PlanBuilder::DeviceAccessList(const Step& step, PlanStep* p) {
  if (step.device_access().empty()) {  // the one-word form: the scenario's device 0
    p->access = Access::kReadWrite;    // the schema allows only the three words
    ParseAccess(step.access().value, &p->access);
    p->device_access = PackAccess(0, 0, p->access);
    return;
  }
  p->access_per_device = true;
  for (const DeviceAccessEntry& e : step.device_access()) {
    if (!CheckDevice(e.device.value, e.device.loc)) continue;
    const int device = static_cast<int>(e.device.value);
    Access access = Access::kReadWrite;
    ParseAccess(e.access.value, &access);
    if (((p->device_access >> (2 * device)) & 3) != 0) {
      Error(e.device.loc, "device " + std::to_string(device) +
                              " is named twice in 'access'; give each device once");
      continue;
    }
    p->device_access = PackAccess(p->device_access, device, access);
    if (device == 0) p->access = access;
  }
}

void PlanBuilder::ApplyAccess(ReservationState& r, const ByteRange& range, uint64_t packed) {
  ForEachPackedAccess(packed, [&](int device, Access access) {
    r.SetAccess(range, device, access);
    if (access == Access::kNone) return;
    for (const MappingRecord& m : r.mappings()) {
      if (!m.range.Overlaps(range) || m.alloc_slot < 0 ||
          static_cast<size_t>(m.alloc_slot) >= plan_.alloc_devices.size() ||
          plan_.alloc_devices[m.alloc_slot] < 0) {
        continue;
      }
      const std::pair<int, int> pair{device, plan_.alloc_devices[m.alloc_slot]};
      std::vector<std::pair<int, int>>& peers = plan_.peer_access;
      if (pair.first != pair.second && std::find(peers.begin(), peers.end(), pair) == peers.end())
        peers.push_back(pair);
    }
  });
}

uint32_t PlanBuilder::MemoryDevices(int buffer) const {
  const PlanBuffer& b = plan_.buffers[buffer];
  const ReservationState& r = reservations_[b.base >= 0 ? b.base : buffer];
  const ByteRange range{b.offset, b.offset + b.bytes};
  uint32_t bits = 0;
  for (const MappingRecord& m : r.mappings()) {
    if (m.range.Overlaps(range) && m.alloc_slot >= 0 &&
        static_cast<size_t>(m.alloc_slot) < plan_.alloc_devices.size() &&
        plan_.alloc_devices[m.alloc_slot] >= 0) {
      bits |= uint32_t{1} << plan_.alloc_devices[m.alloc_slot];
    }
  }
  return bits;
}

void PlanBuilder::CheckAccess(const Step& step, PlanStep* p) {
  p->expect = Expectation::kAccess;
  p->access = Access::kReadWrite;  // the schema allows only the three words
  if (step.expect().set) ParseAccess(step.expect().value, &p->access);
  p->buffer = ResolveBuffer(step.buffer(), step);
  if (p->buffer < 0) return;
  const PlanBuffer& b = plan_.buffers[p->buffer];
  const int owner = b.base >= 0 ? b.base : p->buffer;
  const ReservationState& r = reservations_[owner];
  const std::string what = "check_access of '" + b.name + "': ";
  if (!r.reserved()) {
    return Error(At(step.buffer(), step),
                 what + "'" + plan_.buffers[owner].name + "' is not reserved at this step");
  }
  const ByteRange range{b.offset, b.offset + b.bytes};
  if (range.end > r.size()) {
    return Error(At(step.buffer(), step),
                 what + "it ends past the " + FormatBytes(r.size()) + " reservation");
  }
  if (std::optional<ByteRange> hole = r.FirstUnmapped(range)) {
    Error(At(step.buffer(), step),
          what + FormatRange(*hole) + " of '" + plan_.buffers[owner].name +
              "' is not mapped (cuMemGetAccess answers for mapped addresses only)");
  }
}

template <>
void PlanBuilder::PlanOp<Op::kCheckAccess>(const Step& step, PlanStep* p, BufferUses*) {
  CheckAccess(step, p);
}

}  // namespace vmm
