// What the numerics checks read, taken from one run of the check pipeline (eager, eager repeat or graphed): the
// first step's forward outputs and parameter gradients, and the parameters and buffers after the last step, each
// cloned by name; and their comparison into NumericsSamples (core/numerics_sample.h), computed on the GPU.
#ifndef GRAPHCHECK_ENGINE_NUMERICS_SNAPSHOT_H_
#define GRAPHCHECK_ENGINE_NUMERICS_SNAPSHOT_H_

#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "core/numerics_sample.h"

namespace graphcheck {

struct NamedTensor {
  std::string name;
  TensorRole role = TensorRole::kParameter;
  at::Tensor tensor;
};

struct RunSnapshot {
  std::vector<NamedTensor> tensors;  // detached clones, taken at the points their role says
  bool took_first_step = false;

  // After the first step: its outputs (as "output N") and the gradients of the named parameters that have one.
  void TakeFirstStep(const std::vector<at::Tensor>& outputs, const std::vector<NamedTensor>& state);
  // After the last step: the parameters and buffers as the module holds them now (rebound attributes included).
  void TakeFinalState(const std::vector<NamedTensor>& state);
};

// The largest |b - a| over the elements finite in both (compared as doubles); a and b have the same shape.
double MaxFiniteDifference(const at::Tensor& a, const at::Tensor& b);
// The largest |t| over its finite elements; 0 for an empty tensor.
double FiniteAbsMax(const at::Tensor& t);

// One sample per tensor present, with the same shape, in the eager and the graphed snapshot (matched by role and
// name). `repeat` (may be null) gives the eager spread; `initial` (the state the runs started from) the
// changed-in-eager and changed-in-graphed flags of parameters and buffers.
std::vector<NumericsSample> CompareSnapshots(const RunSnapshot& eager, const RunSnapshot* repeat,
                                             const RunSnapshot& graphed, const std::vector<NamedTensor>& initial);

}  // namespace graphcheck

#endif  // GRAPHCHECK_ENGINE_NUMERICS_SNAPSHOT_H_
