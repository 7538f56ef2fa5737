//===- PackedSequences.cpp - kernels that index packed sequences -*- C++
//-*-===//
//
// A kernel argument marked linformer.packed_sequence is declared [b, n, ...]
// but holds the sequences packed: sequence s's `lengths[s]` real tokens from
// row `sum of lengths[i < s]`, end to end. Every access to it becomes an
// access to its [b * n, ...] view at that row; rows past a sequence's length
// are not stored and read as its last real row. With `entry` (CUDA) the
// function is a whole model's, each outermost scf.parallel a kernel's
// blocks around its thread loops, and its own sequence arguments are the
// packed ones. See LinformerPackedSequencesPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERPACKEDSEQUENCESPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

/// Whether `v` is `arg` or a view of it.
bool viewsArg(Value v, Value arg) {
  auto memref = dyn_cast<TypedValue<BaseMemRefType>>(v);
  return memref && memref::skipViewLikeOps(memref) == arg;
}

/// A load or a store: the memref it reads or writes, its indices, and for a
/// store the operand of the value it stores.
struct Access {
  Value base;
  ValueRange indices;
  OpOperand *stored = nullptr;
};

/// `op` as an access; nullopt for any other op.
std::optional<Access> accessOf(Operation *op) {
  return TypeSwitch<Operation *, std::optional<Access>>(op)
      .Case([](memref::LoadOp o) {
        return Access{o.getMemRef(), o.getIndices()};
      })
      .Case([](memref::StoreOp o) {
        return Access{o.getMemRef(), o.getIndices(), &o.getValueMutable()};
      })
      .Case([](vector::LoadOp o) {
        return Access{o.getBase(), o.getIndices()};
      })
      .Case([](vector::StoreOp o) {
        return Access{o.getBase(), o.getIndices(), &o.getValueToStoreMutable()};
      })
      .Case([](vector::MaskedLoadOp o) {
        return Access{o.getBase(), o.getIndices()};
      })
      .Case([](vector::MaskedStoreOp o) {
        return Access{o.getBase(), o.getIndices(), &o.getValueToStoreMutable()};
      })
      .Case([](vector::TransferReadOp o) {
        return Access{o.getBase(), o.getIndices()};
      })
      .Case([](vector::TransferWriteOp o) {
        return Access{o.getBase(), o.getIndices(), &o.getValueToStoreMutable()};
      })
      .Case([](nvgpu::DeviceAsyncCopyOp o) {
        // Reads its source (the destination is shared memory).
        return Access{o.getSrc(), o.getSrcIndices()};
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Where a whole model's function computes what `op` needs of its
/// sequence: its thread loop (the scf.parallel in the outermost one, the
/// kernel's blocks), or the outermost one when it has none inside; null
/// outside the parallel loops. (Not in the block loop itself: a block past
/// the lengths skips its thread loops, and nothing else there may touch
/// memory.)
scf::ParallelOp threadLoop(Operation *op) {
  scf::ParallelOp outer, inner;
  for (auto p = op->getParentOfType<scf::ParallelOp>(); p;
       p = p->getParentOfType<scf::ParallelOp>()) {
    inner = outer;
    outer = p;
  }
  return inner ? inner : outer;
}

struct PackedSequencesPass
    : mlir::linformer::impl::LinformerPackedSequencesPassBase<
          PackedSequencesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (kernel.isExternal())
      return;
    if (entry)
      markEntryArguments(kernel);
    SmallVector<BlockArgument> packed;
    BlockArgument lengths;
    for (BlockArgument arg : kernel.getArguments()) {
      if (kernel.getArgAttr(arg.getArgNumber(), kPackedSequenceArgAttrName))
        packed.push_back(arg);
      if (kernel.getArgAttr(arg.getArgNumber(), kLengthsArgAttrName))
        lengths = arg;
    }
    if (packed.empty())
      return;
    sequences.clear();
    constantSequences.clear();
    auto lengthsType =
        lengths ? dyn_cast<MemRefType>(lengths.getType()) : MemRefType();
    if (!lengthsType || lengthsType.getRank() != 1 ||
        !lengthsType.getElementType().isInteger(32)) {
      kernel.emitOpError("has packed sequence arguments "
                         "(linformer.packed_sequence) but no i32 [b] "
                         "argument marked linformer.lengths to find them "
                         "with");
      return signalPassFailure();
    }
    for (BlockArgument arg : packed) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || type.getRank() < 3 || !type.getLayout().isIdentity() ||
          !type.hasStaticShape() ||
          type.getDimSize(0) != lengthsType.getDimSize(0)) {
        kernel.emitOpError("packed sequence argument ")
            << arg.getArgNumber() << " has type " << arg.getType()
            << "; expected a static [b, n, ...] memref (rank 3 or more, "
               "identity layout) with the lengths' b = "
            << lengthsType.getDimSize(0);
        return signalPassFailure();
      }
      if (failed(rewriteAccesses(kernel, arg, lengths)))
        return signalPassFailure();
    }
    // A whole model's function keeps its marks: its launch plan says
    // packed_sequences, and later passes read the lengths.
    if (entry)
      return;
    // What the code now indexes packed goes into its ABI record.
    SmallVector<int64_t> flags(kernel.getNumArguments() - 1, 0);
    for (BlockArgument arg : packed)
      if (arg.getArgNumber() < flags.size())
        flags[arg.getArgNumber()] = 1;
    kernel->setAttr(kPackedBuffersAttrName,
                    DenseI64ArrayAttr::get(kernel.getContext(), flags));
    for (BlockArgument arg : packed)
      kernel.removeArgAttr(arg.getArgNumber(), kPackedSequenceArgAttrName);
    kernel.removeArgAttr(lengths.getArgNumber(), kLengthsArgAttrName);
  }

  /// With `entry`: marks the function's sequence buffers packed, when it
  /// has lengths to find them with: the arguments marked
  /// linformer.sequence, its sequence inputs and the outputs that hold
  /// tokens (linformer-sequence-results marks the results, bufferization
  /// carries the mark to their out-parameters), never an argument that
  /// only has their size.
  void markEntryArguments(func::FuncOp fn) {
    bool hasLengths = false;
    SmallVector<BlockArgument> sequences;
    for (BlockArgument arg : fn.getArguments()) {
      hasLengths |=
          bool(fn.getArgAttr(arg.getArgNumber(), kLengthsArgAttrName));
      if (fn.getArgAttr(arg.getArgNumber(), kSequenceArgAttrName))
        sequences.push_back(arg);
    }
    if (!hasLengths)
      return;
    for (BlockArgument arg : sequences)
      if (auto type = dyn_cast<MemRefType>(arg.getType());
          type && type.getRank() >= 3)
        fn.setArgAttr(arg.getArgNumber(), kPackedSequenceArgAttrName,
                      UnitAttr::get(fn.getContext()));
  }

  /// Where sequence `s` starts, how many real tokens it has, its last real
  /// row (length - 1) and whether it has none (index values and an i1,
  /// right after `s` is defined, or at the start of the kernel (with
  /// `entry` its thread loop) where `s` is a constant or defined outside;
  /// once per `s` and place).
  struct Sequence {
    Value start, length, last, empty;
  };
  /// By kernel (null where `s` is defined inside it) and `s`.
  DenseMap<std::pair<Operation *, Value>, Sequence> sequences;

  /// Constant sequences, per kernel (the function, or with `entry` its
  /// thread loop).
  DenseMap<std::pair<Operation *, int64_t>, Sequence> constantSequences;

  FailureOr<Sequence> sequenceOf(OpBuilder &b, Value s, Value lengths,
                                 func::FuncOp kernel, Operation *access) {
    // A constant sequence (one a kernel, the batch of 1) is the same
    // wherever its constant was made: computed once, at the kernel's entry.
    std::optional<int64_t> constant = getConstantIntValue(s);
    Operation *where = kernel;
    if (entry && !(where = threadLoop(access)))
      return access->emitOpError(
          "accesses a packed sequence argument outside the function's "
          "parallel loops (its kernels), where no sequence can be found");
    // An `s` defined outside `where` (with `entry`: in the host code, or in
    // the block loop around the thread loop) is computed at `where`'s
    // start, as a constant is.
    Operation *scope = s.getParentBlock()->getParentOp();
    bool outside = where != scope && !where->isProperAncestor(scope);
    std::pair<Operation *, Value> key{outside ? where : nullptr, s};
    if (constant) {
      if (auto it = constantSequences.find({where, *constant});
          it != constantSequences.end())
        return it->second;
    } else if (auto it = sequences.find(key); it != sequences.end()) {
      return it->second;
    }
    OpBuilder::InsertionGuard guard(b);
    if (constant) {
      b.setInsertionPointToStart(&where->getRegion(0).front());
      s = arith::ConstantIndexOp::create(b, s.getLoc(), *constant);
    } else if (outside) {
      b.setInsertionPointToStart(&where->getRegion(0).front());
    } else if (Operation *def = s.getDefiningOp()) {
      b.setInsertionPointAfter(def);
    } else {
      b.setInsertionPointToStart(cast<BlockArgument>(s).getOwner());
    }
    Location loc = s.getLoc();
    auto lengthOf = [&](OpBuilder &nb, Location l, Value i) -> Value {
      Value len = memref::LoadOp::create(nb, l, lengths, ValueRange{i});
      return arith::IndexCastOp::create(nb, l, nb.getIndexType(), len);
    };
    Sequence seq;
    seq.length = lengthOf(b, loc, s);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    seq.last = arith::SubIOp::create(b, loc, seq.length, one);
    seq.empty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                      seq.last, zero);
    if (cast<MemRefType>(lengths.getType()).getDimSize(0) == 1) {
      seq.start = zero;
    } else {
      // The lengths of the sequences before it, added.
      auto loop = scf::ForOp::create(
          b, loc, zero, s, one, ValueRange{zero},
          [&](OpBuilder &nb, Location l, Value i, ValueRange sum) {
            Value next =
                arith::AddIOp::create(nb, l, sum[0], lengthOf(nb, l, i));
            scf::YieldOp::create(nb, l, next);
          });
      seq.start = loop.getResult(0);
    }
    if (constant)
      return constantSequences[{where, *constant}] = seq;
    return sequences[key] = seq;
  }

  LogicalResult rewriteAccesses(func::FuncOp kernel, BlockArgument arg,
                                Value lengths) {
    MLIRContext *ctx = kernel.getContext();
    // Accesses through views first become accesses to the argument itself
    // (upstream's alias folding), so that each names its sequence and row.
    SmallVector<Operation *> throughViews;
    kernel.walk([&](Operation *op) {
      if (std::optional<Access> access = accessOf(op);
          access && access->base != arg && viewsArg(access->base, arg))
        throughViews.push_back(op);
    });
    if (!throughViews.empty()) {
      RewritePatternSet patterns(ctx);
      memref::populateFoldMemRefAliasOpPatterns(patterns);
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      (void)applyOpPatternsGreedily(throughViews, std::move(patterns), config);
      // The views the accesses went through, now unused (innermost first).
      SmallVector<Operation *> views;
      kernel.walk([&](ViewLikeOpInterface view) {
        if (viewsArg(view->getResult(0), arg))
          views.push_back(view);
      });
      for (Operation *view : llvm::reverse(views))
        if (view->use_empty())
          view->erase();
    }

    auto type = cast<MemRefType>(arg.getType());
    int64_t rank = type.getRank();
    OpBuilder b(ctx);
    SmallVector<ReassociationIndices> merge = {{0, 1}};
    for (int64_t d = 2; d < rank; ++d)
      merge.push_back({d});
    // The [b * n, ...] view, at the start of the kernel (with `entry`, of
    // each thread loop: a view made in host code could not be a kernel's
    // buffer).
    DenseMap<Operation *, Value> rowViews;
    auto rowsFor = [&](Operation *op) {
      Operation *where = entry ? threadLoop(op) : kernel;
      Value &rows = rowViews[where];
      if (!rows) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&where->getRegion(0).front());
        if (!entry) {
          rows = memref::CollapseShapeOp::create(b, arg.getLoc(), arg, merge);
        } else {
          // The same view as a reinterpretation of the pointer, which the
          // GPU lowering turns into LLVM directly (it has no
          // expand-strided-metadata for a collapse).
          auto collapsed =
              memref::CollapseShapeOp::computeCollapsedType(type, merge);
          SmallVector<int64_t> strides;
          int64_t offset;
          (void)collapsed.getStridesAndOffset(strides, offset);
          rows = memref::ReinterpretCastOp::create(
              b, arg.getLoc(), collapsed, arg, /*offset=*/0,
              collapsed.getShape(), strides);
        }
      }
      return rows;
    };

    if (failed(splitRowSpanningAccesses(arg)))
      return failure();

    SmallVector<Operation *> accesses;
    for (OpOperand &use : arg.getUses()) {
      Operation *user = use.getOwner();
      std::optional<Access> access = accessOf(user);
      if (!access || access->base != arg) {
        // A view that did not fold, a copy, a call: its rows cannot be
        // found.
        return user->emitOpError("uses packed sequence argument ")
               << arg.getArgNumber() << " of kernel @" << kernel.getSymName()
               << " in a way linformer-packed-sequences cannot index "
                  "(only loads and stores of it, directly or through views "
                  "that fold into them)";
      }
      // Vectors along the batch or the tokens would span sequences.
      AffineMap map;
      if (auto read = dyn_cast<vector::TransferReadOp>(user))
        map = read.getPermutationMap();
      if (auto write = dyn_cast<vector::TransferWriteOp>(user))
        map = write.getPermutationMap();
      if (map && (map.isFunctionOfDim(0) || map.isFunctionOfDim(1)))
        return user->emitOpError("transfers a vector along the batch or the "
                                 "tokens of packed sequence argument ")
               << arg.getArgNumber()
               << "; packed sequences take vectors "
                  "along their inner dimensions only";
      accesses.push_back(user);
    }

    for (Operation *op : accesses) {
      Access access = *accessOf(op);
      // [s, r, rest...].
      SmallVector<Value> indices(access.indices);
      Value s = indices[0], r = indices[1];
      Location loc = op->getLoc();
      FailureOr<Sequence> found = sequenceOf(b, s, lengths, kernel, op);
      if (failed(found))
        return failure();
      Sequence seq = *found;
      b.setInsertionPoint(op);
      Value row;
      if (access.stored) {
        // Rows past the length are not the sequence's: not stored.
        Value real = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r,
                                           seq.length);
        auto guard = scf::IfOp::create(b, loc, real, /*withElse=*/false);
        op->moveBefore(guard.thenBlock()->getTerminator());
        sinkIntoGuard(guard, *access.stored);
        b.setInsertionPoint(op);
        row = arith::AddIOp::create(b, loc, seq.start, r);
      } else {
        // Rows past it read its last real row, and a sequence of length 0
        // (past the run's batch) row 0 of the buffer: never past the real
        // rows, which may end the caller's tensor.
        Value clamped = arith::MinSIOp::create(b, loc, r, seq.last);
        Value inside = arith::AddIOp::create(b, loc, seq.start, clamped);
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        row = arith::SelectOp::create(b, loc, seq.empty, zero, inside);
      }
      SmallVector<Value> rowIndices = {row};
      rowIndices.append(indices.begin() + 2, indices.end());
      replaceAccess(b, op, rowsFor(op), rowIndices);
    }
    return success();
  }

  /// A 1-D vector.load or vector.store of `arg` ([b, n, d]) longer than a
  /// row, from column 0 (a register tile's whole rows, flattened into one
  /// vector): it spans tokens, which may belong to the next sequence once
  /// packed, and one guard or clamp would cover only its first row. It
  /// becomes one access a row (vector.extract_strided_slice of the stored
  /// vector, vector.insert_strided_slice of the loaded rows), each guarded
  /// or clamped below. Any other access longer than what is left of its
  /// row is refused by name.
  LogicalResult splitRowSpanningAccesses(BlockArgument arg) {
    auto type = cast<MemRefType>(arg.getType());
    int64_t rank = type.getRank();
    int64_t width = type.getDimSize(rank - 1);
    SmallVector<std::pair<Operation *, VectorType>> spanning;
    for (Operation *user : arg.getUsers()) {
      std::optional<Access> access = accessOf(user);
      if (!access || access->base != arg)
        continue;
      VectorType vector;
      if (auto load = dyn_cast<vector::LoadOp>(user))
        vector = load.getVectorType();
      else if (auto store = dyn_cast<vector::StoreOp>(user))
        vector = store.getVectorType();
      else if (auto load = dyn_cast<vector::MaskedLoadOp>(user))
        vector = load.getVectorType();
      else if (auto store = dyn_cast<vector::MaskedStoreOp>(user))
        vector = store.getVectorType();
      if (!vector || vector.getRank() != 1)
        continue;
      std::optional<int64_t> column =
          getConstantIntValue(access->indices.back());
      int64_t length = vector.getDimSize(0);
      // Within its row (a column loop's index is taken to keep it there,
      // as tiling made it).
      if (length <= width && (!column || *column + length <= width))
        continue;
      if (rank != 3 || !column || *column != 0 || length % width != 0 ||
          isa<vector::MaskedLoadOp, vector::MaskedStoreOp>(user))
        return user->emitOpError("accesses ")
               << length << " elements of packed sequence argument "
               << arg.getArgNumber() << " from one index, past the end of "
               << "its row of " << width
               << " (linformer-packed-sequences indexes packed sequences a "
                  "row at a time: whole rows from column 0 of a [b, n, d] "
                  "argument, unmasked, can be split)";
      spanning.push_back({user, vector});
    }
    OpBuilder b(arg.getContext());
    for (auto [op, vector] : spanning) {
      Access access = *accessOf(op);
      Location loc = op->getLoc();
      b.setInsertionPoint(op);
      auto rowType = VectorType::get({width}, vector.getElementType());
      Value s = access.indices[0], r = access.indices[1];
      Value loaded;
      if (!access.stored)
        loaded = arith::ConstantOp::create(b, loc, b.getZeroAttr(vector));
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      for (int64_t i = 0; i * width < vector.getDimSize(0); ++i) {
        Value row = arith::AddIOp::create(
            b, loc, r, arith::ConstantIndexOp::create(b, loc, i));
        SmallVector<Value> indices{s, row, zero};
        if (access.stored) {
          Value part = vector::ExtractStridedSliceOp::create(
              b, loc, access.stored->get(), ArrayRef<int64_t>{i * width},
              ArrayRef<int64_t>{width}, ArrayRef<int64_t>{1});
          vector::StoreOp::create(b, loc, part, arg, indices);
        } else {
          Value part = vector::LoadOp::create(b, loc, rowType, arg, indices);
          loaded = vector::InsertStridedSliceOp::create(
              b, loc, part, loaded, ArrayRef<int64_t>{i * width},
              ArrayRef<int64_t>{1});
        }
      }
      if (loaded)
        op->replaceAllUsesWith(ValueRange{loaded});
      op->erase();
    }
    return success();
  }

  /// Moves what computes only the value `stored` (a store's, in `guard`) into
  /// the guard: a row extracted from a tile converted to 16 bits is
  /// extracted first and converted inside (`truncf(extract(tile))`), then
  /// the pure ops nothing else uses follow it. So no 16-bit float vector
  /// lives across blocks: without AVX512_BF16, LLVM legalizes one through
  /// f32 and truncates it back with a libgcc helper (`__truncsfbf2`) that
  /// the kernels must not call.
  static void sinkIntoGuard(scf::IfOp guard, OpOperand &stored) {
    Operation *store = stored.getOwner();
    Block *outer = guard->getBlock();
    if (auto extract = stored.get().getDefiningOp<vector::ExtractOp>()) {
      auto cast = extract.getSource().getDefiningOp<arith::TruncFOp>();
      if (cast && extract->getBlock() == outer && cast->getBlock() == outer) {
        OpBuilder b(store);
        Value row = vector::ExtractOp::create(b, extract.getLoc(), cast.getIn(),
                                              extract.getMixedPosition());
        stored.set(arith::TruncFOp::create(
            b, cast.getLoc(), extract.getResult().getType(), row,
            cast.getRoundingmodeAttr(), cast.getFastmathAttr()));
        if (extract->use_empty())
          extract.erase();
        if (cast->use_empty())
          cast.erase();
      }
    }
    bool moved = true;
    while (moved) {
      moved = false;
      for (Operation &inner : guard.thenBlock()->without_terminator()) {
        for (Value operand : inner.getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (!def || def->getBlock() != outer || !isPure(def) ||
              def->getNumRegions() != 0 ||
              !llvm::all_of(def->getUsers(), [&](Operation *user) {
                return guard->isProperAncestor(user);
              }))
            continue;
          def->moveBefore(&inner);
          moved = true;
          break;
        }
        if (moved)
          break;
      }
    }
  }

  /// `op` again, on `rows` ([b * n, ...]) at `indices`.
  void replaceAccess(OpBuilder &b, Operation *op, Value rows,
                     ArrayRef<Value> indices) {
    Location loc = op->getLoc();
    // Transfer maps lose the token dimension (d1), which they do not use:
    // d0 stays, d(k) becomes d(k - 1).
    auto dropToken = [&](AffineMap map) {
      SmallVector<AffineExpr> dims;
      for (unsigned d = 0; d < map.getNumDims(); ++d)
        dims.push_back(getAffineDimExpr(d == 0 ? 0 : d - 1, b.getContext()));
      return map.replaceDimsAndSymbols(dims, {}, map.getNumDims() - 1, 0);
    };
    Operation *replacement =
        TypeSwitch<Operation *, Operation *>(op)
            .Case([&](memref::LoadOp o) {
              return memref::LoadOp::create(b, loc, rows, indices);
            })
            .Case([&](memref::StoreOp o) {
              return memref::StoreOp::create(b, loc, o.getValueToStore(), rows,
                                             indices);
            })
            .Case([&](vector::LoadOp o) {
              return vector::LoadOp::create(b, loc, o.getVectorType(), rows,
                                            indices);
            })
            .Case([&](vector::StoreOp o) {
              return vector::StoreOp::create(b, loc, o.getValueToStore(), rows,
                                             indices);
            })
            .Case([&](vector::MaskedLoadOp o) {
              return vector::MaskedLoadOp::create(b, loc, o.getVectorType(),
                                                  rows, indices, o.getMask(),
                                                  o.getPassThru());
            })
            .Case([&](vector::MaskedStoreOp o) {
              return vector::MaskedStoreOp::create(
                  b, loc, rows, indices, o.getMask(), o.getValueToStore());
            })
            .Case([&](vector::TransferReadOp o) {
              return vector::TransferReadOp::create(
                  b, loc, o.getVectorType(), rows, indices,
                  AffineMapAttr::get(dropToken(o.getPermutationMap())),
                  o.getPadding(), o.getMask(), o.getInBoundsAttr());
            })
            .Case([&](vector::TransferWriteOp o) {
              return vector::TransferWriteOp::create(
                  b, loc, o.getVector(), rows, indices,
                  AffineMapAttr::get(dropToken(o.getPermutationMap())),
                  o.getMask(), o.getInBoundsAttr());
            })
            .Case([&](nvgpu::DeviceAsyncCopyOp o) {
              return nvgpu::DeviceAsyncCopyOp::create(
                  b, loc, o.getDst(), o.getDstIndices(), rows, indices,
                  o.getDstElementsAttr(), o.getSrcElements(),
                  o.getBypassL1Attr());
            });
    op->replaceAllUsesWith(replacement);
    op->erase();
  }
};

} // namespace
