//===- SplitReductions.cpp - split-K for long reductions -------*- C++ -*-===//
//
// Applies the `split` of a kernel's schedule with upstream
// linalg::splitReduction; see LinformerCPUSplitReductionsPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CPU/Passes.h"
#include "compiler/Schedule/ScheduleAttrs.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

#include <set>

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUSPLITREDUCTIONSPASS
#include "compiler/Codegen/CPU/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;
namespace sched = ::linformer::schedule;

namespace {
struct SplitReductionsPass
    : mlir::linformer::impl::LinformerCPUSplitReductionsPassBase<
          SplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto targetAttr = module->getAttrOfType<CPUTargetAttr>(kTargetAttrName);
    SmallVector<linalg::LinalgOp> toSplit;
    module.walk([&](linalg::LinalgOp op) {
      auto s = op->getAttrOfType<CPUScheduleAttr>(kScheduleAttrName);
      if (s && s.getSplit() > 1 && op->hasAttr(kRootAttrName))
        toSplit.push_back(op);
    });
    // The parts' records of the schedule file (as --print-schedule writes
    // them: source "..., split N"), by key.
    std::map<std::string, sched::ScheduleRecord> overrides;
    std::set<std::string> used;
    if (!scheduleFile.empty() &&
        failed(readScheduleFile(module, scheduleFile, overrides)))
      return signalPassFailure();
    auto warnUnused = [&] {
      for (auto &[key, record] : overrides)
        if (!used.count(key) && isSplitPartRecord(record))
          emitWarning(module.getLoc())
              << "schedule file entry '" << key
              << "' (a part of a split reduction) matches no part of this "
                 "module's splits";
    };
    if (toSplit.empty())
      return warnUnused();
    if (!targetAttr) {
      module.emitError("split reductions need the module's linformer.target "
                       "(run --linformer-cpu-select-schedules first)");
      return signalPassFailure();
    }
    sched::CPUTarget target = fromAttr(targetAttr);
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : toSplit) {
      auto splitSchedule =
          op->getAttrOfType<CPUScheduleAttr>(kScheduleAttrName);
      int64_t ratio = splitSchedule.getSplit();
      auto info = op->getAttrOfType<KernelShapeAttr>(kKernelInfoAttrName);
      std::string source = info ? info.getSource().str() : "cost-model";
      linalg::ControlSplitReductionFn control = [&](linalg::LinalgOp) {
        return linalg::SplitReductionOptions{ratio, /*index=*/0,
                                             /*innerParallel=*/false};
      };
      // A token reduction keeps its bound through the split: where its
      // operand with both the batch and the token loops had the tokens, the
      // split one has (part, token within the part). A masked one (E's row
      // sums, which select the real tokens themselves) stays masked: its
      // bound is optional, and register tiling may leave no loop to take
      // it (it refused the default encoder at n >= 32768 when the split
      // dropped the mark).
      auto bound = op->getAttrOfType<TokenBoundAttr>(kTokenBoundAttrName);
      std::optional<std::tuple<unsigned, unsigned, unsigned>> boundOperand;
      if (bound && !bound.hasParts())
        for (OpOperand *in : op.getDpsInputOperands()) {
          AffineMap map = op.getMatchingIndexingMap(in);
          std::optional<unsigned> t = map.getResultPosition(
              getAffineDimExpr(bound.getToken(), op.getContext()));
          std::optional<unsigned> b = map.getResultPosition(
              getAffineDimExpr(bound.getBatch(), op.getContext()));
          if (t && b) {
            boundOperand = {in->getOperandNumber(), *b, *t};
            break;
          }
        }
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::SplitReductionResult> result =
          linalg::splitReduction(rewriter, op, control);
      if (failed(result)) {
        op->emitOpError() << "cannot split its reduction into " << ratio
                          << " parts (it needs a single reduction loop that "
                             "the parts divide, and an add, mul, min or max "
                             "combiner)";
        return signalPassFailure();
      }
      result->splitLinalgOp->removeAttr(kTokenBoundAttrName);
      result->resultCombiningLinalgOp->removeAttr(kTokenBoundAttrName);
      if (boundOperand) {
        auto [operand, b, t] = *boundOperand;
        linalg::LinalgOp split = result->splitLinalgOp;
        AffineMap map = split.getMatchingIndexingMap(
            &split->getOpOperand(operand));
        // The split operand is [.., parts, tokens / parts, ..] where it had
        // the tokens.
        if (map.getNumResults() > t + 1 && map.isProjectedPermutation()) {
          unsigned outer = map.getDimPosition(t);
          unsigned inner = map.getDimPosition(t + 1);
          unsigned batch = map.getDimPosition(b < t ? b : b + 1);
          SmallVector<int64_t> ranges = split.getStaticLoopRanges();
          split->setAttr(kTokenBoundAttrName,
                         TokenBoundAttr::get(rewriter.getContext(), inner,
                                             batch, /*part=*/outer,
                                             /*perPart=*/ranges[inner],
                                             bound.getMasked()));
        }
      }
      // Both halves are kernels with the cost model's schedules, or the
      // schedule file's for their keys; the parts are not split again.
      for (linalg::LinalgOp part :
           {result->splitLinalgOp, result->resultCombiningLinalgOp}) {
        part->setAttr(kRootAttrName, rewriter.getUnitAttr());
        FailureOr<sched::KernelShape> shape = analyzeRoot(part);
        if (failed(shape))
          return signalPassFailure();
        std::string key = shapeKey(part, *shape);
        sched::CPUKernelSchedule model = sched::chooseSchedule(target, *shape);
        model.split = 1;
        sched::CPUKernelSchedule chosen = model;
        std::string partSource = source;
        if (auto it = overrides.find(key); it != overrides.end()) {
          chosen = scheduleOfRecord(it->second, model);
          partSource = "file";
          used.insert(key);
        }
        partSource += ", split " + std::to_string(ratio);
        if (chosen.split != 1) {
          part->emitOpError() << "schedule (" << partSource << ") for kernel '"
                              << key << "' splits it again (split = "
                              << chosen.split
                              << "); a part of a split reduction is not split";
          return signalPassFailure();
        }
        if (failed(checkScheduleFits(part, *shape, chosen, key, partSource)))
          return signalPassFailure();
        attachSchedule(part, *shape, key, chosen, model, partSource, info,
                       info ? splitSchedule : CPUScheduleAttr());
      }
    }
    warnUnused();
  }
};
} // namespace
