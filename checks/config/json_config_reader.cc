// JSON -> ConfigDocument through nlohmann's SAX parser. SAX events carry no positions, so the input is read through
// an iterator that records the last character the lexer consumed; each event's token ends there, and its start is
// found by scanning back over the token.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "checks/config/config_readers.h"

namespace graphcheck::checks {
namespace config_internal {
namespace {

// A forward iterator over the text that leaves the address of the character last read in *last_read.
class TrackingIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator(const char* at, const char** last_read) : at_(at), last_read_(last_read) {}
  reference operator*() const {
    *last_read_ = at_;
    return *at_;
  }
  TrackingIterator& operator++() {
    ++at_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator before = *this;
    ++at_;
    return before;
  }
  bool operator==(const TrackingIterator& other) const { return at_ == other.at_; }
  bool operator!=(const TrackingIterator& other) const { return at_ != other.at_; }

 private:
  const char* at_;
  const char** last_read_;
};

// Byte offset -> 1-based line and column.
class LineTable {
 public:
  explicit LineTable(absl::string_view text) {
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') line_starts_.push_back(i + 1);
    }
  }
  Position At(size_t offset) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const size_t line = static_cast<size_t>(it - line_starts_.begin());  // line_starts_[0] == 0, so line >= 1
    return Position{static_cast<int>(line), static_cast<int>(offset - line_starts_[line - 1] + 1)};
  }

 private:
  std::vector<size_t> line_starts_{0};
};

class JsonFlattener : public nlohmann::json_sax<nlohmann::json> {
 public:
  JsonFlattener(absl::string_view text, ConfigDocument* document) : text_(text), lines_(text), document_(document) {}
  const char** last_read() { return &last_read_; }
  const absl::Status& status() const { return status_; }

  bool null() override { return Scalar("null", TokenStart(4), /*is_null=*/true); }
  bool boolean(bool value) override { return Scalar(value ? "true" : "false", TokenStart(value ? 4 : 5)); }
  bool number_integer(number_integer_t value) override { return Scalar(absl::StrCat(value), NumberStart()); }
  bool number_unsigned(number_unsigned_t value) override { return Scalar(absl::StrCat(value), NumberStart()); }
  bool number_float(number_float_t, const string_t& text) override { return Scalar(text, NumberStart()); }
  bool string(string_t& value) override { return Scalar(value, StringStart()); }
  bool binary(binary_t&) override { return Fail(Here(), "binary values are not JSON"); }

  bool key(string_t& name) override {
    pending_key_ = name;
    pending_key_position_ = StringStart();
    return true;
  }
  bool start_object(std::size_t) override { return Open(/*is_array=*/false); }
  bool end_object() override {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return Open(/*is_array=*/true); }
  // A list of scalars is one entry; a list holding objects or lists has had its items walked with indexes as keys.
  bool end_array() override {
    Frame frame = std::move(frames_.back());
    frames_.pop_back();
    if (frame.all_scalars) {
      ConfigEntry entry{frame.key, ConfigEntry::Kind::kList, {}, frame.key_position};
      for (auto& [index, value] : frame.scalars) entry.values.push_back(std::move(value));
      return Add(std::move(entry));
    }
    for (auto& [index, value] : frame.scalars) {
      if (!Add(ConfigEntry{
              JoinKey(frame.key, absl::StrCat(index)), ConfigEntry::Kind::kScalar, {value}, value.position})) {
        return false;
      }
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    // nlohmann's message reads "[json.exception.parse_error.101] parse error at line L, column C: WHAT"; keep WHAT
    // and report the position in the same FILE:LINE:COLUMN form as YAML errors.
    std::string what = e.what();
    const size_t column = what.find(", column ");
    const size_t colon = column == std::string::npos ? std::string::npos : what.find(": ", column);
    if (colon != std::string::npos) what = what.substr(colon + 2);
    return Fail(lines_.At(position == 0 ? 0 : std::min(position, text_.size()) - 1), what);
  }

 private:
  struct Frame {
    bool is_array = false;
    std::string key;
    Position key_position;
    int next_index = 0;
    bool all_scalars = true;
    std::vector<std::pair<int, ConfigScalar>> scalars;
  };

  size_t LastOffset() const { return last_read_ == nullptr ? 0 : static_cast<size_t>(last_read_ - text_.data()); }
  Position Here() const { return lines_.At(LastOffset()); }
  // Literals: the lexer has just read their last character.
  Position TokenStart(size_t length) const {
    const size_t end = LastOffset();
    return lines_.At(end + 1 >= length ? end + 1 - length : 0);
  }
  // Strings: scan back from the closing quote to the opening quote that no backslash escapes.
  Position StringStart() const {
    size_t at = LastOffset();
    while (at > 0) {
      --at;
      if (text_[at] != '"') continue;
      size_t backslashes = 0;
      while (at > backslashes && text_[at - 1 - backslashes] == '\\') ++backslashes;
      if (backslashes % 2 == 0) break;
    }
    return lines_.At(at);
  }
  // Numbers: the lexer read one character past the number (unless the text ended), then scan back over it.
  Position NumberStart() const {
    auto is_number_char = [](char c) {
      return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
    };
    size_t at = LastOffset();
    if (!is_number_char(text_[at]) && at > 0) --at;
    while (at > 0 && is_number_char(text_[at - 1])) --at;
    return lines_.At(at);
  }

  // The key the next value or container belongs to.
  std::pair<std::string, Position> NextKey() {
    Frame& parent = frames_.back();
    if (!parent.is_array) return {JoinKey(parent.key, pending_key_), pending_key_position_};
    parent.all_scalars = false;
    return {JoinKey(parent.key, absl::StrCat(parent.next_index++)), Here()};
  }

  bool Open(bool is_array) {
    if (frames_.empty()) {
      if (is_array) return Fail(Here(), "the top level must be an object of keys");
      frames_.push_back(Frame{});
      return true;
    }
    if (static_cast<int>(frames_.size()) > kMaxDepth) return Fail(Here(), "nesting is too deep");
    auto [key, position] = NextKey();
    Frame frame;
    frame.is_array = is_array;
    frame.key = std::move(key);
    frame.key_position = position;
    frames_.push_back(std::move(frame));
    return true;
  }

  bool Scalar(std::string text, Position position, bool is_null = false) {
    if (frames_.empty()) return Fail(position, "the top level must be an object of keys");
    if (++visited_ > kMaxEntries) return Fail(position, "document is too large");
    Frame& parent = frames_.back();
    ConfigScalar value{std::move(text), position};
    if (parent.is_array) {
      parent.scalars.emplace_back(parent.next_index++, std::move(value));
      return true;
    }
    ConfigEntry entry{JoinKey(parent.key, pending_key_),
                      is_null ? ConfigEntry::Kind::kNull : ConfigEntry::Kind::kScalar,
                      {},
                      pending_key_position_};
    if (!is_null) entry.values.push_back(std::move(value));
    return Add(std::move(entry));
  }

  bool Add(ConfigEntry entry) {
    document_->Add(std::move(entry));
    return true;
  }

  bool Fail(Position position, absl::string_view message) {
    if (status_.ok()) status_ = ErrorAt(*document_, position, message);
    return false;
  }

  absl::string_view text_;
  LineTable lines_;
  ConfigDocument* document_;
  const char* last_read_ = nullptr;
  std::vector<Frame> frames_;
  std::string pending_key_;
  Position pending_key_position_;
  size_t visited_ = 0;
  absl::Status status_;
};

}  // namespace

absl::Status ReadJson(absl::string_view text, ConfigDocument* document) {
  JsonFlattener flattener(text, document);
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(TrackingIterator(begin, flattener.last_read()),
                                   TrackingIterator(end, flattener.last_read()), &flattener);
  } catch (const nlohmann::json::exception& e) {  // sax_parse reports through parse_error; this is a safety net
    return ErrorAt(*document, Position{}, e.what());
  }
  if (!flattener.status().ok()) return flattener.status();
  if (!ok) return ErrorAt(*document, Position{}, "not valid JSON");
  return absl::OkStatus();
}

}  // namespace config_internal
}  // namespace graphcheck::checks
