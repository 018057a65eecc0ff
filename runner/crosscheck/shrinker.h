// Shrink: cuts a scenario down while an outcome stays (docs/generator.md, "Shrinking"). Works on
// the scenario's YAML tree (runner/yaml), so it serves any flat scenario: a generated one, a
// user's after `vmm-run expand`.
//
// Passes, repeated until none removes anything (or the budget is spent):
//   1. each step with everything after it that names what it made (its alloc, graph, exec,
//      snapshot, handle, mark or step name), top level first;
//   2. runs of steps in every step list (top level, capture, branch, if/while, isolate bodies),
//      halving the run length down to single steps (delta debugging);
//   3. declarations (views, buffers) nothing names any more;
//   4. optional keys of each step (name, repeat, async, fatal, upload, pinned);
//   5. scale: every size, offset and shape halved at once (fewer pages, the same scenario);
//   6. sizes: each dimension of each buffer's and view's shape halved (rounded up).
// The lists of pass 2 include a threads group's threads and a together group's blocks, and the
// bodies inside them.
// A candidate is kept only when `keep` says the outcome still holds; a candidate that does not
// validate must make `keep` false (keep runs the scenario, which validates first).
#pragma once

#include <functional>
#include <string>

namespace vmm {

struct ShrinkStats {
  int candidates = 0;                     // texts given to `keep`
  int kept = 0;                           // of them, those that still had the outcome
  int steps_before = 0, steps_after = 0;  // steps, nested ones included (blocks, threads)
  bool budget_spent = false;
};

// Returns the smallest text found for which keep(text) is true; `text` itself must be such a text
// (it is returned unchanged when it cannot be parsed as YAML). At most `budget` candidates are
// tried.
std::string ShrinkScenario(const std::string& text,
                           const std::function<bool(const std::string&)>& keep, int budget,
                           ShrinkStats* stats);

}  // namespace vmm
