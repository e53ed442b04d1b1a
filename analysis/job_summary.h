// What a distributed job's checks compare across processes, kept once each process's trace has been analyzed and
// dropped (a job of hundreds of ranks is analyzed one trace at a time): who the process is (rank, world size, host)
// and, for each CUDA graph capture in order, whether it made a graph, how many nodes, which kernels, and which NCCL
// calls it issued; which Megatron layers it graphed (its pipeline stage); and its collective ledgers.
#ifndef GRAPHCHECK_ANALYSIS_JOB_SUMMARY_H_
#define GRAPHCHECK_ANALYSIS_JOB_SUMMARY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/collective_ledger.h"
#include "analysis/collectives.h"
#include "analysis/trace_analysis.h"
#include "core/finding.h"

namespace graphcheck::analysis {

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
  CollectiveLedgers ledgers;  // one per NCCL communicator it used
  bool ledger_lossy = false;  // the writer dropped records: the ledgers may miss entries
  bool hung = false;          // graphcheck ended it for waiting past --hang-timeout
  // How the process stopped when not by a clean exit: "crashed (signal 11)", "stopped on an uncaught exception", ...;
  // "" for a clean exit.
  std::string stopped;
};

// Which ranks must do the same collective work: those of one job (world size) that hold the same Megatron layers. The
// ranks of a pipeline-parallel job hold different stages and capture different graphs by design (seen on two H100s:
// pipeline parallel 2, where rank 0's fourth capture was a forward and rank 1's a backward).
using JobStage = std::pair<int32_t, std::vector<int64_t>>;
inline JobStage StageOf(const ProcessSummary& process) { return {process.world_size, process.megatron_layers}; }

struct JobSummary {
  std::vector<ProcessSummary> processes;
};

// The summary of the process `analysis` holds.
ProcessSummary SummarizeProcess(const TraceAnalysis& analysis);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_JOB_SUMMARY_H_
