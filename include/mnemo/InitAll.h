//===- InitAll.h - register everything mnemo tools need ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_INITALL_H
#define MNEMO_INITALL_H

namespace mlir {
class DialectRegistry;
namespace mnemo {

/// Adds the mnemo dialect and every upstream dialect and interface model
/// the mnemo pipelines produce or consume.
void registerAllDialects(DialectRegistry &registry);

/// Registers the mnemo passes, conversions and pipelines, and the upstream
/// passes, with the global registry.
void registerAllPasses();

} // namespace mnemo
} // namespace mlir

#endif // MNEMO_INITALL_H
