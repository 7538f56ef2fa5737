//===- SelectSchedules.cpp - choose each kernel's schedule -----*- C++ -*-===//
//
// Attaches a #linformer.cpu_schedule and the kernel's facts to every kernel
// root; see LinformerCPUSelectSchedulesPass in Passes.td. Choosing lives
// here and in the MLIR-free cost model (Schedule.cpp); applying lives in the
// tiling passes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/Contractions.h"
#include "compiler/Analysis/TokenAnalysis.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CPU/Passes.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "dialect/IR/LinformerOps.h"

#include "llvm/Support/MemoryBuffer.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUSELECTSCHEDULESPASS
#include "compiler/Codegen/CPU/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;
namespace sched = ::linformer::schedule;

namespace {
struct SelectSchedulesPass
    : mlir::linformer::impl::LinformerCPUSelectSchedulesPassBase<
          SelectSchedulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();

    // The target: the module's, else a preset or the host (attached, so
    // that the choice shows in the IR and reaches the artifact).
    sched::CPUTarget target;
    if (auto attr = module->getAttrOfType<CPUTargetAttr>(kTargetAttrName)) {
      target = fromAttr(attr);
    } else if (targetIsa == "host" || targetIsa.empty()) {
      target = hostCPUTarget();
      module->setAttr(kTargetAttrName, toAttr(ctx, target));
    } else if (targetIsa == "avx512" || targetIsa == "avx2" ||
               targetIsa == "sse") {
      target = sched::presetCPUTarget(targetIsa);
      module->setAttr(kTargetAttrName, toAttr(ctx, target));
    } else {
      emitError(module.getLoc())
          << "unknown isa '" << targetIsa
          << "': expected host, avx512, avx2 or sse";
      return signalPassFailure();
    }

    // Records of the schedule file, by key.
    std::map<std::string, sched::ScheduleRecord> overrides;
    std::set<std::string> used;
    if (!scheduleFile.empty() &&
        failed(readScheduleFile(module, scheduleFile, overrides)))
      return signalPassFailure();
    bool forced = rowTile != 0 || vectorWidth != 0 || unroll != 0 ||
                  reductionTile != 0;
    int candidateRound = -1, candidateIndex = -1;
    if (!candidate.empty()) {
      StringRef text(candidate);
      auto [r, i] = text.split(':');
      if (r.getAsInteger(10, candidateRound) ||
          i.getAsInteger(10, candidateIndex) || candidateRound < 0 ||
          candidateRound >= sched::kTuningRounds || candidateIndex < 0) {
        emitError(module.getLoc())
            << "candidate '" << candidate
            << "' is not ROUND:INDEX with ROUND in [0, "
            << sched::kTuningRounds << ")";
        return signalPassFailure();
      }
    }

    SmallVector<Operation *> roots;
    module.walk([&](Operation *op) {
      if (op->hasAttr(kRootAttrName) || isa<AttentionCoreOp>(op))
        roots.push_back(op);
    });
    // Which roots' rows are tokens (or pooled slots) of sequences whose
    // lengths the runtime knows: its rows rule leaves their tiles past the
    // lengths out (TileAndFuse), and the workgroups are chosen with short
    // runs in mind.
    TokenAnalysis tokens;
    for (Operation *root : roots) {
      FailureOr<sched::KernelShape> shape = analyzeRoot(root);
      if (failed(shape))
        return signalPassFailure();
      if (root->getNumResults() == 1 && markedLengthsArgument(root))
        if (std::optional<TokenDims> dims = tokens.of(root->getResult(0)))
          if (std::optional<TokenDims> loops = tokenLoopsOf(root, *dims)) {
            shape->lengthBatchLoop = static_cast<int>(loops->batch);
            shape->lengthRowLoop = static_cast<int>(loops->token);
            // A stated short run: its rows (slots of perRow tokens).
            if (shortLength > 0)
              shape->shortRows = std::clamp<int64_t>(
                  (shortLength + dims->perRow - 1) / dims->perRow, 1,
                  shape->ranges[loops->token]);
          }
      if (auto bound = root->getAttrOfType<TokenBoundAttr>(kTokenBoundAttrName);
          bound && markedLengthsArgument(root) && bound.getBatch() >= 0 &&
          bound.getBatch() < int64_t(shape->ranges.size()))
        shape->boundedBatchLoop = static_cast<int>(bound.getBatch());
      // Weights packed once per session: the cost model plans for panels.
      if (auto op = dyn_cast<linalg::LinalgOp>(root);
          prepackWeights && op && streamedWeight(op))
        shape->streamedWeight = true;
      std::string key = shapeKey(root, *shape);
      sched::CPUKernelSchedule model = sched::chooseSchedule(target, *shape);
      sched::CPUKernelSchedule chosen = model;
      std::string source = "cost-model";
      auto it = overrides.find(key);
      if (it != overrides.end()) {
        chosen = scheduleOfRecord(it->second, model);
        source = sourceOfRecord(it->second).str();
        used.insert(key);
      } else if (forced) {
        source = "forced";
        int m = shape->mDim();
        // Non-positive values are kept as given, for validate() to reject.
        if (rowTile != 0 && m >= 0)
          chosen.workgroup[m] =
              rowTile > 0
                  ? sched::largestDivisorAtMost(shape->ranges[m], rowTile)
                  : rowTile;
        if (vectorWidth != 0)
          chosen.columns = vectorWidth;
        if (unroll != 0)
          chosen.rows = unroll;
        if (reductionTile != 0)
          chosen.reduction = reductionTile < 0 ? 0 : reductionTile;
      } else if (auto existing =
                     root->getAttrOfType<CPUScheduleAttr>(kScheduleAttrName)) {
        chosen = fromAttr(existing);
        source = "ir";
      } else if (candidateRound >= 0) {
        std::vector<sched::CPUKernelSchedule> list =
            sched::candidates(target, *shape, model, candidateRound);
        if (candidateIndex < static_cast<int>(list.size())) {
          chosen = list[candidateIndex];
          source = "candidate";
        }
      }
      if (failed(checkScheduleFits(root, *shape, chosen, key, source)))
        return signalPassFailure();
      attachSchedule(root, *shape, key, chosen, model, source);
    }
    // Parts of split reductions do not exist yet: the split applies them;
    // nor do the kernels that pack weights (linformer-cpu-prepack-weights).
    for (auto &[key, record] : overrides)
      if (!used.count(key) && !isSplitPartRecord(record) &&
          !isPanelsRecord(record))
        emitWarning(module.getLoc()) << "schedule file entry '" << key
                                     << "' matches no kernel of this module";
  }
};
} // namespace
