//===- ONNXMutator.cpp - structure-aware mutation of ONNX models -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each call parses the model, applies one to four mutations chosen among
// the model-level ones below and a reflective one (any field of any message
// in the model), and serializes the result. Names, op types, domains and
// opset versions come from pools: the model's own value names, and the
// operators that the importer's registry lists (setOperatorVocabulary), so
// that a mutated node usually names a real handler and real tensors.
//
//===----------------------------------------------------------------------===//

#include "ONNXMutator.h"
#include "IntegerSteps.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

// libFuzzer's own byte mutation, for inputs that are not models.
extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size,
                                   size_t maxSize);

namespace mnemo::fuzz {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

std::vector<Operator> &vocabulary() {
  static std::vector<Operator> ops;
  return ops;
}

class Mutator {
public:
  Mutator(onnx::ModelProto &model, unsigned seed) : model(model), rng(seed) {
    collectNames();
  }

  void mutate() {
    unsigned count = 1 + below(4);
    for (unsigned i = 0; i < count; ++i) {
      switch (below(10)) {
      case 0:
        mutateDim();
        break;
      case 1:
        mutateElementType();
        break;
      case 2:
        mutateAttribute();
        break;
      case 3:
        mutateOperator();
        break;
      case 4:
        mutateOpset();
        break;
      case 5:
        mutateInitializer();
        break;
      case 6:
        mutateEdge();
        break;
      case 7:
        mutateNodeList();
        break;
      default:
        mutateAnyField();
        break;
      }
    }
  }

private:
  onnx::ModelProto &model;
  std::minstd_rand rng;
  std::vector<std::string> names;

  size_t below(size_t n) { return n == 0 ? 0 : rng() % n; }
  bool coin() { return rng() & 1; }

  template <typename T> T &pickOf(T *items, size_t n) {
    return items[below(n)];
  }

  void collectNames() {
    const onnx::GraphProto &g = model.graph();
    for (const auto &v : g.input())
      names.push_back(v.name());
    for (const auto &v : g.output())
      names.push_back(v.name());
    for (const auto &t : g.initializer())
      names.push_back(t.name());
    for (const auto &n : g.node())
      for (const auto &o : n.output())
        names.push_back(o);
    names.push_back("");
  }

  const std::string &someName() { return names[below(names.size())]; }

  int64_t interestingInt(int64_t v) {
    static constexpr int64_t special[] = {
        0, 1, -1, 2, 3, 4, 7, 8, 16, 17, 31, 32, 33, 64, 128, 1024,
        std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(),
        std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
    switch (below(5)) {
    case 0:
      return applyStep(v, IntegerStep::Next);
    case 1:
      return applyStep(v, IntegerStep::Previous);
    case 2:
      return applyStep(v, IntegerStep::Negate);
    case 3:
      return applyStep(v, IntegerStep::Double);
    default:
      return special[below(std::size(special))];
    }
  }

  double interestingFloat(double v) {
    static constexpr double special[] = {
        0.0, -0.0, 1.0, -1.0, 0.5, 1e-6, 1e30, -1e30,
        std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()};
    return coin() ? v * (coin() ? 2.0 : -0.5) : special[below(std::size(special))];
  }

  /// Every value info of the graph: inputs, outputs, intermediates.
  std::vector<onnx::ValueInfoProto *> valueInfos() {
    std::vector<onnx::ValueInfoProto *> all;
    onnx::GraphProto *g = model.mutable_graph();
    for (auto &v : *g->mutable_input())
      all.push_back(&v);
    for (auto &v : *g->mutable_output())
      all.push_back(&v);
    for (auto &v : *g->mutable_value_info())
      all.push_back(&v);
    return all;
  }

  void mutateDim() {
    auto infos = valueInfos();
    if (infos.empty())
      return;
    onnx::TypeProto_Tensor *tensor =
        infos[below(infos.size())]->mutable_type()->mutable_tensor_type();
    onnx::TensorShapeProto *shape = tensor->mutable_shape();
    switch (below(4)) {
    case 0: // Another value, or a symbol.
      if (shape->dim_size() > 0) {
        onnx::TensorShapeProto_Dimension *d =
            shape->mutable_dim(below(shape->dim_size()));
        if (coin())
          d->set_dim_value(interestingInt(d->dim_value()));
        else
          d->set_dim_param(coin() ? "batch" : "sequence");
      }
      break;
    case 1: // One more dim.
      shape->add_dim()->set_dim_value(1 + below(8));
      break;
    case 2: // One fewer.
      if (shape->dim_size() > 0)
        shape->mutable_dim()->RemoveLast();
      break;
    default: // No shape at all.
      tensor->clear_shape();
      break;
    }
  }

  int32_t someElementType() {
    // Valid types most of the time, and an undefined one now and then.
    return coin() ? static_cast<int32_t>(1 + below(23))
                  : static_cast<int32_t>(below(40)) - 2;
  }

  void mutateElementType() {
    onnx::GraphProto *g = model.mutable_graph();
    if (coin() && g->initializer_size() > 0) {
      g->mutable_initializer(below(g->initializer_size()))
          ->set_data_type(someElementType());
      return;
    }
    auto infos = valueInfos();
    if (!infos.empty())
      infos[below(infos.size())]
          ->mutable_type()
          ->mutable_tensor_type()
          ->set_elem_type(someElementType());
  }

  onnx::NodeProto *someNode() {
    onnx::GraphProto *g = model.mutable_graph();
    return g->node_size() ? g->mutable_node(below(g->node_size())) : nullptr;
  }

  void mutateAttribute() {
    onnx::NodeProto *node = someNode();
    if (!node)
      return;
    static const char *const commonNames[] = {
        "axis",     "axes",      "perm",        "transA",     "transB",
        "alpha",    "beta",      "epsilon",     "keepdims",   "to",
        "value",    "mode",      "scale",       "num_heads",  "kv_num_heads",
        "is_causal", "softcap",  "q_num_heads", "interleaved", "rotary_embedding_dim",
        "split",    "upper",     "starts",      "ends",       "do_rotary",
        "local_window_size", "unidirectional", "noop_with_empty_axes",
        "stash_type", "qk_matmul_output_mode"};
    if (node->attribute_size() == 0 || below(4) == 0) {
      onnx::AttributeProto *a = node->add_attribute();
      a->set_name(commonNames[below(std::size(commonNames))]);
      if (coin()) {
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(interestingInt(0));
      } else {
        a->set_type(onnx::AttributeProto::INTS);
        for (size_t i = 0, n = below(5); i < n; ++i)
          a->add_ints(interestingInt(static_cast<int64_t>(i)));
      }
      return;
    }
    onnx::AttributeProto *a =
        node->mutable_attribute(below(node->attribute_size()));
    switch (below(6)) {
    case 0:
      a->set_i(interestingInt(a->i()));
      break;
    case 1:
      a->set_f(static_cast<float>(interestingFloat(a->f())));
      break;
    case 2:
      if (a->ints_size() > 0) {
        int idx = static_cast<int>(below(a->ints_size()));
        a->set_ints(idx, interestingInt(a->ints(idx)));
      } else {
        a->add_ints(interestingInt(0));
      }
      break;
    case 3:
      if (a->ints_size() > 0 && coin())
        a->mutable_ints()->RemoveLast();
      else
        a->add_ints(interestingInt(static_cast<int64_t>(a->ints_size())));
      break;
    case 4: // The same name with another type.
      a->set_type(static_cast<onnx::AttributeProto::AttributeType>(
          below(15)));
      break;
    default:
      node->mutable_attribute()->DeleteSubrange(
          static_cast<int>(below(node->attribute_size())), 1);
      break;
    }
  }

  void mutateOperator() {
    onnx::NodeProto *node = someNode();
    const std::vector<Operator> &ops = vocabulary();
    if (!node || ops.empty())
      return;
    const Operator &op = ops[below(ops.size())];
    node->set_op_type(op.opType);
    if (below(4) != 0) {
      node->set_domain(op.domain);
      return;
    }
    static const char *const domains[] = {"", "ai.onnx", "com.microsoft",
                                          "ai.onnx.ml", "org.example"};
    node->set_domain(domains[below(std::size(domains))]);
  }

  void mutateOpset() {
    switch (below(4)) {
    case 0: { // An operator's own since-version, so that it applies.
      const std::vector<Operator> &ops = vocabulary();
      if (ops.empty() || model.opset_import_size() == 0)
        return;
      const Operator &op = ops[below(ops.size())];
      onnx::OperatorSetIdProto *id =
          model.mutable_opset_import(below(model.opset_import_size()));
      id->set_domain(op.domain);
      id->set_version(op.since);
      return;
    }
    case 1:
      if (model.opset_import_size() > 0) {
        onnx::OperatorSetIdProto *id =
            model.mutable_opset_import(below(model.opset_import_size()));
        id->set_version(coin() ? static_cast<int64_t>(below(28))
                               : interestingInt(id->version()));
      }
      return;
    case 2: {
      onnx::OperatorSetIdProto *id = model.add_opset_import();
      id->set_domain(coin() ? "com.microsoft" : "");
      id->set_version(1 + below(26));
      return;
    }
    default:
      if (model.opset_import_size() > 0)
        model.mutable_opset_import()->DeleteSubrange(
            static_cast<int>(below(model.opset_import_size())), 1);
      else
        model.set_ir_version(interestingInt(model.ir_version()));
      return;
    }
  }

  void mutateInitializer() {
    onnx::GraphProto *g = model.mutable_graph();
    if (g->initializer_size() == 0)
      return;
    onnx::TensorProto *t = g->mutable_initializer(below(g->initializer_size()));
    switch (below(6)) {
    case 0: // Dims that disagree with the data, or agree with other data.
      if (t->dims_size() > 0 && coin()) {
        int idx = static_cast<int>(below(t->dims_size()));
        t->set_dims(idx, interestingInt(t->dims(idx)));
      } else if (coin()) {
        t->add_dims(1 + below(4));
      } else if (t->dims_size() > 0) {
        t->mutable_dims()->RemoveLast();
      }
      break;
    case 1: { // Raw data cut or grown.
      std::string *raw = t->mutable_raw_data();
      if (!raw->empty() && coin())
        raw->resize(below(raw->size()));
      else
        raw->append(1 + below(16), static_cast<char>(rng()));
      break;
    }
    case 2: // Raw data flipped, for the folders and raisers.
      if (!t->raw_data().empty()) {
        std::string *raw = t->mutable_raw_data();
        (*raw)[below(raw->size())] = static_cast<char>(rng());
      }
      break;
    case 3: // Typed fields instead of raw data.
      t->clear_raw_data();
      for (size_t i = 0, n = below(9); i < n; ++i) {
        if (coin())
          t->add_float_data(static_cast<float>(interestingFloat(1.0)));
        else
          t->add_int64_data(interestingInt(static_cast<int64_t>(i)));
      }
      break;
    case 4: { // Moved to the external data file beside the model.
      t->clear_raw_data();
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      t->clear_external_data();
      auto add = [&](const char *key, const std::string &value) {
        onnx::StringStringEntryProto *e = t->add_external_data();
        e->set_key(key);
        e->set_value(value);
      };
      add("location", below(8) ? kExternalDataFile : "../weights.bin");
      if (coin())
        add("offset", std::to_string(coin() ? below(kExternalDataSize)
                                            : interestingInt(4096)));
      if (coin())
        add("length", std::to_string(coin() ? below(kExternalDataSize)
                                            : interestingInt(64)));
      break;
    }
    default: // Renamed to shadow an input, or duplicated.
      if (coin())
        t->set_name(someName());
      else
        *g->add_initializer() = *t;
      break;
    }
  }

  void mutateEdge() {
    onnx::NodeProto *node = someNode();
    if (!node)
      return;
    switch (below(5)) {
    case 0:
      if (node->input_size() > 0) {
        node->set_input(static_cast<int>(below(node->input_size())),
                        someName());
        break;
      }
      [[fallthrough]];
    case 1:
      node->add_input(someName());
      break;
    case 2:
      if (node->input_size() > 0)
        node->mutable_input()->RemoveLast();
      break;
    case 3:
      if (node->output_size() > 0)
        node->set_output(static_cast<int>(below(node->output_size())),
                         someName());
      break;
    default: {
      onnx::GraphProto *g = model.mutable_graph();
      if (g->output_size() > 0)
        g->mutable_output(below(g->output_size()))->set_name(someName());
      break;
    }
    }
  }

  void mutateNodeList() {
    onnx::GraphProto *g = model.mutable_graph();
    if (g->node_size() == 0)
      return;
    int i = static_cast<int>(below(g->node_size()));
    int j = static_cast<int>(below(g->node_size()));
    switch (below(3)) {
    case 0:
      g->mutable_node()->DeleteSubrange(i, 1);
      break;
    case 1: // Out of topological order.
      g->mutable_node()->SwapElements(i, j);
      break;
    default:
      *g->add_node() = g->node(i);
      break;
    }
  }

  /// A random message in the model, found by a random walk from the root.
  Message *someMessage() {
    Message *m = &model;
    for (unsigned depth = 0; depth < 8 && coin(); ++depth) {
      const Reflection *r = m->GetReflection();
      std::vector<std::pair<const FieldDescriptor *, int>> children;
      const google::protobuf::Descriptor *d = m->GetDescriptor();
      for (int f = 0; f < d->field_count(); ++f) {
        const FieldDescriptor *field = d->field(f);
        if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE)
          continue;
        if (field->is_repeated()) {
          for (int k = 0, n = r->FieldSize(*m, field); k < n; ++k)
            children.push_back({field, k});
        } else if (r->HasField(*m, field)) {
          children.push_back({field, -1});
        }
      }
      if (children.empty())
        break;
      auto [field, index] = children[below(children.size())];
      m = index < 0 ? r->MutableMessage(m, field)
                    : r->MutableRepeatedMessage(m, field, index);
    }
    return m;
  }

  std::string someString(const std::string &old) {
    switch (below(4)) {
    case 0:
      return someName();
    case 1: {
      const std::vector<Operator> &ops = vocabulary();
      return ops.empty() ? old : ops[below(ops.size())].opType;
    }
    case 2:
      return old.empty() ? old : old.substr(0, below(old.size()));
    default:
      return old + static_cast<char>('a' + below(26));
    }
  }

  /// Sets, changes, adds or removes one field of a random message.
  void mutateAnyField() {
    Message *m = someMessage();
    const google::protobuf::Descriptor *d = m->GetDescriptor();
    if (d->field_count() == 0)
      return;
    const FieldDescriptor *field = d->field(below(d->field_count()));
    const Reflection *r = m->GetReflection();
    if (field->is_repeated()) {
      int n = r->FieldSize(*m, field);
      if (n > 0 && coin()) {
        if (coin())
          r->RemoveLast(m, field);
        else
          r->SwapElements(m, field, below(n), below(n));
        return;
      }
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        Message *added = r->AddMessage(m, field);
        if (n > 0)
          added->CopyFrom(r->GetRepeatedMessage(*m, field, below(n)));
        return;
      }
    }
    switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64: {
      int64_t v = interestingInt(static_cast<int64_t>(rng() % 64));
      if (field->is_repeated()) {
        if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT32)
          r->AddInt32(m, field, static_cast<int32_t>(v));
        else if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT64)
          r->AddInt64(m, field, v);
        else if (field->cpp_type() == FieldDescriptor::CPPTYPE_UINT32)
          r->AddUInt32(m, field, static_cast<uint32_t>(v));
        else
          r->AddUInt64(m, field, static_cast<uint64_t>(v));
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT32) {
        r->SetInt32(m, field, static_cast<int32_t>(v));
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT64) {
        r->SetInt64(m, field, v);
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_UINT32) {
        r->SetUInt32(m, field, static_cast<uint32_t>(v));
      } else {
        r->SetUInt64(m, field, static_cast<uint64_t>(v));
      }
      return;
    }
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      double v = interestingFloat(1.0);
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT)
        field->is_repeated() ? r->AddFloat(m, field, static_cast<float>(v))
                             : r->SetFloat(m, field, static_cast<float>(v));
      else
        field->is_repeated() ? r->AddDouble(m, field, v)
                             : r->SetDouble(m, field, v);
      return;
    }
    case FieldDescriptor::CPPTYPE_BOOL:
      field->is_repeated() ? r->AddBool(m, field, coin())
                           : r->SetBool(m, field, !r->GetBool(*m, field));
      return;
    case FieldDescriptor::CPPTYPE_ENUM: {
      const google::protobuf::EnumDescriptor *e = field->enum_type();
      int v = e->value(below(e->value_count()))->number();
      field->is_repeated() ? r->AddEnumValue(m, field, v)
                           : r->SetEnumValue(m, field, v);
      return;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      if (field->is_repeated()) {
        r->AddString(m, field, someName());
        return;
      }
      std::string old = r->GetString(*m, field);
      r->SetString(m, field, someString(old));
      return;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      if (r->HasField(*m, field) && below(4) == 0)
        r->ClearField(m, field);
      else
        r->MutableMessage(m, field);
      return;
    }
  }
};

size_t serializeInto(const onnx::ModelProto &model, uint8_t *data,
                     size_t maxSize) {
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > maxSize)
    return 0;
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}

} // namespace

void setOperatorVocabulary(std::vector<Operator> ops) {
  vocabulary() = std::move(ops);
}

size_t mutateModel(uint8_t *data, size_t size, size_t maxSize,
                   unsigned seed) {
  onnx::ModelProto model;
  // One mutation in sixteen stays at the byte level, so the parser itself
  // and the paths of damaged protobuf keep being exercised.
  if (seed % 16 == 0 || !model.ParseFromArray(data, static_cast<int>(size)))
    return LLVMFuzzerMutate(data, size, maxSize);
  Mutator(model, seed).mutate();
  size_t written = serializeInto(model, data, maxSize);
  return written ? written : LLVMFuzzerMutate(data, size, maxSize);
}

size_t crossOverModels(const uint8_t *a, size_t sizeA, const uint8_t *b,
                       size_t sizeB, uint8_t *out, size_t maxSize,
                       unsigned seed) {
  onnx::ModelProto first, second;
  if (!first.ParseFromArray(a, static_cast<int>(sizeA)) ||
      !second.ParseFromArray(b, static_cast<int>(sizeB)))
    return 0;
  std::minstd_rand rng(seed);
  onnx::GraphProto *g = first.mutable_graph();
  const onnx::GraphProto &other = second.graph();
  // A run of the other graph's nodes, with what they read.
  if (other.node_size() > 0) {
    int begin = static_cast<int>(rng() % other.node_size());
    int end = std::min(other.node_size(), begin + 1 + static_cast<int>(rng() % 8));
    for (int i = begin; i < end; ++i)
      *g->add_node() = other.node(i);
  }
  for (const auto &t : other.initializer())
    if (rng() % 2)
      *g->add_initializer() = t;
  for (const auto &v : other.input())
    if (rng() % 2)
      *g->add_input() = v;
  for (const auto &opset : second.opset_import())
    *first.add_opset_import() = opset;
  return serializeInto(first, out, maxSize);
}

} // namespace mnemo::fuzz
