//===- Compiler.cpp - the mnemoc driver library -----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Compiler/Compiler.h"

#include "mnemo/Artifact/ArtifactWriter.h"
#include "mnemo/Artifact/CodeObjectABI.h"
#include "mnemo/Artifact/OutlineWeights.h"
#include "dialects/Mnemo/IR/MnemoDialect.h"
#include "mnemo/Pipelines/Pipelines.h"
#include "mnemo/Target/TargetBackend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>

using namespace mlir;
using namespace mlir::mnemo;

namespace {

constexpr llvm::StringLiteral kNameAttr = "mnemo.name";
constexpr llvm::StringLiteral kDimKindsAttr = "mnemo.dim_kinds";
constexpr llvm::StringLiteral kInPlaceAttr = "mnemo.in_place";
constexpr llvm::StringLiteral kInPlaceOfAttr = "mnemo.in_place_of";
/// A KV cache pool argument: its layer's attention window, which of its
/// rows the steps read (GenerationStep.h).
constexpr llvm::StringLiteral kKVWindowAttr = "mnemo.kv_window";
constexpr llvm::StringLiteral kKVEveryAttr = "mnemo.kv_every";
constexpr llvm::StringLiteral kKVLastAttr = "mnemo.kv_last";

/// The signature entry of a function argument or result.
ArtifactTensor signatureTensor(Type type, DictionaryAttr attrs,
                               std::string fallback,
                               const CompileOptions &options) {
  ArtifactTensor t;
  auto name = attrs ? attrs.getAs<StringAttr>(kNameAttr) : StringAttr();
  t.name = name ? name.str() : std::move(fallback);
  auto tensor = cast<RankedTensorType>(type);
  t.elementType = tensor.getElementType();
  // What bounds each dynamic dim: by default the batch for the first dim of
  // a matrix or more, the sequence length for the others; a function may
  // say (`mnemo.dim_kinds`: "batch", "seq" or "pages", a page pool's size,
  // bounded only by the i32 page numbers of a block table).
  auto kinds = attrs ? attrs.getAs<ArrayAttr>(kDimKindsAttr) : ArrayAttr();
  for (auto [i, d] : llvm::enumerate(tensor.getShape())) {
    bool dynamic = ShapedType::isDynamic(d);
    t.shape.push_back(dynamic ? -1 : d);
    int64_t max = i == 0 && tensor.getRank() >= 2 ? options.maxBatch
                                                   : options.maxSeqLen;
    if (auto kind = kinds && i < kinds.size()
                        ? dyn_cast<StringAttr>(kinds[i])
                        : StringAttr())
      max = kind == "batch"   ? options.maxBatch
            : kind == "pages" ? int64_t(INT32_MAX)
                              : options.maxSeqLen;
    t.maxShape.push_back(dynamic ? max : d);
  }
  t.inPlace = attrs && attrs.get(kInPlaceAttr);
  auto i64 = [&](StringRef name) -> int64_t {
    auto a = attrs ? attrs.getAs<IntegerAttr>(name) : IntegerAttr();
    return a ? a.getInt() : 0;
  };
  t.kvWindow = i64(kKVWindowAttr);
  t.kvEvery = i64(kKVEveryAttr);
  t.kvLast = i64(kKVLastAttr);
  return t;
}

/// Records the signatures of the public functions and moves their large
/// constants to weight operands.
LogicalResult prepareArtifact(ModuleOp module, const CompileOptions &options,
                              ArtifactContents &contents) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    ArtifactFunction f;
    f.name = func.getName().str();
    f.kernelSymbol = (kEntryPrefix + func.getName()).str();
    bool adapterFactors = false;
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      if (!isa<RankedTensorType>(type))
        return func.emitError("argument ")
               << i << " is " << type << "; entry points take ranked tensors";
      // An adapter's factors (trailing arguments) are weights the runtime
      // may replace: one per name across the functions.
      if (auto name = func.getArgAttrOfType<StringAttr>(i, kAdapterFactorAttr)) {
        auto value =
            func.getArgAttrOfType<DenseElementsAttr>(i, kAdapterValueAttr);
        if (!value)
          return func.emitError("adapter factor argument ")
                 << i << " has no " << kAdapterValueAttr;
        adapterFactors = true;
        auto same = llvm::find_if(contents.weights, [&](const ArtifactWeight &w) {
          return w.replaceable && w.name == name.getValue();
        });
        if (same == contents.weights.end()) {
          contents.weights.push_back({name.str(), value, /*replaceable=*/true});
          same = contents.weights.end() - 1;
        } else if (same->value != value) {
          return func.emitError("adapter factor '")
                 << name.getValue() << "' differs between functions";
        }
        f.weights.push_back(same - contents.weights.begin());
        continue;
      }
      if (adapterFactors)
        return func.emitError("argument ")
               << i << " follows an adapter factor; factors come last";
      f.inputs.push_back(signatureTensor(type, func.getArgAttrDict(i),
                                         "input" + std::to_string(i),
                                         options));
    }
    for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
      // The in-place update of an input is no output of the artifact.
      if (func.getResultAttr(i, kInPlaceOfAttr))
        continue;
      if (!isa<RankedTensorType>(type))
        return func.emitError("result ")
               << i << " is " << type << "; entry points return ranked tensors";
      f.outputs.push_back(signatureTensor(type, func.getResultAttrDict(i),
                                          "output" + std::to_string(i),
                                          options));
    }
    outlineWeights(func, options.minWeightBytes, contents.weights, f.weights);
    contents.functions.push_back(std::move(f));
  }
  if (contents.functions.empty())
    return module.emitError("no public function to compile");
  return success();
}

/// Tags each weight operand prepareArtifact added with its weight's index
/// (`mnemo.weight`), for the GPU launch plan.
void markWeightArguments(ModuleOp module, const ArtifactContents &contents) {
  auto funcs = llvm::make_filter_range(
      module.getOps<func::FuncOp>(),
      [](func::FuncOp f) { return !f.isPrivate() && !f.isExternal(); });
  for (auto [func, f] : llvm::zip(funcs, contents.functions)) {
    Builder b(func.getContext());
    for (auto [k, w] : llvm::enumerate(f.weights))
      func.setArgAttr(f.inputs.size() + k, "mnemo.weight",
                      b.getI64IntegerAttr(w));
  }
}

/// Runs a stage's pipeline. Verifying after each of its passes costs about
/// a fifth of the compile (the whole module, dozens of times); by default
/// the module is verified once when the stage ends, and a pass that broke
/// it is found again with `verifyEach`.
LogicalResult runPasses(ModuleOp module, bool verifyEach,
                        llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext());
  pm.enableVerifier(verifyEach);
  // The tool's --mlir-timing / --mlir-print-ir-* options, when registered.
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  build(pm);
  if (failed(pm.run(module)))
    return failure();
  return verifyEach ? success() : verify(module);
}

} // namespace

LogicalResult mnemo::compileModule(ModuleOp module,
                                   const CompileOptions &options,
                                   llvm::raw_ostream &os,
                                   const ProgressFn &progress,
                                   const SideWeights *sideWeights) {
  auto report = [&](llvm::StringRef stage) {
    if (progress)
      progress(stage);
  };
  std::unique_ptr<TargetBackend> target = createTargetBackend(options.target);
  if (!target)
    return module.emitError("unknown target '") << options.target << "'";

  bool ptx = target->getInfo().ptx;
  if (ptx && options.emit == EmitStage::Obj)
    return emitError(module.getLoc(), "target ")
           << options.target
           << " writes PTX, not object files: use --emit=ptx or an artifact";
  if (!options.inputShapes.empty() &&
      failed(specializeInputShapes(module, options.inputShapes)))
    return failure();
  if (options.topKTies)
    module.walk([&](TopKOp op) {
      op.setTiesAttr(TopKTiesAttr::get(module.getContext(), *options.topKTies));
    });
  if (options.emit == EmitStage::Mnemo) {
    module.print(os);
    return success();
  }
  report("fusing graph-level ops");
  // A GPU target's tensor-core linear kernel reads [out, in] weights as
  // they are, so weights read in place keep the checkpoint's layout (the
  // CPU's kernel packs every constant weight for its register tiles).
  bool keepWeightLayout = ptx && !options.weightSources.empty();
  // Its TF32 form of an f32 layer reads W [N, K] only.
  bool f32OutIn = ptx && options.f32Precision != "f32";
  if (failed(runPasses(module, options.verifyEachPass, [&](OpPassManager &pm) {
        buildFusionPipeline(pm, keepWeightLayout, f32OutIn);
      })))
    return failure();
  if (options.emit == EmitStage::Fused) {
    module.print(os);
    return success();
  }

  report("tiling attention and decomposing");
  TilingOptions tiling;
  tiling.tileAttention = options.tileAttention;
  tiling.tileLinear = options.tileLinear && target->getInfo().tileLinear;
  tiling.mlaForm = options.mlaForm;
  tiling.selectKernels = [&](OpPassManager &pm) {
    TargetBackend::KernelSelection selection;
    selection.maxBatch = options.maxBatch;
    selection.decodeKernel = options.gpuDecodeKernel;
    selection.decodeTma = options.gpuDecodeTma;
    selection.f32Precision = options.f32Precision;
    target->buildKernelSelectionPipeline(pm, selection);
  };
  tiling.selectTileKernels = [&](OpPassManager &pm) {
    target->buildTileKernelPipeline(pm);
  };
  tiling.blockQ = options.blockQ ? options.blockQ : target->getInfo().attentionBlockQ;
  tiling.blockKV =
      options.blockKV ? options.blockKV : target->getInfo().attentionBlockKV;
  tiling.attendOverPages = ptx;
  tiling.groupInBlock = !ptx;
  tiling.transposeKeys = !ptx;
  tiling.foldTransposes = !ptx;
  tiling.maskEdgesOnly = !ptx;
  tiling.ropeTables = !ptx;
  tiling.topKRowScratch = !ptx;
  tiling.expertsAlongOutputs = !ptx;
  // A loop of small attentions suits the CPU's threads; the GPU plans keep
  // one attention per layer.
  tiling.compressedQueryChunk = ptx ? 0 : 64;
  // On the GPU a group of 16 query heads or more fills the rows of the
  // kernel of selected keys (one position's heads a block); smaller groups
  // keep the masked attention.
  tiling.compressedSelectedGroup = ptx ? 16 : 0;
  tiling.indexerHeadRows = ptx ? 0 : 64;
  // On the GPU the experts' products are grouped GEMMs over blocks of 64
  // rows (the tensor-core kernel's block rows).
  tiling.groupExperts = true;
  tiling.expertBlockRows = ptx ? 64 : 0;
  if (failed(runPasses(module, options.verifyEachPass, [&](OpPassManager &pm) {
        buildTilingPipeline(pm, tiling);
      })))
    return failure();
  if (!options.inputShapes.empty())
    refineEntryResultTypes(module);
  if (options.emit == EmitStage::Tiled) {
    module.print(os);
    return success();
  }

  ArtifactContents contents;
  if (options.emit == EmitStage::Artifact ||
      (ptx && options.emit == EmitStage::PTX && options.outlineWeightsInPtx)) {
    report("outlining weights");
    if (failed(prepareArtifact(module, options, contents)))
      return failure();
    // The launch plan names the weight operands of a PTX function by their
    // index in the artifact's weights; the executor uploads them once.
    if (ptx)
      markWeightArguments(module, contents);
    uint64_t bytes = 0;
    for (const ArtifactWeight &w : contents.weights)
      bytes += w.value.getRawData().size();
    report(llvm::formatv("{0} weights outlined ({1:F1} MiB)",
                         contents.weights.size(), bytes / 1048576.0)
               .str());
  }
  report("lowering to LLVM");
  if (failed(runPasses(module, options.verifyEachPass, [&](OpPassManager &pm) {
        target->buildCodegenPipeline(pm);
      })))
    return failure();

  static const std::pair<EmitStage, OutputKind> kinds[] = {
      {EmitStage::LLVM, OutputKind::LLVMIR},
      {EmitStage::Asm, OutputKind::Assembly},
      {EmitStage::PTX, OutputKind::PTX},
      {EmitStage::Obj, OutputKind::Object},
      {EmitStage::Artifact, OutputKind::SharedObject}};
  OutputKind kind = OutputKind::SharedObject;
  for (auto [stage, k] : kinds)
    if (stage == options.emit)
      kind = k;
  if (options.emit == EmitStage::Artifact) {
    FailureOr<std::vector<GpuFunctionPlan>> plans = target->launchPlans(module);
    if (failed(plans))
      return failure();
    contents.gpuPlans = std::move(*plans);
  }
  report("generating native code");
  FailureOr<std::string> code = target->serialize(module, kind);
  if (failed(code))
    return failure();
  if (ptx && options.emit == EmitStage::Artifact &&
      !options.cudaToolkit.empty()) {
    report("assembling the PTX (ptxas)");
    FailureOr<std::string> binary;
    {
      // Not required: the assembler's complaint is a warning.
      std::optional<ScopedDiagnosticHandler> demote;
      if (!options.cudaToolkitRequired)
        demote.emplace(module.getContext(), [](Diagnostic &d) {
          if (d.getSeverity() != DiagnosticSeverity::Error)
            return failure();
          llvm::errs() << "mnemoc: warning: " << d.str()
                       << " (the artifact holds the PTX only)\n";
          return success();
        });
      binary = target->assemble(module.getLoc(), *code, options.cudaToolkit);
    }
    if (succeeded(binary))
      contents.gpuBinaries.push_back({target->getCPU(), std::move(*binary)});
    else if (options.cudaToolkitRequired)
      return failure();
  }
  if (options.emit != EmitStage::Artifact) {
    os << *code;
    return success();
  }

  report("writing the artifact");
  contents.triple = target->getTriple();
  contents.cpu = target->getCPU();
  contents.features = target->getFeatures();
  contents.code = std::move(*code);
  contents.ptx = ptx;
  contents.compiler = "mnemoc " MNEMO_VERSION;
  contents.source = options.sourceName;
  contents.sourceHash = options.sourceHash;
  if (auto points = module->getAttrOfType<ArrayAttr>(kProfilePointsAttr))
    for (auto name : points.getAsRange<StringAttr>())
      contents.profilePoints.push_back(name.str());
  WeightPlacement placement;
  if (failed(writeArtifact(module.getLoc(), contents, os, sideWeights,
                           options.weightSources, &placement)))
    return failure();
  if (options.placement)
    *options.placement = placement;
  return success();
}
