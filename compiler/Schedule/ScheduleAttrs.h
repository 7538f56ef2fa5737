//===- ScheduleAttrs.h - schedules and targets in the IR --------*- C++ -*-===//
//
// The bridge between the MLIR-free schedule data (Target.h, Schedule.h) and
// the IR: conversions to and from #linformer.cpu_target and
// #linformer.cpu_schedule, the host's target description, and the analysis
// that turns a kernel root into a KernelShape and a shape key.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_SCHEDULE_SCHEDULEATTRS_H
#define LINFORMER_COMPILER_SCHEDULE_SCHEDULEATTRS_H

#include "compiler/Schedule/Schedule.h"
#include "dialect/IR/LinformerDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"

#include <map>
#include <string>

namespace mlir::linformer {

/// The CPU described by LLVM CPU name `cpu` and features `features`, with
/// the host's core count and cache sizes (a named CPU other than the host's:
/// its own, where schedule::knownCPUCaches knows them). Empty `cpu`: the host's
/// CPU; empty `features`: the named CPU's own features (on x86, written out),
/// or the host's when no CPU is named either.
::linformer::schedule::CPUTarget hostCPUTarget(StringRef cpu = "",
                                               StringRef features = "");

CPUTargetAttr toAttr(MLIRContext *ctx,
                     const ::linformer::schedule::CPUTarget &t);
::linformer::schedule::CPUTarget fromAttr(CPUTargetAttr attr);
/// The CPU target of the module `op` is in (its `linformer.target`), else
/// the host's: what code generation emits for.
::linformer::schedule::CPUTarget cpuTargetOf(Operation *op);

/// What multiplies a contraction's bf16 pairs (both factors bf16, its
/// reduction stepped in pairs): `FMA` (no pairs: f32 FMAs of the extended
/// values), `Dot` (`vdpbf16ps`, a register tile's rows one pair at a time)
/// or `AMX` (`tdpbf16ps` on 16 x 16 f32 tiles, 16 pairs a step); `native`
/// when the target has the instruction, else it is emulated with vector
/// ops (so the path runs and is checked on any CPU).
enum class BF16Engine { FMA, Dot, AMX };
using ::linformer::schedule::BF16Dot;
struct BF16EngineChoice {
  BF16Engine engine = BF16Engine::FMA;
  bool native = false;
};
/// The engine `dot` selects on `target`: `Auto` vdpbf16ps where the target
/// has AVX512_BF16 (CPUs with AMX have it too; AMX is not chosen by
/// default until its kernels are measured on one), else FMAs; `Emulate`
/// vdpbf16ps (emulated without AVX512_BF16); `AMX` AMX tiles (emulated
/// without AMX-BF16); `Off` FMAs.
/// With `f16` (f16 pairs: linformer-bf16-products' f16=true), AMX-FP16's
/// tiles (`tdpfp16ps`) are the only engine: `Auto` takes them where the
/// target has AMX-FP16, else FMAs; `Emulate` and `AMX` take them, emulated
/// without AMX-FP16 (no CPU has an f16 dot product that sums in f32).
BF16EngineChoice bf16EngineFor(BF16Dot dot,
                               const ::linformer::schedule::CPUTarget &target,
                               bool f16 = false);
/// A pass's option `option` (the word `dot`) read through the table and
/// then as above; another word is an error at `op` that names the option
/// and lists the values ("unknown bf16-dot 'vnni': expected auto, emulate,
/// amx or off").
FailureOr<BF16EngineChoice>
bf16EngineFor(Operation *op, StringRef option, StringRef dot,
              const ::linformer::schedule::CPUTarget &target,
              bool f16 = false);
/// How schedules name an engine: "fma", "dot" or "amx", with ", emulated"
/// where the target lacks it (FMAs are everywhere).
std::string bf16EngineName(BF16EngineChoice choice);

CPUScheduleAttr toAttr(MLIRContext *ctx,
                       const ::linformer::schedule::CPUKernelSchedule &s);
::linformer::schedule::CPUKernelSchedule fromAttr(CPUScheduleAttr attr);

/// The shape facts of a kernel root (a linalg op marked linformer.root or a
/// linformer.attention_core), or failure with a diagnostic when its shapes
/// are not static.
FailureOr<::linformer::schedule::KernelShape> analyzeRoot(Operation *root);

/// A stable, readable key for a root's shape: kind, iterators, loop ranges
/// and a short hash of the indexing maps and body, e.g.
/// "contraction/pppRp/1x8x4096x512x64/7c1e09". Kernels with equal keys are
/// interchangeable for scheduling.
std::string shapeKey(Operation *root,
                     const ::linformer::schedule::KernelShape &shape);

/// Attaches to `root` its `linformer.kernel` facts (key, kind, loops,
/// iterators, dims, FLOPs, `source`, and `model` when `chosen` differs from
/// it) and `linformer.schedule = chosen`. A part of a split reduction names
/// the kernel it was split from: `splitOf` (its facts) and `splitSchedule`.
void attachSchedule(Operation *root, const ::linformer::schedule::KernelShape &shape,
                    StringRef key,
                    const ::linformer::schedule::CPUKernelSchedule &chosen,
                    const ::linformer::schedule::CPUKernelSchedule &model,
                    StringRef source, KernelShapeAttr splitOf = {},
                    CPUScheduleAttr splitSchedule = {});

/// The records of the schedule file at `path` by shape key, for
/// --linformer-cpu-select-schedules and --linformer-cpu-split-reductions;
/// an unreadable or malformed file is an error on `module`.
LogicalResult readScheduleFile(
    ModuleOp module, StringRef path,
    std::map<std::string, ::linformer::schedule::ScheduleRecord> &out);

/// The schedule a schedule file's record gives a kernel whose cost-model
/// pick is `model`: the record's, with the model's workgroup tiles when the
/// record has none.
::linformer::schedule::CPUKernelSchedule
scheduleOfRecord(const ::linformer::schedule::ScheduleRecord &record,
                 const ::linformer::schedule::CPUKernelSchedule &model);

/// Refuses, on `root`, a schedule that does not fit its kernel: an error
/// naming where the schedule came from (`source`), the kernel's `key` and
/// what does not fit.
LogicalResult
checkScheduleFits(Operation *root,
                  const ::linformer::schedule::KernelShape &shape,
                  const ::linformer::schedule::CPUKernelSchedule &schedule,
                  StringRef key, StringRef source);

/// Whether a schedule file record describes a part of a split reduction
/// (its source says ", split N"): a kernel that
/// --linformer-cpu-split-reductions makes, so that pass applies it.
bool isSplitPartRecord(const ::linformer::schedule::ScheduleRecord &r);
/// Whether `r` is the record of a kernel that packs a weight into panels
/// (source "..., panels"), which linformer-cpu-prepack-weights makes and
/// applies.
bool isPanelsRecord(const ::linformer::schedule::ScheduleRecord &r);
/// Where a kernel's schedule came from when a schedule file's record gave
/// it: "tuned" for a record the autotuner wrote (its source starts so),
/// "file" for any other.
StringRef sourceOfRecord(const ::linformer::schedule::ScheduleRecord &r);

/// The record (key, kind, loops, flops, schedule, estimate) of a kernel
/// from its `linformer.kernel` info and `linformer.schedule`; false if
/// either is missing.
bool kernelRecord(KernelShapeAttr info, CPUScheduleAttr schedule,
                  const ::linformer::schedule::CPUTarget &target,
                  ::linformer::schedule::ScheduleRecord &out);

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_SCHEDULE_SCHEDULEATTRS_H
