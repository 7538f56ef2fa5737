//===- LinformerOps.td - Linformer operations --------------*- tablegen -*-===//
//
// The ops of the Linformer dialect, at two levels: the whole attention layer,
// and its parts (sequence projection, attention core) that tiling works on.
// docs/Spec.md documents each op with its constraints C1, C2, ...; the
// verifiers in LinformerOps.cpp check them and test/dialect/invalid.mlir
// tries each one.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_OPS_TD
#define LINFORMER_OPS_TD

include "dialect/IR/LinformerAttrs.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/TilingInterface.td"

class Linformer_Op<string mnemonic, list<Trait> traits = []>
    : Op<Linformer_Dialect, mnemonic, traits>;

def Linformer_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
def Linformer_IndexLikeTensor : RankedTensorOf<[I32, I64]>;
// Masks are i1, or i8 with nonzero = true. Compiled entry points take i8
// masks (one byte per flag), which is also what code generation keeps in
// memory: vectors of i1 are bit-packed, bytes are not.
def Linformer_MaskTensor : RankedTensorOf<[I1, I8]>;
// The attention core is destination-style: on tensors, or on buffers once
// bufferized.
def Linformer_FloatShaped : AnyTypeOf<[Linformer_FloatTensor,
    MemRefOf<[F16, BF16, F32, F64]>]>;
def Linformer_MaskShaped : AnyTypeOf<[Linformer_MaskTensor,
    MemRefOf<[I1, I8]>]>;

//===----------------------------------------------------------------------===//
// linformer.attention
//===----------------------------------------------------------------------===//

def Linformer_AttentionOp : Linformer_Op<"attention",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "a whole multi-head Linformer self-attention layer";
  let description = [{
    Computes, for input `X` of shape [b, n, d_model] and `h = heads`,
    `d = d_model / h`:

    ```
    Q = X W_q + b_q,  K = X W_k + b_k,  V = X W_v + b_v       [b, n, d_model]
    per head i:  Kp_i = P_E(K_i),  Vp_i = P_F(V_i)             [b, k, d]
                 head_i = softmax(Q_i Kp_i^T / sqrt(d)) Vp_i   [b, n, d]
    result = concat_i(head_i) W_o + b_o                        [b, n, d_model]
    ```

    `P_E` and `P_F` project the sequence axis n -> k as `projection` says:
    `learned` multiplies by E (or F), `mean_pool`/`max_pool` pool windows of
    n / k tokens, `conv` is a depthwise convolution with kernel = stride = n / k
    whose weights are `e` (and `f`). `sharing` says which of these parameters
    are shared; it fixes the shapes of `e` and `f` (see docs/Spec.md).

    Padding is given by `lengths` ([b], token t of sequence i is real iff
    t < lengths[i]) or by `mask` ([b, n], true = real token). Padded tokens
    contribute nothing to the projected K and V.

    `reassociate` (set by `--linformer-reassociate`, or by hand) chooses
    the order of the K/V computation: `E (X W_k)` when false or absent,
    `(E X) W_k` when true, which never materialises the full-length K and V.
    Only linear projections (`learned`, `mean_pool`) can be reassociated.

    `sequence_parallel = P` (P >= 2): the layer runs on one rank's share of
    a sequence split over P ranks: `input` holds its n tokens (the whole
    sequence has n P), `e` and `f` are its n columns of E and F, and the
    projected K and V are the sum of every rank's partial projections
    (decomposition puts a `linformer.all_reduce` after them); k may exceed
    n, not n P. Pooled and convolved projections split at window
    boundaries: P divides k, each rank projects its n / (k / P)-token
    windows to its k / P slots, and a `linformer.all_gather` assembles the
    k slots (and which of them hold a real token).

    Example:
    ```mlir
    %y = linformer.attention %x weights(%wq, %wk, %wv, %wo) heads(4) k(16)
           projection<learned> e(%e) f(%f) sharing<none>
           : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
              tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x16x64xf32>,
              tensor<4x16x64xf32>) -> tensor<2x64x32xf32>
    ```
  }];
  let arguments = (ins
    Linformer_FloatTensor:$input,
    Linformer_FloatTensor:$wq, Linformer_FloatTensor:$wk,
    Linformer_FloatTensor:$wv, Linformer_FloatTensor:$wo,
    Optional<Linformer_FloatTensor>:$bq, Optional<Linformer_FloatTensor>:$bk,
    Optional<Linformer_FloatTensor>:$bv, Optional<Linformer_FloatTensor>:$bo,
    Optional<Linformer_FloatTensor>:$e, Optional<Linformer_FloatTensor>:$f,
    Optional<Linformer_IndexLikeTensor>:$lengths,
    Optional<Linformer_MaskTensor>:$mask,
    ConfinedAttr<I64Attr, [IntPositive]>:$heads,
    ConfinedAttr<I64Attr, [IntPositive]>:$k,
    Linformer_ProjectionKindAttr:$projection,
    Linformer_SharingAttr:$sharing,
    OptionalAttr<BoolAttr>:$reassociate,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<2>]>>:$sequence_parallel
  );
  let results = (outs Linformer_FloatTensor:$result);
  let assemblyFormat = [{
    $input `weights` `(` $wq `,` $wk `,` $wv `,` $wo `)`
    (`biases` `(` $bq^ `,` $bk `,` $bv `,` $bo `)`)?
    `heads` `(` $heads `)` `k` `(` $k `)`
    `projection` `` $projection (`e` `(` $e^ `)`)? (`f` `(` $f^ `)`)?
    `sharing` `` $sharing
    (`lengths` `(` $lengths^ `)`)? (`mask` `(` $mask^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    int64_t getBatch() { return getInput().getType().getDimSize(0); }
    int64_t getSeqLen() { return getInput().getType().getDimSize(1); }
    int64_t getModelDim() { return getInput().getType().getDimSize(2); }
    int64_t getHeadDim() { return getModelDim() / getHeads(); }
    /// The operand that projects V: `f`, or `e` when K and V share it.
    ::mlir::Value getValueProjection() {
      return getSharing().getKv() ? getE() : getF();
    }
  }];
}

//===----------------------------------------------------------------------===//
// linformer.project
//===----------------------------------------------------------------------===//

def Linformer_ProjectOp : Linformer_Op<"project", [Pure, AttrSizedOperandSegments]> {
  let summary = "projects the sequence axis of K or V from n to k";
  let description = [{
    `input` is [b, h, n, d]; the result is [b, h, k, d]. With w = n / k:
    - `learned`: `weight` is E, [h, k, n] (per head) or [k, n] (shared by
      heads): `out[b,h,j,:] = sum_t E[h,j,t] * in[b,h,t,:]` over real t;
    - `mean_pool` / `max_pool`: no weight; slot j is the mean / max of the
      real tokens in [j*w, (j+1)*w);
    - `conv`: `weight` is [h, d, w] or [d, w]:
      `out[b,h,j,c] = sum_t W[h,c,t-j*w] * in[b,h,t,c]` over real t in the
      window.
    A pooled or convolved slot with no real token behind it is 0 (and the
    attention core must mask it out, see `linformer.attention_core`).
    `sequence_parallel = P`: `input` is one rank's share of a sequence of
    n P tokens and the result its partial sum (as on `linformer.attention`);
    `learned` only, k <= n P.

    Example:
    ```mlir
    %kp = linformer.project<mean_pool> %k lengths(%len)
            : (tensor<2x4x64x8xf32>, tensor<2xi32>) -> tensor<2x4x16x8xf32>
    ```
  }];
  let arguments = (ins
    Linformer_FloatTensor:$input,
    Optional<Linformer_FloatTensor>:$weight,
    Optional<Linformer_IndexLikeTensor>:$lengths,
    Optional<Linformer_MaskTensor>:$mask,
    Linformer_ProjectionKindAttr:$kind,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<2>]>>:$sequence_parallel
  );
  let results = (outs Linformer_FloatTensor:$result);
  let assemblyFormat = [{
    `` $kind $input (`,` $weight^)? (`lengths` `(` $lengths^ `)`)?
    (`mask` `(` $mask^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    int64_t getSeqLen() { return getInput().getType().getDimSize(2); }
    int64_t getProjectedLen() { return getResult().getType().getDimSize(2); }
    /// True when one weight serves every head (a weight of rank 2).
    bool isSharedAcrossHeads() {
      return getWeight() &&
             ::llvm::cast<::mlir::RankedTensorType>(getWeight().getType())
                     .getRank() == 2;
    }
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$resultType, "ProjectionKind":$kind,
                   "::mlir::Value":$input, "::mlir::Value":$weight,
                   "::mlir::Value":$lengths, "::mlir::Value":$mask), [{
      build($_builder, $_state, resultType, input, weight, lengths, mask,
            ProjectionKindAttr::get($_builder.getContext(), kind),
            ::mlir::IntegerAttr());
    }]>
  ];
}

//===----------------------------------------------------------------------===//
// linformer.attention_core
//===----------------------------------------------------------------------===//

def Linformer_AttentionCoreOp : Linformer_Op<"attention_core", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<ConditionallySpeculatable>,
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<TilingInterface,
        ["getLoopIteratorTypes", "getIterationDomain",
         "getTiledImplementation", "getResultTilePosition",
         "generateResultTileValue"]>]> {
  let summary = "softmax(Q Kp^T * scale) Vp over projected keys and values";
  let description = [{
    `q` is [b, h, n, d], `key` is [b, h, k, d], `value` is [b, h, k, dv];
    the result, written into `init` (destination-passing style, as linalg's
    `outs`), is [b, h, n, dv]:

    ```
    S[b,h,i,j] = scale * sum_c q[b,h,i,c] * key[b,h,j,c]      (masked: -inf)
    result[b,h,i,:] = sum_j softmax_j(S[b,h,i,:]) * value[b,h,j,:]
    ```

    `key_mask` ([b, k], true = valid slot) removes projected slots that have
    no real token behind them; every row must keep at least one valid slot.
    `init`'s values are never read: it only says where the result goes.

    On tensors the op has one result, of `init`'s type. One-shot
    bufferization turns it into the same op on buffers, with no result,
    which reads `q`, `key`, `value` and `key_mask` and writes `init`: the
    CUDA pipeline keeps the core whole across bufferization this way and
    expands it on buffers into one kernel
    (`linformer-cuda-expand-attention-core`). On buffers the element types
    may differ (the CUDA pipeline narrows an operand to a 16-bit twin
    independently of the others); on tensors they agree.

    The op implements the TilingInterface over its result's dimensions
    (batch, heads, query rows, value channels), all parallel: a tile reads
    its query rows and all k projected keys and values, so tiles are
    independent and the k-sized softmax stays whole inside each. Code
    generation tiles the op first and lowers each tile to linalg
    (scores, softmax, weighted sum) afterwards.

    Example:
    ```mlir
    %o = linformer.attention_core %q, %kp, %vp scale(0.125) outs(%init)
           : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>,
              tensor<2x4x16x8xf32>, tensor<2x4x64x8xf32>)
           -> tensor<2x4x64x8xf32>
    linformer.attention_core %qb, %kb, %vb scale(0.125) outs(%ob)
           : (memref<2x4x64x8xbf16>, memref<2x4x16x8xbf16>,
              memref<2x4x16x8xf32>, memref<2x4x64x8xbf16>) -> ()
    ```
  }];
  let arguments = (ins
    Linformer_FloatShaped:$q,
    Linformer_FloatShaped:$key,
    Linformer_FloatShaped:$value,
    Optional<Linformer_MaskShaped>:$key_mask,
    Linformer_FloatShaped:$init,
    F64Attr:$scale
  );
  let results = (outs Optional<Linformer_FloatTensor>:$result);
  let assemblyFormat = [{
    $q `,` $key `,` $value `scale` `(` $scale `)`
    (`key_mask` `(` $key_mask^ `)`)? `outs` `(` $init `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
    /// Whether the values are as wide as the heads (dv == d): then one
    /// channel loop indexes q, key, value and the result, which is what
    /// the CUDA pipeline's fused core kernel needs
    /// (linformer-lower-to-linalg{keep-fusable-core} keeps such cores,
    /// linformer-cuda-expand-attention-core expands them).
    bool hasHeadWideValues() {
      return ::llvm::cast<::mlir::ShapedType>(getQ().getType()).getDimSize(3) ==
             ::llvm::cast<::mlir::ShapedType>(getValue().getType()).getDimSize(3);
    }
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// linformer.all_reduce
//===----------------------------------------------------------------------===//

def Linformer_AllReduceOp : Linformer_Op<"all_reduce", [
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "sums a value over the ranks of a sequence-parallel run";
  let description = [{
    Every rank of a sequence split over `ranks` ranks holds its partial sum
    of `init` (its tokens' share of a projection over the sequence); the
    result is the sum over all ranks, on every rank. The op does not say
    how: the CPU pipeline makes it a collective step of the dispatch plan,
    which the runtime performs through the application's all-reduce
    (`lf_session_options::all_reduce`), in place on the buffer. Every rank
    runs the same steps in the same order, so the collectives match up.

    On tensors the result is `init` summed (in place after bufferization);
    on buffers the op has no result and sums `init` in place.

    ```mlir
    %sum = linformer.all_reduce ranks(2) outs(%ex)
             : tensor<1x256x512xf32> -> tensor<1x256x512xf32>
    linformer.all_reduce ranks(2) outs(%buf) : memref<1x256x512xf32>
    ```
  }];
  let arguments = (ins
    Linformer_FloatShaped:$init,
    ConfinedAttr<I64Attr, [IntMinValue<2>]>:$ranks
  );
  let results = (outs Optional<Linformer_FloatTensor>:$result);
  let assemblyFormat = [{
    `ranks` `(` $ranks `)` `outs` `(` $init `)` attr-dict `:` type($init)
    (`->` type($result)^)?
  }];
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// linformer.all_gather
//===----------------------------------------------------------------------===//

def Linformer_AllGatherOp : Linformer_Op<"all_gather", [
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "concatenates every rank's share of a value along an axis";
  let description = [{
    Every rank of a sequence split over `ranks` ranks holds `share`, its
    block of a value along `axis` (the slots its own pooling windows
    project to); the result, on every rank, is the blocks of ranks 0 to
    P - 1 in order along that axis: `init`'s shape, with `axis` P times
    `share`'s. The CPU pipeline makes it a collective step of the dispatch
    plan, which the runtime performs through the same all-reduce as
    `linformer.all_reduce`: it zeroes the whole buffer, copies its rank's
    blocks into place, and sums over the ranks (each element is one rank's
    value plus zeros, so the gather is exact).

    On tensors the result is the gathered value in `init`'s type (whose
    contents are not read); on buffers the op has no result and writes
    `init`.

    ```mlir
    %k = linformer.all_gather ranks(2) axis(2) ins(%share : tensor<1x4x8x16xf32>)
           outs(%init : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    ```
  }];
  let arguments = (ins
    Linformer_FloatShaped:$share,
    Linformer_FloatShaped:$init,
    ConfinedAttr<I64Attr, [IntMinValue<2>]>:$ranks,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$axis
  );
  let results = (outs Optional<Linformer_FloatTensor>:$result);
  let assemblyFormat = [{
    `ranks` `(` $ranks `)` `axis` `(` $axis `)`
    `ins` `(` $share `:` type($share) `)`
    `outs` `(` $init `:` type($init) `)` attr-dict
    (`->` type($result)^)?
  }];
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
    /// Contiguous blocks of `share` (the product of its dimensions before
    /// `axis`): the runtime places block i at i P + rank.
    int64_t getBlocks();
  }];
  let hasVerifier = 1;
}

#endif // LINFORMER_OPS_TD
