//===- linformer-run.cpp - run an artifact on inputs ------------*- C++ -*-===//
//
// Loads an artifact and its weights through the runtime's C++ API, runs it
// on .npy inputs (or a seeded random input), writes the output as .npy,
// prints the median time of --repeat runs and, with --check, compares the
// output with the C++ reference encoder (lib/Reference) and prints the
// error. Needs no MLIR: it is built with the runtime. The command line is
// read here; what it asks for is runtime/run (linformer::run::run).
//
// Exit status: 0 ok; 1 a runtime or input error (message on stderr); 2 bad
// usage; 3 --check found an error above --tolerance.
//
//===----------------------------------------------------------------------===//

#include "runtime/run/Run.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

using linformer::run::Options;
using linformer::run::parseInteger;

namespace {

const char *kUsage =
    "usage: linformer-run ARTIFACT.lfa --weights W.safetensors\n"
    "         (--input x=FILE.npy | --random-input [--seq-len L] [--batch B]\n"
    "          [--seed S])\n"
    "         [--lengths FILE.npy | --lengths L1,L2,...] [--mask FILE.npy]\n"
    "         [--packed] [--poison-padding]\n"
    "         [--output out.npy] [--check] [--tolerance T]\n"
    "         [--reference-cache FILE] [--repeat N]\n"
    "         [--threads N] [--warmup N] [--profile] [--profile-json FILE]\n"
    "         [--device cpu|cuda] [--device-io] [--io-offset B] "
    "[--make-weights]\n"
    "         [--sessions N] [--spin-us U] [--rank R] [--[no-]cuda-graphs]\n"
    "         [--cuda-graph-branches N]\n"
    "--batch B: with --random-input, B sequences (default: as many as\n"
    "--lengths lists, else the compiled batch); a model with a lengths\n"
    "input runs 1 to its compiled batch of them and pays for those.\n"
    "--packed: pass the input and receive the output packed ([T, d], the\n"
    "sequences' real tokens end to end, cu_seqlens from --lengths), as\n"
    "FlashAttention's varlen interface; an --input file is then [T, d] and\n"
    "--lengths is required; --output writes the packed output.\n"
    "--poison-padding: with --lengths, the runtime gets the inputs with\n"
    "NaN bytes in the rows past each length (--check's reference keeps the\n"
    "originals), so kernels that read padded rows show up.\n"
    "--sessions N: N sessions on one module and weights (sharing the\n"
    "weights, on a device too); the others run once after the timed runs\n"
    "and must give the same output bytes.\n"
    "--device-io: a cuda artifact's input and output live in device memory\n"
    "(lf_device_alloc, lf_session_run_device); inputs must be the compiled\n"
    "shape. The timed runs then exclude host<->device copies.\n"
    "--device-io-offset B: with --device-io, place the input B bytes past\n"
    "its allocation's start (the runtime refuses addresses that are not\n"
    "16-byte aligned).\n"
    "--io-offset B: place the data inputs and the output B bytes past a\n"
    "64-byte-aligned address (host memory): the runtime binds a buffer\n"
    "aligned to its element size in place and copies any other; after the\n"
    "runs the inputs must hold what they were given.\n"
    "--rank R: rank R of a sequence-parallel artifact alone (not its P\n"
    "ranks as threads): its all-reduce sums nothing, so the output is not\n"
    "the sequence's, but its time, memory and --profile are one rank's\n"
    "(the input is the rank's tokens; --lengths its shares, >= 1).\n"
    "--cuda-graphs: a cuda artifact's runs replay their kernel launches as\n"
    "one CUDA graph each (lf_session_options.cuda_graphs), captured on\n"
    "first use of their launch shapes; not with --profile. By default\n"
    "only --device-io runs do (not profiled ones); --no-cuda-graphs: none.\n"
    "--cuda-graph-branches N: a graph's kernels on up to N branches, each\n"
    "waiting only for the earlier kernels that write what it binds or bind\n"
    "what it writes (lf_session_options.cuda_graph_branches; 2 to 16;\n"
    "default 0: one chain).\n"
    "--spin-us U: the session's threads spin U microseconds between kernels\n"
    "before they sleep (lf_session_options.spin_us; default 200, 0: sleep\n"
    "at once).\n"
    "--make-weights: first write seeded random weights (--seed) for the\n"
    "artifact's model to the --weights path, as linformer-compile\n"
    "--random-weights does (for machines without the compiler).\n"
    "--device: where the artifact must run (CUDA device 0 or this CPU);\n"
    "without it, an artifact with both takes the GPU when it can.\n"
    "--check: compare with the reference encoder; without --tolerance the\n"
    "bound follows the artifact's coarsest type: 1e-3 for f32, 3.92e-3 for\n"
    "bf16 storage, 5e-3 for TF32 or f16 tensor cores and f16 products\n"
    "(--precision=f16), 3e-2 for bf16 ones and for bf16 products\n"
    "(--precision=bf16). An f16 output's bound adds\n"
    "2^-24 absolute (its subnormal step) for outputs that small.\n"
    "--reference-cache FILE: keep --check's reference output in FILE, with\n"
    "a fingerprint of the model, weights and input; a later run with the\n"
    "same ones reads it instead of computing it (any other is recomputed).\n"
    "Every value option takes --option VALUE or --option=VALUE.\n";

int usage(const std::string &msg) {
  std::cerr << "linformer-run: " << msg << "\n" << kUsage;
  return 2;
}

/// The options, read from the command line.
struct CommandLine : Options {
  /// Reads the command line; an exit code where the command ends there
  /// (--help, a usage error).
  std::optional<int> parse(int argc, char **argv);
};

std::optional<int> CommandLine::parse(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    // --flag=value is --flag value.
    std::optional<std::string> inlineValue;
    if (a.rfind("--", 0) == 0)
      if (size_t eq = a.find('='); eq != std::string::npos) {
        inlineValue = a.substr(eq + 1);
        a.resize(eq);
      }
    auto value = [&](std::string &out) {
      if (inlineValue) {
        out = *inlineValue;
        inlineValue.reset();
        return true;
      }
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--weights") {
      if (!value(weightsPath)) return usage("--weights needs a path");
    } else if (a == "--input") {
      if (!value(v) || v.find('=') == std::string::npos)
        return usage("--input takes NAME=FILE.npy");
      inputs[v.substr(0, v.find('='))] = v.substr(v.find('=') + 1);
    } else if (a == "--output") {
      if (!value(output)) return usage("--output needs a path");
    } else if (a == "--lengths") {
      if (!value(lengthsArg)) return usage("--lengths needs a value");
    } else if (a == "--mask") {
      if (!value(maskPath)) return usage("--mask needs a path");
    } else if (a == "--device") {
      if (!value(device) || (device != "cpu" && device != "cuda"))
        return usage("--device takes cpu or cuda");
    } else if (a == "--device-io") {
      deviceIo = true;
    } else if (a == "--device-io-offset" || a == "--io-offset") {
      std::string v;
      long long num = 0;
      if (!value(v) || !parseInteger(v, 0, 4096, num))
        return usage(a + " needs a byte count from 0 to 4096");
      (a == "--io-offset" ? ioOffset : deviceIoOffset) = num;
    } else if (a == "--spin-us") {
      std::string v;
      long long num = 0;
      if (!value(v) || !parseInteger(v, 0, 1000000, num))
        return usage("--spin-us needs microseconds from 0 to 1000000");
      spinUs = int(num);
    } else if (a == "--packed") {
      packed = true;
    } else if (a == "--cuda-graphs") {
      cudaGraphs = 1;
    } else if (a == "--no-cuda-graphs") {
      cudaGraphs = 0;
    } else if (a == "--cuda-graph-branches") {
      long long num = 0;
      if (!value(v) || !parseInteger(v, 0, 16, num))
        return usage("--cuda-graph-branches needs a count from 0 to 16");
      cudaGraphBranches = int(num);
    } else if (a == "--make-weights") {
      makeWeights = true;
    } else if (a == "--check") {
      check = true;
    } else if (a == "--random-input") {
      randomInput = true;
    } else if (a == "--profile") {
      profile = true;
    } else if (a == "--poison-padding") {
      poisonPadding = true;
    } else if (a == "--reference-cache") {
      if (!value(referenceCache))
        return usage("--reference-cache needs a path");
    } else if (a == "--profile-json") {
      if (!value(profileJson)) return usage("--profile-json needs a path");
    } else if (a == "--tolerance") {
      if (!value(v)) return usage(a + " needs a number");
      char *end = nullptr;
      double num = std::strtod(v.c_str(), &end);
      if (v.empty() || !end || *end || !std::isfinite(num) || num < 0)
        return usage(a + " needs a non-negative number, not '" + v + "'");
      tolerance = num;
    } else if (a == "--repeat" || a == "--threads" || a == "--seq-len" ||
               a == "--warmup" || a == "--sessions" || a == "--batch" ||
               a == "--rank") {
      // Integers in the range each flag can mean; anything else is refused
      // by name rather than wrapped or truncated into some other value.
      long long lo =
          a == "--repeat" || a == "--seq-len" || a == "--sessions" ||
                  a == "--batch"
              ? 1
              : 0;
      long long hi = a == "--threads"    ? 1024
                     : a == "--sessions" ? 64
                     : a == "--rank"     ? (1ll << 20) - 1
                     : a == "--seq-len" ? (1ll << 40)
                                        : 1000000;
      long long num = 0;
      if (!value(v)) return usage(a + " needs a number");
      if (!parseInteger(v, lo, hi, num))
        return usage(a + " needs an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], not '" + v + "'");
      if (a == "--repeat") repeat = int(num);
      else if (a == "--threads") threads = int(num);
      else if (a == "--warmup") warmup = int(num);
      else if (a == "--sessions") sessions = int(num);
      else if (a == "--batch") runBatch = num;
      else if (a == "--rank") rank = int(num);
      else seqLen = num;
    } else if (a == "--seed") {
      if (!value(v)) return usage(a + " needs a number");
      char *end = nullptr;
      errno = 0;
      unsigned long long num = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || v[0] == '-' || *end || errno == ERANGE)
        return usage("--seed needs an integer in [0, 2^64), not '" + v + "'");
      seed = num;
    } else if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return usage("unknown option '" + a + "'");
    } else if (artifact.empty()) {
      artifact = a;
    } else {
      return usage("more than one artifact given");
    }
    if (inlineValue)
      return usage(a + " takes no value, not '" + *inlineValue + "'");
  }
  if (artifact.empty())
    return usage("no artifact given");
  if (weightsPath.empty())
    return usage("--weights is required");
  if (!randomInput && inputs.empty())
    return usage("give --input x=FILE.npy or --random-input");
  if (packed && !maskPath.empty())
    return usage("--packed takes the sequences' lengths from --lengths (or "
                 "--seq-len), not from --mask");
  if (packed && !randomInput && lengthsArg.empty())
    return usage("--packed with --input needs --lengths: how the input's "
                 "rows split into sequences");

  return std::nullopt;
}

} // namespace

int main(int argc, char **argv) {
  CommandLine options;
  if (std::optional<int> rc = options.parse(argc, argv))
    return *rc;
  return linformer::run::run(std::move(options));
}
