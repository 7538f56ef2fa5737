//===- HalideSpec.h - a kernel as plain data, for Halide ---------*- C++ -*-===//
//
// The bridge between the MLIR side (which reads kernels of the linalg stage)
// and the Halide side (which builds Funcs from them). Neither MLIR nor Halide
// types appear here: the two sides are compiled apart because Halide's
// headers need exceptions and RTTI and LLVM's are built without, and because
// libHalide carries its own LLVM (see docs/Rationale.md, "Halide").
//
// A kernel is a short sequence of structured ops (linalg.generic after
// generalization) over views of its buffers. Each op computes one output
// view from input views; an op's body is a DAG of scalar nodes. A view that
// an earlier op of the kernel wrote is read from that op's result, not from
// memory (a linalg.fill followed by the reduction that accumulates into it
// is one kernel).
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_HALIDE_HALIDESPEC_H
#define LINFORMER_COMPILER_CODEGEN_HALIDE_HALIDESPEC_H

#include <cstdint>
#include <string>
#include <vector>

namespace linformer::halide {

enum class ScalarType { F16, BF16, F32, F64, I1, I8, I16, I32, I64 };

/// One row per scalar type: its bytes in memory and Halide's type for it
/// (halide_type_t's code, int 0, uint 1, float 2, bfloat 4, and bits), the
/// one place the emitter, the generated C and the buffer offsets read.
struct ScalarTypeInfo {
  ScalarType type;
  int64_t bytes;
  uint8_t halideCode;
  uint8_t bits;
};
inline constexpr ScalarTypeInfo kScalarTypes[] = {
    {ScalarType::F16, 2, 2, 16}, {ScalarType::BF16, 2, 4, 16},
    {ScalarType::F32, 4, 2, 32}, {ScalarType::F64, 8, 2, 64},
    {ScalarType::I1, 1, 1, 1},   {ScalarType::I8, 1, 0, 8},
    {ScalarType::I16, 2, 0, 16}, {ScalarType::I32, 4, 0, 32},
    {ScalarType::I64, 8, 0, 64}};

/// `t`'s row of kScalarTypes.
inline const ScalarTypeInfo &scalarInfo(ScalarType t) {
  for (const ScalarTypeInfo &info : kScalarTypes)
    if (info.type == t)
      return info;
  return kScalarTypes[2]; // f32: unreachable for a value of the enum
}

/// Bytes an element of `t` occupies in memory.
inline int64_t scalarBytes(ScalarType t) { return scalarInfo(t).bytes; }

/// A strided view of one of the kernel's buffers (memref dims, outermost
/// first; offset and strides in elements).
struct ViewSpec {
  int arg = 0;
  int64_t offset = 0;
  std::vector<int64_t> shape, strides;
  ScalarType type = ScalarType::F32;
};

/// One scalar node. Operands are indices of earlier nodes of the same op.
struct Node {
  enum Kind {
    Constant,  ///< fvalue (float types) or ivalue (integer types)
    LoopIndex, ///< ivalue = the loop dimension (linalg.index, affine dims)
    Input,     ///< the element of input ivalue at the op's indexing map
    Output,    ///< the output's current element (accumulator or old value)
    Unary,     ///< name: neg, exp, log, sqrt, rsqrt, tanh, erf, abs
    Binary,    ///< name: add, sub, mul, div, rem, max, min, floordiv, and,
               ///< or, xor
    Compare,   ///< name: eq, ne, lt, le, gt, ge (ordered/signed); ult, ...
    Select,    ///< operands: condition, true value, false value
    Cast       ///< operand converted to `type`
  };
  Kind kind = Constant;
  ScalarType type = ScalarType::F32;
  std::string name;
  std::vector<int> operands;
  double fvalue = 0;
  int64_t ivalue = 0;
};

/// One structured op: out[outputDims] (op)= body over the loop nest.
struct OpSpec {
  std::vector<int64_t> loopExtents;
  std::vector<bool> reduction;
  /// Views read, and for each the index expression of each of its dims (a
  /// node of `nodes`, integer typed, over LoopIndex nodes).
  std::vector<int> inputs;
  std::vector<std::vector<int>> inputIndex;
  int output = 0;
  /// Loop dimension of each output dim (outputs are projected
  /// permutations).
  std::vector<int> outputDims;
  std::vector<Node> nodes;
  int result = 0;
  /// The body reads the output's element (an accumulator, or an update in
  /// place).
  bool readsOutput = false;
};

struct KernelSpec {
  std::string name;
  std::vector<ViewSpec> views;
  std::vector<OpSpec> ops;
  /// Views read from memory, in the order of the compiled function's
  /// buffer parameters (the output's buffer comes last).
  std::vector<int> paramViews;
  /// The output dim (of ops.back().output) split into workgroups and how
  /// many: workgroup w computes [w * extent / workgroups, (w + 1) * ...).
  int sliceDim = 0;
  int64_t workgroups = 1;
};

struct HalideOptions {
  /// Halide target string ("x86-64-linux-avx2-fma-..."), without the
  /// no_runtime feature, which is always added.
  std::string target;
  /// Autoscheduler plugin: adams2019, mullapudi2016 or li2018.
  std::string autoscheduler = "adams2019";
  /// Directory holding libautoschedule_<name>.so.
  std::string pluginDir;
};

/// Builds the Halide pipeline of `kernel`, schedules it with the
/// autoscheduler for one workgroup's slice, and writes an object defining
/// `int <kernel.name>_halide(halide_buffer_t *in..., halide_buffer_t *out)`
/// to `objectPath`. `description` receives the Funcs and the schedule as
/// text. Returns an error message, empty on success.
std::string compileKernel(const KernelSpec &kernel,
                          const HalideOptions &options,
                          const std::string &objectPath,
                          std::string &description);

/// The Halide version this compiler was built against ("21.0.0").
std::string halideVersion();

} // namespace linformer::halide

#endif // LINFORMER_COMPILER_CODEGEN_HALIDE_HALIDESPEC_H
