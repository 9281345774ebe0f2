//===- MnemoBase.td - mnemo dialect definition -------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_MNEMOBASE
#define MNEMO_DIALECT_MNEMOBASE

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/CommonTypeConstraints.td"

def Mnemo_Dialect : Dialect {
  let name = "mnemo";
  let cppNamespace = "::mlir::mnemo";
  let summary = "Transformer building blocks as first-class ops";
  let description = [{
    The `mnemo` dialect holds the operations of transformer models that
    upstream MLIR cannot express as single ops: attention (MHA/GQA/MQA with
    causal, sliding-window, softcap, mask and sink), rotary embeddings with
    their scaling schemes, RMSNorm, SwiGLU, and explicit-layout linear and
    embedding ops. Every op has value (tensor) semantics and a reference
    decomposition into linalg/tensor/arith/math (`convert-mnemo-to-linalg`),
    which is the executable specification that fused kernels are tested
    against.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
  private:
    /// Registers the attributes (defined next to their storage classes).
    void registerAttributes();
  public:
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

class MNEMO_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mnemo_Dialect, mnemonic, traits>;

class MNEMO_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Mnemo_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def MNEMO_RopeScalingKind : I32EnumAttr<"RopeScalingKind",
    "how rotary frequencies are rescaled for long contexts", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Linear", 1, "linear">,
      I32EnumAttrCase<"Dynamic", 2, "dynamic">,
      I32EnumAttrCase<"Yarn", 3, "yarn">,
      I32EnumAttrCase<"Llama3", 4, "llama3">]> {
  let cppNamespace = "::mlir::mnemo";
  let genSpecializedAttr = 0;
}

def MNEMO_WeightLayout : I32EnumAttr<"WeightLayout",
    "storage order of a linear layer's weight matrix", [
      // [N, K]: out_features x in_features, as PyTorch's nn.Linear stores it.
      I32EnumAttrCase<"OutIn", 0, "out_in">,
      // [K, N]: in_features x out_features, as an ONNX MatMul consumes it.
      I32EnumAttrCase<"InOut", 1, "in_out">]> {
  let cppNamespace = "::mlir::mnemo";
  let genSpecializedAttr = 0;
}

def MNEMO_WeightLayoutAttr : EnumAttr<Mnemo_Dialect, MNEMO_WeightLayout,
                                      "weight_layout"> {
  let assemblyFormat = "$value";
}

#endif // MNEMO_DIALECT_MNEMOBASE
