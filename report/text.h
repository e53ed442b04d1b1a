// Terminal rendering of a report, for people. Colour only when asked (the CLI asks when stdout is a TTY and NO_COLOR
// is unset).
#ifndef GRAPHCHECK_REPORT_TEXT_H_
#define GRAPHCHECK_REPORT_TEXT_H_

#include <string>

#include "core/report.h"

namespace graphcheck {

struct TextOptions {
  bool color = false;
  int backtrace_frames = 6;  // frames shown per finding
};

std::string RenderText(const Report& report, const TextOptions& options);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_TEXT_H_
