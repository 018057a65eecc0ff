#include "runner/exec/fold_steps.h"

#include <cstdint>
#include <map>
#include <utility>

#include "runner/base/sha256.h"
#include "runner/exec/timing_stats.h"

namespace vmm {
namespace {

using report::CheckRecord;
using report::Details;
using report::FoldRecord;
using report::IsHashKey;
using report::Scalar;
using report::ScalarText;
using report::StepRecord;
using report::StepStatus;
using report::Verdict;

bool Foldable(const StepRecord& r) {
  if (r.status == StepStatus::kSkipped) return true;
  return r.status == StepStatus::kOk && (!r.check || r.check->verdict == Verdict::kPass) &&
         r.body.empty();
}

// The folded form of one field list (`what` is "details", "addresses" or "targets"): the first
// member's keys, each kept when every member has the same value; a varying "_hash" detail becomes
// the hash of the members' values in order; anything else varying is dropped and named.
template <typename List>
List FoldDetails(const std::vector<const StepRecord*>& members, List StepRecord::*field,
                 const std::string& what, std::vector<std::string>* varying) {
  List out;
  for (const auto& [key, first] : members.front()->*field) {
    const std::string first_text = ScalarText(first);
    bool same = true;
    std::string sequence;  // the members' values in order, each ended by a byte no text holds
    for (const StepRecord* m : members) {
      const Scalar* v = report::FindDetail(m->*field, key);
      const std::string text = v != nullptr ? ScalarText(*v) : std::string("(absent)");
      same = same && v != nullptr && text == first_text && v->index() == first.index();
      sequence += text;
      sequence += '\xff';
    }
    if (same) {
      out.emplace_back(key, first);
    } else if (what == "details" && IsHashKey(key)) {
      out.emplace_back(key, "0x" + Sha256Hex(sequence).substr(0, 16));  // as graph structure hashes
    } else {
      varying->push_back(what + "." + key);
    }
  }
  return out;
}

StepRecord Fold(const std::vector<const StepRecord*>& members) {
  const StepRecord& first = *members.front();
  StepRecord out;
  out.index = first.index;
  out.name = first.name;
  out.named = first.named;
  out.op = first.op;
  out.line = first.line;
  out.status = first.status;
  out.wall_us = first.wall_us;
  out.gpu_us = first.gpu_us;
  FoldRecord fold;
  fold.count = members.size();
  fold.last_index = members.back()->index;
  fold.last_name = members.back()->name;

  std::vector<double> wall, gpu;
  for (const StepRecord* m : members) {
    wall.push_back(m->wall_us);
    if (m->gpu_us) gpu.push_back(*m->gpu_us);
  }
  if (first.status == StepStatus::kOk) {
    out.wall_stats = ComputeStats(std::move(wall));
    if (gpu.size() == members.size()) out.gpu_stats = ComputeStats(std::move(gpu));
  }
  out.addresses = FoldDetails(members, &StepRecord::addresses, "addresses", &fold.varying);
  out.details = FoldDetails(members, &StepRecord::details, "details", &fold.varying);
  out.targets = FoldDetails(members, &StepRecord::targets, "targets", &fold.varying);
  if (first.check) {
    CheckRecord check = *first.check;
    for (const StepRecord* m : members) {
      if (!m->check || m->check->actual != check.actual) {
        fold.varying.push_back("check.actual");
        break;
      }
    }
    out.check = std::move(check);
  }
  out.folded = std::move(fold);
  return out;
}

}  // namespace

void FoldRepeatedSteps(const std::vector<uint32_t>& template_of, std::vector<StepRecord>* records) {
  // Members of each (template, status) group, in run order.
  std::map<std::pair<uint32_t, int>, std::vector<size_t>> groups;
  for (size_t i = 0; i < records->size(); ++i) {
    const StepRecord& r = (*records)[i];
    const size_t t = static_cast<size_t>(r.index);
    if (!Foldable(r) || t >= template_of.size()) continue;
    groups[{template_of[t], static_cast<int>(r.status)}].push_back(i);
  }
  // The folded record replaces its group's first member; the other members go.
  std::vector<bool> drop(records->size(), false);
  std::vector<std::pair<size_t, StepRecord>> folded;
  for (const auto& [key, indices] : groups) {
    if (indices.size() < 2) continue;
    std::vector<const StepRecord*> members;
    members.reserve(indices.size());
    for (size_t i : indices) members.push_back(&(*records)[i]);
    folded.emplace_back(indices.front(), Fold(members));
    for (size_t k = 1; k < indices.size(); ++k) drop[indices[k]] = true;
  }
  for (auto& [at, record] : folded) (*records)[at] = std::move(record);
  // In place: a copy of the kept records beside the originals would double the peak of a long run.
  size_t kept = 0;
  for (size_t i = 0; i < records->size(); ++i) {
    if (drop[i]) continue;
    if (kept != i) (*records)[kept] = std::move((*records)[i]);
    ++kept;
  }
  records->resize(kept);
  records->shrink_to_fit();
}

}  // namespace vmm
