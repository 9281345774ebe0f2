//===- ArtifactMutator.cpp - structure-aware mutation of artifacts -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An artifact is a size-prefixed FlatBuffer (the metadata, with the code
// inside it) followed by the embedded weights segment, which the root's
// weights_offset locates. Each call verifies the metadata against the
// binary schema, lists the places a mutation can change (every scalar of
// every table and struct, every string, every vector), applies one to four
// mutations, and writes the metadata back with its size, the weights
// segment moved by a multiple of 64 bytes and the checksum recomputed.
//
// A mutation never moves an object: offsets only point forward, so what
// shrinks is rewritten in place, and what grows is appended to the end of
// the metadata, where the offset that named the old object is pointed.
// (FlatBuffers' reflective resizing is not used: it misplaces an object that
// starts exactly where bytes are inserted, as a vtable after a vector can.)
//
//===----------------------------------------------------------------------===//

#include "ArtifactMutator.h"
#include "IntegerSteps.h"

#include "crc32.h"

#include "artifact_bfbs_generated.h"
#include "flatbuffers/reflection.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

// libFuzzer's own byte mutation, for inputs that are not artifacts.
extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size,
                                   size_t maxSize);

namespace mnemo::fuzz {
namespace {

using flatbuffers::uoffset_t;
using reflection::BaseType;

const reflection::Schema &schema() {
  static const reflection::Schema *s =
      reflection::GetSchema(artifact::ArtifactBinarySchema::data());
  return *s;
}

/// Whether the size-prefixed metadata at `data` verifies (alignment counts
/// from the size prefix, as it does for the runtime's verifier).
bool verified(const uint8_t *data, size_t size) {
  return flatbuffers::VerifySizePrefixed(schema(), *schema().root_table(),
                                         data, size);
}

/// A place a mutation can change, by byte offsets in the metadata (listed
/// again after each mutation, as appending may reallocate the buffer).
struct Site {
  enum Kind { Scalar, String, ScalarVector, OffsetVector, StructVector };
  Kind kind;
  size_t at;           // the scalar, or the string's or vector's length word
  size_t from;         // strings and vectors: the offset that names them
  BaseType type;       // the scalar's type, or the vector's element type
  size_t elementSize;  // vectors: bytes per element
  const reflection::Field *field; // the scalar's field, for enum values
};

class Mutator {
public:
  /// `buf`: the metadata with its size prefix, which offsets count from.
  Mutator(std::vector<uint8_t> &buf, unsigned seed) : buf(buf), rng(seed) {}

  void mutate() {
    unsigned count = 1 + below(4);
    for (unsigned i = 0; i < count; ++i) {
      // A buffer that verifies may still hold objects that overlap (byte
      // mutations make them), and a change to one then breaks another.
      if (i > 0 && !verified(buf.data(), buf.size()))
        return;
      collect();
      if (sites.empty())
        return;
      const Site &site = sites[below(sites.size())];
      switch (site.kind) {
      case Site::Scalar:
        setScalar(buf.data() + site.at, site);
        break;
      case Site::String:
        setString(site);
        break;
      case Site::ScalarVector:
      case Site::StructVector:
        mutateInlineVector(site);
        break;
      case Site::OffsetVector:
        mutateOffsetVector(site);
        break;
      }
    }
  }

  /// The bytes the metadata may grow by.
  size_t room = 0;

private:
  std::vector<uint8_t> &buf;
  std::minstd_rand rng;
  std::vector<Site> sites;
  std::vector<size_t> strings; // offsets of every string, for copies

  size_t below(size_t n) { return n == 0 ? 0 : rng() % n; }
  bool coin() { return rng() & 1; }

  //===------------------------------------------------------------------===//
  // Listing the sites
  //===------------------------------------------------------------------===//

  size_t offsetOf(const void *p) const {
    return static_cast<const uint8_t *>(p) - buf.data();
  }

  void collect() {
    sites.clear();
    strings.clear();
    const auto *root = flatbuffers::GetAnySizePrefixedRoot(buf.data());
    walkTable(*root, *schema().root_table());
  }

  const reflection::Object &objectOf(const reflection::Type &type) const {
    return *schema().objects()->Get(type.index());
  }

  /// The object that the offset at `from` names.
  const uint8_t *named(const uint8_t *from) const {
    return from + flatbuffers::ReadScalar<uoffset_t>(from);
  }

  void addString(const uint8_t *from) {
    sites.push_back({Site::String, offsetOf(named(from)), offsetOf(from),
                     BaseType::String, 1, nullptr});
    strings.push_back(offsetOf(named(from)));
  }

  void walkStruct(const uint8_t *p, const reflection::Object &object) {
    for (const reflection::Field *f : *object.fields()) {
      BaseType t = f->type()->base_type();
      const uint8_t *at = p + f->offset();
      if (flatbuffers::IsScalar(t))
        sites.push_back({Site::Scalar, offsetOf(at), 0, t, 0, f});
      else if (t == BaseType::Obj)
        walkStruct(at, objectOf(*f->type()));
    }
  }

  void walkTable(const flatbuffers::Table &table,
                 const reflection::Object &object) {
    for (const reflection::Field *f : *object.fields()) {
      const reflection::Type &type = *f->type();
      BaseType t = type.base_type();
      const uint8_t *at = table.GetAddressOf(f->offset());
      if (!at)
        continue;
      if (flatbuffers::IsScalar(t)) {
        sites.push_back({Site::Scalar, offsetOf(at), 0, t, 0, f});
      } else if (t == BaseType::String) {
        addString(at);
      } else if (t == BaseType::Obj) {
        const reflection::Object &sub = objectOf(type);
        if (sub.is_struct())
          walkStruct(at, sub);
        else
          walkTable(*reinterpret_cast<const flatbuffers::Table *>(named(at)),
                    sub);
      } else if (t == BaseType::Vector) {
        walkVector(at, type);
      }
    }
  }

  void walkVector(const uint8_t *from, const reflection::Type &type) {
    const uint8_t *v = named(from);
    uoffset_t n = flatbuffers::ReadScalar<uoffset_t>(v);
    const uint8_t *data = v + sizeof(uoffset_t);
    BaseType e = type.element();
    if (flatbuffers::IsScalar(e)) {
      sites.push_back({Site::ScalarVector, offsetOf(v), offsetOf(from), e,
                       flatbuffers::GetTypeSize(e), nullptr});
      return;
    }
    if (e == BaseType::String) {
      sites.push_back({Site::OffsetVector, offsetOf(v), offsetOf(from), e,
                       sizeof(uoffset_t), nullptr});
      for (uoffset_t i = 0; i < n; ++i)
        addString(data + i * sizeof(uoffset_t));
      return;
    }
    if (e != BaseType::Obj)
      return; // unions: the schema has none
    const reflection::Object &object = objectOf(type);
    if (object.is_struct()) {
      size_t size = static_cast<size_t>(object.bytesize());
      sites.push_back({Site::StructVector, offsetOf(v), offsetOf(from), e,
                       size, nullptr});
      for (uoffset_t i = 0; i < n; ++i)
        walkStruct(data + i * size, object);
      return;
    }
    sites.push_back({Site::OffsetVector, offsetOf(v), offsetOf(from), e,
                     sizeof(uoffset_t), nullptr});
    for (uoffset_t i = 0; i < n; ++i)
      walkTable(*reinterpret_cast<const flatbuffers::Table *>(
                    named(data + i * sizeof(uoffset_t))),
                object);
  }

  /// Points the offset at `from` to `to`, which lies after it; false when
  /// it does not (an offset only points forward).
  bool point(size_t from, size_t to) {
    if (to <= from)
      return false;
    flatbuffers::WriteScalar<uoffset_t>(buf.data() + from,
                                        static_cast<uoffset_t>(to - from));
    return true;
  }

  /// Appends a vector (or string) of `n` elements of `size` bytes, their
  /// data `align` aligned, with a zero after it; returns where its length
  /// word is, or 0 without room.
  size_t append(uoffset_t n, size_t size, size_t align) {
    size_t bytes = n * size;
    align = std::max<size_t>(align, sizeof(uoffset_t));
    size_t at = buf.size();
    while ((at + sizeof(uoffset_t)) % align != 0)
      ++at;
    size_t end = at + sizeof(uoffset_t) + bytes + 1;
    if (end - buf.size() > room)
      return 0;
    room -= end - buf.size();
    buf.resize(end, 0);
    flatbuffers::WriteScalar<uoffset_t>(buf.data() + at, n);
    return at;
  }

  //===------------------------------------------------------------------===//
  // Scalars
  //===------------------------------------------------------------------===//

  /// A value of another scalar site: indices and sizes that name each other.
  int64_t someOtherScalar() {
    for (int tries = 0; tries < 8; ++tries) {
      const Site &s = sites[below(sites.size())];
      if (s.kind == Site::Scalar && flatbuffers::IsInteger(s.type))
        return flatbuffers::GetAnyValueI(s.type, buf.data() + s.at);
    }
    return 0;
  }

  int64_t integerFor(int64_t old, const Site &site) {
    static const int64_t special[] = {
        0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256,
        1023, 1024, 4096, 65535, 65536, 1 << 20,
        std::numeric_limits<int32_t>::max(),
        std::numeric_limits<uint32_t>::max(),
        std::numeric_limits<int64_t>::max(), -1, -2,
        std::numeric_limits<int32_t>::min(),
        std::numeric_limits<int64_t>::min()};
    // An enum: one of its values, or one past the largest.
    if (site.field && site.field->type()->index() >= 0 && coin()) {
      const auto *values =
          schema().enums()->Get(site.field->type()->index())->values();
      if (values->size() > 0)
        return below(4) == 0 ? values->Get(values->size() - 1)->value() + 1
                             : values->Get(below(values->size()))->value();
    }
    switch (below(8)) {
    case 0:
      return applyStep(old, IntegerStep::Next);
    case 1:
      return applyStep(old, IntegerStep::Previous);
    case 2:
      return applyStep(old, IntegerStep::Double);
    case 3:
      return old / 2;
    case 4:
      return someOtherScalar();
    case 5:
      return static_cast<int64_t>(static_cast<uint64_t>(rng())
                                  << (below(2) * 32));
    default:
      return special[below(std::size(special))];
    }
  }

  double floatFor(double old) {
    static const double special[] = {
        0.0, -0.0, 1.0, -1.0, 0.5, 1e-45, 1e30, -1e30,
        std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()};
    return coin() ? old * (coin() ? 2.0 : -0.5)
                  : special[below(std::size(special))];
  }

  void setScalar(uint8_t *at, const Site &site) {
    if (flatbuffers::IsFloat(site.type)) {
      flatbuffers::SetAnyValueF(site.type, at,
                                floatFor(flatbuffers::GetAnyValueF(site.type, at)));
      return;
    }
    if (site.type == BaseType::Bool) {
      *at = static_cast<uint8_t>(below(3));
      return;
    }
    flatbuffers::SetAnyValueI(
        site.type, at,
        integerFor(flatbuffers::GetAnyValueI(site.type, at), site));
  }

  //===------------------------------------------------------------------===//
  // Strings
  //===------------------------------------------------------------------===//

  std::string stringAt(size_t at) const {
    const auto *s = reinterpret_cast<const flatbuffers::String *>(
        buf.data() + at);
    return s->str();
  }

  void setString(const Site &site) {
    std::string value = stringAt(site.at);
    size_t old = value.size();
    switch (below(6)) {
    case 0:
      value.clear();
      break;
    case 1: // another string of the artifact: names that collide
      value = stringAt(strings[below(strings.size())]);
      break;
    case 2:
      if (!value.empty())
        value[below(value.size())] = static_cast<char>(rng());
      break;
    case 3:
      value.resize(below(value.size() + 1));
      break;
    case 4:
      value += coin() ? "x" : std::string(1, '\0');
      break;
    default: {
      static const char *special[] = {"../weights.bin", "/", "main",
                                      "prefill",        "decode", "append",
                                      "%s%n",
                                      "x86_64-unknown-linux-gnu",
                                      "aarch64-unknown-linux-gnu"};
      value = special[below(std::size(special))];
      break;
    }
    }
    size_t at = site.at;
    if (value.size() > old) {
      at = append(static_cast<uoffset_t>(value.size()), 1, 1);
      if (!at)
        return;
      point(site.from, at);
    } else {
      flatbuffers::WriteScalar<uoffset_t>(buf.data() + at,
                                          static_cast<uoffset_t>(value.size()));
      std::memset(buf.data() + at + sizeof(uoffset_t), 0, old + 1);
    }
    std::memcpy(buf.data() + at + sizeof(uoffset_t), value.data(),
                value.size());
  }

  //===------------------------------------------------------------------===//
  // Vectors
  //===------------------------------------------------------------------===//

  uoffset_t lengthAt(size_t at) const {
    return flatbuffers::ReadScalar<uoffset_t>(buf.data() + at);
  }

  uint8_t *element(const Site &site, size_t i) {
    return buf.data() + site.at + sizeof(uoffset_t) + i * site.elementSize;
  }

  /// Scalars and structs: a new length (a longer vector is a copy, its new
  /// elements copies of old ones), two elements swapped, or one changed.
  void mutateInlineVector(const Site &site) {
    uoffset_t n = lengthAt(site.at);
    size_t size = site.elementSize;
    // Bytes (the code object): libFuzzer's byte mutations, in place, so
    // that the ELF and PTX checks see damaged objects too.
    if (size == 1 && n > 0 && coin()) {
      size_t length = LLVMFuzzerMutate(element(site, 0), n, n);
      flatbuffers::WriteScalar<uoffset_t>(buf.data() + site.at,
                                          static_cast<uoffset_t>(length));
      return;
    }
    switch (below(3)) {
    case 0: {
      uoffset_t lengths[] = {0, 1, n > 0 ? n - 1 : 0, n + 1,
                             n + 1 + static_cast<uoffset_t>(below(4)), 2 * n};
      uoffset_t length = lengths[below(std::size(lengths))];
      if (length <= n) {
        flatbuffers::WriteScalar<uoffset_t>(buf.data() + site.at, length);
        return;
      }
      if (n == 0)
        return;
      size_t at = append(length, size, std::min<size_t>(size, 8));
      if (!at)
        return;
      uint8_t *to = buf.data() + at + sizeof(uoffset_t);
      const uint8_t *from = element(site, 0);
      std::memcpy(to, from, n * size);
      for (uoffset_t i = n; i < length; ++i)
        std::memcpy(to + i * size, from + below(n) * size, size);
      point(site.from, at);
      return;
    }
    case 1: {
      if (n < 2)
        return;
      uint8_t *a = element(site, below(n)), *b = element(site, below(n));
      for (size_t i = 0; i < size; ++i)
        std::swap(a[i], b[i]);
      return;
    }
    default:
      if (n == 0 || site.kind != Site::ScalarVector)
        return;
      setScalar(element(site, below(n)),
                {Site::Scalar, 0, 0, site.type, 0, nullptr});
      return;
    }
  }

  /// Tables and strings: one element dropped, the vector cut, one element
  /// naming another's object, or two swapped. (A longer vector cannot be
  /// appended: its offsets would point back.)
  void mutateOffsetVector(const Site &site) {
    uoffset_t n = lengthAt(site.at);
    if (n == 0)
      return;
    auto slot = [&](size_t i) { return site.at + (i + 1) * sizeof(uoffset_t); };
    auto target = [&](size_t i) { return offsetOf(named(buf.data() + slot(i))); };
    switch (below(4)) {
    case 0: { // drop element k, keeping the others' order
      for (size_t i = below(n); i + 1 < n; ++i)
        point(slot(i), target(i + 1));
      flatbuffers::WriteScalar<uoffset_t>(buf.data() + site.at, n - 1);
      return;
    }
    case 1:
      flatbuffers::WriteScalar<uoffset_t>(buf.data() + site.at,
                                          static_cast<uoffset_t>(below(n)));
      return;
    case 2: // element j names element k's object
      point(slot(below(n)), target(below(n)));
      return;
    default: { // swap two elements
      size_t a = below(n), b = below(n);
      size_t ta = target(a), tb = target(b);
      if (tb > slot(a) && ta > slot(b)) {
        point(slot(a), tb);
        point(slot(b), ta);
      }
      return;
    }
    }
  }
};

const reflection::Field &rootField(const char *name) {
  return *schema().root_table()->fields()->LookupByKey(name);
}

} // namespace

size_t mutateArtifact(uint8_t *data, size_t size, size_t maxSize,
                      unsigned seed) {
  uint32_t n = 0;
  if (size >= 8)
    std::memcpy(&n, data, 4);
  if (seed % 8 == 0 || size < 8 || n < 8 || n > size - 4 ||
      !verified(data, size_t(n) + 4))
    return LLVMFuzzerMutate(data, size, maxSize);

  size_t meta = 4 + size_t(n);
  std::vector<uint8_t> buf(data, data + meta);
  const reflection::Field &weightsOffset = rootField("weights_offset");
  const reflection::Field &checksum = rootField("metadata_crc32");
  uint64_t oldWeights = flatbuffers::GetAnyFieldI(
      *flatbuffers::GetAnySizePrefixedRoot(buf.data()), weightsOffset);

  Mutator mutator(buf, seed);
  mutator.room = maxSize > size + 64 ? maxSize - size - 64 : 0;
  mutator.mutate();

  // The weights segment follows the metadata by a multiple of 64 bytes, as
  // weights_offset must stay aligned.
  int64_t grown = static_cast<int64_t>(buf.size() - meta);
  int64_t moved = grown + ((-grown) % 64 + 64) % 64;
  size_t tail = size - meta;
  size_t out = meta + moved + tail;
  if (out > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  // Sized and signed again, as a forger would, so that the checks behind
  // the checksum run. The last mutation may have broken what overlapping
  // objects shared (see mutate()): then only the size is written.
  flatbuffers::WriteScalar<uoffset_t>(buf.data(),
                                      static_cast<uoffset_t>(buf.size() - 4));
  if (verified(buf.data(), buf.size())) {
    flatbuffers::Table *root = flatbuffers::GetAnySizePrefixedRoot(buf.data());
    if (oldWeights >= meta &&
        static_cast<uint64_t>(flatbuffers::GetAnyFieldI(*root, weightsOffset)) ==
            oldWeights)
      flatbuffers::SetAnyFieldI(root, weightsOffset,
                                static_cast<int64_t>(oldWeights + moved));
    if (uint8_t *crc = root->GetAddressOf(checksum.offset())) {
      std::memset(crc, 0, 4);
      uint32_t value = mnemo::rt::crc32(0, buf.data() + 4, buf.size() - 4);
      std::memcpy(crc, &value, 4);
    }
  }

  std::memmove(data + out - tail, data + meta, tail);
  std::memcpy(data, buf.data(), buf.size());
  std::memset(data + buf.size(), 0, out - tail - buf.size());
  // A quarter of the results get byte mutations on top, which reach the
  // verifier's own checks from a changed structure.
  if (seed % 4 == 1)
    return LLVMFuzzerMutate(data, out, maxSize);
  return out;
}

} // namespace mnemo::fuzz
