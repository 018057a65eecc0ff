#include "runner/vocab/access.h"

#include <array>
#include <utility>

namespace vmm {
namespace {
constexpr std::array<std::pair<UpdateCode, const char*>, 9> kUpdateCodeNames = {{
    {UpdateCode::kSuccess, "success"},
    {UpdateCode::kError, "error"},
    {UpdateCode::kErrorTopologyChanged, "error_topology_changed"},
    {UpdateCode::kErrorNodeTypeChanged, "error_node_type_changed"},
    {UpdateCode::kErrorFunctionChanged, "error_function_changed"},
    {UpdateCode::kErrorParametersChanged, "error_parameters_changed"},
    {UpdateCode::kErrorNotSupported, "error_not_supported"},
    {UpdateCode::kErrorUnsupportedFunctionChange, "error_unsupported_function_change"},
    {UpdateCode::kErrorAttributesChanged, "error_attributes_changed"},
}};
}  // namespace

const char* DataPlaceName(DataPlace place) {
  switch (place) {
    case DataPlace::kDevice:
      return "device";
    case DataPlace::kHostPinned:
      return "host_pinned";
    case DataPlace::kHostPageable:
      return "host_pageable";
  }
  return "unknown";
}

const char* AccessName(Access access) {
  switch (access) {
    case Access::kNone:
      return "none";
    case Access::kRead:
      return "read";
    case Access::kReadWrite:
      return "read_write";
  }
  return "unknown";
}

bool ParseAccess(const std::string& name, Access* out) {
  for (Access a : {Access::kNone, Access::kRead, Access::kReadWrite}) {
    if (name == AccessName(a)) {
      *out = a;
      return true;
    }
  }
  return false;
}

const char* UpdateCodeName(UpdateCode code) {
  for (const auto& [c, name] : kUpdateCodeNames)
    if (c == code) return name;
  return "unknown";
}

bool ParseUpdateCode(const std::string& name, UpdateCode* out) {
  for (const auto& [c, n] : kUpdateCodeNames) {
    if (name == n) {
      *out = c;
      return true;
    }
  }
  return false;
}

}  // namespace vmm
