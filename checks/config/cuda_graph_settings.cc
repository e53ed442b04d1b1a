#include "checks/config/cuda_graph_settings.h"

#include "absl/strings/ascii.h"

namespace graphcheck::checks {

CudaGraphSettings CudaGraphSettings::From(const ConfigDocument& document) {
  CudaGraphSettings settings;
  settings.impl = Lookup(document, config_keys::kCudaGraphImpl);
  settings.impl_name = std::string(absl::StripAsciiWhitespace(settings.impl.AsString()));
  if (settings.impl_name.empty() || absl::AsciiStrToLower(settings.impl_name) == "null") {
    settings.impl_name = std::string(kImplNone);
  }
  // Older configurations turn graphs on with a switch instead of cuda_graph_impl.
  if (!settings.impl.is_set()) {
    for (auto [key, name] : {std::make_pair(&config_keys::kEnableCudaGraph, kImplLocal),
                             std::make_pair(&config_keys::kExternalCudaGraph, kImplTransformerEngine)}) {
      Setting legacy = Lookup(document, *key);
      if (legacy.IsTrue()) {
        settings.impl = std::move(legacy);
        settings.impl_name = std::string(name);
        break;
      }
    }
  }
  settings.scope = Lookup(document, config_keys::kCudaGraphScope);
  return settings;
}

}  // namespace graphcheck::checks
