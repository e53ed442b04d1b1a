#include "core/environment.h"

#include <cstring>

extern char** environ;  // POSIX

namespace graphcheck {

Environment Environment::FromCurrentProcess() {
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq == nullptr) continue;
    env.Set(std::string(*entry, eq - *entry), std::string(eq + 1));
  }
  return env;
}

const std::string* Environment::Get(absl::string_view name) const {
  auto it = variables_.find(name);
  return it == variables_.end() ? nullptr : &it->second;
}

}  // namespace graphcheck
