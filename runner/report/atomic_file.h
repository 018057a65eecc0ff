// Whole-file reads and crash-safe whole-file writes, shared by report and JUnit output.
#pragma once

#include <string>

#include "runner/base/status.h"

namespace vmm::report {

// Writes `contents` to `path` atomically: the bytes go to "<path>.tmp.<pid>" in the same directory,
// are flushed and fsync'ed, and the temp file is renamed over `path`. Readers therefore see either
// the old file or the complete new one, never a torn write. On any failure the temp file is
// removed, an existing `path` is left untouched, and a kRuntime Status names the file and the OS
// error, e.g. "cannot write 'out/r.json': No such file or directory".
Status WriteFileAtomically(const std::string& path, const std::string& contents);

// Reads the whole file. Fails with kInvalidInput ("cannot read 'x.json': No such file or
// directory") when it cannot be opened or read.
StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace vmm::report
