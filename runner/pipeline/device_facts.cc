#include "runner/pipeline/device_facts.h"

#include <cstdlib>

#include "runner/base/format.h"
#include "runner/scenario/expr.h"
#include "runner/scenario/size.h"

namespace vmm {

Status ApplyHostMemoryEnvironment(EngineRequest* request) {
  const char* cap = std::getenv("VMMRUN_HOST_MEMORY");
  if (cap == nullptr || *cap == '\0') return Status::Ok();
  const std::optional<uint64_t> bytes = ParseSize(cap);
  if (!bytes || *bytes == 0)
    return InvalidInput("VMMRUN_HOST_MEMORY='" + Excerpt(cap) +
                        "' is not a size; give one such as 16GiB (the host twin's memory), or "
                        "unset it");
  request->host_memory = *bytes;
  return Status::Ok();
}

Status ReadDeviceFacts(const std::string& text, EngineRequest request, ExpandOptions* expand) {
  if (!expand->facts.empty() || !MentionsDeviceFacts(text)) return Status::Ok();
  if (request.granularity == 0) request.granularity = uint64_t{2} << 20;
  StatusOr<EngineChoice> choice = SelectEngine(request);
  if (!choice.ok()) return choice.status();
  uint64_t free_bytes = 0, total_bytes = 0;
  VMM_RETURN_IF_ERROR(choice->engine->MemoryInfo(&free_bytes, &total_bytes));
  expand->facts = {
      {"device_memory", ExprValue::Number(static_cast<int64_t>(total_bytes))},
      {"device_free", ExprValue::Number(static_cast<int64_t>(free_bytes))},
  };
  return Status::Ok();
}

}  // namespace vmm
