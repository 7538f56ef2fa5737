//===- HalideEmit.cpp - KernelSpec -> Halide Funcs -> object ----*- C++ -*-===//
//
// The Halide side of the Halide code generator; see HalideSpec.h. This file
// alone includes Halide.h and is compiled with exceptions and RTTI (Halide
// reports errors as exceptions); nothing of MLIR or LLVM is visible here.
//
// Each op of a kernel becomes a Func over its output's dims (Halide's dim 0
// is the innermost, memref order reversed): a pure definition (the op's
// value, or the accumulator's initial value when the op reduces) and, for
// reductions, one update over an RDom of the reduction loops. Buffers are
// ImageParams with the static bounds and strides of their views, so Halide
// knows the shapes as the MLIR pipeline does. The output is scheduled for
// one workgroup's slice (the runtime runs workgroups on its own threads),
// so the autoscheduler runs with parallelism 1 and estimates the slice's
// extents. Halide's asserts stay on: a call that breaks an assumption of
// the schedule returns an error (the dispatch entry reports it and leaves
// NaN), never writes out of bounds.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Halide/HalideSpec.h"

#include "Halide.h"

#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace linformer::halide {
namespace {

Halide::Type toHalide(ScalarType t) {
  const ScalarTypeInfo &info = scalarInfo(t);
  return Halide::Type(static_cast<halide_type_code_t>(info.halideCode),
                      info.bits, 1);
}

struct OpBuilder {
  const KernelSpec &kernel;
  const OpSpec &op;
  /// Loop dimension -> its Halide expression (a Var or an RVar).
  std::vector<Halide::Expr> loops;
  /// View id -> what reading it means (an ImageParam or an earlier Func).
  std::map<int, Halide::Func> &current;
  std::map<int, Halide::ImageParam> &params;
  Halide::Func self;
  bool selfDefined = false;
  std::vector<Halide::Expr> outputArgs;

  Halide::Expr read(int view, const std::vector<Halide::Expr> &memrefIndex) {
    // Halide's argument order is the memref's reversed.
    std::vector<Halide::Expr> args(memrefIndex.rbegin(), memrefIndex.rend());
    if (auto it = current.find(view); it != current.end())
      return it->second(args);
    return params.at(view)(args);
  }

  Halide::Expr value(int id, std::vector<Halide::Expr> &memo) {
    if (memo[id].defined())
      return memo[id];
    const Node &n = op.nodes[id];
    auto arg = [&](int i) { return value(n.operands.at(i), memo); };
    Halide::Type type = toHalide(n.type);
    Halide::Expr e;
    switch (n.kind) {
    case Node::Constant:
      e = type.is_float() ? Halide::cast(type, Halide::Expr(n.fvalue))
                          : Halide::cast(type, Halide::Expr(n.ivalue));
      break;
    case Node::LoopIndex:
      e = Halide::cast(type, loops.at(n.ivalue));
      break;
    case Node::Input: {
      std::vector<Halide::Expr> index;
      for (int node : op.inputIndex.at(n.ivalue))
        index.push_back(value(node, memo));
      e = read(op.inputs.at(n.ivalue), index);
      break;
    }
    case Node::Output:
      if (selfDefined) {
        e = self(outputArgs);
      } else {
        std::vector<Halide::Expr> index;
        for (int d : op.outputDims)
          index.push_back(loops.at(d));
        e = read(op.output, index);
      }
      break;
    case Node::Unary: {
      Halide::Expr x = arg(0);
      if (n.name == "neg")
        e = -x;
      else if (n.name == "exp")
        e = Halide::exp(x);
      else if (n.name == "log")
        e = Halide::log(x);
      else if (n.name == "sqrt")
        e = Halide::sqrt(x);
      else if (n.name == "rsqrt")
        e = Halide::cast(type, 1) / Halide::sqrt(x);
      else if (n.name == "tanh")
        e = Halide::tanh(x);
      else if (n.name == "erf")
        e = Halide::erf(x);
      else if (n.name == "abs")
        e = Halide::cast(type, Halide::abs(x));
      else if (n.name == "not")
        e = !x;
      else
        throw Halide::CompileError("unknown unary '" + n.name + "'");
      break;
    }
    case Node::Binary: {
      Halide::Expr x = arg(0), y = arg(1);
      bool isBool = type.is_bool();
      if (n.name == "add")
        e = x + y;
      else if (n.name == "sub")
        e = x - y;
      else if (n.name == "mul")
        e = x * y;
      else if (n.name == "div")
        e = type.is_float() ? x / y : Halide::div_round_to_zero(x, y);
      else if (n.name == "rem")
        e = type.is_float() ? x - y * Halide::trunc(x / y)
                            : Halide::mod_round_to_zero(x, y);
      else if (n.name == "floordiv") // affine: positive divisors
        e = x / y;
      else if (n.name == "mod")
        e = x % y;
      else if (n.name == "max")
        e = Halide::max(x, y);
      else if (n.name == "min")
        e = Halide::min(x, y);
      else if (n.name == "and")
        e = isBool ? (x && y) : (x & y);
      else if (n.name == "or")
        e = isBool ? (x || y) : (x | y);
      else if (n.name == "xor")
        e = isBool ? (x != y) : (x ^ y);
      else
        throw Halide::CompileError("unknown binary '" + n.name + "'");
      break;
    }
    case Node::Compare: {
      Halide::Expr x = arg(0), y = arg(1);
      std::string p = n.name;
      if (p[0] == 'u' && x.type().is_int()) {
        x = Halide::cast(x.type().with_code(Halide::Type::UInt), x);
        y = Halide::cast(y.type().with_code(Halide::Type::UInt), y);
        p = p.substr(1);
      }
      if (p == "eq")
        e = x == y;
      else if (p == "ne")
        e = x != y;
      else if (p == "lt")
        e = x < y;
      else if (p == "le")
        e = x <= y;
      else if (p == "gt")
        e = x > y;
      else if (p == "ge")
        e = x >= y;
      else
        throw Halide::CompileError("unknown comparison '" + n.name + "'");
      break;
    }
    case Node::Select:
      e = Halide::select(arg(0), arg(1), arg(2));
      break;
    case Node::Cast: {
      Halide::Expr x = arg(0);
      if (n.name == "zext" && x.type().is_int())
        x = Halide::cast(x.type().with_code(Halide::Type::UInt), x);
      e = Halide::cast(type, x);
      break;
    }
    }
    memo[id] = e;
    return e;
  }
};

/// Halide's warnings (storage folding it declined, ...) go with the
/// kernel's description instead of stderr; errors are thrown as without a
/// reporter.
struct Reporter : Halide::CompileTimeErrorReporter {
  std::string warnings;
  void warning(const char *msg) override { warnings += msg; }
  void error(const char *msg) override { throw Halide::CompileError(msg); }
};
thread_local Reporter reporter;

std::string autoschedulerName(const std::string &plugin) {
  if (plugin == "adams2019")
    return "Adams2019";
  if (plugin == "mullapudi2016")
    return "Mullapudi2016";
  if (plugin == "li2018")
    return "Li2018";
  return "";
}

} // namespace

std::string halideVersion() {
  return std::to_string(HALIDE_VERSION_MAJOR) + "." +
         std::to_string(HALIDE_VERSION_MINOR) + "." +
         std::to_string(HALIDE_VERSION_PATCH);
}

std::string compileKernel(const KernelSpec &kernel,
                          const HalideOptions &options,
                          const std::string &objectPath,
                          std::string &description) {
  std::string scheduler = autoschedulerName(options.autoscheduler);
  if (scheduler.empty())
    return "unknown Halide autoscheduler '" + options.autoscheduler +
           "' (adams2019, mullapudi2016 or li2018)";
  static std::mutex loadMutex;
  static std::set<std::string> loaded;
  try {
    {
      std::lock_guard<std::mutex> lock(loadMutex);
      if (!loaded.count(scheduler)) {
        Halide::load_plugin(options.pluginDir + "/libautoschedule_" +
                            options.autoscheduler + ".so");
        loaded.insert(scheduler);
      }
    }
    Halide::set_custom_compile_time_error_reporter(&reporter);
    reporter.warnings.clear();
    std::map<int, Halide::ImageParam> params;
    std::vector<Halide::Argument> arguments;
    for (int v : kernel.paramViews) {
      const ViewSpec &view = kernel.views.at(v);
      int rank = static_cast<int>(view.shape.size());
      Halide::ImageParam p(toHalide(view.type), rank,
                           kernel.name + "_v" + std::to_string(v));
      Halide::Region estimates;
      for (int d = 0; d < rank; ++d) {
        int m = rank - 1 - d; // memref dim
        // Extents and strides are fixed; mins are not (as for outputs,
        // below, a fixed min can make Halide 21 assume aligned vectors).
        p.dim(d).set_extent(static_cast<int>(view.shape[m]));
        p.dim(d).set_stride(static_cast<int>(view.strides[m]));
        estimates.push_back({0, static_cast<int>(view.shape[m])});
      }
      p.set_estimates(estimates);
      params.emplace(v, p);
      arguments.push_back(p);
    }

    std::map<int, Halide::Func> current;
    std::ostringstream text;
    Halide::Func last;
    for (size_t i = 0; i < kernel.ops.size(); ++i) {
      const OpSpec &op = kernel.ops[i];
      Halide::Func f(kernel.name + "_op" + std::to_string(i));
      OpBuilder b{kernel, op, {}, current, params, f, false, {}};
      size_t rank = op.outputDims.size();
      std::vector<Halide::Var> vars;
      for (size_t m = 0; m < rank; ++m)
        vars.emplace_back("d" + std::to_string(op.outputDims[m]));
      b.loops.assign(op.loopExtents.size(), Halide::Expr());
      for (size_t m = 0; m < rank; ++m)
        b.loops[op.outputDims[m]] = vars[m];
      std::vector<Halide::Expr> args;
      for (size_t m = rank; m-- > 0;)
        args.push_back(vars[m]);
      b.outputArgs = args;
      bool reduces = false;
      Halide::Region rdomRegion;
      std::vector<int> reductionDims;
      // RDom's first dimension is its innermost loop: the last reduction
      // loop of the op.
      for (size_t d = op.loopExtents.size(); d-- > 0;)
        if (op.reduction[d]) {
          reduces = true;
          reductionDims.push_back(static_cast<int>(d));
          rdomRegion.push_back({0, static_cast<int>(op.loopExtents[d])});
        }
      for (size_t d = 0; d < op.loopExtents.size(); ++d)
        if (!op.reduction[d] && !b.loops[d].defined())
          throw Halide::CompileError(
              "a parallel loop that indexes no output dimension");
      if (!reduces) {
        std::vector<Halide::Expr> memo(op.nodes.size());
        f(args) = b.value(op.result, memo);
      } else {
        // The accumulator's start: what the output holds (a fill of this
        // kernel, or memory).
        std::vector<Halide::Expr> index;
        for (size_t m = 0; m < rank; ++m)
          index.push_back(vars[m]);
        f(args) = b.read(op.output, index);
        Halide::RDom r(rdomRegion, kernel.name + "_r" + std::to_string(i));
        for (size_t k = 0; k < reductionDims.size(); ++k)
          b.loops[reductionDims[k]] = r[static_cast<int>(k)];
        b.selfDefined = true;
        std::vector<Halide::Expr> memo(op.nodes.size());
        f(args) = b.value(op.result, memo);
      }
      text << "  " << f.name() << "(";
      for (size_t m = rank; m-- > 0;)
        text << vars[m].name() << (m ? ", " : "");
      text << ") = " << f.value();
      if (reduces)
        text << "\n    update: " << f.update_value();
      text << "\n";
      current[op.output] = f;
      last = f;
    }

    // The output: one workgroup's slice of the last op's view.
    const OpSpec &lastOp = kernel.ops.back();
    const ViewSpec &out = kernel.views.at(lastOp.output);
    int rank = static_cast<int>(out.shape.size());
    Halide::Region outEstimates;
    for (int d = 0; d < rank; ++d) {
      int m = rank - 1 - d;
      int64_t extent = out.shape[m];
      if (m == kernel.sliceDim)
        extent /= kernel.workgroups;
      // Strides only: Halide 21 takes dense accesses to an output whose
      // extents are fixed (one of them 1) for aligned ones, and the host
      // pointer is only element-aligned. The extents reach the
      // autoscheduler as estimates; the asserts check what it assumed.
      last.output_buffer().dim(d).set_stride(static_cast<int>(out.strides[m]));
      outEstimates.push_back({0, static_cast<int>(extent)});
    }
    last.set_estimates(outEstimates);

    Halide::Target target(options.target + "-no_runtime");
    Halide::Pipeline pipeline(last);
    Halide::AutoSchedulerResults results = pipeline.apply_autoscheduler(
        target, Halide::AutoschedulerParams(scheduler, {{"parallelism", "1"}}));
    pipeline.compile_to_object(objectPath, arguments, kernel.name + "_halide",
                               target);
    description = text.str() + "  schedule (" + scheduler + "):\n" +
                  results.schedule_source;
    if (!reporter.warnings.empty())
      description += "  Halide said: " + reporter.warnings;
    return "";
  } catch (const Halide::Error &e) {
    return std::string("Halide: ") + e.what();
  }
}

} // namespace linformer::halide
