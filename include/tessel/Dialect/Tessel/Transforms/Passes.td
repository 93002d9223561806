//===- Passes.td - tessel transformation passes ---------------*- tablegen -*-===//

#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_PASSES_TD
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TesselPipelinePass
    : Pass<"tessel-pipeline", "::mlir::func::FuncOp"> {
  let summary = "Software-pipeline the K loop: prefetch the next K step";
  let description = [{
    In a tile program whose K loop loads its operand tiles from global
    memory and stores them to LDS, issues the global loads of step k + 1
    before the LDS reads and MFMAs of step k, so their latency hides behind
    the math. The loaded tiles travel to the next iteration as loop-carried
    values; the first step's loads move in front of the loop. A scheduling
    barrier keeps each step's LDS stores after the previous step's MFMAs,
    and the loop is unrolled by two when both steps' registers fit beside
    the accumulators in 256 per lane, so the two register sets alternate
    instead of being copied. Where they do not, a loop of 8-wave workgroups
    with at most 8 MFMAs per wave and step, a static K and unbatched
    operands is unrolled all the same and marked `tessel.reads_in_place`:
    its steps share one set of operand registers, each read in place by
    tessel-lower-to-gpu. A loop marked `tessel.even_trip_count` gets no
    loop for an odd last step. Inside another loop (stream-K's loop over
    tiles) a barrier precedes the first step's LDS stores. Kernels whose
    config has `stages = 1` are left alone.

    Attention kernels (a config tile of `[M, N]`) with `stages = 2` keep
    one LDS slot, since their LDS bounds how many workgroups share a CU:
    the next key block's tiles are loaded into registers after the block's
    first product and stored to the slot at the top of the next iteration.
    With `stages` 3 or 4, K and V^T get two slots: each block reads slot
    k % 2 after one barrier at its top and, after its first product, writes
    the next block (loaded a block earlier) into the other slot and loads
    the block after next; those accesses at a run-time slot share address
    registers (`tessel.lds_shared_addresses`). A ping-pong loop (phase
    barriers in its body) carries the slots it reads and writes as two
    loop-carried indices; with `stages = 4` it gets three slots: the
    prologue stores two blocks, and each block's K (the first product's
    operand, whose other operand stays in registers) is read at the top of
    the iteration, in the softmax phase, while the other half's matrix
    phase writes the slot of the block after next. Where its matrix
    instructions are 16 deep in K (gfx950), the ping-pong loop over whole
    blocks is unrolled by its slot count, each copy reading and writing
    constant slots (whose bases fold into the LDS instructions' offsets),
    with a rolled loop after it for the blocks left over; the function is
    marked `tessel.key_loop_unroll` with the factor for the performance
    model. A four-wave double-buffered loop whose config says `unrolled`
    is unrolled by two the same way (its slots stay derived from the
    induction variable), so that the next block's S^T, computed ahead,
    alternates between two sets of registers. The masked loops marked
    `tessel.own_loads` (a tail block, a window's left edge, the diagonal
    of kernels without the scores ahead) run a block or two and keep their
    own loads. A loop whose loads are masked along a padded head dim (not
    `in_bounds`) is pipelined like one whose loads are in bounds (the masks
    keep every prefetch inside the arrays), but in a kernel with masked
    loops whose tile iteration arguments take more than 96 registers a
    lane, unless it is a ping-pong loop (whose halves meet only at the
    pipelined loop's barriers). The first blocks' loads move in front of
    the loop, masked
    (the loop may run no iteration); the last iteration's prefetch is
    clamped to the last step. A load's indices may be integer arithmetic
    on the induction variable inside the loop (the next block's K under
    `scores_ahead`): the prefetch clones it. A double-buffered loop marked
    `tessel.continues_key_loop` (the causal diagonal after the loop over
    whole blocks) runs as one pipeline with the loop before it: that loop's
    prefetches are clamped to this one's last step, so its last iterations
    store and load this loop's first blocks; this loop has no prologue,
    takes the loaded tiles and counts its slots from the first loop's lower
    bound, and the phase barriers only one half of a ping-pong workgroup
    waits at between the two loops are removed.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::amdgpu::AMDGPUDialect"];
  let statistics = [
    Statistic<"numPipelined", "num-pipelined", "K loops pipelined">,
  ];
}

def TesselPromoteLdsPass
    : Pass<"tessel-promote-lds", "::mlir::func::FuncOp"> {
  let summary = "Route dot operands through LDS with a conflict-free swizzle";
  let description = [{
    Replaces every `tessel.convert_layout` of a tile loaded from global
    memory into a `#tessel.mma_operand` layout by a trip through an LDS
    buffer: the coalesced tile is written with `tessel.local_store` and read
    back in the operand layout with `tessel.local_load`. The buffer's
    swizzle is the one the swizzle chooser finds for that write and read
    (zero bank conflicts where one exists); barriers keep the next
    iteration's writes behind this iteration's reads. Each `local_alloc`
    carries the bank analysis of its layout: `tessel.write_conflicts` and
    `tessel.read_conflicts`, the extra cycles per wave-wide LDS access.

    All of a block's operands are read right after its write phase, except
    gfx11 WMMA operands (read before their first use) and tiles whose
    `tessel.load` carries `tessel.lds_read_at_use` (attention's head-dim
    chunks): those are read right before each use, and one converted outside
    the loops (Q^T) stays in an LDS buffer of its own, written once and read
    inside the loops, instead of going straight to registers. Where the
    load also carries `tessel.lds_read_ahead`, each use's read goes one
    product ahead instead: in front of the previous product in the same
    block, so that its LDS latency runs under that product's matrix
    instructions.

    Otherwise an operand converted outside every loop and loaded for that
    one use (attention's Q^T without head-dim chunks) is read once: it is
    loaded straight into its operand layout and takes no LDS. A loop marked
    `tessel.tile_loop` (a stream-K workgroup's loop over its tiles or query
    blocks, each iteration one tile's program) counts as the top level.

    A matmul whose config has `direct_copies`, on a chip that loads 16
    bytes a lane straight into LDS (gfx950), copies each operand loaded
    `in_bounds` inside the K loop with `tessel.copy_to_local` instead of
    passing it through registers, where the chosen layout keeps the
    copies' 16-byte runs together and the tile is a whole number of the
    waves' 1 KiB copies; `tessel.wait_copies` precedes the barrier that
    ends the write phase. Other operands keep the register path.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"gfx942\"",
           "Chip whose LDS banking to optimize for">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect"];
}

def TesselSelectConfigPass
    : Pass<"tessel-select-config", "::mlir::func::FuncOp"> {
  let summary = "Choose tiles, waves, stages and the matrix instruction";
  let description = [{
    Gives every `tessel.matmul` without a `#tessel.config` the fastest
    config for the chip, its element types and its shape: it enumerates the
    configs the lowering supports (tiles, waves, K tile, 16x16 or 32x32
    instruction) that fit the chip's LDS and registers and ranks them with
    the analytical form of the performance model (time of one K step with
    the waves that share a SIMD, LDS and cache bandwidth, occupancy, rounds
    of workgroups over the CUs, the HBM floor). With `explain`, a remark on
    each matmul names the winner, its predicted time and binding limit, and
    notes rank the runners-up. With `tuning-db`, a problem the database
    (written by `tessel-tune`) holds for the chip gets its tuned config.
    Attention gets its default config (a rule), with the split count the
    decode model picks for short query lengths, or the stream-K form
    (`chooseAttentionStreamK`: `stream_k` = two workgroups per CU, 32-key
    blocks past head dim 64, 64-key ones up to it, `stages = 2`) on a CDNA
    chip where one workgroup per query block fills less than 90 % of its
    rounds of slots, every slot gets at least 4 key blocks and the merges'
    HBM traffic costs less than the idle slots; not for windows, head dims
    past 128, or causal kernels up to head dim 64 or on gfx90a. The
    four-wave double-buffered loop with the scores ahead is `unrolled` by
    two where the model predicts that faster (`chooseAttentionUnroll`: on
    gfx942 f16 and bf16 at head dim 64, raising `stages` to 3, and bf16 at
    head dim 128; on gfx90a causal kernels at head dim 64, with the scores
    ahead and `stages = 3`).

    It checks every config
    (chosen or given) against the chip before any code exists: the
    instruction must be one the chip has for these types, the LDS buffers
    must fit the chip's LDS, and the accumulator and operand registers the
    register file. An impossible config is an error naming the budget it
    breaks.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"gfx942\"", "Target chip">,
    Option<"explain", "explain", "bool", "false",
           "Remark why each matmul's config won, with the runners-up">,
    Option<"explainCount", "explain-count", "unsigned", "4",
           "Runners-up listed by explain">,
    Option<"tuningDb", "tuning-db", "std::string", "\"\"",
           "A tuning database (tessel-tune) whose configs win over the "
           "model's for the problems it holds">,
  ];
}

def TesselSelectMfmaPass
    : Pass<"tessel-select-mfma", "::mlir::func::FuncOp"> {
  let summary = "Give dots the MFMA operand layouts of their instruction";
  let description = [{
    For every `tessel.dot` whose accumulator is in a `#tessel.mma` layout,
    picks the operands' K packing (`kWidth`: the instruction's elements per
    lane, doubled where a lane can then read 16 bytes of LDS at once) and
    converts the operands to the matching `#tessel.mma_operand` layouts.
    Checks the instruction is available on the chip.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"gfx942\"", "Target chip">,
  ];
}

def TesselTilePass : Pass<"tessel-tile", "::mlir::ModuleOp"> {
  let summary = "Lower problem ops (L0) to tile programs (L1)";
  let description = [{
    **Attention** becomes the FlashAttention-2 forward program: one
    workgroup per (query block, head, batch), query head h reading key/value
    head h / (Hq / Hkv) (with a right key edge, causal, flat workgroup id i
    runs query block X - 1 - i / (heads x batch), the longest first, and
    the function is marked `tessel.longest_first`); a loop over key/value blocks (stopping after the
    last block a causal query block can see) computing S = Q K^T, masking
    keys past the sequence and, when causal, past each query (bottom-right
    aligned: query i sees keys j <= i + Skv - Sq), the online softmax in the
    exp2 domain with the scale folded in (`tessel.reduce` keeps the running
    row max and sum in the tile's layout), the rescaling of the output
    accumulator, and O += P V with P in the input type; then O / l (0 for a
    row that sees no key) and, when asked, the natural logsumexp. With
    `splits` > 1 in its config (split-KV, chosen for short query lengths)
    the kernel takes three workspaces after its arguments (partial O
    `[B, Hq, splits, Sq, Dv]`, log2-sum-exp `[B, Hq, splits, Sq]`, f32, and
    the arrivals per query block, i32): each workgroup (grid z = batch x
    splits) walks one share of its query block's keys, stores its partials
    and arrives (`tessel.split_arrive`); the last split to arrive merges
    the shares by their log-sum-exp. The kernel carries `tessel.splits`.
    With `stream_k` = G (stream-K) the kernel takes three workspaces (the
    partial O `[G, 2, blockM, Dv]` and log2-sum-exp `[G, 2, blockM]` of the
    pieces of cut query blocks, f32, and the arrivals per query block): the
    G workgroups share all query blocks' key blocks evenly (causal query
    blocks i and Q - 1 - i paired into equal units), each in an `scf.for`
    marked `tessel.tile_loop` over the query blocks its range reaches,
    storing a whole block's O or its piece's partials and arrival; after the
    loop a workgroup merges the pieces of its first and last blocks where
    its piece arrived last. The step arithmetic is 32-bit. The kernel
    carries `tessel.stream_k` and, with a chip where G is two waves per
    SIMD's worth of workgroups, `tessel.waves_per_simd` = 2 (the occupancy
    G counts on).
    It is a module pass because tiling may rewrite function signatures.

    **Matmul**:
    Turns a function holding one configured `tessel.matmul` into the program
    one workgroup runs: its tile of C (`tessel.program_id` 0 along N, 1
    along M, 2 along the batch), a K loop of masked `tessel.load`s of the A
    and B tiles in coalesced `#tessel.blocked` layouts feeding `tessel.dot`
    into an accumulator in the config instruction's `#tessel.mma` layout
    (an operand stored with K not contiguous, on a K tile of 64 bytes or
    more, is loaded with each lane holding runs along K across rows, so
    that LDS can keep K contiguous; in-bounds loads of such runs get
    `tessel.constant_row_offsets`),
    then the epilogue applied elementwise to the accumulator tile (extra
    operands loaded through broadcasting views) and a masked `tessel.store`.
    Tails in M, N and K are masked: nothing is read or written out of
    bounds. The function gets `tessel.workgroup_size` and `tessel.tile`
    (the grid is ceil(N / tile[1]) x ceil(M / tile[0]) x batch). The
    workgroup ids of a batch are renumbered (`getMatmulTilePosition`): the
    ids the hardware hands to one XCD of `chip` get a contiguous range, and
    ranges walk the tiles in groups of 8 tile rows, so the workgroups that
    share an L2 share operand panels.

    With `splits` > 1 (split-K) workgroup z = batch x splits + split
    multiplies its share of K into a workspace appended to the arguments
    and the last split of a tile to arrive sums the partials (the function
    carries `tessel.splits`). With `stream_k` = G the G workgroups share all
    tiles' K steps evenly (in pairs where a tile's steps are even; the K
    loops then carry `tessel.even_trip_count`): an `scf.for` over the tiles
    a workgroup's range touches, a piece of a cut tile stored to a
    `[G, 2, tileM, tileN]` workspace and counted by `tessel.split_arrive`
    with the tile's piece count, then one sum loop and one epilogue for a
    whole tile or the last piece (the function carries `tessel.stream_k`;
    the grid is G x 1 x 1).
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"\"",
           "Target chip; its XCD count orders the matmul tiles (empty: one "
           "L2)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_PASSES_TD
