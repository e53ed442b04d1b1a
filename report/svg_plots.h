// The HTML report's plots, drawn as inline SVG into a pugixml document (so every label from the program is escaped by
// the serializer): the eager and the graphed step on one time scale (kernels per stream, CPU launch calls), the
// distribution of kernel durations, eager against graphed (or forecast) step time, every step of the run by phase,
// and each step's GPU time split into graph replays and eager kernels. Each plot function appends one <figure> to
// `parent`, or nothing when it has no data.
#ifndef GRAPHCHECK_REPORT_SVG_PLOTS_H_
#define GRAPHCHECK_REPORT_SVG_PLOTS_H_

#include <pugixml.hpp>

#include "core/report.h"

namespace graphcheck {

void PlotStepTimelines(const Timeline& timeline, pugi::xml_node parent);
void PlotKernelDurations(const Timeline& timeline, pugi::xml_node parent);
// Log scale in whole decades, equally spaced, from the decade at or below the shortest step to the one at or above
// the longest.
void PlotRunSteps(const Timeline& timeline, pugi::xml_node parent);
// From the report's metrics, all medians: the engine's (check.eager_step_us, check.graphed_step_us,
// check.forecast_graphed_us) where present, as the verdict uses them; else the trace's (launch.iteration_us,
// graphed.iteration_us, launch.forecast_graphed_us). Linear axes end on a tick at or above the longest bar.
void PlotStepTimes(const Report& report, pugi::xml_node parent);
// Graph coverage (analysis/coverage.h): a stacked bar per counted step of its GPU time, graph replays by who made the
// graphs below, kernels launched one by one on top, on a linear axis that ends on a tick at or above the tallest bar.
void PlotCoverage(const Coverage& coverage, pugi::xml_node parent);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_SVG_PLOTS_H_
