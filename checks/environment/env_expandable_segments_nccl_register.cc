// env-expandable-segments-nccl-register: the caching allocator's expandable segments together with NCCL's graph
// buffer registration. Transformer Engine's graph path asserts against it on every GPU, Megatron Core's local path
// on compute capability below 10.
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/environment/allocator_conf.h"
#include "core/check.h"
#include "core/check_ids.h"
#include "core/environment.h"

namespace graphcheck::checks {
namespace {

class EnvExpandableSegmentsNcclRegisterCheck : public CheckOf<Environment> {
 public:
  EnvExpandableSegmentsNcclRegisterCheck();

 protected:
  void Read(const Environment& env, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace

EnvExpandableSegmentsNcclRegisterCheck::EnvExpandableSegmentsNcclRegisterCheck()
    : CheckOf(CheckInfo{
          check_id::kEnvExpandableSegmentsNcclRegister,
          "expandable_segments with NCCL graph buffer registration",
          Severity::kError,
          CheckArea::kEnvironment,
          "PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF has expandable_segments:True while NCCL_GRAPH_REGISTER is not "
          "0. "
          "NCCL's registration of buffers captured in graphs does not work with memory that expandable segments remap; "
          "Transformer Engine and Megatron Core refuse to run.",
          {}}) {}

void EnvExpandableSegmentsNcclRegisterCheck::Read(const Environment& env, const BoundOptions& options,
                                                  std::vector<Finding>* findings) const {
  std::vector<std::string> evidence;
  for (const char* variable : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}) {
    const std::string* conf = env.Get(variable);
    if (conf == nullptr) continue;
    std::optional<std::string> value = AllocatorConfValue(*conf, "expandable_segments");
    if (value && absl::EqualsIgnoreCase(*value, "true")) evidence.push_back(absl::StrCat(variable, "=", *conf));
  }
  if (evidence.empty()) return;
  const std::string* nccl_register = env.Get("NCCL_GRAPH_REGISTER");
  if (nccl_register != nullptr && absl::StripAsciiWhitespace(*nccl_register) == "0") return;

  Finding finding = NewFinding();
  finding.where.key = evidence.front().substr(0, evidence.front().find('='));
  finding.evidence = evidence;
  finding.evidence.push_back(
      nccl_register == nullptr ? std::string("NCCL_GRAPH_REGISTER is not set (NCCL registers graph buffers by default)")
                               : absl::StrCat("NCCL_GRAPH_REGISTER=", *nccl_register));
  finding.message =
      "expandable_segments:True is set while NCCL may register the buffers of captured collectives "
      "(NCCL_GRAPH_REGISTER is not 0). Expandable segments remap physical memory under a fixed address range, which "
      "NCCL's graph registration does not follow. Transformer Engine's make_graphed_callables path asserts against "
      "this combination on every GPU; Megatron Core's local CUDA-graph path asserts on GPUs of compute capability "
      "below 10.0.";
  if (const auto& gpu = env.gpu()) {
    finding.evidence.push_back(absl::StrCat("GPU ", gpu->name, ", compute capability ", gpu->cc_major, ".",
                                            gpu->cc_minor,
                                            gpu->cc_major < 10 ? ": both Megatron Core and Transformer Engine refuse"
                                                               : ": Transformer Engine refuses; Megatron Core's "
                                                                 "local path accepts it on this GPU"));
  }
  finding.fix =
      "Set NCCL_GRAPH_REGISTER=0 in the job's environment, or remove expandable_segments:True from "
      "PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF.";
  findings->push_back(std::move(finding));
}

std::unique_ptr<Check> NewEnvExpandableSegmentsNcclRegisterCheck() {
  return std::make_unique<EnvExpandableSegmentsNcclRegisterCheck>();
}

}  // namespace graphcheck::checks
