//===- mnemoc.cpp - the Mnemo compiler driver -------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mnemoc INPUT -o OUT.mnemo --target=host|aarch64|sm_80|sm_90a [--emit=STAGE]
//
// INPUT is a .mlir or .onnx model or a Hugging Face checkpoint directory
// (config.json + safetensors). Parses or imports the model, then hands it to
// the compiler library (lib/Compiler).
//
//===----------------------------------------------------------------------===//

#include "mnemo/Compiler/Compiler.h"
#include "mnemo/Compiler/KVCacheReport.h"
#include "mnemo/Frontend/Checkpoint/ImportCheckpoint.h"
#include "mnemo/Frontend/Checkpoint/Safetensors.h"
#include "mnemo/Frontend/ONNX/DecoderWithPast.h"
#include "mnemo/Frontend/ONNX/ImportONNX.h"
#include "mnemo/InitAll.h"
#include "mnemo/Target/TargetBackend.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <cstdlib>

using namespace mlir;
namespace cl = llvm::cl;

/// mnemoc's own options: the ones --help lists (LLVM's internal flags are
/// behind --help-hidden).
static cl::OptionCategory mnemocOptions("mnemoc options");

static cl::opt<std::string>
    inputPath(cl::Positional, cl::Required,
              cl::desc("<model.mlir|model.onnx|checkpoint dir>"),
              cl::cat(mnemocOptions));
static cl::opt<std::string> outputPath("o", cl::desc("Output file"),
                                       cl::value_desc("path"), cl::init("-"),
                                       cl::cat(mnemocOptions));
static cl::opt<std::string>
    targetName("target",
               cl::desc("Target: host, x86_64, aarch64, aarch64-sve, sm_80 or "
                        "sm_90a"),
               cl::init("host"), cl::cat(mnemocOptions));
static cl::opt<mnemo::EmitStage> emit(
    "emit", cl::desc("Stop after a stage and write it"),
    cl::init(mnemo::EmitStage::Artifact),
    cl::values(clEnumValN(mnemo::EmitStage::Mnemo, "mnemo", "parsed mnemo IR"),
               clEnumValN(mnemo::EmitStage::Fused, "fused",
                          "after graph-level fusion"),
               clEnumValN(mnemo::EmitStage::Tiled, "tiled",
                          "after FlashAttention tiling and decomposition"),
               clEnumValN(mnemo::EmitStage::LLVM, "llvm", "LLVM IR"),
               clEnumValN(mnemo::EmitStage::Asm, "asm", "assembly"),
               clEnumValN(mnemo::EmitStage::PTX, "ptx",
                          "PTX of every kernel, one module (GPU targets)"),
               clEnumValN(mnemo::EmitStage::Obj, "obj", "relocatable object"),
               clEnumValN(mnemo::EmitStage::Artifact, "artifact",
                          "the .mnemo artifact (default)")),
    cl::cat(mnemocOptions));
static cl::opt<int64_t> maxBatch("max-batch",
                                 cl::desc("Largest batch at run time"),
                                 cl::init(16), cl::cat(mnemocOptions));
static cl::opt<int64_t>
    maxSeqLen("max-seq-len", cl::desc("Largest sequence length at run time"),
              cl::init(4096), cl::cat(mnemocOptions));
static cl::opt<bool>
    tileAttention("tile-attention",
                  cl::desc("FlashAttention tiling (default on)"),
                  cl::init(true), cl::cat(mnemocOptions));
static cl::opt<bool> externalWeights(
    "external-weights",
    cl::desc("Write the weights to OUT.weights beside the artifact"),
    cl::init(false), cl::cat(mnemocOptions));
enum class WeightsMode { Embed, Reference };
static cl::opt<WeightsMode> weightsMode(
    "weights",
    cl::desc("Where an artifact's weights live (a checkpoint's)"),
    cl::init(WeightsMode::Embed),
    cl::values(clEnumValN(WeightsMode::Embed, "embed",
                          "stored in the artifact (default)"),
               clEnumValN(WeightsMode::Reference, "reference",
                          "read in place from the checkpoint's safetensors "
                          "files (their paths, sizes and CRC-32 recorded and "
                          "checked at load); weights the compiler changed "
                          "are stored")),
    cl::cat(mnemocOptions));
static cl::opt<bool> importReport(
    "report",
    cl::desc("Print (to stderr) which ONNX subgraphs were raised into mnemo "
             "ops and which ops stayed generic, and the KV cache of a "
             "sequence at --report-context tokens for a model with "
             "generation steps"),
    cl::init(false), cl::cat(mnemocOptions));
static cl::opt<int64_t> reportContext(
    "report-context",
    cl::desc("The context --report counts the KV cache at (default: "
             "--max-seq-len)"),
    cl::init(0), cl::cat(mnemocOptions));
static cl::opt<bool>
    tileLinear("tile-linear",
               cl::desc("Cache tiling of linear layers (default on)"),
               cl::init(true), cl::cat(mnemocOptions));
static cl::opt<mnemo::MLAFormChoice>
    mlaForm("mla-form",
            cl::desc("Decomposition of multi-head latent attention"),
            cl::init(mnemo::MLAFormChoice::Auto),
            cl::values(clEnumValN(mnemo::MLAFormChoice::Auto, "auto",
                                  "expanded for prefill, absorbed for decode "
                                  "(or the op's own form)"),
                       clEnumValN(mnemo::MLAFormChoice::Expanded, "expanded",
                                  "keys and values up-projected per head"),
                       clEnumValN(mnemo::MLAFormChoice::Absorbed, "absorbed",
                                  "attention over the latent cache")),
            cl::cat(mnemocOptions));
enum class TopKTiesChoice { Model, LowestIndex, Introselect };
static cl::opt<TopKTiesChoice> topKTies(
    "topk-ties",
    cl::desc("Which of several equal scores a top-k selection (DeepSeek "
             "Sparse Attention's indexer) keeps"),
    cl::init(TopKTiesChoice::Model),
    cl::values(clEnumValN(TopKTiesChoice::Model, "model",
                          "the model's own: a transformers checkpoint's is "
                          "PyTorch's CPU order (introselect)"),
               clEnumValN(TopKTiesChoice::LowestIndex, "lowest-index",
                          "the lower index (ONNX TopK, PyTorch's CUDA "
                          "order); does not depend on the sequence length, "
                          "so a cached decode equals a recomputation"),
               clEnumValN(TopKTiesChoice::Introselect, "introselect",
                          "PyTorch's CPU order (libstdc++'s introselect)")),
    cl::cat(mnemocOptions));
static cl::opt<mnemo::WeightDType> weightDType(
    "dtype",
    cl::desc("Storage type of a checkpoint's weight matrices (activations "
             "and accumulation stay f32)"),
    cl::init(mnemo::WeightDType::F32),
    cl::values(clEnumValN(mnemo::WeightDType::F32, "f32", "32-bit floats"),
               clEnumValN(mnemo::WeightDType::BF16, "bf16",
                          "bfloat16, rounded to nearest even"),
               clEnumValN(mnemo::WeightDType::F16, "f16",
                          "IEEE half, rounded to nearest even"),
               clEnumValN(mnemo::WeightDType::Int8, "int8",
                          "8-bit integers, a scale per group "
                          "(--quant-group)"),
               clEnumValN(mnemo::WeightDType::Int4, "int4",
                          "4-bit integers, two per byte, a scale per group"),
               clEnumValN(mnemo::WeightDType::NF4, "nf4",
                          "QLoRA's NormalFloat4, two per byte, a scale "
                          "(absolute maximum) per group"),
               clEnumValN(mnemo::WeightDType::FP8, "fp8",
                          "FP8 E4M3, a scale per 128 x 128 block "
                          "(DeepSeek-V3's; --quant-group sets the block)")),
    cl::cat(mnemocOptions));
static cl::opt<int64_t> quantGroup(
    "quant-group",
    cl::desc("Input features per scale of --dtype=int8|int4|nf4 weights "
             "(default 32); the block's rows and columns of --dtype=fp8 "
             "(default 128)"),
    cl::init(32), cl::cat(mnemocOptions));
static cl::list<std::string> quantSkip(
    "quant-skip",
    cl::desc("Matrices --dtype=int8|int4|nf4|fp8 leaves out, stored in bf16 "
             "instead: embedding, head (comma-separated; GPTQ's and AWQ's "
             "convention is both)"),
    cl::CommaSeparated, cl::value_desc("embedding,head"),
    cl::cat(mnemocOptions));
static cl::list<std::string> loraAdapters(
    "lora",
    cl::desc("Merge the PEFT LoRA adapter in DIR (adapter_config.json, "
             "adapter_model.safetensors) into a checkpoint's weights "
             "(repeatable: merged in order)"),
    cl::value_desc("DIR"), cl::cat(mnemocOptions));
static cl::opt<bool> loraAttach(
    "lora-attach",
    cl::desc("Keep the --lora adapter's factors apart from the weights, as "
             "weights the runtime can replace with another adapter's of the "
             "same rank and modules (mnemo_model_set_weight, mnemo-run "
             "--weight); default: merged"),
    cl::init(false), cl::cat(mnemocOptions));
enum class QuantScheme { Symmetric, Asymmetric };
static cl::opt<QuantScheme> quantScheme(
    "quant-scheme",
    cl::desc("Zero points of --dtype=int8|int4 weights"),
    cl::init(QuantScheme::Symmetric),
    cl::values(clEnumValN(QuantScheme::Symmetric, "symmetric",
                          "codes centred on zero, a scale per group"),
               clEnumValN(QuantScheme::Asymmetric, "asymmetric",
                          "unsigned codes, a scale and a zero point per "
                          "group")),
    cl::cat(mnemocOptions));
static cl::opt<mnemo::KVCacheDType> kvDType(
    "kv-dtype",
    cl::desc("Storage type of the KV cache of the generation "
             "functions (prefill, decode)"),
    cl::init(mnemo::KVCacheDType::F32),
    cl::values(clEnumValN(mnemo::KVCacheDType::F32, "f32", "32-bit floats"),
               clEnumValN(mnemo::KVCacheDType::BF16, "bf16", "bfloat16"),
               clEnumValN(mnemo::KVCacheDType::F16, "f16", "IEEE half"),
               clEnumValN(mnemo::KVCacheDType::FP8, "fp8",
                          "FP8 E4M3, a scale per token and KV head")),
    cl::cat(mnemocOptions));
static cl::opt<int64_t>
    kvPageSize("kv-page-size",
               cl::desc("Tokens per page of the paged KV cache (default 16)"),
               cl::init(16), cl::cat(mnemocOptions));
static cl::opt<bool> generationSteps(
    "generation",
    cl::desc("Compile the generation steps, prefill and decode, "
             "beside forward, for a checkpoint or an ONNX decoder with past "
             "key/values (default on, off with --input-shape; =false: "
             "forward only)"),
    cl::init(true), cl::cat(mnemocOptions));
static cl::opt<bool> appendStep(
    "append-step",
    cl::desc("Also compile the generation step `append`, which feeds several "
             "tokens to live sequences (mnemo_generator_append: a prompt "
             "appended to a conversation, a long prompt in chunks); off by "
             "default, as it lengthens a compile by about a quarter"),
    cl::init(false), cl::cat(mnemocOptions));
static cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass, naming the pass that broke it "
             "(default: once after each stage)"),
    cl::init(false), cl::cat(mnemocOptions));
static cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Compile for one static shape of an input: NAME=DIMxDIMx... "
             "(repeatable; targets without dynamic shapes need it)"),
    cl::value_desc("name=shape"), cl::cat(mnemocOptions));
static cl::opt<int64_t> blockQ("block-q",
                               cl::desc("Query tile rows (0: target default)"),
                               cl::init(0), cl::cat(mnemocOptions));
static cl::opt<int64_t>
    blockKV("block-kv", cl::desc("Key/value tile rows (0: target default)"),
            cl::init(0), cl::cat(mnemocOptions));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("GPU: f32 linear layers and attention on the tensor cores "
             "as 3xtf32 (the default: three TF32 products a term, about "
             "f32's accuracy) or tf32 (one product, 10-bit mantissas), or "
             "on the CUDA cores (f32)"),
    cl::init("3xtf32"), cl::cat(mnemocOptions));
static cl::opt<bool> gpuDecodeKernel(
    "gpu-decode-kernel",
    cl::desc("GPU: paged decode steps over FP8 KV pools take the decode "
             "kernel (sm_90a; docs/GPU.md; =false: the general one)"),
    cl::init(true), cl::cat(mnemocOptions));
static cl::opt<bool> gpuDecodeTma(
    "gpu-decode-tma",
    cl::desc("GPU: the decode kernel copies FP8 pages by TMA boxes (pages "
             "of 8 or a multiple of 16 keys) instead of cp.async pieces "
             "(sm_90a; off: not yet validated on a GPU)"),
    cl::init(false), cl::Hidden, cl::cat(mnemocOptions));
enum class GpuBinary { Auto, On, Off };
static cl::opt<GpuBinary> gpuBinary(
    "gpu-binary",
    cl::desc("GPU artifacts: also assemble the module for its chip with the "
             "CUDA toolkit's ptxas, so that a device of that chip loads it "
             "instead of compiling the PTX when a session starts"),
    cl::values(clEnumValN(GpuBinary::Auto, "auto",
                          "when a toolkit is found (the default)"),
               clEnumValN(GpuBinary::On, "on", "a toolkit is required"),
               clEnumValN(GpuBinary::Off, "off", "the PTX only")),
    cl::init(GpuBinary::Auto), cl::cat(mnemocOptions));
static cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("The CUDA toolkit whose bin/ptxas assembles GPU artifacts "
             "(default: $CUDA_PATH, $CUDA_HOME, ptxas's on PATH, "
             "/usr/local/cuda)"),
    cl::value_desc("dir"), cl::cat(mnemocOptions));

/// MLIR's options that a user of mnemoc needs, listed by --help with
/// mnemoc's own (--mlir-print-ir-after=PASS and the rest are hidden ones).
static constexpr llvm::StringLiteral kShownMLIROptions[] = {
    "mlir-timing", "mlir-disable-threading", "mlir-print-ir-after-failure",
    "mlir-print-op-on-diagnostic"};

/// Hides (behind --help-hidden) every option but mnemoc's own and the MLIR
/// ones above, and lists those under one heading.
static void hideForeignOptions() {
  for (auto &[name, option] : cl::getRegisteredOptions()) {
    if (llvm::is_contained(kShownMLIROptions, name)) {
      option->addCategory(mnemocOptions);
      continue;
    }
    if (!llvm::is_contained(option->Categories, &mnemocOptions))
      option->setHiddenFlag(cl::Hidden);
  }
}

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "mnemoc") << message << "\n";
  return 1;
}

/// Whether `dir` is a CUDA toolkit with an executable bin/ptxas.
static bool hasPtxas(llvm::StringRef dir) {
  llvm::SmallString<256> ptxas(dir);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  return !dir.empty() && llvm::sys::fs::can_execute(ptxas);
}

/// The toolkit that assembles a GPU artifact (--gpu-binary, --cuda-path),
/// "" for none, or a failure already reported.
static FailureOr<std::string> chooseCudaToolkit() {
  if (gpuBinary == GpuBinary::Off)
    return std::string();
  if (!cudaPath.empty()) {
    if (!hasPtxas(cudaPath))
      return fail("--cuda-path '" + cudaPath + "' has no executable bin/ptxas"),
             failure();
    return std::string(cudaPath);
  }
  llvm::SmallVector<std::string> candidates;
  for (const char *env : {"CUDA_PATH", "CUDA_HOME"})
    if (const char *dir = std::getenv(env))
      candidates.push_back(dir);
  if (llvm::ErrorOr<std::string> ptxas = llvm::sys::findProgramByName("ptxas"))
    candidates.push_back(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
            .str());
  candidates.push_back("/usr/local/cuda");
  for (const std::string &dir : candidates)
    if (hasPtxas(dir))
      return dir;
  if (gpuBinary == GpuBinary::On)
    return fail("--gpu-binary=on: no CUDA toolkit with bin/ptxas found "
                "(give --cuda-path, or --gpu-binary=off)"),
           failure();
  return std::string();
}

/// `target` as the artifact at `artifact` records it: relative to the
/// artifact's directory (with ".." where needed), so that both can move
/// together.
static std::string pathFrom(llvm::StringRef artifact, llvm::StringRef target) {
  auto absolute = [](llvm::StringRef p) {
    llvm::SmallString<256> s(p);
    llvm::sys::fs::make_absolute(s);
    llvm::sys::path::remove_dots(s, /*remove_dot_dot=*/true);
    return s;
  };
  llvm::SmallString<256> from = absolute(artifact), to = absolute(target);
  llvm::sys::path::remove_filename(from);
  llvm::SmallVector<llvm::StringRef> a, b;
  for (auto it = llvm::sys::path::begin(from), e = llvm::sys::path::end(from);
       it != e; ++it)
    a.push_back(*it);
  for (auto it = llvm::sys::path::begin(to), e = llvm::sys::path::end(to);
       it != e; ++it)
    b.push_back(*it);
  size_t common = 0;
  while (common < a.size() && common + 1 < b.size() && a[common] == b[common])
    ++common;
  llvm::SmallString<256> out;
  for (size_t i = common; i < a.size(); ++i)
    llvm::sys::path::append(out, "..");
  for (size_t i = common; i < b.size(); ++i)
    llvm::sys::path::append(out, b[i]);
  return std::string(out);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // MLIR's pass-manager options: --mlir-timing (where compile time goes),
  // --mlir-print-ir-after=PASS and the like; --mlir-disable-threading
  // compiles on one thread (the output is the same).
  // Pass names first, for --mlir-print-ir-after=PASS and the like.
  mnemo::registerAllPasses();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  hideForeignOptions();
  cl::ParseCommandLineOptions(argc, argv, "Mnemo ahead-of-time compiler\n");

  if (!mnemo::createTargetBackend(targetName))
    return fail("unknown target '" + targetName + "' (expected " +
                llvm::join(mnemo::getTargetBackendNames(), ", ") + ")");
  if (maxBatch <= 0 || maxSeqLen <= 0)
    return fail("--max-batch and --max-seq-len must be positive");
  if (precision != "3xtf32" && precision != "tf32" && precision != "f32")
    return fail("--precision must be 3xtf32, tf32 or f32 (got '" + precision +
                "')");
  bool binary =
      emit == mnemo::EmitStage::Obj || emit == mnemo::EmitStage::Artifact;
  if (binary && outputPath == "-")
    return fail("binary output needs -o FILE");
  if (weightsMode == WeightsMode::Reference &&
      (emit != mnemo::EmitStage::Artifact ||
       !mnemo::isCheckpointDirectory(inputPath)))
    return fail("--weights=reference applies to artifacts compiled from a "
                "checkpoint directory");
  if (externalWeights && emit != mnemo::EmitStage::Artifact)
    return fail("--external-weights applies to artifacts only");

  // A checkpoint directory is imported from its files; anything else is one
  // model file.
  std::string error, hash;
  bool checkpoint = mnemo::isCheckpointDirectory(inputPath);
  if (!checkpoint && llvm::sys::fs::is_directory(inputPath))
    return fail(inputPath + ": directory without a config.json");
  if (!checkpoint && weightDType.getNumOccurrences())
    return fail("--dtype applies to checkpoint directories (an ONNX or MLIR "
                "model keeps the element types it was written with)");
  mnemo::WeightOptions weightOptions(weightDType);
  weightOptions.groupSize = quantGroup;
  if (weightDType == mnemo::WeightDType::FP8 && !quantGroup.getNumOccurrences())
    weightOptions.groupSize = 128;
  weightOptions.asymmetric = quantScheme == QuantScheme::Asymmetric;
  weightOptions.loraAdapters.assign(loraAdapters.begin(), loraAdapters.end());
  if (!loraAdapters.empty() && !checkpoint)
    return fail("--lora applies to checkpoint directories");
  weightOptions.loraAttach = loraAttach;
  if (loraAttach && loraAdapters.size() != 1)
    return fail("--lora-attach takes exactly one --lora adapter");
  if (loraAttach && llvm::StringRef(targetName).starts_with("sm_"))
    return fail("--lora-attach is not supported for GPU targets yet (merge "
                "the adapter: --lora without --lora-attach)");
  for (const std::string &skip : quantSkip) {
    if (skip == "embedding")
      weightOptions.skipEmbedding = true;
    else if (skip == "head")
      weightOptions.skipHead = true;
    else
      return fail("--quant-skip=" + skip + ": expected embedding or head");
  }
  bool quantFlags = quantGroup.getNumOccurrences() ||
                    quantScheme.getNumOccurrences() ||
                    quantSkip.getNumOccurrences();
  if (quantFlags && !weightOptions.quantized())
    return fail("--quant-group, --quant-scheme and --quant-skip apply to "
                "--dtype=int8, int4, nf4 or fp8");
  if (quantGroup < 1 || quantGroup > 65536)
    return fail("--quant-group=" + std::to_string(quantGroup) +
                ": expected 1 to 65536 input features");
  if (weightOptions.asymmetric && weightDType == mnemo::WeightDType::NF4)
    return fail("--quant-scheme=asymmetric does not apply to nf4 (its "
                "table is symmetric; a group's scale is its absolute "
                "maximum)");
  if (weightOptions.asymmetric && weightDType == mnemo::WeightDType::FP8)
    return fail("--quant-scheme=asymmetric does not apply to fp8 (a "
                "block's scale is its absolute maximum / 448)");
  bool onnx = llvm::StringRef(inputPath).ends_with(".onnx");
  bool cacheFlags = kvDType.getNumOccurrences() ||
                    kvPageSize.getNumOccurrences() ||
                    generationSteps.getNumOccurrences() ||
                    appendStep.getNumOccurrences();
  const char *cacheFlagsApply =
      "--generation, --append-step, --kv-dtype and --kv-page-size apply to "
      "checkpoint directories and ONNX decoders exported with past "
      "key/values (the generation functions are built from them)";
  if (!checkpoint && !onnx && cacheFlags)
    return fail(cacheFlagsApply);
  if (kvPageSize < 1 || kvPageSize > 4096)
    return fail("--kv-page-size=" + std::to_string(kvPageSize) +
                ": expected 1 to 4096 tokens");
  mnemo::KVCacheOptions kvCache;
  kvCache.pageSize = kvPageSize;
  // The generation steps' shapes change from step to step (a batch of live
  // sequences, one new token each): a compile for one static shape is one
  // of the forward alone, unless the steps are asked for by name.
  kvCache.generation = generationSteps.getNumOccurrences()
                           ? generationSteps
                           : generationSteps && inputShapes.empty();
  kvCache.dtype = kvDType;
  if (appendStep && !kvCache.generation)
    return fail("--append-step needs the generation steps (it is one of "
                "them; not with --generation=false or --input-shape)");
  kvCache.appendStep = appendStep;
  std::unique_ptr<llvm::MemoryBuffer> input;
  if (!checkpoint) {
    input = openInputFile(inputPath, &error);
    if (!input)
      return fail(error);
    if (!onnx && !llvm::StringRef(inputPath).ends_with(".mlir"))
      return fail(inputPath + ": unsupported input (this build reads .mlir "
                              "and .onnx models and checkpoint directories)");
    hash = llvm::toHex(
        llvm::SHA256::hash(llvm::arrayRefFromStringRef(input->getBuffer())),
        /*LowerCase=*/true);
  }

  DialectRegistry registry;
  mnemo::registerAllDialects(registry);
  MLIRContext context(registry);
  // A diagnostic is its one line and location; the op it is about (a whole
  // model's function, often) is printed only when asked for.
  if (!cl::getRegisteredOptions()
           .lookup("mlir-print-op-on-diagnostic")
           ->getNumOccurrences())
    context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  if (input)
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module;
  if (checkpoint)
    module =
        mnemo::importCheckpoint(inputPath, &context, error, &hash, weightOptions,
                                kvCache);
  else if (onnx) {
    mnemo::ONNXImportReport report;
    module = mnemo::importONNXFile(inputPath, &context, error, &report);
    if (module && importReport)
      report.print(llvm::errs());
    // A decoder exported with past key/values also gets generation steps.
    if (module && !mnemo::isDecoderWithPast(*module) && cacheFlags)
      return fail(inputPath + ": no past_key_values inputs; " +
                  cacheFlagsApply);
    if (module && mnemo::isDecoderWithPast(*module) && kvCache.generation &&
        failed(mnemo::addDecoderWithPastSteps(*module, kvCache, inputPath,
                                              error)))
      return fail(error);
  } else
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return checkpoint || onnx ? fail(error) : 1;
  if (reportContext.getNumOccurrences() && !importReport)
    return fail("--report-context applies to --report");
  if (reportContext.getNumOccurrences() && reportContext < 1)
    return fail("--report-context must be positive");
  if (importReport)
    mnemo::printKVCacheReport(*module,
                              reportContext ? reportContext : maxSeqLen,
                              llvm::errs());

  mnemo::CompileOptions options;
  options.target = targetName;
  options.emit = emit;
  options.maxBatch = maxBatch;
  options.maxSeqLen = maxSeqLen;
  options.tileAttention = tileAttention;
  options.tileLinear = tileLinear;
  options.mlaForm = mlaForm;
  if (topKTies == TopKTiesChoice::LowestIndex)
    options.topKTies = mnemo::TopKTies::LowestIndex;
  else if (topKTies == TopKTiesChoice::Introselect)
    options.topKTies = mnemo::TopKTies::Introselect;
  for (const std::string &spec : inputShapes) {
    auto [name, dims] = llvm::StringRef(spec).rsplit('=');
    mnemo::InputShape s{name.str(), {}};
    llvm::SmallVector<llvm::StringRef> parts;
    dims.split(parts, 'x');
    for (llvm::StringRef p : parts) {
      int64_t d;
      if (p.getAsInteger(10, d) || d <= 0) {
        s.shape.clear();
        break;
      }
      s.shape.push_back(d);
    }
    if (name.empty() || s.shape.empty())
      return fail("--input-shape '" + spec +
                  "': expected NAME=DIMxDIM... with positive dims");
    for (const mnemo::InputShape &other : options.inputShapes)
      if (other.name == s.name)
        return fail("--input-shape: input '" + s.name + "' given twice");
    options.inputShapes.push_back(std::move(s));
  }
  options.verifyEachPass = verifyEach;
  // An MLIR model's constants stay the PTX module's data (as written).
  options.outlineWeightsInPtx = !llvm::StringRef(inputPath).ends_with(".mlir");
  options.blockQ = blockQ;
  options.blockKV = blockKV;
  options.gpuDecodeKernel = gpuDecodeKernel;
  options.gpuDecodeTma = gpuDecodeTma;
  options.f32Precision = precision;
  if (llvm::StringRef(targetName).starts_with("sm_") &&
      emit == mnemo::EmitStage::Artifact) {
    FailureOr<std::string> toolkit = chooseCudaToolkit();
    if (failed(toolkit))
      return 1;
    options.cudaToolkit = *toolkit;
    options.cudaToolkitRequired = gpuBinary == GpuBinary::On;
    if (toolkit->empty() && gpuBinary == GpuBinary::Auto)
      llvm::errs() << "mnemoc: no CUDA toolkit found (--cuda-path): the "
                      "artifact holds PTX only, compiled when a session "
                      "starts\n";
  }
  options.sourceName =
      llvm::sys::path::filename(llvm::StringRef(inputPath).rtrim("/")).str();
  options.sourceHash = hash;

  // Progress on a terminal: the stage being entered and the time so far.
  auto start = std::chrono::steady_clock::now();
  mnemo::ProgressFn progress;
  if (llvm::errs().is_displayed())
    progress = [&](llvm::StringRef stage) {
      double s = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
                     .count();
      llvm::errs() << llvm::format("[mnemoc %6.2fs] ", s) << stage << "\n";
    };

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputPath, &error);
  if (!output)
    return fail(outputPath + ": " + error);
  std::unique_ptr<llvm::ToolOutputFile> weights;
  std::optional<mnemo::SideWeights> side;
  if (externalWeights) {
    std::string path = outputPath + ".weights";
    weights = openOutputFile(path, &error);
    if (!weights)
      return fail(path + ": " + error);
    side.emplace(mnemo::SideWeights{llvm::sys::path::filename(path).str(),
                                    weights->os()});
  }
  mnemo::WeightPlacement placement;
  if (weightsMode == WeightsMode::Reference) {
    std::unique_ptr<mnemo::SafetensorsCheckpoint> ckpt =
        mnemo::SafetensorsCheckpoint::open(inputPath, error);
    if (!ckpt)
      return fail(error);
    for (const auto &file : ckpt->getFiles()) {
      mnemo::WeightSourceFile source;
      source.path = file->getPath().str();
      source.recordedPath = pathFrom(outputPath, source.path);
      const char *base = file->getContents().data();
      for (const mnemo::SafetensorsTensor &t : file->getTensors())
        source.tensors.push_back(
            {uint64_t(t.bytes.data() - base), uint64_t(t.bytes.size())});
      options.weightSources.push_back(std::move(source));
    }
    options.placement = &placement;
  }
  if (failed(mnemo::compileModule(*module, options, output->os(), progress,
                                  side ? &*side : nullptr)))
    return 1;
  if (weightsMode == WeightsMode::Reference)
    llvm::errs() << llvm::format(
        "mnemoc: %u weights read in place from %zu file(s) (%.1f MiB), %u "
        "stored in the artifact (%.1f MiB)\n",
        placement.referenced, options.weightSources.size(),
        placement.referencedBytes / 1048576.0, placement.embedded,
        placement.embeddedBytes / 1048576.0);
  output->keep();
  if (weights)
    weights->keep();
  return 0;
}
