//===- ScheduleTest.cpp - target descriptions and the cost model ----------===//
//
// The MLIR-free half of the schedule machinery: ISA detection from feature
// strings, the cost model's register budget on every target for the shapes
// of the benchmark layer and encoder, the autotuner's candidates, schedule
// validation and the schedule file's JSON.
//
//===----------------------------------------------------------------------===//

#include "compiler/Schedule/Autotune.h"
#include "compiler/Schedule/Schedule.h"
#include "compiler/Schedule/Target.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <unistd.h>

using namespace linformer::schedule;

namespace {

/// A contraction shape: loops `ranges`, reductions at `reductionLoops`,
/// output indexed by `out`.
KernelShape contraction(std::vector<int64_t> ranges,
                        std::vector<int> reductionLoops, std::vector<int> out) {
  KernelShape s;
  s.kind = KernelKind::Contraction;
  s.ranges = ranges;
  s.reduction.assign(ranges.size(), false);
  for (int r : reductionLoops)
    s.reduction[r] = true;
  s.outputDims = out;
  double product = 1;
  for (int64_t r : ranges)
    product *= double(r);
  s.flops = 2 * product;
  return s;
}

KernelShape core(int64_t b, int64_t h, int64_t n, int64_t d, int64_t k) {
  KernelShape s;
  s.kind = KernelKind::AttentionCore;
  s.ranges = {b, h, n, d};
  s.reduction.assign(4, false);
  s.outputDims = {0, 1, 2, 3};
  s.coreK = k;
  return s;
}

/// The kernels of one benchmark layer (B=1, n=4096, d_model=512, h=8,
/// k=256) and of the encoder's FFN (2048).
std::vector<KernelShape> layerShapes() {
  return {
      contraction({1, 8, 4096, 512, 64}, {3}, {0, 1, 2, 4}),  // Q projection
      contraction({1, 256, 4096, 512}, {2}, {0, 1, 3}),       // E X
      contraction({1, 8, 256, 512, 64}, {3}, {0, 1, 2, 4}),   // (E X) W
      core(1, 8, 4096, 64, 256),                              // attention core
      contraction({1, 4096, 8, 64, 512}, {2, 3}, {0, 1, 4}),  // output proj.
      contraction({1, 4096, 512, 2048}, {2}, {0, 1, 3}),      // FFN up
      contraction({1, 4096, 2048, 512}, {2}, {0, 1, 3}),      // FFN down
      contraction({1, 2, 16, 8, 4}, {3}, {0, 1, 2, 4}),       // tiny
  };
}

TEST(TargetTest, DerivesTheISAFromFeatures) {
  CPUTarget t;
  t.features = "+sse2,+avx,+avx2,+fma,+avx512f";
  deriveISA(t);
  EXPECT_EQ(t.isa, "avx512");
  EXPECT_EQ(t.vectorBits, 512);
  EXPECT_EQ(t.vectorRegisters, 32);
  // A feature turned off later in the string is off.
  t.features = "+avx2,+fma,+avx512f,-avx512f";
  deriveISA(t);
  EXPECT_EQ(t.isa, "avx2");
  EXPECT_EQ(t.vectorBits, 256);
  EXPECT_EQ(t.vectorRegisters, 16);
  t.features = "+sse2,+avx2"; // no FMA: not the AVX2 FMA path
  deriveISA(t);
  EXPECT_EQ(t.isa, "sse");
  t.features = "";
  deriveISA(t);
  EXPECT_EQ(t.isa, "generic");
}

// The matrix engines come from the features, never the CPU's name (under a
// hypervisor an AMX Xeon may be named rocketlake), with one core's peaks.
TEST(TargetTest, MatrixEnginesFromFeatures) {
  CPUTarget spr = presetCPUTarget("avx512");
  spr.cpu = "rocketlake";
  spr.features = "+avx512f,+avx512bf16,+avx512fp16,+amx-tile,+amx-bf16,"
                 "+amx-int8,+avxvnni";
  MatrixEngines e = matrixEngines(spr);
  EXPECT_TRUE(e.amxTile && e.amxBF16 && e.amxInt8 && e.avx512BF16 &&
              e.avx512FP16 && e.avxVNNI);
  EXPECT_FALSE(e.amxFP16);
  EXPECT_EQ(peakF32FlopsPerCycle(spr), 64.0);   // 2 x 16 lanes x 2
  EXPECT_EQ(peakBF16FlopsPerCycle(spr), 1024.0); // a 16x16x32 tile / 16
  EXPECT_NE(describe(spr).find(", matrix engines amx-bf16 amx-int8 "
                               "avx512bf16 avx512fp16 avxvnni"),
            std::string::npos)
      << describe(spr);
  // Tile products need the tiles; a feature turned off is off.
  CPUTarget noTiles = spr;
  noTiles.features += ",-amx-tile";
  EXPECT_FALSE(matrixEngines(noTiles).amxBF16);
  EXPECT_EQ(peakBF16FlopsPerCycle(noTiles), 128.0); // vdpbf16ps: 2x f32
  // Zen 4: AVX512_BF16 on a datapath of 256-bit halves.
  CPUTarget zen4 = presetCPUTarget("avx512");
  zen4.features = "+avx512f,+avx512bf16";
  zen4.fmaBits = 256;
  EXPECT_EQ(peakF32FlopsPerCycle(zen4), 32.0);
  EXPECT_EQ(peakBF16FlopsPerCycle(zen4), 64.0);
  // AVX2 only: no engine, bf16 at the f32 rate, and nothing in the line.
  CPUTarget zen3 = presetCPUTarget("avx2");
  zen3.features = "+avx2,+fma";
  EXPECT_FALSE(matrixEngines(zen3).any());
  EXPECT_EQ(peakBF16FlopsPerCycle(zen3), peakF32FlopsPerCycle(zen3));
  EXPECT_EQ(describe(zen3).find("matrix engines"), std::string::npos);
  // The schedule file's target shows them; reading it back derives them
  // again from the features.
  std::string json = toJson(spr);
  EXPECT_NE(json.find(R"("engines":["amx-bf16","amx-int8","avx512bf16",)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("peak_flops_per_cycle":{"f32":64.0,"bf16":1024.0})"),
            std::string::npos)
      << json;
  CPUTarget back;
  ASSERT_EQ(fromJson(json, back), "");
  EXPECT_TRUE(matrixEngines(back).amxBF16);
}

TEST(TargetTest, KnownCPUsBringTheirOwnCaches) {
  CPUTarget t;
  ASSERT_TRUE(knownCPUCaches("znver3", t));
  EXPECT_EQ(t.l1Bytes, 32 * 1024);
  EXPECT_EQ(t.l2Bytes, 512 * 1024);
  EXPECT_EQ(t.l3Bytes, 32 * 1024 * 1024);
  ASSERT_TRUE(knownCPUCaches("haswell", t));
  EXPECT_EQ(t.l2Bytes, 256 * 1024);
  ASSERT_TRUE(knownCPUCaches("znver5", t));
  EXPECT_EQ(t.l1Bytes, 48 * 1024);
  EXPECT_EQ(t.l2Bytes, 1024 * 1024);
  // A name the table does not know leaves the target as it was.
  CPUTarget before = t;
  EXPECT_FALSE(knownCPUCaches("pentium4", t));
  EXPECT_FALSE(knownCPUCaches("", t));
  EXPECT_EQ(t.l1Bytes, before.l1Bytes);
  EXPECT_EQ(t.l2Bytes, before.l2Bytes);
  EXPECT_EQ(t.l3Bytes, before.l3Bytes);
}

TEST(TargetTest, JsonRoundTripAndErrors) {
  CPUTarget t = presetCPUTarget("avx2", 4);
  t.cpu = "znver3";
  CPUTarget back;
  ASSERT_EQ(fromJson(toJson(t), back), "");
  EXPECT_EQ(back.isa, "avx2");
  EXPECT_EQ(back.cores, 4);
  EXPECT_EQ(back.cpu, "znver3");
  EXPECT_EQ(fingerprint(back), fingerprint(t));
  // The datapath's width and L2's refill rate travel too.
  t.fmaBits = 256;
  t.l2BytesPerCycle = 48;
  ASSERT_EQ(fromJson(toJson(t), back), "");
  EXPECT_EQ(back.fmaBits, 256);
  EXPECT_EQ(back.l2BytesPerCycle, 48);
  // The table names the split: halves, or as many passes as it takes.
  CPUTarget split = presetCPUTarget("avx512");
  split.fmaBits = 256;
  EXPECT_NE(describe(split).find("512-bit in 256-bit halves,"),
            std::string::npos);
  split.fmaBits = 128;
  EXPECT_NE(describe(split).find("512-bit in 4 128-bit passes,"),
            std::string::npos);
  EXPECT_NE(fromJson(R"({"fma_bits": 100})", back).find("multiple of 32"),
            std::string::npos);
  EXPECT_NE(fromJson(R"({"l2_bytes_per_cycle": 0})", back)
                .find("'l2_bytes_per_cycle' is 0"),
            std::string::npos);
  EXPECT_NE(fromJson("[1]", back), "");
  EXPECT_NE(fromJson(R"({"cores": 0})", back).find("'cores' is 0"),
            std::string::npos);
  EXPECT_NE(fromJson(R"({"vector_bits": "wide"})", back).find("integer"),
            std::string::npos);
  EXPECT_NE(fingerprint(presetCPUTarget("avx2")),
            fingerprint(presetCPUTarget("avx512")));
}

/// The acceptance check of the schedules issue: on every ISA the chosen
/// register tile fits the register file, for every kernel of the layer.
TEST(TargetTest, CUDATargetsAndTheirRegisterBudgets) {
  CUDATarget h100, a100, t;
  ASSERT_TRUE(knownCUDATarget(90, h100));
  ASSERT_TRUE(knownCUDATarget(80, a100));
  EXPECT_EQ(h100.smCount, 132);
  EXPECT_EQ(a100.smCount, 108);
  EXPECT_EQ(a100.sharedBytesPerBlock, 163 * 1024);
  // 65536 registers per block: 255 per thread up to 256 threads, then the
  // block's registers spread over its threads.
  EXPECT_EQ(h100.registerBudget(128), 255);
  EXPECT_EQ(h100.registerBudget(256), 255);
  EXPECT_EQ(h100.registerBudget(512), 128);
  EXPECT_EQ(h100.registerBudget(1024), 64);
  EXPECT_EQ(h100.registerBudget(0), 255);
  // Two 256-thread blocks an SM share its 65536 registers: 128 each.
  EXPECT_EQ(h100.registerBudget(256, 2), 128);
  EXPECT_EQ(h100.registerBudget(128, 2), 255);
  EXPECT_EQ(h100.registerBudget(256, 0), 255);
  // Blocks an SM holds: threads (2048 on sm_90, 1536 on sm_86) and shared
  // memory with the driver's 1 KiB a block bound the request.
  EXPECT_EQ(h100.maxThreadsPerSM, 2048);
  EXPECT_EQ(h100.residentBlocks(256, 0, 2), 2);
  EXPECT_EQ(h100.residentBlocks(256, 70656, 4), 3);
  EXPECT_EQ(h100.residentBlocks(256, 120 * 1024, 2), 1);
  EXPECT_EQ(h100.residentBlocks(1024, 0, 4), 2);
  EXPECT_EQ(h100.residentBlocks(256, 0, 0), 1);
  CUDATarget sm86;
  ASSERT_TRUE(knownCUDATarget(86, sm86));
  EXPECT_EQ(sm86.residentBlocks(1024, 0, 2), 1);
  EXPECT_EQ(sm86.residentBlocks(256, 1024, 8), 6);
  EXPECT_FALSE(knownCUDATarget(50, t));
  EXPECT_FALSE(knownCUDATarget(91, t));
  EXPECT_EQ(describe(h100), "sm_90: 132 SMs, 65536 registers per block (255 "
                            "per thread), 48 KiB static shared memory per "
                            "block, warp 32");
}

TEST(CostModelTest, RegisterTilesFitEveryTarget) {
  for (const char *isa : {"avx512", "avx2", "sse"}) {
    CPUTarget t = presetCPUTarget(isa);
    for (const KernelShape &shape : layerShapes()) {
      CPUKernelSchedule s = chooseSchedule(t, shape);
      ScheduleEstimate e = estimate(t, shape, s);
      EXPECT_LE(e.registers, t.vectorRegisters) << isa;
      EXPECT_EQ(validate(shape, s), "") << isa;
      // Every candidate the autotuner would try fits too.
      for (int round = 0; round < kTuningRounds; ++round)
        for (const CPUKernelSchedule &c : candidates(t, shape, s, round)) {
          EXPECT_LE(estimate(t, shape, c).registers, t.vectorRegisters)
              << isa << " round " << round;
          EXPECT_EQ(validate(shape, c), "") << isa << " round " << round;
          EXPECT_NE(c, s);
        }
    }
  }
}

TEST(CostModelTest, WorkgroupRoundRetriesRegisterTilesForEachHeight) {
  // The autotuner's workgroup round tries each new height also with the
  // register tiles the cost model ranks first for it: rounds that vary one
  // field at a time missed a taller workgroup that a taller register tile
  // covers (the Q projection on a Xeon: 64 rows with 13 x 32 tiles, 8-10%
  // faster than 32 rows with 8 x 32, where 64 rows with 8 x 32 and 32 rows
  // with 13 x 32 gained little). Not for AMX, whose tiles are fixed.
  CPUTarget t = presetCPUTarget("avx512");
  for (int i : {0, 4}) {
    KernelShape shape = layerShapes()[i];
    CPUKernelSchedule s = chooseSchedule(t, shape);
    bool heightOnly = false, heightAndTile = false;
    for (const CPUKernelSchedule &c : candidates(t, shape, s, 2)) {
      if (c.workgroup == s.workgroup)
        continue;
      if (c.rows == s.rows && c.columns == s.columns)
        heightOnly = true;
      else
        heightAndTile = true;
    }
    EXPECT_TRUE(heightOnly) << "shape " << i;
    EXPECT_TRUE(heightAndTile) << "shape " << i;
    shape.engine = "amx";
    for (const CPUKernelSchedule &c : candidates(t, shape, s, 2))
      EXPECT_TRUE(c.rows == s.rows && c.columns == s.columns)
          << "shape " << i << " on AMX";
  }
}

TEST(CostModelTest, TinyShapesGetSchedulesTheyAccept) {
  // Sizes that coincide and sizes of 1-7 (issue 67: a core of 2 queries
  // and 32 value columns got its value width split in two to make more
  // workgroups, and validate refused the model's own pick).
  for (const char *isa : {"avx512", "avx2"}) {
    CPUTarget t = presetCPUTarget(isa);
    for (int64_t b : {1, 3})
      for (int64_t h : {1, 3})
        for (int64_t n : {1, 2, 7})
          for (int64_t d : {1, 8, 32}) {
            std::vector<KernelShape> shapes = {
                core(b, h, n, d, n),
                contraction({b, h, n, d * h, d}, {3}, {0, 1, 2, 4}),
                contraction({b, n, d, n}, {2}, {0, 1, 3})};
            for (const KernelShape &shape : shapes) {
              CPUKernelSchedule s = chooseSchedule(t, shape);
              EXPECT_EQ(validate(shape, s), "")
                  << isa << " b " << b << " h " << h << " n " << n << " d "
                  << d << " kind " << int(shape.kind);
              for (int round = 0; round < kTuningRounds; ++round)
                for (const CPUKernelSchedule &c :
                     candidates(t, shape, s, round))
                  EXPECT_EQ(validate(shape, c), "")
                      << isa << " round " << round << " n " << n << " d "
                      << d;
            }
          }
  }
}

TEST(CostModelTest, PicksPerISA) {
  KernelShape q = layerShapes()[0];
  CPUKernelSchedule avx512 = chooseSchedule(presetCPUTarget("avx512"), q);
  CPUKernelSchedule avx2 = chooseSchedule(presetCPUTarget("avx2"), q);
  // Columns are whole vectors of the ISA; enough accumulators to cover the
  // FMA latency (2 units x 4 cycles).
  EXPECT_EQ(avx512.columns % 16, 0);
  EXPECT_EQ(avx2.columns % 8, 0);
  EXPECT_GE(avx512.rows * avx512.columns / 16, 8);
  EXPECT_GE(avx2.rows * avx2.columns / 8, 8);
  // The AVX-512 tile would need 2x the registers AVX2 has.
  EXPECT_GT(estimate(presetCPUTarget("avx2"), q, avx512).registers, 16);
  // Workgroups: 32 rows, whole columns and reduction, >= 4 per core.
  EXPECT_EQ(avx512.workgroup, (std::vector<int64_t>{1, 1, 32, 0, 0}));
  EXPECT_GE(estimate(presetCPUTarget("avx512"), q, avx512).workgroups, 8);
  // The reduction block keeps both operand blocks within half of L1.
  ScheduleEstimate e = estimate(presetCPUTarget("avx2"), q, avx2);
  EXPECT_LE(e.l1Bytes, presetCPUTarget("avx2").l1Bytes / 2);
}

/// Where the FMA datapath is as wide as the vectors (Zen 5, AVX-512 Intel),
/// a contraction's unpacked streamed operand, refilled from L2, bounds wide
/// register tiles: the GEMMs take 8 x 32 (one streamed line per 8 FMAs).
/// Where 512-bit FMAs take two passes (Zen 4), L2 keeps up with 4 x 64
/// (fewer loads per FMA), as measured there; so does the attention core,
/// whose K and V tiles stay in L1, at any width.
TEST(CostModelTest, StreamedOperandsFromL2BoundWideTiles) {
  CPUTarget full = presetCPUTarget("avx512");
  CPUTarget halves = full;
  halves.cpu = "znver4";
  deriveMicroarchitecture(halves);
  ASSERT_EQ(halves.fmaBits, 256);
  ASSERT_EQ(halves.vectorPasses(), 2);
  CPUTarget zen5 = full;
  zen5.cpu = "znver5";
  deriveMicroarchitecture(zen5);
  EXPECT_EQ(zen5.vectorPasses(), 1);
  std::vector<KernelShape> shapes = layerShapes();
  for (int i : {0, 1, 4, 5, 6}) {
    CPUKernelSchedule a = chooseSchedule(full, shapes[i]);
    // The FFN's up-projection streams weights whose rows are 8 KiB apart
    // (every row of a block in the same L1 sets): a taller tile, more
    // accumulators a streamed vector. The others' rows are 2 KiB apart.
    if (i == 5) {
      EXPECT_GT(a.rows, 8);
      EXPECT_EQ(a.columns, 32);
      EXPECT_GE(estimate(full, shapes[i], a).accumulators, 24);
      EXPECT_LE(estimate(full, shapes[i], a).registers, 32);
      // The same weights in bf16 (4 KiB rows) too; 512 columns (2 KiB
      // rows) not.
      KernelShape bf16 = shapes[i];
      bf16.elementBytes = 2;
      EXPECT_GT(chooseSchedule(full, bf16).rows, 8);
      KernelShape narrow = contraction({1, 4096, 512, 512}, {2}, {0, 1, 3});
      EXPECT_EQ(chooseSchedule(full, narrow).rows, 8);
    } else {
      EXPECT_EQ(a.rows, 8) << "kernel " << i;
      EXPECT_EQ(a.columns, 32) << "kernel " << i;
    }
    CPUKernelSchedule b = chooseSchedule(halves, shapes[i]);
    EXPECT_EQ(b.rows, 4) << "kernel " << i;
    EXPECT_EQ(b.columns, 64) << "kernel " << i;
    // The model's reason: 4 x 64 reads 4 streamed vectors per 16 FMAs
    // (unpacked: E X's packed panels would stay in L1).
    CPUKernelSchedule wide = a;
    wide.rows = 4;
    wide.columns = 64;
    wide.pack = false;
    EXPECT_LT(estimate(full, shapes[i], wide).efficiency, 0.85)
        << "kernel " << i;
    EXPECT_GT(estimate(halves, shapes[i], wide).efficiency, 0.99)
        << "kernel " << i;
  }
  CPUKernelSchedule c = chooseSchedule(full, shapes[3]);
  EXPECT_EQ(c.rows, 4);
  EXPECT_EQ(c.columns, 64);
  // A packed panel stays in L1: no L2 bound.
  CPUKernelSchedule packed = chooseSchedule(full, shapes[0]);
  packed.rows = 4;
  packed.columns = 64;
  packed.pack = true;
  EXPECT_GT(estimate(full, shapes[0], packed).efficiency, 0.99);
}

TEST(CostModelTest, SplitsSmallKernelsForParallelism) {
  // E X with b = 1: [1, 256, 512] outputs, every core a share of the
  // columns (each workgroup sweeps its columns of X and all of E: see
  // SweepsFromL3InFewWorkgroups).
  KernelShape ex = layerShapes()[1];
  for (int64_t cores : {2, 8, 16}) {
    CPUTarget t = presetCPUTarget("avx512", cores);
    CPUKernelSchedule s = chooseSchedule(t, ex);
    EXPECT_GE(estimate(t, ex, s).workgroups, cores) << cores << " cores";
    EXPECT_EQ(s.workgroup[1], 0) << cores << " cores";
    EXPECT_EQ(s.workgroup[3], 512 / cores) << cores << " cores";
  }
  // A kernel over tokens keeps 4 workgroups a core at least.
  CPUTarget t8 = presetCPUTarget("avx512", 8);
  KernelShape q = layerShapes()[0];
  EXPECT_GE(estimate(t8, q, chooseSchedule(t8, q)).workgroups, 32);
}

TEST(CostModelTest, SpreadsShortRunsOverTheCores) {
  // The K projection of mean-pooled slots (n = 4096, k = 256): rows are
  // slots the runtime's length rule leaves out past the lengths; a run of
  // 1/16 of the tokens has 16 real slots.
  KernelShape kv = contraction({1, 8, 256, 512, 64}, {3}, {0, 1, 2, 4});
  kv.mLoop = 2;
  kv.nLoop = 4;
  kv.columnLoops = {1, 4};
  CPUTarget avx512 = presetCPUTarget("avx512", 2);
  CPUTarget avx2 = presetCPUTarget("avx2", 2);
  // Without the rule: 32-slot tiles, heads whole.
  CPUKernelSchedule plain = chooseSchedule(avx512, kv);
  EXPECT_EQ(plain.workgroup[2], 32);
  EXPECT_EQ(plain.workgroup[1], 0);
  kv.lengthBatchLoop = 0;
  kv.lengthRowLoop = 2;
  // AVX-512: 8-slot tiles (8 x 32 register tiles still fit): 2 workgroups
  // for 16 slots.
  CPUKernelSchedule s = chooseSchedule(avx512, kv);
  EXPECT_EQ(s.workgroup[2], 8);
  EXPECT_EQ(s.workgroup[1], 0);
  // AVX2: 8 rows would give up the 6 x 16 tile; 16 rows and the heads in
  // two instead.
  CPUKernelSchedule s2 = chooseSchedule(avx2, kv);
  EXPECT_EQ(s2.workgroup[2], 16);
  EXPECT_EQ(s2.workgroup[1], 4);
  EXPECT_EQ(s2.rows, 6);
  // Rows of tokens (the Q projection at n = 4096): a short run has 8
  // tiles of 32 already; nothing changes.
  KernelShape q = layerShapes()[0];
  CPUKernelSchedule qPlain = chooseSchedule(avx512, q);
  q.lengthBatchLoop = 0;
  q.lengthRowLoop = 2;
  EXPECT_EQ(chooseSchedule(avx512, q), qPlain);
  // Window sums ([b, slots, d_model], not a contraction): smaller row
  // tiles.
  KernelShape sums;
  sums.ranges = {1, 256, 512};
  sums.reduction = {false, false, false};
  sums.outputDims = {0, 1, 2};
  sums.lengthBatchLoop = 0;
  sums.lengthRowLoop = 1;
  EXPECT_EQ(chooseSchedule(avx512, sums).workgroup[1], 8);
  // The attention core keeps its value width whole, short run or not.
  KernelShape c = core(1, 1, 64, 32, 4);
  c.lengthBatchLoop = 0;
  c.lengthRowLoop = 2;
  EXPECT_EQ(chooseSchedule(avx512, c).workgroup[3], 0);
}

/// The FFN's GEMMs over tokens (weights of 4 MiB, more than L2): a short
/// run (a 16th of 4096 tokens, or the --lengths-hint) fewer rows than
/// reduction steps takes its rows a core in a workgroup, so that each core
/// reads the weights from L3 once, not once for every 32 rows; but no more
/// rows than L2 holds of the activations and the output (2560 floats a row
/// for either GEMM).
TEST(CostModelTest, ShortRunsThatSweepFromL3TakeACoreOfRowsAWorkgroup) {
  for (const char *isa : {"avx512", "avx2"}) {
    // 3 MiB of L2: 307 rows of 2560 floats, less than the 4 MiB weights.
    CPUTarget t = presetCPUTarget(isa, 2);
    t.l2Bytes = 3 << 20;
    for (int i : {5, 6}) {
      KernelShape ffn = layerShapes()[i];
      CPUKernelSchedule plain = chooseSchedule(t, ffn);
      EXPECT_LE(plain.workgroup[1], 64) << isa << " kernel " << i;
      ffn.lengthBatchLoop = 0;
      ffn.lengthRowLoop = 1;
      // 256 rows of a short run over 2 cores.
      EXPECT_EQ(chooseSchedule(t, ffn).workgroup[1], 128)
          << isa << " kernel " << i;
      // 1024 rows: fewer than the down projection's 2048 reduction steps,
      // not than the up projection's 512; 512 a core, but 256 fit L2.
      ffn.shortRows = 1024;
      EXPECT_EQ(chooseSchedule(t, ffn).workgroup[1],
                i == 6 ? 256 : plain.workgroup[1])
          << isa << " kernel " << i;
      // A short run of 64 rows: 32-row tiles already give each core one.
      ffn.shortRows = 64;
      EXPECT_EQ(chooseSchedule(t, ffn).workgroup[1], plain.workgroup[1])
          << isa << " kernel " << i;
      // More rows than reduction steps: the rows share the weights in L2.
      ffn.shortRows = 4096;
      EXPECT_EQ(chooseSchedule(t, ffn).workgroup[1], plain.workgroup[1])
          << isa << " kernel " << i;
    }
    // The presets' L2 (1 MiB, 512 KiB AVX2) holds 102 (51) such rows: the
    // short run keeps 64 (32) at most, or the plain tile where it is wider.
    CPUTarget preset = presetCPUTarget(isa, 2);
    int64_t fit = std::string(isa) == "avx512" ? 64 : 32;
    for (int i : {5, 6}) {
      KernelShape ffn = layerShapes()[i];
      int64_t plain = chooseSchedule(preset, ffn).workgroup[1];
      ffn.lengthBatchLoop = 0;
      ffn.lengthRowLoop = 1;
      EXPECT_EQ(chooseSchedule(preset, ffn).workgroup[1], std::max(plain, fit))
          << isa << " kernel " << i;
    }
  }
  // The Q projection's 1 MiB of weights fits the preset's L2: no change.
  CPUTarget avx512 = presetCPUTarget("avx512", 2);
  KernelShape q = layerShapes()[0];
  CPUKernelSchedule qPlain = chooseSchedule(avx512, q);
  q.lengthBatchLoop = 0;
  q.lengthRowLoop = 2;
  EXPECT_EQ(chooseSchedule(avx512, q), qPlain);
}

TEST(CostModelTest, SweepsFromL3InFewWorkgroups) {
  // E X (256 rows over 4096 tokens, 512 columns) sweeps 8 MiB of X, more
  // than L2: one workgroup a core, the cores sharing the columns (more
  // columns than rows: each sweeps and packs half of X and reads all of
  // E, 8 MiB a core against 10 by rows), and on AVX2 packed in blocks of
  // half of L1 (256 steps of 16 columns). Zen 4, AVX2 mode, 2 threads: 8.0
  // ms with 16 unpacked workgroups, 5.4 ms with 2 by rows; Zen 5 in AVX2
  // mode 4.73 ms by rows, 4.45 by columns.
  KernelShape ex = layerShapes()[1];
  ex.columnLoops = {0, 3};
  CPUTarget avx2 = presetCPUTarget("avx2");
  CPUKernelSchedule s = chooseSchedule(avx2, ex);
  EXPECT_EQ(estimate(avx2, ex, s).workgroups, 2);
  EXPECT_EQ(s.workgroup[1], 0);
  EXPECT_EQ(s.workgroup[3], 256);
  EXPECT_TRUE(s.pack);
  EXPECT_EQ(s.columns, 16);
  EXPECT_EQ(s.reduction, 256);
  EXPECT_EQ(validate(ex, s), "");
  // AVX-512: the same workgroups, packed too, in panels of half of L1
  // (full width 8 x 32; Zen 4's 4 x 64 in 256-bit halves, 64 steps).
  CPUTarget avx512 = presetCPUTarget("avx512");
  CPUKernelSchedule w = chooseSchedule(avx512, ex);
  EXPECT_EQ(estimate(avx512, ex, w).workgroups, 2);
  EXPECT_EQ(w.workgroup[3], 256);
  EXPECT_TRUE(w.pack);
  EXPECT_EQ(w.reduction * w.columns * 4 * 2, avx512.l1Bytes);
  CPUTarget zen4 = avx512;
  zen4.cpu = "znver4";
  deriveMicroarchitecture(zen4);
  CPUKernelSchedule z = chooseSchedule(zen4, ex);
  EXPECT_EQ(z.workgroup[3], 256);
  EXPECT_TRUE(z.pack);
  EXPECT_EQ(z.reduction * z.columns * 4 * 2, zen4.l1Bytes);
  // Fewer columns than rows (k = 1024 over 512 channels): by rows, as
  // before (each core reads half of E, all of X).
  KernelShape tall = contraction({1, 1024, 4096, 512}, {2}, {0, 1, 3});
  tall.mLoop = 1;
  tall.nLoop = 3;
  tall.columnLoops = {0, 3};
  CPUKernelSchedule r = chooseSchedule(avx2, tall);
  EXPECT_EQ(r.workgroup[1], 512);
  EXPECT_EQ(r.workgroup[3], 0);
  // AVX2's 6 x 16 on 256 rows (a 4-row peel) rather than 5 x 16: 10
  // accumulators hide the latency less well than 12.
  EXPECT_EQ(s.rows, 6);
  // A batch of 4 sequences whose lengths differ (E X stops at each one's):
  // every sequence its two workgroups, not one sequence a core.
  KernelShape batch = contraction({4, 256, 4096, 512}, {2}, {0, 1, 3});
  batch.mLoop = 1;
  batch.nLoop = 3;
  batch.columnLoops = {3};
  CPUKernelSchedule equal = chooseSchedule(avx512, batch);
  EXPECT_TRUE(equal.workgroup[1] == 0 || equal.workgroup[1] == 256)
      << "one workgroup a sequence: " << equal.workgroup[1];
  batch.boundedBatchLoop = 0;
  CPUKernelSchedule ragged = chooseSchedule(avx512, batch);
  EXPECT_EQ(ragged.workgroup[0], 1);
  EXPECT_EQ(ragged.workgroup[1], 0);
  EXPECT_EQ(ragged.workgroup[3], 256);
  EXPECT_EQ(estimate(avx512, batch, ragged).workgroups, 8);
  // Split-K's parts share the cores: at n = 65536 (16 parts) one workgroup
  // of all 256 rows a part.
  KernelShape longer = contraction({1, 256, 65536, 512}, {2}, {0, 1, 3});
  longer.mLoop = 1;
  longer.nLoop = 3;
  longer.columnLoops = {0, 3};
  CPUTarget big = presetCPUTarget("avx512");
  big.l3Bytes = 32 << 20;
  CPUKernelSchedule l = chooseSchedule(big, longer);
  EXPECT_EQ(l.split, 16);
  EXPECT_TRUE(l.workgroup[1] == 0 || l.workgroup[1] == 256);
  EXPECT_EQ(estimate(big, longer, l).workgroups, 1);
  // The token-row kernels (projections, FFN) keep their tiles: their rows
  // outnumber their reduction steps.
  for (int i : {0, 2, 4, 5, 6})
    EXPECT_GE(
        estimate(avx2, layerShapes()[i], chooseSchedule(avx2, layerShapes()[i]))
            .workgroups,
        8)
        << "shape " << i;
}

TEST(CostModelTest, SplitsLongReductionsOverLargeOperands) {
  CPUTarget t = presetCPUTarget("avx512");
  t.l3Bytes = 32 << 20;
  auto ex = [](int64_t n) {
    KernelShape s = contraction({1, 256, n, 512}, {2}, {0, 1, 3});
    s.mLoop = 1;
    s.nLoop = 3;
    s.columnLoops = {0, 3};
    return s;
  };
  // X of n x 512 floats: 8 MiB at n = 4096 fits in half of L3; at 65536
  // (128 MiB) 16 parts give 8 MiB blocks (a quarter of L3).
  EXPECT_EQ(chooseSchedule(t, ex(4096)).split, 1);
  EXPECT_EQ(chooseSchedule(t, ex(16384)).split, 4);
  EXPECT_EQ(chooseSchedule(t, ex(65536)).split, 16);
  // Short reductions (projections over d_model) and two reduction loops
  // (the output projection) are never split.
  EXPECT_EQ(chooseSchedule(t, layerShapes()[0]).split, 1);
  EXPECT_EQ(chooseSchedule(t, layerShapes()[4]).split, 1);
  CPUKernelSchedule bad = chooseSchedule(t, layerShapes()[4]);
  bad.split = 2;
  EXPECT_NE(validate(layerShapes()[4], bad).find("exactly one reduction"),
            std::string::npos);
  bad = chooseSchedule(t, ex(4096));
  bad.split = 3;
  EXPECT_NE(validate(ex(4096), bad).find("does not divide"), std::string::npos);
  bad.split = 0;
  EXPECT_NE(validate(ex(4096), bad).find("split 0"), std::string::npos);
}

// A weight packed once per session (streamedWeight): packed on either ISA
// wherever its panels tile it, and the whole reduction at once where a
// panel fits half of L2 (the FFN's 512 and 2048 steps of 32 or 16 columns:
// 64 and 256 KiB, 32 and 128 KiB), else blocks of half of L2. Without the
// fact nothing changes.
TEST(CostModelTest, PrepackedWeightsTakeTheWholeReduction) {
  std::vector<KernelShape> shapes = layerShapes();
  for (const char *isa : {"avx512", "avx2"}) {
    CPUTarget t = presetCPUTarget(isa);
    t.l2Bytes = 1 << 20;
    for (int i : {5, 6}) {
      KernelShape weight = shapes[i];
      weight.streamedWeight = true;
      CPUKernelSchedule s = chooseSchedule(t, weight);
      EXPECT_TRUE(s.pack) << isa << " " << i;
      EXPECT_EQ(s.reduction, 0) << isa << " " << i;
      EXPECT_EQ(validate(weight, s), "");
      EXPECT_NE(chooseSchedule(t, shapes[i]).reduction, 0);
    }
  }
  // A reduction too long for a panel in half of L2: 64 KiB of it (the
  // L2 of 256 KiB, 32 columns of f32: 2048 steps would take 256 KiB).
  CPUTarget small = presetCPUTarget("avx512");
  small.l2Bytes = 256 << 10;
  KernelShape down = shapes[6];
  down.streamedWeight = true;
  CPUKernelSchedule s = chooseSchedule(small, down);
  EXPECT_TRUE(s.pack);
  EXPECT_EQ(s.reduction * s.columns * 4, 128 << 10);
  // Packed only where the panels tile the weight's columns.
  KernelShape odd = contraction({1, 4096, 512, 2040}, {2}, {0, 1, 3});
  odd.streamedWeight = true;
  CPUKernelSchedule o = chooseSchedule(presetCPUTarget("avx512"), odd);
  EXPECT_TRUE(!o.pack || 2040 % o.columns == 0) << o.columns;
}

TEST(CostModelTest, PrepackedHeadsTakeOnePanelAHead) {
  // Zen 4's 4 x 64 tiles span a head's 64 columns: one panel a head. A
  // head's rows are 512 columns apart in the weight, 64 in its panel:
  // packed. A [K, 64] weight is its own panel already: not packed.
  CPUTarget zen4 = presetCPUTarget("avx512");
  zen4.fmaBits = 256;
  zen4.l2Bytes = 1 << 20;
  KernelShape q = layerShapes()[0];
  q.streamedWeight = true;
  q.columnLoops = {1, 4};
  CPUKernelSchedule s = chooseSchedule(zen4, q);
  ASSERT_EQ(s.columns, 64);
  EXPECT_TRUE(s.pack);
  EXPECT_EQ(s.reduction, 0);
  EXPECT_EQ(validate(q, s), "");
  KernelShape narrow = contraction({1, 4096, 512, 64}, {2}, {0, 1, 3});
  narrow.streamedWeight = true;
  narrow.columnLoops = {3};
  CPUKernelSchedule n = chooseSchedule(zen4, narrow);
  ASSERT_EQ(n.columns, 64);
  EXPECT_FALSE(n.pack);
}

// AMX tiles over a prepacked weight: rows in blocks of up to 256, so that
// every panel swept from L3 serves them all. The FFN GEMMs on a Xeon's 2
// MiB L2, 2 cores: 128 rows (the short run's 256 tokens a core each); 256
// without lengths for FFN down (2048 bf16 steps + 512 f32 columns, 6 KiB a
// row), 128 for FFN up (8 KiB of f32 results a row); 32 rows with 56
// cores (4 x 56 workgroups). Not for the FMA path, nor without the fact.
TEST(CostModelTest, AMXTakesRowBlocksOverPrepackedWeights) {
  CPUTarget xeon = presetCPUTarget("avx512");
  xeon.l2Bytes = 2 << 20;
  xeon.cores = 2;
  std::vector<KernelShape> shapes = layerShapes();
  auto amx = [](KernelShape k) {
    k.streamedWeight = true;
    k.elementBytes = 2;
    k.engine = "amx";
    k.columnLoops = {3};
    return k;
  };
  auto rows = [](const CPUKernelSchedule &s) { return s.workgroup[1]; };
  KernelShape up = amx(shapes[5]), down = amx(shapes[6]);
  for (KernelShape *k : {&up, &down}) {
    k->lengthRowLoop = 1;
    k->tokenLoop = 1;
    CPUKernelSchedule s = chooseSchedule(xeon, *k);
    EXPECT_EQ(rows(s), 128);
    EXPECT_EQ(validate(*k, s), "");
    k->lengthRowLoop = -1;
    k->tokenLoop = -1;
  }
  EXPECT_EQ(rows(chooseSchedule(xeon, down)), 256);
  EXPECT_EQ(rows(chooseSchedule(xeon, up)), 128);
  KernelShape emulated = down;
  emulated.engine = "amx, emulated";
  EXPECT_EQ(rows(chooseSchedule(xeon, emulated)), 256);
  CPUTarget big = xeon;
  big.cores = 56;
  EXPECT_LE(rows(chooseSchedule(big, down)), 32);
  KernelShape dot = down;
  dot.engine = "dot";
  EXPECT_LE(rows(chooseSchedule(xeon, dot)), 64);
  KernelShape activations = down;
  activations.streamedWeight = false;
  EXPECT_LE(rows(chooseSchedule(xeon, activations)), 64);
  // The attention core on AMX: 128 queries a workgroup (8 heads x 32
  // workgroups), 64 or fewer on the FMA path and with 56 cores (whose
  // workgroups have to make 4 a core).
  KernelShape c = layerShapes()[3];
  c.engine = "amx";
  c.elementBytes = 2;
  c.lengthRowLoop = 2;
  c.tokenLoop = 2;
  CPUKernelSchedule cs = chooseSchedule(xeon, c);
  EXPECT_EQ(cs.workgroup[2], 128);
  EXPECT_EQ(validate(c, cs), "");
  EXPECT_LE(chooseSchedule(big, c).workgroup[2], 64);
  c.engine = "";
  EXPECT_LE(chooseSchedule(xeon, c).workgroup[2], 64);
}

TEST(CostModelTest, AMXTakesLongReductionBlocksOverUnpackedOperands) {
  // E X on AMX tiles: X is copied into pairs a block at a time and each
  // block loads and stores its register tiles' accumulators, so blocks of
  // 256 tokens (64 on the FMA path).
  CPUTarget xeon = presetCPUTarget("avx512");
  xeon.l2Bytes = 2 << 20;
  xeon.cores = 2;
  KernelShape ex = layerShapes()[1];
  ex.elementBytes = 2;
  ex.columnLoops = {0, 3};
  ex.engine = "amx";
  CPUKernelSchedule s = chooseSchedule(xeon, ex);
  EXPECT_FALSE(s.pack);
  EXPECT_EQ(s.reduction, 256);
  EXPECT_EQ(validate(ex, s), "");
  ex.engine = "amx, emulated";
  EXPECT_EQ(chooseSchedule(xeon, ex).reduction, 256);
  ex.engine = "";
  EXPECT_LE(chooseSchedule(xeon, ex).reduction, 64);
  // The attention core on AMX: its k slots in one block up to 256 (P V's
  // accumulators loaded and stored once), blocks of 256 where they divide
  // a longer k, 64 otherwise and on the FMA path.
  KernelShape c = layerShapes()[3];
  c.elementBytes = 2;
  c.engine = "amx";
  CPUKernelSchedule cs = chooseSchedule(xeon, c);
  EXPECT_EQ(cs.reduction, 256);
  EXPECT_EQ(validate(c, cs), "");
  c.coreK = 100;
  EXPECT_EQ(chooseSchedule(xeon, c).reduction, 100);
  c.coreK = 1024;
  EXPECT_EQ(chooseSchedule(xeon, c).reduction, 256);
  c.coreK = 1000;
  EXPECT_EQ(chooseSchedule(xeon, c).reduction, 64);
  c.coreK = 256;
  c.engine = "";
  EXPECT_EQ(chooseSchedule(xeon, c).reduction, 64);
}

TEST(CostModelTest, PacksWideStreamedOperandsOnAVX2) {
  // The FFN's weights: a 128-step block over all 2048 (512) columns is
  // 1 MiB (256 KiB), at least half of L2, while a 6 x 16 tile's panel is
  // 8 KiB: packed on AVX2. The Q projection's per-head 64 columns (32 KiB
  // a block) and the tiny kernel are not; on AVX-512 only the sweep from
  // L3 (E X, measured on Zen 5), elsewhere packing was not measured.
  CPUTarget avx2 = presetCPUTarget("avx2");
  avx2.l2Bytes = 512 << 10;
  std::vector<KernelShape> shapes = layerShapes();
  EXPECT_TRUE(chooseSchedule(avx2, shapes[5]).pack);
  EXPECT_TRUE(chooseSchedule(avx2, shapes[6]).pack);
  EXPECT_FALSE(chooseSchedule(avx2, shapes[0]).pack);
  EXPECT_FALSE(chooseSchedule(avx2, shapes[3]).pack); // the core
  EXPECT_FALSE(chooseSchedule(avx2, shapes[7]).pack);
  // On AVX-512 only E X, which sweeps X from L3 (SweepsFromL3InFewWorkgroups).
  for (size_t i = 0; i < shapes.size(); ++i)
    EXPECT_EQ(chooseSchedule(presetCPUTarget("avx512"), shapes[i]).pack, i == 1)
        << "kernel " << i;
  // The autotuner tries the other choice.
  CPUKernelSchedule base = chooseSchedule(avx2, shapes[5]);
  bool tried = false;
  for (const CPUKernelSchedule &c : candidates(avx2, shapes[5], base, 1))
    tried |= !c.pack;
  EXPECT_TRUE(tried);
}

TEST(CostModelTest, UnpackedReductionBlocksStopAt64Steps) {
  // AVX2's 6 x 16 tiles fit 128-step blocks in half of L1, but an operand
  // read in place has a row (a cache line at its row stride) a step: the
  // bench layer's E X, core and projections ran faster with 64 steps on
  // Zen 4. A packed block is contiguous: its panel takes half of L1 (the
  // default encoder's packed FFN GEMM ran 10% slower with 64 steps than
  // with 128, and 1-5% slower with 128 than with 256).
  CPUTarget avx2 = presetCPUTarget("avx2");
  avx2.l2Bytes = 512 << 10;
  std::vector<KernelShape> shapes = layerShapes();
  for (int i : {0, 3}) {
    CPUKernelSchedule s = chooseSchedule(avx2, shapes[i]);
    ASSERT_FALSE(s.pack) << "shape " << i;
    EXPECT_EQ(s.reduction, 64) << "shape " << i;
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    CPUKernelSchedule s = chooseSchedule(avx2, shapes[i]);
    EXPECT_TRUE(s.pack || s.reduction <= 64) << "shape " << i;
  }
  // A packed panel (16 columns) takes half of L1: 256 steps.
  CPUKernelSchedule packed = chooseSchedule(avx2, shapes[5]);
  ASSERT_TRUE(packed.pack);
  EXPECT_EQ(packed.reduction, 256);
  // The autotuner still tries the longer block.
  bool longer = false;
  CPUKernelSchedule q = chooseSchedule(avx2, shapes[0]);
  for (const CPUKernelSchedule &c : candidates(avx2, shapes[0], q, 1))
    longer |= c.reduction == 128;
  EXPECT_TRUE(longer);
}

TEST(CostModelTest, ValidateNamesTheProblem) {
  KernelShape q = layerShapes()[0];
  CPUKernelSchedule s = chooseSchedule(presetCPUTarget("avx2"), q);
  CPUKernelSchedule bad = s;
  bad.workgroup = {1, 1, 48, 0, 0};
  EXPECT_NE(validate(q, bad).find("does not divide"), std::string::npos);
  bad.workgroup = {1, 1, 32, 64, 0};
  EXPECT_NE(validate(q, bad).find("reduction"), std::string::npos);
  bad.workgroup = {1, 1};
  EXPECT_NE(validate(q, bad).find("2 sizes"), std::string::npos);
  bad = s;
  bad.rows = 0;
  EXPECT_NE(validate(q, bad).find("rows"), std::string::npos);
  bad = s;
  bad.reduction = -1;
  EXPECT_NE(validate(q, bad).find("reduction block"), std::string::npos);
  // The core's value width stays whole (split, it compiled to a copy that
  // did not link).
  KernelShape c = core(1, 1, 64, 32, 4);
  CPUKernelSchedule cs = chooseSchedule(presetCPUTarget("avx512"), c);
  EXPECT_EQ(validate(c, cs), "");
  cs.workgroup = {1, 1, 8, 16};
  EXPECT_NE(validate(c, cs).find("value width (32)"), std::string::npos);
}

TEST(ScheduleFileTest, RoundTrip) {
  ScheduleFile f;
  f.target = presetCPUTarget("avx2");
  f.hasTarget = true;
  ScheduleRecord r;
  r.key = "contraction/pppRp/1x8x4096x512x64/8dc03e";
  r.kernel = "layer_kernel_0";
  r.shape = layerShapes()[0];
  r.shape.mLoop = 2;
  r.shape.nLoop = 4;
  r.shape.columnLoops = {4};
  r.shape.flops = 2.0 * 8 * 4096 * 512 * 64;
  r.schedule = chooseSchedule(f.target, r.shape);
  r.source = "tuned";
  r.hasModelSchedule = true;
  r.modelSchedule = r.schedule;
  r.modelSchedule.rows = 2;
  r.modelMs = 3.5;
  r.tunedMs = 2.25;
  f.kernels.push_back(r);
  ScheduleFile back;
  ASSERT_EQ(parseScheduleFile(scheduleFileToJson(f), back), "");
  ASSERT_EQ(back.kernels.size(), 1u);
  EXPECT_EQ(back.kernels[0].key, r.key);
  // The shape facts the schedule was chosen from, every one of them.
  const KernelShape &shape = back.kernels[0].shape;
  EXPECT_EQ(shape.kind, KernelKind::Contraction);
  EXPECT_EQ(shape.ranges, r.shape.ranges);
  EXPECT_EQ(shape.reduction, r.shape.reduction);
  EXPECT_EQ(iteratorString(shape), iteratorString(r.shape));
  EXPECT_EQ(shape.outputDims, r.shape.outputDims);
  EXPECT_EQ(shape.mLoop, r.shape.mLoop);
  EXPECT_EQ(shape.nLoop, r.shape.nLoop);
  EXPECT_EQ(shape.columnLoops, r.shape.columnLoops);
  EXPECT_EQ(shape.coreK, r.shape.coreK);
  EXPECT_DOUBLE_EQ(shape.flops, r.shape.flops);
  EXPECT_EQ(back.kernels[0].schedule, r.schedule);
  EXPECT_EQ(back.kernels[0].source, "tuned");
  EXPECT_TRUE(back.kernels[0].hasModelSchedule);
  EXPECT_EQ(back.kernels[0].modelSchedule, r.modelSchedule);
  EXPECT_DOUBLE_EQ(back.kernels[0].tunedMs, 2.25);
  EXPECT_EQ(back.target.isa, "avx2");
  EXPECT_NE(formatScheduleTable(back).find("layer_kernel_0"),
            std::string::npos);
}

TEST(ScheduleFileTest, ErrorsNameTheRecord) {
  ScheduleFile f;
  std::string notJson = parseScheduleFile("not json", f);
  EXPECT_EQ(notJson.rfind("schedule file: not valid JSON (parse error at "
                          "line 1, column 2",
                          0),
            0u)
      << notJson;
  // A file with something after the document (other output redirected
  // into it) says where.
  std::string extra = parseScheduleFile("{}\nwrote x.lfa\n", f);
  EXPECT_NE(extra.find("line 2, column 1"), std::string::npos) << extra;
  EXPECT_NE(parseScheduleFile("{}", f).find("'kernels' must be an array"),
            std::string::npos);
  EXPECT_NE(parseScheduleFile(R"({"kernels": [{"schedule": {}}]})", f)
                .find("kernels[0]: 'key'"),
            std::string::npos);
  EXPECT_NE(parseScheduleFile(
                R"({"kernels": [{"key": "k", "schedule": {"reduction": "x"}}]})",
                f)
                .find("kernels[0] ('k'): 'reduction' must be an integer"),
            std::string::npos);
  EXPECT_NE(parseScheduleFile(R"({"format": "other", "kernels": []})", f)
                .find("'format'"),
            std::string::npos);
  EXPECT_NE(parseScheduleFile(R"({"version": 2, "kernels": []})", f)
                .find("'version'"),
            std::string::npos);
}

} // namespace

namespace {

/// A fake machine for the autotuner: time = base x penalties, so that the
/// best schedule is known. It prefers the model's second register tile, a
/// reduction block twice the model's and workgroups half as tall.
struct FakeMachine {
  int64_t rows, reduction, wgRows;
  double ms(const CPUKernelSchedule &s, double base) const {
    double t = base;
    t *= s.rows == rows ? 1.0 : 1.5;
    t *= s.reduction == reduction ? 1.0 : 1.2;
    t *= s.workgroup[2] == wgRows ? 1.0 : 1.1;
    return t;
  }
};

TEST(AutotuneTest, FindsTheFastestCandidatePerShape) {
  CPUTarget t = presetCPUTarget("avx2");
  std::vector<TuningKernel> kernels;
  std::map<std::string, FakeMachine> machines;
  for (auto [key, shape] : {std::pair<std::string, KernelShape>{
                                "q", layerShapes()[0]},
                            {"pv", layerShapes()[2]}}) {
    TuningKernel k;
    k.key = key;
    k.shape = shape;
    k.start = chooseSchedule(t, shape);
    kernels.push_back(k);
    auto tiles = registerTileCandidates(t, shape, k.start.workgroup);
    ASSERT_GE(tiles.size(), 2u);
    machines[key] = {tiles[1].first, k.start.reduction * 2,
                     k.start.workgroup[2] / 2};
  }
  std::vector<std::string> lines;
  int calls = 0;
  AutotuneOptions options;
  options.measure = [&](const ScheduleMap &m,
                        std::map<std::string, double> &ms) -> std::string {
    ++calls;
    if (calls == 3)
      return "the third variant crashes"; // discarded, not fatal
    ms["q"] = machines["q"].ms(m.at("q"), 10);
    ms["pv"] = machines["pv"].ms(m.at("pv"), 1);
    return "";
  };
  options.progress = [&](const std::string &l) { lines.push_back(l); };
  AutotuneResult r;
  ASSERT_EQ(autotune(t, kernels, options, r), "");
  EXPECT_EQ(r.variants, calls);
  for (const char *key : {"q", "pv"}) {
    const CPUKernelSchedule &best = r.best.at(key);
    const FakeMachine &fm = machines[key];
    EXPECT_EQ(best.rows, fm.rows) << key;
    EXPECT_EQ(best.reduction, fm.reduction) << key;
    EXPECT_EQ(best.workgroup[2], fm.wgRows) << key;
    EXPECT_LT(r.bestMs.at(key), r.startMs.at(key)) << key;
    EXPECT_EQ(validate(key == std::string("q") ? layerShapes()[0]
                                                : layerShapes()[2],
                       best),
              "");
  }
  bool sawDiscard = false, sawCandidate = false;
  for (const std::string &l : lines) {
    sawDiscard |= l.find("discarded (the third variant crashes)") !=
                  std::string::npos;
    sawCandidate |= l.find("round 1/3 (register tile), candidate 1 of") !=
                    std::string::npos;
  }
  EXPECT_TRUE(sawDiscard);
  EXPECT_TRUE(sawCandidate);

  // The starting point must be measurable.
  options.measure = [](const ScheduleMap &,
                       std::map<std::string, double> &) -> std::string {
    return "no runtime";
  };
  EXPECT_NE(autotune(t, kernels, options, r).find("no runtime"),
            std::string::npos);
}

TEST(AutotuneTest, TuningCacheRoundTrip) {
  char dirTemplate[] = "/tmp/linformer-cache-test-XXXXXX";
  ASSERT_NE(mkdtemp(dirTemplate), nullptr);
  std::string dir = std::string(dirTemplate) + "/nested/tuning";
  CPUTarget t = presetCPUTarget("avx512");
  std::string path = tuningCachePath(dir, t, "0.1.0");
  EXPECT_NE(path.find(fingerprint(t)), std::string::npos);
  ScheduleFile f;
  EXPECT_EQ(loadTuningCache(path, f), ""); // missing = empty
  EXPECT_TRUE(f.kernels.empty());
  ScheduleRecord r;
  r.key = "k";
  r.schedule = chooseSchedule(t, layerShapes()[0]);
  r.source = "tuned";
  f.kernels.push_back(r);
  ASSERT_EQ(saveTuningCache(path, f), "");
  ScheduleFile back;
  ASSERT_EQ(loadTuningCache(path, back), "");
  ASSERT_EQ(back.kernels.size(), 1u);
  EXPECT_EQ(back.kernels[0].schedule, r.schedule);
  // A damaged cache is an error that says how to recover.
  FILE *junk = std::fopen(path.c_str(), "w");
  std::fputs("{", junk);
  std::fclose(junk);
  EXPECT_NE(loadTuningCache(path, back).find("delete it"), std::string::npos);
  std::string cmd = "rm -rf " + std::string(dirTemplate);
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

} // namespace
