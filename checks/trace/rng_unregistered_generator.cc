// rng-unregistered-generator: captured code drew random numbers from a CUDA generator the graph does not know. PyTorch
// registers the default generator with every capture; a private torch.Generator used inside it must be registered
// (graph.register_generator_state), or PyTorch raises before CUDA sees anything ("Attempt to increase offset for a
// CUDA generator not in capture mode"). The Python probe records that exception where the program raised it, caught
// or not; the program's stderr gives the same diagnosis through the stderr-messages table.
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/trace/probe_findings.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class RngUnregisteredGeneratorCheck : public PythonExceptionCheck {
 public:
  RngUnregisteredGeneratorCheck()
      : PythonExceptionCheck(CheckInfo{
            check_id::kRngUnregisteredGenerator,
            "Captured code used a random generator the graph does not know",
            Severity::kError,
            CheckArea::kRng,
            "Random numbers drawn inside a capture from a CUDA generator that is not registered with the graph: "
            "PyTorch "
            "refuses the capture (an exception, seen by the Python probe or in stderr), or a replay would repeat the "
            "same numbers.",
            {}}) {}
};

}  // namespace

std::unique_ptr<Check> NewRngUnregisteredGeneratorCheck() { return std::make_unique<RngUnregisteredGeneratorCheck>(); }

}  // namespace graphcheck::checks
