// TraceGraphs: the graph calls of a call trace as scenario steps, for TraceScenario. A stream
// capture (cuStreamBeginCapture .. cuStreamEndCapture) becomes a `capture` whose body is the
// stand-ins of the launches captured on that stream; instantiate, launch and destroy become
// `instantiate`, `replay`, `destroy_graph` and `destroy_exec` of graphs and execs named by the
// order they were made (g<i>, e<i>). A capture with nothing the trace saw (its kernels were given
// no reserved memory) is not replayed, and neither is anything made from it; each such call is
// counted for the scenario's header.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace vmm::trace {

// What a stand-in node writes when its graph runs: a view (by index) and the value.
struct GraphWrite {
  int view = -1;
  uint32_t value = 0;
};

class TraceGraphs {
 public:
  void Begin(uint64_t stream);
  bool Capturing(uint64_t stream) const { return captures_.count(stream) != 0; }
  // A capture that ended in failure: dropped, counted.
  void Abandon(uint64_t stream);
  // A stand-in captured on `stream` (a flow-style step, "{op: memset, ...}").
  void Add(uint64_t stream, const std::string& step, GraphWrite write);
  // The steps for each call; "" when the call is not replayed (counted in `skipped`). End drops a
  // capture whose stand-ins write memory no longer writable (`writable` false for one of them).
  std::string End(uint64_t stream, uint64_t graph,
                  const std::function<bool(const GraphWrite&)>& writable);
  std::string Instantiate(uint64_t graph, uint64_t exec);
  // cuGraphLaunch: also what the replay writes.
  std::string Replay(uint64_t exec, std::vector<GraphWrite>* writes);
  std::string DestroyGraph(uint64_t graph);
  std::string DestroyExec(uint64_t exec);

  const std::map<std::string, size_t>& skipped() const { return skipped_; }

 private:
  struct Capture {
    std::vector<std::string> steps;
    std::vector<GraphWrite> writes;
  };
  struct Graph {
    std::string name;
    std::vector<GraphWrite> writes;
  };
  std::string Skip(const std::string& why);

  std::map<uint64_t, Capture> captures_;  // by capturing stream
  std::map<uint64_t, Graph> graphs_;      // live graphs by handle
  std::map<uint64_t, Graph> execs_;       // live execs by handle (the writes of their graph)
  int next_graph_ = 0, next_exec_ = 0;
  std::map<std::string, size_t> skipped_;
};

}  // namespace vmm::trace
