// libFuzzer target for the configuration parser (YAML, JSON, Megatron arguments) and the capture-order parser,
// followed by every configuration check. The first byte picks the input kind.
#include <cstddef>
#include <cstdint>

#include "fuzz/config_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto kind = static_cast<graphcheck::LintInputKind>(data[0] % 4);
  graphcheck::LintInput(absl::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), kind).IgnoreError();
  return 0;
}
