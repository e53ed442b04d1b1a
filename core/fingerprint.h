// A finding's fingerprint: the same problem found by two runs gets the same one, so that SARIF consumers track it
// across runs (partialFingerprints), `--baseline` tells new findings from known ones, and the analysis of a
// distributed job merges the same problem found on several ranks into one finding. It hashes only facts that do
// not change from run to run: the check id, the API, the PyTorch operator, the first user Python frame (file:line),
// the configuration file and key, the NVTX path and the first symbolized host frames with addresses and offsets
// removed; never process, thread or stream ids, times, or the message (which carries counts).
#ifndef GRAPHCHECK_CORE_FINGERPRINT_H_
#define GRAPHCHECK_CORE_FINGERPRINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

#include "core/finding.h"

namespace graphcheck {

// The SARIF partialFingerprints key the fingerprint is stored under; bump the version when the facts change.
inline constexpr char kFingerprintKey[] = "graphcheckFinding/v1";

// 16 lowercase hex digits.
std::string FindingFingerprint(const Finding& finding);

// FNV-1a, 64-bit: the same on every machine and in every process, unlike std::hash or absl::Hash (seeded per
// process); for fingerprints and for anything else in a report that must not change between runs.
uint64_t StableHash(absl::string_view bytes);

// Folds the findings of one check run that are the same problem at the same call site (same fingerprint, severity,
// line and column) into the first of them, summing their occurrences; order is otherwise kept. Findings without a
// call site (no API, operator, user frame, backtrace, file or key) are never folded: their fingerprint is little more
// than the check id, and their messages tell different problems apart.
void FoldRepeatedFindings(std::vector<Finding>* findings);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_FINGERPRINT_H_
