//===- CUDAFlags.cpp - the CUDA pipeline's knobs as --cuda-* flags --------===//

#include "compiler/Pipelines/CUDAFlags.h"
#include "dialect/IR/LinformerDialect.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"

#include <deque>
#include <functional>
#include <memory>
#include <vector>

using namespace mlir;
using namespace mlir::linformer;

namespace {

template <typename T>
using Knob = mlir::detail::PassOptions::Option<T> CUDAPipelineOptions::*;

/// One --cuda-<name> flag a knob, named, described and defaulted as the
/// pipeline option is.
struct Flags {
  CUDAPipelineOptions defaults;
  std::deque<std::string> names;
  std::vector<std::unique_ptr<llvm::cl::Option>> flags;
  std::vector<std::function<void(CUDAPipelineOptions &)>> copies;

  template <typename T> void mirror(Knob<T> knob) {
    auto &option = defaults.*knob;
    names.push_back(("cuda-" + option.ArgStr).str());
    auto flag = std::make_unique<llvm::cl::opt<T>>(
        llvm::StringRef(names.back()), llvm::cl::desc(option.HelpStr),
        llvm::cl::init(option.getValue()));
    copies.push_back([knob, flag = flag.get()](CUDAPipelineOptions &o) {
      o.*knob = flag->getValue();
    });
    flags.push_back(std::move(flag));
  }

  Flags() {
    // The schedule knobs: what a user compares or tunes. The target (chip,
    // features), the output format and the tensor-core precision stay the
    // tools' own: their defaults and meaning differ between them.
    mirror<bool>(&CUDAPipelineOptions::fuseCore);
    mirror<bool>(&CUDAPipelineOptions::stageCore);
    mirror<bool>(&CUDAPipelineOptions::skipPaddingBlocks);
    mirror<bool>(&CUDAPipelineOptions::packedSequences);
    mirror<bool>(&CUDAPipelineOptions::ldmatrixCore);
    mirror<int64_t>(&CUDAPipelineOptions::coreSlots);
    mirror<int64_t>(&CUDAPipelineOptions::coreLanes);
    mirror<int64_t>(&CUDAPipelineOptions::coreRows);
    mirror<int64_t>(&CUDAPipelineOptions::coreGroups);
    mirror<int64_t>(&CUDAPipelineOptions::coreTiles);
    mirror<int64_t>(&CUDAPipelineOptions::coreMinBlocks);
    mirror<int64_t>(&CUDAPipelineOptions::splitKWarps);
    mirror<bool>(&CUDAPipelineOptions::splitKInKernel);
    mirror<int64_t>(&CUDAPipelineOptions::mergeLaunches);
    mirror<bool>(&CUDAPipelineOptions::stageContractions);
    mirror<bool>(&CUDAPipelineOptions::prefetchContractions);
    mirror<bool>(&CUDAPipelineOptions::simtContractions);
    mirror<bool>(&CUDAPipelineOptions::ldmatrixContractions);
    mirror<bool>(&CUDAPipelineOptions::ldmatrixTransContractions);
    mirror<bool>(&CUDAPipelineOptions::asyncCopyContractions);
    mirror<bool>(&CUDAPipelineOptions::pairStoresContractions);
    mirror<bool>(&CUDAPipelineOptions::narrowElementwise);
    mirror<bool>(&CUDAPipelineOptions::pairRowSums);
    mirror<bool>(&CUDAPipelineOptions::foldRowElementwise);
    mirror<int64_t>(&CUDAPipelineOptions::rowSumUnroll);
    mirror<bool>(&CUDAPipelineOptions::rowSumVectors);
    mirror<int64_t>(&CUDAPipelineOptions::asyncStages);
    mirror<int64_t>(&CUDAPipelineOptions::chunkKContractions);
    mirror<int64_t>(&CUDAPipelineOptions::blocksPerSM);
    mirror<bool>(&CUDAPipelineOptions::initializers);
    mirror<bool>(&CUDAPipelineOptions::wgmma);
    mirror<int64_t>(&CUDAPipelineOptions::wgmmaInFlight);
    mirror<int64_t>(&CUDAPipelineOptions::wgmmaSwizzle);
    mirror<int64_t>(&CUDAPipelineOptions::wgmmaTileN);
  }
};

llvm::ManagedStatic<Flags> flags;

} // namespace

void mlir::linformer::registerCUDAFlags() { *flags; }

void mlir::linformer::applyCUDAFlags(CUDAPipelineOptions &options) {
  for (auto &copy : flags->copies)
    copy(options);
}

std::string mlir::linformer::checkCUDAOptions(const CUDAPipelineOptions &o,
                                              llvm::StringRef prefix) {
  auto bad = [&](const auto &option, llvm::StringRef takes,
                 llvm::StringRef what) {
    return (prefix + option.ArgStr + " takes " + takes + " (" + what +
            "), not " + std::to_string(option.getValue()))
        .str();
  };
  if (o.asyncStages < 2 || o.asyncStages > 8)
    return bad(o.asyncStages, "2 to 8",
               "shared buffers of a staged contraction copied with cp.async");
  if (o.chunkKContractions != 0 && o.chunkKContractions != 16 &&
      o.chunkKContractions != 32 && o.chunkKContractions != 64)
    return bad(o.chunkKContractions, "0 (chosen), 16, 32 or 64",
               "k values a staged contraction's block copies at a time");
  if (o.coreTiles != 1 && o.coreTiles != 2)
    return bad(o.coreTiles, "1 or 2",
               "query tiles a warp of the tensor-core attention core");
  if (o.coreGroups < 1 || o.coreGroups > 64)
    return bad(o.coreGroups, "1 to 64",
               "query groups a staged attention-core block walks");
  if (o.coreSlots != 16 && o.coreSlots != 32 && o.coreSlots != 64)
    return bad(o.coreSlots, "16, 32 or 64",
               "slots a step of the tensor-core attention core");
  if (o.coreLanes != 0 && o.coreLanes != 1 && o.coreLanes != 4 &&
      o.coreLanes != 8 && o.coreLanes != 16)
    return bad(o.coreLanes, "0 (chosen), 1, 4, 8 or 16",
               "lanes a query row of the f32 attention core");
  if (o.coreRows != 1 && o.coreRows != 2 && o.coreRows != 4)
    return bad(o.coreRows, "1, 2 or 4",
               "query rows a thread of the f32 attention core");
  if (!CUDAScheduleAttr::isInFlight(o.wgmmaInFlight))
    return bad(o.wgmmaInFlight, "0 or 1",
               "batches of warpgroup MMAs left running past a chunk");
  if (!CUDAScheduleAttr::isSwizzle(o.wgmmaSwizzle))
    return bad(o.wgmmaSwizzle, "0, 32, 64 or 128",
               "bytes of the widest swizzle of wgmma's staged buffers");
  if (!CUDAScheduleAttr::isWgmmaTileN(o.wgmmaTileN))
    return bad(o.wgmmaTileN, "64, 128 or 256",
               "the widest n of a warpgroup tile");
  if (o.rowSumUnroll != 1 && o.rowSumUnroll != 2 && o.rowSumUnroll != 4 &&
      o.rowSumUnroll != 8)
    return bad(o.rowSumUnroll, "1, 2, 4 or 8",
               "steps of a row a lane of a row sum takes an iteration");
  if (o.splitKWarps < -1)
    return bad(o.splitKWarps, "-1 or a count of warps",
               "-1: 8 an SM of the target");
  if (o.mergeLaunches < -1)
    return bad(o.mergeLaunches, "-1, 0 or a count of blocks",
               "-1: the target's SMs; 0: no launches merged");
  if (o.coreMinBlocks < -1)
    return bad(o.coreMinBlocks, "-1 or a count of blocks",
               "-1: 4 an SM of the target");
  // 32: the most resident blocks an SM of any target this compiler knows.
  if (o.blocksPerSM < 1 || o.blocksPerSM > 32)
    return bad(o.blocksPerSM, "1 to 32", "blocks of a kernel an SM holds");
  return "";
}
