// Megatron Core arguments -> ConfigDocument. The input may be a bare argument list or a whole launch script
// (`NCCL_GRAPH_REGISTER=0 torchrun ... pretrain_gpt.py --cuda-graph-impl local \`): words before the first flag that
// look like NAME=value, and `export NAME=value` lines, are the job's environment; other launcher words are skipped.
#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "checks/config/config_readers.h"

namespace graphcheck::checks {
namespace config_internal {
namespace {

bool IsFlag(absl::string_view word) {
  if (word.size() < 2 || word[0] != '-') return false;
  // "-1" and "-0.5" are values, not flags.
  return !(std::isdigit(static_cast<unsigned char>(word[1])) || word[1] == '.');
}

bool IsEnvironmentAssignment(absl::string_view word) {
  const size_t eq = word.find('=');
  if (eq == 0 || eq == absl::string_view::npos) return false;
  for (size_t i = 0; i < eq; ++i) {
    const unsigned char c = word[i];
    if (!(std::isalnum(c) || c == '_') || (i == 0 && std::isdigit(c))) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<Word>> SplitWords(absl::string_view text) {
  std::vector<Word> words;
  Word current;
  bool in_word = false;
  char quote = 0;
  Position quote_opened;
  int line = 1;
  int column = 0;
  auto finish = [&] {
    if (in_word) words.push_back(std::move(current));
    current = Word{};
    in_word = false;
  };
  auto start = [&] {
    if (!in_word) current.position = Position{line, column};
    in_word = true;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    ++column;
    if (c == '\n') {
      if (quote == 0) finish();
      if (quote != 0) current.text.push_back(c);
      ++line;
      column = 0;
      continue;
    }
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size() && text[i + 1] != '\n') {
        current.text.push_back(text[++i]);
        ++column;
      } else {
        current.text.push_back(c);
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      finish();
    } else if (c == '#' && !in_word) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;  // a comment runs to the end of the line
    } else if (c == '\\') {
      if (i + 1 < text.size() && text[i + 1] == '\n') {  // line continuation
        finish();
        continue;
      }
      start();
      if (i + 1 < text.size()) {
        current.text.push_back(text[++i]);
        ++column;
      }
    } else if (c == '"' || c == '\'') {
      start();
      quote = c;
      quote_opened = Position{line, column};
    } else {
      start();
      current.text.push_back(c);
    }
  }
  if (quote != 0) {
    return absl::InvalidArgumentError(absl::StrCat(quote_opened.line, ":", quote_opened.column, ": the quote (",
                                                   std::string(1, quote), ") opened here is never closed"));
  }
  finish();
  return words;
}

void ReadArgs(const std::vector<Word>& words, ConfigDocument* document) {
  bool seen_flag = false;
  for (size_t i = 0; i < words.size(); ++i) {
    const Word& word = words[i];
    if (word.text == "--") continue;
    if (!IsFlag(word.text)) {
      if (!seen_flag && IsEnvironmentAssignment(word.text)) {
        const size_t eq = word.text.find('=');
        document->SetEnvironmentVariable(word.text.substr(0, eq), word.text.substr(eq + 1), word.position);
      }
      continue;  // launcher words ("torchrun", "export", "pretrain_gpt.py")
    }
    seen_flag = true;
    ConfigEntry entry;
    entry.position = word.position;
    const size_t eq = word.text.find('=');
    if (eq != std::string::npos) {  // --flag=value
      entry.key = word.text.substr(0, eq);
      Position value_position = word.position;
      if (value_position.column > 0) value_position.column += static_cast<int>(eq) + 1;
      entry.values.push_back(ConfigScalar{word.text.substr(eq + 1), value_position});
    } else {
      entry.key = word.text;
      while (i + 1 < words.size() && !IsFlag(words[i + 1].text) && words[i + 1].text != "--") {
        ++i;
        entry.values.push_back(ConfigScalar{words[i].text, words[i].position});
      }
    }
    entry.kind = entry.values.empty()       ? ConfigEntry::Kind::kFlag
                 : entry.values.size() == 1 ? ConfigEntry::Kind::kScalar
                                            : ConfigEntry::Kind::kList;
    document->Add(std::move(entry));
  }
}

}  // namespace config_internal
}  // namespace graphcheck::checks
