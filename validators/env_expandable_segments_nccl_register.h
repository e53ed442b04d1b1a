// env-expandable-segments-nccl-register: the caching allocator's expandable segments together with NCCL's graph
// buffer registration. Transformer Engine's graph path asserts against it on every GPU, Megatron Core's local path
// on compute capability below 10.
#ifndef GRAPHCHECK_VALIDATORS_ENV_EXPANDABLE_SEGMENTS_NCCL_REGISTER_H_
#define GRAPHCHECK_VALIDATORS_ENV_EXPANDABLE_SEGMENTS_NCCL_REGISTER_H_

#include <optional>
#include <string>

#include "core/check.h"

namespace graphcheck {

class EnvExpandableSegmentsNcclRegisterCheck : public EnvironmentCheck {
 public:
  const CheckInfo& info() const override;

 protected:
  void CheckEnvironment(const Environment& env, const BoundOptions& options,
                        std::vector<Finding>* findings) const override;
};

// The value of `key` in a PyTorch allocator configuration ("k1:v1,k2:v2", spaces allowed), or nullopt. Exposed for
// tests.
std::optional<std::string> AllocatorConfValue(absl::string_view conf, absl::string_view key);

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_ENV_EXPANDABLE_SEGMENTS_NCCL_REGISTER_H_
