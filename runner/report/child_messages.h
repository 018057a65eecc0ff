// The messages of the isolate protocol (runner/isolate): what a parent sends a child `vmm-run
// __child` to run one isolate block, and what the child streams back. JSON text, one message per
// frame (runner/isolate/frame_channel.h does the framing and the descriptor passing); step records
// and the summary use the report's own JSON form, so a streamed record reads exactly like one in a
// report. Kept here because runner/report is the one user of the JSON library.
//
// The exchange:
//   parent -> child  BlockRequest (then, when it names descriptors, one frame that carries them)
//   child -> parent  hello, then one step event per step as it ends, then done
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runner/base/status.h"
#include "runner/report/report.h"

namespace vmm::report {

inline constexpr int kBlockProtocolVersion = 2;  // 2: `member` (blocks of a together group)

// Everything the child needs to rebuild the parent's plan of the block: the scenario as the parent
// read it (path for messages and includes, text, --set values), which block (a top-level block, or
// a block of a top-level together group), and the backend the parent runs on.
struct BlockRequest {
  std::string scenario_path;
  std::string scenario_text;
  std::vector<std::pair<std::string, std::string>> set;  // --set NAME=VALUE, sweep point included
  // The device facts the parent read (device_memory, device_free): the child expands with them.
  std::vector<std::pair<std::string, std::string>> facts;
  std::vector<std::string> include_roots;  // --include-root folders
  std::vector<std::string> limits;         // --limit NAME=VALUE: the parent's changed bounds
  int block = -1;   // index of the isolate block (or its together group) among the top-level steps
  int member = -1;  // the block's position in that together group; -1 for a lone block
  std::string backend;           // "host" or "cuda": the parent's backend, never "auto"
  int device = 0;                // CUDA device ordinal
  int host_devices = 2;          // devices the host twin emulates (--host-devices)
  std::vector<std::string> fds;  // names of the descriptors that follow, in order
};

struct ChildEvent {
  enum class Kind { kHello, kStep, kDone };
  Kind kind = Kind::kHello;
  int64_t pid = 0;               // hello: the child's pid
  std::vector<std::string> fds;  // hello: the names of the descriptors the child received
  StepRecord step;               // step: the record of one step of the block, final
  Summary summary;               // done: the child's summary of the block's steps
  std::string setup_error;       // done: why the steps did not run at all ("" when they ran)
  std::string fault;             // done: the host fault trap's account of the first fault ("" none)
  std::string end_error;  // done: what the closing synchronize returned ("" when it succeeded)
};

std::string EncodeBlockRequest(const BlockRequest& request);
// Fails (kInvalidInput) on text that is not a request of this protocol version.
StatusOr<BlockRequest> DecodeBlockRequest(const std::string& text);

std::string EncodeChildEvent(const ChildEvent& event);
StatusOr<ChildEvent> DecodeChildEvent(const std::string& text);

}  // namespace vmm::report
