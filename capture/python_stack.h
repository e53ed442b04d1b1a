// The calling thread's Python stack (file, line, function of each frame), read from CPython's own in-memory
// structures so that a recorded CUDA call can say `train.py:42 in train_step`.
//
// Why not the C API: the calls worth pointing at (the cudaStreamSynchronize under Tensor.item(), for one) run while
// PyTorch has released the GIL, and taking it again inside a CUDA callback can deadlock; the frame APIs also create
// frame objects and change reference counts. Reading the calling thread's *own* frame chain needs no GIL: that thread
// is the one executing those frames, and it is blocked inside our callback while we read them. So the reader follows
// the chain by field offsets (capture/internal/cpython_layouts.h, generated from each version's headers), finds
// everything it needs from the interpreter with dlsym (nothing links libpython), allocates no Python object and
// changes no reference count. Supported: CPython 3.10 to 3.13, default (GIL) builds, 64-bit Linux.
#ifndef GRAPHCHECK_CAPTURE_PYTHON_STACK_H_
#define GRAPHCHECK_CAPTURE_PYTHON_STACK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace graphcheck::capture {

namespace internal {
struct CPythonLayout;
}  // namespace internal

// One frame of a Python stack.
struct PythonFrame {
  std::string file;      // co_filename, UTF-8
  std::string function;  // co_qualname (3.11+) or co_name (3.10)
  int line = 0;          // 0 when unknown
};

class PythonStackReader {
 public:
  // At most this many frames are visited per capture (skipped ones included), so a damaged chain cannot loop.
  static constexpr size_t kMaxWalk = 4096;

  // The reader for this process's interpreter, or nullptr when no supported CPython is loaded and initialized
  // (found with dlsym(RTLD_DEFAULT, ...): Py_Version or Py_GetVersion, Py_IsInitialized, PyGILState_GetThisThreadState,
  // _PyCode_CheckLineNumber, PyCode_Type, PyUnicode_Type ...). Safe to call from any thread at any time.
  static std::unique_ptr<PythonStackReader> Detect();

  int minor_version() const;

  // The calling thread's Python frames, innermost first, at most `max` of them; empty when the thread has no Python
  // thread state or no frames, or while the interpreter is finalizing. Never takes the GIL, never allocates Python
  // objects, never changes a reference count. A field it does not understand reads "?" (names) or 0 (line); an object
  // of an unexpected type ends the walk early rather than being followed.
  std::vector<PythonFrame> Capture(size_t max) const;

 private:
  // What Detect found in the interpreter.
  struct Interpreter {
    int (*is_initialized)();
    int (*is_finalizing)();
    void* (*this_thread_state)();
    // int _PyCode_CheckLineNumber(int lasti, PyCodeAddressRange* bounds): the line-table walk PyCode_Addr2Line does.
    int (*check_line_number)(int, void*);
    uintptr_t code_type;
    uintptr_t unicode_type;
    uintptr_t bytes_type;
    uintptr_t frame_type;
  };

  PythonStackReader(const internal::CPythonLayout& layout, const Interpreter& interpreter)
      : layout_(layout), py_(interpreter) {}

  void CaptureFrameObjects(uintptr_t frame, size_t max, std::vector<PythonFrame>* frames) const;
  void CaptureInterpreterFrames(uintptr_t frame, size_t max, std::vector<PythonFrame>* frames) const;
  // Appends the frame of `code` stopped at byte offset `offset` of its bytecode; `lineno` is the frame object's
  // f_lineno (0 when it has none), which CPython reports instead of the computed line when it is set.
  void AddFrame(uintptr_t code, int64_t offset, int lineno, std::vector<PythonFrame>* frames) const;
  int LineAt(uintptr_t code, int64_t offset) const;
  std::string Utf8(uintptr_t str) const;
  bool HasType(uintptr_t object, uintptr_t type) const;

  const internal::CPythonLayout& layout_;
  const Interpreter py_;
};

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_PYTHON_STACK_H_
