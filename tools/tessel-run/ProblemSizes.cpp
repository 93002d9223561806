//===- ProblemSizes.cpp - The sizes a problem-level kernel runs at --------===//

#include "ProblemSizes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdint>

using namespace mlir;
using namespace tessel;

namespace {
// Indices into ProblemSizes::sizes.
enum MatmulSize : unsigned { kBatch, kM, kN, kK };
enum AttentionSize : unsigned {
  kAttnBatch,
  kHeads,
  kKvHeads,
  kSeqQ,
  kSeqKV,
  kHeadDim,
  kHeadDimV,
  kCumulative, // varlen: the sequences' cumulative lengths (batch + 1)
  kPages,      // paged: the cache's pages
  kPageSize,   // paged: keys per page
  kMaxPages    // paged: the block table's pages per sequence
};
} // namespace

/// The largest size tessel-run launches: grid dimensions and the kernels'
/// sizes are 32-bit.
static constexpr int64_t kMaxSize = INT32_MAX;

static std::string joinShape(llvm::ArrayRef<int64_t> shape) {
  return llvm::join(
      llvm::map_range(shape, [](int64_t size) { return std::to_string(size); }),
      ", ");
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(message.str());
}

llvm::Error ProblemSizes::assignRole(Value operand,
                                     llvm::ArrayRef<unsigned> roleSizes,
                                     bool broadcasts) {
  auto argument = dyn_cast<BlockArgument>(operand);
  if (!argument || argument.getOwner() != entry)
    return makeError("kernel '" + kernel +
                     "': an operand of its problem op is not an argument of "
                     "the function; tessel-run runs problem-level kernels "
                     "whose operands are the function's arguments");
  Role &role = roles[argument.getArgNumber()];
  if (role.type)
    return makeError(llvm::formatv("kernel '{0}': argument {1} is several "
                                   "operands of its problem op; tessel-run "
                                   "needs one argument per operand",
                                   kernel, argument.getArgNumber()));
  role.type = operand.getType();
  role.broadcasts = broadcasts;
  if (auto memref = dyn_cast<MemRefType>(role.type)) {
    if (memref.getRank() > int64_t(roleSizes.size()))
      return makeError(llvm::formatv(
          "kernel '{0}': argument {1} ({2}) has rank {3}, more than the {4} "
          "dimensions its operand has",
          kernel, argument.getArgNumber(), memref, memref.getRank(),
          roleSizes.size()));
    role.dims.assign(roleSizes.take_back(memref.getRank()));
  }
  return llvm::Error::success();
}

/// The sizes of an attention problem (forward or backward), in
/// AttentionSize order. Varlen: "seq-q" and "seq-kv" are the packed
/// totals, the batch dimension a static 1, and the cumulative lengths
/// count batch + 1; paged: the cache's pages and page size and the block
/// table's pages per sequence.
llvm::SmallVector<ProblemSizes::Size> ProblemSizes::getAttentionSizeList() {
  return {{"batch"},  {"heads"},     {"kv heads"},          {"seq-q"},
          {"seq-kv"}, {"head dim"},  {"head dim v"},        {"sequences + 1"},
          {"pages"},  {"page size"}, {"pages per sequence"}};
}

llvm::Expected<ProblemSizes> ProblemSizes::get(Operation *op) {
  ProblemSizes result;
  auto function = op->getParentOfType<func::FuncOp>();
  result.kernel = function.getName().str();
  result.entry = &function.getBody().front();
  result.roles.resize(function.getNumArguments());
  auto assign = [&](Value operand, llvm::ArrayRef<unsigned> roleSizes,
                    bool broadcasts = false) {
    return result.assignRole(operand, roleSizes, broadcasts);
  };
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    result.sizes = {{"batch"}, {"M"}, {"N"}, {"K"}};
    bool batched = matmul.getA().getType().getRank() == 3;
    auto withBatch = [&](llvm::SmallVector<unsigned> dims) {
      if (batched)
        dims.insert(dims.begin(), kBatch);
      return dims;
    };
    if (llvm::Error error = assign(matmul.getA(), withBatch({kM, kK})))
      return std::move(error);
    if (llvm::Error error = assign(matmul.getB(), withBatch({kK, kN})))
      return std::move(error);
    if (llvm::Error error = assign(matmul.getC(), withBatch({kM, kN})))
      return std::move(error);
    // Extras broadcast against [batch, M, N], right-aligned.
    for (Value extra : matmul.getExtras())
      if (llvm::Error error =
              assign(extra, withBatch({kM, kN}), /*broadcasts=*/true))
        return std::move(error);
  } else if (auto grad = dyn_cast<AttentionGradOp>(op)) {
    result.isMatmul = false;
    result.sizes = getAttentionSizeList();
    llvm::SmallVector<unsigned> queries = {kAttnBatch, kHeads, kSeqQ, kHeadDim};
    llvm::SmallVector<unsigned> keys = {kAttnBatch, kKvHeads, kSeqKV, kHeadDim};
    llvm::SmallVector<unsigned> values = {kAttnBatch, kKvHeads, kSeqKV,
                                          kHeadDimV};
    llvm::SmallVector<unsigned> outputs = {kAttnBatch, kHeads, kSeqQ,
                                           kHeadDimV};
    for (auto [operand, roleSizes] : {std::pair{grad.getQ(), queries},
                                      {grad.getK(), keys},
                                      {grad.getV(), values},
                                      {grad.getO(), outputs},
                                      {grad.getGradO(), outputs},
                                      {grad.getGradQ(), queries},
                                      {grad.getGradK(), keys},
                                      {grad.getGradV(), values}})
      if (llvm::Error error = assign(operand, roleSizes))
        return std::move(error);
    if (llvm::Error error = assign(grad.getLse(), {kAttnBatch, kHeads, kSeqQ}))
      return std::move(error);
    if (grad.isVarlen()) {
      for (Value lengths : {grad.getCuSeqlensQ(), grad.getCuSeqlensK()})
        if (llvm::Error error = assign(lengths, {kCumulative}))
          return std::move(error);
      for (Value max : {grad.getMaxSeqlenQ(), grad.getMaxSeqlenK()})
        if (llvm::Error error = assign(max, {}))
          return std::move(error);
    }
  } else {
    auto attention = cast<AttentionOp>(op);
    result.isMatmul = false;
    result.sizes = getAttentionSizeList();
    if (attention.isPaged()) {
      if (llvm::Error error =
              assign(attention.getBlockTable(), {kAttnBatch, kMaxPages}))
        return std::move(error);
      if (llvm::Error error = assign(attention.getContextLens(), {kAttnBatch}))
        return std::move(error);
    }
    if (attention.isVarlen()) {
      for (Value lengths :
           {attention.getCuSeqlensQ(), attention.getCuSeqlensK()})
        if (llvm::Error error = assign(lengths, {kCumulative}))
          return std::move(error);
      if (llvm::Error error = assign(attention.getMaxSeqlenQ(), {}))
        return std::move(error);
    }
    llvm::SmallVector<unsigned> queries = {kAttnBatch, kHeads, kSeqQ, kHeadDim};
    llvm::SmallVector<unsigned> keys = {kAttnBatch, kKvHeads, kSeqKV, kHeadDim};
    llvm::SmallVector<unsigned> values = {kAttnBatch, kKvHeads, kSeqKV,
                                          kHeadDimV};
    llvm::SmallVector<unsigned> outputs = {kAttnBatch, kHeads, kSeqQ,
                                           kHeadDimV};
    if (attention.isPaged()) {
      keys = {kPages, kKvHeads, kPageSize, kHeadDim};
      values = {kPages, kKvHeads, kPageSize, kHeadDimV};
    }
    for (auto [operand, roleSizes] : {std::pair{attention.getQ(), queries},
                                      {attention.getK(), keys},
                                      {attention.getV(), values},
                                      {attention.getO(), outputs}})
      if (llvm::Error error = assign(operand, roleSizes))
        return std::move(error);
    if (Value lse = attention.getLse())
      if (llvm::Error error = assign(lse, {kAttnBatch, kHeads, kSeqQ}))
        return std::move(error);
    if (Value sinks = attention.getSinks())
      if (llvm::Error error = assign(sinks, {kHeads}))
        return std::move(error);
    // One value each, standing for every head.
    for (Value descale : attention.getDescale())
      if (llvm::Error error = assign(descale, {kHeads}, /*broadcasts=*/true))
        return std::move(error);
  }
  for (auto [index, role] : llvm::enumerate(result.roles))
    if (!role.type)
      return makeError(llvm::formatv(
          "kernel '{0}': argument {1} is not an operand of its {2}; "
          "tessel-run cannot tell what it holds",
          result.kernel, index, op->getName()));

  // Static dimensions fix their sizes. A broadcast operand's static 1 says
  // nothing about the size it stands for.
  for (auto [index, role] : llvm::enumerate(result.roles)) {
    auto memref = dyn_cast<MemRefType>(role.type);
    for (auto [d, size] : llvm::enumerate(role.dims)) {
      if (!memref || memref.isDynamicDim(d)) {
        result.sizes[size].dynamic = true;
        continue;
      }
      int64_t value = memref.getDimSize(d);
      if (role.broadcasts && value == 1)
        continue;
      std::string what =
          llvm::formatv("argument {0}'s type {1}", index, memref);
      if (llvm::Error error = result.bind(
              size, value, llvm::formatv("dimension {0} of {1}", d, what), what,
              d))
        return std::move(error);
    }
  }
  return result;
}

llvm::Error ProblemSizes::bind(unsigned size, int64_t value,
                               const std::string &source,
                               const std::string &what, unsigned dim) {
  Size &bound = sizes[size];
  if (ShapedType::isDynamic(bound.value)) {
    bound.value = value;
    bound.source = source;
    return llvm::Error::success();
  }
  if (bound.value == value)
    return llvm::Error::success();
  return makeError(llvm::formatv(
      "{0} has size {1} in dimension {2}, but {3} is {4} from {5}", what, value,
      dim, bound.name, bound.value, bound.source));
}

llvm::Error ProblemSizes::bindArray(unsigned index,
                                    llvm::ArrayRef<int64_t> shape,
                                    llvm::StringRef what) {
  const Role &role = roles[index];
  auto memref = dyn_cast<MemRefType>(role.type);
  if (!memref || memref.getRank() != int64_t(shape.size()))
    return checkShape(index, shape, what);
  for (auto [d, size] : llvm::enumerate(role.dims))
    if (memref.isDynamicDim(d))
      if (llvm::Error error = bind(
              size, shape[d], llvm::formatv("dimension {0} of {1}", d, what),
              what.str(), d))
        return error;
  return llvm::Error::success();
}

void ProblemSizes::bindUnknown(int64_t value, llvm::StringRef source) {
  for (Size &size : sizes)
    if (ShapedType::isDynamic(size.value)) {
      size.value = value;
      size.source = source.str();
    }
}

std::string ProblemSizes::describeSize(unsigned size) const {
  return llvm::formatv("{0} = {1} from {2}", sizes[size].name,
                       sizes[size].value, sizes[size].source);
}

llvm::Error ProblemSizes::verify() const {
  for (auto [index, size] : llvm::enumerate(sizes)) {
    bool used = llvm::any_of(roles, [&, index = index](const Role &role) {
      return llvm::is_contained(role.dims, index);
    });
    if (!used)
      continue;
    if (ShapedType::isDynamic(size.value))
      return makeError("kernel '" + kernel + "': no argument gives " +
                       size.name);
  }
  // An operand that broadcasts has 1 or the size in each static dimension.
  for (auto [index, role] : llvm::enumerate(roles)) {
    auto memref = dyn_cast<MemRefType>(role.type);
    for (auto [d, size] : llvm::enumerate(role.dims)) {
      int64_t value = memref.getDimSize(d);
      if (!memref.isDynamicDim(d) && value != 1 && value != sizes[size].value)
        return makeError(llvm::formatv(
            "kernel '{0}': argument {1} ({2}) has size {3} in dimension {4}, "
            "neither 1 nor {5}",
            kernel, index, memref, value, d, describeSize(size)));
    }
  }
  if (!isMatmul) {
    int64_t heads = sizes[kHeads].value, kvHeads = sizes[kKvHeads].value;
    if (kvHeads <= 0 ? heads != 0 : heads % kvHeads != 0)
      return makeError(
          llvm::formatv("kernel '{0}': {1} is not a multiple of {2}", kernel,
                        describeSize(kHeads), describeSize(kKvHeads)));
  }
  return llvm::Error::success();
}

llvm::Error ProblemSizes::checkLimits() const {
  for (auto [index, size] : llvm::enumerate(sizes))
    if (!ShapedType::isDynamic(size.value) && size.value > kMaxSize)
      return makeError(llvm::formatv(
          "kernel '{0}': {1} is over {2}, the largest size tessel-run "
          "launches",
          kernel, describeSize(index), kMaxSize));
  return llvm::Error::success();
}

llvm::SmallVector<int64_t> ProblemSizes::getShape(unsigned index) const {
  const Role &role = roles[index];
  auto memref = dyn_cast<MemRefType>(role.type);
  if (!memref)
    return {};
  llvm::SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(role.dims))
    shape.push_back(memref.isDynamicDim(d) ? sizes[size].value
                                           : memref.getDimSize(d));
  return shape;
}

llvm::Error ProblemSizes::checkShape(unsigned index,
                                     llvm::ArrayRef<int64_t> shape,
                                     llvm::StringRef what) const {
  const Role &role = roles[index];
  llvm::SmallVector<int64_t> expected = getShape(index);
  if (expected.size() != shape.size())
    return makeError(llvm::formatv("{0} has rank {1} but {2} has rank {3}",
                                   what, shape.size(), role.type,
                                   expected.size()));
  auto memref = cast<MemRefType>(role.type);
  for (auto [d, pair] : llvm::enumerate(llvm::zip(shape, expected))) {
    auto [got, want] = pair;
    if (got == want)
      continue;
    std::string reason =
        memref.isDynamicDim(d)
            ? describeSize(role.dims[d])
            : llvm::formatv("static in its type {0}", memref).str();
    return makeError(llvm::formatv(
        "{0} has shape ({1}) but needs ({2}): dimension {3} must be {4} "
        "({5})",
        what, joinShape(shape), joinShape(expected), d, want, reason));
  }
  return llvm::Error::success();
}

std::string ProblemSizes::getDynamicNames() const {
  llvm::SmallVector<llvm::StringRef> names;
  for (const Size &size : sizes)
    if (size.dynamic)
      names.push_back(size.name);
  return llvm::join(names, ", ");
}

MatmulSizes ProblemSizes::getMatmulSizes() const {
  bool batched = llvm::any_of(roles, [](const Role &role) {
    return llvm::is_contained(role.dims, kBatch);
  });
  return {batched ? sizes[kBatch].value : 0, sizes[kM].value, sizes[kN].value,
          sizes[kK].value};
}

AttentionSizes ProblemSizes::getAttentionSizes() const {
  return {sizes[kAttnBatch].value, sizes[kHeads].value, sizes[kKvHeads].value,
          sizes[kSeqQ].value,      sizes[kSeqKV].value, sizes[kHeadDim].value,
          sizes[kHeadDimV].value};
}

PagedSizes ProblemSizes::getPagedSizes() const {
  if (sizes.size() <= kMaxPages)
    return {};
  return {sizes[kPages].value, sizes[kPageSize].value, sizes[kMaxPages].value};
}

int64_t ProblemSizes::getVarlenSequences() const {
  return sizes.size() > kCumulative &&
                 !ShapedType::isDynamic(sizes[kCumulative].value)
             ? std::max<int64_t>(sizes[kCumulative].value - 1, 0)
             : 0;
}
