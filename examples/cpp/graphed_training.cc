// Training a small LibTorch model through graphcheck::MakeGraphedCallables, the C++ counterpart of
// torch.cuda.make_graphed_callables: the forward and backward passes replay as CUDA graphs, the loss and a stock
// torch::optim optimizer stay eager.
//
//   build/examples/graphed_training        (needs a GPU)
#include <cstdio>

#include <torch/cuda.h>
#include <torch/nn.h>
#include <torch/optim.h>

#include "engine/graphed_callables.h"

int main() {
  if (!torch::cuda::is_available()) {
    std::fprintf(stderr, "graphed_training: needs a CUDA GPU\n");
    return 3;
  }
  const torch::Device device(torch::kCUDA);
  torch::nn::Sequential net(torch::nn::Linear(512, 512), torch::nn::ReLU(), torch::nn::Dropout(0.1),
                            torch::nn::Linear(512, 10));
  net->to(device);

  graphcheck::Callable callable;
  callable.name = "net";
  callable.forward = [net](const std::vector<at::Tensor>& in) mutable {
    return std::vector<at::Tensor>{net->forward(in[0])};
  };
  callable.parameters = net->parameters();
  callable.buffers = net->buffers();

  // Sample inputs fix the shapes the graphs are captured for; real batches are copied into them on every call.
  const std::vector<c10::IValue> sample = {torch::randn({256, 512}, device)};
  absl::StatusOr<graphcheck::GraphedCallables> graphed = graphcheck::MakeGraphedCallables({callable}, {sample});
  if (!graphed.ok()) {
    std::fprintf(stderr, "graphed_training: %s\n", std::string(graphed.status().message()).c_str());
    return 1;
  }
  const graphcheck::GraphedCallable& graphed_net = graphed->callables.front();

  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  const torch::Tensor target = torch::randint(0, 10, {256}, device);
  const torch::Tensor x = torch::randn({256, 512}, device);
  for (int step = 0; step < 50; ++step) {
    optimizer.zero_grad();
    const torch::Tensor logits = graphed_net({x + 0.01 * torch::randn_like(x)}).at(0);
    const torch::Tensor loss = torch::nn::functional::cross_entropy(logits, target);
    loss.backward();
    optimizer.step();
    if (step % 10 == 0) std::printf("step %2d  loss %.4f\n", step, loss.item<float>());
  }
  return 0;
}
