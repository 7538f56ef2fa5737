//===- LinformerAttrs.td - Linformer attributes ------------*- tablegen -*-===//
//
// The projection kind and the sharing of projections.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_ATTRS_TD
#define LINFORMER_ATTRS_TD

include "dialect/IR/LinformerBase.td"

class Linformer_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Linformer_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Linformer_ProjectionKindAttr
    : EnumAttr<Linformer_Dialect, Linformer_ProjectionKind, "projection"> {
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    The projection kind: `learned` (matrices E, F of k x n), `mean_pool` and
    `max_pool` (window = stride = n / k), `conv` (depthwise convolution along
    the sequence, kernel = stride = n / k, learned per-channel weights).
  }];
}

def Linformer_SharingAttr : Linformer_Attr<"Sharing", "sharing"> {
  let summary = "which projections are shared (heads, K/V, layers)";
  let description = [{
    Three orthogonal facts about the projection parameters, each on or off:
    - `heads`: one projection for all heads of a layer;
    - `kv`: one projection for both K and V (E = F);
    - `layers`: one projection value for every layer of the model.

    The paper's presets print by name where the flags match them; the paper's
    presets are nested (each adds to the one before):

    | preset      | heads | kv | layers |
    |-------------|-------|----|--------|
    | `none`      |       |    |        |
    | `headwise`  |   x   |    |        |
    | `key_value` |   x   | x  |        |
    | `layerwise` |   x   | x  |   x    |

    Any other combination prints as its flags, e.g. `#linformer.sharing<kv>`
    (one E = F per head) or `#linformer.sharing<heads, layers>` (separate E
    and F, each shared by all layers).
  }];
  let parameters = (ins "bool":$heads, "bool":$kv, "bool":$layers);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// The paper's preset name for these flags, or an empty string.
    ::llvm::StringRef getPresetName() const;
    /// Builds the attribute for a preset name; null if the name is unknown.
    static SharingAttr getPreset(::mlir::MLIRContext *ctx, ::llvm::StringRef name);
  }];
}

#endif // LINFORMER_ATTRS_TD
