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

def LinformerReassociatePass
    : Pass<"linformer-reassociate", "::mlir::func::FuncOp"> {
  let summary = "chooses E (X W) or (E X) W for K and V, per layer";
  let description = [{
    The sequence projection is linear for `learned` and `mean_pool`, so
    `E (X W_k + b_k) = (E X) W_k + (E 1) b_k`. Computing `E X` first never
    materialises the full-length K and V ([b, n, d_model]), and costs
    `2 b k n d_model + 2 b k d_model^2` instead of
    `2 b n d_model^2 + 2 b k n d_model` per projection; with E shared by
    heads and between K and V (`key_value`, `layerwise`), `E X` is computed
    once for both.

    A FLOP/byte cost model compares both orders for each layer:
    `cost = flops + flops-per-byte * bytes moved through memory`, and sets
    the layer's `reassociate` attribute; the decomposition follows it. The
    estimates are recorded as `linformer.reassociation_cost` so that the
    choice can be read in `--mlir-print-ir-after`. `mode=always|never`
    forces either order (for layers whose projection is linear). A layer
    that already has `reassociate` keeps it.

    ```mlir
    // n = 4096, k = 256, d_model = 512, layerwise sharing: reassociated
    %y = linformer.attention ... sharing<layerwise>
           {linformer.reassociation_cost = {reassociated = 1373634560 : i64,
                                            standard = 7113539584 : i64},
            reassociate = true} : ...
    ```
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"auto\"",
           "auto (cost model), always, or never">,
    Option<"flopsPerByte", "flops-per-byte", "double", /*default=*/"20.0",
           "Machine balance: FLOPs that cost as much as one byte of memory "
           "traffic (peak FLOP/s over memory bandwidth)">
  ];
}

#endif // LINFORMER_DIALECT_TRANSFORMS_PASSES_TD
