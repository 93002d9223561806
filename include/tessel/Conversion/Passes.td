//===- Passes.td - tessel conversion passes -------------------*- tablegen -*-===//

#ifndef TESSEL_CONVERSION_PASSES_TD
#define TESSEL_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TesselLowerToGPUPass : Pass<"tessel-lower-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower tile programs (L1) to per-lane GPU kernels (L2)";
  let description = [{
    Moves every tile program (a `func.func` with `tessel.workgroup_size`)
    into a `gpu.func` kernel of the `gpu.module @tessel_kernels` and
    distributes it: each tile becomes the vector of the values the current
    lane holds in its layout (element r of the vector is register r), each
    op the per-lane code of its layout's linear map:

    * `tessel.load`/`tessel.store`: vector loads and stores along the
      memref's contiguous dimension as wide as the layout and the sizes
      allow (16 bytes at most), masked by the memref bounds (loads read a
      clamped in-bounds address and select zero, stores are predicated);
      loads of static kernel arguments and their masked stores go through
      buffer resources instead (a masked-off vector is sent past the end:
      the hardware reads zeros and drops stores, no branch), and an
      in-bounds load marked `tessel.constant_row_offsets` (a matmul operand
      loaded in runs along K across rows) gives the rows of a run one
      shared index and a constant `indexOffset` each; one marked
      `tessel.scalar_origin` (attention's key and value blocks) also goes
      through a buffer resource when it reads a transposed view of an
      argument, with the tile origin's offset in the instruction's SGPR
      offset and the rows' constant offsets off one lane offset;
    * `tessel.local_alloc`: workgroup memory; `tessel.local_store`/
      `tessel.local_load`: vector LDS accesses at the swizzled offsets, a
      replicated value written by one lane only;
    * `tessel.dot`: one `amdgpu.mfma` per instruction tile and K step; in a
      pipelined K loop, `rocdl.sched.group.barrier`s ask the backend to
      interleave the step's memory instructions with the MFMAs (over the
      first half of them where a workgroup of at most four waves allows);
      in a loop marked `tessel.reads_in_place`, each of the next step's LDS
      reads goes after the last MFMA reading the registers it fills, the
      step's global loads, LDS stores and barrier after the MFMAs of its
      first half, and `rocdl.sched.barrier`s between MFMAs (only ALU
      instructions may cross) pin that order;
    * the zero f32 or i32 accumulator a kernel's top-level K loop starts
      from, on MFMA chips: a chain of 32x32x8 f16 MFMAs of zero operands,
      one per 16 registers, between the prologue's first global loads and
      its first LDS store (fenced by `amdgpu.sched_barrier`s): the idle
      matrix pipe writes it in the loads' shadow instead of VALU moves
      after them;
    * `tessel.convert_layout`: nothing for equal layouts, else a round trip
      through LDS;
    * `arith`/`math` on tiles: the same ops on the vectors (`exp2` and
      `log2` marked `afn`: the bare `v_exp_f32`/`v_log_f32`); on chips
      without a bf16 conversion instruction, `arith.truncf` from f32 to bf16
      becomes integer rounding to nearest even (a NaN becomes 0x7fc0);
    * `scf.for` marked `tessel.tile_loop` (a stream-K workgroup's loop over
      its tiles): the LLVM loop annotation `licm.disable`, so that no lane
      address of a tile's code is hoisted out of it to live through every
      tile's inner loops.

    A kernel with `tessel.waves_per_simd` gets `rocdl.waves_per_eu` (the
    backend's `amdgpu-waves-per-eu`): the occupancy its grid counts on.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"gfx942\"", "Target chip">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::amdgpu::AMDGPUDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::ROCDL::ROCDLDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // TESSEL_CONVERSION_PASSES_TD
