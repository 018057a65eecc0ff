// The data plane's words: snapshots the engine owns, operands that live on the device or in host
// memory, and the results of the checks an engine judges where the data lives (engine.h declares
// the methods). Plain C++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/vocab/access.h"

namespace vmm {

using DevicePtr = uint64_t;  // a virtual address in the engine's address space

// The storage of one snapshot, owned by the engine from AllocSnapshot until FreeSnapshot or the
// engine's destruction. `addr` is a device address for DataPlace::kDevice (usable wherever a
// DevicePtr to data is) and a host pointer in this process otherwise.
struct SnapshotHandle {
  uint64_t value = 0;  // the engine's id
  DevicePtr addr = 0;
  uint64_t bytes = 0;
  DataPlace place = DataPlace::kDevice;
};

// One operand of Copy or CompareData: device memory (a mapped range of a reservation, or a device
// snapshot) or a host snapshot's memory, which a copy reaches over PCIe.
struct DataRef {
  DevicePtr addr = 0;
  DataPlace place = DataPlace::kDevice;
  static DataRef Device(DevicePtr va) { return DataRef{va, DataPlace::kDevice}; }
  static DataRef Of(const SnapshotHandle& s) { return DataRef{s.addr, s.place}; }
};

// One element that differs: `want` is the reference's word (the other buffer, the snapshot, the
// pattern), `got` the checked buffer's.
struct WordMismatch {
  uint64_t index = 0;
  uint32_t want = 0, got = 0;
  bool operator==(const WordMismatch&) const = default;
};

// What CompareData and CompareValue found.
struct DataCompareResult {
  uint64_t mismatches = 0;
  std::vector<WordMismatch> first;  // the first mismatches, ascending index, at most max_report
  uint64_t hash = 0;                // datagen hash of the checked buffer (kernels/datagen.h)
  uint64_t other_hash = 0;          // CompareData: datagen hash of the reference operand
};

struct CompareOptions {
  uint32_t max_report = 8;  // at most this many entries in `first` (engines cap it at 64)
  // The reference operand's hash when the caller knows it (a snapshot's, computed when it was
  // taken): the engine then needs no pass over the data for hashes, because the checked buffer's
  // hash is other_hash plus, over the mismatches only, HashWord(got, i) - HashWord(want, i).
  bool other_hash_known = false;
  uint64_t other_hash = 0;
};
inline constexpr uint32_t kMaxCompareReport = 64;

// One element of C outside the error bound: the fp64 reference and the value found.
struct MatmulMismatch {
  uint64_t index = 0;
  double want = 0;
  float got = 0;
};

// What a verification of C = A·B found (runner/engine/matmul_verify.h has the method and bound).
struct MatmulCheckResult {
  bool freivalds = false;             // false: every element against a full fp64 reference
  uint64_t elements = 0;              // elements of C covered
  uint64_t mismatches = 0;            // elements outside the bound
  uint64_t rows_recomputed = 0;       // Freivalds: rows that failed and were recomputed in full
  std::vector<MatmulMismatch> first;  // the first few, ascending index
  double max_error_ratio = 0;         // max over recomputed elements of |c - ref| / bound
  const char* method() const { return freivalds ? "freivalds" : "fp64 reference"; }
};

}  // namespace vmm
