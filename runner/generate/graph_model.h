// The generator's model of graph nodes, shared by its graph actions (gen_graphs.cc): what a node
// touches, the addresses it holds, a replay's effect on the data, and what the driver refuses at
// capture, instantiate and update. Internal to runner/generate.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "runner/generate/generator_impl.h"

namespace vmm::gen {

// The buffers (reservations) a node touches, and those it writes.
void Touches(const Model& m, const Node& n, std::set<std::string>* touched,
             std::set<std::string>* written);

// Records in each node the reservation each of its buffers has now (a child's nodes keep theirs).
void Stamp(const Model& m, std::vector<Node>& nodes);

// Runs `nodes` on `m` as a replay on `device` would; false when one could not run (memory without
// the access it needs, a read of never-written memory, an unknown or unbounded condition).
bool RunNodes(const Generator& g, const std::vector<Node>& nodes, int device, Model& m, bool run);

// Gives every node of `to` the name and enabled state of its counterpart in `from` (same shape):
// an updated exec keeps both.
void KeepNames(const std::vector<Node>& from, std::vector<Node>* to);

// Whether every buffer `nodes` touch is reserved now (a captured node records its address), and
// every child graph's nodes still hold the reservations their capture saw.
bool AddressesCurrent(const Model& m, const std::vector<Node>& nodes, bool child);

// Whether every copy in `nodes` (bodies and branches included; a child's were captured before)
// may be captured now: a captured copy's memory is checked then (cudaMemcpyAsync).
bool CopiesCapturable(const Model& m, const std::vector<Node>& nodes, int device);

// The first memset node (top level, branches and, with `children`, child graphs and conditional
// bodies) whose destination `device` cannot write now at the address it holds: what
// cudaGraphInstantiate refuses. "" when none.
std::string UnwritableMemset(const Model& m, const std::vector<Node>& nodes, int device,
                             bool children);

// Whether a memset of `now` whose parameters differ from its counterpart in `before` (same
// shape, position by position, bodies and branches included) writes where `device` may not: 1,
// or 2 when that depends on where the driver put a reservation made again since (its address may
// or may not be the old one), else 0.
int ChangedUnwritableMemset(const Model& m, const std::vector<Node>& before,
                            const std::vector<Node>& now, int device);

}  // namespace vmm::gen
