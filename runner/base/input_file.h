// ReadInputFile: the one way vmm-run reads a file it is given (scenario, diff config, report).
//
// Contract: only a regular file is read. The file is opened with O_NONBLOCK (so opening a FIFO
// never waits for a writer) and checked with fstat before any byte is read: a FIFO, socket,
// device or directory is refused at once with a message that names what it is. A file larger than
// `max_bytes` is refused before it is read (and a file that grows while being read is cut off at
// max_bytes + 1 and refused), so memory stays bounded whatever the path names. Never throws.
// Errors are kInvalidInput with a message meant to follow "FILE: error: ", e.g.
//   "cannot read the file: it is a FIFO (named pipe); expected a regular file"
//   "the file is 17825792 bytes; the limit is 16 MiB (see docs/limits-and-safety.md)"
#pragma once

#include <cstddef>
#include <string>

#include "runner/base/limits.h"
#include "runner/base/status.h"

namespace vmm {

StatusOr<std::string> ReadInputFile(const std::string& path, size_t max_bytes);
// The same with the bound in force for `limit` (base/limits.h): Limit::kInputBytes for scenarios,
// fragments and diff configs, Limit::kReportBytes for reports. A file past it is refused with
// how to raise the bound.
StatusOr<std::string> ReadInputFile(const std::string& path, Limit limit);

// "a FIFO (named pipe)", "a directory", "a character device", ... for a st_mode's file type.
std::string DescribeFileType(unsigned mode);

}  // namespace vmm
