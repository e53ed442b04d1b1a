// The C++ launch-bound step of the recorder-overhead benchmark (bench/chain_step.h, 63 kernels), unrecorded unless
// run under `graphcheck run`. usage: overhead_chain [SECONDS] (default 20); prints what ChainStep::RunTimed prints,
// with the per-block lines when BLOCKS=1 is in the environment (to see where a recorder's cost falls).
#include <cstdlib>
#include <string>

#include "bench/chain_step.h"

int main(int argc, char** argv) {
  const char* blocks = std::getenv("BLOCKS");
  graphcheck::bench::ChainStep step;
  step.RunTimed(argc > 1 ? std::atof(argv[1]) : 20, blocks != nullptr && std::string(blocks) == "1");
  return 0;
}
