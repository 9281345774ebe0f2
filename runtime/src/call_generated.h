//===- call_generated.h - calls into the compiled kernels -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every call from the runtime into a code object goes through these two
// functions. Under -fsanitize=function (part of -fsanitize=undefined in
// C++), clang checks a call through a function pointer by reading a type
// signature from the 8 bytes before the callee's entry. Compiled kernels
// carry no such signature, so the check is meaningless for them, and where
// an entry point or a parallel body sits at the first byte of the code
// object's executable mapping, the read faults on the page below it: the
// sanitized runtime then dies in its run loop, after a correct kernel. So
// these calls are exempt from that check, and only from it.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_CALL_GENERATED_H
#define MNEMO_RUNTIME_CALL_GENERATED_H

#include "code_object.h"
#include "parallel.h"

#include <cstdint>

#if defined(__clang__)
#define MNEMO_CALLS_GENERATED_CODE __attribute__((no_sanitize("function")))
#else
#define MNEMO_CALLS_GENERATED_CODE
#endif

namespace mnemo::rt {

/// Runs a compiled entry point on its argument block.
MNEMO_CALLS_GENERATED_CODE inline void callKernel(KernelFn fn, void **args) {
  fn(args);
}

/// Runs iterations [begin, end) of a compiled parallel loop body.
MNEMO_CALLS_GENERATED_CODE inline void callBody(ParallelBody body, void *ctx,
                                                int64_t begin, int64_t end) {
  body(ctx, begin, end);
}

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_CALL_GENERATED_H
