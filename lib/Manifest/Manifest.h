//===- Manifest.h - The artifact manifest: schema, parse, write -*- C++ -*-===//
//
// The manifest is the contract between the compiler and the runtime: which
// buffers a compiled model uses (inputs, weights, outputs, intermediates, with
// dtypes and shapes), which kernels run in which order over which buffers, and
// the schedule each kernel was built with. The compiler fills a Manifest and
// serializes it into the artifact's "manifest" section; the runtime parses it
// and trusts nothing it has not validated here.
//
// Schema (format_version 2), as in docs/Runtime.md:
//
//   { "format": "linformer-artifact", "format_version": 2,
//     "compiler_version": "0.1.0",
//     "target": {"kind": "cpu", "cpu": "emeraldrapids",
//                "features": "+avx512f", "description": {...}},
//     "entry": "encoder",
//     "buffers": [
//       {"name": "x", "kind": "input", "dtype": "f32",
//        "shape": [1, 4096, 512]},
//       {"name": "lengths", "kind": "input", "dtype": "i32", "shape": [1],
//        "role": "lengths"},
//       {"name": "w", "kind": "weight", "dtype": "f32", "shape": [512, 512]},
//       {"name": "y", "kind": "output", "dtype": "f32",
//        "shape": [1, 4096, 512]},
//       {"name": "tmp3", "kind": "intermediate", "bytes": 8388608} ],
//     "kernels": [ {"symbol": "encoder_kernel_0", "workgroups": 384,
//                   "buffers": [2, 0, 4], "schedule": {...}} ],
//     "code_sha256": {"cpu.so": "<64 hex digits>"},
//   For target kind "cuda" each kernel also has "grid": [x, y, z],
//   "block": [x, y, z] and "shared_bytes", and the code sections are
//   "cuda.ptx" (required) and "cuda.sm_NN.cubin" (optional).
//     "model": {...} }
//
// Version 2 added "code_sha256" (required for every code section the target
// loads) and the kernel records the objects must carry (KernelObject.h).
//
// Kernel buffer ids index "buffers". "schedule", the target's
// "description" and "model" are free-form objects kept verbatim (key order
// included). Unknown keys are ignored so
// that a newer compiler can add information older runtimes do not need;
// anything that changes meaning bumps format_version.
//
// No exceptions cross this interface; errors are strings that start with
// "manifest: " and name the offending entry.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_MANIFEST_MANIFEST_H
#define LINFORMER_LIB_MANIFEST_MANIFEST_H

#include "lib/Manifest/Common.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace linformer {

inline constexpr int kManifestFormatVersion = 2;
/// The version of a manifest with length variants (kernels with
/// `max_length`): a runtime that reads 2 only would launch every variant,
/// so such a manifest says 3, and only such a manifest does.
inline constexpr int kManifestFormatVersionVariants = 3;
/// The version of a manifest whose kernels index the sequence buffers
/// packed (`sequence_layout: "packed"`): a runtime that reads 2 or 3 only
/// would hand them padded tensors, so such a manifest says 4, and only
/// such a manifest does.
inline constexpr int kManifestFormatVersionPacked = 4;
/// The version of a manifest with initializers (kernels run once per
/// session, writing `constant` buffers): a runtime that reads 2 to 4 only
/// would refuse the buffer kind, so such a manifest says 5, and only such
/// a manifest does.
inline constexpr int kManifestFormatVersionInitializers = 5;
/// The version of a sequence-parallel manifest (all-reduce steps, weights
/// split along the sequence): a runtime that reads 2 to 5 only would look
/// for the steps' code and bind whole weights, so such a manifest says 6,
/// and only such a manifest does.
inline constexpr int kManifestFormatVersionCollectives = 6;
/// The version of a manifest with tensor maps (cuda buffers of kind
/// `tensor_map`, which the runtime encodes for the kernels' TMA copies): a
/// runtime that reads 2 to 6 only would refuse the buffer kind, so such a
/// manifest says 7, and only such a manifest does.
inline constexpr int kManifestFormatVersionTensorMaps = 7;
inline constexpr const char *kManifestFormat = "linformer-artifact";
/// The code sections of a cuda artifact: the kernels' PTX (always) and,
/// when the compiler found ptxas, their cubin for the target's SM.
inline constexpr const char *kCudaPtxSection = "cuda.ptx";
/// An artifact with both targets (linformer-compile --target=cpu,cuda) has
/// the cpu manifest in "manifest" and the cuda one here.
inline constexpr const char *kCudaManifestSection = "manifest.cuda";
/// "cuda.sm_90.cubin" for target cpu "sm_90".
std::string cudaCubinSection(const std::string &sm);

/// Constant: what initializer kernels make from the weights when a session
/// is created (packed panels of a weight), kept for the session's life and
/// only read by the kernels of a run. Like an intermediate, its size is
/// only `bytes`. TensorMap: a cuda tensor map (ManifestTensorMap), which
/// the runtime writes and the kernels only read.
enum class BufferKind {
  Input,
  Weight,
  Output,
  Intermediate,
  Constant,
  TensorMap
};
/// "input", "weight", "output", "intermediate", "constant", "tensor_map".
const char *bufferKindName(BufferKind kind);

/// What the runtime fills an input with on the caller's behalf.
///   Lengths: [b] i32, the number of real tokens of each sequence.
///   Mask:    [b, n] u8, nonzero = real token.
enum class BufferRole { None, Lengths, Mask };
/// "", "lengths", "mask".
const char *bufferRoleName(BufferRole role);

/// A tensor map (cuda, sm_90 and later): the 128-byte descriptor of a
/// tiled view of buffer `source` that cuTensorMapEncodeTiled makes and the
/// kernels' TMA copies (`cp.async.bulk.tensor`) read. The runtime encodes
/// it into its buffer when a session is made, and again before a run that
/// binds the source at another device address. Dimensions innermost first,
/// as the driver takes them (and the copies' coordinates name them).
struct ManifestTensorMap {
  /// The buffer it views (an index into Manifest::buffers, not a map).
  int64_t source = -1;
  /// Its elements' type, and the view's first byte in the source.
  DType dtype = DType::F32;
  uint64_t offset = 0;
  /// Elements along each dimension (1 to 5 of them), and the bytes
  /// between consecutive indices of dimensions 1 and up (multiples of 16).
  std::vector<int64_t> dims, strides;
  /// The elements a copy moves along each dimension (1 to 256; the
  /// innermost in whole 16 bytes), and the shared-memory swizzle span in
  /// bytes (0: none; 32, 64 or 128, at least the box's innermost bytes).
  std::vector<int64_t> box;
  int64_t swizzle = 0;

  /// The bytes of `source` past `offset` the view can reach.
  uint64_t extentBytes() const;
};

/// The bytes of an encoded tensor map (CUtensorMap).
inline constexpr uint64_t kTensorMapBytes = 128;

struct ManifestBuffer {
  std::string name;
  BufferKind kind = BufferKind::Input;
  /// dtype and shape are meaningful for every kind but intermediate and
  /// constant, whose size is only `bytes`.
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  BufferRole role = BufferRole::None;
  /// Outputs: whether the output holds tokens, [b, n, ...] of the sequence
  /// inputs (rows past a sequence's length are padding), as the compiler's
  /// token analysis found; not one that merely has their [b, n] (E X with
  /// k = n). Absent (compilers before it, and every other kind): the
  /// runtime takes an output of the inputs' [b, n] for one. An older
  /// runtime ignores it and decides by the shape.
  std::optional<bool> sequence;
  /// Weights of a sequence-parallel model (`sequence_split`: P): the
  /// compiled model takes one rank's share of the last axis, `shape` (E's
  /// [k, n] columns of a rank); a weights file holds it whole (last axis
  /// n P, the session binds its rank's columns) or that share itself. 0:
  /// the weight as it is.
  int64_t sequenceSplit = 0;
  /// Intermediates and constants: the size the compiler planned. Others:
  /// ignored on write, and filled with the dtype/shape size on parse.
  uint64_t bytes = 0;
  /// Tensor maps: what the map views.
  ManifestTensorMap tensorMap;

  /// Bytes the buffer occupies.
  uint64_t byteSize() const;
  /// Whether only `bytes` describes it (an intermediate or a constant).
  bool sizedInBytes() const {
    return kind == BufferKind::Intermediate || kind == BufferKind::Constant;
  }
};

struct ManifestKernel {
  /// The kernel's name; the shared object exports `<symbol>_dispatch`.
  std::string symbol;
  int64_t workgroups = 1;
  /// Indices into Manifest::buffers, in the order the kernel's dispatch
  /// function receives the base pointers.
  std::vector<int64_t> buffers;
  /// The schedule as a JSON object text; "{}" when the compiler has none.
  std::string scheduleJson = "{}";
  /// CUDA kernels (required there, absent for cpu): the launch's grid and
  /// block shapes (x, y, z) and its dynamic shared memory in bytes.
  /// `symbol` is the kernel's entry in the module's PTX/cubin; its
  /// parameters are the bound buffers' device pointers, in order.
  std::vector<int64_t> grid, block;
  int64_t sharedBytes = 0;
  /// The length rule (cpu kernels whose workgroups are tiles of tokens):
  /// workgroups are the row-major enumeration of `rowsGrid`; dimension
  /// `rowsBatch` is the sequence, dimension `rowsRow` a tile of `rowsTile`
  /// tokens. A run with real lengths len[s] needs only the workgroups of
  /// sequence s whose row is below ceil(len[s] / rowsTile). Empty grid: no
  /// rule (every workgroup runs).
  std::vector<int64_t> rowsGrid;
  int64_t rowsBatch = 0, rowsRow = 0, rowsTile = 0;
  bool hasRows() const { return !rowsGrid.empty(); }
  /// A length variant (cuda kernels): `{lo, hi}`, launched only in runs
  /// whose longest sequence has more than lo and at most hi tokens (the
  /// run's other variants compute the same values for other lengths).
  /// Empty: every run.
  std::vector<int64_t> maxLength;
  /// The buffers (ids, each one of `buffers`) the kernel may write (cuda
  /// kernels; `hasWrites`): it only reads the others. Without the record
  /// (artifacts before it) every buffer it binds counts as written.
  std::vector<int64_t> writes;
  bool hasWrites = false;
  /// Whether the kernel may write buffer `id`.
  bool mayWrite(int64_t id) const {
    return !hasWrites ||
           std::find(writes.begin(), writes.end(), id) != writes.end();
  }
  /// Which code generator made the kernel: "mlir" (our pipeline, the
  /// default, not written) or "halide" (docs/Rationale.md, "Halide"). The
  /// runtime calls both alike.
  std::string generator = "mlir";
  /// An initializer (cpu kernels): run once when a session is created, in
  /// manifest order with the other initializers, and never in a run. It
  /// binds weights and constants only; the constants are what it writes.
  bool initializer = false;
  /// A collective step (`all_reduce`: {ranks: P, dtype}), not a kernel: the
  /// runtime sums its one buffer, an intermediate of `allReduceDtype`
  /// elements, over the P ranks of a sequence-parallel run, in place,
  /// through the application's all-reduce (lf_session_options). It has no
  /// code (`symbol` names the step), one workgroup, and no schedule. 0: a
  /// kernel.
  int64_t allReduce = 0;
  DType allReduceDtype = DType::F32;
  /// An all-gather (`all_reduce.gather_blocks`: B >= 1): two buffers,
  /// [share, whole], the whole P times the share. The share is B
  /// contiguous blocks; the runtime zeroes the whole, copies block i of its
  /// share to block i P + rank of the whole, and sums the whole over the
  /// ranks (each element one rank's value plus zeros). 0: a sum in place.
  int64_t gatherBlocks = 0;
  bool isCollective() const { return allReduce != 0; }
};

struct ManifestTarget {
  std::string kind = "cpu"; ///< "cpu" or "cuda"
  std::string cpu;          ///< e.g. "emeraldrapids" (cpu) or "sm_90" (cuda)
  std::string features;     ///< LLVM feature string, "+avx512f,+avx512bw"
  /// What the schedules were chosen for (a JSON object text: ISA, vector
  /// width and registers, caches, cores; see compiler/Schedule/Target.h);
  /// empty = absent.
  std::string descriptionJson;
};

struct Manifest {
  int formatVersion = kManifestFormatVersion;
  std::string compilerVersion;
  ManifestTarget target;
  std::string entry;
  std::vector<ManifestBuffer> buffers;
  std::vector<ManifestKernel> kernels;
  /// SHA-256 (lower-case hex) of each code section, by section name; the
  /// runtime checks it before loading the code.
  std::vector<std::pair<std::string, std::string>> codeSha256;
  /// Free-form model description (JSON object text); empty = absent.
  std::string modelJson;
  /// How the kernels index the sequence inputs and outputs ([b, n, ...]):
  /// false, padded (sequence s at row s * n); true, packed (each
  /// sequence's real tokens end to end, sequence s at row lengths[0] + ...
  /// + lengths[s - 1]; cpu artifacts with a lengths input only).
  bool packedSequences = false;
  /// What the contractions multiply: "f32" (exact), or "bf16" (bf16
  /// factors, f32 sums: a bf16 model's, or --precision=bf16). Serialized
  /// as "products" when not f32.
  std::string products = "f32";

  /// The recorded hash of section `name`, or "".
  std::string sha256Of(std::string_view name) const;

  /// Index of the buffer named `name`, or -1.
  int64_t findBuffer(std::string_view name) const;

  /// The buffer a kernel binding buffer `id` reads or writes: a tensor
  /// map's source (the map itself is only read), else `id`.
  int64_t viewedBuffer(int64_t id) const;
};

/// The ranks of a sequence-parallel manifest (its all-reduce steps'), or 0.
int64_t sequenceParallelRanks(const Manifest &m);

/// Whether `m` has tensor maps (format_version 7).
bool hasTensorMaps(const Manifest &m);

/// The SM a cuda target's `cpu` names ("sm_90", "sm_90a": 90), or 0.
int cudaTargetSm(const ManifestTarget &target);

/// Parses and fully validates manifest JSON text.
FileError parseManifest(std::string_view text, Manifest &out);

/// The format_version `m`'s contents need, the oldest that reads them
/// right: 7 with tensor maps, 6 with all-reduce steps or split weights, 5 with
/// initializers, 4 with packed sequence buffers, 3 with length variants
/// (kernels with `max_length`), else 2.
int formatVersionFor(const Manifest &m);

/// Checks the invariants parseManifest guarantees on a Manifest built in
/// memory (the compiler calls it through serializeManifest). "" if valid.
std::string validateManifest(const Manifest &m);

/// Validates `m` and writes it as pretty-printed JSON into `out`.
/// Returns "" or the validation error.
std::string serializeManifest(const Manifest &m, std::string &out);

} // namespace linformer

#endif // LINFORMER_LIB_MANIFEST_MANIFEST_H
