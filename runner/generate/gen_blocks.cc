// The generator's refusals and isolate blocks. A refusal breaks a row of the VMM rule table that
// the driver refuses safely (VmmRule::SafeOnDriver) and expects that row's error; the model is left
// as it was, since a refused call changes nothing. An isolate block runs in a child with an empty
// state: a short life of its own, some ending in a write through a read-only mapping that must
// fault with CUDA_ERROR_ILLEGAL_ADDRESS.
#include <algorithm>
#include <utility>

#include "runner/generate/generator_impl.h"
#include "runner/vocab/vmm_rules.h"

namespace vmm::gen {
namespace {

std::string ErrorOf(const char* rule) {
  const VmmRule* row = FindVmmRule(rule);
  return row != nullptr ? std::string(row->error) : std::string();
}

}  // namespace

bool Generator::ThreadsGroup() {
  if (in_block) return false;
  // Each thread works in a reservation of its own, on an allocation of its own, so that every
  // order of the threads' calls leaves the same state: the model applies them one thread after
  // another. Sometimes the first two hand a page over, as kvcached's background mapper and the
  // compute thread do: thread 0 maps its page and signals; thread 1 waits, then fills a tensor in
  // that page (and, half the time, signals back so that thread 0 unmaps and releases it after).
  // The points order every step that touches the page across the two threads, and the model
  // applies the steps in that order: thread 0 up to its signal, thread 1, thread 0's rest.
  std::vector<std::pair<std::string, uint64_t>> places;  // buffer, a free granule there
  for (const auto& [buffer, r] : model.reservations) {
    if (!r.reserved) continue;
    const std::vector<uint64_t> free = model.FreeOffsets(buffer, G());
    if (!free.empty()) places.emplace_back(buffer, rng.Pick(free));
  }
  if (places.size() < 2) return false;
  const size_t count = std::min<size_t>(places.size(), static_cast<size_t>(rng.Between(2, 3)));
  const bool handoff = rng.Percent(40);
  const bool hand_back = handoff && rng.Percent(50);
  const std::string ready = handoff ? Fresh("ready") : "", done = hand_back ? Fresh("done") : "";
  std::vector<std::vector<YamlValue>> steps(count);
  std::vector<bool> no_context(count, false);
  // The tensors inside the granule at `offset` of `buffer` that device 0 may write now.
  auto fillable_in = [&](const std::string& buffer, uint64_t offset) {
    return TensorsWhere([&](const Tensor& x) {
      return x.buffer == buffer && x.offset >= offset && x.offset + x.Bytes() <= offset + G() &&
             Writable(x, 0);
    });
  };
  auto fill = [&](std::vector<YamlValue>& list, const Tensor& x) {
    const uint64_t seed = rng.Below(1000);
    list.push_back(Op("fill").Add("buffer", x.name).Num("seed", seed).Build());
    model.Write(x, FillContent(x, seed));
  };
  auto give_back = [&](std::vector<YamlValue>& list, const std::string& buffer, uint64_t offset,
                       const std::string& alloc) {
    Reservation& r = model.reservations[buffer];
    list.push_back(
        Op("unmap").Add("buffer", buffer).Size("offset", offset).Size("size", G()).Build());
    --model.phys[r.maps[offset].phys].mappings;
    r.maps.erase(offset);
    list.push_back(Op("release").Add("alloc", alloc).Build());
    model.allocs[alloc].live = false;
    --model.phys[model.allocs[alloc].phys].handles;
  };
  std::string first_alloc;  // thread 0's allocation (a hand-off gives its page back last)
  for (size_t t = 0; t < count; ++t) {
    const size_t at = t + rng.Below(places.size() - t);  // a partial shuffle: distinct buffers
    std::swap(places[t], places[at]);
    const auto [buffer, offset] = places[t];
    const std::string alloc = Fresh("tp");
    if (t == 0) first_alloc = alloc;
    steps[t].push_back(Op("create").Add("alloc", alloc).Size("size", G()).Build());
    Phys p;
    p.size = G();
    p.content = PhysContent(G());
    p.handles = 1;
    model.phys.push_back(std::move(p));
    model.allocs[alloc] =
        Alloc{static_cast<int>(model.phys.size()) - 1, true, false, model.handles++};
    Reservation& r = model.reservations[buffer];
    Mapping m;
    m.size = G();
    m.phys = model.allocs[alloc].phys;
    m.handle = model.allocs[alloc].handle;
    m.alloc = alloc;
    r.maps[offset] = m;
    ++model.phys[m.phys].mappings;
    steps[t].push_back(
        Op("map").Add("buffer", buffer).Add("alloc", alloc).Size("offset", offset).Build());
    r.maps[offset].access[0] = Perm::kReadWrite;
    steps[t].push_back(
        Op("set_access").Add("buffer", buffer).Size("offset", offset).Size("size", G()).Build());
    // A tensor inside the new page (its memory this thread's alone): fill it from this thread's
    // stream.
    std::vector<const Tensor*> fillable = fillable_in(buffer, offset);
    const bool filled = !fillable.empty() && rng.Percent(70);
    // Without a fill, sometimes no context at all: a pool worker that never touched CUDA, whose VMM
    // calls work with none current (a kernel would make one current behind the scenario's back).
    // Thread 1 of a hand-off fills the handed page, so it keeps its context.
    no_context[t] = !filled && !(handoff && t == 1) && rng.Percent(50);
    if (filled) fill(steps[t], *rng.Pick(fillable));
    if (handoff && t == 0) {
      steps[t].push_back(Op("signal").Add("point", ready).Build());
      continue;  // its page stays mapped until thread 1 has used it (or for good)
    }
    if (rng.Percent(40)) give_back(steps[t], buffer, offset, alloc);  // and give the page back
    if (handoff && t == 1) {
      steps[t].push_back(Op("wait_for").Add("point", ready).Build());
      // Its fill takes a kernel's time and is waited for (no `async`): thread 0's unmap after
      // `done` finds the page idle.
      const std::vector<const Tensor*> handed = fillable_in(places[0].first, places[0].second);
      if (!handed.empty()) fill(steps[t], *rng.Pick(handed));
      if (hand_back) steps[t].push_back(Op("signal").Add("point", done).Build());
    }
  }
  if (hand_back) {
    steps[0].push_back(Op("wait_for").Add("point", done).Build());
    give_back(steps[0], places[0].first, places[0].second, first_alloc);
  }
  std::vector<YamlValue> threads;
  for (size_t t = 0; t < count; ++t) {
    MapBuilder thread;
    thread.Add("thread", "t" + std::to_string(t));
    if (no_context[t]) thread.Add("context", "none");
    threads.push_back(thread.Add("steps", List(std::move(steps[t]))).Build());
  }
  Emit(MapBuilder().Add("name", Name("threads")).Add("threads", List(std::move(threads))).Build());
  return true;
}

bool Generator::Refusal() {
  std::vector<std::string> live;
  for (const auto& [name, a] : model.allocs)
    if (a.live) live.push_back(name);
  std::vector<std::pair<std::string, uint64_t>> mapped;  // buffer, mapping offset
  std::vector<std::pair<std::string, uint64_t>> gaps;    // buffer, free granule
  for (const auto& [buffer, r] : model.reservations) {
    if (!r.reserved) continue;
    for (const auto& [offset, m] : r.maps) mapped.emplace_back(buffer, offset);
    for (uint64_t offset : model.FreeOffsets(buffer, G())) gaps.emplace_back(buffer, offset);
  }
  switch (rng.Below(8)) {
    case 0: {  // map_over_live_mapping
      if (live.empty() || mapped.empty()) return false;
      const auto [buffer, offset] = rng.Pick(mapped);
      const std::string alloc = rng.Pick(live);
      if (offset + model.phys[model.allocs[alloc].phys].size > model.reservations[buffer].size)
        return false;
      Emit(Op("map")
               .Add("buffer", buffer)
               .Add("alloc", alloc)
               .Size("offset", offset)
               .Add("expect_error", ErrorOf("map_over_live_mapping"))
               .Build());
      return true;
    }
    case 1: {  // map_part_of_alloc
      std::vector<std::string> big;
      for (const std::string& a : live)
        if (model.phys[model.allocs[a].phys].size >= 2 * G()) big.push_back(a);
      if (big.empty() || gaps.empty()) return false;
      const auto [buffer, offset] = rng.Pick(gaps);
      Emit(Op("map")
               .Add("buffer", buffer)
               .Add("alloc", rng.Pick(big))
               .Size("offset", offset)
               .Size("size", G())
               .Add("expect_error", ErrorOf("map_part_of_alloc"))
               .Build());
      return true;
    }
    case 2: {  // reserve_size_not_granular, on a buffer not reserved now
      std::vector<std::string> free;
      for (const auto& [name, r] : model.reservations)
        if (!r.reserved) free.push_back(name);
      if (free.empty()) return false;
      const std::string buffer = rng.Pick(free);
      Emit(Op("reserve")
               .Add("buffer", buffer)
               .Size("size", model.reservations[buffer].size + G() / 2)
               .Add("expect_error", ErrorOf("reserve_size_not_granular"))
               .Build());
      return true;
    }
    case 3:  // create_size_not_granular
      Emit(Op("create")
               .Add("alloc", Fresh("bad"))
               .Size("size", G() / 2 * (1 + 2 * rng.Below(2)))
               .Add("expect_error", ErrorOf("create_size_not_granular"))
               .Build());
      return true;
    case 4: {  // set_access_unmapped / set_access_part_of_mapping
      std::vector<std::pair<std::string, uint64_t>> big;
      for (const auto& [buffer, offset] : mapped)
        if (model.reservations[buffer].maps[offset].size >= 2 * G())
          big.emplace_back(buffer, offset);
      if (!big.empty() && rng.Percent(50)) {
        const auto [buffer, offset] = rng.Pick(big);
        Emit(Op("set_access")
                 .Add("buffer", buffer)
                 .Size("offset", offset)
                 .Size("size", G())
                 .Add("expect_error", ErrorOf("set_access_part_of_mapping"))
                 .Build());
        return true;
      }
      if (gaps.empty()) return false;
      const auto [buffer, offset] = rng.Pick(gaps);
      Emit(Op("set_access")
               .Add("buffer", buffer)
               .Size("offset", offset)
               .Size("size", G())
               .Add("expect_error", ErrorOf("set_access_unmapped"))
               .Build());
      return true;
    }
    case 5: {  // unmap_splits_mapping
      std::vector<std::pair<std::string, uint64_t>> big;
      for (const auto& [buffer, offset] : mapped)
        if (model.reservations[buffer].maps[offset].size >= 2 * G())
          big.emplace_back(buffer, offset);
      if (big.empty()) return false;
      const auto [buffer, offset] = rng.Pick(big);
      Emit(Op("unmap")
               .Add("buffer", buffer)
               .Size("offset", offset + G())
               .Size("size", G())
               .Add("expect_error", ErrorOf("unmap_splits_mapping"))
               .Build());
      return true;
    }
    case 6: {  // free_while_mapped (double_free is never sent: see its row of the rule table)
      if (mapped.empty()) return false;
      Emit(Op("free")
               .Add("buffer", rng.Pick(mapped).first)
               .Add("expect_error", ErrorOf("free_while_mapped"))
               .Build());
      return true;
    }
    default:  // a create beyond any device's memory (and any host's RAM)
      Emit(Op("create")
               .Add("alloc", Fresh("huge"))
               .Size("size", 4ull << 40)
               .Add("expect_error", "CUDA_ERROR_OUT_OF_MEMORY")
               .Build());
      return true;
  }
}

bool Generator::CheckpointCycle() {
  if (!in_block) return false;
  // Host-NUMA memory alive in the child: driver 580 never restores it (checkpoint_host_numa).
  for (size_t i = block_phys_begin; i < model.phys.size(); ++i)
    if (model.phys[i].alive() && model.phys[i].location == Location::kHostNuma) return false;
  requires_caps.insert("checkpoint");
  const std::string n = std::to_string(counter++);
  Emit(Op("checkpoint").Add("name", Name("checkpoint " + n)).Build());
  Emit(Op("restore").Add("name", Name("restore " + n)).Build());
  return true;
}

bool Generator::IsolateBlock() {
  // The child starts with nothing live: a model of its own over the same declarations.
  Model saved_model = model;
  auto saved_graphs = std::move(graphs);
  auto saved_execs = std::move(execs);
  auto saved_marks = std::move(marks);
  const bool saved_gm = gm_held;
  model.reservations.clear();
  for (const auto& [name, t] : saved_model.tensors)
    if (!t.graph_memory && !t.is_view)
      model.reservations[name].size = saved_model.reservations.at(name).size;
  model.allocs.clear();
  model.snapshots.clear();
  model.exports.clear();
  graphs.clear();
  execs.clear();
  marks.clear();
  gm_held = false;
  std::vector<YamlValue> body;
  std::vector<YamlValue>* outer = out;
  out = &body;
  in_block = true;
  block_phys_begin = model.phys.size();

  Reserve();
  Create() && MapAlloc() && SetAccess();
  bool (Generator::*kBlockActions[])() = {
      &Generator::Create,    &Generator::MapAlloc, &Generator::SetAccess,
      &Generator::Fill,      &Generator::Memset,   &Generator::TakeSnapshot,
      &Generator::CheckData, &Generator::Copy,     &Generator::Unmap,
      &Generator::Release,   &Generator::Remap,    &Generator::CheckpointCycle};
  const int steps = static_cast<int>(rng.Between(3, 8));
  for (int tries = 0; static_cast<int>(body.size()) < steps && tries < 40; ++tries)
    (this->*kBlockActions[rng.Below(std::size(kBlockActions))])();
  // Some blocks end in a fault: read-only access over a mapping, then a write through it.
  std::string expect = "ok";
  if (rng.Percent(50)) {
    for (const auto& [buffer, r] : model.reservations) {
      if (!r.reserved || r.maps.empty()) continue;
      const auto& [offset, m] = *r.maps.begin();
      Emit(Op("set_access")
               .Add("buffer", buffer)
               .Size("offset", offset)
               .Size("size", m.size)
               .Add("access", "read")
               .Build());
      Tensor target;
      std::string name;
      for (const auto& [tname, t] : model.tensors)
        if (!t.graph_memory && t.buffer == buffer && t.offset < offset + m.size &&
            offset < t.offset + t.Bytes() && name.empty())
          name = tname;
      if (name.empty()) break;
      Emit(Op("fill")
               .Add("name", Name("the faulting write " + std::to_string(counter++)))
               .Add("buffer", name)
               .Num("seed", 1)
               .Build());
      expect = "CUDA_ERROR_ILLEGAL_ADDRESS";
      break;
    }
  }
  in_block = false;
  out = outer;
  model = std::move(saved_model);
  graphs = std::move(saved_graphs);
  execs = std::move(saved_execs);
  marks = std::move(saved_marks);
  gm_held = saved_gm;
  if (body.empty()) return false;
  MapBuilder block;
  block.Add("isolate", MapBuilder().Add("expect", expect).Build());
  block.Add("name", Name("child " + std::to_string(counter++)));
  block.Add("steps", List(std::move(body)));
  Emit(block.Build());
  return true;
}

}  // namespace vmm::gen
