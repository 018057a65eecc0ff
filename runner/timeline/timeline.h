// The address-space timeline of one run, built from its report alone: a lane per reservation,
// the physical memory mapped into it as blocks over the step axis (with the access each block had
// at each step), and marks where a step read, wrote or checked a lane's bytes. `vmm-run timeline`
// draws it (timeline_render.h); this file is the model, so that what is drawn can be tested
// without a browser.
//
// Inputs it relies on (report format 1.1): `buffers` (declared buffers and views) and each step's
// `targets` (what it acts on, and for memory ops the byte range and access). A report without
// them (older vmm-run) is refused with a message that says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/report/report.h"

namespace vmm::timeline {

// One column per top-level step, in run order.
struct Column {
  std::string name, op, status;  // status as in the report ("ok", "failed", "skipped")
  std::string details;           // one line of the step's facts for the hover text
};

// A reservation: `buffer` is the name of the buffer that reserved it.
struct Lane {
  std::string buffer;
  uint64_t bytes = 0;
  int reserved = -1;  // column of the reserve step; -1: never reserved in this run
  int freed = -1;     // column of the free step; -1: still reserved at the end
  std::string va;     // as the report wrote it ("0x7f..."); empty when unknown
};

// Physical memory mapped at [offset, offset + size) of a lane from column `start` to column `end`
// (exclusive; the number of columns when never unmapped).
struct Block {
  int lane = 0;
  std::string alloc;
  uint64_t offset = 0, size = 0;
  int start = 0, end = 0;
  int released = -1;  // column where its alloc was released while still mapped; -1 if not
  struct AccessSpan {
    int from = 0;        // column where this access began
    std::string access;  // "none" (a fresh mapping), "read", "read_write"
  };
  std::vector<AccessSpan> access;  // ascending `from`; the first starts at `start`
};

enum class MarkKind { kRead, kWrite, kCheckPass, kCheckFail };
const char* MarkKindName(MarkKind kind);  // "read", "write", "check-pass", "check-fail"

// A step touching [offset, offset + size) of a lane at a column. Graph replays mark every buffer
// their graph's kernels read and write; `via` then names the replayed exec.
struct Mark {
  int lane = 0, column = 0;
  MarkKind kind = MarkKind::kRead;
  uint64_t offset = 0, size = 0;
  std::string what;  // the buffer or view as named in the step ("A", "kv_page3")
  std::string via;   // replay: the exec; empty otherwise
};

struct Timeline {
  std::string title;  // "<scenario> · <backend> · <device>"
  std::string result;
  std::vector<Column> columns;
  std::vector<Lane> lanes;
  std::vector<Block> blocks;
  std::vector<Mark> marks;
};

StatusOr<Timeline> BuildTimeline(const report::Report& report);

}  // namespace vmm::timeline
