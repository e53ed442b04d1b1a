#include "checks/config/config_document.h"

namespace graphcheck::checks {

void ConfigDocument::Add(ConfigEntry entry) {
  auto it = index_.find(entry.key);
  if (it != index_.end()) {
    entries_[it->second] = std::move(entry);
    return;
  }
  index_.emplace(entry.key, entries_.size());
  entries_.push_back(std::move(entry));
}

void ConfigDocument::SetEnvironmentVariable(std::string name, std::string value, Position position) {
  environment_.positions[name] = position;
  environment_.variables.Set(std::move(name), std::move(value));
}

const ConfigEntry* ConfigDocument::Find(absl::string_view key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

Location ConfigDocument::LocationOf(const ConfigEntry& entry) const {
  Location location;
  location.file = file_;
  location.line = entry.position.line;
  location.column = entry.position.column;
  location.key = entry.key;
  return location;
}

Location ConfigDocument::LocationOf(const ConfigEntry& entry, const ConfigScalar& value) const {
  Location location = LocationOf(entry);
  if (value.position.line > 0 || value.position.column > 0) {
    location.line = value.position.line;
    location.column = value.position.column;
  }
  return location;
}

Location ConfigDocument::LocationOfMissing(absl::string_view key) const {
  Location location;
  location.file = file_;
  location.key = std::string(key);
  return location;
}

}  // namespace graphcheck::checks
