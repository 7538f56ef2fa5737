//===- ScheduleDefaults.h - default CPU schedule knobs ----------*- C++ -*-===//
//
// The default schedule of the CPU pipeline, in one place: the passes'
// TableGen options, the pipeline options and the tools all read these.
// bench/README.md and docs/Pipeline.md say how they were chosen.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_SCHEDULEDEFAULTS_H
#define LINFORMER_COMPILER_SCHEDULEDEFAULTS_H

#include <cstdint>

namespace mlir::linformer {

/// Rows per workgroup tile.
inline constexpr int64_t kDefaultRowTile = 32;
/// Elements per register-tile row (32 f32: two AVX-512 registers).
inline constexpr int64_t kDefaultVectorWidth = 32;
/// Rows per register tile (accumulator rows).
inline constexpr int64_t kDefaultUnroll = 8;
/// Steps of all reduction loops together kept in one cache block.
inline constexpr int64_t kDefaultReductionTile = 64;

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_SCHEDULEDEFAULTS_H
