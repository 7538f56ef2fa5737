//===- Reference.h - Linformer attention in C++ (test oracle) ---*- C++ -*-===//
//
// The reference implementation of one multi-head Linformer attention layer and
// of its parts (the n -> k sequence projection and the attention core). It is
// the oracle every compiled kernel is checked against, so it favours clarity
// and accuracy over speed: straight loops, float32 storage, double
// accumulation for every dot product, sum and softmax.
//
// No MLIR/LLVM dependency and no exceptions: every entry point validates its
// arguments and returns an error message ("" on success) instead of crashing.
//
// Layouts (all row-major, float32):
//   x, out           [b, n, dm]
//   wq, wk, wv, wo   [dm, dm]   used as y = x @ W (W[in][out])
//   bq, bk, bv, bo   [dm]
//   per-head tensors [b, h, n, d] / [b, h, k, d]; head hh owns channels
//                    [hh*d, (hh+1)*d) of the dm-wide rows.
//   lengths          [b] int32, token t of sequence i is real iff t < lengths[i]
//   mask             [b, n] uint8, nonzero = real token
//   valid slots      [b, k] uint8, nonzero = the projected slot holds data
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_REFERENCE_REFERENCE_H
#define LINFORMER_LIB_REFERENCE_REFERENCE_H

#include <cstdint>
#include <string>
#include <vector>

namespace linformer {
namespace ref {

/// How the sequence axis is shortened from n to k. The four kinds of the
/// Linformer paper; the names match the dialect's attribute spelling.
enum class ProjectionKind { Learned, MeanPool, MaxPool, Conv };

/// "learned", "mean_pool", "max_pool" or "conv".
const char *projectionKindName(ProjectionKind kind);

/// Inverse of projectionKindName; returns false for an unknown name.
bool parseProjectionKind(const std::string &name, ProjectionKind &kind);

/// Whether the kind shortens the sequence by fixed windows of w = n / k tokens
/// (pools and conv). Such kinds need n % k == 0 and can produce empty (invalid)
/// slots under padding; the learned projection mixes all tokens into all slots.
bool isWindowed(ProjectionKind kind);

/// Sharing facts that matter inside one layer. Layer sharing is a graph fact
/// (several layers use one value) and does not change one layer's numbers.
struct Sharing {
  /// One projection for all heads: E is [k, n] (learned) or [d, w] (conv)
  /// instead of [h, k, n] / [h, d, w].
  bool heads = false;
  /// K and V use the same projection: F is not given and F = E.
  bool kv = false;
};

struct LayerConfig {
  int64_t batch = 1;
  int64_t seqLen = 1;  ///< n
  int64_t dModel = 1;  ///< dm
  int64_t heads = 1;   ///< h; head dim d = dm / h
  int64_t projLen = 1; ///< k
  ProjectionKind kind = ProjectionKind::Learned;
  Sharing sharing;
  bool hasBias = false;

  /// d = dm / h (meaningful only once validate() returned "").
  int64_t headDim() const { return heads > 0 ? dModel / heads : 0; }
  /// Pool/conv window w = n / k (meaningful only once validate() returned "").
  int64_t window() const { return projLen > 0 ? seqLen / projLen : 0; }
};

/// Non-owning views of a layer's parameters. Biases are read only when
/// LayerConfig::hasBias is set (then all four are required) and are ignored
/// otherwise. e and f are unused for pooling; f is ignored when K/V sharing is
/// on (F = E) and is required otherwise for learned/conv.
struct LayerWeights {
  const float *wq = nullptr, *wk = nullptr, *wv = nullptr, *wo = nullptr;
  const float *bq = nullptr, *bk = nullptr, *bv = nullptr, *bo = nullptr;
  const float *e = nullptr;
  const float *f = nullptr;
};

//===----------------------------------------------------------------------===//
// Validation and shapes
//===----------------------------------------------------------------------===//

/// Checks sizes and the kind/size constraints of a layer. Returns "" when the
/// configuration is usable, otherwise a message naming the offending value,
/// e.g. "d_model 30 is not divisible by heads 4".
std::string validate(const LayerConfig &config);

/// Checks the optional padding description: at most one of lengths/mask, every
/// length in [1, n], every mask row with at least one real token.
std::string validatePadding(int64_t batch, int64_t seqLen,
                            const int32_t *lengths, const uint8_t *mask);

/// Checks that every parameter the configuration needs is present.
std::string validateWeights(const LayerConfig &config,
                            const LayerWeights &weights);

/// Shape of one projection parameter (E or F) for the given kind and sharing:
/// learned [h, k, n] or [k, n]; conv [h, d, w] or [d, w]; pooling {} (none).
std::vector<int64_t> projectionWeightShape(ProjectionKind kind, int64_t heads,
                                           int64_t seqLen, int64_t headDim,
                                           int64_t projLen,
                                           bool sharedAcrossHeads);

/// Element count of projectionWeightShape (0 for pooling).
int64_t projectionWeightElements(ProjectionKind kind, int64_t heads,
                                 int64_t seqLen, int64_t headDim,
                                 int64_t projLen, bool sharedAcrossHeads);

/// Same, taking the sizes and sharing from a layer configuration.
int64_t projectionWeightElements(const LayerConfig &config);

/// 1 / sqrt(d): the attention scale of the paper.
float defaultScale(int64_t headDim);

//===----------------------------------------------------------------------===//
// The parts
//===----------------------------------------------------------------------===//

/// Fills validSlots [b, k]: 1 where projected slot j of sequence i holds at
/// least one real token. Learned slots are always valid (every slot mixes all
/// real tokens); windowed slots are valid iff their window [j*w, (j+1)*w)
/// contains a real token. lengths and mask may both be null (all real).
std::string validSlotMask(ProjectionKind kind, int64_t batch, int64_t seqLen,
                          int64_t projLen, const int32_t *lengths,
                          const uint8_t *mask, uint8_t *validSlots);

/// Projects input [b, h, n, d] along n to out [b, h, k, d]. Padded tokens
/// contribute nothing; an invalid (empty) windowed slot is written as 0 and
/// flagged 0 in validSlots (optional, [b, k]).
///   learned : out[j] = sum_t E[hh][j][t] * in[t]          E [h,k,n] / [k,n]
///   mean    : out[j] = mean of real in[t], t in window j  weights null
///   max     : out[j] = elementwise max of the same        weights null
///   conv    : out[j][c] = sum_t W[hh][c][t - j*w] * in[t][c]   W [h,d,w]/[d,w]
std::string sequenceProjection(ProjectionKind kind, int64_t batch,
                               int64_t heads, int64_t seqLen, int64_t headDim,
                               int64_t projLen, const float *input,
                               const float *weights,
                               bool weightsSharedAcrossHeads,
                               const int32_t *lengths, const uint8_t *mask,
                               float *out, uint8_t *validSlots = nullptr);

/// out[b,h,i,:] = softmax_j(scale * q[b,h,i,:] . kp[b,h,j,:]) @ vp[b,h,:,:].
/// q [b,h,n,d], kp [b,h,k,d], vp [b,h,k,dv], out [b,h,n,dv]. Slots with
/// keyMask[b][j] == 0 get a logit of -infinity; keyMask (optional, [b, k])
/// must leave at least one valid slot per sequence. The softmax subtracts the
/// row maximum, so huge logits give finite results.
std::string attentionCore(int64_t batch, int64_t heads, int64_t seqLen,
                          int64_t projLen, int64_t headDim, int64_t valueDim,
                          const float *q, const float *kp, const float *vp,
                          float scale, const uint8_t *keyMask, float *out);

/// attentionCore with scale = defaultScale(headDim).
std::string attentionCore(int64_t batch, int64_t heads, int64_t seqLen,
                          int64_t projLen, int64_t headDim, int64_t valueDim,
                          const float *q, const float *kp, const float *vp,
                          const uint8_t *keyMask, float *out);

/// y [rows, outDim] = x [rows, inDim] @ w [inDim, outDim] (+ bias [outDim]
/// when non-null). The projections Q/K/V/O of the layer.
std::string linear(int64_t rows, int64_t inDim, int64_t outDim, const float *x,
                   const float *w, const float *bias, float *y);

/// [b, n, h*d] -> [b, h, n, d]: head hh takes channels [hh*d, (hh+1)*d).
std::string splitHeads(int64_t batch, int64_t seqLen, int64_t heads,
                       int64_t headDim, const float *in, float *out);

/// Inverse of splitHeads: [b, h, n, d] -> [b, n, h*d].
std::string mergeHeads(int64_t batch, int64_t seqLen, int64_t heads,
                       int64_t headDim, const float *in, float *out);

//===----------------------------------------------------------------------===//
// The whole layer
//===----------------------------------------------------------------------===//

/// One multi-head Linformer attention layer: x [b, n, dm] -> out [b, n, dm].
/// Q/K/V = x W + b, split into heads, K projected with E and V with F (E when
/// K/V-shared), attention core with scale 1/sqrt(d) and the valid-slot mask,
/// heads merged, out = A Wo + bo. At most one of lengths/mask may be given;
/// padded query rows are computed like any other row.
std::string attentionLayer(const LayerConfig &config,
                           const LayerWeights &weights, const float *x,
                           const int32_t *lengths, const uint8_t *mask,
                           float *out);

} // namespace ref
} // namespace linformer

#endif // LINFORMER_LIB_REFERENCE_REFERENCE_H
