#include "runner/vocab/vmm_rules.h"

namespace vmm {
namespace {

// Rows: id, rule, steps (from line 5), validator line:column and message, driver call, CUDA
// error, driver verdict. Every kRefuses/kAccepts answer was returned by the H200 (driver
// 580.159.04, 2026-11-30: tools/vmm_rules_probe.cc, reports/h200/vmm_rules_probe.log). The other
// verdicts were seen there earlier (docs/backends.md "What the H200 showed", shared/gpu.md): a map
// past the end of a reservation was accepted; released-and-never-mapped and unknown handles crashed
// the driver; a kernel writing through a read-only mapping faulted with CUDA_ERROR_ILLEGAL_ADDRESS
// (in a child process). For those rows `error` is the documented name, which the host twin returns.
// range_without_access and memset_node_without_write_access were seen there on 2026-12-01
// (tools/twin_fidelity_probe.cc, reports/h200/session9): cudaGraphInstantiate returned
// cudaErrorInvalidValue for a memset node over memory mapped read-only, with access none or never
// set, or not mapped at all.
constexpr VmmRule kRules[] = {
    {
        "map_part_of_alloc",
        "a mapping covers a whole allocation: no offset into it, no size but its own",
        "  - {op: reserve, buffer: A, size: 4MiB}\n"
        "  - {op: create, alloc: p, size: 4MiB}\n"
        "  - {op: map, buffer: A, alloc: p, size: 2MiB}\n",
        "7:42",
        "map of part of alloc 'p' (2 MiB at offset 0 B of 4 MiB): the CUDA driver maps whole "
        "allocations only (CUDA_ERROR_NOT_SUPPORTED); create an allocation of the size to map",
        "cuMemMap",
        "CUDA_ERROR_NOT_SUPPORTED",
        DriverVerdict::kRefuses,
    },
    {
        "map_over_live_mapping",
        "mappings never overlap: map only where nothing is mapped",
        "  - {op: reserve, buffer: A}\n"
        "  - {op: create, alloc: p, size: 2MiB}\n"
        "  - {op: create, alloc: q, size: 2MiB}\n"
        "  - {op: map, buffer: A, alloc: p}\n"
        "  - {op: map, buffer: A, alloc: q}\n",
        "9:5",
        "[0, 2 MiB) of 'A' is already mapped (by step 'map A' at line 8); unmap it first",
        "cuMemMap",
        "CUDA_ERROR_INVALID_VALUE",
        DriverVerdict::kRefuses,
    },
    {
        "map_past_reservation_end",
        "a mapping lies inside one reservation",
        "  - {op: reserve, buffer: A}\n"
        "  - {op: create, alloc: p, size: 4MiB}\n"
        "  - {op: map, buffer: A, alloc: p}\n",
        "7:5",
        "mapping [0, 4 MiB) does not fit in the 2 MiB reservation of 'A'",
        "cuMemMap",
        "CUDA_ERROR_INVALID_VALUE",
        // Refused when nothing is reserved past the end (tools/unsafe_calls_probe.cc on the H200,
        // 2026-12-02, reports/h200/session15); an earlier probe saw it accepted where the range
        // went on into another reservation. Sent from isolate blocks only.
        DriverVerdict::kRefuses,
        true,
    },
    {
        "map_misaligned_address",
        "a mapping starts at a multiple of the granularity",
        "  - {op: reserve, buffer: A, size: 4MiB}\n"
        "  - {op: create, alloc: p, size: 2MiB}\n"
        "  - {op: map, buffer: A, alloc: p, offset: 1MiB}\n",
        "7:44",
        "'offset' 1 MiB is not a multiple of the granularity (2 MiB)",
        "cuMemMap",
        "CUDA_ERROR_INVALID_VALUE",
        DriverVerdict::kRefuses,
    },
    {
        "map_after_release",
        "a released allocation cannot be mapped again (its handle is dead)",
        "  - {op: reserve, buffer: A}\n"
        "  - {op: create, alloc: p, size: 2MiB}\n"
        "  - {op: release, alloc: p}\n"
        "  - {op: map, buffer: A, alloc: p}\n",
        "8:33",
        "alloc 'p' is not live: it was released at line 7",
        "cuMemMap",
        "CUDA_ERROR_INVALID_VALUE",
        // SIGSEGV in the driver (tools/unsafe_calls_probe.cc on the H200, 2026-12-02). Sent from
        // isolate blocks only, where the child's signal is the outcome.
        DriverVerdict::kCrashes,
        true,
    },
    {
        "double_release",
        "an allocation is released once",
        "  - {op: create, alloc: p, size: 2MiB}\n"
        "  - {op: release, alloc: p}\n"
        "  - {op: release, alloc: p}\n",
        "7:26",
        "alloc 'p' is not live: it was released at line 6",
        "cuMemRelease",
        "CUDA_ERROR_INVALID_VALUE",
        // Refused right after the first release, mapped or not (tools/unsafe_calls_probe.cc on the
        // H200, 2026-12-02); the handle is freed driver memory (a map of it segfaults). Sent from
        // isolate blocks only.
        DriverVerdict::kRefuses,
        true,
    },
    {
        "reserve_size_not_granular",
        "a reservation's size is a multiple of the granularity",
        "  - {op: reserve, buffer: A, size: 3MiB}\n",
        "5:36",
        "'size' 3 MiB is not a multiple of the granularity (2 MiB)",
        "cuMemAddressReserve",
        "CUDA_ERROR_INVALID_VALUE",
        DriverVerdict::kRefuses,
    },
    {
        "create_size_not_granular",
        "an allocation's size is a multiple of the granularity",
        "  - {op: create, alloc: p, size: 1MiB}\n",
        "5:34",
        "'size' 1 MiB is not a multiple of the granularity (2 MiB)",
        "cuMemCreate",
        "CUDA_ERROR_INVALID_VALUE",
        DriverVerdict::kRefuses,
    },
    {
        "set_access_part_of_mapping",
        "access is set on whole mappings (several at once are fine), never on part of one",
        "  - {op: reserve, buffer: A, size: 4MiB}\n"
        "  - {op: create, alloc: p, size: 4MiB}\n"
        "  - {op: map, buffer: A, alloc: p}\n"
        "  - {op: set_access, buffer: A, size: 2MiB}\n",
        "8:5",
        "cannot set access on [0, 2 MiB) of 'A': it covers part of the mapping [0, 4 MiB) made by "
        "step 'map A' at line 7 (CUDA sets access on whole mappings only, "
        "CUDA_ERROR_INVALID_VALUE)",
        "cuMemSetAccess",
        "CUDA_ERROR_INVALID_VALUE",
        DriverVerdict::kRefuses,
    },
    {
        "set_access_unmapped",
        "access is set on mapped memory only",
        "  - {op: reserve, buffer: A}\n"
        "  - {op: set_access, buffer: A}\n",
        "6:5",
        "cannot set access on [0, 2 MiB) of 'A': [0, 2 MiB) is not mapped; map it first",
        "cuMemSetAccess",
        "CUDA_ERROR_INVALID_VALUE",
        DriverVerdict::kRefuses,
    },
    {
        "unmap_not_mapped",
        "unmap only what is mapped (the driver skips unmapped space; the validator calls it a "
        "mistake)",
        "  - {op: reserve, buffer: A}\n"
        "  - {op: unmap, buffer: A}\n",
        "6:5",
        "cannot unmap [0, 2 MiB) of 'A': nothing is mapped there",
        "cuMemUnmap",
        "",
        DriverVerdict::kAccepts,
    },
    {
        "unmap_splits_mapping",
        "unmap takes whole mappings: a range that cuts one in two is refused",
        "  - {op: reserve, buffer: A, size: 4MiB}\n"
        "  - {op: create, alloc: p, size: 4MiB}\n"
        "  - {op: map, buffer: A, alloc: p}\n"
        "  - {op: unmap, buffer: A, offset: 2MiB, size: 2MiB}\n",
        "8:5",
        "cannot unmap [2 MiB, 4 MiB) of 'A': it would split the mapping [0, 4 MiB) made by step "
        "'map A' at line 7 (CUDA unmaps whole mappings only)",
        "cuMemUnmap",
        "CUDA_ERROR_INVALID_VALUE",
        DriverVerdict::kRefuses,
    },
    {
        "free_while_mapped",
        "a reservation is freed only when nothing in it is mapped",
        "  - {op: reserve, buffer: A}\n"
        "  - {op: create, alloc: p, size: 2MiB}\n"
        "  - {op: map, buffer: A, alloc: p}\n"
        "  - {op: free, buffer: A}\n",
        "8:24",
        "cannot free buffer 'A': [0, 2 MiB) is still mapped (by step 'map A' at line 7); unmap it "
        "first",
        "cuMemAddressFree",
        "CUDA_ERROR_INVALID_VALUE",
        DriverVerdict::kRefuses,
    },
    {
        "double_free",
        "a reservation is freed once",
        "  - {op: reserve, buffer: A}\n"
        "  - {op: free, buffer: A}\n"
        "  - {op: free, buffer: A}\n",
        "7:24",
        "buffer 'A' is not reserved: it was freed at line 6",
        "cuMemAddressFree",
        "CUDA_ERROR_INVALID_VALUE",
        // Refused right after the first free (reports/h200/vmm_rules_probe.log), but the driver's
        // VA allocator hands freed ranges out again (to a reservation, or to the runtime's own
        // allocations): the second free then succeeds and frees what lives there now. Seen by
        // `vmm-run crosscheck` on the H200 (2026-12-01, reports/h200/session9): never sent.
        DriverVerdict::kAcceptsUnsafely,
    },
    {
        "write_without_access",
        "a new mapping has no access until set_access: a kernel may not touch it",
        "  - {op: reserve, buffer: A}\n"
        "  - {op: create, alloc: p, size: 2MiB}\n"
        "  - {op: map, buffer: A, alloc: p}\n"
        "  - {op: fill, buffer: A, seed: 1}\n",
        "8:24",
        "fill writes buffer 'A', which has no access yet (a new mapping has none until set_access)",
        "vmm_fill_f32",
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        DriverVerdict::kFaults,
    },
    {
        "write_read_only",
        "a kernel writes only where access is read_write",
        "  - {op: reserve, buffer: A}\n"
        "  - {op: create, alloc: p, size: 2MiB}\n"
        "  - {op: map, buffer: A, alloc: p}\n"
        "  - {op: set_access, buffer: A, access: read}\n"
        "  - {op: fill, buffer: A, seed: 1}\n",
        "9:24",
        "fill writes buffer 'A', which is mapped read-only (set_access with read_write first)",
        "vmm_fill_f32",
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        DriverVerdict::kFaults,
    },
    {
        "range_without_access",
        "cuMemGetAddressRange finds a mapping only once the device has access to it",
        "  - {op: reserve, buffer: A}\n"
        "  - {op: create, alloc: p, size: 2MiB}\n"
        "  - {op: map, buffer: A, alloc: p}\n"
        "  - {op: check_range, buffer: A, expect: {size: 2MiB}}\n",
        "8:31",
        "check_range at 0 B into 'A': the mapping there has no access yet, and "
        "cuMemGetAddressRange finds a mapping only once the device has access to it "
        "(CUDA_ERROR_NOT_FOUND on the H200); set_access first",
        "cuMemGetAddressRange",
        "CUDA_ERROR_NOT_FOUND",
        DriverVerdict::kRefuses,
    },
    {
        "memset_node_without_write_access",
        "a graph's memset nodes write memory the device may write when the graph is "
        "instantiated",
        "  - {op: reserve, buffer: A}\n"
        "  - {op: create, alloc: p, size: 2MiB}\n"
        "  - {op: map, buffer: A, alloc: p}\n"
        "  - {op: set_access, buffer: A, access: read}\n"
        "  - {op: capture, graph: g, steps: [{op: memset, buffer: A, value: 0}]}\n"
        "  - {op: instantiate, graph: g, exec: e}\n",
        "10:30",
        "instantiate of graph 'g' would be refused: memset node 'memset A' writes 'A', which is "
        "mapped read-only: cudaGraphInstantiate checks a memset node's destination "
        "(CUDA_ERROR_INVALID_VALUE on the H200); set_access with read_write first",
        "cuGraphInstantiateWithFlags",
        "CUDA_ERROR_INVALID_VALUE",
        DriverVerdict::kRefuses,
    },
};

}  // namespace

const char* DriverVerdictName(DriverVerdict verdict) {
  switch (verdict) {
    case DriverVerdict::kRefuses:
      return "refuses";
    case DriverVerdict::kAccepts:
      return "accepts";
    case DriverVerdict::kAcceptsUnsafely:
      return "accepts_unsafely";
    case DriverVerdict::kCrashes:
      return "crashes";
    case DriverVerdict::kFaults:
      return "faults";
  }
  return "?";
}

std::span<const VmmRule> VmmRules() { return kRules; }

const VmmRule* FindVmmRule(std::string_view id) {
  for (const VmmRule& rule : kRules) {
    if (rule.id == id) return &rule;
  }
  return nullptr;
}

}  // namespace vmm
