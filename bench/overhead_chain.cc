// The C++ launch-bound step of the recorder-overhead benchmark (bench/chain_step.h, 42 kernels). Runs it for SECONDS
// (default 20) after 20 warm-up steps, in CUDA-synchronized blocks of about 0.25 s, and prints "us_per_step X" (all
// timed steps, so a sampling recorder's windows are averaged in) and "us_per_step_slowest_block X". With BLOCKS=1 in
// the environment it also prints "block T_S US_PER_STEP" per block (T_S: seconds since the timed steps began), to see
// where a recorder's cost falls.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/chain_step.h"

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 20;
  graphcheck::bench::ChainStep step;
  step.TimeBlock(20);
  long block_steps = 50, total_steps = 0;
  double total_s = 0, slowest_us = 0;
  const char* blocks_env = std::getenv("BLOCKS");
  const bool print_blocks = blocks_env != nullptr && std::string(blocks_env) == "1";
  while (total_s < seconds) {
    const double elapsed = step.TimeBlock(block_steps);
    if (print_blocks) std::printf("block %.3f %.2f\n", total_s, elapsed / block_steps * 1e6);
    total_steps += block_steps;
    total_s += elapsed;
    slowest_us = std::max(slowest_us, elapsed / block_steps * 1e6);
    block_steps = graphcheck::bench::ChainStep::NextBlockSteps(block_steps, elapsed, 0.25);
  }
  std::printf("us_per_step %.2f\n", total_s / total_steps * 1e6);
  std::printf("us_per_step_slowest_block %.2f\n", slowest_us);
  return 0;
}
