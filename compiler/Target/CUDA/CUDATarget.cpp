//===- CUDATarget.cpp - PTX to cubin with the toolkit's ptxas -------------===//

#include "compiler/Target/CUDA/CUDATarget.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>

using namespace mlir::linformer;

std::string mlir::linformer::ptxasPath(llvm::StringRef toolkit) {
  std::string dir = toolkit.str();
  if (dir.empty())
    if (const char *home = std::getenv("CUDA_HOME"); home && *home)
      dir = home;
  if (dir.empty())
    dir = "/usr/local/cuda";
  return dir + "/bin/ptxas";
}

llvm::Expected<std::string> mlir::linformer::assemblePTX(llvm::StringRef ptxas,
                                                        llvm::StringRef ptx,
                                                        llvm::StringRef chip) {
  auto fail = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("linformer-ptxas", dir))
    return fail("cannot create a temporary directory: " + ec.message());
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(dir); });
  std::string in = (dir + "/kernels.ptx").str();
  std::string out = (dir + "/kernels.cubin").str();
  std::string log = (dir + "/ptxas.log").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec)
      return fail("cannot write " + in + ": " + ec.message());
    os << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  llvm::StringRef args[] = {ptxas, arch, "-O3", in, "-o", out};
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(log), llvm::StringRef(log)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                     /*secondsToWait=*/600, 0, &message);
  if (rc != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    return fail(ptxas + " rejected the generated PTX (exit " +
                std::to_string(rc) + "): " +
                (text ? (*text)->getBuffer().trim().str() : message));
  }
  auto bytes = llvm::MemoryBuffer::getFile(out, /*IsText=*/false);
  if (!bytes)
    return fail("cannot read " + out);
  return (*bytes)->getBuffer().str();
}
