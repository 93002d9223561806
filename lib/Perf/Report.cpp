//===- Report.cpp - Text and JSON forms of a performance report -----------===//

#include "tessel/Perf/Model.h"

#include "llvm/Support/FormatVariadic.h"

using namespace tessel;

/// "1.23 ms" / "45.6 us".
static std::string formatSeconds(double seconds) {
  if (seconds >= 1e-3)
    return llvm::formatv("{0:F3} ms", seconds * 1e3).str();
  return llvm::formatv("{0:F2} us", seconds * 1e6).str();
}

static void printSources(llvm::raw_ostream &os,
                         llvm::ArrayRef<CycleSource> sources,
                         llvm::StringRef indent) {
  for (const CycleSource &source : sources)
    os << llvm::formatv("{0}{1,5:P0}  {2,-18} {3}\n", indent, source.fraction,
                        source.category, source.explanation);
}

static void printLdsConflicts(llvm::raw_ostream &os, const LoopReport &loop) {
  if (loop.ldsAccesses == 0)
    return;
  os << "    LDS bank conflicts: ";
  if (loop.ldsConflictCyclesPerIteration > 0)
    os << llvm::formatv("{0:F1} extra LDS cycles per wave and iteration "
                        "(worst: {1} at +{2:x}, {3:F1}-way)",
                        loop.ldsConflictCyclesPerIteration,
                        loop.worstConflictMnemonic, loop.worstConflictAddress,
                        loop.worstConflictWays);
  else
    os << "none";
  os << llvm::formatv(" in the {0} of {1} accesses whose addresses follow "
                      "from the work-item ids\n",
                      loop.ldsAccessesDerived, loop.ldsAccesses);
}

void tessel::printPerfReport(llvm::raw_ostream &os, const PerfReport &report) {
  os << llvm::formatv("kernel {0} on {1} at {2} MHz (prediction)\n",
                      report.kernel, report.chip, report.clockMHz);
  os << llvm::formatv("  predicted time        {0}",
                      formatSeconds(report.predictedSeconds));
  if (report.launchGapSeconds > 0)
    os << llvm::formatv(" (after a {0} launch gap behind the plan's previous "
                        "stage)",
                        formatSeconds(report.launchGapSeconds));
  if (report.mergeTailSeconds > 0)
    os << llvm::formatv(" (of which {0}: the merge of the splits, after them)",
                        formatSeconds(report.mergeTailSeconds));
  os << "\n";
  if (report.work.flops > 0 && report.percentOfPeak == 0)
    os << llvm::formatv("  predicted throughput  {0:F1} TFLOP/s\n",
                        report.tflops);
  else if (report.work.flops > 0)
    os << llvm::formatv("  predicted throughput  {0:F1} TFLOP/s, {1:F1} % of "
                        "the {2} peak\n",
                        report.tflops, report.percentOfPeak,
                        stringifyMatrixType(report.work.type));
  os << llvm::formatv("  structural efficiency {0:P1} (matrix pipes busy, "
                      "clock-free)\n",
                      report.structuralEfficiency);
  os << llvm::formatv("  binding limit         {0}\n", report.bindingLimit);
  auto floor = [](double seconds) {
    return seconds > 0 ? formatSeconds(seconds) : std::string("-");
  };
  os << llvm::formatv("  floors                compute {0}, L2 {1}, "
                      "last-level cache {2}, HBM {3}\n",
                      formatSeconds(report.computeSeconds),
                      formatSeconds(report.l2Seconds), floor(report.llcSeconds),
                      floor(report.hbmSeconds));
  if (report.l2FillBytes > 0)
    os << llvm::formatv("  L2 fill               {0:F1} MB of the inputs from "
                        "{1}, {2:F1}x their {3:F1} MB (workgroup i on XCD i "
                        "mod {4}; prediction)\n",
                        report.l2FillBytes / 1e6,
                        report.l2FillFromHbm ? "HBM (no last-level cache)"
                                             : "the last-level cache",
                        report.l2FillBytes / report.operandBytes,
                        report.operandBytes / 1e6, report.xcds);
  os << llvm::formatv(
      "  resources             {0} VGPRs, {1} AGPRs, {2} SGPRs, {3} B LDS, "
      "{4} lanes ({5} waves) per workgroup\n",
      report.usage.archVgprs, report.usage.accVgprs, report.usage.sgprs,
      report.usage.ldsBytes, report.usage.workgroupSize,
      report.wavesPerWorkgroup);
  os << llvm::formatv("  occupancy             {0} waves/SIMD allowed "
                      "(limited by {1}); {2} workgroup(s) per CU (limited "
                      "by {3})\n",
                      report.occupancy.wavesPerSimd, report.occupancy.limiter,
                      report.workgroupsPerCU, report.workgroupsPerCULimit);
  os << llvm::formatv("  placement             {0} of {1} SIMDs busy with {2} "
                      "wave(s) each; {3} workgroups in {4} round(s), grid "
                      "efficiency {5:P1}\n",
                      report.simdsBusy, report.simdsPerCU,
                      report.wavesPerBusySimd, report.workgroups, report.rounds,
                      report.gridEfficiency);
  os << "  where the cycles go:\n";
  printSources(os, report.sources, "    ");
  for (const LoopReport &loop : report.loops) {
    os << llvm::formatv(
        "  loop +{0:x}..+{1:x}: {2} instructions ({3} matrix, {4} VALU, {5} "
        "LDS, {6} global, {7} barrier), {8} iterations ({9})\n",
        loop.beginAddress, loop.endAddress, loop.instructions,
        loop.matrixInstructions, loop.valuInstructions,
        loop.ldsReads + loop.ldsWrites, loop.globalLoads + loop.globalStores,
        loop.barriers, loop.tripCount, loop.tripCountSource);
    os << llvm::formatv(
        "    one wave: {0} clocks per iteration ({1} issue, {2} matrix); "
        "with {3} wave(s) per SIMD{7}: {4} clocks, bound by {5}; matrix pipe "
        "busy {6:P1}\n",
        loop.singleWaveCycles, loop.issueCycles, loop.matrixCyclesPerIteration,
        loop.wavesPerSimd, loop.sharedCycles, loop.limit,
        loop.structuralEfficiency,
        loop.staggered ? " a phase apart (ping-pong)" : "");
    if (loop.matrixPhaseClocks > 0)
      os << llvm::formatv(
          "    phases of a wave, barrier to barrier: matrix {0:F0} clocks "
          "({1:F0} of matrix instructions a phase), softmax {2:F0} clocks; "
          "each runs beside the other wave's opposite phase, the longer "
          "sets the pace\n",
          loop.matrixPhaseClocks,
          loop.matrixCyclesPerIteration * 2 / std::max(1u, loop.barriers),
          loop.softmaxPhaseClocks);
    printLdsConflicts(os, loop);
    printSources(os, loop.sources, "    ");
  }
  for (const std::string &note : report.notes)
    os << "  note: " << note << "\n";
}

static llvm::json::Array sourcesToJSON(llvm::ArrayRef<CycleSource> sources) {
  llvm::json::Array array;
  for (const CycleSource &source : sources)
    array.push_back(llvm::json::Object{{"category", source.category},
                                       {"cycles", source.cycles},
                                       {"fraction", source.fraction},
                                       {"explanation", source.explanation}});
  return array;
}

llvm::json::Value tessel::perfReportToJSON(const PerfReport &report) {
  llvm::json::Array loops;
  for (const LoopReport &loop : report.loops)
    loops.push_back(llvm::json::Object{
        {"begin", int64_t(loop.beginAddress)},
        {"end", int64_t(loop.endAddress)},
        {"instructions", loop.instructions},
        {"matrix_instructions", loop.matrixInstructions},
        {"valu_instructions", loop.valuInstructions},
        {"transcendentals", loop.transcendentals},
        {"lds_reads", loop.ldsReads},
        {"lds_writes", loop.ldsWrites},
        {"global_loads", loop.globalLoads},
        {"global_stores", loop.globalStores},
        {"barriers", loop.barriers},
        {"lds_conflict_cycles", loop.ldsConflictCyclesPerIteration},
        {"lds_accesses", loop.ldsAccesses},
        {"lds_accesses_derived", loop.ldsAccessesDerived},
        {"trip_count", int64_t(loop.tripCount)},
        {"trip_count_source", loop.tripCountSource},
        {"single_wave_cycles", loop.singleWaveCycles},
        {"single_wave_no_latency_cycles", loop.singleWaveNoLatencyCycles},
        {"issue_cycles", loop.issueCycles},
        {"matrix_cycles", loop.matrixCyclesPerIteration},
        {"waves_per_simd", loop.wavesPerSimd},
        {"staggered", loop.staggered},
        {"matrix_phase_cycles", loop.matrixPhaseClocks},
        {"softmax_phase_cycles", loop.softmaxPhaseClocks},
        {"shared_cycles", loop.sharedCycles},
        {"structural_efficiency", loop.structuralEfficiency},
        {"limit", loop.limit},
        {"sources", sourcesToJSON(loop.sources)}});
  llvm::json::Array notes;
  for (const std::string &note : report.notes)
    notes.push_back(note);
  return llvm::json::Object{
      {"kernel", report.kernel},
      {"chip", report.chip},
      {"clock_mhz", report.clockMHz},
      {"prediction", true},
      {"grid", llvm::json::Array{int64_t(report.launch.grid[0]),
                                 int64_t(report.launch.grid[1]),
                                 int64_t(report.launch.grid[2])}},
      {"workgroup_lanes", report.usage.workgroupSize},
      {"flops", report.work.flops},
      {"unique_bytes", report.work.uniqueBytes},
      {"problem_bytes", report.work.problemBytes},
      {"launch_gap_seconds", report.launchGapSeconds},
      {"merge_tail_seconds", report.mergeTailSeconds},
      {"predicted_seconds", report.predictedSeconds},
      {"compute_seconds", report.computeSeconds},
      {"l2_seconds", report.l2Seconds},
      {"hbm_seconds", report.hbmSeconds},
      {"llc_seconds", report.llcSeconds},
      {"l2_fill_bytes", report.l2FillBytes},
      {"operand_bytes", report.operandBytes},
      {"l2_fill_from_hbm", report.l2FillFromHbm},
      {"tflops", report.tflops},
      {"percent_of_peak", report.percentOfPeak},
      {"structural_efficiency", report.structuralEfficiency},
      {"binding_limit", report.bindingLimit},
      {"vgprs", report.usage.archVgprs},
      {"agprs", report.usage.accVgprs},
      {"sgprs", report.usage.sgprs},
      {"lds_bytes", report.usage.ldsBytes},
      {"waves_per_simd_allowed", report.occupancy.wavesPerSimd},
      {"occupancy_limiter", report.occupancy.limiter},
      {"workgroups_per_cu", report.workgroupsPerCU},
      {"workgroups_per_cu_limit", report.workgroupsPerCULimit},
      {"simds_busy", report.simdsBusy},
      {"waves_per_busy_simd", report.wavesPerBusySimd},
      {"workgroups", int64_t(report.workgroups)},
      {"rounds", int64_t(report.rounds)},
      {"grid_efficiency", report.gridEfficiency},
      {"sources", sourcesToJSON(report.sources)},
      {"loops", std::move(loops)},
      {"notes", std::move(notes)}};
}
