//===- LdsConflicts.cpp - LDS bank conflicts from machine code ------------===//
//
// Every VGPR is tracked per lane as
//
//   value[lane] = base + offsets[lane]
//
// where `offsets` is known for every lane of the wave and `base` is either
// known to be zero ("exact") or an unknown wave-uniform value (a kernel
// argument, a workgroup id, a loop's stage offset) of which the low
// `baseZeros` bits are known to be zero (a stage offset of 0 or 4096 has 12).
// At entry v0 holds the packed work-item ids; SGPRs are uniform, known when
// set from constants and otherwise tracked by their known low zero bits.
//
// Sums, and products or left shifts by a known constant, distribute over
// the base. Masks, xors and right shifts by constants distribute over it
// too while every lane's offset stays below the base's lowest possible bit
// (then base + offset is base | offset, and the constant splits into the
// bits above and below). Anything else is computed on exact values only or
// becomes unknown. At a join, values that differ by the same amount in every
// lane keep their offsets (the difference moves into the base), which is
// what a loop's pointer increment or a ping-pong stage looks like.
//
// An unknown base that is a multiple of 4 adds the same number of banks to
// every lane's address: it rotates the banks without changing which lanes
// share one, so the offsets alone decide the conflicts. Exec masks are not
// tracked: every lane of the workgroup is assumed active.
//
//===----------------------------------------------------------------------===//

#include "tessel/Perf/LdsConflicts.h"
#include "ControlFlow.h"
#include "tessel/Layout/LinearLayout.h"
#include "tessel/Target/Chip.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"

#include <map>
#include <optional>

using namespace tessel;
using llvm::StringRef;

namespace {

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

/// Trailing zero bits of a known constant (32 for zero).
unsigned zerosOf(uint32_t value) {
  return value ? llvm::countr_zero(value) : 32;
}

/// A wave-uniform SGPR value: a known constant, or unknown with its known
/// low zero bits.
struct ScalarValue {
  std::optional<uint32_t> constant;
  unsigned zeros = 0;

  static ScalarValue known(uint32_t value) { return {value, zerosOf(value)}; }
  static ScalarValue unknown(unsigned zeros) {
    return {std::nullopt, std::min(zeros, 32u)};
  }
  bool operator==(const ScalarValue &other) const {
    return constant == other.constant && zeros == other.zeros;
  }
};

struct LaneValue {
  enum Kind : uint8_t { Unknown, Offsets, Exact };
  Kind kind = Unknown;
  uint8_t baseZeros = 0; ///< Offsets: the base is a multiple of 2^baseZeros
  std::vector<uint32_t> lanes;

  static LaneValue uniform(const ScalarValue &scalar, unsigned lanes) {
    LaneValue value;
    value.kind = scalar.constant ? Exact : Offsets;
    value.baseZeros = scalar.constant ? 32 : scalar.zeros;
    value.lanes.assign(lanes, scalar.constant.value_or(0));
    value.normalize();
    return value;
  }
  static LaneValue make(Kind kind, unsigned baseZeros,
                        std::vector<uint32_t> lanes) {
    LaneValue value;
    value.kind = kind;
    value.baseZeros = kind == Exact ? 32 : std::min(baseZeros, 32u);
    value.lanes = std::move(lanes);
    value.normalize();
    return value;
  }
  bool known() const { return kind != Unknown; }
  bool exact() const { return kind == Exact; }
  /// A known uniform constant (a shift amount, a multiplier, a mask).
  std::optional<uint32_t> constant() const {
    if (!exact() ||
        llvm::any_of(lanes, [&](uint32_t l) { return l != lanes.front(); }))
      return std::nullopt;
    return lanes.front();
  }
  /// Whether every offset lies below the base's lowest possible bit, so
  /// that base + offset = base | offset.
  bool offsetsBelowBase() const {
    return kind == Exact || baseZeros >= 32 ||
           llvm::all_of(lanes, [&](uint32_t l) {
             return l < (uint32_t(1) << baseZeros);
           });
  }
  /// The offsets are defined up to a multiple of 2^baseZeros: move the
  /// smallest such multiple into the base, so equal values compare equal.
  void normalize() {
    if (kind != Offsets || lanes.empty() || baseZeros >= 32)
      return;
    uint32_t low =
        *llvm::min_element(lanes) & ~((uint32_t(1) << baseZeros) - 1);
    for (uint32_t &lane : lanes)
      lane -= low;
  }
  bool operator==(const LaneValue &other) const {
    return kind == other.kind &&
           (kind == Unknown ||
            (baseZeros == other.baseZeros && lanes == other.lanes));
  }
};

LaneValue join(const LaneValue &a, const LaneValue &b) {
  if (!a.known() || !b.known() || a.lanes.size() != b.lanes.size())
    return {};
  if (a == b)
    return a;
  // b = (its base - delta) + a's offsets.
  uint32_t delta = a.lanes.front() - b.lanes.front();
  for (auto [x, y] : llvm::zip(a.lanes, b.lanes))
    if (x - y != delta)
      return {};
  unsigned zeros =
      std::min({unsigned(a.baseZeros), unsigned(b.baseZeros), zerosOf(delta)});
  return LaneValue::make(LaneValue::Offsets, zeros, a.lanes);
}

using Lanes = llvm::ArrayRef<uint32_t>;

/// `f` of the operands' values, lane by lane.
template <typename F>
std::vector<uint32_t> mapLanes(llvm::ArrayRef<const LaneValue *> operands,
                               F f) {
  std::vector<uint32_t> lanes(operands.front()->lanes.size());
  for (size_t lane = 0; lane < lanes.size(); ++lane) {
    llvm::SmallVector<uint32_t, 3> values;
    for (const LaneValue *operand : operands)
      values.push_back(operand->lanes[lane]);
    lanes[lane] = f(values);
  }
  return lanes;
}

/// Applies `f` lane by lane to exact operands (operations that do not
/// distribute over an unknown base).
template <typename F>
LaneValue mapExact(llvm::ArrayRef<const LaneValue *> operands, F f) {
  for (const LaneValue *operand : operands)
    if (!operand->exact())
      return {};
  return LaneValue::make(LaneValue::Exact, 32, mapLanes(operands, f));
}

/// Sums and differences: the bases add up, so the result's base has the
/// fewest known zeros of its operands'.
template <typename F>
LaneValue mapSum(llvm::ArrayRef<const LaneValue *> operands, F f) {
  LaneValue::Kind kind = LaneValue::Exact;
  unsigned zeros = 32;
  for (const LaneValue *operand : operands) {
    kind = std::min(kind, operand->kind);
    if (!operand->exact())
      zeros = std::min<unsigned>(zeros, operand->baseZeros);
  }
  if (kind == LaneValue::Unknown)
    return {};
  return LaneValue::make(kind, zeros, mapLanes(operands, f));
}

LaneValue add(const LaneValue &a, const LaneValue &b) {
  return mapSum({&a, &b}, [](Lanes v) { return v[0] + v[1]; });
}

/// value << amount.
LaneValue shiftLeft(const LaneValue &value, const LaneValue &amount) {
  if (std::optional<uint32_t> c = amount.constant()) {
    if (!value.known())
      return {};
    unsigned shift = *c & 31;
    std::vector<uint32_t> lanes(value.lanes);
    for (uint32_t &lane : lanes)
      lane <<= shift;
    return LaneValue::make(value.kind, value.baseZeros + shift,
                           std::move(lanes));
  }
  return mapExact({&value, &amount},
                  [](Lanes v) { return v[0] << (v[1] & 31); });
}

/// a * b.
LaneValue multiply(const LaneValue &a, const LaneValue &b) {
  const LaneValue *value = &a, *factor = &b;
  if (!factor->constant())
    std::swap(value, factor);
  if (std::optional<uint32_t> c = factor->constant()) {
    if (!value->known())
      return {};
    std::vector<uint32_t> lanes(value->lanes);
    for (uint32_t &lane : lanes)
      lane *= *c;
    return LaneValue::make(value->kind, value->baseZeros + zerosOf(*c),
                           std::move(lanes));
  }
  return mapExact({&a, &b}, [](Lanes v) { return v[0] * v[1]; });
}

/// Whether every lane holds the same unknown value (a uniform operand).
bool isUnknownUniform(const LaneValue &value) {
  return value.kind == LaneValue::Offsets &&
         llvm::all_of(value.lanes, [](uint32_t l) { return l == 0; });
}

/// A bitwise operation (and, or, xor) `isAnd` or not: lane by lane on exact
/// operands. On a base + offset value whose offsets lie below the base's
/// bits, with a uniform operand: a constant splits into its bits below the
/// base (applied to the offsets) and above (to the unknown base, which keeps
/// its zero bits); an unknown uniform whose low zero bits cover the offsets
/// combines with the base alone (and clears the offsets).
template <typename F>
LaneValue bitwise(const LaneValue &a, const LaneValue &b, F f, bool isAnd) {
  if (a.exact() && b.exact())
    return mapExact({&a, &b}, [&](Lanes v) { return f(v[0], v[1]); });
  const LaneValue *value = &a, *uniform = &b;
  if (!uniform->constant() && !isUnknownUniform(*uniform))
    std::swap(value, uniform);
  if (!value->known() || !value->offsetsBelowBase())
    return {};
  std::vector<uint32_t> lanes(value->lanes);
  if (std::optional<uint32_t> c = uniform->constant()) {
    uint32_t low =
        value->baseZeros >= 32 ? ~0u : (uint32_t(1) << value->baseZeros) - 1;
    for (uint32_t &lane : lanes)
      lane = f(lane, *c & low);
    return LaneValue::make(value->kind, value->baseZeros, std::move(lanes));
  }
  if (!isUnknownUniform(*uniform))
    return {};
  unsigned zeros = uniform->baseZeros;
  auto aboveZeros = [&](uint32_t lane) {
    return lane >= (uint32_t(1) << zeros);
  };
  if (zeros < 32 && llvm::any_of(lanes, aboveZeros))
    return {};
  if (isAnd) {
    llvm::fill(lanes, 0);
    zeros = std::max<unsigned>(zeros, value->baseZeros);
  } else {
    zeros = std::min<unsigned>(zeros, value->baseZeros);
  }
  return LaneValue::make(LaneValue::Offsets, zeros, std::move(lanes));
}

/// gfx950's v_bitop3: bit i of `table` is the result for the input bits
/// (a << 2 | b << 1 | c). Exact operands lane by lane; an unknown uniform
/// operand whose low zero bits cover the other (exact) operands acts as
/// zero on those bits and leaves a uniform value above them.
LaneValue bitop3(const LaneValue &a, const LaneValue &b, const LaneValue &c,
                 int64_t table) {
  auto apply = [table](uint32_t x, uint32_t y, uint32_t z) {
    uint32_t result = 0;
    for (unsigned minterm = 0; minterm < 8; ++minterm)
      if ((table >> minterm) & 1)
        result |= (minterm & 4 ? x : ~x) & (minterm & 2 ? y : ~y) &
                  (minterm & 1 ? z : ~z);
    return result;
  };
  if (a.exact() && b.exact() && c.exact())
    return mapExact({&a, &b, &c},
                    [&](Lanes v) { return apply(v[0], v[1], v[2]); });
  unsigned zeros = 32;
  for (const LaneValue *operand : {&a, &b, &c}) {
    if (operand->exact())
      continue;
    if (!isUnknownUniform(*operand))
      return {};
    zeros = std::min<unsigned>(zeros, operand->baseZeros);
  }
  uint32_t low = zeros >= 32 ? ~0u : (uint32_t(1) << zeros) - 1;
  for (const LaneValue *operand : {&a, &b, &c})
    if (operand->exact() &&
        llvm::any_of(operand->lanes, [&](uint32_t l) { return l & ~low; }))
      return {};
  size_t lanes = std::max({a.lanes.size(), b.lanes.size(), c.lanes.size()});
  std::vector<uint32_t> out(lanes);
  auto laneOf = [](const LaneValue &v, size_t lane) {
    return v.exact() ? v.lanes[lane] : 0u;
  };
  for (size_t lane = 0; lane < lanes; ++lane)
    out[lane] = apply(laneOf(a, lane), laneOf(b, lane), laneOf(c, lane)) & low;
  return LaneValue::make(LaneValue::Offsets, zeros, std::move(out));
}

/// value >> amount (logical).
LaneValue shiftRight(const LaneValue &value, const LaneValue &amount) {
  if (value.exact() && amount.exact())
    return mapExact({&value, &amount},
                    [](Lanes v) { return v[0] >> (v[1] & 31); });
  std::optional<uint32_t> c = amount.constant();
  if (!c || !value.known() || !value.offsetsBelowBase() ||
      value.baseZeros < (*c & 31))
    return {};
  unsigned shift = *c & 31;
  std::vector<uint32_t> lanes(value.lanes);
  for (uint32_t &lane : lanes)
    lane >>= shift;
  return LaneValue::make(value.kind, value.baseZeros - shift, std::move(lanes));
}

//===----------------------------------------------------------------------===//
// Registers and operands
//===----------------------------------------------------------------------===//

/// AGPRs share the VGPR map above this index (kernels park values there).
constexpr unsigned kAgprBase = 1024;

struct RegisterState {
  std::map<unsigned, LaneValue> vgprs;   ///< and AGPRs; absent: unknown
  std::map<unsigned, ScalarValue> sgprs; ///< absent: unknown, no zero bits
  bool reached = false;

  bool operator==(const RegisterState &other) const {
    return reached == other.reached && vgprs == other.vgprs &&
           sgprs == other.sgprs;
  }
};

ScalarValue join(const ScalarValue &a, const ScalarValue &b) {
  if (a == b)
    return a;
  unsigned zeros = std::min(a.zeros, b.zeros);
  if (a.constant && b.constant)
    zeros = std::min(zeros, zerosOf(*a.constant ^ *b.constant));
  return ScalarValue::unknown(zeros);
}

RegisterState join(const RegisterState &a, const RegisterState &b) {
  if (!a.reached)
    return b;
  if (!b.reached)
    return a;
  RegisterState result;
  result.reached = true;
  for (const auto &[reg, value] : a.vgprs) {
    auto other = b.vgprs.find(reg);
    if (other == b.vgprs.end())
      continue;
    LaneValue joined = join(value, other->second);
    if (joined.known())
      result.vgprs.emplace(reg, std::move(joined));
  }
  for (const auto &[reg, value] : a.sgprs) {
    auto other = b.sgprs.find(reg);
    if (other == b.sgprs.end())
      continue;
    ScalarValue joined = join(value, other->second);
    if (joined.constant || joined.zeros)
      result.sgprs.emplace(reg, joined);
  }
  return result;
}

struct Operand {
  enum Kind { Vgpr, Sgpr, Agpr, OtherRegister, Immediate, Other };
  Kind kind = Other;
  unsigned reg = 0, count = 1;
  int64_t value = 0;
};

/// "v12", "v[12:15]", "s3", "s[4:5]", "a0", "vcc", "0x3f", "-1".
Operand parseOperand(StringRef text) {
  Operand operand;
  text = text.trim();
  if (text.empty())
    return operand;
  if (!text.getAsInteger(0, operand.value)) {
    operand.kind = Operand::Immediate;
    return operand;
  }
  char file = text.front();
  StringRef rest = text.drop_front();
  auto parseRange = [&](StringRef range) {
    if (range.consume_front("[") && range.consume_back("]")) {
      auto [first, last] = range.split(':');
      unsigned lo = 0, hi = 0;
      if (first.getAsInteger(10, lo) || last.getAsInteger(10, hi) || hi < lo)
        return false;
      operand.reg = lo;
      operand.count = hi - lo + 1;
      return true;
    }
    return !range.getAsInteger(10, operand.reg);
  };
  if ((file == 'v' || file == 's') && parseRange(rest)) {
    operand.kind = file == 'v' ? Operand::Vgpr : Operand::Sgpr;
    return operand;
  }
  if (file == 'a' && parseRange(rest)) {
    operand.kind = Operand::Agpr;
    return operand;
  }
  if (llvm::all_of(text, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
    operand.kind = Operand::OtherRegister; // vcc, exec, m0, ttmp...
  return operand;
}

/// An instruction split into mnemonic, operands and modifiers
/// ("offset:16", "glc").
struct ParsedInstruction {
  StringRef mnemonic;
  llvm::SmallVector<Operand, 4> operands;
  llvm::SmallVector<StringRef, 2> modifiers;

  std::optional<int64_t> modifier(StringRef name) const {
    for (StringRef modifier : modifiers) {
      auto [key, value] = modifier.split(':');
      int64_t number = 0;
      if (key == name && !value.getAsInteger(0, number))
        return number;
    }
    return std::nullopt;
  }
  bool hasModifier(StringRef name) const {
    return llvm::is_contained(modifiers, name);
  }
};

ParsedInstruction parseInstruction(StringRef text) {
  ParsedInstruction parsed;
  text = text.trim();
  auto [mnemonic, rest] = text.split(' ');
  parsed.mnemonic = mnemonic;
  // Operands are separated by commas outside brackets; modifiers follow the
  // last operand after a space.
  llvm::SmallVector<StringRef, 6> pieces;
  int depth = 0;
  size_t start = 0;
  rest = rest.trim();
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '[' || rest[i] == '(')
      ++depth;
    else if (rest[i] == ']' || rest[i] == ')')
      --depth;
    else if (rest[i] == ',' && depth == 0) {
      pieces.push_back(rest.slice(start, i).trim());
      start = i + 1;
    }
  }
  StringRef last = rest.drop_front(start).trim();
  if (!last.empty()) {
    llvm::SmallVector<StringRef, 4> words;
    last.split(words, ' ', -1, /*KeepEmpty=*/false);
    pieces.push_back(words.front());
    parsed.modifiers.append(words.begin() + 1, words.end());
  }
  for (StringRef piece : pieces)
    parsed.operands.push_back(parseOperand(piece));
  return parsed;
}

//===----------------------------------------------------------------------===//
// Transfer functions
//===----------------------------------------------------------------------===//

/// A register write an instruction makes.
struct Write {
  Operand destination;
  LaneValue value;    ///< VGPR destinations
  ScalarValue scalar; ///< SGPR destinations
};

class Evaluator {
public:
  explicit Evaluator(unsigned lanes) : lanes(lanes) {}

  /// Applies one instruction (both halves of a gfx11 dual issue, which read
  /// their operands before either writes).
  void step(StringRef text, RegisterState &state) const {
    llvm::SmallVector<Write, 4> writes;
    llvm::SmallVector<StringRef, 2> halves;
    text.split(halves, "::");
    for (StringRef half : halves)
      evaluate(parseInstruction(half), state, writes);
    for (Write &write : writes)
      apply(write, state);
  }

  ScalarValue readScalar(const Operand &operand,
                         const RegisterState &state) const {
    if (operand.kind == Operand::Immediate)
      return ScalarValue::known(uint32_t(operand.value));
    if (operand.kind == Operand::Sgpr && operand.count == 1) {
      auto found = state.sgprs.find(operand.reg);
      if (found != state.sgprs.end())
        return found->second;
    }
    return ScalarValue::unknown(0);
  }

  LaneValue read(const Operand &operand, const RegisterState &state) const {
    switch (operand.kind) {
    case Operand::Immediate:
    case Operand::Sgpr:
      if (operand.count != 1)
        return {};
      return LaneValue::uniform(readScalar(operand, state), lanes);
    case Operand::OtherRegister:
      // vcc, exec, m0 and the like are wave-uniform.
      return LaneValue::uniform(ScalarValue::unknown(0), lanes);
    case Operand::Vgpr:
    case Operand::Agpr: {
      if (operand.count != 1)
        return {};
      auto found = state.vgprs.find(vectorKey(operand));
      return found == state.vgprs.end() ? LaneValue() : found->second;
    }
    case Operand::Other:
      return {};
    }
    return {};
  }

private:
  void evaluate(const ParsedInstruction &instr, const RegisterState &state,
                llvm::SmallVectorImpl<Write> &writes) const {
    StringRef mnemonic = instr.mnemonic;
    if (instr.operands.empty())
      return;
    const Operand &destination = instr.operands.front();
    if ((mnemonic.starts_with("v_")) &&
        evaluateVector(instr, state, destination, writes))
      return;
    if (mnemonic.starts_with("s_") && destination.kind == Operand::Sgpr &&
        destination.count == 1 && evaluateScalar(instr, state, writes))
      return;
    // Anything else: its destinations become unknown. Over-approximating
    // the writes loses precision, never soundness.
    if (writesFirstOperand(instr))
      writes.push_back({destination, {}, {}});
    if (instr.operands.size() > 1 && writesSecondOperand(mnemonic))
      writes.push_back({instr.operands[1], {}, {}});
  }

  static bool writesFirstOperand(const ParsedInstruction &instr) {
    StringRef m = instr.mnemonic;
    if (m.starts_with("ds_"))
      return m.contains("read") || m.contains("load") || m.contains("_rtn") ||
             m.contains("swizzle") || m.contains("permute") ||
             m.contains("append") || m.contains("consume");
    if (m.starts_with("global_") || m.starts_with("buffer_") ||
        m.starts_with("flat_") || m.starts_with("scratch_"))
      return m.contains("load") ||
             (m.contains("atomic") &&
              (instr.hasModifier("glc") || instr.hasModifier("sc0") ||
               m.contains("_rtn")));
    if (m.starts_with("s_cmp") || m.starts_with("s_bitcmp") ||
        m.starts_with("s_store") || m.starts_with("s_buffer_store") ||
        m.starts_with("s_scratch_store") || m.starts_with("s_setreg") ||
        m.starts_with("s_cbranch"))
      return false;
    return true;
  }

  /// Carry-outs, 64-bit multiply-adds and swaps also write their second
  /// operand.
  static bool writesSecondOperand(StringRef m) {
    return m.starts_with("v_") &&
           (m.contains("_co_") || m.contains("addc") || m.contains("subb") ||
            m.contains("mad_u64") || m.contains("mad_i64") ||
            m.contains("div_scale") || m.contains("swap"));
  }

  /// "v_add_u32_e32" -> "add_u32"; gfx11 dual-issue halves lose "v_dual_".
  static std::optional<StringRef> operation(StringRef mnemonic) {
    if (mnemonic.contains("_sdwa") || mnemonic.contains("_dpp"))
      return std::nullopt; // sub-dword and cross-lane forms: not modelled
    mnemonic.consume_back("_e32");
    mnemonic.consume_back("_e64");
    if (!mnemonic.consume_front("v_dual_"))
      mnemonic.consume_front("v_");
    return mnemonic;
  }

  bool evaluateVector(const ParsedInstruction &instr,
                      const RegisterState &state, const Operand &destination,
                      llvm::SmallVectorImpl<Write> &writes) const {
    std::optional<StringRef> op = operation(instr.mnemonic);
    // Modifiers (clamp, op_sel, omod...) change the arithmetic: not modelled,
    // except bitop3's truth table.
    if (!op || (!instr.modifiers.empty() &&
                !(*op == "bitop3_b32" && instr.modifiers.size() == 1)))
      return false;
    if (*op == "readfirstlane_b32") {
      if (destination.kind != Operand::Sgpr || instr.operands.size() < 2)
        return false;
      LaneValue value = read(instr.operands[1], state);
      // The first active lane: lane 0, every lane being active.
      ScalarValue scalar = ScalarValue::unknown(0);
      if (value.exact())
        scalar = ScalarValue::known(value.lanes.front());
      else if (value.known())
        scalar = ScalarValue::unknown(
            std::min<unsigned>(value.baseZeros, zerosOf(value.lanes.front())));
      writes.push_back({destination, {}, scalar});
      return true;
    }
    if ((destination.kind != Operand::Vgpr &&
         destination.kind != Operand::Agpr) ||
        destination.count != 1)
      return false;
    // Carry-out forms name their carry register before the sources.
    size_t first = op->contains("_co_") ? 2 : 1;
    llvm::SmallVector<LaneValue, 3> sources;
    for (size_t i = first; i < instr.operands.size(); ++i)
      sources.push_back(read(instr.operands[i], state));
    std::optional<LaneValue> result =
        compute(*op, sources, instr.modifier("bitop3"));
    if (!result)
      return false;
    writes.push_back({destination, std::move(*result), {}});
    if (first == 2)
      writes.push_back({instr.operands[1], {}, {}});
    return true;
  }

  /// The result of VALU operation `op`, or nullopt if it is not modelled.
  static std::optional<LaneValue> compute(StringRef op,
                                          llvm::ArrayRef<LaneValue> s,
                                          std::optional<int64_t> table) {
    auto need = [&](size_t n) { return s.size() >= n; };
    auto isAny = [&](std::initializer_list<StringRef> names) {
      return llvm::is_contained(names, op);
    };
    auto sub = [](const LaneValue &a, const LaneValue &b) {
      return mapSum({&a, &b}, [](Lanes v) { return v[0] - v[1]; });
    };
    auto andOp = [](uint32_t a, uint32_t b) { return a & b; };
    auto orOp = [](uint32_t a, uint32_t b) { return a | b; };
    auto xorOp = [](uint32_t a, uint32_t b) { return a ^ b; };
    if (isAny({"mov_b32", "accvgpr_read_b32", "accvgpr_write_b32",
               "accvgpr_mov_b32"}) &&
        need(1))
      return s[0];
    if (isAny({"add_u32", "add_nc_u32", "add_co_u32", "add_i32"}) && need(2))
      return add(s[0], s[1]);
    if (isAny({"sub_u32", "sub_nc_u32", "sub_co_u32", "sub_i32"}) && need(2))
      return sub(s[0], s[1]);
    if (isAny({"subrev_u32", "subrev_nc_u32", "subrev_co_u32"}) && need(2))
      return sub(s[1], s[0]);
    if (op == "add3_u32" && need(3))
      return add(add(s[0], s[1]), s[2]);
    if (op == "lshlrev_b32" && need(2))
      return shiftLeft(s[1], s[0]);
    // The 24-bit multiplies are chosen by the compiler only for operands it
    // proved to fit, so they multiply like the 32-bit form.
    if (isAny({"mul_lo_u32", "mul_u32_u24", "mul_i32_i24"}) && need(2))
      return multiply(s[0], s[1]);
    if (isAny({"mad_u32_u24", "mad_i32_i24"}) && need(3))
      return add(multiply(s[0], s[1]), s[2]);
    if (op == "lshl_add_u32" && need(3))
      return add(shiftLeft(s[0], s[1]), s[2]);
    if (op == "add_lshl_u32" && need(3))
      return shiftLeft(add(s[0], s[1]), s[2]);
    if (op == "lshrrev_b32" && need(2))
      return shiftRight(s[1], s[0]);
    if (op == "and_b32" && need(2))
      return bitwise(s[0], s[1], andOp, true);
    if (op == "or_b32" && need(2))
      return bitwise(s[0], s[1], orOp, false);
    if (op == "xor_b32" && need(2))
      return bitwise(s[0], s[1], xorOp, false);
    if (op == "xad_u32" && need(3))
      return add(bitwise(s[0], s[1], xorOp, false), s[2]);
    if (op == "lshl_or_b32" && need(3))
      return bitwise(shiftLeft(s[0], s[1]), s[2], orOp, false);
    if (op == "and_or_b32" && need(3))
      return bitwise(bitwise(s[0], s[1], andOp, true), s[2], orOp, false);
    if (op == "or3_b32" && need(3))
      return bitwise(bitwise(s[0], s[1], orOp, false), s[2], orOp, false);
    if (op == "xor3_b32" && need(3))
      return bitwise(bitwise(s[0], s[1], xorOp, false), s[2], xorOp, false);
    if (op == "bitop3_b32" && need(3) && table)
      return bitop3(s[0], s[1], s[2], *table);
    if (op == "bfe_u32" && need(3)) {
      std::optional<uint32_t> width = s[2].constant();
      if (!width)
        return mapExact({&s[0], &s[1], &s[2]}, [](Lanes v) {
          uint32_t w = v[2] & 31;
          return (v[0] >> (v[1] & 31)) & (w ? (1u << w) - 1 : 0u);
        });
      LaneValue mask = LaneValue::uniform(
          ScalarValue::known((*width & 31) ? (1u << (*width & 31)) - 1 : 0u),
          s[0].lanes.size() ? s[0].lanes.size() : 1);
      return bitwise(shiftRight(s[0], s[1]), mask, andOp, true);
    }
    if ((op == "mbcnt_lo_u32_b32" || op == "mbcnt_hi_u32_b32") && need(2))
      return countMaskBitsBelow(op == "mbcnt_hi_u32_b32", s[0], s[1]);
    if (op == "cndmask_b32" && need(2))
      return s[0] == s[1] ? s[0] : LaneValue();
    if (isAny({"min_u32", "max_u32", "min_i32", "max_i32"}) && need(2)) {
      bool isMin = op.starts_with("min"), isSigned = op.ends_with("i32");
      return mapExact({&s[0], &s[1]}, [=](Lanes v) {
        if (isSigned) {
          int32_t a = int32_t(v[0]), b = int32_t(v[1]);
          return uint32_t(isMin ? std::min(a, b) : std::max(a, b));
        }
        return isMin ? std::min(v[0], v[1]) : std::max(v[0], v[1]);
      });
    }
    return std::nullopt;
  }

  /// v_mbcnt: the bits of the mask below the lane (among the low or high 32
  /// lanes) plus the source; how code computes its lane id.
  static LaneValue countMaskBitsBelow(bool high, const LaneValue &maskValue,
                                      const LaneValue &source) {
    std::optional<uint32_t> mask = maskValue.constant();
    if (!mask || !source.known())
      return {};
    std::vector<uint32_t> lanes(source.lanes);
    for (size_t lane = 0; lane < lanes.size(); ++lane) {
      int64_t below =
          std::clamp<int64_t>(high ? int64_t(lane) - 32 : int64_t(lane), 0, 32);
      uint64_t bits = below >= 32 ? *mask : (*mask & ((1ull << below) - 1));
      lanes[lane] += llvm::popcount(bits);
    }
    return LaneValue::make(source.kind, source.baseZeros, std::move(lanes));
  }

  bool evaluateScalar(const ParsedInstruction &instr,
                      const RegisterState &state,
                      llvm::SmallVectorImpl<Write> &writes) const {
    StringRef op = instr.mnemonic;
    llvm::SmallVector<ScalarValue, 2> s;
    for (size_t i = 1; i < instr.operands.size(); ++i)
      s.push_back(readScalar(instr.operands[i], state));
    if (s.empty())
      return false;
    // Both constant: the value; otherwise what is known of its low zeros.
    auto binary = [&](auto f, unsigned zeros) {
      if (s.size() >= 2 && s[0].constant && s[1].constant)
        return ScalarValue::known(f(*s[0].constant, *s[1].constant));
      return ScalarValue::unknown(zeros);
    };
    unsigned z0 = s[0].zeros, z1 = s.size() > 1 ? s[1].zeros : 0;
    ScalarValue result;
    if (op == "s_mov_b32")
      result = s[0];
    else if (op == "s_movk_i32")
      result =
          s[0].constant
              ? ScalarValue::known(uint32_t(int32_t(int16_t(*s[0].constant))))
              : s[0];
    else if (op == "s_add_u32" || op == "s_add_i32")
      result = binary([](uint32_t a, uint32_t b) { return a + b; },
                      std::min(z0, z1));
    else if (op == "s_sub_u32" || op == "s_sub_i32")
      result = binary([](uint32_t a, uint32_t b) { return a - b; },
                      std::min(z0, z1));
    else if (op == "s_mul_i32")
      result = binary([](uint32_t a, uint32_t b) { return a * b; }, z0 + z1);
    else if (op == "s_lshl_b32")
      result = binary([](uint32_t a, uint32_t b) { return a << (b & 31); },
                      s.size() > 1 && s[1].constant ? z0 + (*s[1].constant & 31)
                                                    : z0);
    else if (op == "s_lshr_b32")
      result = binary([](uint32_t a, uint32_t b) { return a >> (b & 31); }, 0);
    else if (op == "s_and_b32")
      result = binary([](uint32_t a, uint32_t b) { return a & b; },
                      std::max(z0, z1));
    else if (op == "s_andn2_b32" || op == "s_and_not1_b32")
      result = binary([](uint32_t a, uint32_t b) { return a & ~b; }, z0);
    else if (op == "s_or_b32")
      result = binary([](uint32_t a, uint32_t b) { return a | b; },
                      std::min(z0, z1));
    else if (op == "s_xor_b32")
      result = binary([](uint32_t a, uint32_t b) { return a ^ b; },
                      std::min(z0, z1));
    else if (op == "s_cselect_b32" && s.size() >= 2)
      // One of the two, chosen by SCC (not tracked).
      result = join(s[0], s[1]);
    else
      return false;
    writes.push_back({instr.operands.front(), {}, result});
    return true;
  }

  static unsigned vectorKey(const Operand &operand) {
    return operand.kind == Operand::Agpr ? kAgprBase + operand.reg
                                         : operand.reg;
  }

  static void apply(Write &write, RegisterState &state) {
    const Operand &destination = write.destination;
    if (destination.kind == Operand::Vgpr ||
        destination.kind == Operand::Agpr) {
      unsigned key = vectorKey(destination);
      for (unsigned r = 0; r < destination.count; ++r)
        state.vgprs.erase(key + r);
      if (destination.count == 1 && write.value.known())
        state.vgprs[key] = std::move(write.value);
    } else if (destination.kind == Operand::Sgpr) {
      for (unsigned r = 0; r < destination.count; ++r)
        state.sgprs.erase(destination.reg + r);
      if (destination.count == 1 &&
          (write.scalar.constant || write.scalar.zeros))
        state.sgprs[destination.reg] = write.scalar;
    }
  }

  unsigned lanes;
};

} // namespace

namespace {

//===----------------------------------------------------------------------===//
// LDS accesses
//===----------------------------------------------------------------------===//

/// What an LDS instruction addresses: its address operand, the bytes per
/// lane of one access, and for the two-address forms the spacing of their
/// offsets.
struct LdsAccessShape {
  unsigned addressOperand = 0;
  unsigned bytes = 4;
  bool isWrite = false;
  bool twoAddresses = false;
  unsigned offsetUnit = 1; ///< bytes per offset0/offset1 step
};

std::optional<unsigned> accessWidth(StringRef mnemonic) {
  llvm::SmallVector<StringRef, 6> parts;
  mnemonic.split(parts, '_');
  for (StringRef part : llvm::reverse(parts)) {
    StringRef digits = part.drop_front();
    unsigned bits = 0;
    if (part.size() < 2 || !llvm::is_contained(StringRef("bfiu"), part[0]) ||
        digits.getAsInteger(10, bits))
      continue;
    if (bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 96 ||
        bits == 128)
      return bits / 8;
  }
  return std::nullopt;
}

std::optional<LdsAccessShape>
describeLdsAccess(const ParsedInstruction &instr) {
  StringRef m = instr.mnemonic;
  if (!m.starts_with("ds_"))
    return std::nullopt;
  for (StringRef excluded : {"swizzle", "permute", "append", "consume", "gws",
                             "addtid", "_tr", "ordered", "nop", "barrier"})
    if (m.contains(excluded))
      return std::nullopt;
  std::optional<unsigned> width = accessWidth(m);
  if (!width)
    return std::nullopt;
  LdsAccessShape shape;
  shape.bytes = *width;
  bool isLoad = m.contains("read") || m.contains("load");
  bool returns = isLoad || m.contains("_rtn");
  shape.isWrite = !isLoad;
  shape.addressOperand = returns ? 1 : 0;
  shape.twoAddresses =
      m.contains("read2") || m.contains("write2") || m.contains("2addr");
  bool stride64 = m.contains("st64") || m.contains("stride64");
  shape.offsetUnit = shape.bytes * (stride64 ? 64 : 1);
  if (instr.operands.size() <= shape.addressOperand)
    return std::nullopt;
  return shape;
}

/// Extra cycles and phases of one access for one wave, if its addresses are
/// known.
std::optional<std::pair<unsigned, unsigned>>
countAccess(const ParsedInstruction &instr, const LdsAccessShape &shape,
            const LaneValue &address, unsigned activeLanes,
            const LdsBanking &banking, unsigned waveSize) {
  if (!address.known())
    return std::nullopt;
  llvm::SmallVector<int64_t, 2> offsets;
  if (shape.twoAddresses) {
    offsets.push_back(instr.modifier("offset0").value_or(0) * shape.offsetUnit);
    offsets.push_back(instr.modifier("offset1").value_or(0) * shape.offsetUnit);
  } else {
    offsets.push_back(instr.modifier("offset").value_or(0));
  }
  unsigned extra = 0, phases = 0;
  unsigned phaseBytes = std::min(shape.bytes, 16u);
  for (int64_t offset : offsets) {
    std::vector<int64_t> addresses(waveSize);
    for (unsigned lane = 0; lane < waveSize; ++lane) {
      // Lanes past the workgroup's end share lane 0's dword: no conflict.
      unsigned source = lane < activeLanes ? lane : 0;
      addresses[lane] = int64_t(uint32_t(address.lanes[source] + offset));
    }
    extra += countLdsConflictCycles(addresses, phaseBytes, shape.isWrite,
                                    banking, waveSize);
    phases += getLdsPhases(phaseBytes, shape.isWrite, waveSize, banking).size();
  }
  return std::make_pair(extra, phases);
}

/// The packed work-item ids of one wave's lanes (x in bits 0-9, y in 10-19,
/// z in 20-29, as gfx90a and later and gfx11 pass them in v0).
LaneValue workItemIds(std::array<uint64_t, 3> block, unsigned wave,
                      unsigned waveSize, unsigned &activeLanes) {
  uint64_t x = std::max<uint64_t>(1, block[0]),
           y = std::max<uint64_t>(1, block[1]);
  uint64_t total = x * y * std::max<uint64_t>(1, block[2]);
  std::vector<uint32_t> ids(waveSize);
  activeLanes = 0;
  for (unsigned lane = 0; lane < waveSize; ++lane) {
    uint64_t flat = uint64_t(wave) * waveSize + lane;
    if (flat < total)
      ++activeLanes;
    ids[lane] =
        uint32_t((flat % x) | ((flat / x) % y) << 10 | (flat / (x * y)) << 20);
  }
  return LaneValue::make(LaneValue::Exact, 32, std::move(ids));
}

/// The register state at the start of every block, by iterating the
/// transfer functions to a fixed point.
std::vector<RegisterState> solve(const KernelCode &code,
                                 const std::vector<BasicBlock> &blocks,
                                 const Evaluator &evaluator,
                                 RegisterState entry) {
  std::vector<llvm::SmallVector<size_t, 2>> predecessors =
      getPredecessors(blocks);
  std::vector<RegisterState> in(blocks.size()), out(blocks.size());
  in[0] = std::move(entry);
  constexpr unsigned kMaxRounds = 64;
  for (unsigned round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    for (size_t b = 0; b < blocks.size(); ++b) {
      RegisterState state = b == 0 ? in[0] : RegisterState();
      for (size_t p : predecessors[b])
        state = join(state, out[p]);
      if (!state.reached)
        continue;
      in[b] = state;
      for (size_t i = blocks[b].begin; i < blocks[b].end; ++i)
        evaluator.step(code.instructions[i].text, state);
      if (!(state == out[b])) {
        out[b] = std::move(state);
        changed = true;
      }
    }
    if (!changed)
      return in;
  }
  // No fixed point: claim nothing.
  return std::vector<RegisterState>(blocks.size());
}

} // namespace

std::vector<LdsConflict>
tessel::analyzeLdsConflicts(const KernelCode &code, const Chip &chip,
                            std::array<uint64_t, 3> block, unsigned waveSize) {
  std::vector<LdsConflict> conflicts;
  std::vector<std::optional<LdsAccessShape>> shapes;
  std::vector<ParsedInstruction> parsed;
  for (const Instruction &instr : code.instructions) {
    parsed.push_back(parseInstruction(instr.text));
    shapes.push_back(describeLdsAccess(parsed.back()));
  }
  std::vector<size_t> accessIndex(code.instructions.size(), SIZE_MAX);
  for (auto [index, shape] : llvm::enumerate(shapes))
    if (shape) {
      accessIndex[index] = conflicts.size();
      conflicts.push_back({index, true, 0, 0});
    }
  if (conflicts.empty() || code.instructions.empty())
    return conflicts;

  std::vector<BasicBlock> blocks = buildBasicBlocks(code);
  LdsBanking banking{chip.ldsBanks, chip.ldsBankBytes};
  uint64_t lanes = std::max<uint64_t>(1, block[0]) *
                   std::max<uint64_t>(1, block[1]) *
                   std::max<uint64_t>(1, block[2]);
  // Every wave of the workgroup (at most 16: a workgroup of 1024 lanes).
  unsigned waves = unsigned(std::min<uint64_t>(
      16, std::max<uint64_t>(1, llvm::divideCeil(lanes, waveSize))));
  Evaluator evaluator(waveSize);
  std::vector<unsigned> waveCounted(conflicts.size(), 0);
  for (unsigned wave = 0; wave < waves; ++wave) {
    unsigned activeLanes = 0;
    RegisterState entry;
    entry.reached = true;
    entry.vgprs[0] = workItemIds(block, wave, waveSize, activeLanes);
    std::vector<RegisterState> in = solve(code, blocks, evaluator, entry);
    for (auto [b, basicBlock] : llvm::enumerate(blocks)) {
      RegisterState state = in[b];
      for (size_t i = basicBlock.begin; i < basicBlock.end; ++i) {
        if (shapes[i] && state.reached) {
          LdsConflict &conflict = conflicts[accessIndex[i]];
          LaneValue address = evaluator.read(
              parsed[i].operands[shapes[i]->addressOperand], state);
          if (auto counted = countAccess(parsed[i], *shapes[i], address,
                                         activeLanes, banking, waveSize)) {
            conflict.extraCycles += counted->first;
            conflict.phases = counted->second;
            ++waveCounted[accessIndex[i]];
          }
        }
        if (state.reached)
          evaluator.step(code.instructions[i].text, state);
      }
    }
  }
  for (auto [conflict, counted] : llvm::zip(conflicts, waveCounted)) {
    conflict.derived = counted == waves;
    conflict.extraCycles = conflict.derived ? conflict.extraCycles / waves : 0;
    if (!conflict.derived)
      conflict.phases = 0;
  }
  return conflicts;
}
