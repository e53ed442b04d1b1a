#include "validators/config/config_checks.h"

#include <memory>
#include <vector>

#include "validators/config/config_cpu_offloading.h"
#include "validators/config/config_delayed_wgrad.h"
#include "validators/config/config_expandable_segments_nccl_register.h"
#include "validators/config/config_full_iteration_impl.h"
#include "validators/config/config_full_iteration_nan_check.h"
#include "validators/config/config_moe_preprocess_requires_router.h"
#include "validators/config/config_moe_recompute_router.h"
#include "validators/config/config_moe_scope_dropless.h"
#include "validators/config/config_moe_scope_exclusive.h"
#include "validators/config/config_moe_scope_without_moe.h"
#include "validators/config/config_static_shapes.h"
#include "validators/config/config_te_rng_tracker.h"
#include "validators/config/config_unknown_cuda_graph_value.h"
#include "validators/schedule/schedule_order.h"

namespace graphcheck {

absl::Status RegisterConfigurationChecks(CheckRegistry* registry) {
  std::vector<std::unique_ptr<Check>> checks;
  checks.push_back(std::make_unique<ConfigCpuOffloadingCheck>());
  checks.push_back(std::make_unique<ConfigDelayedWgradCheck>());
  checks.push_back(std::make_unique<ConfigExpandableSegmentsNcclRegisterCheck>());
  checks.push_back(std::make_unique<ConfigFullIterationImplCheck>());
  checks.push_back(std::make_unique<ConfigFullIterationNanCheckCheck>());
  checks.push_back(std::make_unique<ConfigMoePreprocessRequiresRouterCheck>());
  checks.push_back(std::make_unique<ConfigMoeRecomputeRouterCheck>());
  checks.push_back(std::make_unique<ConfigMoeScopeDroplessCheck>());
  checks.push_back(std::make_unique<ConfigMoeScopeExclusiveCheck>());
  checks.push_back(std::make_unique<ConfigMoeScopeWithoutMoeCheck>());
  checks.push_back(std::make_unique<ConfigStaticShapesCheck>());
  checks.push_back(std::make_unique<ConfigTeRngTrackerCheck>());
  checks.push_back(std::make_unique<ConfigUnknownCudaGraphValueCheck>());
  checks.push_back(std::make_unique<ScheduleOrderCheck>());
  return registry->AddAll(std::move(checks));
}

}  // namespace graphcheck
