#include "engine/models.h"
#include "core/file_io.h"

#include <ATen/core/grad_mode.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <torch/nn.h>
#include <torch/script.h>
#include <torch/serialize.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/plural.h"
#include "engine/torch_edge.h"

namespace graphcheck {
namespace {

// The planted defects of the defect/ variants, each one of the capture breakers the practitioner's guide lists.
enum class Defect {
  kNone,
  kItemInForward,
  kDataDependentShape,
  kHostToDeviceInForward,
  kFrozenHostScalar,
  kBufferRebound,
  kHostRandomShift,
  kRandomOnlyInEager,
};

class MlpImpl : public torch::nn::Module {
 public:
  explicit MlpImpl(Defect defect) : defect_(defect) {
    for (int i = 0; i < 4; ++i)
      layers_.push_back(register_module(absl::StrCat("fc", i), torch::nn::Linear(1024, 1024)));
    if (defect_ == Defect::kBufferRebound) steps_ = register_buffer("steps", torch::zeros({1}));
  }
  at::Tensor forward(at::Tensor x) {
    x = torch::relu(layers_[0]->forward(x));
    switch (defect_) {
      case Defect::kItemInForward:  // a host read-back to decide something: a synchronization
        if (x.abs().max().item<float>() > 1e4f) x = x / 2;
        break;
      case Defect::kDataDependentShape:  // rows kept by a mask: the output size comes from the data
        x = x.index_select(0, (x.sum(1) > 0).nonzero().squeeze(1));
        break;
      case Defect::kHostToDeviceInForward:  // a constant made on the CPU each call: a pageable copy
        x = x * torch::tensor({0.5f}).to(x.device());
        break;
      case Defect::kFrozenHostScalar:  // a per-call host number: a graph keeps its value from capture time
        x = x * (1.0 + 0.01 * static_cast<double>(calls_++ % 50));
        break;
      case Defect::kBufferRebound:  // Python's `self.steps = self.steps + 1`: the buffer now holds a new tensor
        steps_.set_(steps_ + 1);
        break;
      case Defect::kHostRandomShift:  // an augmentation drawn on the host each call: a graph keeps the capture's draw
        x = at::roll(x, {at::randint(1, x.size(1), {1}).item<int64_t>()}, {1});
        break;
      case Defect::kRandomOnlyInEager:  // a draw made only when not capturing (a monitoring sample): a replay advances
        // the generator less than an eager call, so its dropout masks are not eager's
        if (!x.is_cuda() || c10::cuda::currentStreamCaptureStatusMayInitCtx() == c10::cuda::CaptureStatus::None) {
          sample_ = at::rand_like(x);
        }
        x = torch::dropout(x, 0.1, is_training());
        break;
      case Defect::kNone:
        break;
    }
    for (size_t i = 1; i < layers_.size(); ++i) {
      x = layers_[i]->forward(x);
      if (i + 1 < layers_.size()) x = torch::relu(x);
    }
    return x;
  }

 private:
  Defect defect_;
  int64_t calls_ = 0;
  at::Tensor steps_;   // a step counter that nothing else reads, as BatchNorm's num_batches_tracked
  at::Tensor sample_;  // kRandomOnlyInEager's draw, kept as a monitor would
  std::vector<torch::nn::Linear> layers_;
};
TORCH_MODULE(Mlp);

class TransformerImpl : public torch::nn::Module {
 public:
  TransformerImpl()
      : encoder_(register_module(
            "encoder",
            torch::nn::TransformerEncoder(
                torch::nn::TransformerEncoderOptions(
                    torch::nn::TransformerEncoderLayerOptions(256, 8).dim_feedforward(1024).dropout(0.1), 4)
                    .norm(torch::nn::AnyModule(torch::nn::LayerNorm(torch::nn::LayerNormOptions({256}))))))) {}
  at::Tensor forward(at::Tensor x) { return encoder_->forward(x); }

 private:
  torch::nn::TransformerEncoder encoder_;
};
TORCH_MODULE(Transformer);

class ConvnetImpl : public torch::nn::Module {
 public:
  ConvnetImpl() {
    int64_t channels = 3;
    for (int64_t out : {32, 64, 128}) {
      blocks_->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, out, 3).padding(1).bias(false)));
      blocks_->push_back(torch::nn::BatchNorm2d(out));
      blocks_->push_back(torch::nn::ReLU());
      blocks_->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)));
      channels = out;
    }
    register_module("blocks", blocks_);
    head_ = register_module("head", torch::nn::Linear(channels, 10));
  }
  at::Tensor forward(at::Tensor x) { return head_->forward(blocks_->forward(x).mean({2, 3})); }

 private:
  torch::nn::Sequential blocks_;
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(Convnet);

// Pins CPU parameters and buffers before they move to the GPU, so that the engine's own set-up does not show as
// pageable copies in the trace it analyzes.
void PinForCopy(const std::vector<at::Tensor>& tensors, const at::Device& device) {
  if (!device.is_cuda()) return;
  at::NoGradGuard no_grad;
  for (const at::Tensor& t : tensors) {
    if (t.device().is_cpu()) t.set_data(t.data().pin_memory());
  }
}

// A torch::nn module as a Model; `run` calls its forward on the single input.
template <typename Holder>
Model FromNnModule(const BuiltinModel& builtin, Holder module, const at::Device& device) {
  PinForCopy(module->parameters(), device);
  PinForCopy(module->buffers(), device);
  module->to(device, /*non_blocking=*/device.is_cuda());
  Model model;
  model.callable.name = builtin.name;
  model.callable.forward = [module](const std::vector<at::Tensor>& inputs) mutable {
    return std::vector<at::Tensor>{module->forward(inputs.at(0))};
  };
  model.callable.parameters = module->parameters();
  model.callable.buffers = module->buffers();
  model.set_training = [module](bool training) mutable { module->train(training); };
  model.named_state = [module] {
    std::vector<NamedTensor> state;
    for (const auto& p : module->named_parameters()) state.push_back({p.key(), TensorRole::kParameter, p.value()});
    for (const auto& b : module->named_buffers()) state.push_back({b.key(), TensorRole::kBuffer, b.value()});
    return state;
  };
  model.inputs = builtin.inputs;
  model.module = module.ptr();
  return model;
}

Model BuildBuiltin(const BuiltinModel& builtin, const at::Device& device) {
  if (builtin.name == "transformer") return FromNnModule(builtin, Transformer(), device);
  if (builtin.name == "convnet") return FromNnModule(builtin, Convnet(), device);
  Defect defect = Defect::kNone;
  if (builtin.name == "defect/item-in-forward") defect = Defect::kItemInForward;
  if (builtin.name == "defect/data-dependent-shape") defect = Defect::kDataDependentShape;
  if (builtin.name == "defect/h2d-in-forward") defect = Defect::kHostToDeviceInForward;
  if (builtin.name == "defect/frozen-host-scalar") defect = Defect::kFrozenHostScalar;
  if (builtin.name == "defect/buffer-rebound") defect = Defect::kBufferRebound;
  if (builtin.name == "defect/host-random-shift") defect = Defect::kHostRandomShift;
  if (builtin.name == "defect/random-only-in-eager") defect = Defect::kRandomOnlyInEager;
  return FromNnModule(builtin, Mlp(defect), device);
}

void FlattenTensors(const c10::IValue& value, std::vector<at::Tensor>* out) {
  if (value.isTensor()) {
    out->push_back(value.toTensor());
  } else if (value.isTuple()) {
    for (const c10::IValue& element : value.toTupleRef().elements()) FlattenTensors(element, out);
  } else if (value.isList()) {
    for (const c10::IValue& element : value.toListRef()) FlattenTensors(element, out);
  }
}

std::vector<std::string> HookNames(const torch::jit::Module& root) {
  std::vector<std::string> names;
  for (const torch::jit::Module& module : root.modules()) {
    for (const torch::jit::Function* hook : module.type()->getForwardPreHooks()) {
      names.push_back(absl::StrCat(module.type()->name()->name(), ".", hook->name(), " (forward pre-hook)"));
    }
    for (const torch::jit::Function* hook : module.type()->getForwardHooks()) {
      names.push_back(absl::StrCat(module.type()->name()->name(), ".", hook->name(), " (forward hook)"));
    }
  }
  return names;
}

absl::StatusOr<Model> LoadTorchScript(const std::string& path, const at::Device& device) {
  auto module = std::make_shared<torch::jit::Module>();
  if (absl::Status s = CallTorch(absl::StrCat("cannot load TorchScript model '", path, "'"),
                                 [&] {
                                   *module = torch::jit::load(path, at::kCPU);
                                   std::vector<at::Tensor> state;
                                   for (const at::Tensor& p : module->parameters()) state.push_back(p);
                                   for (const at::Tensor& b : module->buffers()) state.push_back(b);
                                   PinForCopy(state, device);
                                   module->to(device, /*non_blocking=*/device.is_cuda());
                                 });
      !s.ok()) {
    return absl::InvalidArgumentError(s.message());
  }
  if (!module->find_method("forward")) {
    return absl::InvalidArgumentError(absl::StrCat("TorchScript model '", path, "' has no forward method"));
  }
  Model model;
  const c10::FunctionSchema& schema = module->get_method("forward").function().getSchema();
  for (size_t i = 1; i < schema.arguments().size(); ++i) {  // 0 is self
    const c10::Argument& argument = schema.arguments()[i];
    // Arguments with a default (masks, flags) keep it: the inputs are the required arguments.
    if (argument.default_value()) continue;
    if (argument.type()->kind() != c10::TypeKind::TensorType) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TorchScript model '", path, "': forward argument '", argument.name(), "' is ", argument.type()->str(),
          ", not a Tensor; graphed callables take tensors only (bind the rest into the module)"));
    }
    model.inputs.push_back(InputSpec{argument.name(), {}, ""});
  }
  model.callable.name = path;
  model.callable.forward = [module](const std::vector<at::Tensor>& inputs) {
    std::vector<c10::IValue> arguments(inputs.begin(), inputs.end());
    std::vector<at::Tensor> outputs;
    FlattenTensors(module->forward(std::move(arguments)), &outputs);
    return outputs;
  };
  for (const at::Tensor& p : module->parameters()) model.callable.parameters.push_back(p);
  for (const at::Tensor& b : module->buffers()) model.callable.buffers.push_back(b);
  model.callable.hooks = HookNames(*module);
  model.set_training = [module](bool training) { module->train(training); };
  model.named_state = [module] {
    std::vector<NamedTensor> state;
    for (const auto& p : module->named_parameters()) state.push_back({p.name, TensorRole::kParameter, p.value});
    for (const auto& b : module->named_buffers()) state.push_back({b.name, TensorRole::kBuffer, b.value});
    return state;
  };
  model.module = module;
  return model;
}

at::ScalarType ScalarTypeOf(const std::string& dtype) {
  if (dtype == "float16") return at::kHalf;
  if (dtype == "bfloat16") return at::kBFloat16;
  if (dtype == "float64") return at::kDouble;
  if (dtype == "int64") return at::kLong;
  if (dtype == "int32") return at::kInt;
  return at::kFloat;
}

}  // namespace

absl::StatusOr<Model> LoadModel(const ModelRef& ref, const at::Device& device, uint64_t seed) {
  torch::manual_seed(seed);  // parameters initialise the same way every run
  if (ref.builtin != nullptr) return BuildBuiltin(*ref.builtin, device);
  return LoadTorchScript(ref.path, device);
}

std::vector<at::Tensor> MakeInputs(const std::vector<InputSpec>& specs, const at::Device& device, uint64_t seed) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<at::Tensor> inputs;
  for (const InputSpec& spec : specs) {
    const at::ScalarType type = ScalarTypeOf(spec.dtype);
    at::Tensor cpu = at::isFloatingType(type) ? at::randn(spec.shape, generator, at::TensorOptions(at::kFloat))
                                              : at::randint(0, 10, spec.shape, generator, at::TensorOptions(at::kLong));
    // Through pinned memory, so the engine's own input copies are not pageable copies in the trace.
    if (device.is_cuda()) cpu = cpu.pin_memory();
    inputs.push_back(cpu.to(device, type, /*non_blocking=*/device.is_cuda()));
  }
  return inputs;
}

absl::StatusOr<std::vector<at::Tensor>> LoadInputs(const std::string& path, const std::vector<InputSpec>& model_inputs,
                                                   const at::Device& device) {
  absl::StatusOr<std::string> text = ReadInputFile(path, kTensorInput);
  if (!text.ok()) return absl::InvalidArgumentError(absl::StrCat("--inputs: ", text.status().message()));
  const std::vector<char> bytes(text->begin(), text->end());
  c10::IValue value;
  if (absl::Status s = CallTorch(absl::StrCat("--inputs '", path, "' is not a torch.save file"),
                                 [&] { value = torch::pickle_load(bytes); });
      !s.ok()) {
    return absl::InvalidArgumentError(s.message());
  }
  std::vector<at::Tensor> tensors;
  if (value.isGenericDict()) {
    const c10::Dict<c10::IValue, c10::IValue> dict = value.toGenericDict();
    for (const InputSpec& input : model_inputs) {
      auto it = dict.find(c10::IValue(input.name));
      if (it == dict.end() || !it->value().isTensor()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--inputs '", path, "' has no tensor named '", input.name, "' (the model's inputs are: ",
            absl::StrJoin(model_inputs, ", ", [](std::string* o, const InputSpec& s) { o->append(s.name); }), ")"));
      }
      tensors.push_back(it->value().toTensor());
    }
  } else {
    FlattenTensors(value, &tensors);
  }
  if (tensors.size() != model_inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--inputs '", path, "' holds ",
                                                   Plural(tensors.size(), "tensor", "tensors"), "; the model takes ",
                                                   model_inputs.size()));
  }
  for (at::Tensor& t : tensors) t = t.to(device);
  return tensors;
}

}  // namespace graphcheck
