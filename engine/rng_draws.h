// Measures RngDraws (engine/run/engine_run.h) for the RNG checks: the forward run twice in a row on one batch by
// eager and by the graphs, each right after the same seed, and how far each advanced the default CUDA generator.
#ifndef GRAPHCHECK_ENGINE_RNG_DRAWS_H_
#define GRAPHCHECK_ENGINE_RNG_DRAWS_H_

#include <functional>
#include <vector>

#include <ATen/ATen.h>

#include "engine/run/engine_run.h"

namespace graphcheck {

using ForwardFn = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

// `restart` puts back the state and seed every run starts from. Throws what LibTorch throws (run it in CallTorch).
RngDraws MeasureRngDraws(const ForwardFn& eager, const ForwardFn& graphed, const std::vector<at::Tensor>& batch,
                         const std::function<void()>& restart);

}  // namespace graphcheck

#endif  // GRAPHCHECK_ENGINE_RNG_DRAWS_H_
