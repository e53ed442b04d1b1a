// How the RNG checks read the engine's RngDraws (engine/run/engine_run.h): whether the model's outputs depend on
// random draws, and whether the graphs draw as eager does. A difference counts when it exceeds kNoiseFactor times
// eager's own run-to-run difference after the same seed (0 with deterministic kernels, so any difference then counts).
#ifndef GRAPHCHECK_CHECKS_ENGINE_RNG_DRAWS_RULE_H_
#define GRAPHCHECK_CHECKS_ENGINE_RNG_DRAWS_RULE_H_

#include "engine/run/engine_run.h"

namespace graphcheck::checks {

enum class RngDrawVerdict {
  kNotMeasured,   // no RngDraws in the run
  kNoRandomness,  // eager's outputs do not change from one draw to the next
  kAsEager,       // they do, and the replays draw as eager does
  kFrozen,        // they do in eager; two replays give the same outputs: the graph repeats its capture-time draws
  kMismatch,      // the replays draw anew, but not what eager draws after the same seed: they advance the generator
                  // by another amount than an eager forward does
};

RngDrawVerdict JudgeRngDraws(const EngineRun& run);

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_ENGINE_RNG_DRAWS_RULE_H_
