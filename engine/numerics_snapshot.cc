#include "engine/numerics_snapshot.h"

#include <algorithm>

#include <ATen/core/grad_mode.h>

#include "absl/strings/str_cat.h"

namespace graphcheck {
namespace {

at::Tensor Copy(const at::Tensor& t) { return t.detach().clone(); }

const NamedTensor* Find(const std::vector<NamedTensor>& tensors, TensorRole role, const std::string& name) {
  auto it = std::find_if(tensors.begin(), tensors.end(),
                         [&](const NamedTensor& t) { return t.role == role && t.name == name; });
  return it == tensors.end() ? nullptr : &*it;
}

// Elements finite in both, as doubles (integer buffers such as num_batches_tracked included).
struct Pair {
  at::Tensor a, b, both_finite;
};
Pair Flatten(const at::Tensor& a, const at::Tensor& b) {
  Pair p{a.reshape({-1}).to(at::kDouble), b.reshape({-1}).to(at::kDouble), {}};
  p.both_finite = at::isfinite(p.a).logical_and(at::isfinite(p.b));
  return p;
}

// The largest |b - a| over elements finite in both, and where it is.
std::pair<double, int64_t> MaxDifference(const Pair& p) {
  const at::Tensor diff = at::where(p.both_finite, (p.b - p.a).abs(), at::zeros_like(p.a));
  const int64_t index = diff.argmax().item<int64_t>();
  return {diff[index].item<double>(), index};
}

// PyTorch's Python spelling, as the rest of graphcheck writes dtypes.
std::string DtypeName(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return "float32";
    case at::kBFloat16:
      return "bfloat16";
    case at::kHalf:
      return "float16";
    case at::kDouble:
      return "float64";
    case at::kLong:
      return "int64";
    case at::kInt:
      return "int32";
    case at::kBool:
      return "bool";
    default:
      return c10::toString(type);
  }
}

bool Changed(const at::Tensor& from, const at::Tensor& to) {
  return from.sizes() != to.sizes() || !at::equal(from.to(to.scalar_type()), to);
}

}  // namespace

void RunSnapshot::TakeFirstStep(const std::vector<at::Tensor>& outputs, const std::vector<NamedTensor>& state) {
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < outputs.size(); ++i) {
    tensors.push_back({absl::StrCat("output ", i), TensorRole::kOutput, Copy(outputs[i])});
  }
  for (const NamedTensor& t : state) {
    if (t.role == TensorRole::kParameter && t.tensor.grad().defined()) {
      tensors.push_back({t.name, TensorRole::kGradient, Copy(t.tensor.grad())});
    }
  }
  took_first_step = true;
}

void RunSnapshot::TakeFinalState(const std::vector<NamedTensor>& state) {
  at::NoGradGuard no_grad;
  for (const NamedTensor& t : state) tensors.push_back({t.name, t.role, Copy(t.tensor)});
}

double MaxFiniteDifference(const at::Tensor& a, const at::Tensor& b) {
  if (a.numel() == 0) return 0;
  return MaxDifference(Flatten(a, b)).first;
}

double FiniteAbsMax(const at::Tensor& t) {
  if (t.numel() == 0) return 0;
  const at::Tensor values = t.reshape({-1}).to(at::kDouble);
  return at::where(at::isfinite(values), values.abs(), at::zeros_like(values)).max().item<double>();
}

std::vector<NumericsSample> CompareSnapshots(const RunSnapshot& eager, const RunSnapshot* repeat,
                                             const RunSnapshot& graphed, const std::vector<NamedTensor>& initial) {
  at::NoGradGuard no_grad;
  std::vector<NumericsSample> samples;
  for (const NamedTensor& e : eager.tensors) {
    const NamedTensor* g = Find(graphed.tensors, e.role, e.name);
    if (g == nullptr || g->tensor.sizes() != e.tensor.sizes() || e.tensor.numel() == 0) continue;
    NumericsSample s;
    s.name = e.name;
    s.role = e.role;
    s.dtype = DtypeName(e.tensor.scalar_type());
    s.numel = e.tensor.numel();
    const Pair eg = Flatten(e.tensor, g->tensor);
    const auto [difference, index] = MaxDifference(eg);
    s.max_abs_error = difference;
    s.worst_index = index;
    s.eager_at_worst = eg.a[index].item<double>();
    s.graphed_at_worst = eg.b[index].item<double>();
    s.eager_abs_max = FiniteAbsMax(eg.a);
    s.eager_nonfinite = at::isfinite(eg.a).logical_not().sum().item<int64_t>();
    s.graphed_nonfinite = at::isfinite(eg.b).logical_not().sum().item<int64_t>();
    if (repeat != nullptr) {
      const NamedTensor* r = Find(repeat->tensors, e.role, e.name);
      if (r != nullptr && r->tensor.sizes() == e.tensor.sizes()) {
        s.eager_spread = MaxFiniteDifference(e.tensor, r->tensor);
      }
    }
    if (e.role == TensorRole::kParameter || e.role == TensorRole::kBuffer) {
      if (const NamedTensor* start = Find(initial, e.role, e.name)) {
        s.changed_in_eager = Changed(start->tensor, e.tensor);
        s.changed_in_graphed = Changed(start->tensor, g->tensor);
      }
    }
    samples.push_back(std::move(s));
  }
  return samples;
}

}  // namespace graphcheck
