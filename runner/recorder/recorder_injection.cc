// The recorder: a library the driver loads into an unmodified program (CUDA_INJECTION64_PATH,
// set by `vmm-run record`), which subscribes to CUPTI's driver-API callbacks for the calls of
// runner/trace/trace_calls.def and writes one record per call, at the call's return, to the file
// named by VMMRUN_TRACE (TraceSink). It only reads the calls' parameters and results: it never
// changes what the program does, and a failure to record (no file, CUPTI taken by another
// subscriber) is reported on stderr while the program runs on unrecorded.
#include <cupti.h>  // with generated_cuda_meta.h: the calls' parameter structs
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <type_traits>

#include "runner/recorder/launch_scan.h"
#include "runner/recorder/trace_sink.h"

namespace vmm::recorder {
namespace {

// The calls the trace may name, from the one table: the recorder cannot write a call the reader
// does not know.
enum CallName {
#define TRACE_CALL(name, family, keys) n_##name,
#include "runner/trace/trace_calls.def"
#undef TRACE_CALL
};
constexpr const char* kCallNames[] = {
#define TRACE_CALL(name, family, keys) #name,
#include "runner/trace/trace_calls.def"
#undef TRACE_CALL
};
#define CALL(name) kCallNames[n_##name]

struct Recorder {
  TraceSink sink;
  LaunchScan scan;
  std::atomic<uint64_t> unrecorded_launches{0};
};
Recorder* g_recorder = nullptr;  // set once by InitializeInjection, never freed (see AtExit)

template <typename T>
const T* Params(const CUpti_CallbackData* cb) {
  return static_cast<const T*>(cb->functionParams);
}
template <typename T>
uint64_t Handle(T h) {  // a driver object's handle (or an address, a size) as a number
  if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(h);
  } else {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(h));
  }
}
template <typename T>
uint64_t Out(int result, T* p) {  // an output parameter, 0 when the call failed
  return result == 0 && p != nullptr ? Handle(*p) : 0;
}

void Emit(const RecordLine& line, bool buffered = false) { g_recorder->sink.Write(line, buffered); }

void RecordLaunch(const CUpti_CallbackData* cb, int result, CUfunction f, CUstream stream,
                  void** params, void** extra) {
  const std::vector<uint64_t> ptrs = g_recorder->scan.Pointers(f, params, extra);
  if (ptrs.empty() && result == 0) {
    g_recorder->unrecorded_launches.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::string list;
  for (uint64_t p : ptrs) {
    char text[24];
    std::snprintf(text, sizeof text, "%s0x%llx", list.empty() ? "" : ",",
                  static_cast<unsigned long long>(p));
    list += text;
  }
  RecordLine line(CALL(cuLaunchKernel), result);
  line.Text("kernel", cb->symbolName != nullptr && *cb->symbolName != '\0' ? cb->symbolName : "?")
      .Hex("stream", Handle(stream));
  // ptrs is a list: written as is (Text would encode its commas).
  Emit(line.Raw("ptrs", list), /*buffered=*/true);
}

void RecordMemCall(CUpti_CallbackId cbid, const CUpti_CallbackData* cb, int r) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAddressReserve: {
      const auto* a = Params<cuMemAddressReserve_params>(cb);
      const uint64_t ptr = Out(r, a->ptr);
      if (r == 0) g_recorder->scan.Reserved(ptr, a->size);
      Emit(RecordLine(CALL(cuMemAddressReserve), r)
               .Hex("ptr", ptr)
               .Dec("size", a->size)
               .Dec("alignment", a->alignment)
               .Hex("addr", a->addr));
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAddressFree: {
      const auto* a = Params<cuMemAddressFree_params>(cb);
      if (r == 0) g_recorder->scan.Freed(a->ptr);
      Emit(RecordLine(CALL(cuMemAddressFree), r).Hex("ptr", a->ptr).Dec("size", a->size));
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemCreate: {
      const auto* a = Params<cuMemCreate_params>(cb);
      const int type = a->prop != nullptr ? static_cast<int>(a->prop->location.type) : 0;
      const int id = a->prop != nullptr ? a->prop->location.id : 0;
      Emit(RecordLine(CALL(cuMemCreate), r)
               .Hex("handle", Out(r, a->handle))
               .Dec("size", a->size)
               .Dec("location", static_cast<uint64_t>(type))
               .Dec("device", static_cast<uint64_t>(id))
               .Dec("handle_types",
                    a->prop != nullptr ? static_cast<uint64_t>(a->prop->requestedHandleTypes) : 0));
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemRelease:
      Emit(
          RecordLine(CALL(cuMemRelease), r).Hex("handle", Params<cuMemRelease_params>(cb)->handle));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuMemMap: {
      const auto* a = Params<cuMemMap_params>(cb);
      Emit(RecordLine(CALL(cuMemMap), r)
               .Hex("ptr", a->ptr)
               .Dec("size", a->size)
               .Dec("offset", a->offset)
               .Hex("handle", a->handle));
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap: {
      const auto* a = Params<cuMemUnmap_params>(cb);
      Emit(RecordLine(CALL(cuMemUnmap), r).Hex("ptr", a->ptr).Dec("size", a->size));
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemSetAccess: {
      const auto* a = Params<cuMemSetAccess_params>(cb);
      std::string access;
      // Device entries only (a host NUMA entry's id is not a device); the trace's flags are the
      // three the driver accepts, so a refused call's others are written as 0 (none).
      for (size_t i = 0; a->desc != nullptr && i < a->count && i < 1024; ++i) {
        const CUmemAccessDesc& d = a->desc[i];
        if (d.location.type != CU_MEM_LOCATION_TYPE_DEVICE || d.location.id < 0 ||
            d.location.id > 1023)
          continue;
        const unsigned flags = static_cast<unsigned>(d.flags);
        if (!access.empty()) access += ',';
        access += std::to_string(d.location.id) + ":" +
                  std::to_string(flags == 1 || flags == 3 ? flags : 0u);
      }
      Emit(RecordLine(CALL(cuMemSetAccess), r)
               .Hex("ptr", a->ptr)
               .Dec("size", a->size)
               .Raw("access", access));
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemExportToShareableHandle: {
      const auto* a = Params<cuMemExportToShareableHandle_params>(cb);
      Emit(RecordLine(CALL(cuMemExportToShareableHandle), r)
               .Hex("handle", a->handle)
               .Dec("type", static_cast<uint64_t>(a->handleType)));
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemImportFromShareableHandle: {
      const auto* a = Params<cuMemImportFromShareableHandle_params>(cb);
      Emit(RecordLine(CALL(cuMemImportFromShareableHandle), r)
               .Hex("handle", Out(r, a->handle))
               .Dec("type", static_cast<uint64_t>(a->shHandleType)));
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemRetainAllocationHandle: {
      const auto* a = Params<cuMemRetainAllocationHandle_params>(cb);
      Emit(RecordLine(CALL(cuMemRetainAllocationHandle), r)
               .Hex("ptr", Handle(a->addr))
               .Hex("handle", Out(r, a->handle)));
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemGetAllocationGranularity: {
      const auto* a = Params<cuMemGetAllocationGranularity_params>(cb);
      Emit(RecordLine(CALL(cuMemGetAllocationGranularity), r)
               .Dec("device", a->prop != nullptr ? static_cast<uint64_t>(a->prop->location.id) : 0)
               .Dec("option", static_cast<uint64_t>(a->option))
               .Dec("granularity", Out(r, a->granularity)));
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemGetInfo_v2: {
      const auto* a = Params<cuMemGetInfo_v2_params>(cb);
      Emit(RecordLine(CALL(cuMemGetInfo), r)
               .Dec("free", Out(r, a->free))
               .Dec("total", Out(r, a->total)));
      break;
    }
    default:
      break;
  }
}

// The calls of one kind whose variants (_v2, _ptsz) share their fields' meaning.
#define BEGIN_CAPTURE(T, mode_expr)                           \
  {                                                           \
    const auto* a = Params<T>(cb);                            \
    Emit(RecordLine(CALL(cuStreamBeginCapture), r)            \
             .Hex("stream", Handle(a->hStream))               \
             .Dec("mode", static_cast<uint64_t>(mode_expr))); \
    break;                                                    \
  }
#define END_CAPTURE(T)                           \
  {                                              \
    const auto* a = Params<T>(cb);               \
    Emit(RecordLine(CALL(cuStreamEndCapture), r) \
             .Hex("stream", Handle(a->hStream))  \
             .Hex("graph", Out(r, a->phGraph))); \
    break;                                       \
  }
#define INSTANTIATE(T)                              \
  {                                                 \
    const auto* a = Params<T>(cb);                  \
    Emit(RecordLine(CALL(cuGraphInstantiate), r)    \
             .Hex("graph", Handle(a->hGraph))       \
             .Hex("exec", Out(r, a->phGraphExec))); \
    break;                                          \
  }
#define UPDATE(T)                                \
  {                                              \
    const auto* a = Params<T>(cb);               \
    Emit(RecordLine(CALL(cuGraphExecUpdate), r)  \
             .Hex("exec", Handle(a->hGraphExec)) \
             .Hex("graph", Handle(a->hGraph)));  \
    break;                                       \
  }
#define GRAPH_LAUNCH(T, exec_field)               \
  {                                               \
    const auto* a = Params<T>(cb);                \
    Emit(RecordLine(CALL(cuGraphLaunch), r)       \
             .Hex("exec", Handle(a->exec_field))  \
             .Hex("stream", Handle(a->hStream))); \
    break;                                        \
  }
#define STREAM_SYNC(T)                                                                          \
  Emit(RecordLine(CALL(cuStreamSynchronize), r).Hex("stream", Handle(Params<T>(cb)->hStream))); \
  break;
#define EVENT_RECORD(T)                           \
  {                                               \
    const auto* a = Params<T>(cb);                \
    Emit(RecordLine(CALL(cuEventRecord), r)       \
             .Hex("event", Handle(a->hEvent))     \
             .Hex("stream", Handle(a->hStream))); \
    break;                                        \
  }
#define WAIT_EVENT(T)                           \
  {                                             \
    const auto* a = Params<T>(cb);              \
    Emit(RecordLine(CALL(cuStreamWaitEvent), r) \
             .Hex("stream", Handle(a->hStream)) \
             .Hex("event", Handle(a->hEvent))); \
    break;                                      \
  }
#define LAUNCH(T)                                                     \
  {                                                                   \
    const auto* a = Params<T>(cb);                                    \
    RecordLaunch(cb, r, a->f, a->hStream, a->kernelParams, a->extra); \
    break;                                                            \
  }
#define LAUNCH_EX(T)                                                               \
  {                                                                                \
    const auto* a = Params<T>(cb);                                                 \
    RecordLaunch(cb, r, a->f, a->config != nullptr ? a->config->hStream : nullptr, \
                 a->kernelParams, a->extra);                                       \
    break;                                                                         \
  }

void RecordOtherCall(CUpti_CallbackId cbid, const CUpti_CallbackData* cb, int r) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture:
      BEGIN_CAPTURE(cuStreamBeginCapture_params, 0)
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz:
      BEGIN_CAPTURE(cuStreamBeginCapture_ptsz_params, 0)
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2:
      BEGIN_CAPTURE(cuStreamBeginCapture_v2_params, a->mode)
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz:
      BEGIN_CAPTURE(cuStreamBeginCapture_v2_ptsz_params, a->mode)
    case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture:
      END_CAPTURE(cuStreamEndCapture_params)
    case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz:
      END_CAPTURE(cuStreamEndCapture_ptsz_params)
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate:
      INSTANTIATE(cuGraphInstantiate_params)
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2:
      INSTANTIATE(cuGraphInstantiate_v2_params)
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags:
      INSTANTIATE(cuGraphInstantiateWithFlags_params)
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams:
      INSTANTIATE(cuGraphInstantiateWithParams_params)
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz:
      INSTANTIATE(cuGraphInstantiateWithParams_ptsz_params)
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate:
      UPDATE(cuGraphExecUpdate_params)
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2:
      UPDATE(cuGraphExecUpdate_v2_params)
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
      GRAPH_LAUNCH(cuGraphLaunch_params, hGraph)
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
      GRAPH_LAUNCH(cuGraphLaunch_ptsz_params, hGraphExec)
    case CUPTI_DRIVER_TRACE_CBID_cuGraphDestroy:
      Emit(RecordLine(CALL(cuGraphDestroy), r)
               .Hex("graph", Handle(Params<cuGraphDestroy_params>(cb)->hGraph)));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecDestroy:
      Emit(RecordLine(CALL(cuGraphExecDestroy), r)
               .Hex("exec", Handle(Params<cuGraphExecDestroy_params>(cb)->hGraphExec)));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize:
      STREAM_SYNC(cuStreamSynchronize_params)
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz:
      STREAM_SYNC(cuStreamSynchronize_ptsz_params)
    case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize:
    case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2:
      Emit(RecordLine(CALL(cuCtxSynchronize), r));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecord:
      EVENT_RECORD(cuEventRecord_params)
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz:
      EVENT_RECORD(cuEventRecord_ptsz_params)
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags:
      EVENT_RECORD(cuEventRecordWithFlags_params)
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz:
      EVENT_RECORD(cuEventRecordWithFlags_ptsz_params)
    case CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize:
      Emit(RecordLine(CALL(cuEventSynchronize), r)
               .Hex("event", Handle(Params<cuEventSynchronize_params>(cb)->hEvent)));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent:
      WAIT_EVENT(cuStreamWaitEvent_params)
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz:
      WAIT_EVENT(cuStreamWaitEvent_ptsz_params)
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      LAUNCH(cuLaunchKernel_params)
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      LAUNCH(cuLaunchKernel_ptsz_params)
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      LAUNCH_EX(cuLaunchKernelEx_params)
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      LAUNCH_EX(cuLaunchKernelEx_ptsz_params)
    default:
      RecordMemCall(cbid, cb, r);
      break;
  }
}

// Every callback id the recorder enables (the others cost the program nothing).
constexpr CUpti_CallbackId kRecorded[] = {
    CUPTI_DRIVER_TRACE_CBID_cuMemAddressReserve,
    CUPTI_DRIVER_TRACE_CBID_cuMemAddressFree,
    CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
    CUPTI_DRIVER_TRACE_CBID_cuMemRelease,
    CUPTI_DRIVER_TRACE_CBID_cuMemMap,
    CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
    CUPTI_DRIVER_TRACE_CBID_cuMemSetAccess,
    CUPTI_DRIVER_TRACE_CBID_cuMemExportToShareableHandle,
    CUPTI_DRIVER_TRACE_CBID_cuMemImportFromShareableHandle,
    CUPTI_DRIVER_TRACE_CBID_cuMemRetainAllocationHandle,
    CUPTI_DRIVER_TRACE_CBID_cuMemGetAllocationGranularity,
    CUPTI_DRIVER_TRACE_CBID_cuMemGetInfo_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture,
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphDestroy,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecDestroy,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2,
    CUPTI_DRIVER_TRACE_CBID_cuEventRecord,
    CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags,
    CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};

void CUPTIAPI OnDriverCall(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                           const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    // A module going away takes its functions with it: their handles may be handed out again.
    if (cbid == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING) g_recorder->scan.ForgetFunctions();
    return;
  }
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cb->callbackSite != CUPTI_API_EXIT) return;
  const int result = static_cast<int>(*static_cast<const CUresult*>(cb->functionReturnValue));
  RecordOtherCall(cbid, cb, result);
}

void AtExit() {
  const uint64_t n = g_recorder->unrecorded_launches.load();
  if (n != 0)
    g_recorder->sink.Comment("pid " + std::to_string(::getpid()) + ": " + std::to_string(n) +
                             " kernel launches given no reserved address, not recorded");
  g_recorder->sink.Flush();
}

std::string CommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string text;
  for (char c : raw.substr(0, 400)) {
    const unsigned char u = static_cast<unsigned char>(c);
    text += c == '\0' ? ' ' : (u < 0x20 || u > 0x7e ? '?' : c);
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace
}  // namespace vmm::recorder

// Called by the driver at cuInit when CUDA_INJECTION64_PATH names this library. Returns 1 (the
// program runs on whether or not recording could start).
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace vmm::recorder;
  if (g_recorder != nullptr) return 1;
  const char* path = std::getenv("VMMRUN_TRACE");
  if (path == nullptr || *path == '\0') {
    std::fprintf(stderr, "vmm-run recorder: VMMRUN_TRACE is not set; recording nothing\n");
    return 1;
  }
  g_recorder = new Recorder();
  if (!g_recorder->sink.Open(path)) {
    std::fprintf(stderr, "vmm-run recorder: cannot open '%s' for appending; recording nothing\n",
                 path);
    return 1;
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  const CUptiResult sub = cuptiSubscribe(&subscriber, &OnDriverCall, nullptr);
  if (sub != CUPTI_SUCCESS) {
    const char* why = nullptr;
    cuptiGetResultString(sub, &why);
    const std::string text = std::string("pid ") + std::to_string(::getpid()) +
                             ": not recorded: cuptiSubscribe failed (" + (why ? why : "?") +
                             "; is another profiler attached?)";
    g_recorder->sink.Comment(text);
    std::fprintf(stderr, "vmm-run recorder: %s\n", text.c_str());
    return 1;
  }
  for (CUpti_CallbackId cbid : kRecorded)
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
  g_recorder->sink.Comment("process " + std::to_string(::getpid()) + ": " + CommandLine());
  // Both locks are held across fork() so the child never inherits one held by another thread; the
  // child starts its own count of unrecorded launches.
  pthread_atfork(
      [] {
        g_recorder->scan.BeforeFork();
        g_recorder->sink.BeforeFork();
      },
      [] {
        g_recorder->sink.AfterFork();
        g_recorder->scan.AfterFork();
      },
      [] {
        g_recorder->unrecorded_launches.store(0);
        g_recorder->sink.AfterFork();
        g_recorder->scan.AfterFork();
      });
  std::atexit(&AtExit);
  return 1;
}
