// The memory forecast (memory_forecast.h): the step's allocator history replayed through a model of one private pool
// of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, default settings).
#include "analysis/memory_forecast.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/trace_analysis.h"
#include "core/metrics.h"

namespace graphcheck::analysis {
namespace {

using trace::AllocatorEvent;

constexpr uint64_t kMinBlockSize = 512;        // every size is rounded up to this
constexpr uint64_t kSmallSize = 1 << 20;       // requests up to this come from the small pool
constexpr uint64_t kSmallBuffer = 2 << 20;     // a small-pool segment
constexpr uint64_t kLargeBuffer = 20 << 20;    // a large-pool segment for requests below kMinLargeAlloc
constexpr uint64_t kMinLargeAlloc = 10 << 20;  // larger requests get a segment of their own,
constexpr uint64_t kRoundLarge = 2 << 20;      // rounded up to this

uint64_t RoundUp(uint64_t bytes, uint64_t to) { return (bytes + to - 1) / to * to; }
uint64_t BlockSize(uint64_t bytes) { return bytes < kMinBlockSize ? kMinBlockSize : RoundUp(bytes, kMinBlockSize); }
uint64_t SegmentSize(uint64_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  return size < kMinLargeAlloc ? kLargeBuffer : RoundUp(size, kRoundLarge);
}

// One pool of one device: segments cut into blocks at model addresses, best-fit allocation, splitting and merging.
class PoolModel {
 public:
  // The model address of the block that serves `bytes`.
  uint64_t Allocate(uint64_t bytes) {
    const uint64_t size = BlockSize(bytes);
    const bool small = size <= kSmallSize;
    std::set<std::pair<uint64_t, uint64_t>>& free = small ? free_small_ : free_large_;
    auto fit = free.lower_bound({size, 0});
    if (fit == free.end()) fit = free.insert(NewSegment(SegmentSize(size), small)).first;
    const auto [block_size, address] = *fit;
    free.erase(fit);
    Block& block = blocks_[address];
    const uint64_t rest = block_size - size;
    if (small ? rest >= kMinBlockSize : rest > kSmallSize) {
      block.size = size;
      blocks_[address + size] = {rest, true, small};
      free.insert({rest, address + size});
    }
    block.free = false;
    live_ += block.size;
    return address;
  }

  void Free(uint64_t address) {
    auto it = blocks_.find(address);
    if (it == blocks_.end() || it->second.free) return;
    std::set<std::pair<uint64_t, uint64_t>>& free = it->second.small ? free_small_ : free_large_;
    live_ -= it->second.size;
    it->second.free = true;
    if (auto next = std::next(it); next != blocks_.end() && next->second.free && !segment_starts_.count(next->first)) {
      free.erase({next->second.size, next->first});
      it->second.size += next->second.size;
      blocks_.erase(next);
    }
    if (it != blocks_.begin() && !segment_starts_.count(it->first)) {
      if (auto previous = std::prev(it); previous->second.free) {
        free.erase({previous->second.size, previous->first});
        previous->second.size += it->second.size;
        blocks_.erase(it);
        it = previous;
      }
    }
    free.insert({it->second.size, it->first});
  }

  uint64_t reserved() const { return reserved_; }
  uint64_t live() const { return live_; }

 private:
  struct Block {
    uint64_t size = 0;
    bool free = true;
    bool small = true;
  };

  std::pair<uint64_t, uint64_t> NewSegment(uint64_t size, bool small) {
    const uint64_t address = next_address_;
    next_address_ += size;
    reserved_ += size;
    blocks_[address] = {size, true, small};
    segment_starts_.insert(address);
    return {size, address};
  }

  std::map<uint64_t, Block> blocks_;   // by model address; a segment's blocks are contiguous
  std::set<uint64_t> segment_starts_;  // blocks never merge across these
  std::set<std::pair<uint64_t, uint64_t>> free_small_, free_large_;  // (size, address)
  uint64_t next_address_ = 0;
  uint64_t reserved_ = 0;
  uint64_t live_ = 0;
};

// The per-device pools serving the allocator events of some regions, with the blocks the regions allocated and have
// not freed (by the program's device and address).
class PoolReplay {
 public:
  // Serves an allocation; an address allocated twice means its free was lost: the old block goes back first.
  void Allocate(const AllocatorEvent& event) {
    PoolModel& pool = pools_[event.device];
    const LiveBlock block{pool.Allocate(event.bytes), BlockSize(event.bytes)};
    if (auto [it, inserted] = live_.insert({{event.device, event.address}, block}); !inserted) {
      pool.Free(it->second.model_address);
      live_bytes_ -= it->second.bytes;
      it->second = block;
    }
    live_bytes_ += block.bytes;
    uint64_t pooled_live = 0;
    for (const auto& [device, model] : pools_) pooled_live += model.live();
    live_peak_bytes_ = std::max(live_peak_bytes_, pooled_live);
  }
  // Serves a free of a block the regions allocated; others are not the pool's.
  void Free(const AllocatorEvent& event) {
    if (auto it = live_.find({event.device, event.address}); it != live_.end()) {
      pools_[event.device].Free(it->second.model_address);
      live_bytes_ -= it->second.bytes;
      live_.erase(it);
    }
  }
  // What is allocated now stays allocated for good (a graph's outputs): later frees at its addresses are not the
  // pool's.
  void Keep() { live_.clear(); }

  PoolForecast Forecast() const {
    PoolForecast forecast;
    for (const auto& [device, model] : pools_) forecast.pool_bytes += model.reserved();
    forecast.live_peak_bytes = live_peak_bytes_;
    forecast.outliving_bytes = live_bytes_;
    return forecast;
  }

 private:
  struct LiveBlock {
    uint64_t model_address = 0;
    uint64_t bytes = 0;  // rounded as the allocator rounds
  };
  std::map<uint32_t, PoolModel> pools_;
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, LiveBlock> live_;
  uint64_t live_bytes_ = 0;  // the blocks allocated and not freed, kept ones included
  uint64_t live_peak_bytes_ = 0;
};

std::vector<AllocatorEvent>::const_iterator FirstAt(const std::vector<AllocatorEvent>& events, uint64_t time_ns) {
  return std::lower_bound(events.begin(), events.end(), time_ns,
                          [](const AllocatorEvent& e, uint64_t t) { return e.time_ns < t; });
}

}  // namespace

PoolForecast ForecastPool(const std::vector<AllocatorEvent>& events, const std::vector<TimeInterval>& regions) {
  if (regions.empty()) return PoolForecast();
  PoolReplay replay;
  const uint64_t end_ns = regions.back().end_ns;
  size_t region = 0;
  for (auto event = FirstAt(events, regions.front().start_ns); event != events.end() && event->time_ns < end_ns;
       ++event) {
    if (event->action == AllocatorEvent::Action::kFree) {
      // Frees of the regions' blocks count until the last region ends, also between regions: a pool shared by
      // several graphs gets back what the program freed between their captures.
      replay.Free(*event);
      continue;
    }
    while (region < regions.size() && regions[region].end_ns <= event->time_ns) ++region;
    if (region == regions.size() || event->time_ns < regions[region].start_ns) continue;
    replay.Allocate(*event);
  }
  return replay.Forecast();
}

PoolForecast ForecastCapturesIntoOnePool(const std::vector<AllocatorEvent>& events,
                                         const std::vector<TimeInterval>& captures) {
  PoolReplay replay;
  for (const TimeInterval& capture : captures) {
    for (auto event = FirstAt(events, capture.start_ns); event != events.end() && event->time_ns < capture.end_ns;
         ++event) {
      if (event->action == AllocatorEvent::Action::kFree) {
        replay.Free(*event);
      } else {
        replay.Allocate(*event);
      }
    }
    replay.Keep();  // what the capture left allocated stays with its graph
  }
  return replay.Forecast();
}

uint64_t CublasWorkspaceBytes(const TraceAnalysis& analysis, const std::vector<TimeInterval>& regions) {
  const trace::Trace& trace = analysis.trace();
  std::vector<int8_t> is_cublas(trace.kernel_shapes.size(), -1);  // per kernel shape: unknown, no, yes
  auto cublas = [&](uint32_t shape) {
    if (is_cublas[shape] < 0) {
      const std::string name = absl::AsciiStrToLower(trace.String(trace.kernel_shapes[shape].name));
      is_cublas[shape] =
          absl::StrContains(name, "gemm") || absl::StrContains(name, "cublas") || absl::StrContains(name, "nvjet");
    }
    return is_cublas[shape] == 1;
  };
  std::set<uint32_t> threads;
  const std::vector<trace::ApiCall>& calls = trace.api_calls;
  for (const TimeInterval& region : regions) {
    auto call = std::lower_bound(calls.begin(), calls.end(), region.start_ns,
                                 [](const trace::ApiCall& c, uint64_t start) { return c.start_ns < start; });
    for (; call != calls.end() && call->start_ns < region.end_ns; ++call) {
      if (call->kind != trace::ApiKind::kKernelLaunch || threads.count(call->thread_id) != 0) continue;
      const int64_t kernel = analysis.kernel_by_correlation().Find(call->correlation_id);
      if (kernel >= 0 && cublas(trace.kernels[kernel].shape)) threads.insert(call->thread_id);
    }
  }
  // Recorded without launches there (--launches capture, or past the launch-recording windows): a cuBLAS kernel that
  // ran inside a region says one thread launched it.
  size_t workspaces = threads.size();
  for (size_t k = 0; workspaces == 0 && k < trace.kernels.size(); ++k) {
    const trace::KernelActivity& kernel = trace.kernels[k];
    auto region = std::upper_bound(regions.begin(), regions.end(), kernel.start_ns,
                                   [](uint64_t start, const TimeInterval& r) { return start < r.start_ns; });
    if (region == regions.begin() || kernel.start_ns >= std::prev(region)->end_ns) continue;
    if (kernel.graph_id == 0 && cublas(kernel.shape)) workspaces = 1;
  }
  int cc_major = 0;
  for (const trace::DeviceInfo& device : trace.devices) cc_major = std::max(cc_major, device.gpu.cc_major);
  const uint64_t one = cc_major >= 9 ? uint64_t{32} << 20 : (uint64_t{8} << 20) + (uint64_t{128} << 10);
  return workspaces * one;
}

std::optional<MemoryForecast> ForecastGraphMemory(const TraceAnalysis& analysis, const IterationOptions& steps,
                                                  const LaunchModel& model) {
  const std::vector<AllocatorEvent>& events = analysis.trace().allocations;
  if (events.empty()) return std::nullopt;
  // The allocator keeps the last entries of its history: a step that began before the first one is not covered.
  const uint64_t history_start_ns = events.front().time_ns;
  const std::vector<TimeInterval> graphable =
      model.graphable_range.empty() ? std::vector<TimeInterval>{} : analysis.nvtx().RangesNamed(model.graphable_range);
  MemoryForecast forecast;
  std::vector<TimeInterval> eager;  // where the threads that launch cuBLAS kernels are found
  for (const Iteration& step : analysis.iterations(steps).eager) {
    eager.push_back({step.start_ns, step.end_ns, 0});
    if (step.start_ns < history_start_ns) continue;
    std::vector<TimeInterval> parts;
    for (const TimeInterval& range : graphable) {
      if (range.start_ns >= step.start_ns && range.end_ns <= step.end_ns) parts.push_back(range);
    }
    const std::vector<TimeInterval> regions =
        parts.empty() ? std::vector<TimeInterval>{{step.start_ns, step.end_ns, 0}} : parts;
    const PoolForecast pool = ForecastPool(events, regions);
    ++forecast.steps;
    if (forecast.steps > 1 && pool.pool_bytes <= forecast.pool.pool_bytes) continue;
    forecast.pool = pool;
    forecast.parts = parts.size();
    forecast.private_pools_bytes = 0;
    if (parts.size() >= 2) {
      for (const TimeInterval& part : parts) forecast.private_pools_bytes += ForecastPool(events, {part}).pool_bytes;
    }
  }
  if (forecast.steps == 0) return std::nullopt;
  forecast.workspace_bytes = CublasWorkspaceBytes(analysis, eager);
  return forecast;
}

std::vector<Metric> MemoryForecastMetrics(const MemoryForecast& forecast) {
  const std::string what =
      forecast.parts >= 2 ? absl::StrCat("the step's ", forecast.parts, " graphable ranges") : std::string("the step");
  std::vector<Metric> metrics = {
      metric::kMemoryForecastSteps.With(static_cast<double>(forecast.steps)),
      metric::kMemoryForecastPoolBytes.With(static_cast<double>(forecast.PoolBytes()),
                                            "forecast: the private pool a CUDA graph of " + what +
                                                " would hold (one pool), largest over the steps, "
                                                "cuBLAS workspaces included"),
      metric::kMemoryForecastWorkspaceBytes.With(static_cast<double>(forecast.workspace_bytes)),
      metric::kMemoryForecastLivePeakBytes.With(static_cast<double>(forecast.pool.live_peak_bytes),
                                                "the most " + what + "'s own allocations held at once"),
      metric::kMemoryForecastOutlivingBytes.With(
          static_cast<double>(forecast.pool.outliving_bytes),
          "what " + what + " allocated and still held at its end (outputs, gradients): kept in the pool"),
  };
  if (forecast.parts >= 2) {
    metrics.push_back(metric::kMemoryForecastPrivatePoolsBytes.With(static_cast<double>(forecast.PrivatePoolsBytes())));
  }
  return metrics;
}

std::string MibText(uint64_t bytes) { return absl::StrFormat("%.0f MiB", bytes / (1024.0 * 1024.0)); }

}  // namespace graphcheck::analysis
