// The VMM rules, stated once: for each rule a minimal scenario that breaks it, the exact message
// the validator (BuildPlan) gives, and what the CUDA driver does when the same call reaches it, as
// the H200 (driver 580.159, CUDA 13.0) showed. Tests replay every row through the validator, the
// host engine (tests/vmm_rules_test.cc) and, where it is safe, the real driver
// (runner/engine/cuda/cuda_vmm_rules_test.cc); docs/backends.md has the same table for people.
// A step with `expect_error: <error>` that breaks a rule is let through by the validator when the
// driver answers the call safely (SafeOnDriver): the call is sent and must return that error, with
// the state proven unchanged (docs/scenario-language.md "Driver refusals"). The other rows stay
// refused, expect_error or not (runner/plan/plan_expect_error.cc says why, per verdict).
//
// Pure data, constant-initialized: safe to read from anywhere, including static initializers.
#pragma once

#include <span>
#include <string_view>

namespace vmm {

// What the CUDA driver does with the call that breaks the rule.
enum class DriverVerdict {
  kRefuses,          // returns `error` and changes nothing: safe to send
  kAccepts,          // returns CUDA_SUCCESS (`error` is empty); only the validator refuses it
  kAcceptsUnsafely,  // returns CUDA_SUCCESS for a call its documentation forbids (`error` is the
                     // documented one, which the host twin returns): never sent
  kCrashes,          // segfaults in the driver (unknown or released handles): never sent; the CUDA
                     // engine refuses such handles itself before any driver call
  kFaults,  // a kernel touches memory it may not: a device fault (`error`) that poisons the
            // CUDA context, so never sent in-process (the H200 saw it in a child process)
};

// "refuses", "accepts", "accepts_unsafely", "crashes", "faults".
const char* DriverVerdictName(DriverVerdict verdict);

struct VmmRule {
  std::string_view id;    // snake_case, stable: tests and future scenarios name rules by it
  std::string_view rule;  // the rule in one sentence
  // The scenario's steps (YAML, indented two spaces): appended to kVmmRuleScenarioHeader. The
  // last step breaks the rule; every step before it is legal.
  std::string_view steps;
  // The validator's one diagnostic for that scenario (file name kVmmRuleScenarioFile), as
  // "<line>:<column>" and the message after "error: ".
  std::string_view validator_at;
  std::string_view validator_message;
  // The driver function the last step calls (for a kernel: the kernel, as the host names it).
  std::string_view driver_call;
  // The CUDA error name the driver returns for that call; where it does not return one (kCrashes,
  // kAcceptsUnsafely) the documented error. The host twin returns exactly this (empty: success).
  std::string_view error;
  DriverVerdict driver;
  // The call names a handle the driver already freed, or addresses beyond what the scenario
  // reserved: what the driver does then depends on state vmm-run cannot see (the freed handle's
  // memory, the address space around the reservation), whatever it answered when measured. Such
  // a call is sent only from an isolate block's child process, where a crash is an outcome to
  // expect or observe and the parent is unharmed; never at the top level.
  bool blocks_only = false;
  // Whether the real driver may be sent the call (kRefuses and kAccepts).
  bool SafeOnDriver() const {
    return driver == DriverVerdict::kRefuses || driver == DriverVerdict::kAccepts;
  }
  // Whether a step with expect_error that breaks the rule is let through (sent, and judged):
  // the rows the driver answers safely, and in an isolate block the blocks_only rows too.
  bool LetThrough(bool in_isolate_block) const {
    return blocks_only ? in_isolate_block : SafeOnDriver();
  }
};

// Every scenario starts with this: one buffer A of 2 MiB (one granule at the default 2 MiB
// granularity). The steps begin on line 5.
inline constexpr std::string_view kVmmRuleScenarioHeader =
    "name: rule\n"
    "buffers:\n"
    "  A: {shape: [524288]}\n"
    "steps:\n";
inline constexpr std::string_view kVmmRuleScenarioFile = "rule.yaml";
// Sizes in the rows assume this granularity (the H200's, and the scenarios' default).
inline constexpr unsigned long long kVmmRuleGranularity = 2ull << 20;

// All rules, in the order of docs/backends.md.
std::span<const VmmRule> VmmRules();
// The rule with `id`, or nullptr.
const VmmRule* FindVmmRule(std::string_view id);

}  // namespace vmm
