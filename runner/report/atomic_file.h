// Whole-file reads and crash-safe whole-file writes, shared by report and JUnit output.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "runner/base/status.h"

namespace vmm::report {

// Whether a report may be written at `path`: it must be absent or a regular file. Anything else
// (a directory, FIFO, device, socket, or a symbolic link, wherever it points) is refused with
// kInvalidInput: "'out/r.json' is a FIFO (named pipe); vmm-run only replaces regular files:
// remove it or choose another path". Checked with lstat, so a link is never followed.
Status CheckReplaceableTarget(const std::string& path);

// Writes `contents` to `path` atomically:
//   - `path` must pass CheckReplaceableTarget (checked before and again just before the rename);
//   - the bytes go to a new temp file ".<name>.tmp.XXXXXX" in the same directory, created
//     exclusively by mkstemp (O_CREAT | O_EXCL, mode 0600 then 0644: a planted file or symbolic
//     link at that name is never opened or followed), flushed and fsync'ed, then renamed over
//     `path`. Readers see either the old file or the complete new one, never a torn write.
//   - While the temp file exists it is registered with SetCleanupPath (base/stop_signal.h), so a
//     second SIGINT/SIGTERM/SIGHUP removes it before exiting; every other exit path removes it
//     here.
// On any failure the temp file is removed, an existing `path` is left untouched, and a Status names
// the file and the reason, e.g. "cannot write 'out/r.json': No such file or directory" (kRuntime)
// or the CheckReplaceableTarget message (kInvalidInput).
Status WriteFileAtomically(const std::string& path, const std::string& contents);

// Takes the next piece of a file's contents; a failed write is returned to the producer, which
// stops and returns it.
using PieceWriter = std::function<Status(std::string_view piece)>;
// The same, for contents produced in pieces (a large report, never held whole in memory):
// `produce` calls `write` with each piece in order (they are buffered, 1 MiB at a time) and returns
// Ok when the contents are complete. When it returns an error (its own, or a write's), the temp
// file is removed, an existing `path` is left untouched and that error is returned; so too when
// `produce` throws (the exception goes on).
Status WriteFileAtomically(const std::string& path,
                           const std::function<Status(const PieceWriter& write)>& produce);

// Reads the whole file with ReadInputFile (base/input_file.h): a regular file of at most
// the report_bytes limit (base/limits.h). Fails with kInvalidInput naming the file ("x.json: cannot
// read the file: No such file or directory", "d: cannot read the file: it is a directory; expected
// a regular file").
StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace vmm::report
