// PyTorch snapshots as scenarios: the committed imports (tests/fixtures/torch_snapshots/*.yaml) are
// exactly what the importer writes for the H200's snapshots, and they validate; a trace that begins
// mid-run leaves out what it cannot replay and says so; bad snapshots are refused with the path of
// what is wrong.
#include "runner/trace/torch_snapshot.h"

#include <gtest/gtest.h>

#include <string>

#include "runner/base/input_file.h"
#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

namespace vmm::trace {
namespace {

using Kind = PickleValue::Kind;
using Node = PickleValue*;

std::string Read(const std::string& path) {
  StatusOr<std::string> bytes = ReadInputFile(std::string(VMMRUN_SOURCE_DIR) + "/" + path, 1 << 24);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? *bytes : "";
}

StatusOr<std::string> Import(const PickleValue& root, const std::string& name, int device = -1) {
  StatusOr<TorchSnapshot> snapshot = ReadTorchSnapshot(root);
  if (!snapshot.ok()) return snapshot.status();
  SnapshotImportOptions options;
  options.name = name;
  options.source = name + ".pickle";
  options.device = device;
  return SnapshotScenario(*snapshot, options);
}

std::string Validate(const std::string& text) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(text, "imported.yaml", &d);
  if (s) BuildPlan(*s, &d);
  return FormatDiagnostics(d);
}

TEST(TorchSnapshot, TheCommittedImportsAreWhatTheImporterWritesAndTheyValidate) {
  for (const auto& [fixture, scenario] : {std::pair{"expandable", "torch_expandable_snapshot"},
                                          std::pair{"segments", "torch_segments_snapshot"}}) {
    const std::string bytes =
        Read(std::string("tests/fixtures/torch_snapshots/") + fixture + ".pickle");
    StatusOr<PickleDocument> root = ReadPickle(bytes);
    ASSERT_TRUE(root.ok()) << root.status().message();
    StatusOr<TorchSnapshot> snapshot = ReadTorchSnapshot(root->root());
    ASSERT_TRUE(snapshot.ok()) << snapshot.status().message();
    SnapshotImportOptions options;
    options.name = scenario;
    options.source = std::string(fixture) + ".pickle";
    StatusOr<std::string> text = SnapshotScenario(*snapshot, options);
    ASSERT_TRUE(text.ok()) << text.status().message();
    const std::string committed = std::string("tests/fixtures/torch_snapshots/") + fixture;
    EXPECT_EQ(*text, Read(committed + ".yaml"))
        << "regenerate: vmm-run import-snapshot " << committed << ".pickle --name " << scenario
        << " -o " << committed << ".yaml";
    EXPECT_EQ(Validate(*text), "");
    options.data = false;  // --no-data: the VMM calls alone, valid too
    text = SnapshotScenario(*snapshot, options);
    ASSERT_TRUE(text.ok()) << text.status().message();
    EXPECT_EQ(text->find("op: memset"), std::string::npos);
    EXPECT_EQ(Validate(*text), "");
  }
}

// A small snapshot built in memory: segments and one device trace of (action, addr, size). The
// values live in one document for the whole test program.
PickleDocument& Doc() {
  static PickleDocument doc;
  return doc;
}
Node Value(Kind kind) { return Doc().Add(kind); }
Node Text(const std::string& t) {
  Node n = Value(Kind::kText);
  n->text = t;
  return n;
}
Node Int(int64_t v) {
  Node n = Value(Kind::kInt);
  n->integer = v;
  return n;
}
void Set(PickleValue& dict, const std::string& key, Node v) {
  dict.members.emplace_back(Text(key), v);
}
Node Snapshot(const std::vector<std::tuple<std::string, int64_t, int64_t>>& events,
              int devices = 1) {
  Node root = Value(Kind::kDict);
  Set(*root, "segments", Value(Kind::kList));
  Node traces = Value(Kind::kList);
  for (int d = 0; d < devices; ++d) {
    Node trace = Value(Kind::kList);
    for (const auto& [action, addr, size] : events) {
      Node e = Value(Kind::kDict);
      Set(*e, "action", Text(action));
      Set(*e, "addr", Int(addr));
      Set(*e, "size", Int(size));
      Set(*e, "stream", Int(0));
      trace->items.push_back(e);
    }
    traces->items.push_back(trace);
  }
  Set(*root, "device_traces", traces);
  return root;
}

constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kBase = int64_t{0x302000000};

TEST(TorchSnapshot, ATraceThatBeginsMidRunLeavesOutWhatItCannotReplayAndSaysSo) {
  Node root = Snapshot({{"segment_unmap", kBase + 40 * kMiB, 2 * kMiB},  // mapped before
                        {"alloc", kBase + 100 * kMiB, 512},              // in unmapped memory
                        {"segment_map", kBase, 4 * kMiB},
                        {"alloc", kBase, 1024},
                        {"free_requested", kBase, 1024},
                        {"free_completed", kBase, 1024},
                        {"oom", 0, 0}});
  StatusOr<std::string> text = Import(*root, "midrun");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_NE(text->find("# Left out: 1 x segment_unmap of a page mapped before the trace began.\n"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("# Left out: 1 x alloc in memory mapped before the trace began.\n"),
            std::string::npos);
  EXPECT_NE(text->find("# Not replayed: 1 x action 'oom'.\n"), std::string::npos);
  EXPECT_NE(text->find("  - {op: check_value, buffer: A0, value: 0x5eed0000}"), std::string::npos);
  EXPECT_EQ(Validate(*text), "");
}

TEST(TorchSnapshot, RefusesWhatItCannotImportNamingWhere) {
  auto message = [](const PickleValue& root, int device = -1) {
    StatusOr<std::string> text = Import(root, "bad", device);
    return text.ok() ? std::string("ok") : text.status().message();
  };
  EXPECT_EQ(message(*Value(Kind::kList)),
            "snapshot (top level): expected a dict (torch.cuda.memory._snapshot()), got a list");
  Node no_traces = Value(Kind::kDict);
  Set(*no_traces, "segments", Value(Kind::kList));
  EXPECT_EQ(message(*no_traces),
            "snapshot device_traces: expected a list (the snapshot was taken without "
            "_record_memory_history?), got nothing");
  Node bad_addr = Snapshot({{"segment_map", kBase, 2 * kMiB}});
  bad_addr->members[1].second->items[0]->items[0]->members[1].second = Text("0x302000000");
  EXPECT_EQ(message(*bad_addr), "snapshot device_traces[0][0].addr: expected an integer, got text");
  EXPECT_EQ(message(*Snapshot({{"alloc", kBase, 512}})),
            "the snapshot's traces hold no segment events (record them with "
            "torch.cuda.memory._record_memory_history before the allocations)");
  EXPECT_EQ(message(*Snapshot({{"segment_map", kBase, 2 * kMiB}}, 2)),
            "devices 0 and 1 both have segment events; choose one with --device");
  EXPECT_EQ(message(*Snapshot({{"segment_map", kBase, 2 * kMiB}}, 2), 1), "ok");
  EXPECT_EQ(message(*Snapshot({{"segment_map", kBase, 2 * kMiB}}), 3),
            "the snapshot has traces for 1 devices, not device 3");
  EXPECT_EQ(message(*Snapshot({{"segment_map", kBase, 3 * kMiB}})),
            "the expandable segment at 0x302000000 maps pages of 3145728 bytes, not a multiple "
            "of the scenario's 2 MiB granularity");
}

}  // namespace
}  // namespace vmm::trace
