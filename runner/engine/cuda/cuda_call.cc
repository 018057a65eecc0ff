#include "runner/engine/cuda/cuda_call.h"

#include <cstdio>
#include <string>

#include "runner/vocab/cuda_errors.h"

namespace vmm::cuda {
namespace {

std::string Where(const char* file, int line) {
  return std::string(" at ") + file + ":" + std::to_string(line);
}

std::string CuMessage(const DriverApi& api, CUresult result, const char* call, const char* file,
                      int line) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName == nullptr || api.cuGetErrorName(result, &name) != CUDA_SUCCESS ||
      name == nullptr) {
    name = nullptr;
  }
  if (api.cuGetErrorString == nullptr || api.cuGetErrorString(result, &text) != CUDA_SUCCESS ||
      text == nullptr) {
    text = "unknown error";
  }
  std::string name_text =
      name != nullptr ? std::string(name) : "CUresult " + std::to_string(static_cast<int>(result));
  return std::string(call) + " failed: " + name_text + " (" + text + ")" + Where(file, line);
}

std::string CudaMessage(cudaError_t result, const char* call, const char* file, int line) {
  return std::string(call) + " failed: " + cudaGetErrorName(result) + " (" +
         cudaGetErrorString(result) + ")" + Where(file, line);
}

}  // namespace

Status MissingDriverFunction(const char* name, const char* call) {
  return RuntimeError(std::string("CUDA driver too old: it has no entry point '") + name +
                      "' (needed by " + call + ")");
}

Status CuStatus(const DriverApi& api, CUresult result, const char* call, const char* file,
                int line) {
  if (result == CUDA_SUCCESS) return Status::Ok();
  // The table's literal (static storage); a value newer than the table is named by the message.
  const CudaErrorName* name = FindCudaErrorByValue(static_cast<int>(result));
  return Status(Code::kRuntime, CuMessage(api, result, call, file, line),
                name != nullptr ? name->name : nullptr);
}

Status CudaStatus(cudaError_t result, const char* call, const char* file, int line) {
  if (result == cudaSuccess) return Status::Ok();
  (void)cudaGetLastError();
  // Named by the driver error it stands for (runner/vocab/cuda_errors.h), so a scenario's
  // expect_error uses one vocabulary whichever API the engine called.
  return Status(Code::kRuntime, CudaMessage(result, call, file, line),
                DriverNameOfRuntimeError(cudaGetErrorName(result)));
}

bool CuLogIfError(const DriverApi& api, CUresult result, const char* call, const char* file,
                  int line) noexcept {
  if (result == CUDA_SUCCESS) return true;
  try {
    std::fprintf(stderr, "vmm-run: warning: %s\n",
                 CuMessage(api, result, call, file, line).c_str());
  } catch (...) {  // std::bad_alloc while building the message: say less rather than throw
    std::fprintf(stderr, "vmm-run: warning: %s failed (CUresult %d)\n", call,
                 static_cast<int>(result));
  }
  return false;
}

bool CudaLogIfError(cudaError_t result, const char* call, const char* file, int line) noexcept {
  if (result == cudaSuccess) return true;
  (void)cudaGetLastError();
  try {
    std::fprintf(stderr, "vmm-run: warning: %s\n", CudaMessage(result, call, file, line).c_str());
  } catch (...) {
    std::fprintf(stderr, "vmm-run: warning: %s failed (cudaError %d)\n", call,
                 static_cast<int>(result));
  }
  return false;
}

}  // namespace vmm::cuda
