//===- CalculatorListing.h - AMD matrix calculator listings -----*- C++ -*-===//
//
// Parser and evaluator for the text listings printed by AMD's matrix
// instruction calculator (unittests/Target/calculator/*.txt: copies of the
// calculator's output checked into the repository, see docs/hardware.md
// §3.7). The unit tests
// use them as an independent oracle: for every lane and register of a matrix
// instruction they evaluate the listing's formulas and compare with Tessel's
// own catalogue.
//
// Header-only and standard-library-only on purpose, so that the oracle shares
// no code (and no bugs) with the compiler it checks. Nothing here throws:
// every problem with a listing is reported through ParseResult::error so that
// a test can fail with a readable message instead of crashing.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_UNITTESTS_TARGET_CALCULATORLISTING_H
#define TESSEL_UNITTESTS_TARGET_CALCULATORLISTING_H

#include <array>
#include <cctype>
#include <climits>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessel::calc {

//===----------------------------------------------------------------------===//
// Variables
//===----------------------------------------------------------------------===//

/// The variables listing formulas may mention. The register->element formulas
/// use Lane, GprNum and GprBits (GPR_bits is the lowest bit of the element
/// inside its 32-bit GPR: 0/16 for 16-bit types, 0/8/16/24 for 8-bit types).
/// The element->register formulas use I, J, K. Block appears in both.
enum class Var : unsigned { Lane, GprNum, GprBits, Block, I, J, K };
inline constexpr unsigned kNumVars = 7;

/// A set of variables, one bit per Var.
using VarMask = unsigned;

inline constexpr VarMask varBit(Var v) {
  return 1u << static_cast<unsigned>(v);
}

/// Variables allowed in "Register to matrix element mapping" formulas.
inline constexpr VarMask kRegisterVars =
    varBit(Var::Lane) | varBit(Var::GprNum) | varBit(Var::GprBits) |
    varBit(Var::Block);

/// Variables allowed in "Matrix element to register mapping" formulas.
inline constexpr VarMask kElementVars =
    varBit(Var::I) | varBit(Var::J) | varBit(Var::K) | varBit(Var::Block);

/// The spelling a listing uses for \p v.
inline const char *varName(Var v) {
  static const char *const names[kNumVars] = {
      "lane", "GPR_num", "GPR_bits", "block", "i", "j", "k"};
  return names[static_cast<unsigned>(v)];
}

inline std::optional<Var> lookupVar(std::string_view name) {
  for (unsigned index = 0; index < kNumVars; ++index)
    if (name == varName(static_cast<Var>(index)))
      return static_cast<Var>(index);
  return std::nullopt;
}

/// Values for the variables of one evaluation. A fixed array instead of a
/// string map because the tests evaluate millions of formulas.
class Bindings {
public:
  Bindings &set(Var v, long value) {
    values[static_cast<unsigned>(v)] = value;
    bound |= varBit(v);
    return *this;
  }

  std::optional<long> get(Var v) const {
    if (!(bound & varBit(v)))
      return std::nullopt;
    return values[static_cast<unsigned>(v)];
  }

  /// Names that are not listing variables are ignored: they cannot be
  /// referenced by a parsed expression anyway.
  static Bindings fromMap(const std::map<std::string, long> &vars) {
    Bindings result;
    for (const auto &[name, value] : vars)
      if (std::optional<Var> v = lookupVar(name))
        result.set(*v, value);
    return result;
  }

private:
  std::array<long, kNumVars> values{};
  VarMask bound = 0;
};

//===----------------------------------------------------------------------===//
// Small text and arithmetic helpers
//===----------------------------------------------------------------------===//

namespace detail {

inline bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

inline std::string_view trim(std::string_view text) {
  while (!text.empty() && isSpace(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back()))
    text.remove_suffix(1);
  return text;
}

inline std::string toLower(std::string_view text) {
  std::string result(text);
  for (char &c : result)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

inline bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

/// Parses a plain decimal number. Rejects signs, spaces and anything that
/// would not fit comfortably in an unsigned.
inline std::optional<unsigned> parseUnsigned(std::string_view text) {
  if (text.empty() || text.size() > 9)
    return std::nullopt;
  unsigned value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  return value;
}

/// Floor division and a non-negative remainder, matching the listings'
/// floor(x / y) and x % y for positive divisors even if x goes negative.
inline long floorDiv(long lhs, long rhs) {
  long quotient = lhs / rhs;
  if (lhs % rhs != 0 && lhs < 0)
    --quotient;
  return quotient;
}

inline long floorMod(long lhs, long rhs) {
  long remainder = lhs % rhs;
  return remainder < 0 ? remainder + rhs : remainder;
}

/// Finds \p needle in \p text outside any parentheses or brackets, so that
/// the ".[hi : lo]" suffix of "(floor(i / 2)).[15:0]" is found but nothing
/// nested inside the register expression is.
inline std::size_t findTopLevel(std::string_view text,
                                std::string_view needle) {
  int depth = 0;
  for (std::size_t pos = 0; pos < text.size(); ++pos) {
    if (depth == 0 && text.substr(pos, needle.size()) == needle)
      return pos;
    char c = text[pos];
    if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
  }
  return std::string_view::npos;
}

/// If \p text is exactly "[...]" (one bracket pair enclosing everything),
/// returns the inside.
inline std::optional<std::string_view> bracketBody(std::string_view text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']')
    return std::nullopt;
  if (findTopLevel(text.substr(1), "]") != text.size() - 2)
    return std::nullopt;
  return text.substr(1, text.size() - 2);
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Expr
//===----------------------------------------------------------------------===//

/// An integer expression from a listing: decimal literals, the variables
/// above, + - * / % with C precedence, unary minus, parentheses and floor().
/// Divisors must be positive constants, which the listings always use; that
/// makes "/" exact floor division and evaluation unable to fail except on an
/// unbound variable.
class Expr {
public:
  /// Parses \p text, accepting only variables in \p allowed. On failure
  /// returns std::nullopt and describes the problem in \p error.
  static std::optional<Expr> parse(std::string_view text, VarMask allowed,
                                   std::string &error);

  /// Returns std::nullopt if the expression mentions an unbound variable or
  /// was default-constructed.
  std::optional<long> evaluate(const Bindings &vars) const;

  std::optional<long> evaluate(const std::map<std::string, long> &vars) const {
    return evaluate(Bindings::fromMap(vars));
  }

  const std::string &text() const { return source; }
  VarMask variables() const { return used; }
  bool isConstant() const { return !code.empty() && used == 0; }

private:
  class Parser;

  // The expression is kept in postfix order: cheap to copy, no recursion to
  // evaluate, and no ownership questions for the nodes.
  enum class OpKind : unsigned char {
    Push,
    Load,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Neg
  };
  struct Op {
    OpKind kind;
    long operand; // literal for Push, Var index for Load
  };

  std::vector<Op> code;
  std::string source;
  VarMask used = 0;
};

/// Recursive-descent parser that emits Expr postfix code. Each rule reports
/// whether its sub-expression is constant (and its value) so that divisors
/// can be checked while parsing rather than failing at evaluation time.
class Expr::Parser {
public:
  Parser(std::string_view formula, VarMask allowedVars, Expr &result)
      : text(formula), allowed(allowedVars), out(result) {}

  bool run(std::string &error) {
    std::optional<Value> result = parseSum();
    if (result) {
      skipSpace();
      if (pos != text.size())
        fail("unexpected '" + std::string(1, text[pos]) + "'");
    }
    if (!message.empty()) {
      error = "column " + std::to_string(failPos + 1) + ": " + message +
              " in '" + std::string(text) + "'";
      return false;
    }
    return true;
  }

private:
  /// What is known at parse time about a sub-expression.
  struct Value {
    bool constant;
    long value; // meaningful only when constant
  };

  // Deep enough for any real formula, shallow enough to never exhaust the
  // stack on garbage input.
  static constexpr unsigned kMaxDepth = 64;
  // Keeps constant folding and evaluation far away from long overflow.
  static constexpr long kMaxLiteral = 1L << 30;

  std::optional<Value> fail(std::string what) {
    if (message.empty()) {
      message = std::move(what);
      failPos = pos;
    }
    return std::nullopt;
  }

  void skipSpace() {
    while (pos < text.size() && detail::isSpace(text[pos]))
      ++pos;
  }

  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  void emit(OpKind kind, long operand = 0) {
    out.code.push_back({kind, operand});
  }

  static long fold(OpKind kind, long lhs, long rhs) {
    switch (kind) {
    case OpKind::Add:
      return lhs + rhs;
    case OpKind::Sub:
      return lhs - rhs;
    case OpKind::Mul:
      return lhs * rhs;
    case OpKind::Div:
      return detail::floorDiv(lhs, rhs);
    default:
      return detail::floorMod(lhs, rhs);
    }
  }

  /// sum := product (('+' | '-') product)*
  std::optional<Value> parseSum() {
    std::optional<Value> lhs = parseProduct();
    while (lhs) {
      OpKind kind;
      if (consume('+'))
        kind = OpKind::Add;
      else if (consume('-'))
        kind = OpKind::Sub;
      else
        break;
      std::optional<Value> rhs = parseProduct();
      if (!rhs)
        return std::nullopt;
      lhs = combine(kind, *lhs, *rhs);
    }
    return lhs;
  }

  /// product := unary (('*' | '/' | '%') unary)*
  std::optional<Value> parseProduct() {
    std::optional<Value> lhs = parseUnary();
    while (lhs) {
      OpKind kind;
      if (consume('*'))
        kind = OpKind::Mul;
      else if (consume('/'))
        kind = OpKind::Div;
      else if (consume('%'))
        kind = OpKind::Mod;
      else
        break;
      std::size_t divisorPos = pos;
      std::optional<Value> rhs = parseUnary();
      if (!rhs)
        return std::nullopt;
      if (kind != OpKind::Mul && (!rhs->constant || rhs->value <= 0)) {
        pos = divisorPos;
        return fail("divisor must be a positive constant");
      }
      lhs = combine(kind, *lhs, *rhs);
    }
    return lhs;
  }

  Value combine(OpKind kind, Value lhs, Value rhs) {
    emit(kind);
    if (lhs.constant && rhs.constant)
      return {true, fold(kind, lhs.value, rhs.value)};
    return {false, 0};
  }

  /// unary := '-' unary | primary
  std::optional<Value> parseUnary() {
    if (!consume('-'))
      return parsePrimary();
    std::optional<Value> operand = parseUnary();
    if (!operand)
      return std::nullopt;
    emit(OpKind::Neg);
    return Value{operand->constant, -operand->value};
  }

  /// primary := number | variable | 'floor' '(' sum ')' | '(' sum ')'
  std::optional<Value> parsePrimary() {
    skipSpace();
    if (pos == text.size())
      return fail("unexpected end of expression");
    char c = text[pos];
    if (c == '(')
      return parseParenthesized();
    if (std::isdigit(static_cast<unsigned char>(c)))
      return parseNumber();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_')
      return parseIdentifier();
    return fail("unexpected '" + std::string(1, c) + "'");
  }

  std::optional<Value> parseParenthesized() {
    if (++depth > kMaxDepth)
      return fail("expression nested too deeply");
    consume('(');
    std::optional<Value> inner = parseSum();
    if (inner && !consume(')'))
      return fail("expected ')'");
    --depth;
    return inner;
  }

  std::optional<Value> parseNumber() {
    long value = 0;
    while (pos < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[pos]))) {
      value = value * 10 + (text[pos++] - '0');
      if (value > kMaxLiteral)
        return fail("number too large");
    }
    emit(OpKind::Push, value);
    return Value{true, value};
  }

  std::optional<Value> parseIdentifier() {
    std::size_t start = pos;
    while (pos < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[pos])) ||
            text[pos] == '_'))
      ++pos;
    std::string_view name = text.substr(start, pos - start);
    // floor() is the identity: every division already floors.
    if (name == "floor") {
      skipSpace();
      if (pos == text.size() || text[pos] != '(')
        return fail("expected '(' after 'floor'");
      return parseParenthesized();
    }
    std::optional<Var> v = lookupVar(name);
    if (!v || !(allowed & varBit(*v))) {
      pos = start;
      return fail("unknown variable '" + std::string(name) + "'");
    }
    emit(OpKind::Load, static_cast<long>(*v));
    out.used |= varBit(*v);
    return Value{false, 0};
  }

  std::string_view text;
  VarMask allowed;
  Expr &out;
  std::size_t pos = 0;
  unsigned depth = 0;
  std::string message;
  std::size_t failPos = 0;
};

inline std::optional<Expr> Expr::parse(std::string_view text, VarMask allowed,
                                       std::string &error) {
  Expr result;
  result.source = std::string(detail::trim(text));
  if (!Parser(result.source, allowed, result).run(error))
    return std::nullopt;
  return result;
}

inline std::optional<long> Expr::evaluate(const Bindings &vars) const {
  if (code.empty())
    return std::nullopt;
  std::vector<long> stack;
  stack.reserve(code.size());
  for (const Op &op : code) {
    switch (op.kind) {
    case OpKind::Push:
      stack.push_back(op.operand);
      continue;
    case OpKind::Load: {
      std::optional<long> value = vars.get(static_cast<Var>(op.operand));
      if (!value)
        return std::nullopt;
      stack.push_back(*value);
      continue;
    }
    case OpKind::Neg:
      stack.back() = -stack.back();
      continue;
    default:
      break;
    }
    // Binary operators; the parser guarantees two operands and a positive
    // divisor.
    long rhs = stack.back();
    stack.pop_back();
    long &lhs = stack.back();
    switch (op.kind) {
    case OpKind::Add:
      lhs += rhs;
      break;
    case OpKind::Sub:
      lhs -= rhs;
      break;
    case OpKind::Mul:
      lhs *= rhs;
      break;
    case OpKind::Div:
      lhs = detail::floorDiv(lhs, rhs);
      break;
    default:
      lhs = detail::floorMod(lhs, rhs);
      break;
    }
  }
  return stack.back();
}

namespace detail {

/// Parses "hi : lo" (the inside of a "[hi : lo]" range). Listings write the
/// high end first.
inline bool parseRange(std::string_view body, VarMask allowed,
                       std::optional<Expr> &high, std::optional<Expr> &low,
                       std::string &error) {
  std::size_t colon = findTopLevel(body, ":");
  if (colon == std::string_view::npos) {
    error = "expected 'high : low' in '[" + std::string(body) + "]'";
    return false;
  }
  high = Expr::parse(body.substr(0, colon), allowed, error);
  if (!high)
    return false;
  low = Expr::parse(body.substr(colon + 1), allowed, error);
  return low.has_value();
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Register -> element formulas
//===----------------------------------------------------------------------===//

/// One coordinate formula of the register->element mapping, such as the
/// "A k: 4 * floor(lane / 32) + 2 * GPR_num + floor(GPR_bits / 16)" line.
struct ElementExpr {
  /// Sentinel evaluate() returns if the formula was never parsed.
  static constexpr long kInvalid = LONG_MIN;

  std::string text; // the formula as written, including any ".[15:0]"
  /// The listing wrote "(...).[15:0]": the element occupies only bits [15:0]
  /// of each GPR (RDNA3 16-bit accumulators), so GPR_bits is always 0 and the
  /// upper half is not part of the mapping.
  bool low16Only = false;
  Expr expr; // the formula without the ".[15:0]" suffix

  static std::optional<ElementExpr> parse(std::string_view text,
                                          std::string &error);

  long evaluate(long lane, long gprNum, long gprBits, long block = 0) const {
    Bindings vars;
    vars.set(Var::Lane, lane)
        .set(Var::GprNum, gprNum)
        .set(Var::GprBits, gprBits)
        .set(Var::Block, block);
    return expr.evaluate(vars).value_or(kInvalid);
  }
};

inline std::optional<ElementExpr> ElementExpr::parse(std::string_view text,
                                                     std::string &error) {
  ElementExpr result;
  text = detail::trim(text);
  result.text = std::string(text);
  std::string_view formula = text;
  std::size_t suffix = detail::findTopLevel(text, ".[");
  if (suffix != std::string_view::npos) {
    // Only the RDNA3 half-register form is known; anything else is a format
    // change the tests should hear about rather than silently misread.
    std::optional<std::string_view> body =
        detail::bracketBody(text.substr(suffix + 1));
    if (!body) {
      error = "malformed bit range in '" + result.text + "'";
      return std::nullopt;
    }
    std::optional<Expr> high, low;
    if (!detail::parseRange(*body, /*allowed=*/0, high, low, error))
      return std::nullopt;
    if (high->evaluate(Bindings()) != 15 || low->evaluate(Bindings()) != 0) {
      error = "unsupported bit range in '" + result.text + "'";
      return std::nullopt;
    }
    result.low16Only = true;
    formula = text.substr(0, suffix);
  }
  std::optional<Expr> expr = Expr::parse(formula, kRegisterVars, error);
  if (!expr)
    return std::nullopt;
  result.expr = std::move(*expr);
  return result;
}

//===----------------------------------------------------------------------===//
// Element -> register formulas
//===----------------------------------------------------------------------===//

/// Where the listing's element->register formulas put one element, once
/// evaluated. Ranges are inclusive.
struct ResolvedLocation {
  long gprLow = 0, gprHigh = 0;  // differ only for 64-bit elements
  long bitLow = 0, bitHigh = 31; // bits within gprLow
  std::vector<long> lanes;       // every lane holding a copy
};

/// One operand's "X[..][..] GPR:" and "X[..][..] Lane:" pair. Parsed so the
/// tests can cross-check the register->element formulas against the forward
/// direction, since the listing itself does not guarantee they agree.
struct ElementLocation {
  std::string gprText, laneText;
  /// GPR range; equal unless written "[hi : lo]" for a 64-bit element.
  Expr gprHigh, gprLow;
  /// Present for "gpr.[hi : lo]": an element narrower than the GPR.
  std::optional<Expr> bitHigh, bitLow;
  /// "i and i+16" and "i, i+16, i+32, and i+48" list replicated lanes.
  std::vector<Expr> lanes;

  bool parseGpr(std::string_view text, std::string &error);
  bool parseLanes(std::string_view text, std::string &error);

  /// Evaluates every formula for element (i, j, k) of \p block; operands
  /// ignore the coordinate they do not use.
  std::optional<ResolvedLocation> resolve(long i, long j, long k,
                                          long block = 0) const;
};

inline bool ElementLocation::parseGpr(std::string_view text,
                                      std::string &error) {
  text = detail::trim(text);
  gprText = std::string(text);
  std::optional<Expr> high, low;
  // "[2*floor(i / 4)+1 : 2*floor(i / 4)]": a 64-bit element in a GPR pair.
  if (std::optional<std::string_view> body = detail::bracketBody(text)) {
    if (!detail::parseRange(*body, kElementVars, high, low, error))
      return false;
    gprHigh = std::move(*high);
    gprLow = std::move(*low);
    return true;
  }
  // "floor(k / 2).[16*(k % 2)+15 : 16*(k % 2)]": part of one GPR.
  std::string_view gpr = text;
  std::size_t suffix = detail::findTopLevel(text, ".[");
  if (suffix != std::string_view::npos) {
    std::optional<std::string_view> body =
        detail::bracketBody(text.substr(suffix + 1));
    if (!body) {
      error = "malformed bit range in '" + gprText + "'";
      return false;
    }
    if (!detail::parseRange(*body, kElementVars, bitHigh, bitLow, error))
      return false;
    gpr = text.substr(0, suffix);
  }
  std::optional<Expr> index = Expr::parse(gpr, kElementVars, error);
  if (!index)
    return false;
  gprHigh = *index;
  gprLow = std::move(*index);
  return true;
}

inline bool ElementLocation::parseLanes(std::string_view text,
                                        std::string &error) {
  text = detail::trim(text);
  laneText = std::string(text);
  lanes.clear();
  // Split "a, b, and c" and "a and b" into their items.
  std::vector<std::string_view> items;
  while (true) {
    std::size_t comma = detail::findTopLevel(text, ",");
    std::string_view piece = detail::trim(text.substr(0, comma));
    if (detail::startsWith(piece, "and "))
      piece.remove_prefix(4);
    std::size_t word = detail::findTopLevel(piece, " and ");
    while (word != std::string_view::npos) {
      items.push_back(piece.substr(0, word));
      piece.remove_prefix(word + 5);
      word = detail::findTopLevel(piece, " and ");
    }
    items.push_back(piece);
    if (comma == std::string_view::npos)
      break;
    text.remove_prefix(comma + 1);
  }
  for (std::string_view item : items) {
    std::optional<Expr> lane = Expr::parse(item, kElementVars, error);
    if (!lane)
      return false;
    lanes.push_back(std::move(*lane));
  }
  return true;
}

inline std::optional<ResolvedLocation>
ElementLocation::resolve(long i, long j, long k, long block) const {
  Bindings vars;
  vars.set(Var::I, i).set(Var::J, j).set(Var::K, k).set(Var::Block, block);
  ResolvedLocation result;
  std::optional<long> high = gprHigh.evaluate(vars);
  std::optional<long> low = gprLow.evaluate(vars);
  if (!high || !low)
    return std::nullopt;
  result.gprHigh = *high;
  result.gprLow = *low;
  if (bitHigh && bitLow) {
    high = bitHigh->evaluate(vars);
    low = bitLow->evaluate(vars);
    if (!high || !low)
      return std::nullopt;
    result.bitHigh = *high;
    result.bitLow = *low;
  }
  for (const Expr &lane : lanes) {
    std::optional<long> value = lane.evaluate(vars);
    if (!value)
      return std::nullopt;
    result.lanes.push_back(*value);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Listing
//===----------------------------------------------------------------------===//

/// Everything a listing says about one wave size.
struct WaveMapping {
  unsigned waveSize = 64; // 64 for CDNA; 32 or 64 for RDNA
  // "GPRs required for A" etc. from the matching register usage section.
  unsigned gprsA = 0, gprsB = 0, gprsC = 0, gprsD = 0;
  // Register -> element: A is (i, k), B is (k, j), C and D are (i, j).
  ElementExpr aRow, aK, bK, bCol, cRow, cCol;
  // Present when the listing has "A block:" etc. (CDNA only).
  std::optional<ElementExpr> aBlock, bBlock, cBlock;
  // Element -> register, from the "matrix element to register" section.
  ElementLocation aLocation, bLocation, cLocation;
};

struct Listing {
  std::string architecture; // "CDNA3", "RDNA4", ...
  std::string instruction;  // lower case, e.g. "v_mfma_f32_32x32x8_f16"
  unsigned m = 0, n = 0, k = 0, blocks = 1;
  /// False for the "is not supported in the requested architecture" files;
  /// those have no dimensions, types or waves.
  bool supported = true;
  /// The instructions an unsupported listing offers instead.
  std::vector<std::string> availableInstructions;
  // Text after "Src0:", "Src1:", "Src2:" and "Vdst:".
  std::string srcTypeA, srcTypeB, srcTypeC, dstType;
  std::vector<WaveMapping> waves; // ascending wave size: 64, or 32 then 64

  const WaveMapping *findWave(unsigned waveSize) const {
    for (const WaveMapping &wave : waves)
      if (wave.waveSize == waveSize)
        return &wave;
    return nullptr;
  }
};

/// Holds a listing, or says why there is none.
struct ParseResult {
  std::optional<Listing> listing;
  std::string error;

  explicit operator bool() const { return listing.has_value(); }
};

namespace detail {

/// Reads the listing format: "Key: value" lines grouped under section
/// headers ("Register usage:", "Wave32 register usage:", ...). Keys the tests
/// do not need are skipped, but inside the mapping sections every key must be
/// a known one, because an unknown key means the format changed.
class ListingParser {
public:
  explicit ListingParser(std::string_view text) { splitLines(text); }

  ParseResult run() {
    ParseResult result;
    bool ok = isUnsupportedListing() ? parseUnsupported() : parseSupported();
    if (ok)
      result.listing = std::move(listing);
    else
      result.error = error;
    return result;
  }

private:
  enum class Section { Other, Dimensions, Usage, DataTypes, ToElement, ToReg };

  struct Line {
    unsigned number;
    unsigned indent;
    std::string_view text; // trimmed
  };

  /// A formula's text and line, kept until all sections are read.
  struct Formula {
    unsigned line;
    std::string text;
  };

  /// The raw contents of one wave size's sections.
  struct WaveDraft {
    std::map<std::string, unsigned> gprs;     // "A" .. "D"
    std::map<std::string, Formula> toElement; // "A i", "C or D block", ...
    std::map<std::string, Formula> toReg;     // "A[i][k] GPR", ...
  };

  void splitLines(std::string_view text) {
    unsigned number = 0;
    while (!text.empty()) {
      std::size_t end = text.find('\n');
      std::string_view raw = text.substr(0, end);
      text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
      ++number;
      std::string_view trimmed = trim(raw);
      if (trimmed.empty())
        continue;
      unsigned indent = static_cast<unsigned>(raw.find(trimmed.front()));
      lines.push_back({number, indent, trimmed});
    }
  }

  /// Reports \p message, prefixed by the line it concerns; line 0 stands for
  /// problems with the listing as a whole, such as a missing section.
  bool fail(unsigned line, std::string message) {
    error = line ? "line " + std::to_string(line) + ": " + std::move(message)
                 : std::move(message);
    return false;
  }

  bool isUnsupportedListing() const {
    return !lines.empty() && startsWith(lines.front().text, "Instruction '") &&
           lines.front().text.find("is not supported") !=
               std::string_view::npos;
  }

  /// "Instruction 'x' is not supported ..." then "Available instructions in
  /// the RDNA3 architecture:" and one instruction per line.
  bool parseUnsupported() {
    std::string_view first = lines.front().text;
    std::size_t open = first.find('\'');
    std::size_t close = first.find('\'', open + 1);
    if (close == std::string_view::npos)
      return fail(lines.front().number, "unterminated instruction name");
    listing.instruction = toLower(first.substr(open + 1, close - open - 1));
    listing.supported = false;
    constexpr std::string_view prefix = "Available instructions in the ";
    for (std::size_t index = 1; index < lines.size(); ++index) {
      std::string_view text = lines[index].text;
      if (startsWith(text, prefix)) {
        text.remove_prefix(prefix.size());
        listing.architecture = std::string(text.substr(0, text.find(' ')));
      } else if (lines[index].indent > 0) {
        listing.availableInstructions.emplace_back(text);
      }
    }
    return true;
  }

  /// Splits "key: value" at the first ": " so that values such as
  /// "[16*(k % 2)+15 : 16*(k % 2)]" and keys such as "OPSEL[1:0] supported"
  /// both survive. A trailing ':' with no value marks a section header.
  static bool splitKeyValue(std::string_view text, std::string_view &key,
                            std::string_view &value) {
    std::size_t colon = text.find(": ");
    if (colon != std::string_view::npos) {
      key = trim(text.substr(0, colon));
      value = trim(text.substr(colon + 2));
      return true;
    }
    if (!text.empty() && text.back() == ':') {
      key = trim(text.substr(0, text.size() - 1));
      value = {};
      return true;
    }
    return false;
  }

  /// Classifies a header. CDNA headers have no "WaveNN " prefix: MFMA only
  /// runs in wave64.
  static Section classify(std::string_view header, unsigned &waveSize) {
    std::string lower = toLower(header);
    std::string_view rest = lower;
    waveSize = 64;
    if (startsWith(rest, "wave")) {
      std::size_t space = rest.find(' ');
      std::optional<unsigned> size;
      if (space != std::string_view::npos)
        size = parseUnsigned(rest.substr(4, space - 4));
      if (size) {
        waveSize = *size;
        rest.remove_prefix(space + 1);
      }
    }
    if (rest == "matrix dimensions")
      return Section::Dimensions;
    if (rest == "register usage")
      return Section::Usage;
    if (rest == "register data types")
      return Section::DataTypes;
    if (rest == "register to matrix element mapping with no modifiers")
      return Section::ToElement;
    if (rest == "matrix element to register mapping with no modifiers")
      return Section::ToReg;
    return Section::Other;
  }

  bool parseSupported() {
    Section section = Section::Other;
    unsigned waveSize = 64;
    for (const Line &line : lines) {
      std::string_view key, value;
      if (!splitKeyValue(line.text, key, value))
        return fail(line.number, "expected 'key: value', got '" +
                                     std::string(line.text) + "'");
      if (line.indent == 0) {
        section = Section::Other;
        if (!value.empty() && !parseTopLevel(key, value))
          return false;
        continue;
      }
      if (value.empty()) {
        section = classify(key, waveSize);
        continue;
      }
      if (!parseEntry(section, waveSize, line, key, value))
        return false;
    }
    return finish();
  }

  bool parseTopLevel(std::string_view key, std::string_view value) {
    if (key == "Architecture")
      listing.architecture = std::string(value);
    else if (key == "Instruction")
      listing.instruction = toLower(value);
    return true;
  }

  bool parseEntry(Section section, unsigned waveSize, const Line &line,
                  std::string_view key, std::string_view value) {
    switch (section) {
    case Section::Dimensions:
      return parseDimension(line, key, value);
    case Section::Usage:
      return parseUsage(drafts[waveSize], line, key, value);
    case Section::DataTypes:
      parseDataType(key, value);
      return true;
    case Section::ToElement:
      return recordFormula(drafts[waveSize].toElement, kToElementKeys, line,
                           std::string(key), value);
    case Section::ToReg:
      return recordFormula(drafts[waveSize].toReg, kToRegKeys, line,
                           withoutBlock(key), value);
    case Section::Other:
      return true;
    }
    return true;
  }

  bool parseDimension(const Line &line, std::string_view key,
                      std::string_view value) {
    unsigned *field = key == "M"        ? &listing.m
                      : key == "N"      ? &listing.n
                      : key == "K"      ? &listing.k
                      : key == "blocks" ? &listing.blocks
                                        : nullptr;
    if (!field)
      return true;
    std::optional<unsigned> number = parseUnsigned(value);
    if (!number || *number == 0)
      return fail(line.number, "bad dimension '" + std::string(value) + "'");
    *field = *number;
    return true;
  }

  bool parseUsage(WaveDraft &draft, const Line &line, std::string_view key,
                  std::string_view value) {
    constexpr std::string_view prefix = "GPRs required for ";
    if (!startsWith(key, prefix))
      return true;
    std::optional<unsigned> count = parseUnsigned(value);
    if (!count)
      return fail(line.number, "bad GPR count '" + std::string(value) + "'");
    draft.gprs[std::string(key.substr(prefix.size()))] = *count;
    return true;
  }

  void parseDataType(std::string_view key, std::string_view value) {
    std::string *field = key == "Src0"   ? &listing.srcTypeA
                         : key == "Src1" ? &listing.srcTypeB
                         : key == "Src2" ? &listing.srcTypeC
                         : key == "Vdst" ? &listing.dstType
                                         : nullptr;
    if (field)
      *field = std::string(value);
  }

  // Every key a mapping section may contain; the "block" ones are CDNA only.
  static constexpr std::array<std::string_view, 9> kToElementKeys = {
      "A i",     "A k",      "A block",  "B j",         "B k",
      "B block", "C or D i", "C or D j", "C or D block"};
  static constexpr std::array<std::string_view, 6> kToRegKeys = {
      "A[i][k] GPR",  "A[i][k] Lane",     "B[k][j] GPR",
      "B[k][j] Lane", "C or D[i][j] GPR", "C or D[i][j] Lane"};

  /// CDNA writes "A[i][k].block GPR", RDNA "A[i][k] GPR"; they mean the same
  /// for a single block.
  static std::string withoutBlock(std::string_view key) {
    std::string result(key);
    std::size_t pos = result.find(".block");
    if (pos != std::string::npos)
      result.erase(pos, 6);
    return result;
  }

  template <std::size_t N>
  bool recordFormula(std::map<std::string, Formula> &formulas,
                     const std::array<std::string_view, N> &known,
                     const Line &line, std::string key,
                     std::string_view value) {
    bool isKnown = false;
    for (std::string_view name : known)
      isKnown |= key == name;
    if (!isKnown)
      return fail(line.number, "unexpected mapping key '" + key + "'");
    if (!formulas.emplace(key, Formula{line.number, std::string(value)}).second)
      return fail(line.number, "duplicate mapping key '" + key + "'");
    return true;
  }

  /// Checks that everything needed was present and parses the formulas.
  bool finish() {
    if (listing.architecture.empty() || listing.instruction.empty())
      return fail(0, "missing 'Architecture:' or 'Instruction:'");
    if (!listing.m || !listing.n || !listing.k)
      return fail(0, "missing matrix dimensions");
    if (listing.srcTypeA.empty() || listing.srcTypeB.empty() ||
        listing.srcTypeC.empty() || listing.dstType.empty())
      return fail(0, "missing register data types");
    if (drafts.empty())
      return fail(0, "no register mapping sections");
    // std::map iterates in ascending wave size: 32 before 64.
    for (const auto &[waveSize, draft] : drafts) {
      WaveMapping wave;
      wave.waveSize = waveSize;
      if (!buildWave(draft, wave))
        return false;
      listing.waves.push_back(std::move(wave));
    }
    return true;
  }

  std::string waveLabel(unsigned waveSize) const {
    return "wave" + std::to_string(waveSize) + ": ";
  }

  bool buildWave(const WaveDraft &draft, WaveMapping &wave) {
    std::string label = waveLabel(wave.waveSize);
    const std::pair<const char *, unsigned *> counts[] = {{"A", &wave.gprsA},
                                                          {"B", &wave.gprsB},
                                                          {"C", &wave.gprsC},
                                                          {"D", &wave.gprsD}};
    for (const auto &[name, field] : counts) {
      auto it = draft.gprs.find(name);
      if (it == draft.gprs.end())
        return fail(0, label + "missing 'GPRs required for " + name + "'");
      *field = it->second;
    }
    return buildToElement(draft, wave) && buildToReg(draft, wave);
  }

  bool buildToElement(const WaveDraft &draft, WaveMapping &wave) {
    std::string label = waveLabel(wave.waveSize);
    const std::pair<const char *, ElementExpr *> required[] = {
        {"A i", &wave.aRow},      {"A k", &wave.aK},
        {"B k", &wave.bK},        {"B j", &wave.bCol},
        {"C or D i", &wave.cRow}, {"C or D j", &wave.cCol}};
    for (const auto &[key, field] : required) {
      auto it = draft.toElement.find(key);
      if (it == draft.toElement.end())
        return fail(0, label + "missing '" + key + "' formula");
      std::optional<ElementExpr> expr = parseElementExpr(key, it->second);
      if (!expr)
        return false;
      *field = std::move(*expr);
    }
    const std::pair<const char *, std::optional<ElementExpr> *> optional[] = {
        {"A block", &wave.aBlock},
        {"B block", &wave.bBlock},
        {"C or D block", &wave.cBlock}};
    for (const auto &[key, field] : optional) {
      auto it = draft.toElement.find(key);
      if (it == draft.toElement.end())
        continue;
      *field = parseElementExpr(key, it->second);
      if (!*field)
        return false;
    }
    return true;
  }

  std::optional<ElementExpr> parseElementExpr(const char *key,
                                              const Formula &formula) {
    std::string message;
    std::optional<ElementExpr> expr = ElementExpr::parse(formula.text, message);
    if (!expr)
      fail(formula.line,
           "cannot parse '" + std::string(key) + "' formula: " + message);
    return expr;
  }

  bool buildToReg(const WaveDraft &draft, WaveMapping &wave) {
    std::string label = waveLabel(wave.waveSize);
    const std::pair<const char *, ElementLocation *> operands[] = {
        {"A[i][k]", &wave.aLocation},
        {"B[k][j]", &wave.bLocation},
        {"C or D[i][j]", &wave.cLocation}};
    for (const auto &[name, location] : operands) {
      std::string gprKey = std::string(name) + " GPR";
      std::string laneKey = std::string(name) + " Lane";
      auto gpr = draft.toReg.find(gprKey);
      auto lane = draft.toReg.find(laneKey);
      if (gpr == draft.toReg.end() || lane == draft.toReg.end())
        return fail(0, label + "missing '" + gprKey + "' or '" + laneKey +
                           "' formula");
      std::string message;
      if (!location->parseGpr(gpr->second.text, message))
        return fail(gpr->second.line,
                    "cannot parse '" + gprKey + "' formula: " + message);
      if (!location->parseLanes(lane->second.text, message))
        return fail(lane->second.line,
                    "cannot parse '" + laneKey + "' formula: " + message);
    }
    return true;
  }

  std::vector<Line> lines;
  std::map<unsigned, WaveDraft> drafts;
  Listing listing;
  std::string error;
};

} // namespace detail

/// Parses a listing already in memory.
inline ParseResult parseListingText(const std::string &text) {
  return detail::ListingParser(text).run();
}

/// Reads and parses the listing at \p path.
inline ParseResult parseListingFile(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    ParseResult result;
    result.error = "cannot open '" + path + "'";
    return result;
  }
  std::ostringstream contents;
  contents << stream.rdbuf();
  ParseResult result = parseListingText(contents.str());
  if (!result)
    result.error = path + ": " + result.error;
  return result;
}

} // namespace tessel::calc

#endif // TESSEL_UNITTESTS_TARGET_CALCULATORLISTING_H
