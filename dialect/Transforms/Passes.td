//===- Passes.td - Linformer dialect-level passes ----------*- tablegen -*-===//
//
// Passes that work on the Linformer dialect itself, before any lowering.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_DIALECT_TRANSFORMS_PASSES_TD
#define LINFORMER_DIALECT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LinformerVerifyLayerSharingPass
    : Pass<"linformer-verify-layer-sharing", "::mlir::ModuleOp"> {
  let summary = "checks that layers claiming layer sharing use one projection";
  let description = [{
    An op whose sharing has `layers` claims that its projection parameters are
    the same for every layer of the model. One op cannot check that alone, so
    this module-level check does: within each function, every
    `linformer.attention` op with `layers` sharing must use the same SSA value
    for `e` (and for `f`) as the first such op. Ops with a parameter-free
    projection (pooling) have nothing to share and are not checked.

    Bad:
    ```mlir
    %0 = linformer.attention %x ... projection<learned> e(%e0) sharing<layerwise> ...
    %1 = linformer.attention %0 ... projection<learned> e(%e1) sharing<layerwise> ...
    // error: claims layer sharing, but its 'e' is not the value used by the
    // first layer-shared op
    ```
  }];
}

#endif // LINFORMER_DIALECT_TRANSFORMS_PASSES_TD
