// What a distributed job's checks compare across processes, kept once each process's trace has been analyzed and
// dropped (a job of hundreds of ranks is analyzed one trace at a time): who the process is (rank, world size, host)
// and, for each CUDA graph capture in order, whether it made a graph, how many nodes, which kernels, and which NCCL
// calls it issued; and which Megatron layers it graphed (its pipeline stage).
#ifndef GRAPHCHECK_ANALYZERS_JOB_SUMMARY_H_
#define GRAPHCHECK_ANALYZERS_JOB_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyzers/collectives.h"
#include "analyzers/trace_analysis.h"
#include "core/finding.h"

namespace graphcheck::analyzers {

struct CaptureSummary {
  bool made_graph = false;       // the capture ended and returned a graph
  uint32_t nodes = 0;            // its node count
  uint64_t kernel_sequence = 0;  // hash of the captured kernels' names in order (CaptureWindow::kernel_sequence)
  std::vector<CollectiveRun> collectives;  // the NCCL calls made while the capture was open, in order
  Location where;                          // the capture's begin call
};

struct ProcessSummary {
  int32_t rank = -1;  // -1: not a rank of a distributed job
  int32_t world_size = -1;
  std::string host;
  uint32_t pid = 0;
  std::vector<CaptureSummary> captures;  // in order of capture begin; the graph machinery's own captures left out
  // The layers (numbered from 1) whose graphs Megatron Core's CudaGraphManager captured here, sorted, once each: a
  // pipeline-parallel job's ranks hold different layers and so capture different graphs by design.
  std::vector<int64_t> megatron_layers;
};

struct JobSummary {
  std::vector<ProcessSummary> processes;
};

// The summary of the process `analysis` holds.
ProcessSummary SummarizeProcess(const TraceAnalysis& analysis);

}  // namespace graphcheck::analyzers

#endif  // GRAPHCHECK_ANALYZERS_JOB_SUMMARY_H_
