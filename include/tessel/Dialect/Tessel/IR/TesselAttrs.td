//===- TesselAttrs.td - tessel attributes -------------------*- tablegen -*-===//

#ifndef TESSEL_DIALECT_TESSEL_IR_TESSELATTRS_TD
#define TESSEL_DIALECT_TESSEL_IR_TESSELATTRS_TD

include "tessel/Dialect/Tessel/IR/TesselDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/TensorEncoding.td"

class Tessel_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tessel_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tessel_ConfigAttr : Tessel_Attr<"Config", "config"> {
  let summary = "Tiling configuration of one kernel";
  let description = [{
    How one workgroup computes its part of the problem:

    * `tile`: the workgroup tile. For `tessel.matmul` it is `[M, N, K]` (rows
      of C, columns of C, and the K step of the main loop); for
      `tessel.attention` it is `[M, N]` (query rows per workgroup and keys per
      inner-loop step).
    * `waves`: how the workgroup's waves split the tile, `[along M, along N]`.
    * `stages`: software pipeline depth of the K loop (1 means no prefetch).
      For `tessel.attention`, 2 loads the next key block into registers
      while the current one computes (one LDS slot, `tessel-pipeline`); 3
      (or 4) also double-buffers K and V^T in LDS: two slots, one barrier
      per key block, the block after next in registers.
    * `instr`: optional matrix instruction mnemonic (for example
      `"v_mfma_f32_32x32x8_bf16"`); chosen by the compiler when absent.
    * `splits`: optional: for `tessel.attention`, the number of workgroups
      the keys of one query block are spread over (split-KV,
      "flash-decoding"); for `tessel.matmul`, the number of workgroups the K
      dimension of one C tile is spread over (split-K, static shapes only;
      each split gets a whole number of K steps). A second kernel combines
      the partial results in a fixed order. 1 (the default) is one pass.
    * `stream_k`: optional (static sizes; no splits): the number of
      workgroups that share the problem's steps evenly (stream-K). For
      `tessel.matmul` (no batch) the steps are all C tiles' K steps: each
      workgroup takes [w T / G, (w + 1) T / G) of the T steps in order, so
      a tile may be cut between workgroups; each piece of a cut tile stores
      its partial accumulator and the last piece to arrive sums them in a
      fixed order. For `tessel.attention` (no sinks, varlen, paged cache or
      packed query heads; no window, or a causal one with seq_q == seq_kv,
      an even number of whole query blocks and N dividing M) the steps are
      all query blocks' key blocks, causal query blocks i and Q - 1 - i
      paired into equal units; the pieces of a cut query block are merged
      by their log-sum-exp. 0 (the default) is one workgroup per C tile or
      query block.
    * `scores_ahead`: optional, `tessel.attention` only: the loop over
      whole key blocks computes the next block's S^T one iteration ahead,
      so that a block's softmax runs under the matrix instructions of the
      next block's first product instead of waiting for its own.
    * `ping_pong`: optional, `tessel.attention` with `scores_ahead` and
      `stages` >= 3 only, on a workgroup of 8 waves (two a SIMD): the loop
      over whole key blocks alternates a softmax phase and a matrix phase
      with a workgroup barrier after each, and the second half of the
      waves runs one phase behind the first (`tessel.phase_barrier`), so
      that each SIMD runs one wave's matrix instructions while its other
      wave computes a softmax. With `stages = 4` K and V^T keep three LDS
      slots and each block's K is read in the softmax phase. A head dim of
      Q/K or of V that the kernel pads pads to at most 128, and the cache
      is neither paged nor varlen, without splits.
    * `unrolled`: optional, `tessel.attention` with `scores_ahead` and
      `stages` >= 3, without `ping_pong` (whose loop gfx950 unrolls by its
      LDS slots anyway): the loop over whole key blocks is unrolled by two,
      a rolled loop after it running a block left over. The next block's
      S^T, computed a block ahead, then alternates between two sets of
      registers instead of being copied into the loop-carried ones every
      block (32 registers a lane with 64-key blocks). Same restrictions on
      the cache as `ping_pong`.
    * `direct_copies`: optional, `tessel.matmul` with `stages = 2`, on a
      chip that loads 16 bytes a lane straight into LDS (gfx950): the K
      loop's operands are copied from global memory into their LDS slots
      (`tessel.copy_to_local`, `global_load_lds_dwordx4`) instead of
      passing through registers, where their tiles are in bounds and the
      chosen LDS layout keeps the copies' 16-byte runs together; other
      operands keep the register path.

    Every tile size is a power of two and each tile dimension is divisible by
    the number of waves along it. A matmul's K tile is a multiple of one
    instruction step where a step gives a lane at least a 16-byte LDS read
    of an operand (gfx950's doubled-K instructions:
    `v_mfma_f32_32x32x16_bf16` 16 bytes, `v_mfma_f32_32x32x64_f8f6f4` 32),
    else of two steps (the gfx90a/gfx942 instructions, which give 8 bytes or
    fewer per step, and WMMA).

    ```mlir
    #tessel.config<tile = [256, 128, 64], waves = [2, 2], stages = 2,
                   instr = "v_mfma_f32_32x32x8_bf16">
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t", "workgroup tile">:$tile,
                        ArrayRefParameter<"int64_t", "waves along M and N">:$waves,
                        "int64_t":$stages,
                        OptionalParameter<"::mlir::StringAttr">:$instr,
                        DefaultValuedParameter<"int64_t", "1">:$splits,
                        DefaultValuedParameter<"int64_t", "0">:$stream_k,
                        DefaultValuedParameter<"bool", "false">:$scores_ahead,
                        DefaultValuedParameter<"bool", "false">:$ping_pong,
                        DefaultValuedParameter<"bool", "false">:$unrolled,
                        DefaultValuedParameter<"bool", "false">:$direct_copies);
  let assemblyFormat = [{
    `<` `tile` `=` `[` $tile `]` `,` `waves` `=` `[` $waves `]` `,`
        `stages` `=` $stages ``
        custom<ConfigOptions>($instr, $splits, $stream_k, $scores_ahead,
                             $ping_pong, $unrolled, $direct_copies)
    `>`
  }];
  let builders = [
    // Without scores_ahead (every matmul config, most attention ones).
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$tile,
                     "::llvm::ArrayRef<int64_t>":$waves, "int64_t":$stages,
                     "::mlir::StringAttr":$instr, "int64_t":$splits,
                     "int64_t":$stream_k), [{
      return $_get($_ctxt, tile, waves, stages, instr, splits, stream_k,
                   /*scores_ahead=*/false, /*ping_pong=*/false,
                   /*unrolled=*/false, /*direct_copies=*/false);
    }]>,
    // Without ping_pong.
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$tile,
                     "::llvm::ArrayRef<int64_t>":$waves, "int64_t":$stages,
                     "::mlir::StringAttr":$instr, "int64_t":$splits,
                     "int64_t":$stream_k, "bool":$scores_ahead), [{
      return $_get($_ctxt, tile, waves, stages, instr, splits, stream_k,
                   scores_ahead, /*ping_pong=*/false, /*unrolled=*/false,
                   /*direct_copies=*/false);
    }]>,
    // Without unrolled.
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$tile,
                     "::llvm::ArrayRef<int64_t>":$waves, "int64_t":$stages,
                     "::mlir::StringAttr":$instr, "int64_t":$splits,
                     "int64_t":$stream_k, "bool":$scores_ahead,
                     "bool":$ping_pong), [{
      return $_get($_ctxt, tile, waves, stages, instr, splits, stream_k,
                   scores_ahead, ping_pong, /*unrolled=*/false,
                   /*direct_copies=*/false);
    }]>,
    // Without direct_copies.
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$tile,
                     "::llvm::ArrayRef<int64_t>":$waves, "int64_t":$stages,
                     "::mlir::StringAttr":$instr, "int64_t":$splits,
                     "int64_t":$stream_k, "bool":$scores_ahead,
                     "bool":$ping_pong, "bool":$unrolled), [{
      return $_get($_ctxt, tile, waves, stages, instr, splits, stream_k,
                   scores_ahead, ping_pong, unrolled, /*direct_copies=*/false);
    }]>
  ];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Total number of waves of the workgroup.
    int64_t getNumWaves() const;
  }];
}


//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

def Tessel_LayoutAttrInterface : AttrInterface<"LayoutAttrInterface"> {
  let cppNamespace = "::tessel";
  let description = [{
    An attribute that describes how a tile is laid out: over registers, lanes
    and waves (a distributed layout) or over LDS offsets (a memory layout).
    Every such attribute is a constructor of a linear layout over GF(2)
    (`tessel/Layout/LinearLayout.h`).
  }];
  let methods = [
    InterfaceMethod<[{
        The linear layout of a tile of `shape`, or a diagnostic through
        `emitError` when the attribute does not fit that tile.
      }],
      "::llvm::FailureOr<::tessel::LinearLayout>", "toLinearLayout",
      (ins "::llvm::ArrayRef<int64_t>":$shape,
           "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError)>,
  ];
}

class Tessel_LayoutAttr<string name, string attrMnemonic>
    : Tessel_Attr<name, attrMnemonic,
                  [DeclareAttrInterfaceMethods<Tessel_LayoutAttrInterface>]>;

// A layout over registers, lanes and waves, usable as a tensor's encoding:
// the tensor type is verified against it (the layout must fit the shape,
// with a bounded number of registers per lane).
class Tessel_DistributedLayoutAttr<string name, string attrMnemonic>
    : Tessel_Attr<name, attrMnemonic,
                  [DeclareAttrInterfaceMethods<Tessel_LayoutAttrInterface>,
                   DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]>;

def Tessel_BlockedAttr : Tessel_DistributedLayoutAttr<"Blocked", "blocked"> {
  let summary = "Blocked distribution for coalesced global access";
  let description = [{
    Each lane holds `sizePerThread` consecutive elements per tile dimension;
    the lanes of a wave (`threadsPerWave`) and then the waves of the
    workgroup (`waves`) tile the dimensions, fastest first in `order`. A tile
    larger than the covered block repeats it in further registers; a smaller
    one is replicated across lanes. As a tensor's encoding, `sizePerThread`
    may not exceed the tile along any dimension (a lane would only hold
    copies).

    Like every distributed layout (`blocked`, `mma`, `mma_operand`,
    `linear`), it encodes only tiles with static sizes of at most 2^16 per
    dimension and 2^20 elements in all, placing at most 2^11 elements in one
    lane (what its 512 registers can hold).

    ```mlir
    // 8 bf16 (16 bytes) per lane along K, 8x8 lanes, 4 waves along M.
    #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8],
                    waves = [4, 1], order = [1, 0]>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$sizePerThread,
                        ArrayRefParameter<"int64_t">:$threadsPerWave,
                        ArrayRefParameter<"int64_t">:$waves,
                        ArrayRefParameter<"int64_t">:$order);
  let assemblyFormat = [{
    `<` `sizePerThread` `=` `[` $sizePerThread `]` `,`
        `threadsPerWave` `=` `[` $threadsPerWave `]` `,`
        `waves` `=` `[` $waves `]` `,` `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
}

def Tessel_MmaAttr : Tessel_DistributedLayoutAttr<"Mma", "mma"> {
  let summary = "Accumulator layout of a matrix instruction over waves";
  let description = [{
    The C/D (accumulator) layout of the MFMA or WMMA instruction `instr`
    (the gfx942 spelling, from the matrix-instruction catalogue) over a
    workgroup tile: `waves = [along M, along N]` waves tile the instruction's
    block (wave index = waveM * wavesN + waveN), then every wave repeats its
    block along N and then M in further registers. Registers are in hardware
    element order: register `j` is element `j` of the LLVM accumulator
    vector. `chip` picks between families whose layouts differ (required
    for WMMA, where gfx11 and gfx12 differ); `waveSize` picks wave32 or
    wave64 for WMMA (default: the chip's).

    `transposed` (square MFMA instructions only) issues every instruction
    with its operands swapped: it computes the transpose of its block, so
    that a lane holds consecutive elements along N instead of M (the
    operand layouts are the same, an MFMA's A and B lane layouts being
    symmetric). A row-major C is then stored, and the epilogue's per-column
    operands loaded, in vectors of a lane's 4 consecutive columns instead
    of one element at a time.

    ```mlir
    #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [2, 2]>
    #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [2, 2], transposed>
    #tessel.mma<"v_wmma_f32_16x16x16_f16", waves = [1, 1], chip = "gfx1201">
    ```
  }];
  let parameters = (ins StringRefParameter<"instruction mnemonic">:$instr,
                        ArrayRefParameter<"int64_t">:$waves,
                        StringRefParameter<"chip", [{""}]>:$chip,
                        DefaultValuedParameter<"unsigned", "0">:$waveSize,
                        DefaultValuedParameter<"bool", "false">:$transposed);
  let builders = [
    AttrBuilder<(ins "llvm::StringRef":$instr,
                     "llvm::ArrayRef<int64_t>":$waves,
                     "llvm::StringRef":$chip, "unsigned":$waveSize), [{
      return $_get($_ctxt, instr, waves, chip, waveSize, /*transposed=*/false);
    }]>
  ];
  let assemblyFormat = [{
    `<` $instr `,` custom<MmaOptions>($waves, $chip, $waveSize, $transposed) `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The catalogue entry this attribute names (verified to exist).
    const ::tessel::MmaInstr &getInstruction() const;
    /// The wave size the layout is for: 64 for MFMA, `waveSize` or the
    /// chip's default for WMMA.
    unsigned getEffectiveWaveSize() const;
  }];
}

def Tessel_MmaOperandAttr : Tessel_DistributedLayoutAttr<"MmaOperand", "mma_operand"> {
  let summary = "Operand layout (A or B) of a matrix instruction";
  let description = [{
    The register layout operand `a` ([M, K] tile) or `b` ([K, N] tile) of a
    dot whose accumulator has the layout `parent` needs. Each lane holds
    `kWidth` consecutive K elements per instruction group: `kWidth` equal to
    the instruction's elements per lane is the hardware layout; a multiple of
    it (MFMA only) packs several instructions' K into one run, which wider
    LDS reads can fetch at once. Waves along the other dimension hold copies.

    ```mlir
    #tessel.mma_operand<a, #tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [1, 1]>, kWidth = 4>
    ```
  }];
  let parameters = (ins "unsigned":$operandIndex,
                        "MmaAttr":$parent,
                        "int64_t":$kWidth);
  let assemblyFormat = [{
    `<` custom<OperandIndex>($operandIndex) `,` qualified($parent) `,`
        `kWidth` `=` $kWidth `>`
  }];
  let genVerifyDecl = 1;
}

def Tessel_SwizzleAttr : Tessel_LayoutAttr<"Swizzle", "swizzle"> {
  let summary = "Swizzled LDS layout of a 2-D tile";
  let description = [{
    An LDS (memory) layout for a 2-D tile whose dimension `order[0]` is
    contiguous (default `order = [1, 0]`: rows of dim1). Element `(r, c)` is
    stored at `r * C + ((c / vec) ^ phase(r)) * vec + c % vec` with
    `phase(r) = (r / perPhase) % maxPhase`: groups of `vec` elements move
    together (so vector accesses stay whole) and rows rotate their groups so
    that column accesses spread over the banks. `maxPhase = 1` is no swizzle.

    With `fold = true` the phase uses every bit of `r / perPhase`: its
    log2(maxPhase)-bit pieces are XORed together (`phase(r) = p0 ^ p1 ^ ...`
    with `p_i = (r / perPhase / maxPhase^i) % maxPhase`), so rows that are
    a multiple of `perPhase * maxPhase` apart still land on different banks.
    That serves a tile written by lanes whose rows lie far apart (8 rows
    apart in attention's V^T, written from V's head-dim runs) and read by
    lanes on consecutive rows. It equals the plain phase on tiles of at most
    `perPhase * maxPhase` rows.

    ```mlir
    #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8>
    #tessel.swizzle<vec = 4, perPhase = 1, maxPhase = 16, fold = true>
    ```
  }];
  let parameters = (ins "int64_t":$vec, "int64_t":$perPhase,
                        "int64_t":$maxPhase,
                        OptionalArrayRefParameter<"int64_t">:$order,
                        DefaultValuedParameter<"bool", "false">:$fold);
  let assemblyFormat = [{
    `<` `vec` `=` $vec `,` `perPhase` `=` $perPhase `,` `maxPhase` `=`
        $maxPhase `` custom<SwizzleOptions>($order, $fold) `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// `order`, or [1, 0] when absent.
    ::llvm::SmallVector<int64_t, 2> getEffectiveOrder() const;
  }];
}

def Tessel_LinearAttr : Tessel_DistributedLayoutAttr<"Linear", "linear"> {
  let summary = "A linear layout given by its bases";
  let description = [{
    The general case: for each input dimension (`register`, `lane`, `wave`,
    `block`, or `offset` for a memory layout) the tile coordinates of each
    of its bits, lowest first. The image of an input is the XOR of the bases
    of its set bits. Dimensions not listed have size 1.

    ```mlir
    // 2 registers and 4 lanes over an 4x2 tile: lane l, register r hold (l, r).
    #tessel.linear<register = [[0, 1]], lane = [[1, 0], [2, 0]]>
    ```
  }];
  // Each input's bases, flattened (`rank` values per basis), in the fixed
  // order register, lane, wave, block, offset.
  let parameters = (ins "unsigned":$rank,
                        ArrayRefParameter<"int64_t">:$registerBases,
                        ArrayRefParameter<"int64_t">:$laneBases,
                        ArrayRefParameter<"int64_t">:$waveBases,
                        ArrayRefParameter<"int64_t">:$blockBases,
                        ArrayRefParameter<"int64_t">:$offsetBases);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// (input name, flattened bases) in the fixed order.
    ::llvm::SmallVector<std::pair<::llvm::StringRef, ::llvm::ArrayRef<int64_t>>, 5>
    getAllBases() const;
  }];
}

#endif // TESSEL_DIALECT_TESSEL_IR_TESSELATTRS_TD
