// libFuzzer target: snapshot bytes -> ReadPickle -> ReadTorchSnapshot -> SnapshotScenario, for
// every device the snapshot has. Contracts under test: the pickle reader never crashes on any byte
// string (truncation, memo references, containers inside themselves, huge lengths) and says why
// it refuses; the importer never crashes on any plain data, and what it writes for an accepted
// snapshot is never empty.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runner/trace/pickle_reader.h"
#include "runner/trace/torch_snapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vmm::trace;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  vmm::StatusOr<PickleDocument> pickle = ReadPickle(bytes);
  if (!pickle.ok()) {
    if (pickle.status().message().empty()) std::abort();  // refused without saying why
    return 0;
  }
  vmm::StatusOr<TorchSnapshot> snapshot = ReadTorchSnapshot(pickle->root());
  if (!snapshot.ok()) return 0;
  for (int device = -1; device < static_cast<int>(snapshot->device_traces.size()); ++device) {
    SnapshotImportOptions options;
    options.name = "fuzz";
    options.source = "fuzz.pickle";
    options.device = device;
    vmm::StatusOr<std::string> text = SnapshotScenario(*snapshot, options);
    if (text.ok() && text->empty()) std::abort();
  }
  return 0;
}
