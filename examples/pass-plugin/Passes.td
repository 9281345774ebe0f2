//===- Passes.td - example out-of-tree mnemo pass ----------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_EXAMPLE_PASSES
#define MNEMO_EXAMPLE_PASSES

include "mlir/Pass/PassBase.td"

def AnnotateAttentionCostPass
    : Pass<"example-annotate-attention-cost", "::mlir::func::FuncOp"> {
  let summary = "Attaches the FLOP count of every mnemo.attention";
  let description = [{
    Sets `example.flops` on each `mnemo.attention` with static shapes:
    `2 * B * Hq * Sq * (D + Dv)` multiply-adds per visible (query, key)
    pair, counting only the pairs that the causal and window masks leave
    visible. Attention with dynamic shapes gets a remark instead.
  }];
  let options = [
    Option<"attrName", "attr-name", "std::string", /*default=*/"\"example.flops\"",
           "Name of the attribute to set">,
  ];
}

#endif // MNEMO_EXAMPLE_PASSES
