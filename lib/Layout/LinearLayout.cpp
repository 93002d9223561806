//===- LinearLayout.cpp - Linear layouts over GF(2) -------------*- C++ -*-===//

#include "tessel/Layout/LinearLayout.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace tessel;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;

std::string dims::tileDim(unsigned i) { return "dim" + std::to_string(i); }

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// GF(2) elimination on flattened bit vectors
//===----------------------------------------------------------------------===//

namespace {
/// A row-echelon basis of a subspace of GF(2)^64, remembering for each pivot
/// row which original vectors (by index) XOR to it.
class Gf2Basis {
public:
  /// Adds `vector` (original index `index`); true if it was independent.
  bool add(uint64_t vector, unsigned index) {
    uint64_t combination = uint64_t(1) << index;
    reduce(vector, combination);
    if (!vector)
      return false;
    rows.push_back({vector, combination});
    return true;
  }
  /// Reduces `vector` by the pivots, recording the combination used.
  void reduce(uint64_t &vector, uint64_t &combination) const {
    for (const Row &row : rows) {
      uint64_t pivot = uint64_t(1) << llvm::Log2_64(row.vector);
      if (vector & pivot) {
        vector ^= row.vector;
        combination ^= row.combination;
      }
    }
  }
  bool contains(uint64_t vector) const {
    uint64_t unused = 0;
    reduce(vector, unused);
    return vector == 0;
  }
  /// Which original vectors XOR to `vector`, if it is in the span.
  std::optional<uint64_t> solve(uint64_t vector) const {
    uint64_t combination = 0;
    reduce(vector, combination);
    if (vector)
      return std::nullopt;
    return combination;
  }
  unsigned rank() const { return rows.size(); }

private:
  struct Row {
    uint64_t vector;
    uint64_t combination;
  };
  // Pivots are the highest set bit of each row; rows are kept so that no two
  // share a pivot (each new row is reduced by all previous ones).
  SmallVector<Row> rows;
};
} // namespace

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

llvm::Expected<LinearLayout> LinearLayout::get(ArrayRef<InDim> inDims,
                                               ArrayRef<OutDim> outDims) {
  llvm::StringSet<> names;
  int32_t outBits = 0;
  for (const OutDim &out : outDims) {
    if (out.size <= 0 || !llvm::isPowerOf2_32(out.size))
      return makeError("output dimension '" + out.name + "' has size " +
                       llvm::Twine(out.size) + ", which is not a power of two");
    if (!names.insert(out.name).second)
      return makeError("output dimension '" + out.name + "' appears twice");
    outBits += llvm::Log2_32(out.size);
  }
  if (outBits > 62)
    return makeError("the output space has more than 2^62 elements");
  names.clear();
  int32_t inBits = 0;
  for (const InDim &in : inDims) {
    if (!names.insert(in.name).second)
      return makeError("input dimension '" + in.name + "' appears twice");
    inBits += in.bases.size();
    for (auto [bit, basis] : llvm::enumerate(in.bases)) {
      if (basis.size() != outDims.size())
        return makeError("basis " + llvm::Twine(bit) + " of input '" + in.name +
                         "' has " + llvm::Twine(basis.size()) + " values for " +
                         llvm::Twine(outDims.size()) + " output dimensions");
      for (auto [value, out] : llvm::zip(basis, outDims))
        if (value < 0 || value >= out.size)
          return makeError("basis " + llvm::Twine(bit) + " of input '" +
                           in.name + "' has value " + llvm::Twine(value) +
                           " outside output '" + out.name + "' of size " +
                           llvm::Twine(out.size));
    }
  }
  if (inBits > 62)
    return makeError("the input space has more than 2^62 elements");
  LinearLayout layout;
  layout.inDims.assign(inDims.begin(), inDims.end());
  layout.outDims.assign(outDims.begin(), outDims.end());
  return layout;
}

LinearLayout LinearLayout::identity1D(int32_t size, StringRef inDim,
                                      StringRef outDim) {
  assert(llvm::isPowerOf2_32(size) && "size must be a power of two");
  LinearLayout layout;
  InDim in{inDim.str(), {}};
  for (int32_t value = 1; value < size; value *= 2)
    in.bases.push_back({value});
  layout.inDims.push_back(std::move(in));
  layout.outDims.push_back({outDim.str(), size});
  return layout;
}

LinearLayout LinearLayout::zeros1D(int32_t size, StringRef inDim,
                                   StringRef outDim, int32_t outSize) {
  assert(llvm::isPowerOf2_32(size) && llvm::isPowerOf2_32(outSize));
  LinearLayout layout;
  InDim in{inDim.str(), {}};
  for (int32_t value = 1; value < size; value *= 2)
    in.bases.push_back({0});
  layout.inDims.push_back(std::move(in));
  layout.outDims.push_back({outDim.str(), outSize});
  return layout;
}

llvm::Expected<LinearLayout> LinearLayout::fromFunction(
    ArrayRef<std::pair<std::string, int32_t>> inDimSizes,
    ArrayRef<OutDim> outDims,
    llvm::function_ref<SmallVector<int32_t, 4>(ArrayRef<int32_t>)> fn) {
  SmallVector<InDim, 4> inDims;
  SmallVector<int32_t, 4> input(inDimSizes.size(), 0);
  int64_t total = 1;
  for (auto [index, in] : llvm::enumerate(inDimSizes)) {
    if (in.second <= 0 || !llvm::isPowerOf2_32(in.second))
      return makeError("input dimension '" + in.first + "' has size " +
                       llvm::Twine(in.second) +
                       ", which is not a power of two");
    total *= in.second;
    InDim dim{in.first, {}};
    for (int32_t value = 1; value < in.second; value *= 2) {
      input[index] = value;
      dim.bases.push_back(fn(input));
    }
    input[index] = 0;
    inDims.push_back(std::move(dim));
  }
  llvm::Expected<LinearLayout> layout = get(inDims, outDims);
  if (!layout)
    return layout.takeError();
  if (total > (int64_t(1) << 22))
    return makeError("input space too large to check exhaustively");
  // Every input, not only the basis ones, must agree with the function.
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat;
    for (auto [index, in] : llvm::enumerate(inDimSizes)) {
      input[index] = rest % in.second;
      rest /= in.second;
    }
    SmallVector<int32_t, 4> expected = fn(input);
    if (ArrayRef<int32_t>(expected) !=
        ArrayRef<int32_t>(layout->apply(input))) {
      std::string where;
      for (auto [index, in] : llvm::enumerate(inDimSizes))
        where +=
            (index ? ", " : "") + in.first + "=" + std::to_string(input[index]);
      return makeError("the function is not linear over GF(2) at (" + where +
                       ")");
    }
  }
  return layout;
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

bool LinearLayout::hasInDim(StringRef name) const {
  return llvm::any_of(inDims, [&](const InDim &d) { return d.name == name; });
}

bool LinearLayout::hasOutDim(StringRef name) const {
  return llvm::any_of(outDims, [&](const OutDim &d) { return d.name == name; });
}

int32_t LinearLayout::getInDimSizeLog2(StringRef name) const {
  for (const InDim &in : inDims)
    if (in.name == name)
      return in.bases.size();
  return 0;
}

int32_t LinearLayout::getInDimSize(StringRef name) const {
  return 1 << getInDimSizeLog2(name);
}

int32_t LinearLayout::getOutDimSize(StringRef name) const {
  for (const OutDim &out : outDims)
    if (out.name == name)
      return out.size;
  return 1;
}

int32_t LinearLayout::getOutDimSizeLog2(StringRef name) const {
  return llvm::Log2_32(getOutDimSize(name));
}

int32_t LinearLayout::getTotalInDimSizeLog2() const {
  int32_t bits = 0;
  for (const InDim &in : inDims)
    bits += in.bases.size();
  return bits;
}

int32_t LinearLayout::getTotalOutDimSizeLog2() const {
  int32_t bits = 0;
  for (const OutDim &out : outDims)
    bits += llvm::Log2_32(out.size);
  return bits;
}

SmallVector<int32_t, 4> LinearLayout::getOutDimSizes() const {
  SmallVector<int32_t, 4> sizes;
  for (const OutDim &out : outDims)
    sizes.push_back(out.size);
  return sizes;
}

ArrayRef<int32_t> LinearLayout::getBasis(StringRef name, int32_t bit) const {
  for (const InDim &in : inDims)
    if (in.name == name)
      return in.bases[bit];
  llvm_unreachable("no such input dimension");
}

SmallVector<int32_t, 4> LinearLayout::apply(ArrayRef<int32_t> inputs) const {
  SmallVector<int32_t, 4> result(outDims.size(), 0);
  for (auto [in, value] : llvm::zip(inDims, inputs))
    for (auto [bit, basis] : llvm::enumerate(in.bases))
      if (value & (1 << bit))
        for (auto [out, b] : llvm::zip(result, basis))
          out ^= b;
  return result;
}

LinearLayout::Point LinearLayout::applyNamed(const Point &inputs) const {
  SmallVector<int32_t, 4> values(inDims.size(), 0);
  for (auto [index, in] : llvm::enumerate(inDims))
    for (const auto &[name, value] : inputs)
      if (name == in.name)
        values[index] = value;
  SmallVector<int32_t, 4> outputs = apply(values);
  Point result;
  for (auto [out, value] : llvm::zip(outDims, outputs))
    result.push_back({out.name, value});
  return result;
}

uint64_t LinearLayout::flattenOut(ArrayRef<int32_t> values) const {
  uint64_t bits = 0;
  unsigned shift = 0;
  for (auto [out, value] : llvm::zip(outDims, values)) {
    bits |= uint64_t(value) << shift;
    shift += llvm::Log2_32(out.size);
  }
  return bits;
}

SmallVector<int32_t, 4> LinearLayout::unflattenOut(uint64_t bits) const {
  SmallVector<int32_t, 4> values;
  for (const OutDim &out : outDims) {
    values.push_back(bits & (out.size - 1));
    bits >>= llvm::Log2_32(out.size);
  }
  return values;
}

int32_t LinearLayout::getRank() const {
  Gf2Basis basis;
  unsigned index = 0;
  for (const InDim &in : inDims)
    for (const auto &b : in.bases)
      basis.add(flattenOut(b), index++ % 64);
  return basis.rank();
}

bool LinearLayout::operator==(const LinearLayout &other) const {
  if (inDims.size() != other.inDims.size() ||
      outDims.size() != other.outDims.size())
    return false;
  for (auto [a, b] : llvm::zip(outDims, other.outDims))
    if (a.name != b.name || a.size != b.size)
      return false;
  for (auto [a, b] : llvm::zip(inDims, other.inDims))
    if (a.name != b.name || a.bases != b.bases)
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Transformations
//===----------------------------------------------------------------------===//

llvm::Expected<LinearLayout>
LinearLayout::compose(const LinearLayout &outer) const {
  for (const OutDim &out : outDims) {
    if (!outer.hasInDim(out.name))
      return makeError("cannot compose: the outer layout has no input '" +
                       out.name + "'");
    if (outer.getInDimSize(out.name) < out.size)
      return makeError("cannot compose: output '" + out.name + "' has size " +
                       llvm::Twine(out.size) +
                       " but the outer layout's input has size " +
                       llvm::Twine(outer.getInDimSize(out.name)));
  }
  SmallVector<InDim, 4> newIns;
  for (const InDim &in : inDims) {
    InDim composed{in.name, {}};
    for (const auto &basis : in.bases) {
      Point point;
      for (auto [out, value] : llvm::zip(outDims, basis))
        point.push_back({out.name, value});
      SmallVector<int32_t, 4> values;
      for (const auto &entry : outer.applyNamed(point))
        values.push_back(entry.second);
      composed.bases.push_back(values);
    }
    newIns.push_back(std::move(composed));
  }
  return get(newIns, outer.outDims);
}

llvm::Expected<LinearLayout> LinearLayout::pseudoinvert() const {
  Gf2Basis basis;
  SmallVector<std::pair<unsigned, unsigned>> bitOwner; // (in dim, bit)
  for (auto [dimIndex, in] : llvm::enumerate(inDims))
    for (auto [bit, b] : llvm::enumerate(in.bases)) {
      basis.add(flattenOut(b), bitOwner.size());
      bitOwner.push_back({unsigned(dimIndex), unsigned(bit)});
    }
  if (basis.rank() != unsigned(getTotalOutDimSizeLog2()))
    return makeError("the layout is not surjective: only " +
                     llvm::Twine(basis.rank()) + " of " +
                     llvm::Twine(getTotalOutDimSizeLog2()) +
                     " output bits are reached");
  SmallVector<InDim, 4> newIns;
  SmallVector<OutDim, 4> newOuts;
  for (const InDim &in : inDims)
    newOuts.push_back({in.name, int32_t(1) << in.bases.size()});
  unsigned shift = 0;
  for (const OutDim &out : outDims) {
    InDim newIn{out.name, {}};
    for (unsigned bit = 0; bit < llvm::Log2_32(out.size); ++bit) {
      uint64_t combination = *basis.solve(uint64_t(1) << (shift + bit));
      SmallVector<int32_t, 4> values(inDims.size(), 0);
      for (auto [index, owner] : llvm::enumerate(bitOwner))
        if (combination & (uint64_t(1) << index))
          values[owner.first] ^= 1 << owner.second;
      newIn.bases.push_back(values);
    }
    shift += llvm::Log2_32(out.size);
    newIns.push_back(std::move(newIn));
  }
  return get(newIns, newOuts);
}

llvm::Expected<LinearLayout> LinearLayout::invert() const {
  if (getTotalInDimSizeLog2() != getTotalOutDimSizeLog2() || !isInjective())
    return makeError(
        "the layout is not bijective: " + llvm::Twine(getTotalInDimSizeLog2()) +
        " input bits, " + llvm::Twine(getTotalOutDimSizeLog2()) +
        " output bits, rank " + llvm::Twine(getRank()));
  return pseudoinvert();
}

llvm::Expected<LinearLayout>
LinearLayout::operator*(const LinearLayout &other) const {
  SmallVector<OutDim, 4> newOuts(outDims.begin(), outDims.end());
  for (const OutDim &out : other.outDims) {
    auto *it = llvm::find_if(
        newOuts, [&](const OutDim &d) { return d.name == out.name; });
    if (it == newOuts.end())
      newOuts.push_back(out);
    else
      it->size *= out.size;
  }
  auto indexOf = [&](StringRef name) -> unsigned {
    return llvm::find_if(newOuts,
                         [&](const OutDim &d) { return d.name == name; }) -
           newOuts.begin();
  };
  // A basis of `layout` expressed in the product's output dimensions, shifted
  // above this layout's part for `other`.
  auto widen = [&](const LinearLayout &layout, ArrayRef<int32_t> basis,
                   bool shifted) {
    SmallVector<int32_t, 4> values(newOuts.size(), 0);
    for (auto [out, value] : llvm::zip(layout.outDims, basis))
      values[indexOf(out.name)] =
          shifted ? value * getOutDimSize(out.name) : value;
    return values;
  };
  SmallVector<InDim, 4> newIns;
  for (const InDim &in : inDims) {
    InDim dim{in.name, {}};
    for (const auto &basis : in.bases)
      dim.bases.push_back(widen(*this, basis, false));
    newIns.push_back(std::move(dim));
  }
  for (const InDim &in : other.inDims) {
    auto *it = llvm::find_if(newIns,
                             [&](const InDim &d) { return d.name == in.name; });
    if (it == newIns.end()) {
      newIns.push_back({in.name, {}});
      it = newIns.end() - 1;
    }
    for (const auto &basis : in.bases)
      it->bases.push_back(widen(other, basis, true));
  }
  return get(newIns, newOuts);
}

/// Row-major linear index of `values` in `sizes` (last dimension fastest).
static int64_t linearizeRowMajor(ArrayRef<int32_t> values,
                                 ArrayRef<int32_t> sizes) {
  int64_t index = 0;
  for (auto [value, size] : llvm::zip(values, sizes))
    index = index * size + value;
  return index;
}

static SmallVector<int32_t, 4> delinearizeRowMajor(int64_t index,
                                                   ArrayRef<int32_t> sizes) {
  SmallVector<int32_t, 4> values(sizes.size(), 0);
  for (int i = sizes.size() - 1; i >= 0; --i) {
    values[i] = index % sizes[i];
    index /= sizes[i];
  }
  return values;
}

llvm::Expected<LinearLayout>
LinearLayout::reshapeOuts(ArrayRef<OutDim> newOutDims) const {
  int64_t oldTotal = 1, newTotal = 1;
  SmallVector<int32_t, 4> oldSizes = getOutDimSizes(), newSizes;
  for (int32_t size : oldSizes)
    oldTotal *= size;
  for (const OutDim &out : newOutDims) {
    newTotal *= out.size;
    newSizes.push_back(out.size);
  }
  if (oldTotal != newTotal)
    return makeError("cannot reshape " + llvm::Twine(oldTotal) +
                     " outputs into " + llvm::Twine(newTotal));
  SmallVector<InDim, 4> newIns;
  for (const InDim &in : inDims) {
    InDim dim{in.name, {}};
    for (const auto &basis : in.bases)
      dim.bases.push_back(
          delinearizeRowMajor(linearizeRowMajor(basis, oldSizes), newSizes));
    newIns.push_back(std::move(dim));
  }
  return get(newIns, newOutDims);
}

llvm::Expected<LinearLayout> LinearLayout::reshapeIns(
    ArrayRef<std::pair<std::string, int32_t>> newInDims) const {
  SmallVector<SmallVector<int32_t, 4>> allBases;
  for (const InDim &in : inDims)
    allBases.append(in.bases.begin(), in.bases.end());
  unsigned next = 0;
  SmallVector<InDim, 4> newIns;
  for (const auto &[name, size] : newInDims) {
    if (size <= 0 || !llvm::isPowerOf2_32(size))
      return makeError("input dimension '" + name + "' has size " +
                       llvm::Twine(size) + ", which is not a power of two");
    InDim dim{name, {}};
    for (unsigned bit = 0; bit < llvm::Log2_32(size); ++bit) {
      if (next == allBases.size())
        return makeError("cannot reshape: more input bits requested than the "
                         "layout has");
      dim.bases.push_back(allBases[next++]);
    }
    newIns.push_back(std::move(dim));
  }
  if (next != allBases.size())
    return makeError("cannot reshape: fewer input bits requested than the "
                     "layout has");
  return get(newIns, outDims);
}

LinearLayout LinearLayout::sublayout(ArrayRef<std::string> inNames,
                                     ArrayRef<std::string> outNames) const {
  SmallVector<unsigned> keptOuts;
  LinearLayout result;
  for (auto [index, out] : llvm::enumerate(outDims))
    if (llvm::is_contained(outNames, out.name)) {
      keptOuts.push_back(index);
      result.outDims.push_back(out);
    }
  for (const InDim &in : inDims) {
    if (!llvm::is_contained(inNames, in.name))
      continue;
    InDim dim{in.name, {}};
    for (const auto &basis : in.bases) {
      SmallVector<int32_t, 4> projected;
      for (unsigned index : keptOuts)
        projected.push_back(basis[index]);
      dim.bases.push_back(projected);
    }
    result.inDims.push_back(std::move(dim));
  }
  return result;
}

LinearLayout LinearLayout::transposeOuts(ArrayRef<unsigned> order) const {
  LinearLayout result;
  for (unsigned index : order)
    result.outDims.push_back(outDims[index]);
  for (const InDim &in : inDims) {
    InDim dim{in.name, {}};
    for (const auto &basis : in.bases) {
      SmallVector<int32_t, 4> permuted;
      for (unsigned index : order)
        permuted.push_back(basis[index]);
      dim.bases.push_back(permuted);
    }
    result.inDims.push_back(std::move(dim));
  }
  return result;
}

LinearLayout LinearLayout::renameInDim(StringRef from, StringRef to) const {
  LinearLayout result = *this;
  for (InDim &in : result.inDims)
    if (in.name == from)
      in.name = to.str();
  return result;
}

void LinearLayout::print(llvm::raw_ostream &os) const {
  os << "{";
  llvm::interleaveComma(inDims, os, [&](const InDim &in) {
    os << in.name << ": [";
    llvm::interleaveComma(in.bases, os, [&](const auto &basis) {
      os << "[";
      llvm::interleaveComma(basis, os);
      os << "]";
    });
    os << "]";
  });
  os << "} -> {";
  llvm::interleaveComma(outDims, os, [&](const OutDim &out) {
    os << out.name << ": " << out.size;
  });
  os << "}";
}

std::string LinearLayout::toString() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  return text;
}

//===----------------------------------------------------------------------===//
// Layout conversions
//===----------------------------------------------------------------------===//

StringRef tessel::stringifyConversionKind(LayoutConversionKind kind) {
  switch (kind) {
  case LayoutConversionKind::None:
    return "none";
  case LayoutConversionKind::InLanePermute:
    return "in-lane permute";
  case LayoutConversionKind::CrossLaneShuffle:
    return "cross-lane shuffle";
  case LayoutConversionKind::ThroughLds:
    return "through LDS";
  }
  llvm_unreachable("unknown conversion kind");
}

/// The flattened bases of input `name` of `layout`, padded with zero vectors
/// to `bits` entries (a missing bit holds nothing new).
static SmallVector<uint64_t> flatBases(const LinearLayout &layout,
                                       StringRef name, unsigned bits) {
  SmallVector<uint64_t> result(bits, 0);
  for (const LinearLayout::InDim &in : layout.getInDims())
    if (in.name == name)
      for (auto [bit, basis] : llvm::enumerate(in.bases))
        result[bit] = layout.flattenOut(basis);
  return result;
}

llvm::Expected<LayoutConversionKind>
tessel::classifyConversion(const LinearLayout &src, const LinearLayout &dst) {
  if (src.getOutDimSizes() != dst.getOutDimSizes())
    return makeError("layouts of different tile shapes cannot be converted");
  for (auto [a, b] : llvm::zip(src.getOutDims(), dst.getOutDims()))
    if (a.name != b.name)
      return makeError("layouts with different output dimensions ('" + a.name +
                       "' vs '" + b.name + "')");
  for (const LinearLayout::InDim &in : src.getInDims())
    if (!llvm::is_contained({dims::kRegister.str(), dims::kLane.str(),
                             dims::kWave.str(), dims::kBlock.str()},
                            in.name))
      return makeError("conversions are between register/lane/wave/block "
                       "layouts; got input '" +
                       in.name + "'");
  if (src == dst)
    return LayoutConversionKind::None;

  // Every holder (r, l, w) of x in `dst` must find x at a holder of `src`
  // with the same (l, w) (in-lane) or the same w (in-wave). Since both maps
  // are linear, dst(r, l, w) ^ src(0, l, w) (resp. ^ src(0, 0, w)) must lie
  // in the span of src's register (resp. register and lane) bases for all
  // bases of r, l and w.
  auto bits = [&](StringRef name) {
    return unsigned(
        std::max(src.getInDimSizeLog2(name), dst.getInDimSizeLog2(name)));
  };
  auto srcOf = [&](StringRef name) { return flatBases(src, name, bits(name)); };
  auto dstOf = [&](StringRef name) { return flatBases(dst, name, bits(name)); };
  auto fits = [&](ArrayRef<StringRef> moving, ArrayRef<StringRef> fixed) {
    Gf2Basis span;
    unsigned index = 0;
    for (StringRef name : moving)
      for (uint64_t basis : srcOf(name))
        span.add(basis, index++ % 64);
    for (StringRef name : moving)
      for (uint64_t basis : dstOf(name))
        if (!span.contains(basis))
          return false;
    for (StringRef name : fixed)
      for (auto [s, d] : llvm::zip(srcOf(name), dstOf(name)))
        if (!span.contains(s ^ d))
          return false;
    return true;
  };
  if (fits({dims::kRegister}, {dims::kLane, dims::kWave, dims::kBlock}))
    return LayoutConversionKind::InLanePermute;
  if (fits({dims::kRegister, dims::kLane}, {dims::kWave, dims::kBlock}))
    return LayoutConversionKind::CrossLaneShuffle;
  return LayoutConversionKind::ThroughLds;
}

//===----------------------------------------------------------------------===//
// LDS bank conflicts
//===----------------------------------------------------------------------===//

/// Phases made of groups of consecutive lanes: each row lists the first lanes
/// of its groups, each group `groupLanes` long.
static SmallVector<SmallVector<unsigned, 16>>
phasesFromGroups(ArrayRef<SmallVector<unsigned, 4>> groupStarts,
                 ArrayRef<SmallVector<unsigned, 4>> groupLanes) {
  SmallVector<SmallVector<unsigned, 16>> phases;
  for (auto [starts, lengths] : llvm::zip(groupStarts, groupLanes)) {
    SmallVector<unsigned, 16> phase;
    for (auto [first, length] : llvm::zip(starts, lengths))
      for (unsigned lane = first; lane < first + length; ++lane)
        phase.push_back(lane);
    phases.push_back(phase);
  }
  return phases;
}

SmallVector<SmallVector<unsigned, 16>>
tessel::getLdsPhases(unsigned accessBytes, bool isWrite, unsigned waveSize,
                     const LdsBanking &banking) {
  bool read128 = accessBytes == 16 && !isWrite && waveSize == 64;
  if (read128 && banking.numBanks == 32) {
    // ds_read_b128 on a 32-bank LDS: eight non-contiguous 8-lane groups
    // (docs/hardware.md §7, from Composable Kernel's LDS documentation).
    SmallVector<SmallVector<unsigned, 4>> starts = {
        {0, 20},  {4, 16},  {8, 28},  {12, 24},
        {32, 52}, {36, 48}, {40, 60}, {44, 56}};
    SmallVector<SmallVector<unsigned, 4>> lengths(8, {4, 4});
    return phasesFromGroups(starts, lengths);
  }
  if (read128 && banking.numBanks == 64) {
    // ds_read_b128 on gfx950's 64-bank LDS: four non-contiguous 16-lane
    // groups, as measured (docs/hardware.md §7).
    SmallVector<SmallVector<unsigned, 4>> starts = {
        {0, 12, 20}, {4, 16, 28}, {32, 44, 52}, {36, 48, 60}};
    SmallVector<SmallVector<unsigned, 4>> lengths = {
        {4, 4, 8}, {8, 4, 4}, {4, 4, 8}, {8, 4, 4}};
    return phasesFromGroups(starts, lengths);
  }
  // Otherwise the LDS serves one dword per bank per cycle to consecutive
  // lanes: on 32 banks, 8 lanes of 16 bytes (ds_write_b128, documented), 16
  // lanes of 8 bytes and 32 lanes of 4 bytes or less; twice as many lanes on
  // 64 banks (a bandwidth model: the exact groupings are not documented).
  unsigned bytesPerCycle = banking.numBanks * banking.bankBytes;
  unsigned lanesPerPhase = std::min(
      waveSize, bytesPerCycle / std::max(4u, std::min(accessBytes, 16u)));
  SmallVector<SmallVector<unsigned, 16>> phases;
  for (unsigned first = 0; first < waveSize; first += lanesPerPhase) {
    SmallVector<unsigned, 16> phase;
    for (unsigned lane = first; lane < first + lanesPerPhase; ++lane)
      phase.push_back(lane);
    phases.push_back(phase);
  }
  return phases;
}

/// Extra cycles of one phase: the most distinct dwords any bank must serve,
/// minus one (lanes reading the same dword share it).
static unsigned phaseConflicts(ArrayRef<unsigned> lanes,
                               ArrayRef<int64_t> byteAddresses,
                               unsigned accessBytes,
                               const LdsBanking &banking) {
  // The distinct words each bank serves (lanes reading one word share it):
  // the words are bucketed by bank (a counting sort) and each bucket's
  // distinct words counted in place. The chooser calls this for every
  // candidate swizzle: no node allocations, no comparison sort.
  unsigned numBanks = banking.numBanks;
  unsigned words = std::max(1u, accessBytes / banking.bankBytes);
  // Banks and bank widths are powers of two on every chip: shifts and masks
  // then replace the 64-bit divisions, which were most of this function's
  // time.
  bool powersOfTwo =
      llvm::isPowerOf2_32(numBanks) && llvm::isPowerOf2_32(banking.bankBytes);
  unsigned wordShift = llvm::Log2_32(banking.bankBytes);
  auto firstWordOf = [&](unsigned lane) {
    int64_t byte = byteAddresses[lane];
    return powersOfTwo ? byte >> wordShift : byte / banking.bankBytes;
  };
  auto bankOf = [&](int64_t word) {
    return powersOfTwo ? unsigned(word & (numBanks - 1))
                       : unsigned(word % numBanks);
  };
  SmallVector<int64_t, 256> phaseWords;
  phaseWords.resize_for_overwrite(lanes.size() * words);
  int64_t *next = phaseWords.data();
  for (unsigned lane : lanes) {
    int64_t firstWord = firstWordOf(lane);
    for (unsigned w = 0; w < words; ++w)
      *next++ = firstWord + w;
  }
  SmallVector<unsigned, 65> bucketEnd(numBanks + 1, 0);
  for (int64_t word : phaseWords)
    ++bucketEnd[bankOf(word) + 1];
  for (unsigned bank = 0; bank < numBanks; ++bank)
    bucketEnd[bank + 1] += bucketEnd[bank];
  SmallVector<unsigned, 65> fill(bucketEnd.begin(), bucketEnd.end() - 1);
  SmallVector<int64_t, 256> bucketed;
  bucketed.resize_for_overwrite(phaseWords.size());
  for (int64_t word : phaseWords)
    bucketed[fill[bankOf(word)]++] = word;
  unsigned worst = 1;
  for (unsigned bank = 0; bank < numBanks; ++bank) {
    unsigned distinct = 0;
    for (unsigned i = bucketEnd[bank]; i < bucketEnd[bank + 1]; ++i) {
      bool repeat = false;
      for (unsigned j = bucketEnd[bank]; j < i && !repeat; ++j)
        repeat = bucketed[j] == bucketed[i];
      distinct += repeat ? 0 : 1;
    }
    worst = std::max(worst, distinct);
  }
  return worst - 1;
}

unsigned tessel::countLdsConflictCycles(ArrayRef<int64_t> byteAddresses,
                                        unsigned accessBytes, bool isWrite,
                                        const LdsBanking &banking,
                                        unsigned waveSize) {
  unsigned extra = 0;
  for (const auto &phase :
       getLdsPhases(accessBytes, isWrite, waveSize, banking))
    extra += phaseConflicts(phase, byteAddresses, accessBytes, banking);
  return extra;
}

llvm::Expected<BankConflictReport> tessel::analyzeBankConflicts(
    const LinearLayout &registerLayout, const LinearLayout &memoryLayout,
    unsigned elementBytes, unsigned accessBytes, bool isWrite,
    const LdsBanking &banking, unsigned waveSize) {
  if (!llvm::isPowerOf2_32(accessBytes) || accessBytes > 16)
    return makeError("LDS access width must be 1, 2, 4, 8 or 16 bytes, got " +
                     llvm::Twine(accessBytes));
  if (accessBytes < elementBytes || accessBytes % elementBytes)
    return makeError("an access of " + llvm::Twine(accessBytes) +
                     " bytes does not hold a whole number of " +
                     llvm::Twine(elementBytes) + "-byte elements");
  if (!memoryLayout.hasInDim(dims::kOffset) ||
      memoryLayout.getInDims().size() != 1)
    return makeError("the memory layout must map 'offset' to the tile");
  if (registerLayout.getOutDimSizes() != memoryLayout.getOutDimSizes())
    return makeError("the register and memory layouts cover different tiles");
  if (registerLayout.getInDimSize(dims::kLane) > int32_t(waveSize))
    return makeError("the register layout has more lanes than a wave");
  llvm::Expected<LinearLayout> toOffset = memoryLayout.invert();
  if (!toOffset)
    return toOffset.takeError();
  llvm::Expected<LinearLayout> lanesToOffset =
      registerLayout.compose(*toOffset);
  if (!lanesToOffset)
    return lanesToOffset.takeError();

  unsigned vector = accessBytes / elementBytes;
  int32_t registers = registerLayout.getInDimSize(dims::kRegister);
  if (int32_t(vector) > registers)
    return makeError("a lane holds " + llvm::Twine(registers) +
                     " elements, fewer than one " + llvm::Twine(accessBytes) +
                     "-byte access");
  // The `vector` registers of one access must be consecutive in LDS.
  for (unsigned bit = 0; (1u << bit) < vector; ++bit)
    if (lanesToOffset->getBasis(dims::kRegister, bit)[0] != (1 << bit))
      return makeError(
          "registers " + llvm::Twine(0) + ".." + llvm::Twine(vector - 1) +
          " are not contiguous in LDS: a " + llvm::Twine(accessBytes) +
          "-byte access cannot read them at once");

  BankConflictReport report;
  report.accessesPerWave = registers / vector;
  report.waves = registerLayout.getInDimSize(dims::kWave);
  SmallVector<int32_t, 4> input(lanesToOffset->getInDims().size(), 0);
  auto indexOf = [&](StringRef name) -> int {
    for (auto [index, in] : llvm::enumerate(lanesToOffset->getInDims()))
      if (in.name == name)
        return index;
    return -1;
  };
  int registerIndex = indexOf(dims::kRegister),
      laneIndex = indexOf(dims::kLane), waveIndex = indexOf(dims::kWave);
  // The layout is linear over GF(2): an element's offset is the XOR of its
  // register's, lane's and wave's parts, each computed once.
  auto offsetOf = [&](int index, int32_t value) -> int32_t {
    if (index < 0)
      return 0;
    llvm::fill(input, 0);
    input[index] = value;
    return lanesToOffset->apply(input)[0];
  };
  // Each part is in turn the XOR of its set bits' offsets: one layout
  // application per input bit instead of one per lane and per access.
  struct BitOffsets {
    SmallVector<int32_t, 8> ofBit;
    int32_t at(int32_t value) const {
      int32_t offset = 0;
      for (auto [bit, bitOffset] : llvm::enumerate(ofBit))
        if ((value >> bit) & 1)
          offset ^= bitOffset;
      return offset;
    }
  };
  auto bitOffsets = [&](int index, StringRef name) {
    BitOffsets parts;
    if (index >= 0)
      for (int32_t bit = 0; bit < lanesToOffset->getInDimSizeLog2(name); ++bit)
        parts.ofBit.push_back(offsetOf(index, int32_t(1) << bit));
    return parts;
  };
  BitOffsets lanePart = bitOffsets(laneIndex, dims::kLane);
  BitOffsets wavePart = bitOffsets(waveIndex, dims::kWave);
  BitOffsets registerPart = bitOffsets(registerIndex, dims::kRegister);
  SmallVector<int32_t, 64> laneOffsets(waveSize);
  for (unsigned lane = 0; lane < waveSize; ++lane)
    laneOffsets[lane] =
        lanePart.at(lane % registerLayout.getInDimSize(dims::kLane));
  SmallVector<int32_t> accessOffsets;
  for (unsigned wave = 0; wave < report.waves; ++wave) {
    int32_t waveOffset = wavePart.at(wave);
    for (unsigned access = 0; access < report.accessesPerWave; ++access)
      accessOffsets.push_back(registerPart.at(access * vector) ^ waveOffset);
  }
  auto conflictsAt = [&](int32_t accessOffset) {
    SmallVector<int64_t, 64> addresses(waveSize, 0);
    for (unsigned lane = 0; lane < waveSize; ++lane)
      addresses[lane] =
          int64_t(laneOffsets[lane] ^ accessOffset) * elementBytes;
    return countLdsConflictCycles(addresses, accessBytes, isWrite, banking,
                                  waveSize);
  };
  // XOR with a constant that is a whole number of accesses maps the words
  // of aligned accesses one to one and keeps which share a bank (banks are
  // the low bits of the word index): where every offset is aligned to the
  // access, each access has the conflicts of the one at offset 0. The
  // swizzle chooser analyses hundreds of candidates, so this saves it one
  // phase analysis per access. (Banks and bank widths are powers of two on
  // every chip; the shortcut checks it.) A candidate whose register, lane
  // or wave bits move a run off its alignment (the lowering would split
  // it) is analysed access by access at the unaligned addresses, as an
  // approximation.
  auto aligned = [&](int32_t offset) { return offset % int32_t(vector) == 0; };
  if (llvm::isPowerOf2_32(banking.numBanks) &&
      llvm::isPowerOf2_32(banking.bankBytes) &&
      llvm::all_of(laneOffsets, aligned) &&
      llvm::all_of(accessOffsets, aligned)) {
    unsigned extra = conflictsAt(0);
    report.conflictCycles = extra * unsigned(accessOffsets.size());
    report.worstPerAccess = extra;
    return report;
  }
  for (int32_t accessOffset : accessOffsets) {
    unsigned extra = conflictsAt(accessOffset);
    report.conflictCycles += extra;
    report.worstPerAccess = std::max(report.worstPerAccess, extra);
  }
  return report;
}
