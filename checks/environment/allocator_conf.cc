#include "checks/environment/allocator_conf.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"

namespace graphcheck::checks {

std::optional<std::string> AllocatorConfValue(absl::string_view conf, absl::string_view key) {
  std::optional<std::string> found;
  for (absl::string_view pair : absl::StrSplit(conf, ',', absl::SkipWhitespace())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(pair, absl::MaxSplits(':', 1));
    if (absl::StripAsciiWhitespace(kv.first) == key) {
      found = std::string(absl::StripAsciiWhitespace(kv.second));  // the last occurrence wins, as in PyTorch
    }
  }
  return found;
}

}  // namespace graphcheck::checks
