//===- Plot.cpp - A performance report as an SVG picture ------------------===//
//
// Two panels: the kernel on the chip's roofline (log-log, TFLOP/s over
// FLOP per HBM byte, with the matrix peak of its type and the HBM, L2 and
// last-level-cache bandwidth ceilings), and one stacked bar per loop (and
// one for the whole kernel) showing where the cycles go. Plain SVG 1.1, no
// script, no external resources, so it renders in a browser or a review tool.
//
//===----------------------------------------------------------------------===//

#include "tessel/Perf/Model.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace tessel;

namespace {
constexpr double kWidth = 960, kHeight = 440;
// The roofline panel.
constexpr double kPlotLeft = 70, kPlotTop = 40, kPlotWidth = 430,
                 kPlotHeight = 340;
// The bars panel.
constexpr double kBarsLeft = 580, kBarsTop = 80, kBarWidth = 260,
                 kBarHeight = 22, kBarGap = 16;

/// A fixed color per cycle source, so pictures can be compared.
llvm::StringRef colorOf(llvm::StringRef category) {
  static const llvm::StringMap<llvm::StringRef> colors = {
      {"matrix", "#2e7d32"},
      {"valu", "#f9a825"},
      {"salu", "#8d6e63"},
      {"lds-issue", "#29b6f6"},
      {"global-issue", "#5c6bc0"},
      {"wait-global", "#c62828"},
      {"wait-lds", "#0277bd"},
      {"wait-scalar", "#ad1457"},
      {"barrier", "#6a1b9a"},
      {"idle-simds", "#9e9e9e"},
      {"grid-quantization", "#bdbdbd"},
      {"outside-loops", "#e0e0e0"}};
  auto found = colors.find(category);
  return found == colors.end() ? "#757575" : found->second;
}

std::string escape(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// "0.01", "0.1", "1", "10", ... for a power of ten.
std::string decadeLabel(double decade) {
  if (decade >= 1)
    return std::to_string(int64_t(std::llround(decade)));
  int digits = int(std::llround(-std::log10(decade)));
  return "0." + std::string(digits - 1, '0') + "1";
}

/// Log-log axes of the roofline panel.
struct Axes {
  double minIntensity = 0.1, maxIntensity = 1e4; // FLOP/byte
  double minTflops = 0.1, maxTflops = 1e4;

  double x(double intensity) const {
    return kPlotLeft + kPlotWidth * std::log10(intensity / minIntensity) /
                           std::log10(maxIntensity / minIntensity);
  }
  double y(double tflops) const {
    return kPlotTop + kPlotHeight -
           kPlotHeight * std::log10(tflops / minTflops) /
               std::log10(maxTflops / minTflops);
  }
  double clampTflops(double tflops) const {
    return std::clamp(tflops, minTflops, maxTflops);
  }
};

void drawAxes(llvm::raw_ostream &os, const Axes &axes) {
  os << llvm::formatv("<rect x='{0}' y='{1}' width='{2}' height='{3}' "
                      "fill='none' stroke='#424242'/>\n",
                      kPlotLeft, kPlotTop, kPlotWidth, kPlotHeight);
  for (double decade = axes.minIntensity; decade <= axes.maxIntensity * 1.01;
       decade *= 10)
    os << llvm::formatv("<line x1='{0:F1}' y1='{1}' x2='{0:F1}' y2='{2}' "
                        "stroke='#eeeeee'/><text x='{0:F1}' y='{3}' "
                        "font-size='11' text-anchor='middle'>{4}</text>\n",
                        axes.x(decade), kPlotTop, kPlotTop + kPlotHeight,
                        kPlotTop + kPlotHeight + 14, decadeLabel(decade));
  for (double decade = axes.minTflops; decade <= axes.maxTflops * 1.01;
       decade *= 10)
    os << llvm::formatv("<line x1='{0}' y1='{1:F1}' x2='{2}' y2='{1:F1}' "
                        "stroke='#eeeeee'/><text x='{3}' y='{4:F1}' "
                        "font-size='11' text-anchor='end'>{5}</text>\n",
                        kPlotLeft, axes.y(decade), kPlotLeft + kPlotWidth,
                        kPlotLeft - 4, axes.y(decade) + 4, decadeLabel(decade));
  os << llvm::formatv("<text x='{0}' y='{1}' font-size='12' "
                      "text-anchor='middle'>FLOP per HBM byte</text>\n",
                      kPlotLeft + kPlotWidth / 2, kPlotTop + kPlotHeight + 32);
  os << llvm::formatv("<text x='16' y='{0}' font-size='12' "
                      "text-anchor='middle' transform='rotate(-90 16 {0})'>"
                      "TFLOP/s</text>\n",
                      kPlotTop + kPlotHeight / 2);
}

/// A bandwidth ceiling: TFLOP/s = TB/s x FLOP/byte, up to the matrix peak;
/// its label sits on the line where it reaches `labelAt` TFLOP/s.
void drawBandwidthCeiling(llvm::raw_ostream &os, const Axes &axes,
                          double terabytesPerSecond, double peak,
                          double labelAt, llvm::StringRef label,
                          llvm::StringRef dash) {
  double ridge = peak / terabytesPerSecond;
  double start =
      std::max(axes.minIntensity, axes.minTflops / terabytesPerSecond);
  os << llvm::formatv("<line x1='{0:F1}' y1='{1:F1}' x2='{2:F1}' "
                      "y2='{3:F1}' stroke='#1565c0' stroke-dasharray='{4}'/>\n",
                      axes.x(start),
                      axes.y(axes.clampTflops(terabytesPerSecond * start)),
                      axes.x(std::min(ridge, axes.maxIntensity)),
                      axes.y(axes.clampTflops(peak)), dash);
  double labelIntensity = std::clamp(labelAt / terabytesPerSecond,
                                     axes.minIntensity, axes.maxIntensity);
  os << llvm::formatv("<text x='{0:F1}' y='{1:F1}' font-size='11' "
                      "fill='#1565c0'>{2}</text>\n",
                      axes.x(labelIntensity) + 6,
                      axes.y(axes.clampTflops(labelAt)) + 4, escape(label));
}

void drawRoofline(llvm::raw_ostream &os, const PerfReport &report,
                  const Chip &chip, const ModelParameters &parameters) {
  Axes axes;
  double peak = chip.peakMatrixTeraOps(report.work.type) *
                (report.clockMHz / (chip.clockGHz * 1000));
  axes.maxTflops = std::pow(10, std::ceil(std::log10(std::max(peak, 1.0))));
  axes.minTflops = axes.maxTflops / 1e5;
  drawAxes(os, axes);
  // The matrix peak of the kernel's type at the report's clock.
  os << llvm::formatv("<line x1='{0}' y1='{1:F1}' x2='{2}' y2='{1:F1}' "
                      "stroke='#2e7d32' stroke-width='2'/><text x='{3}' "
                      "y='{4:F1}' font-size='11' text-anchor='end' "
                      "fill='#2e7d32'>{5} matrix peak {6:F0} TFLOP/s at {7:F0} "
                      "MHz</text>\n",
                      kPlotLeft, axes.y(peak), kPlotLeft + kPlotWidth,
                      kPlotLeft + kPlotWidth - 4, axes.y(peak) - 5,
                      stringifyMatrixType(report.work.type), peak,
                      report.clockMHz);
  double hbm = chip.memoryBandwidthTBs;
  // Labels a decade apart so they never overlap.
  drawBandwidthCeiling(os, axes, hbm, peak, peak / 1e2,
                       llvm::formatv("HBM {0:F1} TB/s", hbm).str(), "none");
  drawBandwidthCeiling(
      os, axes, hbm * parameters.hbmEfficiency, peak, peak / 1e3,
      llvm::formatv("HBM achievable ({0:F0}%)", 100 * parameters.hbmEfficiency)
          .str(),
      "4 3");
  double l2 = parameters.l2BytesPerClockPerCU * chip.numCUs * report.clockMHz *
              1e6 / 1e12;
  drawBandwidthCeiling(os, axes, l2, peak, peak / 1e1,
                       llvm::formatv("L2 {0:F1} TB/s (assumed)", l2).str(),
                       "1 3");
  if (double llc = chip.lastLevelCacheBandwidthTBs; llc > 0)
    drawBandwidthCeiling(
        os, axes, llc, peak, peak / std::pow(10, 1.5),
        llvm::formatv("last-level cache {0:F1} TB/s", llc).str(), "8 3");
  if (report.work.flops <= 0 || report.work.uniqueBytes <= 0 ||
      report.tflops <= 0) {
    os << llvm::formatv("<text x='{0}' y='{1}' font-size='12'>no FLOPs or "
                        "bytes given: the kernel is not placed</text>\n",
                        kPlotLeft + 10, kPlotTop + 20);
    return;
  }
  double intensity = std::clamp(report.work.flops / report.work.uniqueBytes,
                                axes.minIntensity, axes.maxIntensity);
  double x = axes.x(intensity), y = axes.y(axes.clampTflops(report.tflops));
  os << llvm::formatv("<circle cx='{0:F1}' cy='{1:F1}' r='6' fill='#d84315'/>"
                      "<text x='{2:F1}' y='{3:F1}' font-size='12' "
                      "fill='#d84315'>{4}: {5:F1} TFLOP/s, {6:F1}% of peak "
                      "(prediction)</text>\n",
                      x, y, std::min(x + 10, kPlotLeft + 150), y + 18,
                      escape(report.kernel), report.tflops,
                      report.percentOfPeak);
}

/// One stacked bar of cycle sources with its label above it.
void drawBar(llvm::raw_ostream &os, double top, llvm::StringRef label,
             llvm::ArrayRef<CycleSource> sources) {
  os << llvm::formatv("<text x='{0}' y='{1:F1}' font-size='11'>{2}</text>\n",
                      kBarsLeft, top - 3, escape(label));
  double x = kBarsLeft;
  for (const CycleSource &source : sources) {
    double width = kBarWidth * std::clamp(source.fraction, 0.0, 1.0);
    if (width <= 0)
      continue;
    width = std::min(width, kBarsLeft + kBarWidth - x);
    os << llvm::formatv("<rect x='{0:F1}' y='{1:F1}' width='{2:F1}' "
                        "height='{3}' fill='{4}'><title>{5} {6:F0}%: "
                        "{7}</title></rect>\n",
                        x, top, width, kBarHeight, colorOf(source.category),
                        escape(source.category), 100 * source.fraction,
                        escape(source.explanation));
    x += width;
  }
  os << llvm::formatv("<rect x='{0}' y='{1:F1}' width='{2}' height='{3}' "
                      "fill='none' stroke='#424242'/>\n",
                      kBarsLeft, top, kBarWidth, kBarHeight);
}

void drawCycleBars(llvm::raw_ostream &os, const PerfReport &report) {
  os << llvm::formatv("<text x='{0}' y='{1}' font-size='13'>Where the "
                      "cycles go</text>\n",
                      kBarsLeft, kBarsTop - 28);
  double top = kBarsTop;
  drawBar(os, top, "whole kernel", report.sources);
  top += kBarHeight + kBarGap;
  for (const LoopReport &loop : report.loops) {
    if (top > kHeight - 120)
      break;
    drawBar(os, top,
            llvm::formatv("loop +{0:x} ({1} instructions, {2:F1}% matrix)",
                          loop.beginAddress, loop.instructions,
                          100 * loop.structuralEfficiency)
                .str(),
            loop.sources);
    top += kBarHeight + kBarGap;
  }
  // A legend of the categories that appear.
  llvm::SmallVector<llvm::StringRef> seen;
  auto note = [&](llvm::ArrayRef<CycleSource> sources) {
    for (const CycleSource &source : sources)
      if (!llvm::is_contained(seen, source.category))
        seen.push_back(source.category);
  };
  note(report.sources);
  for (const LoopReport &loop : report.loops)
    note(loop.sources);
  for (auto [index, category] : llvm::enumerate(seen)) {
    double x = kBarsLeft + (index % 2) * 150;
    double y = top + 8 + (index / 2) * 16;
    os << llvm::formatv("<rect x='{0:F1}' y='{1:F1}' width='10' height='10' "
                        "fill='{2}'/><text x='{3:F1}' y='{4:F1}' "
                        "font-size='11'>{5}</text>\n",
                        x, y, colorOf(category), x + 14, y + 9,
                        escape(category));
  }
}
} // namespace

void tessel::writePerfPlot(llvm::raw_ostream &os, const PerfReport &report,
                           const Chip &chip,
                           const ModelParameters &parameters) {
  os << llvm::formatv("<?xml version='1.0' encoding='UTF-8'?>\n<svg "
                      "xmlns='http://www.w3.org/2000/svg' width='{0}' "
                      "height='{1}' viewBox='0 0 {0} {1}' "
                      "font-family='sans-serif'>\n",
                      kWidth, kHeight);
  os << "<rect width='100%' height='100%' fill='white'/>\n";
  os << llvm::formatv("<text x='{0}' y='22' font-size='14'>{1} on {2}: "
                      "predicted {3:F2} us, structural efficiency {4:F1}%, "
                      "bound by {5} (prediction)</text>\n",
                      kPlotLeft, escape(report.kernel), report.chip,
                      report.predictedSeconds * 1e6,
                      100 * report.structuralEfficiency,
                      escape(report.bindingLimit));
  drawRoofline(os, report, chip, parameters);
  drawCycleBars(os, report);
  os << "</svg>\n";
}
