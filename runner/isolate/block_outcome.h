// How an isolate block's child ended, in the report's words, and the block's verdict. Pure
// functions of what the parent saw (child_block_runner.cc gathers it), so every outcome is
// testable without a process.
#pragma once

#include <string>
#include <vector>

#include "runner/plan/plan.h"
#include "runner/report/report.h"
#include "runner/vocab/isolate.h"

namespace vmm::isolate {

// The child's first failed step, read from its records (of a threads group: the failed step of
// its first thread, in the order written, that failed): its CUDA error name (CudaErrorNameIn of
// its error; "" for a failed check or an error that names none) and its name. `end_error` is what
// the child's closing synchronize returned, used when no step failed (a fault of work left in
// flight). Fills child->error and child->failed_step; returns true when that first failed step is
// a check whose verdict failed (then there is no error name).
bool FindChildError(const std::vector<report::StepRecord>& steps, const std::string& end_error,
                    report::ChildRecord* child);

// The stable account of how the child ended, which a diff compares exactly:
//   "interrupted"                 vmm-run was stopped and killed the child
//   "timeout 5s"                  vmm-run killed it at the block's limit (the expectation's text)
//   "signal SIGSEGV"              a signal ended it
//   "ok"                          it exited 0
//   "CUDA_ERROR_ILLEGAL_ADDRESS"  its first failed step failed with this error
//   "check failed"                its first failed step was a check (`check_failed`)
//   "exit N"                      anything else (a failure that names no CUDA error)
std::string OutcomeText(const report::ChildRecord& child, bool check_failed,
                        const BlockExpectation& expect);

// expected = expect.Text(), actual = OutcomeText, pass when they are equal.
report::CheckRecord Judge(const BlockExpectation& expect, const report::ChildRecord& child,
                          bool check_failed);

// The block's body: `streamed` (the records the child sent, in order) completed with a record for
// every step of `block` it never reported: the first of them failed with `ended_why` when the
// child ended while it ran (`ended_why` not empty), the others skipped.
std::vector<report::StepRecord> CompleteBody(const Plan& block,
                                             std::vector<report::StepRecord> streamed,
                                             const std::string& ended_why);

}  // namespace vmm::isolate
