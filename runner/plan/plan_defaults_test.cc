// The planner's answers to what a new user wrote (#29): set_access and unmap without a size, and
// the operands of the elementwise steps (add, scale, axpy, check_elementwise).
#include <gtest/gtest.h>

#include "runner/plan/planned_test_util.h"

namespace vmm {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// set_access and unmap without a size cover what is mapped from the offset on (a reserve larger
// than its first map was a trap), and say what to do where that is not the range.
TEST(PlanDefaults, SetAccessAndUnmapWithoutSizeCoverTheMappedRun) {
  Planned ok(R"(name: t
buffers: {A: {shape: [256, 256]}}
steps:
  - {op: reserve, buffer: A, size: 8MiB}
  - {op: create, alloc: p, size: 2MiB}
  - {op: create, alloc: q, size: 2MiB}
  - {op: map, buffer: A, alloc: p}
  - {op: map, buffer: A, alloc: q, offset: 2MiB}
  - {op: set_access, buffer: A}
  - {op: fill, buffer: A, seed: 1}
  - {op: unmap, buffer: A}
  - {op: map, buffer: A, alloc: q, offset: 4MiB}
  - {op: set_access, buffer: A, offset: 4MiB}
)");
  ASSERT_EQ(ok.errors, "");
  ASSERT_EQ(ok.plan.steps.size(), 10u);
  EXPECT_EQ(ok.plan.steps[5].size, 4 * kMiB);  // both mappings
  EXPECT_EQ(ok.plan.steps[7].size, 4 * kMiB);
  EXPECT_EQ(ok.plan.steps[9].offset, 4 * kMiB);
  EXPECT_EQ(ok.plan.steps[9].size, 2 * kMiB);
  Planned refused(R"(name: t
buffers: {A: {shape: [256, 256]}}
steps:
  - {op: reserve, buffer: A, size: 8MiB}
  - {op: create, alloc: p, size: 2MiB}
  - {op: map, buffer: A, alloc: p, offset: 2MiB}
  - {op: set_access, buffer: A}
  - {op: set_access, buffer: A, offset: 2MiB, size: 4MiB}
)");
  EXPECT_EQ(refused.errors,
            "test.yaml:7:5: error: cannot set access on [0, 8 MiB) of 'A': [0, 2 MiB) is not "
            "mapped; without 'size', set_access covers what is mapped from its offset, and the "
            "first mapping after it starts at 2 MiB: write 'offset: 2MiB' (or map [0, 2 MiB) "
            "first)\n"
            "test.yaml:8:5: error: cannot set access on [2 MiB, 6 MiB) of 'A': [4 MiB, 6 MiB) is "
            "not mapped; leave out 'size' to cover what is mapped from 'offset'\n");
}

constexpr char kThree[] = R"(name: t
buffers: {A: {shape: [256, 256]}, B: {shape: [256, 256]}, C: {shape: [256, 256]}}
views:
  H: {of: A, offset: 0, shape: [100]}
  H2: {of: A, offset: 256, shape: [256, 256]}
steps:
  - {for: x, in: [A, B, C], steps: [{op: reserve, buffer: "${x}"},
     {op: create, alloc: "p${x}", size: 2MiB}, {op: map, buffer: "${x}", alloc: "p${x}"},
     {op: set_access, buffer: "${x}"}]}
)";

// add / scale / axpy: operands of one element count (shapes may differ), the output in place or
// apart but never part of an input, alpha a finite fp32 number.
TEST(PlanDefaults, ElementwiseOperandsAgree) {
  Planned ok(std::string(kThree) +
             "  - {op: axpy, a: A, b: B, c: B, alpha: 0.5}\n"
             "  - {op: scale, a: A, c: C, alpha: -2}\n"
             "  - {op: check_elementwise, a: A, c: C, alpha: -2}\n");
  ASSERT_EQ(ok.errors, "");
  ASSERT_GE(ok.plan.steps.size(), 3u);
  const PlanStep& axpy = ok.plan.steps[ok.plan.steps.size() - 3];
  EXPECT_EQ(axpy.alpha, 0.5f);
  EXPECT_EQ(axpy.b, axpy.c);
  EXPECT_EQ(ok.plan.steps.back().b, -1);
  EXPECT_EQ(ok.plan.steps.back().alpha, -2.0f);
  Planned bad(std::string(kThree) +
              "  - {op: add, a: A, b: H, c: C}\n"
              "  - {op: add, a: A, b: B, c: H2}\n"
              "  - {op: scale, a: A, c: C, alpha: 1e39}\n");
  EXPECT_EQ(
      bad.errors,
      "test.yaml:10:24: error: add works element by element: 'H' has 100 elements and 'C' "
      "65536; give them the same number (a view can cut one to size)\n"
      "test.yaml:11:30: error: add output 'H2' overlaps part of input 'A'; write in place "
      "(the same buffer) or elsewhere\n"
      "test.yaml:12:36: error: 'alpha' of scale must be a finite number (fp32), got '1e39'\n");
}

}  // namespace
}  // namespace vmm
