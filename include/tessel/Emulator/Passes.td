//===- Passes.td - Emulator passes ----------------------------*- tablegen -*-===//

#ifndef TESSEL_EMULATOR_PASSES_TD
#define TESSEL_EMULATOR_PASSES_TD

include "mlir/Pass/PassBase.td"

def TesselLowerToEmulatorPass
    : Pass<"tessel-lower-to-emulator", "::mlir::ModuleOp"> {
  let summary = "Turn gpu.module kernels in the LLVM/ROCDL dialects into "
                "host code for the SIMT emulator";
  let description = [{
    Rewrites every `gpu.module` whose kernels are already in the LLVM and
    ROCDL dialects (what `tessel-to-rocdl` produces, the module the AMDGPU
    backend compiles) into a `builtin.module` of the same name that the host
    can JIT-compile and the emulator's SIMT runtime can run lane by lane:

    * work-item and workgroup ids, sizes, `mbcnt` and the wave size become
      calls into the runtime, which knows the current lane;
    * barriers and wave collectives (MFMA/WMMA, `ds_bpermute`,
      `ds_swizzle`, DPP, `readlane`, `readfirstlane`, `ballot`) become calls
      that suspend the lane until its workgroup or wave joins them, with
      their operands passed through stack slots;
    * LDS globals (`addr_space = 3`) get offsets in the workgroup's LDS
      buffer (each function's total is its `tessel.emu.lds_bytes`
      attribute) and their addresses come from the runtime; buffer resources and buffer
      loads/stores go through the runtime, which honours `num_records`;
    * every load, store and atomic on global, flat or LDS memory is preceded
      by a call that checks its bounds and the alignment it assumes (its
      `alignment`, else the type's ABI alignment) and records it for race
      detection; private allocas move to the host's address space;
    * an integer division or remainder whose divisor is not a constant that
      cannot fault first branches, on a zero divisor or (signed) the
      smallest value divided by -1, to a runtime call that reports the
      fault: LLVM leaves both undefined and the host traps on them;
    * barriers and guarded divisions pass the index of their source location
      in the module's `tessel.emu.sites` table (barriers first, in order);
    * scheduling hints (`s_waitcnt`, `sched.barrier`, `s_setprio`, ...) are
      dropped.

    An op the emulator does not model is an error naming it.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"gfx942\"",
           "Chip whose semantics (wave size, fp8 format, LDS size) to emulate">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TESSEL_EMULATOR_PASSES_TD
