// Byte-level encoding for the trace format (docs/trace-format.md): LEB128 varints, zigzag for signed values and
// deltas, length-prefixed strings, little-endian fixed-width integers and doubles. The writer encodes each record twice
// when its size is not bounded in advance (once counting, once writing straight into the mapped chunk), so the encoder
// is a template over whether it stores bytes; the decoder never reads past its end and reports failure instead.
#ifndef GRAPHCHECK_TRACE_INTERNAL_VARINT_H_
#define GRAPHCHECK_TRACE_INTERNAL_VARINT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "absl/strings/string_view.h"

namespace graphcheck::trace::internal {

inline constexpr size_t kMaxVarintBytes = 10;

inline uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }
// The signed difference b - a, modulo 2^64, so any pair of values round-trips exactly.
inline uint64_t DeltaZigZag(uint64_t from, uint64_t to) { return ZigZag(static_cast<int64_t>(to - from)); }
inline uint64_t ApplyDelta(uint64_t from, uint64_t zigzag) { return from + static_cast<uint64_t>(UnZigZag(zigzag)); }

// kStore = false only counts the bytes (to size a record before reserving room for it).
template <bool kStore>
class BasicEncoder {
 public:
  explicit BasicEncoder(uint8_t* out = nullptr) : out_(out) {}

  void Byte(uint8_t b) {
    if constexpr (kStore) out_[size_] = b;
    ++size_;
  }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      Byte(static_cast<uint8_t>(v) | 0x80);
      v >>= 7;
    }
    Byte(static_cast<uint8_t>(v));
  }
  void Signed(int64_t v) { Varint(ZigZag(v)); }
  // A double as its 8 IEEE-754 bytes, little-endian: exact, NaN and infinities included.
  void Double(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; ++i) Byte(static_cast<uint8_t>(bits >> (8 * i)));
  }
  void Bytes(const void* data, size_t n) {
    if constexpr (kStore) std::memcpy(out_ + size_, data, n);
    size_ += n;
  }
  void String(absl::string_view s) {
    Varint(s.size());
    Bytes(s.data(), s.size());
  }

  size_t size() const { return size_; }

 private:
  uint8_t* out_;
  size_t size_ = 0;
};
using Encoder = BasicEncoder<true>;
using SizeCounter = BasicEncoder<false>;

// Reads what BasicEncoder wrote. Every read returns false (and the decoder stays failed) on running out of bytes or
// on an over-long varint, so decoding damaged input is a sequence of checked reads, never an out-of-bounds access.
class Decoder {
 public:
  explicit Decoder(absl::string_view bytes) : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  bool Byte(uint8_t* b) {
    if (p_ == end_) return Fail();
    *b = static_cast<uint8_t>(*p_++);
    return true;
  }
  bool Varint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!Byte(&b)) return false;
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return Fail();
  }
  // A varint that must fit the destination type (ids, counts, enum values).
  template <typename T>
  bool Varint(T* v, uint64_t max) {
    uint64_t raw;
    if (!Varint(&raw) || raw > max) return Fail();
    *v = static_cast<T>(raw);
    return true;
  }
  bool Signed(int64_t* v) {
    uint64_t raw;
    if (!Varint(&raw)) return false;
    *v = UnZigZag(raw);
    return true;
  }
  bool Double(double* v) {
    if (remaining() < 8) return Fail();
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits |= static_cast<uint64_t>(static_cast<uint8_t>(p_[i])) << (8 * i);
    p_ += 8;
    std::memcpy(v, &bits, sizeof bits);
    return true;
  }
  bool String(absl::string_view* s) {
    uint64_t n;
    if (!Varint(&n)) return false;
    if (n > remaining()) return Fail();
    *s = absl::string_view(p_, n);
    p_ += n;
    return true;
  }

  // Everything not read yet (a string record's bytes run to the end of its payload).
  absl::string_view Rest() {
    absl::string_view rest(p_, remaining());
    p_ = end_;
    return rest;
  }

  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  bool ok() const { return ok_; }

 private:
  bool Fail() {
    ok_ = false;
    p_ = end_;
    return false;
  }

  const char* p_;
  const char* end_;
  bool ok_ = true;
};

inline void StoreLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void StoreLe64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint32_t LoadLe32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
inline uint64_t LoadLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace graphcheck::trace::internal

#endif  // GRAPHCHECK_TRACE_INTERNAL_VARINT_H_
