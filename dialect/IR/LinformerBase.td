//===- LinformerBase.td - Linformer dialect definition -----*- tablegen -*-===//
//
// The dialect record and the enums shared by the attribute and op files.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_BASE_TD
#define LINFORMER_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/AttrTypeBase.td"

def Linformer_Dialect : Dialect {
  let name = "linformer";
  let summary = "Linformer attention: low-rank self-attention with sequence projections";
  let description = [{
    The `linformer` dialect represents Linformer attention (Wang et al., 2020):
    keys and values are projected along the sequence axis, n -> k, before the
    attention core, so attention costs O(n*k) instead of O(n^2).

    It has ops at two levels: `linformer.attention`, a whole multi-head
    attention layer that keeps the algebra visible to rewrites, and its parts,
    `linformer.project` (the n -> k sequence projection, for every projection
    kind) and `linformer.attention_core` (`softmax(Q Kp^T * scale) Vp`), which
    are what tiling and fusion work on. All ops work on builtin ranked tensors
    and carry the batch dimension.
  }];
  let cppNamespace = "::mlir::linformer";
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def Linformer_ProjectionKind : I32Enum<"ProjectionKind",
    "how the sequence axis is projected from n to k", [
      I32EnumCase<"learned", 0>,
      I32EnumCase<"mean_pool", 1>,
      I32EnumCase<"max_pool", 2>,
      I32EnumCase<"conv", 3>
    ]> {
  let cppNamespace = "::mlir::linformer";
}

#endif // LINFORMER_BASE_TD
