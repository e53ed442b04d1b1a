#include "engine/rng_draws.h"

#include <algorithm>
#include <limits>
#include <mutex>

#include <ATen/cuda/CUDAGeneratorImpl.h>

#include "engine/numerics_snapshot.h"

namespace graphcheck {
namespace {

// The outputs of one call, detached and copied: a replay's outputs are the graph's static buffers, which the next
// replay overwrites.
std::vector<at::Tensor> Draw(const ForwardFn& forward, const std::vector<at::Tensor>& batch) {
  std::vector<at::Tensor> outputs;
  for (const at::Tensor& t : forward(batch)) outputs.push_back(t.detach().clone());
  return outputs;
}

// The largest MaxFiniteDifference over the outputs; infinity when they do not match in number or shape.
double MaxDifference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].sizes() != b[i].sizes()) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, MaxFiniteDifference(a[i], b[i]));
  }
  return worst;
}

uint64_t DefaultGeneratorOffset() {
  at::Generator generator = at::cuda::detail::getDefaultCUDAGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get<at::CUDAGeneratorImpl>()->philox_offset_per_thread();
}

}  // namespace

RngDraws MeasureRngDraws(const ForwardFn& eager, const ForwardFn& graphed, const std::vector<at::Tensor>& batch,
                         const std::function<void()>& restart) {
  RngDraws draws;
  restart();
  const std::vector<at::Tensor> eager_first = Draw(eager, batch);
  uint64_t before = DefaultGeneratorOffset();
  const std::vector<at::Tensor> eager_second = Draw(eager, batch);
  draws.eager_offset = DefaultGeneratorOffset() - before;
  restart();
  const std::vector<at::Tensor> eager_again = Draw(eager, batch);
  restart();
  const std::vector<at::Tensor> graphed_first = Draw(graphed, batch);
  before = DefaultGeneratorOffset();
  const std::vector<at::Tensor> graphed_second = Draw(graphed, batch);
  draws.graphed_offset = DefaultGeneratorOffset() - before;
  draws.eager_redraw = MaxDifference(eager_first, eager_second);
  draws.eager_reseeded = MaxDifference(eager_first, eager_again);
  draws.graphed_redraw = MaxDifference(graphed_first, graphed_second);
  draws.graphed_vs_eager = MaxDifference(graphed_first, eager_first);
  for (const at::Tensor& t : eager_first) draws.output_abs_max = std::max(draws.output_abs_max, FiniteAbsMax(t));
  return draws;
}

}  // namespace graphcheck
