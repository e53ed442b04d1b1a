"""The probe's way into graphcheck's recorder: the event kinds and capture origins of the trace format
(trace/events.h), and the records the injection library takes (capture/probe_abi.h) as ctypes structures.

The library is found once the CUDA driver has loaded it (CUDA_INJECTION64_PATH); the probe never loads it itself,
since a second copy would be a second recorder. Every call is guarded: recording never raises into the program.
tests/capture/probe_abi_test.py keeps these numbers and layouts equal to the C++ ones.
"""
import ctypes
import enum
import os
import struct
import time


class EventKind(enum.IntEnum):
    """trace/events.h: ProbeEventKind."""

    CAPTURE_BEGIN = 1
    CAPTURE_END = 2
    CAPTURE_EXCEPTION = 3
    COMPILE_SKIP = 4
    OUTPUTS_INVALIDATED = 5
    UNCAUGHT_EXCEPTION = 6
    STATE_REBOUND = 7
    OUTPUTS_HELD = 8
    DDP_CONSTRUCTED = 9
    DDP_CAPTURED_FORWARD = 10
    HOST_VALUE_CHANGED = 11
    INPUT_SHAPE_CHANGED = 12
    AUDIT_BEGIN = 13
    AUDIT_END = 14
    SHADOW_SKIPPED = 15
    WAIT_BEGIN = 16
    WAIT_END = 17
    GRAPH_ALIVE = 18
    MEGATRON_GRAPH_RECORDED = 19
    GRAPH_TENSORS = 20
    TRAINING_MODE_CHANGED = 21
    HOST_RANDOM_DRAW = 22
    GRAD_ALIASED = 23
    TENSOR_RELEASED = 24
    MODULE_CALL_BEGIN = 25
    MODULE_CALL_END = 26
    BACKWARD_BEGIN = 27
    BACKWARD_END = 28
    STATE_MADE_IN_CAPTURE = 29
    PROGRAM_STEP = 30


class Origin(enum.IntEnum):
    """trace/events.h: ProbeOrigin."""

    UNKNOWN = 0
    USER = 1
    GRAPHED_CALLABLES = 2
    CUDAGRAPH_TREES = 3
    CUDAGRAPH_TREES_INIT = 4
    TRANSFORMER_ENGINE = 5
    MEGATRON = 6
    MEGATRON_FULL_ITERATION = 7


class ShadowSubject(enum.IntEnum):
    """trace/events.h: ShadowSubject."""

    MODULE_FORWARD = 0
    CAPTURED_REGION = 1
    MODULE_BACKWARD = 2
    GRAD_ACCUMULATION = 3


class AllocationRecord(ctypes.Structure):
    """capture/probe_abi.h: GraphcheckAllocation: one entry of PyTorch's caching-allocator history."""

    _fields_ = [("time_us", ctypes.c_uint64), ("address", ctypes.c_uint64), ("bytes", ctypes.c_uint64),
                ("device", ctypes.c_uint32), ("action", ctypes.c_uint32)]


class AllocationBatch(ctypes.Structure):
    """capture/probe_abi.h: GraphcheckAllocations."""

    _fields_ = [("size", ctypes.c_uint32), ("record_size", ctypes.c_uint32), ("now_us", ctypes.c_uint64),
                ("count", ctypes.c_uint64), ("records", ctypes.POINTER(AllocationRecord))]


MAX_TEXT = 4096  # characters of one text field sent (an exception's text can hold a whole tensor)
MAX_TENSOR_LIST = 1 << 20  # characters of a GRAPH_TENSORS list (capture/probe_events.cc keeps as many)
MAX_NAMES = 8  # module or parameter names listed in one event's text
_U64 = 0xFFFFFFFFFFFFFFFF


class ProbeEventRecord(ctypes.Structure):
    """capture/probe_abi.h: GraphcheckProbeEvent."""

    _fields_ = [("size", ctypes.c_uint32), ("kind", ctypes.c_int32), ("origin", ctypes.c_int32),
                ("graph", ctypes.c_uint64), ("pool", ctypes.c_uint64), ("value", ctypes.c_uint64),
                ("value_now", ctypes.c_uint64), ("type", ctypes.c_char_p), ("text", ctypes.c_char_p),
                ("frames", ctypes.c_char_p)]


class ShadowRecord(ctypes.Structure):
    """capture/probe_abi.h: GraphcheckShadowRecord: one tensor compared under --shadow."""

    _fields_ = [("size", ctypes.c_uint32), ("call", ctypes.c_uint32), ("module", ctypes.c_uint64),
                ("module_type", ctypes.c_char_p), ("name", ctypes.c_char_p), ("dtype", ctypes.c_char_p),
                ("precision", ctypes.c_char_p), ("draws", ctypes.c_char_p), ("numel", ctypes.c_uint64),
                ("max_abs_error", ctypes.c_double), ("worst_index", ctypes.c_int64),
                ("eager_at_worst", ctypes.c_double), ("graphed_at_worst", ctypes.c_double),
                ("eager_abs_max", ctypes.c_double), ("eager_spread", ctypes.c_double),
                ("eager_nonfinite", ctypes.c_uint64), ("graphed_nonfinite", ctypes.c_uint64),
                ("random", ctypes.c_uint8), ("subject", ctypes.c_uint8), ("shadow_ns", ctypes.c_uint64),
                ("frames", ctypes.c_char_p)]


def utf8(text, limit=MAX_TEXT):
    if text is None:
        return None
    return str(text)[:limit].replace("\0", " ").encode("utf-8", "replace")


class Recorder:
    """graphcheck_probe_event, graphcheck_probe_shadow and graphcheck_probe_allocations of the injection library, once
    CUDA has loaded it."""

    def __init__(self, library):
        self._library = library
        self._event = None
        self._shadow = None
        self._allocations = None

    def _load(self):
        if self._library is None:
            return False
        try:
            library = ctypes.CDLL(self._library, mode=os.RTLD_NOLOAD | os.RTLD_NOW)
        except OSError:  # not loaded yet: CUDA is not initialised, so there is nothing to record
            return False
        try:
            event, shadow = library.graphcheck_probe_event, library.graphcheck_probe_shadow
            allocations = library.graphcheck_probe_allocations
        except AttributeError:  # CUDA_INJECTION64_PATH names another tool's library: record nothing, for good
            self._library = None
            return False
        event.argtypes = [ctypes.POINTER(ProbeEventRecord)]
        event.restype = ctypes.c_int
        shadow.argtypes = [ctypes.POINTER(ShadowRecord)]
        shadow.restype = ctypes.c_int
        allocations.argtypes = [ctypes.POINTER(AllocationBatch)]
        allocations.restype = ctypes.c_int64
        self._event, self._shadow, self._allocations = event, shadow, allocations
        return True

    def emit(self, kind, origin=Origin.UNKNOWN, graph=0, pool=0, value=0, value_now=0, type_name=None, text=None,
             frames=None, text_limit=MAX_TEXT):
        """One probe event in its raw fields: only events.py, which sends each kind with named arguments, calls
        this. `frames`: explicit frames as frames.exception_frames() or frames.encode_stack() give them, None for the
        calling thread's Python stack (taken by the recorder)."""
        if self._event is None and not self._load():
            return
        try:
            record = ProbeEventRecord(ctypes.sizeof(ProbeEventRecord), int(kind), int(origin), graph & _U64,
                                      pool & _U64, value & _U64, value_now & _U64, utf8(type_name),
                                      utf8(text, text_limit), utf8(frames, MAX_TENSOR_LIST))
            self._event(ctypes.byref(record))
        except Exception:
            pass

    def shadow(self, record):
        """One ShadowRecord (its `size` is filled here); without `frames` the recorder takes the calling thread's
        Python stack."""
        if self._shadow is None and not self._load():
            return
        try:
            record.size = ctypes.sizeof(ShadowRecord)
            self._shadow(ctypes.byref(record))
        except Exception:
            pass

    def allocations(self, records):
        """The caching allocator's history, oldest first: (time_us, address, bytes, device, action) tuples."""
        if self._allocations is None and not self._load():
            return
        try:
            array = (AllocationRecord * len(records))(*records)
            batch = AllocationBatch(ctypes.sizeof(AllocationBatch), ctypes.sizeof(AllocationRecord), 0, len(records),
                                    array)
            batch.now_us = time.time_ns() // 1000  # last: the recorder reads its own clock right after
            self._allocations(ctypes.byref(batch))
        except Exception:
            pass


class _Silent:
    """The recorder outside `graphcheck run`: nothing is sent."""

    def emit(self, *args, **kwargs):
        pass

    def shadow(self, record):
        pass

    def allocations(self, records):
        pass


recorder = _Silent()  # install() puts a Recorder here


def listed(names):
    """An event's text of names: the first MAX_NAMES of `names`, joined, and ", ..." when there were more."""
    names = list(names)
    return ", ".join(names[:MAX_NAMES]) + (", ..." if len(names) > MAX_NAMES else "")


def double_bits(number):
    """A float as the u64 of its IEEE-754 bits (events carry host values this way)."""
    return struct.unpack("<Q", struct.pack("<d", float(number)))[0]
