//===- KeyWindow.h - The keys an attention query sees -----------*- C++ -*-===//
//
// Attention masks as one rule: query i of Sq sits at key position
// p = i + Skv - Sq (masks are aligned to the bottom-right corner) and sees
// the keys j with p - left <= j <= p + right, a negative bound leaving that
// side open. Causal attention is right = 0; local (sliding-window)
// attention bounds the left side too. The compiler's loop bounds, the
// performance model's work counts and the host reference all use it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_KEYWINDOW_H
#define TESSEL_SUPPORT_KEYWINDOW_H

#include <algorithm>
#include <cstdint>

namespace tessel {

struct KeyWindow {
  int64_t left = -1, right = -1; // negative: unbounded

  bool hasLeft() const { return left >= 0; }
  bool hasRight() const { return right >= 0; }
  bool isFull() const { return !hasLeft() && !hasRight(); }

  /// The keys [begin, end) query `i` sees, clamped to [0, seqKV).
  int64_t begin(int64_t i, int64_t seqQ, int64_t seqKV) const {
    int64_t position = i + seqKV - seqQ;
    return hasLeft() ? std::clamp<int64_t>(position - left, 0, seqKV) : 0;
  }
  int64_t end(int64_t i, int64_t seqQ, int64_t seqKV) const {
    int64_t position = i + seqKV - seqQ;
    return hasRight() ? std::clamp<int64_t>(position + right + 1, 0, seqKV)
                      : seqKV;
  }
  /// How many keys query `i` sees.
  int64_t visible(int64_t i, int64_t seqQ, int64_t seqKV) const {
    return std::max<int64_t>(0, end(i, seqQ, seqKV) - begin(i, seqQ, seqKV));
  }
};

} // namespace tessel

#endif // TESSEL_SUPPORT_KEYWINDOW_H
