//===- SerializeObject.cpp - LLVM dialect to native code --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Translates the LLVM-dialect module to LLVM IR, optimizes it at O1 for the
// target machine, and emits assembly, a relocatable object, or a shared
// object (partitions of the module optimized and generated on threads,
// SplitCodegen.h, then linked by ld.lld, the one external tool used).
//
//===----------------------------------------------------------------------===//

#include "CPUTarget.h"
#include "MergeSimilarFunctions.h"
#include "SplitCodegen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace mlir;
using namespace mlir::mnemo;

namespace {

/// Partitions of a code object's kernels (SplitCodegen.h): several per
/// thread of a small machine, so that a thread done early takes another
/// (the estimate of a kernel's work before optimization is rough); each
/// partition still costs a read of the module's bitcode.
constexpr unsigned kCodegenPartitions = 8;

std::unique_ptr<llvm::TargetMachine>
createTargetMachine(ModuleOp module, const CPUTargetBackend &target) {
  static const bool initialized = [] {
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(target.getTriple());
  std::string error;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!t) {
    module.emitError("no LLVM target for '")
        << target.getTriple() << "': " << error;
    return nullptr;
  }
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(t->createTargetMachine(
      triple, target.getCPU(), target.getFeatures(), options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

/// LLVM settings for the compile of a code object, set while this lives.
/// LLVM reads them only from process-wide options, so they are set through
/// the option registry (as LLVM's own tools set options) and reset on
/// return; one given on the command line wins. They change how fast the
/// compile is, never what the code computes:
///
/// - `-disable-lsr`: the kernels' address arithmetic comes from MLIR
///   already strength-reduced (tile pointers advanced by constant strides),
///   and loop strength reduction took a tenth of the code generator's time
///   (deepseek_mla: 0.27 of 2.5 CPU-s, `--time-passes`) for no difference
///   in the models', the attention block's or the GEMM's speed in
///   alternating runs (2026-12-03, docs/CPU.md).
/// - `-unroll-runtime=false`, `-unroll-allow-partial=false`: the GEMM and
///   attention tiles are unrolled in MLIR already, to the register file;
///   LLVM's partial and run-time unrolling copied the small loops around
///   them (copies, norms, the loop vectorizer's remainders) two to eight
///   times with their prologues, a quarter of deepseek_mla's code, for no
///   difference in speed (2026-12-04, docs/CPU.md). Loops of a constant
///   trip count are still unrolled in full.
///
/// The options belong to the process, so compiles that overlap (an
/// embedder's threads) take turns from here to the end of the code
/// generation; each then sets and resets them alone.
class ScopedCodegenOptions {
public:
  ScopedCodegenOptions() : lock(mutex()) {
    auto &options = llvm::cl::getRegisteredOptions();
    for (auto [name, value] : {std::pair{"disable-lsr", "true"},
                               {"unroll-runtime", "false"},
                               {"unroll-allow-partial", "false"}}) {
      auto it = options.find(name);
      if (it == options.end() || it->second->getNumOccurrences() != 0)
        continue;
      // Parsed by the option's own parser, as from a command line.
      if (!it->second->addOccurrence(/*pos=*/0, name, value))
        set.push_back(it->second);
    }
  }
  ~ScopedCodegenOptions() {
    for (llvm::cl::Option *option : set)
      option->reset();
  }
  ScopedCodegenOptions(const ScopedCodegenOptions &) = delete;
  ScopedCodegenOptions &operator=(const ScopedCodegenOptions &) = delete;

private:
  static std::mutex &mutex() {
    static std::mutex m;
    return m;
  }
  std::lock_guard<std::mutex> lock;
  llvm::SmallVector<llvm::cl::Option *, 3> set;
};

/// Finds ld.lld: the one next to the LLVM this was built with, then PATH.
std::string findLinker() {
  for (const char *candidate : {MNEMO_LLVM_TOOLS_DIR "/ld.lld"})
    if (llvm::sys::fs::can_execute(candidate))
      return candidate;
  for (const char *name : {"ld.lld-22", "ld.lld"})
    if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName(name))
      return *p;
  return "";
}

FailureOr<std::string> linkSharedObject(ModuleOp module,
                                        llvm::ArrayRef<std::string> objects) {
  std::string linker = findLinker();
  if (linker.empty()) {
    module.emitError("cannot find ld.lld to link the code object (install "
                     "lld-22)");
    return failure();
  }
  llvm::SmallString<128> soPath;
  if (llvm::sys::fs::createTemporaryFile("mnemo-kernels", "so", soPath)) {
    module.emitError("cannot create temporary files for linking");
    return failure();
  }
  llvm::FileRemover removeSo(soPath);
  // One file per object, removed on return.
  llvm::SmallVector<llvm::SmallString<128>> objPaths(objects.size());
  llvm::SmallVector<llvm::FileRemover> removeObjs;
  removeObjs.reserve(objects.size());
  for (auto [object, objPath] : llvm::zip(objects, objPaths)) {
    int fd;
    if (llvm::sys::fs::createTemporaryFile("mnemo-kernels", "o", fd, objPath)) {
      module.emitError("cannot create temporary files for linking");
      return failure();
    }
    removeObjs.emplace_back(objPath);
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << object;
    os.close();
    if (os.has_error()) {
      module.emitError("cannot write the object for linking: ")
          << os.error().message();
      os.clear_error();
      return failure();
    }
  }
  llvm::SmallString<128> errPath;
  if (llvm::sys::fs::createTemporaryFile("mnemo-ld", "txt", errPath)) {
    module.emitError("cannot create a temporary file for the linker log");
    return failure();
  }
  llvm::FileRemover removeErr(errPath);
  llvm::SmallVector<llvm::StringRef> args = {linker, "-shared",
                                             "--build-id=none", "-o", soPath};
  for (const llvm::SmallString<128> &objPath : objPaths)
    args.push_back(objPath);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, errPath.str(),
                                                errPath.str()};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(linker, args, std::nullopt, redirects, 0,
                                     0, &message);
  if (rc != 0) {
    auto log = llvm::MemoryBuffer::getFile(errPath);
    module.emitError("linking the code object failed: ")
        << (log ? (*log)->getBuffer().trim() : llvm::StringRef(message));
    return failure();
  }
  auto so = llvm::MemoryBuffer::getFile(soPath, /*IsText=*/false);
  if (!so) {
    module.emitError("cannot read the linked code object");
    return failure();
  }
  return (*so)->getBuffer().str();
}

} // namespace

FailureOr<std::string> CPUTargetBackend::serialize(ModuleOp module,
                                                   OutputKind kind) const {
  if (kind == OutputKind::PTX)
    return module.emitError("target '")
           << name << "' does not emit PTX (use --target=sm_80 or sm_90a)";
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(module, *this);
  if (!tm)
    return failure();
  if (llvm::Error error = checkLLVMPasses(*tm))
    return module.emitError(llvm::toString(std::move(error)));
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "mnemo");
  if (!llvmModule) {
    module.emitError("translation to LLVM IR failed");
    return failure();
  }
  llvmModule->setTargetTriple(tm->getTargetTriple());
  llvmModule->setDataLayout(tm->createDataLayout());
  mergeIdenticalFunctions(*llvmModule);
  mergeSimilarFunctions(*llvmModule);
  ScopedCodegenOptions codegenOptions;
  if (kind == OutputKind::SharedObject) {
    // The kernels are optimized and generated in partitions, on the
    // compiler's threads; the code object is the same on any machine.
    unsigned threads = module.getContext()->isMultithreadingEnabled()
                           ? llvm::hardware_concurrency().compute_thread_count()
                           : 1;
    llvm::Expected<llvm::SmallVector<std::string>> objects =
        emitPartitionedObjects(*llvmModule, kCodegenPartitions, threads, [&] {
          return createTargetMachine(module, *this);
        });
    if (!objects)
      return module.emitError("code generation failed: ")
             << llvm::toString(objects.takeError());
    return linkSharedObject(module, *objects);
  }
  if (llvm::Error error = optimizeModule(*llvmModule, *tm))
    return module.emitError(llvm::toString(std::move(error)));

  std::string out;
  llvm::raw_string_ostream os(out);
  if (kind == OutputKind::LLVMIR) {
    llvmModule->print(os, nullptr);
    return out;
  }
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream bos(buffer);
  llvm::legacy::PassManager pm;
  auto fileType = kind == OutputKind::Assembly
                      ? llvm::CodeGenFileType::AssemblyFile
                      : llvm::CodeGenFileType::ObjectFile;
  if (tm->addPassesToEmitFile(pm, bos, nullptr, fileType)) {
    module.emitError("the target machine cannot emit this file type");
    return failure();
  }
  pm.run(*llvmModule);
  return std::string(buffer.str());
}
