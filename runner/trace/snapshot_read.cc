// ReadTorchSnapshot: the segments and device traces of a PyTorch allocator snapshot's dict.
#include <string>

#include "runner/trace/torch_snapshot.h"

namespace vmm::trace {
namespace {

using Kind = PickleValue::Kind;

Status Expected(const std::string& path, const char* what, const PickleValue* got) {
  return InvalidInput("snapshot " + path + ": expected " + what + ", got " +
                      (got == nullptr ? std::string("nothing") : got->KindName()));
}

// Field `key` of dict `v` (at `path`) as an integer of at least `min`; `optional` fields may be
// absent (then *out is left as it is).
Status Int(const PickleValue& v, const std::string& path, const char* key, int64_t min,
           int64_t* out, bool optional = false) {
  const PickleValue* f = v.Find(key);
  if (f == nullptr && optional) return Status::Ok();
  if (f == nullptr || f->kind != Kind::kInt) return Expected(path + "." + key, "an integer", f);
  if (f->integer < min)
    return InvalidInput("snapshot " + path + "." + key + ": " + std::to_string(f->integer) +
                        " is below " + std::to_string(min));
  *out = f->integer;
  return Status::Ok();
}

Status Text(const PickleValue& v, const std::string& path, const char* key, std::string* out,
            bool optional = false) {
  const PickleValue* f = v.Find(key);
  if (f == nullptr && optional) return Status::Ok();
  if (f == nullptr || f->kind != Kind::kText) return Expected(path + "." + key, "text", f);
  *out = f->text;
  return Status::Ok();
}

Status ReadSegment(const PickleValue& v, const std::string& path, SnapshotSegment* out) {
  if (v.kind != Kind::kDict) return Expected(path, "a dict", &v);
  int64_t device = 0, address = 0, total = 0;
  VMM_RETURN_IF_ERROR(Int(v, path, "device", 0, &device));
  VMM_RETURN_IF_ERROR(Int(v, path, "address", 0, &address));
  VMM_RETURN_IF_ERROR(Int(v, path, "total_size", 0, &total));
  VMM_RETURN_IF_ERROR(Text(v, path, "segment_type", &out->type, /*optional=*/true));
  const PickleValue* expandable = v.Find("is_expandable");
  if (expandable != nullptr && expandable->kind != Kind::kBool)
    return Expected(path + ".is_expandable", "a boolean", expandable);
  out->device = static_cast<int>(device);
  out->address = static_cast<uint64_t>(address);
  out->total_size = static_cast<uint64_t>(total);
  out->expandable = expandable != nullptr && expandable->boolean;
  return Status::Ok();
}

Status ReadEvent(const PickleValue& v, const std::string& path, SnapshotEvent* out) {
  if (v.kind != Kind::kDict) return Expected(path, "a dict", &v);
  VMM_RETURN_IF_ERROR(Text(v, path, "action", &out->action));
  int64_t addr = 0, size = 0;
  // Every action the importer replays carries addr and size; others (oom: device_free) may not.
  VMM_RETURN_IF_ERROR(Int(v, path, "addr", 0, &addr, /*optional=*/true));
  VMM_RETURN_IF_ERROR(Int(v, path, "size", 0, &size, /*optional=*/true));
  VMM_RETURN_IF_ERROR(Int(v, path, "stream", INT64_MIN, &out->stream, /*optional=*/true));
  out->addr = static_cast<uint64_t>(addr);
  out->size = static_cast<uint64_t>(size);
  return Status::Ok();
}

}  // namespace

StatusOr<TorchSnapshot> ReadTorchSnapshot(const PickleValue& root) {
  if (root.kind != Kind::kDict)
    return Expected("(top level)", "a dict (torch.cuda.memory._snapshot())", &root);
  TorchSnapshot out;
  const PickleValue* segments = root.Find("segments");
  if (segments == nullptr || segments->kind != Kind::kList)
    return Expected("segments", "a list", segments);
  for (size_t i = 0; i < segments->items.size(); ++i) {
    SnapshotSegment s;
    VMM_RETURN_IF_ERROR(
        ReadSegment(*segments->items[i], "segments[" + std::to_string(i) + "]", &s));
    out.segments.push_back(std::move(s));
  }
  const PickleValue* traces = root.Find("device_traces");
  if (traces == nullptr || traces->kind != Kind::kList)
    return Expected("device_traces",
                    "a list (the snapshot was taken without "
                    "_record_memory_history?)",
                    traces);
  for (size_t d = 0; d < traces->items.size(); ++d) {
    const PickleValue& trace = *traces->items[d];
    const std::string path = "device_traces[" + std::to_string(d) + "]";
    if (trace.kind != Kind::kList) return Expected(path, "a list", &trace);
    std::vector<SnapshotEvent>& events = out.device_traces.emplace_back();
    events.reserve(trace.items.size());
    for (size_t i = 0; i < trace.items.size(); ++i) {
      VMM_RETURN_IF_ERROR(
          ReadEvent(*trace.items[i], path + "[" + std::to_string(i) + "]", &events.emplace_back()));
    }
  }
  if (const PickleValue* settings = root.Find("allocator_settings"))
    if (const PickleValue* conf = settings->Find("PYTORCH_CUDA_ALLOC_CONF");
        conf != nullptr && conf->kind == Kind::kText)
      out.alloc_conf = conf->text;
  return out;
}

}  // namespace vmm::trace
