//===- BufferizableOpInterfaceImpl.h - mnemo ops on buffers -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define MNEMO_DIALECT_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace mnemo {

/// Lets `mnemo.kv_cache_write` bufferize in place into its pools, as a
/// parallel loop over the new tokens.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace mnemo
} // namespace mlir

#endif // MNEMO_DIALECT_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
