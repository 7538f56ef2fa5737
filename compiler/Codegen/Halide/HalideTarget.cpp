//===- HalideTarget.cpp - kernels of the linalg stage through Halide -----===//
//
// See HalideTarget.h. Reading a kernel: its arguments are the buffers (the
// trailing index, the workgroup id, is unused: the kernel was not tiled);
// views of them (subview, collapse/expand_shape) are static strided memref
// types whose layout gives each view's offset and strides; every other op
// with effects must be a linalg.generic (the pipeline generalizes named
// ops), whose body becomes scalar nodes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Halide/HalideTarget.h"

#include "compiler/Codegen/Halide/HalideSpec.h"
#include "compiler/Schedule/Schedule.h"
#include "compiler/Target/CPU/CPUTarget.h"
#include "dialect/IR/LinformerDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace mlir;
namespace hl = ::linformer::halide;

#ifndef LINFORMER_HALIDE_PLUGIN_DIR
#define LINFORMER_HALIDE_PLUGIN_DIR ""
#endif

bool mlir::linformer::haveHalide() {
  return LINFORMER_HAVE_HALIDE != 0;
}

std::string mlir::linformer::halideTargetFor(StringRef features) {
  std::set<std::string> on;
  SmallVector<StringRef> parts;
  features.split(parts, ',', -1, false);
  for (StringRef f : parts)
    if (f.consume_front("+"))
      on.insert(f.str());
  std::string t = "x86-64-linux";
  auto has = [&](const char *f) { return on.count(f) != 0; };
  if (has("sse4.1"))
    t += "-sse41";
  if (has("avx"))
    t += "-avx";
  if (has("avx2"))
    t += "-avx2";
  if (has("fma"))
    t += "-fma";
  if (has("f16c"))
    t += "-f16c";
  if (has("avx512f") && has("avx512cd")) {
    t += "-avx512";
    if (has("avx512bw") && has("avx512dq") && has("avx512vl"))
      t += "-avx512_skylake";
  }
  return t;
}

namespace {

struct KernelReader {
  func::FuncOp fn;
  hl::KernelSpec spec;
  DenseMap<Value, int> viewIds;

  InFlightDiagnostic error(Operation *op) {
    return op->emitOpError("cannot be compiled with Halide: ");
  }

  FailureOr<hl::ScalarType> scalarType(Operation *at, Type t) {
    if (t.isF16())
      return hl::ScalarType::F16;
    if (t.isBF16())
      return hl::ScalarType::BF16;
    if (t.isF32())
      return hl::ScalarType::F32;
    if (t.isF64())
      return hl::ScalarType::F64;
    if (t.isIndex())
      return hl::ScalarType::I32; // static shapes below 2^31
    if (t.isInteger(1))
      return hl::ScalarType::I1;
    if (t.isInteger(8))
      return hl::ScalarType::I8;
    if (t.isInteger(16))
      return hl::ScalarType::I16;
    if (t.isInteger(32))
      return hl::ScalarType::I32;
    if (t.isInteger(64))
      return hl::ScalarType::I64;
    error(at) << "element type " << t << " has no Halide counterpart";
    return failure();
  }

  /// The view id of a memref value, reading its chain of views down to an
  /// argument.
  FailureOr<int> view(Operation *user, Value v) {
    if (auto it = viewIds.find(v); it != viewIds.end())
      return it->second;
    Value root = memref::skipViewLikeOps(cast<MemrefValue>(v));
    auto arg = dyn_cast<BlockArgument>(root);
    bool local = isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
        root.getDefiningOp());
    if (!local && (!arg || arg.getOwner() != &fn.getBody().front())) {
      error(user) << "reads or writes a buffer that is not a view of a kernel "
                     "argument or of its scratch";
      return failure();
    }
    auto type = cast<MemRefType>(v.getType());
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    if (!type.hasStaticShape() ||
        failed(type.getStridesAndOffset(strides, offset)) ||
        ShapedType::isDynamic(offset) ||
        llvm::any_of(strides, ShapedType::isDynamic)) {
      error(user) << "needs static shapes, strides and offsets, not " << type;
      return failure();
    }
    FailureOr<hl::ScalarType> st = scalarType(user, type.getElementType());
    if (failed(st))
      return failure();
    hl::ViewSpec vs;
    // Scratch (arg -1) lives in the pipeline as the Funcs that write it.
    vs.arg = local ? -1 : static_cast<int>(arg.getArgNumber());
    vs.offset = offset;
    vs.shape.assign(type.getShape().begin(), type.getShape().end());
    vs.strides.assign(strides.begin(), strides.end());
    vs.type = *st;
    int id = static_cast<int>(spec.views.size());
    spec.views.push_back(vs);
    viewIds[v] = id;
    return id;
  }

  /// An affine expression of the loops as integer nodes.
  int affine(hl::OpSpec &op, AffineExpr e) {
    hl::Node n;
    n.type = hl::ScalarType::I32;
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      n.kind = hl::Node::LoopIndex;
      n.ivalue = d.getPosition();
    } else if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      n.kind = hl::Node::Constant;
      n.ivalue = c.getValue();
    } else {
      auto bin = cast<AffineBinaryOpExpr>(e);
      int l = affine(op, bin.getLHS()), r = affine(op, bin.getRHS());
      n.kind = hl::Node::Binary;
      n.operands = {l, r};
      switch (e.getKind()) {
      case AffineExprKind::Add:
        n.name = "add";
        break;
      case AffineExprKind::Mul:
        n.name = "mul";
        break;
      case AffineExprKind::Mod:
        n.name = "mod";
        break;
      default: // floordiv; ceildiv does not occur in indexing maps here
        n.name = "floordiv";
        break;
      }
    }
    op.nodes.push_back(n);
    return static_cast<int>(op.nodes.size()) - 1;
  }

  LogicalResult readGeneric(linalg::GenericOp g, hl::OpSpec &op) {
    if (g.getNumDpsInits() != 1)
      return error(g) << "has " << g.getNumDpsInits()
                      << " outputs; Halide kernels take one";
    SmallVector<int64_t> ranges = g.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return error(g) << "has dynamic loop bounds";
    op.loopExtents.assign(ranges.begin(), ranges.end());
    for (utils::IteratorType t : g.getIteratorTypesArray())
      op.reduction.push_back(t == utils::IteratorType::reduction);
    SmallVector<AffineMap> maps = g.getIndexingMapsArray();
    Block &body = g.getRegion().front();
    DenseMap<Value, int> nodes;
    auto add = [&](hl::Node n) {
      op.nodes.push_back(std::move(n));
      return static_cast<int>(op.nodes.size()) - 1;
    };
    // Inputs: buffers read at their maps, or scalars (constants).
    for (auto [i, operand] : llvm::enumerate(g.getDpsInputOperands())) {
      Value v = operand->get();
      BlockArgument barg = body.getArgument(i);
      if (!isa<MemRefType>(v.getType())) {
        Attribute value;
        if (!matchPattern(v, m_Constant(&value)))
          return error(g) << "takes a scalar input that is not a constant";
        if (failed(constantNode(g, v, value, nodes, op)))
          return failure();
        nodes[barg] = nodes[v];
        continue;
      }
      FailureOr<int> vid = view(g, v);
      if (failed(vid))
        return failure();
      int inputIndex = static_cast<int>(op.inputs.size());
      op.inputs.push_back(*vid);
      std::vector<int> index;
      for (AffineExpr e : maps[i].getResults())
        index.push_back(affine(op, e));
      op.inputIndex.push_back(index);
      FailureOr<hl::ScalarType> st =
          scalarType(g, cast<MemRefType>(v.getType()).getElementType());
      if (failed(st))
        return failure();
      hl::Node n;
      n.kind = hl::Node::Input;
      n.type = *st;
      n.ivalue = inputIndex;
      nodes[barg] = add(n);
    }
    OpOperand *init = g.getDpsInitOperand(0);
    FailureOr<int> out = view(g, init->get());
    if (failed(out))
      return failure();
    op.output = *out;
    AffineMap outMap = maps.back();
    for (AffineExpr e : outMap.getResults()) {
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d)
        return error(g) << "writes its output at a map that is not a "
                           "permutation of loops";
      op.outputDims.push_back(d.getPosition());
    }
    {
      FailureOr<hl::ScalarType> st = scalarType(
          g, cast<MemRefType>(init->get().getType()).getElementType());
      if (failed(st))
        return failure();
      hl::Node n;
      n.kind = hl::Node::Output;
      n.type = *st;
      BlockArgument acc = body.getArgument(g.getNumDpsInputs());
      op.readsOutput = !acc.use_empty();
      nodes[acc] = add(n);
    }
    // The body.
    for (Operation &inner : body) {
      if (auto y = dyn_cast<linalg::YieldOp>(inner)) {
        op.result = nodes.lookup(y.getOperand(0));
        break;
      }
      if (inner.getNumResults() != 1)
        return error(&inner) << "has " << inner.getNumResults() << " results";
      FailureOr<hl::ScalarType> st =
          scalarType(&inner, inner.getResult(0).getType());
      if (failed(st))
        return failure();
      hl::Node n;
      n.type = *st;
      for (Value v : inner.getOperands()) {
        auto it = nodes.find(v);
        if (it == nodes.end()) {
          Attribute value;
          if (!matchPattern(v, m_Constant(&value)))
            return error(&inner) << "uses a value from outside the op";
          // Constants from outside the body are rebuilt as nodes.
          if (failed(constantNode(&inner, v, value, nodes, op)))
            return failure();
          it = nodes.find(v);
        }
        n.operands.push_back(it->second);
      }
      Attribute value;
      if (matchPattern(inner.getResult(0), m_Constant(&value))) {
        if (failed(constantNode(&inner, inner.getResult(0), value, nodes, op)))
          return failure();
        continue;
      }
      StringRef unary = llvm::TypeSwitch<Operation *, StringRef>(&inner)
                            .Case<arith::NegFOp>([](auto) { return "neg"; })
                            .Case<math::ExpOp>([](auto) { return "exp"; })
                            .Case<math::LogOp>([](auto) { return "log"; })
                            .Case<math::SqrtOp>([](auto) { return "sqrt"; })
                            .Case<math::RsqrtOp>([](auto) { return "rsqrt"; })
                            .Case<math::TanhOp>([](auto) { return "tanh"; })
                            .Case<math::ErfOp>([](auto) { return "erf"; })
                            .Case<math::AbsFOp>([](auto) { return "abs"; })
                            .Default([](auto) { return ""; });
      StringRef binary =
          llvm::TypeSwitch<Operation *, StringRef>(&inner)
              .Case<arith::AddFOp, arith::AddIOp>([](auto) { return "add"; })
              .Case<arith::SubFOp, arith::SubIOp>([](auto) { return "sub"; })
              .Case<arith::MulFOp, arith::MulIOp>([](auto) { return "mul"; })
              .Case<arith::DivFOp, arith::DivSIOp>([](auto) { return "div"; })
              .Case<arith::RemFOp, arith::RemSIOp>([](auto) { return "rem"; })
              .Case<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp>(
                  [](auto) { return "max"; })
              .Case<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp>(
                  [](auto) { return "min"; })
              .Case<arith::AndIOp>([](auto) { return "and"; })
              .Case<arith::OrIOp>([](auto) { return "or"; })
              .Case<arith::XOrIOp>([](auto) { return "xor"; })
              .Default([](auto) { return ""; });
      if (!unary.empty()) {
        n.kind = hl::Node::Unary;
        n.name = unary.str();
      } else if (!binary.empty()) {
        n.kind = hl::Node::Binary;
        n.name = binary.str();
      } else if (auto c = dyn_cast<arith::CmpFOp>(inner)) {
        n.kind = hl::Node::Compare;
        // Ordered and unordered alike (oeq, ueq -> eq, ...): upstream's
        // spelling less its first letter; ord, uno, true and false have no
        // Halide comparison.
        StringRef name = arith::stringifyCmpFPredicate(c.getPredicate());
        n.name = name.drop_front().str();
        if ((!name.starts_with("o") && !name.starts_with("u")) ||
            !llvm::is_contained(ArrayRef<StringRef>{"eq", "ne", "lt", "le",
                                                    "gt", "ge"},
                                StringRef(n.name)))
          return error(&inner) << "has a predicate Halide kernels do not take";
      } else if (auto c = dyn_cast<arith::CmpIOp>(inner)) {
        n.kind = hl::Node::Compare;
        n.name = arith::stringifyCmpIPredicate(c.getPredicate()).str();
        if (n.name[0] == 's')
          n.name = n.name.substr(1);
      } else if (isa<arith::SelectOp>(inner)) {
        n.kind = hl::Node::Select;
      } else if (isa<arith::ExtFOp, arith::TruncFOp, arith::ExtSIOp,
                     arith::TruncIOp, arith::SIToFPOp, arith::FPToSIOp,
                     arith::IndexCastOp>(inner)) {
        n.kind = hl::Node::Cast;
      } else if (isa<arith::ExtUIOp, arith::UIToFPOp, arith::IndexCastUIOp>(
                     inner)) {
        n.kind = hl::Node::Cast;
        n.name = "zext";
      } else if (auto idx = dyn_cast<linalg::IndexOp>(inner)) {
        n.kind = hl::Node::LoopIndex;
        n.ivalue = idx.getDim();
      } else {
        return error(&inner) << "is not an op the Halide lowering knows";
      }
      nodes[inner.getResult(0)] = add(n);
    }
    return success();
  }

  LogicalResult constantNode(Operation *at, Value v, Attribute value,
                             DenseMap<Value, int> &nodes, hl::OpSpec &op) {
    FailureOr<hl::ScalarType> st = scalarType(at, v.getType());
    if (failed(st))
      return failure();
    hl::Node n;
    n.kind = hl::Node::Constant;
    n.type = *st;
    if (auto f = dyn_cast<FloatAttr>(value))
      n.fvalue = f.getValueAsDouble();
    else if (auto i = dyn_cast<IntegerAttr>(value))
      n.ivalue = isa<IndexType>(i.getType()) || i.getType().isInteger(1)
                     ? i.getValue().getZExtValue()
                     : i.getInt();
    else
      return error(at) << "uses a constant of an unknown kind";
    op.nodes.push_back(n);
    nodes[v] = static_cast<int>(op.nodes.size()) - 1;
    return success();
  }

  LogicalResult read() {
    spec.name = fn.getSymName().str();
    for (Operation &op : fn.getBody().front()) {
      if (isa<func::ReturnOp, memref::AllocOp, memref::AllocaOp,
              memref::DeallocOp, ViewLikeOpInterface>(op) ||
          isPure(&op))
        continue;
      auto g = dyn_cast<linalg::GenericOp>(op);
      if (!g)
        return error(&op) << "is not a linalg.generic (the Halide pipeline "
                             "generalizes named ops)";
      hl::OpSpec spec1;
      if (failed(readGeneric(g, spec1)))
        return failure();
      spec.ops.push_back(std::move(spec1));
    }
    if (spec.ops.empty())
      return fn.emitOpError("has no linalg op to compile");
    // Ops write scratch or the kernel's one output view (the last op's);
    // what an earlier op wrote is read from that op.
    int out = spec.ops.back().output;
    if (spec.views[out].arg < 0)
      return fn.emitOpError("cannot be compiled with Halide: its last op "
                            "writes scratch, not a buffer");
    std::set<int> written;
    LogicalResult status = success();
    auto param = [&](int v) {
      if (written.count(v) || llvm::is_contained(spec.paramViews, v))
        return;
      if (spec.views[v].arg < 0)
        status = fn.emitOpError("cannot be compiled with Halide: it reads "
                                "scratch that nothing wrote");
      spec.paramViews.push_back(v);
    };
    for (hl::OpSpec &op : spec.ops) {
      // A fused producer that bufferization placed in a buffer (the whole
      // kernel is one workgroup, so its untiled result did not become
      // scratch) stays in the pipeline, as in the MLIR kernels' per-tile
      // scratch: no other kernel reads it.
      for (auto [i, v] : llvm::enumerate(op.inputs)) {
        const hl::ViewSpec &iv = spec.views[v];
        if (iv.arg == spec.views[out].arg && !written.count(v)) {
          // Another workgroup may write what this one reads unless the read
          // is the element being written.
          bool same = v == out;
          for (size_t m = 0; same && m < op.outputDims.size(); ++m) {
            const hl::Node &n = op.nodes[op.inputIndex[i][m]];
            same = n.kind == hl::Node::LoopIndex && n.ivalue == op.outputDims[m];
          }
          if (!same)
            return fn.emitOpError("cannot be compiled with Halide: it reads "
                                  "the buffer it writes at another element");
        }
        param(v);
      }
      bool reads = llvm::is_contained(op.reduction, true) || op.readsOutput;
      if (reads)
        param(op.output);
      written.insert(op.output);
    }
    return status;
  }
};

/// Workgroups: the outermost output dim that splits into at least two per
/// core (at most eight per core), else the one that splits most.
void chooseSlices(hl::KernelSpec &spec, int64_t cores) {
  const hl::ViewSpec &out = spec.views[spec.ops.back().output];
  int64_t limit = 8 * std::max<int64_t>(cores, 1);
  int64_t best = 0;
  for (size_t m = 0; m < out.shape.size(); ++m) {
    int64_t w = ::linformer::schedule::largestDivisorAtMost(out.shape[m], limit);
    if (w > best) {
      best = w;
      spec.sliceDim = static_cast<int>(m);
      spec.workgroups = w;
    }
    if (w >= std::min<int64_t>(out.shape[m], 2 * cores) && w >= 2 * cores)
      break;
  }
}

const char *cType(hl::ScalarType t) {
  switch (t) {
  case hl::ScalarType::F32:
    return "float";
  case hl::ScalarType::F64:
    return "double";
  default:
    return nullptr;
  }
}

/// halide_type_t {code, bits, lanes} of one element.
std::string halideTypeInit(hl::ScalarType t) {
  const hl::ScalarTypeInfo &info = hl::scalarInfo(t);
  return "{" + std::to_string(info.halideCode) + ", " +
         std::to_string(info.bits) + ", 1}";
}

/// The part of the Halide runtime the pipelines call (compiled with
/// no_runtime): heap scratch, a serial par_for (workgroups are the
/// parallelism) and error reporting. Stubs for each halide_error_* the
/// objects reference are appended.
const char *kRuntimePrelude = R"C(
/* Generated by linformer-compile: the Halide runtime functions the kernels
 * of this object call. Workgroups run on the linformer runtime's threads,
 * so parallel loops inside a kernel run serially here. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define LF_HIDDEN __attribute__((visibility("hidden")))
typedef int (*halide_task_t)(void *, int, uint8_t *);
LF_HIDDEN void *halide_malloc(void *uc, size_t size) {
  void *p = NULL;
  (void)uc;
  /* 128-byte alignment, with room for a vector read past the end. */
  if (posix_memalign(&p, 128, size + 128) != 0)
    return NULL;
  return p;
}
LF_HIDDEN void halide_free(void *uc, void *p) {
  (void)uc;
  free(p);
}
LF_HIDDEN int halide_do_par_for(void *uc, halide_task_t f, int min, int size,
                                uint8_t *closure) {
  for (int i = min; i < min + size; ++i) {
    int rc = f(uc, i, closure);
    if (rc)
      return rc;
  }
  return 0;
}
LF_HIDDEN void halide_error(void *uc, const char *msg) {
  (void)uc;
  fprintf(stderr, "linformer: Halide kernel error: %s\n", msg);
}
static int lf_halide_failed(const char *what) {
  fprintf(stderr, "linformer: a Halide kernel failed its check %s\n", what);
  return -1;
}
)C";


/// What the compiled Halide code of a kernel depends on: its ops, the
/// shapes, strides and types of its views, their order as parameters and
/// its slices; not its name, nor which buffers (or where in them) the
/// dispatch binds. Kernels with equal fingerprints (the layers of an
/// encoder) share one compiled function.
std::string fingerprint(const hl::KernelSpec &k) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto list = [&](const auto &v) {
    os << '[';
    for (const auto &x : v)
      os << x << ',';
    os << ']';
  };
  for (const hl::ViewSpec &v : k.views) {
    os << 'v' << static_cast<int>(v.type);
    list(v.shape);
    list(v.strides);
  }
  for (const hl::OpSpec &op : k.ops) {
    os << "\nop";
    list(op.loopExtents);
    for (bool r : op.reduction)
      os << (r ? 'R' : 'p');
    list(op.inputs);
    for (const std::vector<int> &index : op.inputIndex)
      list(index);
    os << op.output;
    list(op.outputDims);
    os << op.result << (op.readsOutput ? 'r' : 'w');
    for (const hl::Node &n : op.nodes) {
      os << ";" << static_cast<int>(n.kind) << ':' << static_cast<int>(n.type)
         << ':' << n.name << ':';
      list(n.operands);
      os << llvm::formatv("{0:e}", n.fvalue) << ':' << n.ivalue;
    }
  }
  os << "\nparams";
  list(k.paramViews);
  os << k.sliceDim << '/' << k.workgroups;
  return text;
}

/// The dispatch entry and ABI record of one kernel, in C. `callee` names
/// the kernel whose compiled Halide function it calls (itself, or an
/// earlier kernel of the same fingerprint).
void emitDispatch(const hl::KernelSpec &k, ArrayRef<int64_t> argBytes,
                  StringRef callee, llvm::raw_ostream &os) {
  // K_abi: magic, workgroups, arity, bytes per buffer.
  os << "__attribute__((visibility(\"default\"))) const uint64_t " << k.name
     << "_abi[] = {0x31304942414b464cULL, " << k.workgroups << "ULL, "
     << argBytes.size() << "ULL";
  for (int64_t b : argBytes)
    os << ", " << b << "ULL";
  os << "};\n";
  os << "extern int " << callee << "_halide(";
  size_t nparams = k.paramViews.size() + 1;
  for (size_t i = 0; i < nparams; ++i)
    os << (i ? ", " : "") << "struct halide_buffer_t *";
  os << ");\n";
  os << "__attribute__((visibility(\"default\"))) void " << k.name
     << "_dispatch(void **buffers, int64_t begin, int64_t end) {\n";
  std::vector<int> views(k.paramViews.begin(), k.paramViews.end());
  int outView = k.ops.back().output;
  views.push_back(outView);
  for (auto [i, v] : llvm::enumerate(views)) {
    const hl::ViewSpec &vs = k.views[v];
    size_t rank = vs.shape.size();
    os << "  struct halide_dimension_t d" << i << "[" << std::max<size_t>(rank, 1)
       << "] = {";
    for (size_t d = 0; d < rank; ++d) {
      size_t m = rank - 1 - d;
      os << (d ? ", " : "") << "{0, " << vs.shape[m] << ", " << vs.strides[m]
         << ", 0}";
    }
    if (rank == 0)
      os << "{0, 1, 1, 0}";
    os << "};\n";
    os << "  struct halide_buffer_t b" << i << " = {0, 0, (uint8_t *)buffers["
       << vs.arg << "] + " << vs.offset * hl::scalarBytes(vs.type) << "LL, 0, "
       << halideTypeInit(vs.type) << ", " << rank << ", d" << i << ", 0};\n";
  }
  const hl::ViewSpec &out = k.views[outView];
  size_t rank = out.shape.size();
  size_t last = views.size() - 1;
  int64_t chunk = out.shape[k.sliceDim] / k.workgroups;
  size_t hdim = rank - 1 - k.sliceDim;
  int64_t elem = hl::scalarBytes(out.type);
  os << "  uint8_t *base = b" << last << ".host;\n";
  os << "  for (int64_t w = begin; w < end; ++w) {\n";
  os << "    d" << last << "[" << hdim << "].min = (int32_t)(w * " << chunk
     << ");\n";
  os << "    d" << last << "[" << hdim << "].extent = " << chunk << ";\n";
  os << "    b" << last << ".host = base + w * " << chunk * out.strides[k.sliceDim] * elem
     << "LL;\n";
  os << "    if (" << callee << "_halide(";
  for (size_t i = 0; i < views.size(); ++i)
    os << (i ? ", " : "") << "&b" << i;
  os << ") != 0) {\n";
  // A failed kernel leaves NaN (floats) in its slice, never stale data.
  if (const char *ct = cType(out.type)) {
    os << "      /* NaN over the slice. */\n";
    os << "      int64_t n = 1;\n";
    os << "      for (int i = 0; i < " << rank << "; ++i) n *= d" << last
       << "[i].extent;\n";
    os << "      for (int64_t e = 0; e < n; ++e) {\n";
    os << "        int64_t r = e, at = 0;\n";
    os << "        for (int i = 0; i < " << rank << "; ++i) { at += (r % d"
       << last << "[i].extent) * d" << last << "[i].stride; r /= d" << last
       << "[i].extent; }\n";
    os << "        ((" << ct << " *)b" << last << ".host)[at] = (" << ct
       << ")__builtin_nan(\"\");\n";
    os << "      }\n";
  }
  os << "      fprintf(stderr, \"linformer: Halide kernel " << k.name
     << " failed on workgroup %lld\\n\", (long long)w);\n";
  os << "    }\n  }\n}\n";
}

} // namespace

LogicalResult mlir::linformer::compileHalideToSharedObject(
    ModuleOp module, const HalideTargetOptions &options, StringRef path) {
  if (!haveHalide())
    return module.emitError("this compiler was built without Halide "
                            "(scripts/setup installs it; see "
                            "docs/Rationale.md, \"Halide\")");
  PrivateTempDir dir("linformer-halide");
  if (dir.ec)
    return module.emitError() << "cannot create a private temporary "
                                 "directory: "
                              << dir.ec.message();
  hl::HalideOptions hopts;
  hopts.target = halideTargetFor(options.features);
  hopts.autoscheduler = options.autoscheduler;
  hopts.pluginDir = LINFORMER_HALIDE_PLUGIN_DIR;

  std::string wrappers;
  llvm::raw_string_ostream ws(wrappers);
  ws << "struct halide_dimension_t { int32_t min, extent, stride; uint32_t "
        "flags; };\n"
        "struct halide_type_t { uint8_t code, bits; uint16_t lanes; };\n"
        "struct halide_buffer_t { uint64_t device; const void "
        "*device_interface; uint8_t *host; uint64_t flags; struct "
        "halide_type_t type; int32_t dimensions; struct halide_dimension_t "
        "*dim; void *padding; };\n";
  std::vector<std::string> objects;
  std::map<std::string, std::string> compiledAs; // fingerprint -> kernel
  std::set<std::string> undefined;
  MLIRContext *ctx = module.getContext();
  Builder b(ctx);
  for (auto entry : module.getOps<func::FuncOp>()) {
    mlir::linformer::DispatchPlanAttr plan =
        mlir::linformer::getDispatchPlan(entry);
    if (!plan)
      continue;
    SmallVector<mlir::linformer::KernelLaunchAttr> updated;
    for (mlir::linformer::KernelLaunchAttr launch : plan.getKernels()) {
      StringRef name = launch.getName().getValue();
      if (!options.only.empty() && !options.only.count(name.str())) {
        updated.push_back(launch);
        continue;
      }
      auto fn = module.lookupSymbol<func::FuncOp>(name);
      if (!fn)
        return entry.emitOpError("plans a kernel that does not exist: ")
               << name;
      KernelReader reader;
      reader.fn = fn;
      if (failed(reader.read()))
        return failure();
      hl::KernelSpec &spec = reader.spec;
      chooseSlices(spec, options.cores);
      // One compile per distinct kernel: the layers of an encoder share
      // their shapes, and the autoscheduler is most of the compile time.
      auto [same, fresh] = compiledAs.try_emplace(fingerprint(spec), name.str());
      std::string object = dir.file((name + ".o").str());
      std::string description;
      if (fresh) {
#if LINFORMER_HAVE_HALIDE
        std::string err = hl::compileKernel(spec, hopts, object, description);
#else
        std::string err = "this compiler was built without Halide";
#endif
        if (!err.empty())
          return fn.emitOpError() << "Halide failed to compile it: " << err;
        objects.push_back(object);
      } else {
        description = "  the code of " + same->second + " (same shapes)\n";
      }
      if (options.describe)
        *options.describe << "kernel " << name << ": " << spec.workgroups
                          << " workgroups along dim " << spec.sliceDim
                          << " of the output\n"
                          << description << "\n";
      auto bytes = fn->getAttrOfType<DenseI64ArrayAttr>(kBufferBytesAttrName);
      if (!bytes)
        return fn.emitOpError("has no linformer.buffer_bytes");
      if (options.describe) {
        std::string entry;
        llvm::raw_string_ostream es(entry);
        emitDispatch(spec, bytes.asArrayRef(), same->second, es);
        *options.describe << "  dispatch (C):\n" << entry << "\n";
      }
      emitDispatch(spec, bytes.asArrayRef(), same->second, ws);
      fn->setAttr(kWorkgroupsAttrName, b.getI64IntegerAttr(spec.workgroups));
      // It writes its output only (fused producers stay in the pipeline).
      int outArg = spec.views[spec.ops.back().output].arg;
      updated.push_back(launch.withHalide(spec.workgroups,
                                          {launch.getBuffers()[outArg]}));
      if (!fresh)
        continue;
      // What the object needs from a runtime.
      auto buffer = llvm::MemoryBuffer::getFile(object);
      if (!buffer)
        return fn.emitOpError("Halide wrote no object");
      auto obj = llvm::object::ObjectFile::createObjectFile(
          (*buffer)->getMemBufferRef());
      if (!obj) {
        llvm::consumeError(obj.takeError());
        return fn.emitOpError("Halide wrote an object LLVM cannot read");
      }
      for (const llvm::object::SymbolRef &sym : (*obj)->symbols()) {
        auto flags = sym.getFlags();
        auto symName = sym.getName();
        if (!flags || !symName) {
          if (!flags)
            llvm::consumeError(flags.takeError());
          if (!symName)
            llvm::consumeError(symName.takeError());
          continue;
        }
        if ((*flags & llvm::object::SymbolRef::SF_Undefined) &&
            !symName->empty())
          undefined.insert(symName->str());
      }
    }
    mlir::linformer::setDispatchPlan(
        entry,
        mlir::linformer::DispatchPlanAttr::get(
            ctx, updated, plan.getIntermediates(), plan.getPackedSequences(),
            plan.getSequences()));
  }
  ws.flush();

  std::string runtime = kRuntimePrelude;
  static const std::set<std::string> provided = {
      "halide_malloc", "halide_free", "halide_do_par_for", "halide_error"};
  for (const std::string &s : undefined) {
    if (provided.count(s))
      continue;
    if (StringRef(s).starts_with("halide_error_")) {
      // Unprototyped: the callers' arguments are ignored.
      runtime += "LF_HIDDEN int " + s + "() { return lf_halide_failed(\"" +
                 s.substr(strlen("halide_error_")) + "\"); }\n";
      continue;
    }
    if (StringRef(s).starts_with("halide_") ||
        StringRef(s).starts_with("_ZN6Halide"))
      return module.emitError() << "a Halide kernel needs the runtime "
                                   "function '"
                                << s << "', which linformer does not provide";
  }
  std::string source = dir.file("halide_runtime.c");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(source, ec);
    if (ec)
      return module.emitError() << "cannot write " << source << ": "
                                << ec.message();
    os << runtime << wrappers;
  }
  SmallVector<StringRef> inputs;
  for (const std::string &o : objects)
    inputs.push_back(o);
  for (const std::string &o : options.extraInputs)
    inputs.push_back(o);
  inputs.push_back(source);
  std::string error;
  if (failed(linkSharedObject(inputs, path, error)))
    return module.emitError() << error;
  return success();
}

LogicalResult mlir::linformer::compileHalideToSharedObject(
    ModuleOp module, const HalideTargetOptions &options, std::string &object) {
  return buildSharedObjectBytes(
      module,
      [&](StringRef path) {
        return compileHalideToSharedObject(module, options, path);
      },
      object);
}
