// PlanBuilder's kernel steps: fill and matmul (direct, or recorded in a capture), add / scale /
// axpy, kernel_copy, and the operand checks check_matmul and check_elementwise share with them.
#include <cmath>
#include <cstdlib>

#include "runner/base/format.h"
#include "runner/plan/plan_builder.h"
#include "runner/vocab/isolate.h"

namespace vmm {

// The longest a busy kernel may run: long enough for any race, short enough that a wrong unit
// ("200s" for "200ms") is caught before a CI job hangs on it.
constexpr uint64_t kMaxBusyNs = 600ull * 1000000000;

void PlanBuilder::AddUse(BufferUses* uses, int buffer, Access need) {
  if (buffer < 0) return;  // an unknown name, already reported: the node touches nothing known
  for (auto& [b, a] : *uses) {
    if (b == buffer) {
      if (need == Access::kReadWrite) a = need;
      return;
    }
  }
  uses->emplace_back(buffer, need);
}

bool PlanBuilder::Overlap(int x, int y) const {
  if (x == y) return true;
  const PlanBuffer& a = plan_.buffers[x];
  const PlanBuffer& b = plan_.buffers[y];
  const int owner_a = a.base >= 0 ? a.base : x, owner_b = b.base >= 0 ? b.base : y;
  return owner_a == owner_b &&
         ByteRange{a.offset, a.offset + a.bytes}.Overlaps(ByteRange{b.offset, b.offset + b.bytes});
}

void PlanBuilder::Kernel(const Step& step, PlanStep* p, BufferUses* capture_uses) {
  const std::string op = OpName(step.op);
  if (step.op == Op::kFill) {
    p->buffer = ResolveBuffer(step.buffer(), step);
    p->seed = step.seed().value;
    if (p->buffer < 0) return;
    if (capture_uses != nullptr) return AddUse(capture_uses, p->buffer, Access::kReadWrite);
    return Use(p->buffer, Access::kReadWrite, op + " writes", At(step.buffer(), step), p->device);
  }
  p->a = ResolveBuffer(step.a(), step);
  p->b = ResolveBuffer(step.b(), step);
  p->c = ResolveBuffer(step.c(), step);
  if (p->a < 0 || p->b < 0 || p->c < 0 || !MatmulShapes(step, p)) return;
  const Access out = step.op == Op::kMatmul ? Access::kReadWrite : Access::kRead;
  if (capture_uses != nullptr) {
    AddUse(capture_uses, p->a, Access::kRead);
    AddUse(capture_uses, p->b, Access::kRead);
    AddUse(capture_uses, p->c, out);
    return;
  }
  Use(p->a, Access::kRead, op + " reads", At(step.a(), step), p->device);
  if (p->b != p->a) Use(p->b, Access::kRead, op + " reads", At(step.b(), step), p->device);
  Use(p->c, out, op + (out == Access::kRead ? " reads" : " writes"), At(step.c(), step), p->device);
}

bool PlanBuilder::MatmulShapes(const Step& step, PlanStep* p) {
  const std::string op = OpName(step.op);
  const PlanBuffer& a = plan_.buffers[p->a];
  const PlanBuffer& b = plan_.buffers[p->b];
  const PlanBuffer& c = plan_.buffers[p->c];
  bool ok = true;
  const std::pair<const PlanBuffer*, const Located<std::string>*> operands[] = {
      {&a, &step.a()}, {&b, &step.b()}, {&c, &step.c()}};
  for (const auto& [buf, field] : operands) {
    if (buf->shape.size() != 2) {
      Error(At(*field, step), op + " needs 2-D buffers, but '" + buf->name + "' has shape " +
                                  FormatShape(buf->shape));
      ok = false;
    }
  }
  if (!ok) return false;
  if (step.op == Op::kMatmul && (Overlap(p->c, p->a) || Overlap(p->c, p->b))) {
    Error(At(step.c(), step),
          "matmul output '" + c.name + "' overlaps an input; use another buffer");
    return false;
  }
  if (a.shape[1] != b.shape[0]) {
    Error(At(step.b(), step), op + " shapes disagree: '" + a.name + "' is " + FormatShape(a.shape) +
                                  " so '" + b.name + "' needs " + std::to_string(a.shape[1]) +
                                  " rows, got " + FormatShape(b.shape));
    return false;
  }
  if (c.shape[0] != a.shape[0] || c.shape[1] != b.shape[1]) {
    Error(At(step.c(), step), op + " shapes disagree: '" + c.name + "' must be " +
                                  FormatShape({a.shape[0], b.shape[1]}) + " (rows of '" + a.name +
                                  "' by columns of '" + b.name + "'), got " + FormatShape(c.shape));
    return false;
  }
  p->m = static_cast<uint32_t>(a.shape[0]);
  p->k = static_cast<uint32_t>(a.shape[1]);
  p->n = static_cast<uint32_t>(b.shape[1]);
  return true;
}

bool PlanBuilder::SameBytes(int x, int y) const {
  const PlanBuffer& a = plan_.buffers[x];
  const PlanBuffer& b = plan_.buffers[y];
  const int owner_a = a.base >= 0 ? a.base : x, owner_b = b.base >= 0 ? b.base : y;
  return owner_a == owner_b && a.offset == b.offset && a.bytes == b.bytes;
}

void PlanBuilder::Elementwise(const Step& step, PlanStep* p, BufferUses* capture_uses) {
  const std::string op = OpName(step.op);
  const bool has_b = step.op == Op::kAdd || step.op == Op::kAxpy || step.b().set;
  p->a = ResolveBuffer(step.a(), step);
  p->b = has_b ? ResolveBuffer(step.b(), step) : -1;
  p->c = ResolveBuffer(step.c(), step);
  const Located<std::string>& alpha = Key(step, "alpha");
  if (alpha.set) {
    char* end = nullptr;
    const float value = std::strtof(alpha.value.c_str(), &end);
    if (alpha.value.empty() || *end != '\0' || !std::isfinite(value)) {
      Error(At(alpha, step), "'alpha' of " + op + " must be a finite number (fp32), got '" +
                                 Excerpt(alpha.value) + "'");
    }
    p->alpha = value;
  }
  if (p->a < 0 || (has_b && p->b < 0) || p->c < 0) return;
  const PlanBuffer& c = plan_.buffers[p->c];
  const bool writes = step.op != Op::kCheckElementwise;
  bool ok = true;
  const std::pair<int, const Located<std::string>*> inputs[] = {{p->a, &step.a()},
                                                                {p->b, &step.b()}};
  for (const auto& [slot, field] : inputs) {
    if (slot < 0) continue;
    const PlanBuffer& in = plan_.buffers[slot];
    if (in.elements != c.elements) {
      Error(At(*field, step), op + " works element by element: '" + in.name + "' has " +
                                  std::to_string(in.elements) + " elements and '" + c.name + "' " +
                                  std::to_string(c.elements) +
                                  "; give them the same number (a view can cut one to size)");
      ok = false;
    } else if (writes && Overlap(p->c, slot) && !SameBytes(p->c, slot)) {
      Error(At(step.c(), step), op + " output '" + c.name + "' overlaps part of input '" + in.name +
                                    "'; write in place (the same buffer) or elsewhere");
      ok = false;
    }
  }
  if (!ok) return;
  if (capture_uses != nullptr) {  // a kernel node: its memory is checked when a replay runs it
    AddUse(capture_uses, p->a, Access::kRead);
    if (p->b >= 0) AddUse(capture_uses, p->b, Access::kRead);
    AddUse(capture_uses, p->c, Access::kReadWrite);
    return;
  }
  Use(p->a, Access::kRead, op + " reads", At(step.a(), step), p->device);
  if (p->b >= 0 && p->b != p->a)
    Use(p->b, Access::kRead, op + " reads", At(step.b(), step), p->device);
  Use(p->c, writes ? Access::kReadWrite : Access::kRead, op + (writes ? " writes" : " reads"),
      At(step.c(), step), p->device);
}

template <>
void PlanBuilder::PlanOp<Op::kAdd>(const Step& step, PlanStep* p, BufferUses* capture_uses) {
  Elementwise(step, p, capture_uses);
}

template <>
void PlanBuilder::PlanOp<Op::kScale>(const Step& step, PlanStep* p, BufferUses* capture_uses) {
  Elementwise(step, p, capture_uses);
}

template <>
void PlanBuilder::PlanOp<Op::kAxpy>(const Step& step, PlanStep* p, BufferUses* capture_uses) {
  Elementwise(step, p, capture_uses);
}

// kernel_copy: device buffers (or views) of one size that do not overlap; the kernel's access is
// its own, so a capture checks nothing until a replay runs it.
template <>
void PlanBuilder::PlanOp<Op::kKernelCopy>(const Step& step, PlanStep* p, BufferUses* capture_uses) {
  for (const Located<std::string>* side : {&step.from(), &step.to()}) {
    if (snapshots_.count(side->value) != 0) {
      return Error(At(*side, step), "kernel_copy copies between device buffers, and '" +
                                        side->value + "' is a snapshot; use copy for snapshots");
    }
  }
  p->a = ResolveBuffer(step.from(), step);
  p->c = ResolveBuffer(step.to(), step);
  if (p->a < 0 || p->c < 0) return;
  const PlanBuffer& from = plan_.buffers[p->a];
  const PlanBuffer& to = plan_.buffers[p->c];
  if (from.bytes != to.bytes) {
    return Error(At(step.to(), step), "kernel_copy from '" + from.name + "' (" +
                                          FormatBytes(from.bytes) + ") to '" + to.name + "' (" +
                                          FormatBytes(to.bytes) +
                                          "): the sizes differ; give both the same size (a view "
                                          "can cut one to size)");
  }
  if (Overlap(p->a, p->c)) {
    return Error(At(step.to(), step), "kernel_copy from '" + from.name + "' to '" + to.name +
                                          "': the two overlap; copy through another buffer");
  }
  if (capture_uses != nullptr) {
    AddUse(capture_uses, p->a, Access::kRead);
    return AddUse(capture_uses, p->c, Access::kReadWrite);
  }
  Use(p->a, Access::kRead, "kernel_copy reads", At(step.from(), step), p->device);
  Use(p->c, Access::kReadWrite, "kernel_copy writes", At(step.to(), step), p->device);
}

template <>
void PlanBuilder::PlanOp<Op::kFill>(const Step& step, PlanStep* p, BufferUses* capture_uses) {
  Kernel(step, p, capture_uses);
}

template <>
void PlanBuilder::PlanOp<Op::kMatmul>(const Step& step, PlanStep* p, BufferUses* capture_uses) {
  Kernel(step, p, capture_uses);
}

void PlanBuilder::Pattern(const Step& step, PlanStep* p) {
  if (step.value().set == step.byte().set) {
    Error(step.loc, std::string(OpName(step.op)) +
                        " needs exactly one of 'value' (a 32-bit pattern) or 'byte' (one byte, "
                        "repeated in every byte)");
    return;
  }
  p->pattern = step.value().set ? static_cast<uint32_t>(step.value().value)
                                : static_cast<uint32_t>(step.byte().value) * 0x01010101u;
}

template <>
void PlanBuilder::PlanOp<Op::kMemset>(const Step& step, PlanStep* p, BufferUses* capture_uses) {
  Pattern(step, p);
  p->buffer = ResolveBuffer(step.buffer(), step);
  if (p->buffer < 0) return;
  if (capture_uses != nullptr) return AddUse(capture_uses, p->buffer, Access::kReadWrite);
  Use(p->buffer, Access::kReadWrite, "memset writes", At(step.buffer(), step), p->device);
}

// write_value: one word at `offset` bytes into the buffer or view (PlanStep::offset), `value` in
// PlanStep::pattern. The whole buffer or view needs read_write access (as for memset).
template <>
void PlanBuilder::PlanOp<Op::kWriteValue>(const Step& step, PlanStep* p, BufferUses*) {
  p->pattern = static_cast<uint32_t>(step.value().value);
  p->offset = step.offset().value;
  p->buffer = ResolveBuffer(step.buffer(), step);
  if (p->buffer < 0) return;
  const PlanBuffer& buffer = plan_.buffers[p->buffer];
  // Compared without adding to the offset, which may be near 2^64 (it would wrap).
  if (p->offset % 4 != 0 || buffer.bytes < 4 || p->offset > buffer.bytes - 4) {
    Error(At(step.offset(), step),
          "'offset' of write_value must be a multiple of 4 inside '" + buffer.name + "' (" +
              FormatBytes(buffer.bytes) + "), got " + std::to_string(p->offset) +
              (p->offset % 4 != 0 ? ": the word must be 4-byte aligned"
                                  : ": the word would end past the buffer"));
    return;
  }
  Use(p->buffer, Access::kReadWrite, "write_value writes", At(step.buffer(), step), p->device);
}

template <>
void PlanBuilder::PlanOp<Op::kBusy>(const Step& step, PlanStep* p, BufferUses*) {
  p->duration_ns = step.duration().value;
  BusyUntil(step, p);  // a flag: the duration is then the longest it waits (default 10s)
  if (!step.duration().set && p->event < 0 && !Key(step, "until").set) {
    Error(step.loc,
          "busy needs a 'duration' (how long it runs) or 'until' (a flag a later "
          "set_flag sets), e.g. {op: busy, buffer: B, duration: 200ms}");
  } else if (p->duration_ns == 0 || p->duration_ns > kMaxBusyNs) {
    Error(At(step.duration(), step), "'duration' of busy must be above 0 and at most 10min, got " +
                                         DurationText(p->duration_ns));
  }
  p->pattern = static_cast<uint32_t>(step.value().value);  // the schema default is 1.0f's bits
  const Located<std::string>& touch = Key(step, "touch");  // the schema allows end, read, write
  p->touch = touch.value == "read"    ? kernels::BusyTouch::kRead
             : touch.value == "write" ? kernels::BusyTouch::kWrite
                                      : kernels::BusyTouch::kEnd;
  if (p->touch == kernels::BusyTouch::kRead && step.value().set) {
    Error(At(step.value(), step),
          "'value' has no use with 'touch: read' (the kernel only reads its buffer); drop it, or "
          "say touch: write to keep writing that word");
  }
  p->buffer = ResolveBuffer(step.buffer(), step);
  if (p->buffer < 0) return;
  if (p->touch == kernels::BusyTouch::kRead) {
    Use(p->buffer, Access::kRead, "busy reads", At(step.buffer(), step));
  } else {
    Use(p->buffer, Access::kReadWrite, "busy writes", At(step.buffer(), step));
  }
}

}  // namespace vmm
