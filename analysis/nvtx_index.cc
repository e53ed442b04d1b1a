#include "analysis/nvtx_index.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace graphcheck::analysis {

using trace::NvtxEvent;

NvtxIndex::NvtxIndex(const trace::Trace& trace) : trace_(trace) {
  order_.resize(trace.nvtx.size());
  std::iota(order_.begin(), order_.end(), 0);
  std::stable_sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
    const NvtxEvent& x = trace.nvtx[a];
    const NvtxEvent& y = trace.nvtx[b];
    return x.thread_id != y.thread_id ? x.thread_id < y.thread_id : x.time_ns < y.time_ns;
  });
  absl::flat_hash_map<std::string, uint32_t> path_ids = {{"", 0}};
  std::vector<uint32_t> stack;  // path ids of the open push ranges on the current thread
  uint32_t thread = 0;
  for (size_t i = 0; i < order_.size(); ++i) {
    const NvtxEvent& event = trace.nvtx[order_[i]];
    if (i == 0 || event.thread_id != thread) {
      thread = event.thread_id;
      stack.clear();
    }
    if (event.domain != 0) continue;
    if (event.kind == NvtxEvent::Kind::kPush) {
      const std::string& parent = paths_[stack.empty() ? 0 : stack.back()];
      std::string path = parent.empty() ? std::string(trace.String(event.message))
                                        : absl::StrCat(parent, "/", trace.String(event.message));
      auto [it, inserted] = path_ids.try_emplace(std::move(path), static_cast<uint32_t>(paths_.size()));
      if (inserted) paths_.push_back(it->first);
      stack.push_back(it->second);
    } else if (event.kind == NvtxEvent::Kind::kPop) {
      if (stack.empty()) continue;  // a pop without its push (recording began inside the range)
      stack.pop_back();
    } else {
      continue;
    }
    transitions_[thread].push_back({event.time_ns, stack.empty() ? 0 : stack.back()});
  }
}

absl::string_view NvtxIndex::PathAt(uint32_t thread_id, uint64_t time_ns) const {
  auto it = transitions_.find(thread_id);
  if (it == transitions_.end()) return "";
  const std::vector<Transition>& steps = it->second;
  auto after = std::upper_bound(steps.begin(), steps.end(), time_ns,
                                [](uint64_t t, const Transition& s) { return t < s.time_ns; });
  return after == steps.begin() ? absl::string_view() : absl::string_view(paths_[std::prev(after)->path]);
}

std::string NvtxIndex::MostRepeatedOutermostRange(size_t min_count) const {
  absl::flat_hash_map<trace::StringId, size_t> counts;
  size_t depth = 0;
  uint32_t thread = 0;
  for (size_t i = 0; i < order_.size(); ++i) {
    const NvtxEvent& event = trace_.nvtx[order_[i]];
    if (i == 0 || event.thread_id != thread) {
      thread = event.thread_id;
      depth = 0;
    }
    if (event.domain != 0) continue;
    if (event.kind == NvtxEvent::Kind::kPush) {
      if (depth++ == 0) ++counts[event.message];
    } else if (event.kind == NvtxEvent::Kind::kPop && depth > 0) {
      --depth;
    }
  }
  trace::StringId best = 0;
  size_t best_count = 0;
  for (const auto& [message, count] : counts) {
    if (message != 0 && (count > best_count || (count == best_count && message < best))) {
      best = message;
      best_count = count;
    }
  }
  return best_count >= min_count ? std::string(trace_.String(best)) : std::string();
}

template <typename Visit>
void NvtxIndex::ForEachPushRange(Visit visit) const {
  absl::flat_hash_map<trace::StringId, std::vector<const NvtxEvent*>> stacks;  // per domain, on the current thread
  uint32_t thread = 0;
  for (size_t i = 0; i < order_.size(); ++i) {
    const NvtxEvent& event = trace_.nvtx[order_[i]];
    if (i == 0 || event.thread_id != thread) {
      thread = event.thread_id;
      stacks.clear();
    }
    std::vector<const NvtxEvent*>& stack = stacks[event.domain];
    if (event.kind == NvtxEvent::Kind::kPush) {
      stack.push_back(&event);
    } else if (event.kind == NvtxEvent::Kind::kPop && !stack.empty()) {
      visit(*stack.back(), event.time_ns);
      stack.pop_back();
    }
  }
}

std::vector<TimeInterval> NvtxIndex::RangesNamed(absl::string_view name) const {
  std::vector<TimeInterval> ranges;
  ForEachPushRange([&](const NvtxEvent& push, uint64_t end_ns) {
    if (trace_.String(push.message) == name) ranges.push_back({push.time_ns, end_ns, push.thread_id});
  });
  // Start/end ranges may end on another thread: paired by range id, starts first.
  absl::flat_hash_map<uint64_t, const NvtxEvent*> starts;
  for (const NvtxEvent& event : trace_.nvtx) {
    if (event.kind == NvtxEvent::Kind::kRangeStart && trace_.String(event.message) == name) {
      starts[event.range_id] = &event;
    }
  }
  for (const NvtxEvent& event : trace_.nvtx) {
    if (event.kind != NvtxEvent::Kind::kRangeEnd) continue;
    if (auto it = starts.find(event.range_id); it != starts.end()) {
      ranges.push_back({it->second->time_ns, event.time_ns, it->second->thread_id});
      starts.erase(it);
    }
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const TimeInterval& a, const TimeInterval& b) { return a.start_ns < b.start_ns; });
  return ranges;
}

std::vector<DomainRange> NvtxIndex::RangesInDomain(absl::string_view domain) const {
  std::vector<DomainRange> ranges;
  ForEachPushRange([&](const NvtxEvent& push, uint64_t end_ns) {
    if (push.domain == 0 || trace_.String(push.domain) != domain) return;
    DomainRange range;
    range.start_ns = push.time_ns;
    range.end_ns = end_ns;
    range.thread_id = push.thread_id;
    range.name = trace_.String(push.message);
    range.communicator = push.communicator;
    ranges.push_back(range);
  });
  std::sort(ranges.begin(), ranges.end(),
            [](const DomainRange& a, const DomainRange& b) { return a.start_ns < b.start_ns; });
  return ranges;
}

}  // namespace graphcheck::analysis
