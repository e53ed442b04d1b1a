#include "core/finding.h"

#include <tuple>

namespace graphcheck {

bool Location::operator==(const Location& o) const {
  return std::tie(api, thread_id, stream_id, nvtx_path, backtrace, python, torch_op, file, line, column, key, pid) ==
         std::tie(o.api, o.thread_id, o.stream_id, o.nvtx_path, o.backtrace, o.python, o.torch_op, o.file, o.line,
                  o.column, o.key, o.pid);
}

bool Finding::operator==(const Finding& o) const {
  return std::tie(check_id, severity, title, message, evidence, consequences, where, fix) ==
         std::tie(o.check_id, o.severity, o.title, o.message, o.evidence, o.consequences, o.where, o.fix);
}

}  // namespace graphcheck
