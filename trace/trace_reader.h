// Reading trace files (docs/trace-format.md) back into a Trace. Damage after a valid file header (a truncated file, a
// torn or corrupted chunk, an unknown record type) never fails the read: everything up to the damage is kept, the
// reader moves on to the next chunk, and Trace::read_warnings names the byte offset of each problem.
#ifndef GRAPHCHECK_TRACE_TRACE_READER_H_
#define GRAPHCHECK_TRACE_TRACE_READER_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trace/events.h"
#include "trace/kept_string.h"  // kMaxStringBytes: every string read is cut there

namespace graphcheck::trace {

// Record types this reader knows, plus one ([0]: unknown types).
inline constexpr size_t kTraceRecordTypeSlots = 21;

// What the file held, for `graphcheck trace dump` and for measuring the format's compactness.
struct TraceFileStats {
  uint16_t major_version = 0;
  uint16_t minor_version = 0;
  uint32_t writer_pid = 0;
  uint64_t file_bytes = 0;
  uint64_t chunks = 0;
  // Indexed by record type (internal::RecordType); [0] counts records of types this reader does not know.
  std::array<uint64_t, kTraceRecordTypeSlots> records = {};
  std::array<uint64_t, kTraceRecordTypeSlots> record_bytes = {};  // header included
};

// Errors only when `path` cannot be read or is not a graphcheck trace at all (bad magic, unknown major version):
// InvalidArgument / NotFound / PermissionDenied naming the path.
absl::StatusOr<Trace> ReadTrace(const std::string& path, TraceFileStats* stats = nullptr);

// The same over bytes in memory (tests, the fuzzer); errors do not name a path.
absl::StatusOr<Trace> ReadTraceFromBytes(absl::string_view bytes, TraceFileStats* stats = nullptr);

// Name of a record type index of TraceFileStats::records ("api-call", ..., "unknown").
absl::string_view TraceRecordTypeName(size_t type);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_TRACE_TRACE_READER_H_
