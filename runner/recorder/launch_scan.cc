#include "runner/recorder/launch_scan.h"

#include <algorithm>
#include <cstring>

namespace vmm::recorder {
namespace {

constexpr size_t kMaxParams = 4096;  // the driver's own bound is far lower (32 KiB of parameters)

void ScanWords(const unsigned char* bytes, size_t size, std::vector<uint64_t>* words) {
  for (size_t at = 0; at + 8 <= size; at += 8) {
    uint64_t word = 0;
    std::memcpy(&word, bytes + at, 8);
    if (word != 0) words->push_back(word);
  }
}

}  // namespace

void LaunchScan::Reserved(uint64_t base, uint64_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  ranges_[base] = size;
}

void LaunchScan::ForgetFunctions() {
  std::lock_guard<std::mutex> lock(mutex_);
  layouts_.clear();
}

void LaunchScan::Freed(uint64_t base) {
  std::lock_guard<std::mutex> lock(mutex_);
  ranges_.erase(base);
}

bool LaunchScan::InReserved(uint64_t value) const {
  auto it = ranges_.upper_bound(value);
  if (it == ranges_.begin()) return false;
  --it;
  return value - it->first < it->second;
}

LaunchScan::Layout LaunchScan::LayoutOf(CUfunction f) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = layouts_.find(f);
    if (it != layouts_.end()) return it->second;  // a copy: a module unload may clear the cache
  }
  // Outside the lock: driver calls. A parameterless kernel answers CUDA_ERROR_INVALID_VALUE for
  // index 0 from both calls, as one whose layout cannot be read does; both scan as empty. Any
  // other answer (a sticky error of the context) is not kept: the next launch asks again.
  FuncParamInfo by_function = nullptr;
  KernelParamInfo by_kernel = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!resolved_) {
      void* fn = nullptr;
      if (cuGetProcAddress("cuFuncGetParamInfo", &fn, 12040, CU_GET_PROC_ADDRESS_DEFAULT,
                           nullptr) == CUDA_SUCCESS)
        func_param_info_ = reinterpret_cast<FuncParamInfo>(fn);
      fn = nullptr;
      if (cuGetProcAddress("cuKernelGetParamInfo", &fn, 12040, CU_GET_PROC_ADDRESS_DEFAULT,
                           nullptr) == CUDA_SUCCESS)
        kernel_param_info_ = reinterpret_cast<KernelParamInfo>(fn);
      resolved_ = true;
    }
    by_function = func_param_info_;
    by_kernel = kernel_param_info_;
  }
  // Asks for parameter i: as a CUfunction first, and from then on as a CUkernel if that is what
  // answers for index 0 (a CUkernel handed to cuLaunchKernel as a CUfunction).
  bool as_kernel = by_function == nullptr;
  auto ask = [&](size_t i, size_t* offset, size_t* size) {
    if (as_kernel)
      return by_kernel != nullptr ? by_kernel(reinterpret_cast<CUkernel>(f), i, offset, size)
                                  : CUDA_ERROR_NOT_SUPPORTED;
    return by_function(f, i, offset, size);
  };
  Layout layout;
  bool keep = by_function != nullptr || by_kernel != nullptr;
  for (size_t i = 0; keep && i < kMaxParams; ++i) {
    size_t offset = 0, size = 0;
    CUresult r = ask(i, &offset, &size);
    if (r != CUDA_SUCCESS && i == 0 && !as_kernel && by_kernel != nullptr) {
      as_kernel = true;
      r = ask(i, &offset, &size);
    }
    if (r != CUDA_SUCCESS) {
      keep = r == CUDA_ERROR_INVALID_VALUE;  // the end of the list, or no parameters
      break;
    }
    layout.emplace_back(offset, size);
  }
  if (!keep) return {};  // this launch scans nothing; the next one asks again
  std::lock_guard<std::mutex> lock(mutex_);
  layouts_[f] = layout;
  return layout;
}

std::vector<uint64_t> LaunchScan::Pointers(CUfunction f, void** params, void** extra) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ranges_.empty()) return {};
  }
  std::vector<uint64_t> words;
  if (params != nullptr) {
    const Layout layout = LayoutOf(f);
    for (size_t i = 0; i < layout.size(); ++i)
      if (params[i] != nullptr)
        ScanWords(static_cast<const unsigned char*>(params[i]), layout[i].second, &words);
  } else if (extra != nullptr) {
    // {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, ..._END}
    const void* buffer = nullptr;
    size_t size = 0;
    for (size_t i = 0; i < 64 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = extra[i + 1];
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *static_cast<size_t*>(extra[i + 1]);
    }
    if (buffer != nullptr) ScanWords(static_cast<const unsigned char*>(buffer), size, &words);
  }
  std::vector<uint64_t> found;
  std::lock_guard<std::mutex> lock(mutex_);
  for (uint64_t w : words)
    if (InReserved(w) && std::find(found.begin(), found.end(), w) == found.end())
      found.push_back(w);
  return found;
}

}  // namespace vmm::recorder
