//===- ArtifactWriter.cpp - writes .mnemo artifacts -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Artifact/ArtifactWriter.h"

#include "artifact_generated.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include <cstring>

using namespace mlir;
using namespace mlir::mnemo;
namespace fb = ::mnemo::artifact;

namespace {

/// Bumped on any change a runtime built earlier cannot read (2: GPU plans
/// as tables instead of text in the PTX).
constexpr uint32_t kAbiVersion = 3;
constexpr uint64_t kAlignment = 64;

std::optional<fb::DType> dtypeOf(Type t) {
  if (t.isF32())
    return fb::DType::F32;
  if (t.isF16())
    return fb::DType::F16;
  if (t.isBF16())
    return fb::DType::BF16;
  if (t.isF64())
    return fb::DType::F64;
  if (t.isInteger(64))
    return fb::DType::I64;
  if (t.isInteger(32))
    return fb::DType::I32;
  if (t.isUnsignedInteger(8))
    return fb::DType::U8;
  if (t.isInteger(8))
    return fb::DType::I8;
  if (t.isInteger(1))
    return fb::DType::BOOL;
  if (isa<Float8E4M3FNType>(t))
    return fb::DType::F8_E4M3;
  return std::nullopt;
}

/// The raw little-endian bytes of a dense constant, splats expanded.
std::string rawBytes(DenseElementsAttr value) {
  ArrayRef<char> raw = value.getRawData();
  auto type = cast<ShapedType>(value.getType());
  if (!value.isSplat())
    return std::string(raw.begin(), raw.end());
  std::string bytes;
  bytes.reserve(raw.size() * type.getNumElements());
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    bytes.append(raw.begin(), raw.end());
  return bytes;
}

/// Writes GPU launch plans: the kernels they launch (one entry per name),
/// and each function's buffers, launches and outputs.
class GpuPlanWriter {
public:
  GpuPlanWriter(flatbuffers::FlatBufferBuilder &b,
                std::vector<flatbuffers::Offset<fb::Kernel>> &kernels)
      : b(b), kernels(kernels) {}

  /// Builds the vectors of a function's plan (before its table is
  /// started); a plan with a dynamic value is recorded as unsupported.
  LogicalResult build(Location loc, const GpuFunctionPlan &plan);
  /// Adds the last built plan to the function's table.
  void write(fb::FunctionBuilder &f);

private:
  FailureOr<uint32_t> kernelIndex(Location loc, const GpuLaunch &launch);

  flatbuffers::FlatBufferBuilder &b;
  std::vector<flatbuffers::Offset<fb::Kernel>> &kernels;
  llvm::StringMap<std::pair<uint32_t, size_t>> kernelOf; // index, params
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Buffer>>>
      buffers;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Launch>>>
      launches;
  flatbuffers::Offset<flatbuffers::Vector<uint32_t>> outputs;
  flatbuffers::Offset<flatbuffers::Vector<const fb::Expr *>> exprs;
  flatbuffers::Offset<flatbuffers::Vector<int32_t>> outputDimExprs;
  flatbuffers::Offset<flatbuffers::String> unsupported;
};

static_assert(static_cast<int>(fb::ExprOp::SELECT) ==
                  static_cast<int>(GpuExpr::Op::Select),
              "GpuExpr::Op mirrors the schema's ExprOp");

FailureOr<uint32_t> GpuPlanWriter::kernelIndex(Location loc,
                                               const GpuLaunch &launch) {
  auto [it, inserted] = kernelOf.try_emplace(
      launch.kernel, std::pair<uint32_t, size_t>(kernels.size(),
                                                 launch.args.size()));
  if (inserted)
    kernels.push_back(fb::CreateKernel(b, b.CreateString(launch.kernel),
                                       launch.args.size()));
  else if (it->second.second != launch.args.size())
    return emitError(loc) << "kernel '" << launch.kernel
                          << "' is launched with different argument counts";
  return it->second.first;
}

LogicalResult GpuPlanWriter::build(Location loc, const GpuFunctionPlan &plan) {
  buffers = {};
  launches = {};
  outputs = {};
  exprs = {};
  outputDimExprs = {};
  unsupported = {};
  if (!plan.unsupported.empty()) {
    unsupported = b.CreateString(plan.unsupported +
                                 "; compile it with --input-shape");
    return success();
  }
  std::vector<flatbuffers::Offset<fb::Buffer>> bufferList;
  for (const GpuBuffer &buffer : plan.buffers) {
    flatbuffers::Offset<fb::TensorMap> map;
    fb::BufferKind kind = fb::BufferKind::TEMPORARY;
    uint32_t index = 0;
    switch (buffer.kind) {
    case GpuBuffer::Kind::Input:
      kind = fb::BufferKind::INPUT;
      index = buffer.input;
      break;
    case GpuBuffer::Kind::Weight:
      kind = fb::BufferKind::WEIGHT;
      index = buffer.weight;
      break;
    case GpuBuffer::Kind::Temporary:
      break;
    case GpuBuffer::Kind::TensorMap: {
      kind = fb::BufferKind::TENSOR_MAP;
      const GpuTensorMap &m = buffer.map;
      fb::DType dtype = m.dtype == "bf16"     ? fb::DType::BF16
                        : m.dtype == "f16"    ? fb::DType::F16
                        : m.dtype == "f8e4m3" ? fb::DType::F8_E4M3
                                              : fb::DType::F32;
      // Dynamic dims and strides: 0 and their expression.
      auto split = [&](const std::vector<GpuSize> &sizes,
                       std::vector<uint64_t> &values,
                       std::vector<int32_t> &exprs) {
        for (const GpuSize &s : sizes) {
          values.push_back(s.isStatic() ? s.value : 0);
          exprs.push_back(s.expr);
        }
        bool dynamic = llvm::any_of(exprs, [](int32_t e) { return e >= 0; });
        return dynamic ? b.CreateVector(exprs)
                       : flatbuffers::Offset<flatbuffers::Vector<int32_t>>();
      };
      std::vector<uint64_t> dims, strides;
      std::vector<int32_t> dimExprs, strideExprs;
      auto dimsExprs = split(m.dims, dims, dimExprs);
      auto stridesExprs = split(m.strides, strides, strideExprs);
      std::vector<uint32_t> box(m.box.begin(), m.box.end());
      map = fb::CreateTensorMap(b, m.source, dtype, b.CreateVector(dims),
                                b.CreateVector(strides), b.CreateVector(box),
                                m.swizzle, dimsExprs, stridesExprs);
      break;
    }
    }
    // An input's bytes at a call are its bound tensor's.
    bufferList.push_back(fb::CreateBuffer(
        b, kind, index, buffer.bytes.isStatic() ? buffer.bytes.value : 0, map,
        kind == fb::BufferKind::INPUT ? -1 : buffer.bytes.expr));
  }
  std::vector<flatbuffers::Offset<fb::Launch>> launchList;
  for (const GpuLaunch &l : plan.launches) {
    FailureOr<uint32_t> kernel = kernelIndex(loc, l);
    if (failed(kernel))
      return failure();
    std::vector<fb::Argument> args;
    for (const GpuArgument &a : l.args) {
      if (a.kind == GpuArgument::Kind::Buffer) {
        args.emplace_back(fb::ArgumentKind::BUFFER, a.buffer);
        continue;
      }
      bool i32 = a.type == "i32";
      if (!a.value.isStatic()) {
        args.emplace_back(i32 ? fb::ArgumentKind::I32_EXPR
                              : fb::ArgumentKind::I64_EXPR,
                          static_cast<uint64_t>(a.value.expr));
        continue;
      }
      fb::ArgumentKind kind = a.type == "f32" ? fb::ArgumentKind::F32
                              : i32           ? fb::ArgumentKind::I32
                                              : fb::ArgumentKind::I64;
      args.emplace_back(kind, static_cast<uint64_t>(a.value.value));
    }
    std::vector<uint32_t> grid;
    std::vector<int32_t> gridExprs;
    for (const GpuSize &g : l.grid) {
      grid.push_back(g.isStatic() ? g.value : 0);
      gridExprs.push_back(g.expr);
    }
    bool dynamicGrid = llvm::any_of(l.grid, [](GpuSize g) {
      return !g.isStatic();
    });
    std::vector<uint32_t> block(l.block.begin(), l.block.end());
    launchList.push_back(fb::CreateLaunch(
        b, *kernel, b.CreateVector(grid), b.CreateVector(block), l.sharedBytes,
        b.CreateVectorOfStructs(args),
        dynamicGrid ? b.CreateVector(gridExprs) : 0, l.programmatic));
  }
  std::vector<uint32_t> outputList(plan.outputBuffers.begin(),
                                   plan.outputBuffers.end());
  std::vector<fb::Expr> exprList;
  for (const GpuExpr &e : plan.exprs)
    exprList.emplace_back(static_cast<fb::ExprOp>(e.op), e.a, e.b, e.c,
                          e.value);
  std::vector<int32_t> outputDims;
  for (const GpuTensor &t : plan.outputs)
    outputDims.insert(outputDims.end(), t.dimExprs.begin(), t.dimExprs.end());
  if (!exprList.empty()) {
    exprs = b.CreateVectorOfStructs(exprList);
    if (llvm::any_of(outputDims, [](int32_t e) { return e >= 0; }))
      outputDimExprs = b.CreateVector(outputDims);
  }
  buffers = b.CreateVector(bufferList);
  launches = b.CreateVector(launchList);
  outputs = b.CreateVector(outputList);
  return success();
}

void GpuPlanWriter::write(fb::FunctionBuilder &f) {
  if (!unsupported.IsNull()) {
    f.add_unsupported(unsupported);
    return;
  }
  f.add_buffers(buffers);
  f.add_launches(launches);
  f.add_output_buffers(outputs);
  if (!exprs.IsNull())
    f.add_exprs(exprs);
  if (!outputDimExprs.IsNull())
    f.add_output_dim_exprs(outputDimExprs);
}

} // namespace

namespace {

/// Lays out the weights segment: each weight 64-byte aligned, except those
/// read from a weight source (`sources[i]` > 0), which keep their offset in
/// that file.
struct Segment {
  std::string bytes;
  SmallVector<uint64_t> offsets;
  SmallVector<uint32_t> sources; // per weight: 0, or weight source + 1
  /// The weight sources: recorded path, size, CRC-32.
  struct Source {
    std::string path;
    uint64_t size;
    uint32_t crc;
  };
  std::vector<Source> files;
};

/// The weight sources' files, mapped, their records, and where each tensor
/// of each lies.
struct SourceIndex {
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> buffers;
  std::vector<Segment::Source> files;
  /// Tensor size in bytes -> (source, offset) of every tensor that size.
  llvm::DenseMap<uint64_t, SmallVector<std::pair<uint32_t, uint64_t>>> bySize;
};

FailureOr<SourceIndex> indexSources(Location loc,
                                    ArrayRef<WeightSourceFile> sources) {
  SourceIndex index;
  for (auto [i, source] : llvm::enumerate(sources)) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(source.path, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
    if (!buffer)
      return emitError(loc) << source.path << ": cannot read the weight "
                            << "source: " << buffer.getError().message();
    llvm::StringRef bytes = (*buffer)->getBuffer();
    index.files.push_back(
        {source.recordedPath, bytes.size(),
         llvm::crc32(llvm::ArrayRef<uint8_t>(
             reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()))});
    for (auto [offset, size] : source.tensors)
      if (size > 0 && offset <= bytes.size() && size <= bytes.size() - offset)
        index.bySize[size].push_back({uint32_t(i), offset});
    index.buffers.push_back(std::move(*buffer));
  }
  return index;
}

Segment layoutWeights(ArrayRef<ArtifactWeight> weights,
                      const SourceIndex &index) {
  Segment segment;
  segment.files = index.files;
  for (const ArtifactWeight &w : weights) {
    ArrayRef<char> raw = w.value.getRawData();
    unsigned elementBytes = llvm::divideCeil(
        cast<ShapedType>(w.value.getType()).getElementTypeBitWidth(), 8);
    // A tensor of a weight source with the same bytes, aligned for its
    // element type: read from there in place.
    const std::pair<uint32_t, uint64_t> *match = nullptr;
    if (!w.value.isSplat())
      if (auto it = index.bySize.find(raw.size()); it != index.bySize.end())
        for (const auto &candidate : it->second)
          if (candidate.second % elementBytes == 0 &&
              std::memcmp(
                  index.buffers[candidate.first]->getBufferStart() +
                      candidate.second,
                  raw.data(), raw.size()) == 0) {
            match = &candidate;
            break;
          }
    if (match) {
      segment.offsets.push_back(match->second);
      segment.sources.push_back(match->first + 1);
      continue;
    }
    segment.bytes.resize(llvm::alignTo(segment.bytes.size(), kAlignment), '\0');
    segment.offsets.push_back(segment.bytes.size());
    segment.sources.push_back(0);
    segment.bytes += rawBytes(w.value);
  }
  return segment;
}

/// Sets Artifact.metadata_crc32: the CRC-32 of the FlatBuffer (after the
/// size prefix) computed with the field's own bytes as zeros.
void sealChecksum(flatbuffers::DetachedBuffer &buffer) {
  uint8_t *data = buffer.data();
  const auto *root = flatbuffers::GetSizePrefixedRoot<fb::Artifact>(data);
  auto *field = const_cast<uint8_t *>(
      reinterpret_cast<const flatbuffers::Table *>(root)->GetAddressOf(
          fb::Artifact::VT_METADATA_CRC32));
  std::memset(field, 0, 4);
  uint32_t crc = llvm::crc32(llvm::ArrayRef<uint8_t>(data + 4, buffer.size() - 4));
  llvm::support::endian::write32le(field, crc);
}

/// Builds the FlatBuffer for a weights segment at file offset
/// `segmentOffset`. The encoding's size does not depend on that value.
FailureOr<flatbuffers::DetachedBuffer>
buildFlatBuffer(Location loc, const ArtifactContents &contents,
                const Segment &segment, uint64_t segmentOffset,
                llvm::StringRef weightsFileName) {
  flatbuffers::FlatBufferBuilder b(1 << 16);
  auto tensorSig = [&](const ArtifactTensor &t)
      -> FailureOr<flatbuffers::Offset<fb::TensorSig>> {
    std::optional<fb::DType> dtype = dtypeOf(t.elementType);
    if (!dtype)
      return emitError(loc) << "tensor '" << t.name << "' has element type "
                            << t.elementType
                            << ", which artifacts cannot carry";
    auto name = b.CreateString(t.name);
    auto shape = b.CreateVector(t.shape.data(), t.shape.size());
    auto maxShape = b.CreateVector(t.maxShape.data(), t.maxShape.size());
    return fb::CreateTensorSig(b, name, *dtype, shape, maxShape, t.inPlace,
                               t.kvWindow, t.kvEvery, t.kvLast);
  };

  std::vector<flatbuffers::Offset<fb::Weight>> weights;
  for (auto [w, offset, source] :
       llvm::zip(contents.weights, segment.offsets, segment.sources)) {
    auto type = cast<ShapedType>(w.value.getType());
    std::optional<fb::DType> dtype = dtypeOf(type.getElementType());
    if (!dtype)
      return emitError(loc) << "weight '" << w.name << "' has element type "
                            << type.getElementType()
                            << ", which artifacts cannot carry";
    auto name = b.CreateString(w.name);
    auto shape = b.CreateVector(type.getShape().data(), type.getShape().size());
    uint64_t size = type.getNumElements() *
                    llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    weights.push_back(
        fb::CreateWeight(b, name, *dtype, shape, offset, size, source,
                         w.replaceable));
  }

  std::vector<flatbuffers::Offset<fb::Kernel>> kernels;
  std::vector<flatbuffers::Offset<fb::Function>> functions;
  GpuPlanWriter gpuPlans(b, kernels);
  for (const ArtifactFunction &f : contents.functions) {
    std::vector<flatbuffers::Offset<fb::TensorSig>> inputs, outputs;
    for (const ArtifactTensor &t : f.inputs) {
      FailureOr<flatbuffers::Offset<fb::TensorSig>> sig = tensorSig(t);
      if (failed(sig))
        return failure();
      inputs.push_back(*sig);
    }
    for (const ArtifactTensor &t : f.outputs) {
      FailureOr<flatbuffers::Offset<fb::TensorSig>> sig = tensorSig(t);
      if (failed(sig))
        return failure();
      outputs.push_back(*sig);
    }
    auto name = b.CreateString(f.name);
    auto inputsVec = b.CreateVector(inputs);
    auto outputsVec = b.CreateVector(outputs);
    if (contents.ptx) {
      const GpuFunctionPlan *plan = nullptr;
      for (const GpuFunctionPlan &p : contents.gpuPlans)
        if (p.name == f.name)
          plan = &p;
      if (!plan)
        return emitError(loc) << "internal error: no launch plan for '"
                              << f.name << "'";
      if (failed(gpuPlans.build(loc, *plan)))
        return failure();
      fb::FunctionBuilder fn(b);
      fn.add_name(name);
      fn.add_inputs(inputsVec);
      fn.add_outputs(outputsVec);
      gpuPlans.write(fn);
      functions.push_back(fn.Finish());
      continue;
    }
    uint32_t numArgs = f.inputs.size() + f.weights.size();
    uint32_t numResults = f.outputs.size();
    // Descriptor ranks: the inputs, then the weights, then the outputs.
    std::vector<uint32_t> argRanks, resultRanks;
    for (const ArtifactTensor &t : f.inputs)
      argRanks.push_back(t.shape.size());
    for (unsigned w : f.weights)
      argRanks.push_back(
          cast<ShapedType>(contents.weights[w].value.getType()).getRank());
    for (const ArtifactTensor &t : f.outputs)
      resultRanks.push_back(t.shape.size());
    auto symbol = b.CreateString(f.kernelSymbol);
    auto argRanksVec = b.CreateVector(argRanks);
    auto resultRanksVec = b.CreateVector(resultRanks);
    uint32_t kernelIndex = kernels.size();
    kernels.push_back(fb::CreateKernel(b, symbol, numArgs, numResults,
                                       argRanksVec, resultRanksVec));
    // The plan: one call over every input and weight slot, defining the
    // output slots that follow them.
    std::vector<uint32_t> args, results;
    for (uint32_t i = 0; i < numArgs; ++i)
      args.push_back(i);
    for (uint32_t i = 0; i < numResults; ++i)
      results.push_back(numArgs + i);
    auto argsVec = b.CreateVector(args);
    auto resultsVec = b.CreateVector(results);
    auto call = fb::CreateCall(b, kernelIndex, argsVec, resultsVec);
    auto calls = b.CreateVector(std::vector{call});
    auto weightsVec = b.CreateVector(f.weights.data(), f.weights.size());
    auto outputSlots = b.CreateVector(results);
    functions.push_back(fb::CreateFunction(b, name, inputsVec, outputsVec,
                                           weightsVec, calls, outputSlots));
  }

  auto triple = b.CreateString(contents.triple);
  auto cpu = b.CreateString(contents.cpu);
  auto features = b.CreateString(contents.features);
  auto target = fb::CreateTarget(b, triple, cpu, features);
  auto code = b.CreateVector(
      reinterpret_cast<const uint8_t *>(contents.code.data()),
      contents.code.size());
  auto kernelsVec = b.CreateVector(kernels);
  auto functionsVec = b.CreateVector(functions);
  auto weightsVec = b.CreateVector(weights);
  auto weightsFile = b.CreateString(weightsFileName.str());
  auto compiler = b.CreateString(contents.compiler);
  auto source = b.CreateString(contents.source);
  auto hash = b.CreateString(contents.sourceHash);
  auto provenance = fb::CreateProvenance(b, compiler, source, hash);
  auto profilePoints = b.CreateVectorOfStrings(contents.profilePoints);
  std::vector<flatbuffers::Offset<fb::WeightSource>> sourceTables;
  for (const Segment::Source &f : segment.files)
    sourceTables.push_back(fb::CreateWeightSource(
        b, b.CreateString(f.path), f.size, f.crc));
  auto weightSources =
      sourceTables.empty() ? 0 : b.CreateVector(sourceTables);
  std::vector<flatbuffers::Offset<fb::GpuBinary>> binaryTables;
  for (const ArtifactContents::GpuBinary &g : contents.gpuBinaries) {
    auto chip = b.CreateString(g.chip);
    // The driver reads the ELF image in place: aligned like the weights.
    b.ForceVectorAlignment(g.image.size(), sizeof(uint8_t), 64);
    auto image = b.CreateVector(
        reinterpret_cast<const uint8_t *>(g.image.data()), g.image.size());
    binaryTables.push_back(fb::CreateGpuBinary(b, chip, image));
  }
  auto gpuBinaries = binaryTables.empty() ? 0 : b.CreateVector(binaryTables);
  // The checksum is patched in once the bytes are final; any value other
  // than null reserves the field.
  auto root = fb::CreateArtifact(
      b, kAbiVersion, target,
      contents.ptx ? fb::CodeFormat::PTX : fb::CodeFormat::ELF_SHARED_OBJECT,
      code, kernelsVec, functionsVec, weightsVec, weightsFile, segmentOffset,
      segment.bytes.size(), provenance,
      /*metadata_crc32=*/~uint32_t(0), profilePoints, weightSources,
      gpuBinaries);
  b.FinishSizePrefixed(root, fb::ArtifactIdentifier());
  flatbuffers::DetachedBuffer buffer = b.Release();
  sealChecksum(buffer);
  return buffer;
}

} // namespace

LogicalResult mlir::mnemo::writeArtifact(Location loc,
                                         const ArtifactContents &contents,
                                         llvm::raw_ostream &os,
                                         const SideWeights *side,
                                         ArrayRef<WeightSourceFile> sources,
                                         WeightPlacement *placement) {
  FailureOr<SourceIndex> index = indexSources(loc, sources);
  if (failed(index))
    return failure();
  Segment segment = layoutWeights(contents.weights, *index);
  if (placement)
    for (auto [w, source] : llvm::zip(contents.weights, segment.sources)) {
      auto type = cast<ShapedType>(w.value.getType());
      uint64_t bytes = type.getNumElements() *
                       llvm::divideCeil(type.getElementTypeBitWidth(), 8);
      if (source) {
        ++placement->referenced;
        placement->referencedBytes += bytes;
      } else {
        ++placement->embedded;
        placement->embeddedBytes += bytes;
      }
    }
  if (side) {
    // The segment starts the side file; nothing to measure.
    FailureOr<flatbuffers::DetachedBuffer> buffer =
        buildFlatBuffer(loc, contents, segment, 0, side->name);
    if (failed(buffer))
      return failure();
    os.write(reinterpret_cast<const char *>(buffer->data()), buffer->size());
    side->os << segment.bytes;
    return success();
  }
  // Measure with a placeholder offset, then build with the real one; the
  // offset is a fixed-width field present in both, so the sizes agree.
  FailureOr<flatbuffers::DetachedBuffer> probe =
      buildFlatBuffer(loc, contents, segment, ~uint64_t(0), "");
  if (failed(probe))
    return failure();
  uint64_t segmentOffset = llvm::alignTo(probe->size(), kAlignment);
  FailureOr<flatbuffers::DetachedBuffer> buffer =
      buildFlatBuffer(loc, contents, segment, segmentOffset, "");
  if (failed(buffer) || buffer->size() != probe->size())
    return emitError(loc) << "internal error: artifact layout changed size";
  os.write(reinterpret_cast<const char *>(buffer->data()), buffer->size());
  os.write_zeros(segmentOffset - buffer->size());
  os << segment.bytes;
  return success();
}
