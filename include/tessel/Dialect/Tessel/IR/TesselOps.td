//===- TesselOps.td - tessel operations ---------------------*- tablegen -*-===//

#ifndef TESSEL_DIALECT_TESSEL_IR_TESSELOPS_TD
#define TESSEL_DIALECT_TESSEL_IR_TESSELOPS_TD

include "tessel/Dialect/Tessel/IR/TesselDialect.td"
include "tessel/Dialect/Tessel/IR/TesselAttrs.td"
include "tessel/Dialect/Tessel/IR/TesselTypes.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// L0: problem ops
//===----------------------------------------------------------------------===//

def Tessel_MatmulOp : Tessel_Op<"matmul", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "C = epilogue(A x B, extras...) on memrefs";
  let description = [{
    Matrix multiplication `C[b, m, n] = sum_k A[b, m, k] * B[b, k, n]` on
    rank-2 (`[M, K] x [K, N] -> [M, N]`) or rank-3 batched memrefs. Transposed
    operands are memrefs with a strided layout (unit stride on M or N rather
    than K); any dimension may be dynamic.

    Element types of `A` and `B`: `f32`, `f16`, `bf16`, `i8`, and the 8-bit
    floats `f8E4M3FNUZ`/`f8E5M2FNUZ` (gfx942) and `f8E4M3FN`/`f8E5M2` (gfx950).
    `A` and `B` have the same element type, except that two 8-bit floats of
    one family (FNUZ or OCP) may be mixed. The products are accumulated in
    `i32` for `i8` inputs and in `f32` otherwise; `C` may be any float type or
    `i32`.

    Without an epilogue, the accumulator is converted to the element type of
    `C`. An `epilogue` region fuses elementwise work into the store: its block
    receives the accumulator element followed by one element of each extra
    operand and yields the element stored to `C`. An extra operand is either a
    scalar or a memref broadcastable to the shape of `C` with NumPy rules:
    `memref<N>` is a bias along N (one value per column), `memref<Mx1>` a bias
    along M, `memref<MxN>` a residual.

    ```mlir
    tessel.matmul ins(%a, %b : memref<?x4096xbf16>, memref<4096x4096xbf16, strided<[1, 4096]>>)
                  outs(%c : memref<?x4096xbf16>)
                  epilogue(%bias : memref<4096xf32>) {
    ^bb0(%acc: f32, %bi: f32):
      %s = arith.addf %acc, %bi : f32
      %r = arith.truncf %s : f32 to bf16
      tessel.yield %r : bf16
    }
    ```
  }];
  let arguments = (ins AnyMemRef:$a, AnyMemRef:$b, AnyMemRef:$c,
                       Variadic<AnyType>:$extras,
                       OptionalAttr<Tessel_ConfigAttr>:$config);
  let regions = (region MaxSizedRegion<1>:$epilogue);
  let assemblyFormat = [{
    `ins` `(` $a `,` $b `:` type($a) `,` type($b) `)`
    `outs` `(` $c `:` type($c) `)`
    custom<Epilogue>($extras, type($extras), $epilogue)
    attr-dict
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The element type products are accumulated in: i32 for i8 inputs, f32
    /// otherwise.
    ::mlir::Type getAccumulatorType();
    /// True for rank-3 (batched) operands.
    bool isBatched() { return getA().getType().getRank() == 3; }
  }];
}

def Tessel_AttentionOp : Tessel_Op<"attention", [AttrSizedOperandSegments]> {
  let summary = "FlashAttention forward: O = softmax(scale * Q K^T [+ mask]) V";
  let description = [{
    Scaled dot-product attention on rank-4 memrefs `Q: [B, Hq, Sq, D]`,
    `K: [B, Hkv, Skv, D]`, `V: [B, Hkv, Skv, Dv]`, `O: [B, Hq, Sq, Dv]`
    (the values' head dim `Dv` may differ from the scores' `D`, as
    DeepSeek's 192/128). Grouped-query and
    multi-query attention are expressed by `Hkv` dividing `Hq`: query head `h`
    reads key/value head `h / (Hq / Hkv)`. `scale` multiplies the scores
    before the softmax (default `1/sqrt(D)`). The optional `lse` output
    `[B, Hq, Sq]` (f32) receives the natural-log logsumexp of each score row.
    `Q`, `K` and `V` share one element type: `f16`, `bf16`, or an E4M3
    8-bit float (`f8E4M3FNUZ` on gfx942, `f8E4M3FN` on gfx950); sequence
    lengths may be dynamic, the head dimensions are static.

    8-bit inputs may carry per-tensor dequantization scales, as
    FlashAttention-3's `descale_q/k/v`: `descale(%dq, %dk, %dv :
    memref<1xf32>, memref<1xf32>, memref<1xf32>)` makes the scores
    `scale * dq * dk * Q K^T` and the output `dv * softmax(...) V`. The
    kernel multiplies P, rounded to Q's 8-bit type, by V on the 8-bit
    matrix instructions (as FlashAttention-3 does).

    Masks are aligned to the bottom-right corner when `Sq != Skv`: query `i`
    sits at key position `p = i + Skv - Sq`. `causal` masks the keys after
    `p`. `window = array<i64: left, right>` (FlashAttention's
    `window_size`, local attention) keeps only the keys `j` with
    `p - left <= j <= p + right`, -1 leaving that side unbounded; with
    `causal` the right edge is `p` (right must be 0 or -1).

    The optional `sinks` operand `[Hq]` (f32) holds one logit per query
    head that joins every row's softmax denominator and contributes no
    value (attention sinks): `O = sum_j exp(s_j) V_j / (exp(sink) +
    sum_j exp(s_j))`; the sink is not scaled, and `lse` includes it.

    ```mlir
    tessel.attention ins(%q, %k, %v : memref<2x32x?x128xf16>, memref<2x8x?x128xf16>, memref<2x8x?x128xf16>)
                     outs(%o : memref<2x32x?x128xf16>)
                     sinks(%s : memref<32xf32>) {causal, window = array<i64: 128, 0>}
    ```

    Variable-length (packed) batches, as FlashAttention's `varlen`
    functions take them: `varlen(%cu_q, %cu_k, %max_q : memref<?xi32>,
    memref<?xi32>)` says that Q, K, V and O (and the logsumexp) hold the
    batch's sequences one after the other along their `seq` dimension,
    their batch dimension being 1: sequence `b` has queries `cu_q[b]` to
    `cu_q[b + 1]` and keys `cu_k[b]` to `cu_k[b + 1]` (B + 1 cumulative
    lengths each, read at run time). `%max_q` (index) is at least the
    longest query sequence: the launch covers that many queries per
    sequence. A FlashAttention `(total, heads, head_dim)` tensor is the
    strided view `[1, heads, total, head_dim]` of the same memory. Lengths
    past the arrays' ends are clamped to them.

    A paged KV cache, as vLLM keeps it: `paged(%block_table, %context_lens
    : memref<Bx?xi32>, memref<Bxi32>)` makes K and V caches of pages,
    `[num_pages, kv_heads, page_size, head_dim]` (the strided view of
    vLLM's `[num_pages, page_size, kv_heads, head_dim]` cache), the
    page size static (16 to 128). Sequence `b` of the queries' batch has
    `context_lens[b]` keys; key `j` is row `j mod page_size` of page
    `block_table[b][j / page_size]`. Lengths are clamped to the block
    table's pages and page numbers to the cache, so no input reads outside
    the arrays.
  }];
  let arguments = (ins Arg<AnyMemRef, "queries", [MemRead]>:$q,
                       Arg<AnyMemRef, "keys", [MemRead]>:$k,
                       Arg<AnyMemRef, "values", [MemRead]>:$v,
                       Arg<AnyMemRef, "output", [MemWrite]>:$o,
                       Arg<Optional<AnyMemRef>, "logsumexp", [MemWrite]>:$lse,
                       Arg<Optional<AnyMemRef>, "sink logits", [MemRead]>:$sinks,
                       Arg<Variadic<AnyMemRef>, "dequantization scales of q, k and v", [MemRead]>:$descale,
                       Arg<Optional<MemRefOf<[I32]>>, "cumulative query lengths", [MemRead]>:$cu_seqlens_q,
                       Arg<Optional<MemRefOf<[I32]>>, "cumulative key lengths", [MemRead]>:$cu_seqlens_k,
                       Optional<Index>:$max_seqlen_q,
                       Arg<Optional<MemRefOf<[I32]>>, "pages of each sequence", [MemRead]>:$block_table,
                       Arg<Optional<MemRefOf<[I32]>>, "keys of each sequence", [MemRead]>:$context_lens,
                       OptionalAttr<F32Attr>:$scale,
                       UnitAttr:$causal,
                       OptionalAttr<DenseI64ArrayAttr>:$window,
                       OptionalAttr<Tessel_ConfigAttr>:$config);
  let assemblyFormat = [{
    `ins` `(` $q `,` $k `,` $v `:` type($q) `,` type($k) `,` type($v) `)`
    `outs` `(` $o `:` type($o) `)`
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    (`descale` `(` $descale^ `:` type($descale) `)`)?
    (`varlen` `(` $cu_seqlens_q^ `,` $cu_seqlens_k `,` $max_seqlen_q `:`
      type($cu_seqlens_q) `,` type($cu_seqlens_k) `)`)?
    (`paged` `(` $block_table^ `,` $context_lens `:` type($block_table) `,`
      type($context_lens) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the batch's sequences are packed (`varlen`).
    bool isVarlen() { return static_cast<bool>(getCuSeqlensQ()); }
    /// Whether K and V are a paged cache (`paged`).
    bool isPaged() { return static_cast<bool>(getBlockTable()); }
    /// The paged cache's page size (K's dimension 2).
    int64_t getPageSize() { return getK().getType().getDimSize(2); }
    /// The descale operands of q, k and v, or null without them.
    ::mlir::Value getDescaleQ() {
      return getDescale().empty() ? ::mlir::Value() : getDescale()[0];
    }
    ::mlir::Value getDescaleK() {
      return getDescale().empty() ? ::mlir::Value() : getDescale()[1];
    }
    ::mlir::Value getDescaleV() {
      return getDescale().empty() ? ::mlir::Value() : getDescale()[2];
    }
    /// The softmax scale: the `scale` attribute, or 1/sqrt(D) when absent.
    float getEffectiveScale();
    /// The keys each query sees: `window` and `causal` combined.
    KeyWindow getKeyWindow();
  }];
}

def Tessel_AttentionGradOp : Tessel_Op<"attention_grad",
                                      [AttrSizedOperandSegments]> {
  let summary = "FlashAttention backward: dQ, dK and dV from dO";
  let description = [{
    The gradients of `O = softmax(scale * Q K^T [+ mask]) V` (as
    `tessel.attention` defines it, masks and grouped-query heads included)
    with respect to Q, K and V, given the forward's output `O`, its
    natural-log logsumexp `lse` `[B, Hq, Sq]` (f32) and the gradient of the
    output `grad_o` (shaped as O):

    ```
    P  = exp(scale * Q K^T - lse)       (per row; masked scores are 0)
    dV = P^T dO                         (summed over a group's query heads)
    dP = dO V^T
    dS = P * (dP - rowsum(dO * O))
    dQ = scale * dS K
    dK = scale * dS^T Q                 (summed over a group's query heads)
    ```

    Q, K, V, O and `grad_o` share one element type (f16 or bf16); the
    gradients are that type or f32. Shapes, masks (`causal`, `window`) and
    `scale` follow `tessel.attention`; a row whose logsumexp is +inf (it
    saw no key) has zero gradients. The kernels recompute P from the
    logsumexp rather than storing it: a plan of two kernels, one per query
    block for dQ (which also writes rowsum(dO * O) to a workspace) and one
    per key block for dK and dV.

    `varlen(%cu_q, %cu_k, %max_q, %max_k : memref<?xi32>, memref<?xi32>)`
    takes packed sequences as `tessel.attention`'s varlen does (every array
    a `[1, heads, total, head_dim]` view, the logsumexp `[1, heads,
    total_q]`); `%max_k` bounds the key sequences (the dK/dV launch).

    ```mlir
    tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<2x32x?x128xbf16>, memref<2x8x?x128xbf16>, memref<2x8x?x128xbf16>, memref<2x32x?x128xbf16>, memref<2x32x?x128xbf16>, memref<2x32x?xf32>)
                          outs(%dq, %dk, %dv : memref<2x32x?x128xbf16>, memref<2x8x?x128xbf16>, memref<2x8x?x128xbf16>) {causal}
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "queries", [MemRead]>:$q,
                       Arg<AnyMemRef, "keys", [MemRead]>:$k,
                       Arg<AnyMemRef, "values", [MemRead]>:$v,
                       Arg<AnyMemRef, "forward output", [MemRead]>:$o,
                       Arg<AnyMemRef, "gradient of the output", [MemRead]>:$grad_o,
                       Arg<AnyMemRef, "forward logsumexp", [MemRead]>:$lse,
                       Arg<AnyMemRef, "gradient of q", [MemWrite]>:$grad_q,
                       Arg<AnyMemRef, "gradient of k", [MemWrite]>:$grad_k,
                       Arg<AnyMemRef, "gradient of v", [MemWrite]>:$grad_v,
                       Arg<Optional<MemRefOf<[I32]>>, "cumulative query lengths", [MemRead]>:$cu_seqlens_q,
                       Arg<Optional<MemRefOf<[I32]>>, "cumulative key lengths", [MemRead]>:$cu_seqlens_k,
                       Optional<Index>:$max_seqlen_q,
                       Optional<Index>:$max_seqlen_k,
                       OptionalAttr<F32Attr>:$scale,
                       UnitAttr:$causal,
                       OptionalAttr<DenseI64ArrayAttr>:$window,
                       OptionalAttr<Tessel_ConfigAttr>:$config);
  let assemblyFormat = [{
    `ins` `(` $q `,` $k `,` $v `,` $o `,` $grad_o `,` $lse `:` type($q) `,`
      type($k) `,` type($v) `,` type($o) `,` type($grad_o) `,` type($lse) `)`
    `outs` `(` $grad_q `,` $grad_k `,` $grad_v `:` type($grad_q) `,`
      type($grad_k) `,` type($grad_v) `)`
    (`varlen` `(` $cu_seqlens_q^ `,` $cu_seqlens_k `,` $max_seqlen_q `,`
      $max_seqlen_k `:` type($cu_seqlens_q) `,` type($cu_seqlens_k) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the batch's sequences are packed (`varlen`).
    bool isVarlen() { return static_cast<bool>(getCuSeqlensQ()); }
    /// The softmax scale: the `scale` attribute, or 1/sqrt(D) when absent.
    float getEffectiveScale();
    /// The keys each query sees: `window` and `causal` combined.
    KeyWindow getKeyWindow();
  }];
}

def Tessel_YieldOp : Tessel_Op<"yield", [Pure, ReturnLike, Terminator,
                                          HasParent<"MatmulOp">]> {
  let summary = "Yields the element an epilogue stores";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}


//===----------------------------------------------------------------------===//
// L1: the tile program
//===----------------------------------------------------------------------===//

def Tessel_Tile : RankedTensorOf<[AnyType]>;

def Tessel_ProgramIdOp : Tessel_Op<"program_id", [Pure]> {
  let summary = "Index of the workgroup along one grid dimension";
  let description = [{
    The coordinate (0: x, 1: y, 2: z) of the workgroup running the tile
    program. Matmul kernels put N tiles along x, M tiles along y and the
    batch along z.
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<2>]>:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
}

def Tessel_LoadOp : Tessel_Op<"load"> {
  let summary = "Load a distributed tile from global memory, masked";
  let description = [{
    Loads the 2-D tile whose first element is `source[indices]` (the tile
    covers the last two memref dimensions); elements outside the memref's
    bounds read as zero. The result's encoding says which lane holds which
    element; the lowering vectorizes along the memref's contiguous
    dimension where the layout allows.

    ```mlir
    %a = tessel.load %A[%m0, %k0] : memref<?x4096xbf16> -> tensor<128x64xbf16, #blocked>
    ```

    `in_bounds` states that the whole tile lies inside the memref (the
    producer proved it: sizes that the tile divides, indices on tile
    boundaries inside the grid and the loop bounds): the lowering then
    reads without masks or clamped addresses. It is a promise, as on MLIR's
    vector transfers: the verifier rejects only what no index can satisfy
    (a tile larger than a static size); the rest follows from how the
    producer built the indices (attention's key loop stops before the
    sequence's tail block).
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$source,
                       Variadic<Index>:$indices,
                       UnitAttr:$in_bounds);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` (`in_bounds` $in_bounds^)? attr-dict `:`
    type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tessel_StoreOp : Tessel_Op<"store"> {
  let summary = "Store a distributed tile to global memory, masked";
  let description = [{
    Stores `value` as the 2-D tile whose first element is `dest[indices]`;
    elements outside the memref's bounds are not written. `in_bounds`, as
    on `tessel.load`, states that the whole tile lies inside the memref.
  }];
  let arguments = (ins Tessel_Tile:$value,
                       Arg<AnyMemRef, "", [MemWrite]>:$dest,
                       Variadic<Index>:$indices,
                       UnitAttr:$in_bounds);
  let assemblyFormat = [{
    $value `,` $dest `[` $indices `]` (`in_bounds` $in_bounds^)? attr-dict `:`
    type($value) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def Tessel_SplitArriveOp : Tessel_Op<"split_arrive", [AttrSizedOperandSegments]> {
  let summary = "Count a workgroup's arrival at a split tile";
  let description = [{
    Split-K and stream-K matmul and split-KV attention in one kernel: each
    of the workgroups that share a C tile (a query block) stores its partial
    result, then arrives here once. The op makes the workgroup's earlier
    global writes visible to the whole device (release), adds one to the
    tile's counter `counters[indices]`, and returns true in every lane of the
    last workgroup to arrive. That workgroup sees every other one's writes
    (acquire) and sets the counter back to zero, so the counters (zero
    before the first launch) serve every later launch.

    How many workgroups arrive is either the constant `splits` (split-K,
    split-KV) or the index operand `count` (stream-K, where it depends on
    the tile); exactly one of the two is given, and it is at least 2.

    ```mlir
    %last = tessel.split_arrive %counters[%row, %col] splits = 4 : memref<8x16xi32>
    scf.if %last { ... sum the partials, the epilogue, C ... }
    %last2 = tessel.split_arrive %counters[%row, %col] count %n : memref<8x16xi32>
    ```
  }];
  let arguments = (ins Arg<MemRefOf<[I32]>, "", [MemRead, MemWrite]>:$counters,
                       Variadic<Index>:$indices,
                       Optional<Index>:$count,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<2>]>>:$splits);
  let results = (outs I1:$last);
  let assemblyFormat = [{
    $counters `[` $indices `]` (`splits` `=` $splits^)? (`count` $count^)?
    attr-dict `:` type($counters)
  }];
  let hasVerifier = 1;
}

def Tessel_LocalAllocOp : Tessel_Op<"local_alloc"> {
  let summary = "Allocate a tile buffer in LDS";
  let results = (outs Arg<Tessel_LdsType, "", [MemAlloc]>:$buffer);
  let assemblyFormat = "attr-dict `:` qualified(type($buffer))";
}

def Tessel_LocalStoreOp : Tessel_Op<"local_store"> {
  let summary = "Store a distributed tile into one slot of an LDS buffer";
  let arguments = (ins Tessel_Tile:$value,
                       Arg<Tessel_LdsType, "", [MemWrite]>:$buffer,
                       Index:$slot);
  let assemblyFormat = [{
    $value `,` $buffer `[` $slot `]` attr-dict `:` type($value) `,`
    qualified(type($buffer))
  }];
  let hasVerifier = 1;
}

def Tessel_CopyToLocalOp : Tessel_Op<"copy_to_local"> {
  let summary = "Copy a tile from global memory straight into an LDS slot";
  let description = [{
    Copies the 2-D tile of the buffer's shape whose first element is
    `source[indices]` into slot `slot` of `buffer` without passing through
    registers: each lane loads one 16-byte run of the memref's contiguous
    dimension and the hardware writes a wave's 64 runs to 1 KiB of LDS in
    lane order (gfx950's `buffer_load_dwordx4 ... lds` through a buffer
    resource, or `global_load_lds_dwordx4`). A lane loads the run
    the buffer's layout puts at its position, so the swizzle is applied on
    the global side; the layout must keep runs of 16 bytes of the memref's
    contiguous dimension together, and the tile must be a whole number of
    KiB.

    The copy is asynchronous: its data is in LDS for the issuing wave after
    `tessel.wait_copies`, and for the whole workgroup after every wave's
    `tessel.wait_copies` and a barrier. It has no masks: the tile must be
    `in_bounds` (as on `tessel.load`, the producer's promise).

    ```mlir
    tessel.copy_to_local %A[%m0, %k0], %lds[%slot] in_bounds
        : memref<4096x4096xbf16>, !tessel.lds<2 x [256, 32], bf16, #swizzle>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$source,
                       Variadic<Index>:$indices,
                       Arg<Tessel_LdsType, "", [MemWrite]>:$buffer,
                       Index:$slot,
                       UnitAttr:$in_bounds);
  let assemblyFormat = [{
    $source `[` $indices `]` `,` $buffer `[` $slot `]`
    (`in_bounds` $in_bounds^)? attr-dict `:` type($source) `,`
    qualified(type($buffer))
  }];
  let hasVerifier = 1;
}

def Tessel_WaitCopiesOp : Tessel_Op<"wait_copies"> {
  let summary = "Wait until this wave's copies to LDS have landed";
  let description = [{
    Waits for every `tessel.copy_to_local` the wave issued before (its
    vector-memory counter drained). Other waves see the data only after a
    barrier that follows their own wait as well: a barrier alone does not
    wait for copies in flight.
  }];
  let assemblyFormat = "attr-dict";
}

def Tessel_LocalLoadOp : Tessel_Op<"local_load"> {
  let summary = "Load a distributed tile from one slot of an LDS buffer";
  let description = [{
    Each lane reads the elements its registers hold in the result's layout.
    With `transposed`, the tile is read with transposing LDS reads (gfx950's
    `ds_read_b64_tr_b16`): each group of 16 lanes reads four 16-bit elements
    per lane at the addresses of the result layout with its register bits
    0-1 and lane bits 0-3 rotated, and the hardware exchanges them so that
    the lanes hold the result layout. That gives an operand whose K
    dimension is not contiguous in LDS four K elements per read instead of
    one; the rotated layout must read four consecutive elements of the
    buffer per lane.
  }];
  let arguments = (ins Arg<Tessel_LdsType, "", [MemRead]>:$buffer,
                       Index:$slot, UnitAttr:$transposed);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = [{
    $buffer `[` $slot `]` (`transposed` $transposed^)? attr-dict `:`
    qualified(type($buffer)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tessel_DotOp : Tessel_Op<"dot", [Pure,
    AllTypesMatch<["c", "result"]>]> {
  let summary = "D = A x B + C on distributed tiles";
  let description = [{
    A matrix product of an `[M, K]` and a `[K, N]` tile accumulated into an
    `[M, N]` tile of f32 (i32 for i8 inputs). After `tessel-select-mfma` the
    accumulator is in a `#tessel.mma` layout and the operands in the
    matching `#tessel.mma_operand` layouts; `xf32` asks for the reduced
    precision f32 instructions (gfx942).
  }];
  let arguments = (ins Tessel_Tile:$a, Tessel_Tile:$b, Tessel_Tile:$c,
                       UnitAttr:$xf32);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tessel_ConvertLayoutOp : Tessel_Op<"convert_layout", [Pure,
    SameOperandsAndResultShape, SameOperandsAndResultElementType]> {
  let summary = "Redistribute a tile to another layout";
  let arguments = (ins Tessel_Tile:$source);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tessel_ReduceOp : Tessel_Op<"reduce", [Pure]> {
  let summary = "Reduce a tile along one dimension";
  let description = [{
    The maximum (`max`) or the sum (`add`) of each row (`axis = 1`) or
    column (`axis = 0`) of a 2-D tile: a tile of size 1 along `axis` whose
    layout is the source's with the reduced dimension removed (see
    `getReducedTileType`): one register per row a lane held, and the lanes
    and waves that held the reduced dimension holding copies. A statistic is
    then one value per row, not a tile of repeats (attention's running max
    and sum). The lowering reduces within each lane's registers, then across
    lanes with a butterfly of shuffles; the reduced dimension must not be
    split across waves.

    With `within_lanes`, each lane reduces its own registers only: the
    result keeps one value per group of lanes that held the reduced
    dimension (element (g, c) of a column reduction is the reduction of the
    elements (r, c) held by lane group g), its size along the axis is the
    number of groups, and those lanes keep their part of it
    (`getReducedTileType`). A plain reduction of that tile along the same
    axis finishes the job, so a sum accumulated over many tiles (attention's
    row sum over the key blocks) exchanges values between lanes once, at
    the end.

    ```mlir
    %m = tessel.reduce "max" %s along 1 : tensor<64x64xf32, #mma> -> tensor<64x1xf32, #rows>
    %l = tessel.reduce "add" %p along 0 within_lanes : tensor<32x128xf32, #mma> -> tensor<2x128xf32, #halves>
    ```
  }];
  let arguments = (ins Tessel_Tile:$source,
                       ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<1>]>:$axis,
                       StrAttr:$kind, UnitAttr:$within_lanes);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$kind $source `along` $axis (`within_lanes` $within_lanes^)? attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tessel_BroadcastOp : Tessel_Op<"broadcast", [Pure]> {
  let summary = "Broadcast per-row or per-column values to a whole tile";
  let description = [{
    `source` has size 1 along the dimensions it is broadcast over (the
    result of `tessel.reduce`) and the result's size along the others; every
    element of the result is the value of its row (or column). The lowering
    moves registers within each lane, so the lanes and waves of the two
    layouts must hold the same rows (columns).

    ```mlir
    %w = tessel.broadcast %m : tensor<64x1xf32, #rows> -> tensor<64x128xf32, #mma>
    ```
  }];
  let arguments = (ins Tessel_Tile:$source);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tessel_IotaOp : Tessel_Op<"iota", [Pure]> {
  let summary = "The coordinate of each element of a tile along a dimension";
  let description = [{
    A tile of i32 whose every element is its own coordinate along `dim`
    within the tile: the building block of masks (causal attention,
    sequence tails).
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<1>]>:$dim);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tessel_WaveAnyOp : Tessel_Op<"wave_any", [Pure]> {
  let summary = "Whether any element a wave holds of an i1 tile is true";
  let description = [{
    Each wave answers for the elements of `source` its lanes hold (copies
    included): the result is the same in every lane of a wave and may differ
    between waves. A branch on it (`scf.if`) is uniform within each wave and
    lets a wave skip work none of its elements needs: attention's lazy
    rescale runs only where some query of the wave saw its maximum grow
    past the threshold. The lowering ORs each lane's registers and takes
    the wave's ballot.

    ```mlir
    %any = tessel.wave_any %grown : tensor<1x128xi1, #rows>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I1]>:$source);
  let results = (outs I1:$result);
  let assemblyFormat = "$source attr-dict `:` type($source)";
  let hasVerifier = 1;
}

def Tessel_PhaseBarrierOp : Tessel_Op<"phase_barrier"> {
  let summary = "A workgroup barrier between two phases of a ping-pong loop";
  let description = [{
    A workgroup barrier (LDS accesses before it complete and are visible
    after it) that also bounds the backend's scheduling: no instruction
    moves across it. Attention's ping-pong key loop (`ping_pong` in the
    config) alternates a phase of matrix instructions and a phase of
    softmax VALU work, one of these barriers after each, and the two
    halves of the workgroup's waves run one phase apart: with the second
    half's waves on the same SIMDs as the first's, every SIMD runs one
    wave's matrix phase while the other wave of the SIMD runs its softmax.

    `matrix` marks the barrier that opens a matrix phase: the wave raises
    its priority right after it (`s_setprio 1`, lowered again after the
    phase's last MFMA), so that the SIMD's arbiter issues the phase's
    address arithmetic and LDS reads ahead of the other wave's softmax.

    With `half`, only the waves of that half of the workgroup (0: the
    first waves / 2, 1: the others) wait at the barrier; the other half
    passes. The upper half's barrier in front of the loop puts it one phase
    behind the lower half, and the lower half's after the loop gives every
    wave the same count of barriers again. A barrier meets whichever
    barrier the other waves reach next, so the phases stay apart for the
    whole loop.

    ```mlir
    tessel.phase_barrier half 1
    scf.for ... {
      ...                      // softmax of the block
      tessel.phase_barrier matrix
      ...                      // the block's matrix products
      tessel.phase_barrier
    }
    tessel.phase_barrier half 0
    ```
  }];
  let arguments = (ins OptionalAttr<ConfinedAttr<I64Attr,
                                                 [IntMinValue<0>,
                                                  IntMaxValue<1>]>>:$half,
                       UnitAttr:$matrix);
  let assemblyFormat = "(`half` $half^)? (`matrix` $matrix^)? attr-dict";
}

#endif // TESSEL_DIALECT_TESSEL_IR_TESSELOPS_TD
