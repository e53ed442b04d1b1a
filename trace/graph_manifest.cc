// The capture contract's records: names and the probe's tensor list.
#include "trace/graph_manifest.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace graphcheck::trace {

absl::string_view GraphMemoryAccessName(GraphMemoryUse::Access access) {
  switch (access) {
    case GraphMemoryUse::Access::kArgument:
      return "argument";
    case GraphMemoryUse::Access::kCopyRead:
      return "copy-read";
    case GraphMemoryUse::Access::kCopyWrite:
      return "copy-write";
    case GraphMemoryUse::Access::kSet:
      return "set";
  }
  return "unknown";
}

std::vector<NamedTensor> ParseNamedTensors(absl::string_view text, size_t limit) {
  std::vector<NamedTensor> tensors;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (tensors.size() >= limit) break;
    const std::vector<absl::string_view> fields = absl::StrSplit(line, '\t');
    NamedTensor tensor;
    if (fields.size() != 4 || fields[0].empty() || !absl::SimpleHexAtoi(fields[2], &tensor.address) ||
        !absl::SimpleHexAtoi(fields[3], &tensor.bytes)) {
      continue;
    }
    tensor.role = std::string(fields[0]);
    tensor.name = std::string(fields[1]);
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

}  // namespace graphcheck::trace
