// NVTX ranges of one trace: the path of the program's push ranges open on a thread at a time
// ("train_step/forward/attention"), the intervals of ranges with a given name (the `region` the user wants graphed),
// and the ranges of a library's domain (NCCL's collectives). Built in one pass over the NVTX events; a path query is a
// binary search. Paths and step ranges come from the default domain only: every domain has its own push/pop stack, and
// libraries' ranges (NCCL wraps each call in one) are not the program's steps.
#ifndef GRAPHCHECK_ANALYSIS_NVTX_INDEX_H_
#define GRAPHCHECK_ANALYSIS_NVTX_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "trace/events.h"

namespace graphcheck::analysis {

struct TimeInterval {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t thread_id = 0;
};

// A closed push range of a named domain: "ncclAllReduce" in domain "NCCL".
struct DomainRange : TimeInterval {
  absl::string_view name;     // points into the trace's strings
  uint64_t communicator = 0;  // NCCL's calls: the communicator (NvtxEvent::communicator), 0 unknown
};

class NvtxIndex {
 public:
  explicit NvtxIndex(const trace::Trace& trace);

  // The push ranges open on `thread_id` at `time_ns`, outermost first, joined by '/'; "" when none.
  absl::string_view PathAt(uint32_t thread_id, uint64_t time_ns) const;
  // Every closed range named `name` (push/pop on any thread, or start/end), by start time. A range left open at the
  // end of the trace is not an interval and is left out.
  std::vector<TimeInterval> RangesNamed(absl::string_view name) const;
  // The outermost push range name that repeats most often (at least `min_count` times), "" when none does: programs
  // mark their step with such a range, which is a better step boundary than a repeated kernel sequence.
  std::string MostRepeatedOutermostRange(size_t min_count) const;
  // Every closed push range of the domain named `domain` ("NCCL"), by start time.
  std::vector<DomainRange> RangesInDomain(absl::string_view domain) const;

 private:
  struct Transition {
    uint64_t time_ns;
    uint32_t path;  // index into paths_
  };
  // Calls visit(push event, pop time) for every closed push range, each domain's stack kept apart.
  template <typename Visit>
  void ForEachPushRange(Visit visit) const;

  const trace::Trace& trace_;
  std::vector<uint32_t> order_;  // NVTX event indices by (thread, time)
  std::vector<std::string> paths_ = {""};
  absl::flat_hash_map<uint32_t, std::vector<Transition>> transitions_;  // per thread, by time
};

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_NVTX_INDEX_H_
