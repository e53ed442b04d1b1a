// The CUDA error codes that stream capture returns (900-910: the same numbers for cudaError_t and CUresult): their
// names, CUDA's own descriptions (what `CUDA error: ...` prints) and the check that owns each when no earlier call
// explains it. One table, read by the capture-window analysis and the stderr matcher.
#ifndef GRAPHCHECK_ANALYSIS_CAPTURE_ERROR_TABLE_H_
#define GRAPHCHECK_ANALYSIS_CAPTURE_ERROR_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace graphcheck::analysis {

inline constexpr int32_t kErrorCaptureUnsupported = 900;
inline constexpr int32_t kErrorCaptureInvalidated = 901;
inline constexpr int32_t kErrorCaptureUnjoined = 904;
inline constexpr int32_t kErrorCaptureImplicit = 906;

struct CaptureErrorCode {
  int32_t code;
  absl::string_view name;         // "cudaErrorStreamCaptureUnsupported"
  absl::string_view description;  // CUDA's error string
  absl::string_view owner;        // check id that reports it when it is its own root cause
  absl::string_view meaning;      // what usually causes it, for messages
  absl::string_view fix;          // what to do when it is its own root cause
};

// All of 900-910, in order.
const std::vector<CaptureErrorCode>& CaptureErrorCodes();
bool IsCaptureError(int32_t code);
// nullptr outside 900-910.
const CaptureErrorCode* FindCaptureError(int32_t code);
// "901 cudaErrorStreamCaptureInvalidated", or "error 2" for other codes.
std::string DescribeReturnCode(int32_t code);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_CAPTURE_ERROR_TABLE_H_
