// The CUDA error names vmm-run speaks: every CUresult of the driver API (by name and value, as
// CUDA 13.0's cuda.h defines them) and the runtime errors the engine's graph, copy and kernel calls
// can return, each mapped to the CUresult it stands for. A scenario's `expect_error` names a
// CUresult; an engine Status carries the CUresult name of the call that failed
// (Status::cuda_error), whichever API made the call, so the two compare as plain strings.
//
// Pure data, constant-initialized: safe to read from anywhere. Every `name` is a string literal
// (static storage, NUL-terminated), so a Status may point at it.
#pragma once

#include <span>
#include <string_view>

namespace vmm {

// `expect_error: observe`: the step records what its call returns instead of judging it (a
// literal, like the names below, so a PlanStep may point at it).
inline constexpr const char* kObserveError = "observe";

struct CudaErrorName {
  const char* name;  // "CUDA_ERROR_INVALID_VALUE"
  int value;         // its CUresult value (1)
};

// Every CUresult, CUDA_SUCCESS first, in the header's order. runner/vocab/cuda_errors_test.cc holds
// it to the toolkit's cuda.h when one is installed.
std::span<const CudaErrorName> CudaErrorNames();
// The CUresult called `name`, or nullptr.
const CudaErrorName* FindCudaError(std::string_view name);
// The CUresult with `value`, or nullptr (a value newer than this table).
const CudaErrorName* FindCudaErrorByValue(int value);

struct RuntimeErrorName {
  const char* runtime;  // "cudaErrorMemoryAllocation"
  const char* driver;   // "CUDA_ERROR_OUT_OF_MEMORY"
};

// The runtime errors with a driver equivalent, one row each.
std::span<const RuntimeErrorName> RuntimeErrorNames();
// The CUresult name that `runtime_name` ("cudaErrorInvalidValue") stands for, or nullptr when the
// runtime error has no driver equivalent in the table.
const char* DriverNameOfRuntimeError(std::string_view runtime_name);

}  // namespace vmm
