// Backend selection for `--backend auto|host|cuda`.
//
// auto picks the CUDA backend when a VMM-capable CUDA device is usable, else the host backend, and
// says why in EngineChoice::reason (printed and recorded in the report). cuda never falls back: it
// returns Code::kUnavailable (exit 3) with the reason. host always works on Linux.
#pragma once

#include <memory>
#include <string>

#include "runner/base/status.h"
#include "runner/engine/engine.h"

namespace vmm {

enum class BackendKind { kAuto, kHost, kCuda };

// "auto", "host", "cuda"; false for anything else.
bool ParseBackendKind(const std::string& name, BackendKind* out);

struct EngineChoice {
  std::unique_ptr<Engine> engine;
  std::string reason;  // e.g. "auto: no CUDA device (cudaErrorNoDevice: ...)", "requested"
};

struct EngineRequest {
  BackendKind kind = BackendKind::kAuto;
  int device = 0;            // the engine's device ordinal (CUDA, or the host twin's)
  uint64_t granularity = 0;  // the scenario's granularity; the host backend uses it as its own
  int host_devices = 2;      // devices the host twin emulates (HostEngineOptions::device_count)
  bool trap_faults = false;  // host: HostEngineOptions::trap_faults (isolate blocks' children)
  uint64_t host_memory = 0;  // host: HostEngineOptions::memory_bytes (0: this machine's RAM)
  // CUDA: a graph's DOT text from cudaGraphDebugDotPrint instead of StructureDot (the host's).
  bool driver_dot = false;
};

// True when this binary was built with the CUDA backend.
bool CudaBackendBuilt();

// The main of `vmm-run __checkpoint-helper` (runner/engine/cuda/checkpoint_helper.h), the process
// the CUDA backend starts to checkpoint and restore its own; 2 in a build without CUDA.
int RunCheckpointHelperProcess(int argc, char** argv);

// The engine for `request`. Fails with Code::kUnavailable when the backend cannot be used here,
// and with Code::kInvalidInput when the scenario's granularity is not a multiple of the device's
// minimum granularity (the one place that rule is checked).
StatusOr<EngineChoice> SelectEngine(const EngineRequest& request);

}  // namespace vmm
