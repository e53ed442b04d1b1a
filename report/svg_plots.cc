#include "report/svg_plots.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/fingerprint.h"
#include "core/metrics.h"
#include "core/plural.h"
#include "core/utf8.h"
#include "report/number_text.h"
#include "report/verdict.h"

namespace graphcheck {
namespace {

constexpr double kWidth = 960;  // viewBox units; the SVG scales to the page
constexpr double kLabelWidth = 120;
constexpr double kRowHeight = 14;
constexpr int kKernelColors = 8;  // CSS classes k0..k7

// A coordinate or size as SVG takes it. A report's durations are the program's (a damaged or hostile report can hold
// 1e308 or nan): a number that is not finite is 0 and the rest are bounded, so that no "inf", "nan" or 309-digit
// number reaches the SVG.
std::string Num(double v) {
  constexpr double kFarthest = 1e6;  // far past any plot's edge (kWidth)
  return absl::StrFormat("%.2f", std::isfinite(v) ? std::clamp(v, -kFarthest, kFarthest) : 0.0);
}

// "850 us", "1.25 ms", "3.4 s"; "n/a" for a time that is not finite (a damaged report's sum of 1e308s).
std::string FormatUs(double us) {
  if (us >= 1e6) return NumberText(us / 1e6, 3, "s", Notation::kSignificant);
  if (us >= 1e3) return NumberText(us / 1e3, 3, "ms", Notation::kSignificant);
  return NumberText(us, 3, "us", Notation::kSignificant);
}

std::string FormatCount(double n) { return NumberText(n, 0); }

// A tick step on the 1-2-5 sequence giving at most about `ticks` ticks over [0, range].
double NiceStep(double range, int ticks) {
  const double raw = range / ticks;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * decade >= raw) return m * decade;
  }
  return 10 * decade;
}

// A linear axis over [0, max], its top raised to the next tick so that no bar passes the last tick. Both the axis
// and what is drawn against it scale by `top`.
struct LinearAxis {
  double top = 0;
  double step = 0;
};
LinearAxis NiceAxis(double max, int ticks) {
  if (max <= 0) return {};
  const double step = NiceStep(max, ticks);
  return {std::ceil(max / step - 1e-9) * step, step};
}

// One <figure>: an SVG of kWidth x height and a caption, with helpers that draw in it. Every text passes XmlSafe and
// pugixml's escaping.
class Plot {
 public:
  Plot(pugi::xml_node parent, const std::string& caption, double height) {
    figure_ = parent.append_child("figure");
    caption_ = figure_.append_child("figcaption");
    caption_.text() = XmlSafeText(caption).c_str();
    svg_ = figure_.append_child("svg");
    svg_.append_attribute("xmlns") = "http://www.w3.org/2000/svg";
    svg_.append_attribute("viewBox") = absl::StrCat("0 0 ", kWidth, " ", Num(height)).c_str();
    svg_.append_attribute("role") = "img";
    svg_.append_attribute("aria-label") = XmlSafeText(caption).c_str();
  }

  void Note(const std::string& text) {
    pugi::xml_node note = figure_.append_child("p");
    note.append_attribute("class") = "note";
    note.text() = XmlSafeText(text).c_str();
  }

  pugi::xml_node Shape(const char* tag, const std::string& cls, const std::string& tooltip) {
    pugi::xml_node node = svg_.append_child(tag);
    node.append_attribute("class") = cls.c_str();
    if (!tooltip.empty()) node.append_child("title").text() = XmlSafeText(tooltip).c_str();
    return node;
  }

  void Rect(double x, double y, double w, double h, const std::string& cls, const std::string& tooltip) {
    pugi::xml_node rect = Shape("rect", cls, tooltip);
    rect.append_attribute("x") = Num(x).c_str();
    rect.append_attribute("y") = Num(y).c_str();
    rect.append_attribute("width") = Num(std::max(w, 0.6)).c_str();  // a 1 us kernel stays visible
    rect.append_attribute("height") = Num(h).c_str();
  }

  void Label(double x, double y, const std::string& text, const char* anchor = "start", const char* cls = "label") {
    pugi::xml_node label = Shape("text", cls, "");
    label.append_attribute("x") = Num(x).c_str();
    label.append_attribute("y") = Num(y).c_str();
    label.append_attribute("text-anchor") = anchor;
    label.text() = XmlSafeText(text).c_str();
  }

  void Line(double x1, double y1, double x2, double y2) {
    pugi::xml_node line = Shape("line", "axis", "");
    line.append_attribute("x1") = Num(x1).c_str();
    line.append_attribute("y1") = Num(y1).c_str();
    line.append_attribute("x2") = Num(x2).c_str();
    line.append_attribute("y2") = Num(y2).c_str();
  }

  // A value axis along x from x0 (0) to x1 (axis.top) at height y, grid lines up to `top`.
  void XAxis(double x0, double x1, double y, double top, const LinearAxis& axis, std::string (*format)(double)) {
    Line(x0, y, x1, y);
    if (axis.top <= 0) return;
    for (double v = 0; v <= axis.top * 1.0001; v += axis.step) {
      const double x = x0 + (x1 - x0) * v / axis.top;
      Line(x, top, x, y + 3);
      Label(x, y + 14, format(v), "middle", "tick");
    }
  }

  // A value axis along y from y0 (0, bottom) to y1 (axis.top) at x.
  void YAxis(double x, double y0, double y1, const LinearAxis& axis, std::string (*format)(double)) {
    Line(x, y0, x, y1);
    if (axis.top <= 0) return;
    for (double v = 0; v <= axis.top * 1.0001; v += axis.step) {
      const double y = y0 - (y0 - y1) * v / axis.top;
      Line(x - 3, y, x, y);
      Label(x - 5, y + 4, format(v), "end", "tick");
    }
  }

 private:
  pugi::xml_node figure_;
  pugi::xml_node svg_;
  pugi::xml_node caption_;
};

std::string KernelClass(const std::string& name) { return absl::StrCat("kernel k", StableHash(name) % kKernelColors); }

// The phase as a CSS class: only known phases, since the value comes from a report file.
std::string PhaseClass(const std::string& phase) {
  for (const char* known : {"warmup", "eager", "capture", "graphed"}) {
    if (phase == known) return absl::StrCat("phase ph-", known);
  }
  return "phase ph-other";
}

// How wide a step is drawn: its extent, and never narrower than what it holds (a report written before extent_us
// existed reads it as 0, and its kernels that ran behind the launches would be drawn past the axis).
double DrawnExtentUs(const StepTimeline& step) {
  double extent = std::max(step.duration_us, step.extent_us);
  for (const TimelineKernel& k : step.kernels) extent = std::max(extent, k.start_us + k.duration_us);
  for (const TimelineLaunch& l : step.launches) extent = std::max(extent, l.start_us + l.duration_us);
  return extent;
}

// Draws one step's rows (CPU launches, then one per stream) from `top`; returns the y below them.
double DrawStepRows(Plot& plot, const StepTimeline& step, double top, double scale) {
  std::map<uint64_t, int> stream_rows;
  for (const TimelineKernel& k : step.kernels) stream_rows.emplace(k.stream, 0);
  int row = 1;
  for (auto& [stream, index] : stream_rows) index = row++;
  // The step's time is the metrics' median; where its kernels ran behind its launches, the drawing is wider.
  const double extent_us = DrawnExtentUs(step);
  const std::string behind =
      extent_us > 1.05 * step.duration_us
          ? absl::StrCat(" (its kernels ran behind its launches, until ", FormatUs(extent_us), ")")
          : "";
  plot.Label(0, top + 11,
             absl::StrFormat("%s: %s step time, %s%s", step.label, FormatUs(step.duration_us),
                             Plural(step.kernels.size() + step.dropped_kernels, "kernel", "kernels"), behind),
             "start", "heading");
  top += 16;
  plot.Label(kLabelWidth - 6, top + 10, "CPU launch calls", "end");
  for (const TimelineLaunch& launch : step.launches) {
    plot.Rect(kLabelWidth + launch.start_us * scale, top + 2, launch.duration_us * scale, kRowHeight - 4, "launch",
              absl::StrFormat("launch call at %s, %s", FormatUs(launch.start_us), FormatUs(launch.duration_us)));
  }
  for (const auto& [stream, index] : stream_rows) {
    plot.Label(kLabelWidth - 6, top + index * kRowHeight + 10, absl::StrCat("stream ", stream), "end");
  }
  for (const TimelineKernel& k : step.kernels) {
    plot.Rect(
        kLabelWidth + k.start_us * scale, top + stream_rows[k.stream] * kRowHeight + 1, k.duration_us * scale,
        kRowHeight - 2, KernelClass(k.name),
        absl::StrFormat("%s\nstream %d, at %s, %s", k.name, k.stream, FormatUs(k.start_us), FormatUs(k.duration_us)));
  }
  return top + row * kRowHeight + 8;
}

size_t StreamCount(const StepTimeline& step) {
  std::vector<uint64_t> streams;
  for (const TimelineKernel& k : step.kernels) streams.push_back(k.stream);
  std::sort(streams.begin(), streams.end());
  return std::unique(streams.begin(), streams.end()) - streams.begin();
}

// The origin of a graph as a CSS class: only known origins, since the value comes from a report file.
std::string OriginClass(const std::string& origin) {
  for (const char* known : {"user", "make_graphed_callables", "cudagraph-trees", "transformer-engine", "megatron",
                            "megatron-full-iteration"}) {
    if (origin == known) return absl::StrCat("cov cov-", known);
  }
  return "cov cov-other";
}

double StepGpuUs(const StepCoverage& step) {
  double us = step.eager_gpu_us;
  for (const CoverageShare& s : step.graphed) us += s.gpu_us;
  return us;
}

// One step's stack from `bottom` up: the graph replays by origin, then the eager kernels on top.
void DrawCoverageBar(Plot& plot, const StepCoverage& step, double x, double width, double bottom, double scale) {
  double y = bottom;
  for (const CoverageShare& s : step.graphed) {
    const double h = s.gpu_us * scale;
    y -= h;
    plot.Rect(x, y, width, h, OriginClass(s.origin),
              absl::StrFormat("%s: graphs made by %s, %s (%s)", step.label, s.origin, FormatUs(s.gpu_us),
                              Plural(s.kernels, "kernel", "kernels")));
  }
  const double h = step.eager_gpu_us * scale;
  plot.Rect(x, y - h, width, h, "cov cov-eager",
            absl::StrFormat("%s: launched one by one, %s (%s)", step.label, FormatUs(step.eager_gpu_us),
                            Plural(step.eager_kernels, "kernel", "kernels")));
}

}  // namespace

void PlotCoverage(const Coverage& coverage, pugi::xml_node parent) {
  if (coverage.steps.empty()) return;
  double max_us = 0;
  for (const StepCoverage& step : coverage.steps) max_us = std::max(max_us, StepGpuUs(step));
  if (max_us <= 0) return;
  const double height = 260, bottom = 200, left = 70, right = kWidth - 20;
  Plot plot(parent,
            absl::StrCat("GPU time per step (", coverage.process,
                         "): CUDA graph replays by who made the graphs, and kernels launched one by one"),
            height);
  const LinearAxis axis = NiceAxis(max_us, 5);
  const double scale = (bottom - 10) / axis.top;
  const double slot = (right - left) / coverage.steps.size();
  for (size_t i = 0; i < coverage.steps.size(); ++i) {
    DrawCoverageBar(plot, coverage.steps[i], left + i * slot + slot * 0.1, slot * 0.8, bottom, scale);
  }
  plot.YAxis(left, bottom, 10, axis, FormatUs);
  plot.Line(left, bottom, right, bottom);
  plot.Label(left, bottom + 14, coverage.steps.front().label, "start", "tick");
  plot.Label(right, bottom + 14, coverage.steps.back().label, "end", "tick");
  double x = left;
  plot.Rect(x, height - 28, 10, 10, "cov cov-eager", "");
  plot.Label(x + 14, height - 19, "launched one by one");
  x += 160;
  for (const CoverageShare& s : coverage.total.graphed) {
    plot.Rect(x, height - 28, 10, 10, OriginClass(s.origin), "");
    plot.Label(x + 14, height - 19, absl::StrCat("graphs: ", s.origin));
    x += 190;
  }
  plot.Note(absl::StrCat("Over ", coverage.scope, "."));
  if (coverage.dropped_steps > 0) {
    plot.Note(absl::StrCat(Plural(coverage.dropped_steps, "later step is", "later steps are"),
                           " not drawn (the report's cap)"));
  }
}

void PlotStepTimelines(const Timeline& timeline, pugi::xml_node parent) {
  std::vector<const StepTimeline*> steps;
  for (const std::optional<StepTimeline>* step : {&timeline.eager_step, &timeline.graphed_step}) {
    if (step->has_value()) steps.push_back(&**step);
  }
  if (steps.empty()) return;
  double max_us = 0;
  double height = 30;
  for (const StepTimeline* step : steps) {
    max_us = std::max(max_us, DrawnExtentUs(*step));
    height += 16 + (1 + StreamCount(*step)) * kRowHeight + 8;
  }
  const char* which = steps.size() == 2     ? "One eager step and one graphed step on the same time scale"
                      : timeline.eager_step ? "One eager step"
                                            : "One graphed step";
  Plot plot(parent,
            absl::StrCat(which, " (", timeline.process, ", the step of median time",
                         "): kernels per stream, and the CPU's launch calls whose gaps the GPU waits for"),
            height);
  const double right = kWidth - 20;
  const LinearAxis axis = NiceAxis(max_us, 8);
  const double scale = axis.top > 0 ? (right - kLabelWidth) / axis.top : 0;
  double top = 4;
  for (const StepTimeline* step : steps) top = DrawStepRows(plot, *step, top, scale);
  plot.XAxis(kLabelWidth, right, top, 4, axis, FormatUs);
  for (const StepTimeline* step : steps) {
    if (step->dropped_kernels + step->dropped_launches > 0) {
      plot.Note(absl::StrCat(step->label, ": ", Plural(step->dropped_kernels, "kernel", "kernels"), " and ",
                             Plural(step->dropped_launches, "launch call", "launch calls"),
                             " beyond the report's cap are not drawn"));
    }
  }
}

void PlotKernelDurations(const Timeline& timeline, pugi::xml_node parent) {
  const std::vector<HistogramBucket>& buckets = timeline.kernel_durations;
  if (buckets.empty()) return;
  uint64_t max_count = 0;
  for (const HistogramBucket& b : buckets) max_count = std::max(max_count, b.count);
  const double height = 220, bottom = 180, left = 60, right = kWidth - 20;
  Plot plot(parent, "Kernel durations in the eager steps (count per duration bucket)", height);
  const double slot = (right - left) / buckets.size();
  const LinearAxis axis = NiceAxis(static_cast<double>(max_count), 5);
  for (size_t i = 0; i < buckets.size(); ++i) {
    const HistogramBucket& b = buckets[i];
    const double h = axis.top > 0 ? (bottom - 10) * b.count / axis.top : 0;
    const std::string range = absl::StrCat(FormatUs(b.lower_us), " - ", FormatUs(b.upper_us));
    plot.Rect(left + i * slot + 2, bottom - h, slot - 4, h, "bar",
              absl::StrCat(range, ": ", Plural(b.count, "kernel", "kernels")));
    plot.Label(left + (i + 0.5) * slot, bottom + 14, FormatUs(b.lower_us), "middle", "tick");
  }
  plot.YAxis(left, bottom, 10, axis, FormatCount);
  plot.Line(left, bottom, right, bottom);
}

void PlotRunSteps(const Timeline& timeline, pugi::xml_node parent) {
  if (timeline.run.empty()) return;
  // A log scale: the first step (CUDA and library start-up) can be a thousand times a replay. Whole decades from
  // the one below the shortest step to the one above the longest, equally spaced: every tick is where its value is.
  double lowest = 0, highest = 0;
  for (const RunStepTime& s : timeline.run) {
    if (s.duration_us <= 0) continue;
    lowest = lowest == 0 ? s.duration_us : std::min(lowest, s.duration_us);
    highest = std::max(highest, s.duration_us);
  }
  if (highest <= 0) return;
  const double low_decade = std::floor(std::log10(lowest));
  const double high_decade = std::max(std::ceil(std::log10(highest)), low_decade + 1);
  const double height = 260, bottom = 200, left = 70, right = kWidth - 20;
  Plot plot(parent, "Every step of the run in order: its duration (log scale), coloured by phase", height);
  auto y_of = [&](double us) {
    // A step of no duration sits on the axis floor (the log of 0 is not drawable).
    const double decades =
        (std::log10(std::max(us, std::pow(10.0, low_decade))) - low_decade) / (high_decade - low_decade);
    return bottom - (bottom - 10) * decades;
  };
  for (double decade = low_decade; decade <= high_decade; ++decade) {
    const double y = y_of(std::pow(10.0, decade));
    plot.Line(left - 3, y, right, y);
    plot.Label(left - 5, y + 4, FormatUs(std::pow(10.0, decade)), "end", "tick");
  }
  const double slot = (right - left) / timeline.run.size();
  for (size_t i = 0; i < timeline.run.size(); ++i) {
    const RunStepTime& s = timeline.run[i];
    const double y = y_of(s.duration_us);
    plot.Rect(left + i * slot + slot * 0.1, y, slot * 0.8, bottom - y, PhaseClass(s.phase),
              absl::StrCat(s.phase, " step at ", FormatUs(s.start_us), ": ", FormatUs(s.duration_us)));
  }
  plot.Label(left, bottom + 14, "first step", "start", "tick");
  plot.Label(right, bottom + 14, "last step", "end", "tick");
  double x = left;
  for (const char* phase : {"warmup", "eager", "capture", "graphed"}) {
    plot.Rect(x, height - 28, 10, 10, PhaseClass(phase), "");
    plot.Label(x + 14, height - 19, phase);
    x += 110;
  }
  if (timeline.dropped_run_steps > 0) {
    plot.Note(absl::StrCat(Plural(timeline.dropped_run_steps, "later step is", "later steps are"),
                           " not drawn (the report's cap)"));
  }
}

void PlotStepTimes(const Report& report, pugi::xml_node parent) {
  struct Bar {
    const char* label;
    const char* cls;
    std::optional<double> us;
  };
  // The engine's times (graphcheck check: medians of steps run without the recorder) where the report has them, as
  // the headline's speedup does; else the trace's (medians of its steps).
  auto either = [&](const char* engine, const char* trace) {
    std::optional<double> us = FindMetric(report, engine);
    return us ? us : FindMetric(report, trace);
  };
  const Bar bars[] = {
      {"eager (measured)", "bar ph-eager", either(metric::kCheckEagerStepUs.name, metric::kLaunchIterationUs.name)},
      {"graphed (forecast)", "bar ph-forecast",
       either(metric::kCheckForecastGraphedUs.name, metric::kLaunchForecastGraphedUs.name)},
      {"graphed (measured)", "bar ph-graphed",
       either(metric::kCheckGraphedStepUs.name, metric::kGraphedIterationUs.name)},
  };
  double max_us = 0;
  int shown = 0;
  for (const Bar& bar : bars) {
    if (!bar.us) continue;
    max_us = std::max(max_us, *bar.us);
    ++shown;
  }
  if (shown < 2 || max_us <= 0) return;  // a comparison needs two
  const double left = 150, right = kWidth - 120, bar_height = 24;
  const double height = shown * (bar_height + 10) + 30;
  Plot plot(parent, "Step time (medians): eager against graphed (measured) or the forecast for graphs", height);
  const LinearAxis axis = NiceAxis(max_us, 8);
  double y = 6;
  for (const Bar& bar : bars) {
    if (!bar.us) continue;
    const double w = (right - left) * *bar.us / axis.top;
    plot.Rect(left, y, w, bar_height, bar.cls, absl::StrCat(bar.label, ": ", FormatUs(*bar.us)));
    plot.Label(left - 6, y + 16, bar.label, "end");
    plot.Label(left + w + 6, y + 16, FormatUs(*bar.us));
    y += bar_height + 10;
  }
  plot.XAxis(left, right, y, 6, axis, FormatUs);
}

}  // namespace graphcheck
