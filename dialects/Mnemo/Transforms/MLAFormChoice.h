//===- MLAFormChoice.h - which MLA decomposition to use ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_TRANSFORMS_MLAFORMCHOICE_H
#define MNEMO_DIALECT_TRANSFORMS_MLAFORMCHOICE_H

namespace mlir::mnemo {

/// The decomposition of mnemo.mla_attention: the op's own `form` (`Auto`),
/// or one form forced for every op.
enum class MLAFormChoice { Auto, Expanded, Absorbed };

} // namespace mlir::mnemo

#endif // MNEMO_DIALECT_TRANSFORMS_MLAFORMCHOICE_H
