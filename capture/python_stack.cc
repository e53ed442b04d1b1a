// Reads the calling thread's Python stack by walking CPython's frame chain with the offsets of
// capture/internal/cpython_layouts.h; see python_stack.h for why it must not use the C API.
//
// The chain per version: 3.10 tstate->frame, a PyFrameObject list linked by f_back; 3.11 and 3.12
// tstate->cframe->current_frame, 3.13 tstate->current_frame, a _PyInterpreterFrame list linked by `previous`. Every
// object reached is checked against its expected type object before its fields are used, so a layout we got wrong
// yields fewer frames rather than a wild read.
#include "capture/python_stack.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "capture/internal/cpython_layouts.h"

namespace graphcheck::capture {
namespace {

using internal::CPythonLayout;

// Longer strings read "?": no file name or identifier is this long, so such a length means a damaged object.
constexpr int64_t kMaxStringLength = 1 << 16;
// What a name or file reads as when its object is not understood.
constexpr char kUnknown[] = "?";
// Room for a PyCodeAddressRange, which LineAt builds on the stack.
constexpr int kRangeCapacity = 64;

constexpr bool RangesFit() {
  for (const CPythonLayout& layout : internal::kCPythonLayouts) {
    if (layout.range_size > kRangeCapacity) return false;
  }
  return true;
}
static_assert(RangesFit(), "kRangeCapacity is smaller than some version's PyCodeAddressRange");

// memcpy, not a cast: the fields are read at computed offsets of memory this code does not own.
template <typename T>
T Load(uintptr_t address, int offset) {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(address + offset), sizeof(T));
  return value;
}

template <typename T>
void Store(unsigned char* buffer, int offset, T value) {
  std::memcpy(buffer + offset, &value, sizeof(T));
}

template <typename T>
T Symbol(const char* name) {
  return reinterpret_cast<T>(dlsym(RTLD_DEFAULT, name));
}

// The running interpreter's 3.x minor version, or -1 when no CPython 3 is loaded.
int RunningMinorVersion() {
  // Py_Version (3.11+) is a constant; Py_GetVersion (all versions) formats into a static buffer on each call.
  if (const auto* hex = Symbol<const unsigned long*>("Py_Version")) {
    return (*hex >> 24) == 3 ? static_cast<int>((*hex >> 16) & 0xff) : -1;
  }
  const auto get_version = Symbol<const char* (*)()>("Py_GetVersion");
  int major = 0;
  int minor = 0;
  if (get_version == nullptr || std::sscanf(get_version(), "%d.%d", &major, &minor) != 2 || major != 3) return -1;
  return minor;
}

// Whether `type` is a type object named `name` with the object header `layout` describes. A free-threaded or
// Py_TRACE_REFS build puts ob_type elsewhere and fails this before any frame is read.
bool IsTypeNamed(uintptr_t type, uintptr_t type_type, const CPythonLayout& layout, const char* name) {
  if (type == 0 || Load<uintptr_t>(type, layout.object_type) != type_type) return false;
  const auto* type_name = Load<const char*>(type, layout.type_name);
  return type_name != nullptr && std::strcmp(type_name, name) == 0;
}

void AppendUtf8(uint32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
  } else if ((code_point >= 0xd800 && code_point <= 0xdfff) || code_point > 0x10ffff) {
    // A lone surrogate (e.g. from a file name decoded with surrogateescape) has no UTF-8 form; Python's
    // str.encode("utf-8", "replace") writes "?" for it too.
    out->push_back('?');
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
  }
}

}  // namespace

std::unique_ptr<PythonStackReader> PythonStackReader::Detect() {
  const int minor = RunningMinorVersion();
  const CPythonLayout* layout = nullptr;
  for (const CPythonLayout& candidate : internal::kCPythonLayouts) {
    if (candidate.minor == minor) layout = &candidate;
  }
  if (layout == nullptr) return nullptr;

  Interpreter py;
  py.is_initialized = Symbol<int (*)()>("Py_IsInitialized");
  // Public from 3.13; 3.10 to 3.12 export the same function with a leading underscore.
  py.is_finalizing = Symbol<int (*)()>("Py_IsFinalizing");
  if (py.is_finalizing == nullptr) py.is_finalizing = Symbol<int (*)()>("_Py_IsFinalizing");
  py.this_thread_state = Symbol<void* (*)()>("PyGILState_GetThisThreadState");
  py.check_line_number = Symbol<int (*)(int, void*)>("_PyCode_CheckLineNumber");
  py.code_type = Symbol<uintptr_t>("PyCode_Type");
  py.unicode_type = Symbol<uintptr_t>("PyUnicode_Type");
  py.bytes_type = Symbol<uintptr_t>("PyBytes_Type");
  py.frame_type = Symbol<uintptr_t>("PyFrame_Type");
  const auto type_type = Symbol<uintptr_t>("PyType_Type");
  if (py.is_initialized == nullptr || py.is_finalizing == nullptr || py.this_thread_state == nullptr ||
      py.check_line_number == nullptr || type_type == 0 || !IsTypeNamed(py.code_type, type_type, *layout, "code") ||
      !IsTypeNamed(py.unicode_type, type_type, *layout, "str") ||
      !IsTypeNamed(py.bytes_type, type_type, *layout, "bytes") ||
      !IsTypeNamed(py.frame_type, type_type, *layout, "frame") || !py.is_initialized()) {
    return nullptr;
  }
  return std::unique_ptr<PythonStackReader>(new PythonStackReader(*layout, py));
}

int PythonStackReader::minor_version() const { return layout_.minor; }

std::vector<PythonFrame> PythonStackReader::Capture(size_t max) const {
  std::vector<PythonFrame> frames;
  // Each call, not once: the interpreter may have finalized (its thread states freed) since Detect.
  if (max == 0 || !py_.is_initialized() || py_.is_finalizing()) return frames;
  // The thread state bound to this OS thread (a TLS read); null on a thread Python never ran on.
  const auto tstate = reinterpret_cast<uintptr_t>(py_.this_thread_state());
  if (tstate == 0) return frames;
  frames.reserve(std::min<size_t>(max, 32));
  if (layout_.frame_back >= 0) {
    CaptureFrameObjects(Load<uintptr_t>(tstate, layout_.tstate_frame), max, &frames);
  } else if (layout_.tstate_cframe >= 0) {
    const auto cframe = Load<uintptr_t>(tstate, layout_.tstate_cframe);
    if (cframe != 0) CaptureInterpreterFrames(Load<uintptr_t>(cframe, layout_.cframe_current_frame), max, &frames);
  } else {
    CaptureInterpreterFrames(Load<uintptr_t>(tstate, layout_.tstate_frame), max, &frames);
  }
  return frames;
}

void PythonStackReader::CaptureFrameObjects(uintptr_t frame, size_t max, std::vector<PythonFrame>* frames) const {
  for (size_t visited = 0; frame != 0 && visited < kMaxWalk && frames->size() < max; ++visited) {
    if (!HasType(frame, py_.frame_type)) return;
    const auto code = Load<uintptr_t>(frame, layout_.frame_code);
    if (!HasType(code, py_.code_type)) return;
    // f_lasti counts code units and is -1 before the first instruction, as PyFrame_GetLineNumber expects.
    const int64_t offset = int64_t{Load<int>(frame, layout_.frame_lasti)} * layout_.code_unit_size;
    AddFrame(code, offset, Load<int>(frame, layout_.frame_lineno), frames);
    frame = Load<uintptr_t>(frame, layout_.frame_back);
  }
}

void PythonStackReader::CaptureInterpreterFrames(uintptr_t frame, size_t max, std::vector<PythonFrame>* frames) const {
  for (size_t visited = 0; frame != 0 && visited < kMaxWalk && frames->size() < max;
       ++visited, frame = Load<uintptr_t>(frame, layout_.iframe_previous)) {
    // Interpreter frames are not objects; alignment is the one check their own address allows.
    if (frame % alignof(void*) != 0) return;
    const int owner = Load<signed char>(frame, layout_.iframe_owner);
    // The shim frame each interpreter entry pushes on the C stack (3.12+) runs no Python code.
    if (owner == layout_.owned_by_cstack) continue;
    const auto code = Load<uintptr_t>(frame, layout_.iframe_code);
    if (!HasType(code, py_.code_type)) {
      // 3.13's f_executable need not be a code object; before it, f_code always is, so the layout is not ours.
      if (layout_.minor >= 13) continue;
      return;
    }
    // Byte offset of the instruction pointer in the bytecode, i.e. _PyInterpreterFrame_LASTI * sizeof(_Py_CODEUNIT).
    const auto offset = static_cast<int64_t>(Load<uintptr_t>(frame, layout_.iframe_instr) -
                                             (code + static_cast<uintptr_t>(layout_.code_adaptive)));
    // As _PyFrame_IsIncomplete: a frame still in its prologue (before _co_firsttraceable) is not shown by CPython
    // (PyFrame_GetBack and tracebacks skip it). The __init__ shim frame of 3.13 and the entry frames of 3.12 are such.
    if (owner != layout_.owned_by_generator &&
        offset < int64_t{Load<int>(code, layout_.code_firsttraceable)} * layout_.code_unit_size) {
      continue;
    }
    const auto frame_object = Load<uintptr_t>(frame, layout_.iframe_frame_obj);
    const int lineno = HasType(frame_object, py_.frame_type) ? Load<int>(frame_object, layout_.frame_lineno) : 0;
    AddFrame(code, offset, lineno, frames);
  }
}

void PythonStackReader::AddFrame(uintptr_t code, int64_t offset, int lineno, std::vector<PythonFrame>* frames) const {
  PythonFrame& frame = frames->emplace_back();
  frame.file = Utf8(Load<uintptr_t>(code, layout_.code_filename));
  frame.function = Utf8(Load<uintptr_t>(code, layout_.code_qualname >= 0 ? layout_.code_qualname : layout_.code_name));
  // PyFrame_GetLineNumber's rule: f_lineno, when a tracer has set it, wins over the line table.
  frame.line = lineno > 0 ? lineno : LineAt(code, offset);
}

// PyCode_Addr2Line(code, offset), done by hand. PyCode_Addr2Line itself may consult a cache another thread can be
// building: in 3.11 the `_co_linearray` a tracer creates, whose pointer is stored before its entry size and contents
// (seen in 3.11.7's _PyCode_CreateLineArray), and in newer CPython the sys.monitoring line data. Without the GIL we
// could read it half-built, so we take the path PyCode_Addr2Line takes when there is no cache: a PyCodeAddressRange
// over co_linetable (immutable for the code object's life) set up as _PyCode_InitAddressRange does, walked by the
// exported _PyCode_CheckLineNumber, which only reads that table (checked in the 3.10-3.13 binaries: it calls nothing
// but the table-walking helpers).
int PythonStackReader::LineAt(uintptr_t code, int64_t offset) const {
  const int first_line = Load<int>(code, layout_.code_firstlineno);
  if (offset < 0) return first_line > 0 ? first_line : 0;
  const auto table = Load<uintptr_t>(code, layout_.code_linetable);
  if (offset > INT_MAX || !HasType(table, py_.bytes_type)) return 0;
  const auto table_size = Load<int64_t>(table, layout_.var_object_size);
  if (table_size < 0) return 0;
  const uintptr_t table_data = table + layout_.bytes_sval;
  alignas(8) unsigned char range[kRangeCapacity] = {};
  Store<int>(range, layout_.range_ar_start, -1);
  Store<int>(range, layout_.range_ar_end, 0);
  Store<int>(range, layout_.range_ar_line, -1);
  Store<int>(range, layout_.range_computed_line, first_line);
  Store<uintptr_t>(range, layout_.range_lo_next, table_data);
  Store<uintptr_t>(range, layout_.range_limit, table_data + static_cast<uintptr_t>(table_size));
  const int line = py_.check_line_number(static_cast<int>(offset), range);
  return line > 0 ? line : 0;
}

// A str's text as UTF-8, from its canonical data (never the cached UTF-8 copy, which another thread may be filling).
std::string PythonStackReader::Utf8(uintptr_t str) const {
  if (!HasType(str, py_.unicode_type)) return kUnknown;
  const auto length = Load<int64_t>(str, layout_.unicode_length);
  const auto state = Load<uint32_t>(str, layout_.unicode_state);
  // Non-compact (legacy) strings keep their characters in a separate block; code objects do not hold them.
  if (length < 0 || length > kMaxStringLength || (state & layout_.state_compact_mask) == 0) return kUnknown;
  const uint32_t kind = (state & layout_.state_kind_mask) / (layout_.state_kind_mask & (~layout_.state_kind_mask + 1));
  if ((state & layout_.state_ascii_mask) != 0) {
    if (kind != 1) return kUnknown;
    return std::string(reinterpret_cast<const char*>(str + layout_.ascii_object_size), static_cast<size_t>(length));
  }
  if (kind != 1 && kind != 2 && kind != 4) return kUnknown;
  const uintptr_t data = str + layout_.compact_object_size;
  std::string text;
  text.reserve(static_cast<size_t>(length) * 2);
  for (int64_t i = 0; i < length; ++i) {
    const int at = static_cast<int>(i * kind);
    AppendUtf8(kind == 1   ? Load<uint8_t>(data, at)
               : kind == 2 ? Load<uint16_t>(data, at)
                           : Load<uint32_t>(data, at),
               &text);
  }
  return text;
}

bool PythonStackReader::HasType(uintptr_t object, uintptr_t type) const {
  return object != 0 && object % alignof(void*) == 0 && Load<uintptr_t>(object, layout_.object_type) == type;
}

}  // namespace graphcheck::capture
