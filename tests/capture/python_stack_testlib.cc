// A shared library that tests/capture/python_stack_test.py loads with ctypes to drive PythonStackReader from inside
// a real interpreter: through ctypes.CDLL (GIL released during the call, as under Tensor.item()) and ctypes.PyDLL
// (GIL held). It links no libpython; the reader finds the interpreter with dlsym like the recorder does.
//
// Frames come back as text: fields separated by \x1f (file, line, function), frames by \x1e, innermost first.
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "capture/python_stack.h"

namespace {

using graphcheck::capture::PythonFrame;
using graphcheck::capture::PythonStackReader;

const PythonStackReader* Reader() {
  // Leaked on purpose: a reader destroyed at exit could race with a late capture on another thread.
  static const PythonStackReader* reader = PythonStackReader::Detect().release();
  return reader;
}

// Writes `frames` into out[0, size); the number of frames, or -2 when they do not fit.
int Write(const std::vector<PythonFrame>& frames, char* out, int size) {
  std::string text;
  for (const PythonFrame& frame : frames) {
    text += frame.file + '\x1f' + std::to_string(frame.line) + '\x1f' + frame.function + '\x1e';
  }
  if (text.size() + 1 > static_cast<size_t>(size)) return -2;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return static_cast<int>(frames.size());
}

}  // namespace

extern "C" {

// The minor version of the running CPython 3, or -1 when Detect found none.
__attribute__((visibility("default"))) int pystack_minor_version() {
  return Reader() == nullptr ? -1 : Reader()->minor_version();
}

// The calling thread's innermost `max` frames into `out`: their count, -1 without a reader, -2 when `out` is short.
__attribute__((visibility("default"))) int pystack_capture(int max, char* out, int size) {
  if (Reader() == nullptr) return -1;
  return Write(Reader()->Capture(static_cast<size_t>(max)), out, size);
}

// The same from a std::thread of our own, which has no Python thread state.
__attribute__((visibility("default"))) int pystack_capture_native_thread(int max, char* out, int size) {
  if (Reader() == nullptr) return -1;
  int result = 0;
  std::thread thread([&] { result = Write(Reader()->Capture(static_cast<size_t>(max)), out, size); });
  thread.join();
  return result;
}

// Nanoseconds per Capture(max) over `iterations` captures of the calling thread's stack; the frames of the last one
// are counted into *frames.
__attribute__((visibility("default"))) double pystack_ns_per_capture(int max, int iterations, int* frames) {
  if (Reader() == nullptr || iterations <= 0) return -1;
  size_t captured = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) captured = Reader()->Capture(static_cast<size_t>(max)).size();
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  *frames = static_cast<int>(captured);
  return elapsed.count() / iterations;
}

}  // extern "C"
