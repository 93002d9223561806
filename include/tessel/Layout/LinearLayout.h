//===- LinearLayout.h - Linear layouts over GF(2) ---------------*- C++ -*-===//
//
// A linear layout maps the bits of named input dimensions (register, lane,
// wave, block, or LDS offset) to named output dimensions (tile coordinates)
// linearly over GF(2): every input bit has a basis vector, and the image of an
// input is the XOR of the basis vectors of its set bits. Every distribution of
// a power-of-two tile over registers, lanes and waves that tile compilers use
// is of this form, and so are LDS swizzles; composing, inverting and comparing
// them is then linear algebra instead of case analysis. (The idea is from
// "Linear Layouts: Robust Code Generation of Efficient Tensor Computation
// Using F2", Zhou et al., 2025.)
//
// Plain C++ over LLVM ADT: no MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LAYOUT_LINEARLAYOUT_H
#define TESSEL_LAYOUT_LINEARLAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tessel {

/// Conventional input dimension names.
namespace dims {
inline constexpr llvm::StringLiteral kRegister = "register";
inline constexpr llvm::StringLiteral kLane = "lane";
inline constexpr llvm::StringLiteral kWave = "wave";
inline constexpr llvm::StringLiteral kBlock = "block";
inline constexpr llvm::StringLiteral kOffset = "offset";
/// Output (tile) dimension `i`: "dim0", "dim1", ...
std::string tileDim(unsigned i);
} // namespace dims

class LinearLayout {
public:
  /// One input dimension: a basis vector (one value per output dimension) for
  /// each of its bits, lowest bit first. Its size is 2^bases.size().
  struct InDim {
    std::string name;
    llvm::SmallVector<llvm::SmallVector<int32_t, 4>> bases;
  };
  /// One output dimension and its size (a power of two).
  struct OutDim {
    std::string name;
    int32_t size;
  };
  /// (name, value) pairs.
  using Point = llvm::SmallVector<std::pair<std::string, int32_t>, 4>;

  LinearLayout() = default;
  /// Builds a layout from explicit bases. Every basis must have one value per
  /// output dimension, each below that dimension's size; sizes must be powers
  /// of two; names must be unique.
  static llvm::Expected<LinearLayout> get(llvm::ArrayRef<InDim> inDims,
                                          llvm::ArrayRef<OutDim> outDims);
  /// The identity of size `size` from input `inDim` to output `outDim`.
  static LinearLayout identity1D(int32_t size, llvm::StringRef inDim,
                                 llvm::StringRef outDim);
  /// `size` values of input `inDim` all mapping to 0 of `outDim` (broadcast).
  static LinearLayout zeros1D(int32_t size, llvm::StringRef inDim,
                              llvm::StringRef outDim, int32_t outSize = 1);
  /// Samples `fn` at each input bit to get the bases, then checks that the
  /// layout equals `fn` on every input: an error names the first input where
  /// `fn` is not linear. For turning documented formulas into layouts.
  static llvm::Expected<LinearLayout> fromFunction(
      llvm::ArrayRef<std::pair<std::string, int32_t>> inDims,
      llvm::ArrayRef<OutDim> outDims,
      llvm::function_ref<llvm::SmallVector<int32_t, 4>(llvm::ArrayRef<int32_t>)>
          fn);

  llvm::ArrayRef<InDim> getInDims() const { return inDims; }
  llvm::ArrayRef<OutDim> getOutDims() const { return outDims; }
  bool hasInDim(llvm::StringRef name) const;
  bool hasOutDim(llvm::StringRef name) const;
  /// Size of an input dimension (1 when absent).
  int32_t getInDimSize(llvm::StringRef name) const;
  int32_t getInDimSizeLog2(llvm::StringRef name) const;
  /// Size of an output dimension (1 when absent).
  int32_t getOutDimSize(llvm::StringRef name) const;
  int32_t getOutDimSizeLog2(llvm::StringRef name) const;
  int32_t getTotalInDimSizeLog2() const;
  int32_t getTotalOutDimSizeLog2() const;
  llvm::SmallVector<int32_t, 4> getOutDimSizes() const;
  /// The basis vector of bit `bit` of input `name`.
  llvm::ArrayRef<int32_t> getBasis(llvm::StringRef name, int32_t bit) const;

  /// The output of an input given by value per input dimension (missing
  /// dimensions are 0), as values in the order of getOutDims().
  llvm::SmallVector<int32_t, 4> apply(llvm::ArrayRef<int32_t> inputs) const;
  /// Same, by name.
  Point applyNamed(const Point &inputs) const;

  /// `outer ∘ this`: this layout's outputs feed `outer`'s inputs of the same
  /// names (and sizes).
  llvm::Expected<LinearLayout> compose(const LinearLayout &outer) const;
  /// The inverse of a bijective layout (same total bits in and out).
  llvm::Expected<LinearLayout> invert() const;
  /// A right inverse of a surjective layout: for every output, one input
  /// mapping to it, preferring lower input dimensions (and lower bits) so that
  /// registers are chosen before lanes before waves.
  llvm::Expected<LinearLayout> pseudoinvert() const;
  /// The product (Triton's `*`): inputs and outputs of both layouts; shared
  /// dimensions get `other`'s bits above this layout's bits.
  llvm::Expected<LinearLayout> operator*(const LinearLayout &other) const;
  /// The same map with the output dimensions flattened and split again into
  /// `newOutDims` in row-major order (the last dimension fastest).
  llvm::Expected<LinearLayout>
  reshapeOuts(llvm::ArrayRef<OutDim> newOutDims) const;
  /// Same for input dimensions (the first dimension lowest).
  llvm::Expected<LinearLayout>
  reshapeIns(llvm::ArrayRef<std::pair<std::string, int32_t>> newInDims) const;
  /// Only the named inputs and outputs (bases projected on those outputs).
  LinearLayout sublayout(llvm::ArrayRef<std::string> inNames,
                         llvm::ArrayRef<std::string> outNames) const;
  /// Same map with the output dimensions (names, sizes and values) reordered:
  /// `order[i]` is the index in getOutDims() of the new i-th dimension.
  LinearLayout transposeOuts(llvm::ArrayRef<unsigned> order) const;
  /// Same layout with input dimension `from` renamed to `to`.
  LinearLayout renameInDim(llvm::StringRef from, llvm::StringRef to) const;

  bool operator==(const LinearLayout &other) const;
  bool operator!=(const LinearLayout &other) const { return !(*this == other); }

  /// Rank of the map over GF(2).
  int32_t getRank() const;
  /// No two inputs map to the same output.
  bool isInjective() const { return getRank() == getTotalInDimSizeLog2(); }
  /// Every output is reached.
  bool isSurjective() const { return getRank() == getTotalOutDimSizeLog2(); }
  /// Number of inputs holding each output (2^(in bits - rank)), for
  /// surjective layouts.
  int32_t getReplication() const {
    return 1 << (getTotalInDimSizeLog2() - getRank());
  }

  /// Writes `{register: [[0, 1], [0, 2]], lane: [...]} -> {dim0: 32, dim1: 8}`.
  void print(llvm::raw_ostream &os) const;
  std::string toString() const;

  /// Flattens an output point to the bit vector the algebra works on.
  uint64_t flattenOut(llvm::ArrayRef<int32_t> values) const;
  llvm::SmallVector<int32_t, 4> unflattenOut(uint64_t bits) const;

private:
  llvm::SmallVector<InDim, 4> inDims;
  llvm::SmallVector<OutDim, 4> outDims;
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     const LinearLayout &layout) {
  layout.print(os);
  return os;
}

/// How data moves when a tile distributed by `src` is redistributed by `dst`
/// (both over register/lane/wave[/block] onto the same tile dimensions).
enum class LayoutConversionKind {
  None,             ///< the same layout: nothing to do
  InLanePermute,    ///< every lane already holds what it needs: register moves
  CrossLaneShuffle, ///< data stays in its wave: ds_bpermute/DPP shuffles
  ThroughLds,       ///< data crosses waves: a round trip through LDS
};
llvm::StringRef stringifyConversionKind(LayoutConversionKind kind);
llvm::Expected<LayoutConversionKind>
classifyConversion(const LinearLayout &src, const LinearLayout &dst);

//===----------------------------------------------------------------------===//
// LDS bank analysis
//===----------------------------------------------------------------------===//

/// The LDS banking of a chip (docs/hardware.md §7).
struct LdsBanking {
  unsigned numBanks = 32;
  unsigned bankBytes = 4;
};

/// Lanes of a wave serviced together for an LDS access `accessBytes` wide on
/// an LDS with `banking` (docs/hardware.md §7). With 32 banks (gfx9, RDNA):
/// ds_read_b128 in the 8 documented non-contiguous 8-lane groups,
/// ds_write_b128 in 8 groups of 8 consecutive lanes. With 64 banks (gfx950):
/// ds_read_b128 in the 4 measured non-contiguous 16-lane groups. Every other
/// access in consecutive groups filling all banks once (a bandwidth model).
llvm::SmallVector<llvm::SmallVector<unsigned, 16>>
getLdsPhases(unsigned accessBytes, bool isWrite, unsigned waveSize,
             const LdsBanking &banking = {});

/// Extra LDS cycles of one wave's access `accessBytes` wide per lane at
/// `byteAddresses` (one per lane of the wave): over every phase of
/// getLdsPhases, the most distinct dwords any bank serves, minus one (lanes
/// reading the same dword share it). 0 means conflict-free.
unsigned countLdsConflictCycles(llvm::ArrayRef<int64_t> byteAddresses,
                                unsigned accessBytes, bool isWrite,
                                const LdsBanking &banking, unsigned waveSize);

/// Bank conflicts of the LDS accesses a wave makes when the registers of
/// `registerLayout` (register/lane[/wave] -> tile) are read from or written to
/// LDS laid out by `memoryLayout` (offset -> tile, elements of
/// `elementBytes`), `accessBytes` per lane per instruction.
struct BankConflictReport {
  unsigned accessesPerWave = 0; ///< LDS instructions per wave
  unsigned conflictCycles = 0;  ///< extra cycles over all of them, all waves
  unsigned worstPerAccess = 0;  ///< most extra cycles of one instruction
  unsigned waves = 1;           ///< waves analysed
  /// Extra cycles per instruction per wave on average.
  double perAccess() const {
    return accessesPerWave ? double(conflictCycles) / (accessesPerWave * waves)
                           : 0.0;
  }
};
llvm::Expected<BankConflictReport>
analyzeBankConflicts(const LinearLayout &registerLayout,
                     const LinearLayout &memoryLayout, unsigned elementBytes,
                     unsigned accessBytes, bool isWrite,
                     const LdsBanking &banking, unsigned waveSize);

} // namespace tessel

#endif // TESSEL_LAYOUT_LINEARLAYOUT_H
