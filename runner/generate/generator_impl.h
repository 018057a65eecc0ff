// The generator's inside (generator.h is its contract): one Generator per scenario. Actions are
// rows of one table (kActions in generator.cc): each tries to add one step (or a few that belong
// together) that the model calls legal, updates the model, and says whether it did.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runner/generate/generator.h"
#include "runner/generate/model.h"
#include "runner/generate/rng.h"
#include "runner/generate/yaml_build.h"

namespace vmm::gen {

// A node of a captured graph, as the model keeps it (enough to replay its effect on the data and
// to derive variants for updates).
struct Node {
  enum class Type {
    kFill,
    kMemset,
    kCopy,
    kMatmul,
    kHostFunc,
    kRecord,
    kWait,
    kIf,
    kWhile,
    kParallel,
    kAlloc,
    kFree,
    kChild,
    kElementwise  // add, scale or axpy (`op`): a kernel node
  };
  Type type = Type::kFill;
  std::string name;        // the step's name: the node's name in the graph
  std::string tensor;      // fill, memset, alloc/free: the buffer; if/while: the word's
  std::string from, to;    // copy: source tensor or snapshot, destination tensor
  std::string a, b, c;     // matmul, elementwise (b unused by scale)
  std::string op, alpha;   // elementwise: "add" | "scale" | "axpy", and the factor as written;
                           // copy: "kernel_copy" when a kernel copies (a kernel node), else ""
  uint64_t seed = 0;       // fill
  uint32_t word = 0;       // memset
  std::string event;       // record/wait
  std::vector<Node> body;  // if/while: the body; child: the child graph's nodes
  std::vector<std::vector<Node>> branches;  // parallel
  bool enabled = true;
  // The reservation (Reservation::instance, -1: none) of each buffer the node touches when its
  // parameters were set (capture, set_node): a graph keeps the addresses it captured.
  std::map<std::string, int> captured;
};

struct Graph {
  std::vector<Node> nodes;
  int device = 0;
  bool live = false;
  bool memory = false;       // has memory nodes: one exec at a time, never a child
  bool conditional = false;  // has if/while: one exec at a time
  int live_execs = 0;
};

struct Exec {
  std::string graph;  // the graph it was instantiated from (names its nodes)
  std::vector<Node> nodes;
  int device = 0;
  bool live = false;
};

class Generator {
 public:
  explicit Generator(const GenOptions& options);
  GeneratedScenario Run();

  // --- shared by the action files ---
  Rng rng;
  const GenOptions& options;
  Model model;
  std::vector<YamlValue>* out;  // where steps go (the top level, or an isolate block's body)
  std::map<std::string, Graph> graphs;
  std::map<std::string, Exec> execs;
  std::set<std::string> names;  // step names used (unique across the file)
  std::set<std::string> requires_caps;
  // Named top-level reserve and map steps, for check_address: where each put its address.
  struct AddressStep {
    std::string buffer;
    uint64_t offset = 0;
    int instance = -1;  // the reservation (Reservation::instance)
  };
  std::map<std::string, AddressStep> address_steps;
  std::map<std::string, uint64_t> marks;  // mark name -> held bytes at the mark (device 0)
  int counter = 0;                        // for fresh names
  bool in_block = false;
  size_t block_phys_begin = 0;  // model.phys made inside the current isolate block start here

  uint64_t G() const { return model.granularity(); }
  std::string Fresh(const std::string& prefix) { return prefix + std::to_string(counter++); }
  // A unique step name built from `text`.
  std::string Name(const std::string& text);
  void Emit(YamlValue step) { out->push_back(std::move(step)); }
  int Device() { return options.devices > 1 ? static_cast<int>(rng.Below(2)) : 0; }

  // Tensors (buffers and views) that pass `pred`.
  std::vector<const Tensor*> TensorsWhere(const std::function<bool(const Tensor&)>& pred) const;
  bool Readable(const Tensor& t, int device) const {
    return model.Accessible(t, device, Perm::kRead) && !HasUnset(model.Read(t));
  }
  bool Writable(const Tensor& t, int device) const {
    return model.Accessible(t, device, Perm::kReadWrite);
  }
  // The content a fill/memset of `t` leaves.
  static Content FillContent(const Tensor& t, uint64_t seed) {
    return Uniform(t.Bytes(), PieceKind::kSeed, seed);
  }
  Content MatmulContent(const Tensor& a, const Tensor& b, const Tensor& c) const;
  // An elementwise op and its operands among `tensors` (names) on `device`: a, b (the same
  // element count) whose contents the model can follow (ElementwiseInput), and c, written, either
  // a or b itself or apart from both; a and b are one tensor or apart (a step in place must not
  // read what it already wrote). `c_pool` narrows c's choice. False when none fits.
  // A factor for `op` from the generator's table ("" for add).
  std::string PickFactor(const std::string& op);
  bool PickElementwise(const std::vector<std::string>& tensors,
                       const std::vector<std::string>& c_pool, bool check_contents, Node* out);

  // A set_access or unmap over a run of whole mappings of a reserved buffer: its step with the
  // buffer, offset and size written, or nullopt when nothing is mapped anywhere.
  struct RunStep {
    MapBuilder step;
    std::string buffer;
    uint64_t offset, size;
  };
  std::optional<RunStep> StartRunStep(const char* op);
  // Sometimes `repeat: 2..3` on a VMM call (vmm-run undoes each call before the next; the state
  // after the step is one call's, so the model is unchanged).
  void MaybeRepeat(MapBuilder& step);

  // --- actions (gen_memory.cc, gen_data.cc, gen_graphs.cc, gen_blocks.cc) ---
  bool Reserve();
  bool Create();
  bool MapAlloc();
  bool SetAccess();
  bool Unmap();
  bool Release();
  bool FreeReservation();
  bool Remap();  // unmap + release + create + map + set_access at the same offset
  bool Retain();
  bool ExportImport();
  bool Query();
  bool MarkOrCheckMemory();
  bool Fill();
  bool Memset();
  bool WriteValue();
  bool Busy();
  bool Copy();
  bool Matmul();
  bool Elementwise();  // add, scale or axpy
  bool TakeSnapshot();
  bool CheckData();
  bool CheckAddress();
  bool Synchronize();
  bool Capture();
  bool Instantiate();
  bool Replay();
  bool Update();
  bool SetNode();
  bool DestroyGraphOrExec();
  bool Refusal();  // a call the rule table marks safe to send, under expect_error
  bool IsolateBlock();
  // A threads group (top level): 2 or 3 threads, each on a reservation and a new allocation of
  // its own: create, map, set_access, a fill of a tensor inside the page or else sometimes no
  // context current, sometimes unmap and release.
  bool ThreadsGroup();
  // In an isolate block: checkpoint and restore the child (its memory leaves the device and comes
  // back; later checks prove the data intact).
  bool CheckpointCycle();

  // Graph helpers (gen_graphs.cc; NodeStep and NameNodes in gen_node_steps.cc).
  bool gm_held = false;  // a live graph holds the graph-memory buffer GM
  // 1 to 4 nodes (1 or 2 below the top) a capture on `device` records; `memory` is set when they
  // hold memory nodes.
  std::vector<Node> MakeBody(int depth, bool conditional_body, int device, bool* memory);
  // Names the nodes that have none yet, "<graph>: <what> <subject>".
  void NameNodes(const std::string& graph, std::vector<Node>* nodes);
  YamlValue NodeStep(const Node& node, int device) const;
  // Teardown: unmap, release and free everything, in a tidy order.
  void Teardown();
};

}  // namespace vmm::gen
