//===- Ptxas.cpp - the CUDA toolkit's assembler on the PTX ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An artifact's PTX, assembled ahead of time for the chip it was compiled
// for, so that a device of that chip loads the binary instead of compiling
// the PTX when a session starts (the driver's compilation of a whole
// model's PTX takes tens of seconds). ptxas is run on the text the artifact
// keeps, as `ptxas -arch CHIP --opt-level 3 IN.ptx -o OUT.cubin`: the binary
// is that PTX's, and the PTX stays the fallback for other devices.
// (Upstream's gpu-module-to-binary can run ptxas too, but it then links
// the toolkit's libdevice and translates the module again.)
//
//===----------------------------------------------------------------------===//

#include "NVPTXTarget.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace mlir;

FailureOr<std::string> mnemo::assemblePtx(Location loc, llvm::StringRef ptx,
                                          llvm::StringRef chip,
                                          llvm::StringRef toolkit) {
  llvm::SmallString<256> ptxas(toolkit);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  // Temporary files, each removed whatever happens once it exists.
  llvm::SmallString<128> paths[3];
  std::optional<llvm::FileRemover> removers[3];
  const char *suffixes[3] = {"ptx", "cubin", "log"};
  for (int i = 0; i < 3; ++i) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "mnemo-kernels", suffixes[i], paths[i]))
      return emitError(loc, "cannot create a temporary file for ptxas: ")
             << ec.message();
    removers[i].emplace(paths[i]);
  }
  llvm::StringRef input = paths[0], output = paths[1], log = paths[2];
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec)
      return emitError(loc, "cannot write ") << input << ": " << ec.message();
    os << ptx;
  }
  std::string arch = chip.str();
  llvm::SmallVector<llvm::StringRef> args = {
      ptxas, "-arch", arch, "--opt-level", "3", input, "-o", output};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  std::string why;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, /*Env=*/std::nullopt,
                                     redirects, /*SecondsToWait=*/0,
                                     /*MemoryLimit=*/0, &why);
  if (rc != 0) {
    // ptxas's first error names what it could not take (warnings may
    // come first); else its first line.
    std::string said;
    if (auto text = llvm::MemoryBuffer::getFile(log)) {
      llvm::SmallVector<llvm::StringRef> lines;
      (*text)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
      auto error = llvm::find_if(lines, [](llvm::StringRef line) {
        return line.contains("error") || line.contains("fatal");
      });
      if (error != lines.end())
        said = error->trim().str();
      else if (!lines.empty())
        said = lines.front().trim().str();
    }
    return emitError(loc, "ptxas (")
           << ptxas << ") failed for " << chip << ": "
           << (said.empty()
                   ? (why.empty() ? "exit status " + std::to_string(rc) : why)
                   : said);
  }
  auto binary = llvm::MemoryBuffer::getFile(output);
  if (!binary)
    return emitError(loc, "ptxas wrote no binary: ")
           << binary.getError().message();
  if (!(*binary)->getBuffer().starts_with("\x7f"
                                          "ELF"))
    return emitError(loc, "ptxas (") << ptxas << ") wrote no ELF image";
  return (*binary)->getBuffer().str();
}
