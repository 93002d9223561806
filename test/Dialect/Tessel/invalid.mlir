// RUN: tessel-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// #tessel.config
//===----------------------------------------------------------------------===//

func.func @config_tile_arity(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{tile must have 3 sizes [M, N, K] (matmul) or 2 sizes [M, N] (attention), got 4}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [64, 64, 32, 8], waves = [1, 1], stages = 1>}
  return
}

// -----

func.func @config_tile_power_of_two(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{tile sizes must be positive powers of two, got 96}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [96, 64, 32], waves = [1, 1], stages = 1>}
  return
}

// -----

func.func @config_waves_arity(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{waves must have 2 counts [along M, along N], got 3}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [64, 64, 32], waves = [1, 1, 1], stages = 1>}
  return
}

// -----

func.func @config_waves_power_of_two(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{wave counts must be positive powers of two, got 3}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [64, 64, 32], waves = [3, 1], stages = 1>}
  return
}

// -----

func.func @config_tile_not_divisible(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{tile size 16 along N is not divisible by its 32 waves}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [64, 16, 32], waves = [1, 32], stages = 1>}
  return
}

// -----

func.func @config_too_many_waves(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{a workgroup has at most 16 waves (1024 lanes of wave64), got 32}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [256, 256, 32], waves = [8, 4], stages = 1>}
  return
}

// -----

func.func @config_stages(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{stages must be between 1 and 4, got 0}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [64, 64, 32], waves = [1, 1], stages = 0>}
  return
}

// -----

func.func @config_instr(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{instr must name an MFMA or WMMA instruction (v_mfma_* or v_wmma_*), got "v_add_f32"}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [64, 64, 32], waves = [1, 1], stages = 1, instr = "v_add_f32">}
  return
}

// -----

//===----------------------------------------------------------------------===//
// tessel.matmul: shapes and layouts
//===----------------------------------------------------------------------===//

func.func @matmul_rank(%a: memref<64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{operand 'a' must be a memref of rank 2 ([M, K] style) or 3 (batched), got rank 1}}
  tessel.matmul ins(%a, %b : memref<64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>)
  return
}

// -----

func.func @matmul_rank_mismatch(%a: memref<2x64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{operands 'a', 'b' and 'c' must have the same rank, got 3, 2 and 2}}
  tessel.matmul ins(%a, %b : memref<2x64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>)
  return
}

// -----

func.func @matmul_batch_ab(%a: memref<2x64x64xf16>, %b: memref<3x64x64xf16>, %c: memref<2x64x64xf16>) {
  // expected-error @+1 {{dimension batch differs: 'a' has 2 but 'b' has 3}}
  tessel.matmul ins(%a, %b : memref<2x64x64xf16>, memref<3x64x64xf16>) outs(%c : memref<2x64x64xf16>)
  return
}

// -----

func.func @matmul_batch_ac(%a: memref<2x64x64xf16>, %b: memref<?x64x64xf16>, %c: memref<4x64x64xf16>) {
  // expected-error @+1 {{dimension batch differs: 'a' has 2 but 'c' has 4}}
  tessel.matmul ins(%a, %b : memref<2x64x64xf16>, memref<?x64x64xf16>) outs(%c : memref<4x64x64xf16>)
  return
}

// -----

func.func @matmul_k(%a: memref<64x32xf16>, %b: memref<16x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{dimension K differs: 'a' has 32 but 'b' has 16 (a: [64, 32], b: [16, 64], c: [64, 64])}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<16x64xf16>) outs(%c : memref<64x64xf16>)
  return
}

// -----

func.func @matmul_m(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<128x64xf16>) {
  // expected-error @+1 {{dimension M differs: 'a' has 64 but 'c' has 128}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<128x64xf16>)
  return
}

// -----

func.func @matmul_n(%a: memref<?x32xf16>, %b: memref<32x64xf16>, %c: memref<?x16xf16>) {
  // expected-error @+1 {{dimension N differs: 'b' has 64 but 'c' has 16}}
  tessel.matmul ins(%a, %b : memref<?x32xf16>, memref<32x64xf16>) outs(%c : memref<?x16xf16>)
  return
}

// -----

func.func @matmul_not_strided(%a: memref<64x32xf16, affine_map<(d0, d1) -> (d0 floordiv 2, d1)>>, %b: memref<32x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{operand 'a' must have a strided layout}}
  tessel.matmul ins(%a, %b : memref<64x32xf16, affine_map<(d0, d1) -> (d0 floordiv 2, d1)>>, memref<32x64xf16>) outs(%c : memref<64x64xf16>)
  return
}

// -----

func.func @matmul_no_unit_stride(%a: memref<64x32xf16>, %b: memref<32x64xf16, strided<[128, 2]>>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{operand 'b' must have unit stride in one of its two innermost dimensions (row- or column-major)}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16, strided<[128, 2]>>) outs(%c : memref<64x64xf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// tessel.matmul: element types
//===----------------------------------------------------------------------===//

func.func @matmul_f64(%a: memref<64x32xf64>, %b: memref<32x64xf64>, %c: memref<64x64xf64>) {
  // expected-error @+1 {{operand 'a' has element type 'f64', expected f32, f16, bf16, i8, f8E4M3FNUZ, f8E5M2FNUZ, f8E4M3FN or f8E5M2}}
  tessel.matmul ins(%a, %b : memref<64x32xf64>, memref<32x64xf64>) outs(%c : memref<64x64xf64>)
  return
}

// -----

func.func @matmul_mixed(%a: memref<64x32xf16>, %b: memref<32x64xbf16>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{operands 'a' and 'b' must have the same element type, or both be 8-bit floats of one family (FNUZ or OCP); got 'f16' and 'bf16'}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xbf16>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @matmul_mixed_fp8_families(%a: memref<64x32xf8E4M3FNUZ>, %b: memref<32x64xf8E5M2>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{operands 'a' and 'b' must have the same element type, or both be 8-bit floats of one family (FNUZ or OCP)}}
  tessel.matmul ins(%a, %b : memref<64x32xf8E4M3FNUZ>, memref<32x64xf8E5M2>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @matmul_c_type(%a: memref<64x32xi8>, %b: memref<32x64xi8>, %c: memref<64x64xi16>) {
  // expected-error @+1 {{operand 'c' has element type 'i16', expected a float type or i32}}
  tessel.matmul ins(%a, %b : memref<64x32xi8>, memref<32x64xi8>) outs(%c : memref<64x64xi16>)
  return
}

// -----

func.func @matmul_i32_from_float(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xi32>) {
  // expected-error @+1 {{operand 'c' has element type i32 but the inputs are 'f16': an i32 result needs i8 inputs or an epilogue that converts the f32 accumulator}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<64x64xi32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// tessel.matmul: config and extra operands
//===----------------------------------------------------------------------===//

func.func @matmul_config_arity(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{config tile must have 3 sizes [M, N, K] for matmul, got 2}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [64, 64], waves = [1, 1], stages = 1>}
  return
}

// -----

func.func @matmul_split_k_dynamic(%a: memref<?x256xf16>, %b: memref<256x64xf16>, %c: memref<?x64xf16>) {
  // expected-error @+1 {{split-K (splits = 2) needs static shapes: its workspace is allocated from them}}
  tessel.matmul ins(%a, %b : memref<?x256xf16>, memref<256x64xf16>) outs(%c : memref<?x64xf16>) {config = #tessel.config<tile = [32, 32, 64], waves = [1, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", splits = 2>}
  return
}

// -----

func.func @matmul_split_k_idle_split(%a: memref<64x256xf16>, %b: memref<256x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{split-K leaves the last of 3 splits without work: K = 256 in whole steps of 64 gives each split 128 elements of K}}
  tessel.matmul ins(%a, %b : memref<64x256xf16>, memref<256x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [32, 32, 64], waves = [1, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", splits = 3>}
  return
}

// -----

func.func @config_stream_k_negative(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{stream_k must be between 0 and 65536 workgroups, got -1}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [32, 32, 32], waves = [1, 1], stages = 1, stream_k = -1>}
  return
}

// -----

func.func @config_stream_k_and_splits(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{stream_k shares a problem's steps (a matmul's K steps, an attention's key blocks) between workgroups: it takes no splits}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [32, 32, 32], waves = [1, 1], stages = 1, splits = 2, stream_k = 4>}
  return
}

// -----

func.func @config_stream_k_attention_too_many(%q: memref<1x2x128x64xf16>, %k: memref<1x2x128x64xf16>, %v: memref<1x2x128x64xf16>, %o: memref<1x2x128x64xf16>) {
  // expected-error @+1 {{stream-K over 40 workgroups leaves some without work: the problem has 32 key-block steps in all}}
  tessel.attention ins(%q, %k, %v : memref<1x2x128x64xf16>, memref<1x2x128x64xf16>, memref<1x2x128x64xf16>) outs(%o : memref<1x2x128x64xf16>) {config = #tessel.config<tile = [32, 32], waves = [1, 1], stages = 1, stream_k = 40>}
  return
}

// -----

func.func @config_stream_k_attention_window(%q: memref<1x2x128x64xf16>, %k: memref<1x2x128x64xf16>, %v: memref<1x2x128x64xf16>, %o: memref<1x2x128x64xf16>) {
  // expected-error @+1 {{stream-K attention (stream_k = 4) takes no mask or a causal one, not a window}}
  tessel.attention ins(%q, %k, %v : memref<1x2x128x64xf16>, memref<1x2x128x64xf16>, memref<1x2x128x64xf16>) outs(%o : memref<1x2x128x64xf16>) {window = array<i64: 16, 0>, config = #tessel.config<tile = [32, 32], waves = [1, 1], stages = 1, stream_k = 4>}
  return
}

// -----

func.func @config_stream_k_attention_causal_odd(%q: memref<1x2x96x64xf16>, %k: memref<1x2x96x64xf16>, %v: memref<1x2x96x64xf16>, %o: memref<1x2x96x64xf16>) {
  // expected-error @+1 {{stream-K attention (stream_k = 4) pairs causal query blocks i and Q - 1 - i: it needs seq_q == seq_kv, an even number of whole query blocks and key blocks that divide them (seq_q 96, seq_kv 96, tile [32, 32])}}
  tessel.attention ins(%q, %k, %v : memref<1x2x96x64xf16>, memref<1x2x96x64xf16>, memref<1x2x96x64xf16>) outs(%o : memref<1x2x96x64xf16>) {causal, config = #tessel.config<tile = [32, 32], waves = [1, 1], stages = 1, stream_k = 4>}
  return
}

// -----

func.func @config_stream_k_attention_sinks(%q: memref<1x2x128x64xf16>, %k: memref<1x2x128x64xf16>, %v: memref<1x2x128x64xf16>, %o: memref<1x2x128x64xf16>, %s: memref<2xf32>) {
  // expected-error @+1 {{stream-K attention (stream_k = 4) takes one sequence per batch entry and no sinks: varlen, paged caches and sinks keep one workgroup per query block}}
  tessel.attention ins(%q, %k, %v : memref<1x2x128x64xf16>, memref<1x2x128x64xf16>, memref<1x2x128x64xf16>) outs(%o : memref<1x2x128x64xf16>) sinks(%s : memref<2xf32>) {config = #tessel.config<tile = [32, 32], waves = [1, 1], stages = 1, stream_k = 4>}
  return
}

// -----

func.func @config_stream_k_attention_too_many_steps(%q: memref<1x1024x65536x64xf16>, %k: memref<1x1024x65536x64xf16>, %v: memref<1x1024x65536x64xf16>, %o: memref<1x1024x65536x64xf16>) {
  // expected-error @+1 {{stream-K attention (stream_k = 4) counts its key-block steps in 32 bits: 4294967296 are too many}}
  tessel.attention ins(%q, %k, %v : memref<1x1024x65536x64xf16>, memref<1x1024x65536x64xf16>, memref<1x1024x65536x64xf16>) outs(%o : memref<1x1024x65536x64xf16>) {config = #tessel.config<tile = [32, 32], waves = [1, 1], stages = 1, stream_k = 4>}
  return
}

// -----

func.func @config_stream_k_attention_dynamic(%q: memref<1x2x?x64xf16>, %k: memref<1x2x?x64xf16>, %v: memref<1x2x?x64xf16>, %o: memref<1x2x?x64xf16>) {
  // expected-error @+1 {{stream-K attention (stream_k = 4) needs static shapes: the workgroups' shares of the key blocks are derived from them}}
  tessel.attention ins(%q, %k, %v : memref<1x2x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>) outs(%o : memref<1x2x?x64xf16>) {config = #tessel.config<tile = [32, 32], waves = [1, 1], stages = 1, stream_k = 4>}
  return
}

// -----

func.func @config_stream_k_attention_packed(%q: memref<1x8x4x64xf16>, %k: memref<1x2x256x64xf16>, %v: memref<1x2x256x64xf16>, %o: memref<1x8x4x64xf16>) {
  // expected-error @+1 {{stream-K attention (stream_k = 4) does not take packed query heads (4 queries per head, whose group of 4 heads fits one block of 32 rows)}}
  tessel.attention ins(%q, %k, %v : memref<1x8x4x64xf16>, memref<1x2x256x64xf16>, memref<1x2x256x64xf16>) outs(%o : memref<1x8x4x64xf16>) {config = #tessel.config<tile = [32, 32], waves = [1, 1], stages = 1, stream_k = 4>}
  return
}

// -----

func.func @config_options_order(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{expected 'instr', 'splits', 'stream_k', 'scores_ahead', 'ping_pong', 'unrolled' or 'direct_copies' (each once, in this order), got 'splits'}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [32, 32, 32], waves = [1, 1], stages = 1, stream_k = 4, splits = 2>}
  return
}

// -----

func.func @config_scores_ahead_last(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{expected 'instr', 'splits', 'stream_k', 'scores_ahead', 'ping_pong', 'unrolled' or 'direct_copies' (each once, in this order), got 'stream_k'}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [64, 32], waves = [2, 1], stages = 2, scores_ahead, stream_k = 4>}
  return
}

// -----

func.func @config_scores_ahead_value(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{'scores_ahead' is a flag: it takes no value}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [64, 32], waves = [2, 1], stages = 2, scores_ahead = true>}
  return
}

// -----

func.func @config_ping_pong_value(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{'ping_pong' is a flag: it takes no value}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 3, scores_ahead, ping_pong = 1>}
  return
}

// -----

func.func @config_ping_pong_without_scores_ahead(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{ping_pong alternates the phases of an attention key loop with the scores ahead and K and V^T double-buffered: it takes scores_ahead and stages >= 3}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 3, ping_pong>}
  return
}

// -----

func.func @config_ping_pong_stages(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{it takes scores_ahead and stages >= 3}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 2, scores_ahead, ping_pong>}
  return
}

// -----

func.func @config_ping_pong_odd_waves(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{ping_pong runs two halves of the waves a phase apart: it takes waves = [W, 1] with W even, got [1, 1]}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [32, 32], waves = [1, 1], stages = 3, scores_ahead, ping_pong>}
  return
}

// -----

func.func @config_ping_pong_padded_head_dim(%q: memref<1x1x256x200xf16>, %k: memref<1x1x256x200xf16>, %v: memref<1x1x256x200xf16>, %o: memref<1x1x256x200xf16>) {
  // expected-error @+1 {{ping_pong takes padded head dims up to 128 (a wave's O^T takes 128 registers a lane at 256), got 200}}
  tessel.attention ins(%q, %k, %v : memref<1x1x256x200xf16>, memref<1x1x256x200xf16>, memref<1x1x256x200xf16>) outs(%o : memref<1x1x256x200xf16>) {config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 3, scores_ahead, ping_pong>}
  return
}

// -----

func.func @config_ping_pong_padded_value_head_dim(%q: memref<1x1x256x128xf16>, %k: memref<1x1x256x128xf16>, %v: memref<1x1x256x160xf16>, %o: memref<1x1x256x160xf16>) {
  // expected-error @+1 {{ping_pong takes padded head dims up to 128 (a wave's O^T takes 128 registers a lane at 256), got 160}}
  tessel.attention ins(%q, %k, %v : memref<1x1x256x128xf16>, memref<1x1x256x128xf16>, memref<1x1x256x160xf16>) outs(%o : memref<1x1x256x160xf16>) {config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 3, scores_ahead, ping_pong>}
  return
}

// -----

func.func @config_ping_pong_splits(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{ping_pong is a form of the loop over whole key blocks of one sequence: it takes no paged cache, packed (varlen) sequences or splits}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 3, splits = 2, scores_ahead, ping_pong>}
  return
}

// -----

func.func @config_unrolled_value(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{'unrolled' is a flag: it takes no value}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, scores_ahead, unrolled = 2>}
  return
}

// -----

func.func @config_unrolled_without_scores_ahead(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{unrolled unrolls an attention key loop with the scores ahead and K and V^T double-buffered by two: it takes scores_ahead and stages >= 3, and no ping_pong (whose loop is unrolled by its slots where that pays)}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, unrolled>}
  return
}

// -----

func.func @config_unrolled_stages(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{it takes scores_ahead and stages >= 3, and no ping_pong}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, scores_ahead, unrolled>}
  return
}

// -----

func.func @config_unrolled_ping_pong(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{it takes scores_ahead and stages >= 3, and no ping_pong}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, scores_ahead, ping_pong, unrolled>}
  return
}

// -----

func.func @config_unrolled_splits(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{unrolled is a form of the loop over whole key blocks of one sequence: it takes no paged cache, packed (varlen) sequences or splits}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, splits = 2, scores_ahead, unrolled>}
  return
}

// -----

func.func @phase_barrier_half() {
  // expected-error @+1 {{attribute 'half' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 0 whose maximum value is 1}}
  tessel.phase_barrier half 2
  return
}

// -----

func.func @config_scores_ahead_matmul(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{scores_ahead computes an attention key loop's next S^T ahead: it takes an attention tile of [M, N]}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [32, 32, 32], waves = [1, 1], stages = 1, scores_ahead>}
  return
}

// -----

func.func @matmul_stream_k_dynamic(%a: memref<?x256xf16>, %b: memref<256x64xf16>, %c: memref<?x64xf16>) {
  // expected-error @+1 {{stream-K (stream_k = 4) needs static shapes and no batch: the workgroups' shares of the K steps and the workspace are derived from them}}
  tessel.matmul ins(%a, %b : memref<?x256xf16>, memref<256x64xf16>) outs(%c : memref<?x64xf16>) {config = #tessel.config<tile = [32, 32, 64], waves = [1, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", stream_k = 4>}
  return
}

// -----

func.func @matmul_stream_k_dynamic_c(%a: memref<64x256xf16>, %b: memref<256x64xf16>, %c: memref<?x64xf16>) {
  // expected-error @+1 {{stream-K (stream_k = 4) needs static shapes and no batch}}
  tessel.matmul ins(%a, %b : memref<64x256xf16>, memref<256x64xf16>) outs(%c : memref<?x64xf16>) {config = #tessel.config<tile = [32, 32, 64], waves = [1, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", stream_k = 4>}
  return
}

// -----

func.func @matmul_split_k_dynamic_c(%a: memref<64x256xf16>, %b: memref<256x64xf16>, %c: memref<?x64xf16>) {
  // expected-error @+1 {{split-K (splits = 2) needs static shapes: its workspace is allocated from them}}
  tessel.matmul ins(%a, %b : memref<64x256xf16>, memref<256x64xf16>) outs(%c : memref<?x64xf16>) {config = #tessel.config<tile = [32, 32, 64], waves = [1, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", splits = 2>}
  return
}

// -----

func.func @matmul_stream_k_batch(%a: memref<2x64x256xf16>, %b: memref<2x256x64xf16>, %c: memref<2x64x64xf16>) {
  // expected-error @+1 {{stream-K (stream_k = 4) needs static shapes and no batch}}
  tessel.matmul ins(%a, %b : memref<2x64x256xf16>, memref<2x256x64xf16>) outs(%c : memref<2x64x64xf16>) {config = #tessel.config<tile = [32, 32, 64], waves = [1, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", stream_k = 4>}
  return
}

// -----

func.func @matmul_stream_k_idle(%a: memref<64x128xf16>, %b: memref<128x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{stream-K over 9 workgroups leaves some without work: the problem has 8 K steps of its tiles in all}}
  tessel.matmul ins(%a, %b : memref<64x128xf16>, memref<128x64xf16>) outs(%c : memref<64x64xf16>) {config = #tessel.config<tile = [32, 32, 64], waves = [1, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", stream_k = 9>}
  return
}

// -----

func.func @matmul_extra_not_broadcastable(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xf16>, %bias: memref<64x2xf32>) {
  // expected-error @+1 {{extra operand #0 of shape [64, 2] is not broadcastable to 'c' of shape [64, 64] (trailing dimensions must match or be 1)}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<64x64xf16>) epilogue(%bias : memref<64x2xf32>) {
  ^bb0(%acc: f32, %bi: f32):
    %r = arith.truncf %acc : f32 to f16
    tessel.yield %r : f16
  }
  return
}

// -----

func.func @matmul_extra_rank(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xf16>, %bias: memref<2x64x64xf32>) {
  // expected-error @+1 {{extra operand #0 of shape [2, 64, 64] is not broadcastable to 'c' of shape [64, 64]}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<64x64xf16>) epilogue(%bias : memref<2x64x64xf32>) {
  ^bb0(%acc: f32, %bi: f32):
    %r = arith.truncf %acc : f32 to f16
    tessel.yield %r : f16
  }
  return
}

// -----

func.func @matmul_extra_element(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xf16>, %idx: memref<64xindex>) {
  // expected-error @+1 {{extra operand #0 must have an integer or float element type, got 'index'}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<64x64xf16>) epilogue(%idx : memref<64xindex>) {
  ^bb0(%acc: f32, %i: index):
    %r = arith.truncf %acc : f32 to f16
    tessel.yield %r : f16
  }
  return
}

// -----

func.func @matmul_extra_vector(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xf16>, %v: vector<4xf32>) {
  // expected-error @+1 {{extra operand #0 must be a memref or an integer, index or float scalar, got 'vector<4xf32>'}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<64x64xf16>) epilogue(%v : vector<4xf32>) {
  ^bb0(%acc: f32, %x: vector<4xf32>):
    %r = arith.truncf %acc : f32 to f16
    tessel.yield %r : f16
  }
  return
}

// -----

func.func @matmul_extras_without_epilogue(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xf16>, %s: f32) {
  // expected-error @+1 {{has 1 extra operand(s) but no epilogue region to use them}}
  "tessel.matmul"(%a, %b, %c, %s) ({}) : (memref<64x32xf16>, memref<32x64xf16>, memref<64x64xf16>, f32) -> ()
  return
}

// -----

//===----------------------------------------------------------------------===//
// tessel.matmul: epilogue region
//===----------------------------------------------------------------------===//

func.func @epilogue_arity(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xf16>, %s: f32) {
  // expected-error @+1 {{epilogue block must have 2 arguments (the accumulator, then one per extra operand), got 1}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<64x64xf16>) epilogue(%s : f32) {
  ^bb0(%acc: f32):
    %r = arith.truncf %acc : f32 to f16
    tessel.yield %r : f16
  }
  return
}

// -----

func.func @epilogue_accumulator_type(%a: memref<64x32xi8>, %b: memref<32x64xi8>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{epilogue argument #0 must be the accumulator type 'i32', got 'f32'}}
  tessel.matmul ins(%a, %b : memref<64x32xi8>, memref<32x64xi8>) outs(%c : memref<64x64xf16>) epilogue {
  ^bb0(%acc: f32):
    %r = arith.truncf %acc : f32 to f16
    tessel.yield %r : f16
  }
  return
}

// -----

func.func @epilogue_extra_type(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xf16>, %bias: memref<64xf16>) {
  // expected-error @+1 {{epilogue argument #1 must be the element type of extra operand #0 ('f16'), got 'f32'}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<64x64xf16>) epilogue(%bias : memref<64xf16>) {
  ^bb0(%acc: f32, %bi: f32):
    %r = arith.truncf %acc : f32 to f16
    tessel.yield %r : f16
  }
  return
}

// -----

func.func @epilogue_yield_type(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xf16>) {
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<64x64xf16>) epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{must yield one value of the element type of 'c' ('f16')}}
    tessel.yield %acc : f32
  }
  return
}

// -----

func.func @epilogue_yield_count(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xf16>) {
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<64x64xf16>) epilogue {
  ^bb0(%acc: f32):
    %r = arith.truncf %acc : f32 to f16
    // expected-error @+1 {{must yield one value of the element type of 'c' ('f16')}}
    tessel.yield %r, %r : f16, f16
  }
  return
}

// -----

func.func @epilogue_terminator(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{epilogue must end with tessel.yield}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<64x64xf16>) epilogue {
  ^bb0(%acc: f32):
    llvm.unreachable
  }
  return
}

// -----

func.func @epilogue_two_blocks(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %c: memref<64x64xf16>) {
  // expected-error @+1 {{region #0 ('epilogue') failed to verify constraint: region with at most 1 blocks}}
  tessel.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%c : memref<64x64xf16>) epilogue {
  ^bb0(%acc: f32):
    cf.br ^bb1
  ^bb1:
    %r = arith.constant 0.0 : f16
    tessel.yield %r : f16
  }
  return
}

// -----

func.func @yield_outside_matmul(%x: f16) {
  // expected-error @+1 {{'tessel.yield' op expects parent op 'tessel.matmul'}}
  tessel.yield %x : f16
}

// -----

//===----------------------------------------------------------------------===//
// tessel.attention
//===----------------------------------------------------------------------===//

func.func @attention_rank(%q: memref<2x77x64xf16>, %k: memref<2x1x77x64xf16>, %v: memref<2x1x77x64xf16>, %o: memref<2x1x77x64xf16>) {
  // expected-error @+1 {{operand 'q' must be a rank-4 memref [batch, heads, seq, head_dim], got rank 3}}
  tessel.attention ins(%q, %k, %v : memref<2x77x64xf16>, memref<2x1x77x64xf16>, memref<2x1x77x64xf16>) outs(%o : memref<2x1x77x64xf16>)
  return
}

// -----

func.func @attention_head_dim_stride(%q: memref<1x1x77x64xf16, strided<[4928, 4928, 1, 77]>>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x1x77x64xf16>) {
  // expected-error @+1 {{operand 'q' must be contiguous along head_dim (unit innermost stride)}}
  tessel.attention ins(%q, %k, %v : memref<1x1x77x64xf16, strided<[4928, 4928, 1, 77]>>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x1x77x64xf16>)
  return
}

// -----

func.func @attention_kv_shape(%q: memref<1x4x77x64xf16>, %k: memref<1x1x300x64xf16>, %v: memref<1x1x299x64xf16>, %o: memref<1x4x77x64xf16>) {
  // expected-error @+1 {{[batch, heads, seq] differs: 'k' is [1, 1, 300, 64] but 'v' is [1, 1, 299, 64]}}
  tessel.attention ins(%q, %k, %v : memref<1x4x77x64xf16>, memref<1x1x300x64xf16>, memref<1x1x299x64xf16>) outs(%o : memref<1x4x77x64xf16>)
  return
}

// -----

func.func @attention_o_shape(%q: memref<1x4x77x64xf16>, %k: memref<1x1x300x64xf16>, %v: memref<1x1x300x64xf16>, %o: memref<1x4x78x64xf16>) {
  // expected-error @+1 {{[batch, heads, seq] differs: 'q' is [1, 4, 77, 64] but 'o' is [1, 4, 78, 64]}}
  tessel.attention ins(%q, %k, %v : memref<1x4x77x64xf16>, memref<1x1x300x64xf16>, memref<1x1x300x64xf16>) outs(%o : memref<1x4x78x64xf16>)
  return
}

// -----

func.func @attention_batch(%q: memref<2x4x77x64xf16>, %k: memref<3x1x300x64xf16>, %v: memref<3x1x300x64xf16>, %o: memref<2x4x77x64xf16>) {
  // expected-error @+1 {{batch differs: 'q' is [2, 4, 77, 64] but 'k' is [3, 1, 300, 64]}}
  tessel.attention ins(%q, %k, %v : memref<2x4x77x64xf16>, memref<3x1x300x64xf16>, memref<3x1x300x64xf16>) outs(%o : memref<2x4x77x64xf16>)
  return
}

// -----

// V and O share the values' head dim (which may differ from Q's and K's).
func.func @attention_value_head_dim(%q: memref<1x4x77x192xf16>, %k: memref<1x1x300x192xf16>, %v: memref<1x1x300x128xf16>, %o: memref<1x4x77x192xf16>) {
  // expected-error @+1 {{head_dim differs: 'v' is [1, 1, 300, 128] but 'o' is [1, 4, 77, 192]}}
  tessel.attention ins(%q, %k, %v : memref<1x4x77x192xf16>, memref<1x1x300x192xf16>, memref<1x1x300x128xf16>) outs(%o : memref<1x4x77x192xf16>)
  return
}

// -----

func.func @attention_dynamic_value_head_dim(%q: memref<1x4x77x64xf16>, %k: memref<1x1x300x64xf16>, %v: memref<1x1x300x?xf16>, %o: memref<1x4x77x?xf16>) {
  // expected-error @+1 {{operand 'v' must have a static head_dim, got [1, 1, 300, ?]}}
  tessel.attention ins(%q, %k, %v : memref<1x4x77x64xf16>, memref<1x1x300x64xf16>, memref<1x1x300x?xf16>) outs(%o : memref<1x4x77x?xf16>)
  return
}

// -----

func.func @attention_head_dim(%q: memref<1x4x77x64xf16>, %k: memref<1x1x300x128xf16>, %v: memref<1x1x300x128xf16>, %o: memref<1x4x77x64xf16>) {
  // expected-error @+1 {{head_dim differs: 'q' is [1, 4, 77, 64] but 'k' is [1, 1, 300, 128]}}
  tessel.attention ins(%q, %k, %v : memref<1x4x77x64xf16>, memref<1x1x300x128xf16>, memref<1x1x300x128xf16>) outs(%o : memref<1x4x77x64xf16>)
  return
}

// -----

func.func @attention_dynamic_head_dim(%q: memref<1x4x77x?xf16>, %k: memref<1x1x300x?xf16>, %v: memref<1x1x300x?xf16>, %o: memref<1x4x77x?xf16>) {
  // expected-error @+1 {{operand 'q' must have a static head_dim, got [1, 4, 77, ?]}}
  tessel.attention ins(%q, %k, %v : memref<1x4x77x?xf16>, memref<1x1x300x?xf16>, memref<1x1x300x?xf16>) outs(%o : memref<1x4x77x?xf16>)
  return
}

// -----

func.func @attention_gqa_ratio(%q: memref<1x6x77x64xf16>, %k: memref<1x4x300x64xf16>, %v: memref<1x4x300x64xf16>, %o: memref<1x6x77x64xf16>) {
  // expected-error @+1 {{query heads (6) must be a multiple of key/value heads (4) for grouped-query attention}}
  tessel.attention ins(%q, %k, %v : memref<1x6x77x64xf16>, memref<1x4x300x64xf16>, memref<1x4x300x64xf16>) outs(%o : memref<1x6x77x64xf16>)
  return
}

// -----

func.func @attention_q_type(%q: memref<1x1x77x64xf32>, %k: memref<1x1x77x64xf32>, %v: memref<1x1x77x64xf32>, %o: memref<1x1x77x64xf32>) {
  // expected-error @+1 {{operand 'q' has element type 'f32', expected f16, bf16, f8E4M3FNUZ or f8E4M3FN}}
  tessel.attention ins(%q, %k, %v : memref<1x1x77x64xf32>, memref<1x1x77x64xf32>, memref<1x1x77x64xf32>) outs(%o : memref<1x1x77x64xf32>)
  return
}

// -----

func.func @attention_kv_type(%q: memref<1x1x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xbf16>, %o: memref<1x1x77x64xf16>) {
  // expected-error @+1 {{operand 'v' has element type 'bf16' but 'q' has 'f16'; q, k and v must share one element type}}
  tessel.attention ins(%q, %k, %v : memref<1x1x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xbf16>) outs(%o : memref<1x1x77x64xf16>)
  return
}

// -----

func.func @attention_o_type(%q: memref<1x1x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x1x77x64xi32>) {
  // expected-error @+1 {{operand 'o' has element type 'i32', expected a float type}}
  tessel.attention ins(%q, %k, %v : memref<1x1x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x1x77x64xi32>)
  return
}

// -----

func.func @attention_lse_shape(%q: memref<1x2x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x2x77x64xf16>, %lse: memref<1x2x76xf32>) {
  // expected-error @+1 {{operand 'lse' must be [batch, heads, seq_q] = [1, 2, 77], got [1, 2, 76]}}
  tessel.attention ins(%q, %k, %v : memref<1x2x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x2x77x64xf16>) lse(%lse : memref<1x2x76xf32>)
  return
}

// -----

func.func @attention_lse_type(%q: memref<1x2x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x2x77x64xf16>, %lse: memref<1x2x77xf16>) {
  // expected-error @+1 {{operand 'lse' must have element type f32, got 'f16'}}
  tessel.attention ins(%q, %k, %v : memref<1x2x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x2x77x64xf16>) lse(%lse : memref<1x2x77xf16>)
  return
}

// -----

func.func @attention_window_size(%q: memref<1x2x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x2x77x64xf16>) {
  // expected-error @+1 {{window must be [left, right], got 1 values}}
  tessel.attention ins(%q, %k, %v : memref<1x2x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x2x77x64xf16>) {window = array<i64: 16>}
  return
}

// -----

func.func @attention_window_bound(%q: memref<1x2x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x2x77x64xf16>) {
  // expected-error @+1 {{window right must be -1 (unbounded) or 0 to 2^31 - 1 keys (the kernels' 32-bit key offsets), got -2}}
  tessel.attention ins(%q, %k, %v : memref<1x2x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x2x77x64xf16>) {window = array<i64: 16, -2>}
  return
}

// -----

func.func @attention_window_too_wide(%q: memref<1x2x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x2x77x64xf16>) {
  // expected-error @+1 {{window left must be -1 (unbounded) or 0 to 2^31 - 1 keys (the kernels' 32-bit key offsets), got 4294967296}}
  tessel.attention ins(%q, %k, %v : memref<1x2x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x2x77x64xf16>) {window = array<i64: 4294967296, 0>}
  return
}

// -----

func.func @attention_window_causal(%q: memref<1x2x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x2x77x64xf16>) {
  // expected-error @+1 {{causal sees no key after the query: window right must be 0 or -1 with causal, got 4}}
  tessel.attention ins(%q, %k, %v : memref<1x2x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x2x77x64xf16>) {causal, window = array<i64: 16, 4>}
  return
}

// -----

func.func @attention_sinks_shape(%q: memref<1x2x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x2x77x64xf16>, %s: memref<1xf32>) {
  // expected-error @+1 {{operand 'sinks' must be [heads] = [2], got [1]}}
  tessel.attention ins(%q, %k, %v : memref<1x2x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x2x77x64xf16>) sinks(%s : memref<1xf32>)
  return
}

// -----

func.func @attention_sinks_type(%q: memref<1x2x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x2x77x64xf16>, %s: memref<2xf16>) {
  // expected-error @+1 {{operand 'sinks' must have element type f32, got 'f16'}}
  tessel.attention ins(%q, %k, %v : memref<1x2x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x2x77x64xf16>) sinks(%s : memref<2xf16>)
  return
}

// -----

func.func @attention_sinks_strided(%q: memref<1x2x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x2x77x64xf16>, %s: memref<2xf32, strided<[2]>>) {
  // expected-error @+1 {{operand 'sinks' must be contiguous, got 'memref<2xf32, strided<[2]>>'}}
  tessel.attention ins(%q, %k, %v : memref<1x2x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x2x77x64xf16>) sinks(%s : memref<2xf32, strided<[2]>>)
  return
}

// -----

func.func @attention_scale(%q: memref<1x1x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x1x77x64xf16>) {
  // expected-error @+1 {{scale must be a positive finite number, got -1}}
  tessel.attention ins(%q, %k, %v : memref<1x1x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x1x77x64xf16>) {scale = -1.0 : f32}
  return
}

// -----

func.func @attention_config_arity(%q: memref<1x1x77x64xf16>, %k: memref<1x1x77x64xf16>, %v: memref<1x1x77x64xf16>, %o: memref<1x1x77x64xf16>) {
  // expected-error @+1 {{config tile must have 2 sizes [M, N] (query rows, keys per step) for attention, got 3}}
  tessel.attention ins(%q, %k, %v : memref<1x1x77x64xf16>, memref<1x1x77x64xf16>, memref<1x1x77x64xf16>) outs(%o : memref<1x1x77x64xf16>) {config = #tessel.config<tile = [64, 64, 32], waves = [4, 1], stages = 1>}
  return
}

// -----

//===----------------------------------------------------------------------===//
// Layout attributes
//===----------------------------------------------------------------------===//

// expected-error @+1 {{sizePerThread, threadsPerWave, waves and order must have one entry per tile dimension}}
func.func private @blocked_rank() attributes {l = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [4], order = [1, 0]>}

// -----

// expected-error @+1 {{sizePerThread, threadsPerWave and waves must be positive powers of two}}
func.func private @blocked_power_of_two() attributes {l = #tessel.blocked<sizePerThread = [1, 6], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>}

// -----

// expected-error @+1 {{order must be a permutation of 0..1}}
func.func private @blocked_order() attributes {l = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 1]>}

// -----

// expected-error @+1 {{threadsPerWave must multiply to a wave (32 or 64 lanes), got 16}}
func.func private @blocked_lanes() attributes {l = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [4, 4], waves = [4, 1], order = [1, 0]>}

// -----

// expected-error @+1 {{a workgroup has at most 1024 lanes (16 waves of 64), got 64 waves}}
func.func private @blocked_too_many_waves() attributes {l = #tessel.blocked<sizePerThread = [8, 2], threadsPerWave = [16, 4], waves = [4, 16], order = [1, 0]>}

// -----

// expected-error @+1 {{a workgroup has at most 1024 lanes (32 waves of 32), got 64 waves}}
func.func private @blocked_too_many_wave32() attributes {l = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 4], waves = [8, 8], order = [1, 0]>}

// -----

// expected-error @+1 {{unknown matrix instruction "v_mfma_f32_64x64x8_f16" (not in the matrix-instruction catalogue)}}
func.func private @mma_unknown() attributes {l = #tessel.mma<"v_mfma_f32_64x64x8_f16", waves = [1, 1]>}

// -----

// expected-error @+1 {{"v_wmma_f32_16x16x16_f16" has different layouts on gfx11 and gfx12: name the chip (chip = "gfx1100" or "gfx1201")}}
func.func private @mma_ambiguous() attributes {l = #tessel.mma<"v_wmma_f32_16x16x16_f16", waves = [1, 1]>}

// -----

// expected-error @+1 {{unknown chip "gfx1030"; known chips: gfx90a, gfx942, gfx950, gfx1100, gfx1201}}
func.func private @mma_chip() attributes {l = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1], chip = "gfx1030">}

// -----

// expected-error @+1 {{"v_mfma_f32_16x16x8_xf32" is not available on gfx950 (it is on gfx942)}}
func.func private @mma_not_on_chip() attributes {l = #tessel.mma<"v_mfma_f32_16x16x8_xf32", waves = [1, 1], chip = "gfx950">}

// -----

// expected-error @+1 {{waves must be two positive powers of two [along M, along N]}}
func.func private @mma_waves() attributes {l = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [3, 1]>}

// -----

// expected-error @+1 {{"v_mfma_f32_32x32x8_f16" does not run in wave32}}
func.func private @mma_wave_size() attributes {l = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1], waveSize = 32>}

// -----

// expected-error @+1 {{transposed needs a square MFMA instruction (its A and B lane layouts swap), got "v_wmma_f32_16x16x16_f16"}}
func.func private @mma_transposed_wmma() attributes {l = #tessel.mma<"v_wmma_f32_16x16x16_f16", waves = [1, 1], chip = "gfx1201", transposed>}

// -----

// expected-error @+1 {{expected 'chip', then 'waveSize', then 'transposed', got 'chip'}}
func.func private @mma_transposed_order() attributes {l = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1], transposed, chip = "gfx942">}

// -----

// expected-error @+1 {{'transposed' is a flag and takes no value}}
func.func private @mma_transposed_value() attributes {l = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1], transposed = true>}

// -----

// expected-error @+1 {{expected '=' after 'chip'}}
func.func private @mma_chip_without_value() attributes {l = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1], chip "gfx942">}

// -----

// expected-error @+1 {{kWidth must be a power of two (a multiple or a fraction of the 4 elements per lane of v_mfma_f32_16x16x16_f16), got 6}}
func.func private @operand_kwidth() attributes {l = #tessel.mma_operand<a, #tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [1, 1]>, kWidth = 6>}

// -----

// expected-error @+1 {{kWidth of a WMMA operand must be its 8 elements per lane, got 16}}
func.func private @operand_wmma_kwidth() attributes {l = #tessel.mma_operand<b, #tessel.mma<"v_wmma_f32_16x16x16_f16", waves = [1, 1], chip = "gfx1201">, kWidth = 16>}

// -----

// expected-error @+1 {{expected operand 'a' or 'b', got 'c'}}
func.func private @operand_index() attributes {l = #tessel.mma_operand<c, #tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [1, 1]>, kWidth = 4>}

// -----

// expected-error @+1 {{vec, perPhase and maxPhase must be positive powers of two}}
func.func private @swizzle_power_of_two() attributes {l = #tessel.swizzle<vec = 8, perPhase = 3, maxPhase = 8>}

// -----

// expected-error @+1 {{order must be [1, 0] or [0, 1]}}
func.func private @swizzle_order() attributes {l = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8, order = [2, 0]>}

// -----

// expected-error @+1 {{expected 'order' and then 'fold', got 'order'}}
func.func private @swizzle_fold_before_order() attributes {l = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8, fold = true, order = [0, 1]>}

// -----

// expected-error @+1 {{expected 'order' and then 'fold', got 'phase'}}
func.func private @swizzle_unknown_option() attributes {l = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8, phase = 2>}

// -----

// expected-error @+1 {{expected 'true' or 'false'}}
func.func private @swizzle_fold_not_bool() attributes {l = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8, fold = 1>}

// -----

// expected-error @+1 {{every basis must have the same number (at least one) of coordinates}}
func.func private @linear_ragged() attributes {l = #tessel.linear<register = [[0, 1]], lane = [[1]]>}

// -----

// expected-error @+1 {{unknown input dimension 'thread'; expected register, lane, wave, block or offset}}
func.func private @linear_dim() attributes {l = #tessel.linear<thread = [[0, 1]]>}

// -----

// expected-error @+1 {{'lane' appears twice}}
func.func private @linear_twice() attributes {l = #tessel.linear<lane = [[0, 1]], lane = [[1, 0]]>}

// -----

// expected-error @+1 {{basis coordinates must be non-negative}}
func.func private @linear_negative() attributes {l = #tessel.linear<lane = [[0, -1]]>}

// -----

//===----------------------------------------------------------------------===//
// Layouts as tensor encodings: the layout must fit the tile
//===----------------------------------------------------------------------===//

#blocked = #tessel.blocked<sizePerThread = [1, 64], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>
// expected-error @+1 {{sizePerThread[1] = 64 exceeds the tile's size 32 in that dimension}}
func.func private @blocked_wider_than_tile(tensor<64x32xbf16, #blocked>)

// -----

// A huge sizePerThread is rejected before any code expands it.
#blocked = #tessel.blocked<sizePerThread = [1, 1073741824], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>
// expected-error @+1 {{sizePerThread[1] = 1073741824 exceeds the tile's size 32 in that dimension}}
func.func private @blocked_huge(tensor<64x32xbf16, #blocked>)

// -----

#blocked = #tessel.blocked<sizePerThread = [128, 32], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>
// expected-error @+1 {{puts 2^12 elements of the tile in each lane; at most 2^11 fit a lane's 512 registers}}
func.func private @blocked_registers(tensor<128x64xf32, #blocked>)

// -----

#mma = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
// expected-error @+1 {{puts 2^12 elements of the tile in each lane; at most 2^11 fit a lane's 512 registers}}
func.func private @mma_registers(tensor<512x512xf32, #mma>)

// -----

#mma = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
// expected-error @+1 {{must have static sizes, got a dynamic one}}
func.func private @mma_dynamic(tensor<?x64xf32, #mma>)

// -----

#mma = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
// expected-error @+1 {{must have sizes from 1 to 65536, got 131072}}
func.func private @mma_too_long(tensor<131072x1xf32, #mma>)

// -----

#linear = #tessel.linear<register = [[0, 1]], lane = [[1, 0]]>
// expected-error @+1 {{may hold at most 1048576 elements}}
func.func private @linear_too_many(tensor<2048x1024xf32, #linear>)

// -----

#blk = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [1, 1], order = [1, 0]>
func.func @load_in_bounds_too_small(%a: memref<4x64xf16>, %i: index) {
  // expected-error @+1 {{in_bounds claims a tile of 8 inside dimension 0 of 'memref<4x64xf16>', which is smaller}}
  %t = tessel.load %a[%i, %i] in_bounds : memref<4x64xf16> -> tensor<8x64xf16, #blk>
  return
}

// -----

#blk = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [1, 1], order = [1, 0]>
func.func @store_in_bounds_too_small(%t: tensor<8x64xf16, #blk>, %c: memref<8x32xf16>, %i: index) {
  // expected-error @+1 {{in_bounds claims a tile of 64 inside dimension 1 of 'memref<8x32xf16>', which is smaller}}
  tessel.store %t, %c[%i, %i] in_bounds : tensor<8x64xf16, #blk>, memref<8x32xf16>
  return
}

// -----

func.func @split_arrive_indices(%counters: memref<4x8xi32>, %i: index) {
  // expected-error @+1 {{needs 2 indices for its 2-d counters, got 1}}
  %last = tessel.split_arrive %counters[%i] splits = 4 : memref<4x8xi32>
  return
}

// -----

func.func @split_arrive_no_count(%counters: memref<4x8xi32>, %i: index) {
  // expected-error @+1 {{takes either a constant `splits` or a `count` operand (how many workgroups arrive), not neither}}
  %last = tessel.split_arrive %counters[%i, %i] : memref<4x8xi32>
  return
}

// -----

func.func @split_arrive_both_counts(%counters: memref<4x8xi32>, %i: index) {
  // expected-error @+1 {{takes either a constant `splits` or a `count` operand (how many workgroups arrive), not both}}
  %last = tessel.split_arrive %counters[%i, %i] splits = 4 count %i : memref<4x8xi32>
  return
}

// -----

func.func @split_arrive_one_split(%counters: memref<4x8xi32>, %i: index) {
  // expected-error @+1 {{attribute 'splits' failed to satisfy constraint}}
  %last = tessel.split_arrive %counters[%i, %i] splits = 1 : memref<4x8xi32>
  return
}

// -----

#acc = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#wrong = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
func.func @reduce_wrong_result(%s: tensor<32x32xf32, #acc>) {
  // expected-error @+1 {{result must be 'tensor<32x1xf32, #tessel.linear<register = [[1, 0], [2, 0], [8, 0], [16, 0]], lane = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [4, 0]]>>': size 1 along the reduced dimension, held by the lanes that held its rows or columns}}
  %m = tessel.reduce "max" %s along 1 : tensor<32x32xf32, #acc> -> tensor<1x32xf32, #wrong>
  return
}

// -----

#acc = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#column = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
func.func @reduce_within_lanes_wrong_result(%s: tensor<32x32xf32, #acc>) {
  // expected-error @+1 {{result must be 'tensor<2x32xf32, #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 0]]>>': one position along the reduced dimension per group of lanes that held it}}
  %m = tessel.reduce "add" %s along 0 within_lanes : tensor<32x32xf32, #acc> -> tensor<1x32xf32, #column>
  return
}

// -----

#split = #tessel.linear<lane = [[0, 1]], wave = [[1, 0]]>
#halves = #tessel.linear<lane = [[0, 1]], wave = [[1, 0]]>
func.func @reduce_within_lanes_across_waves(%s: tensor<2x2xf32, #split>) {
  // expected-error @+1 {{a reduction within lanes needs the reduced dimension within each wave}}
  %m = tessel.reduce "add" %s along 0 within_lanes : tensor<2x2xf32, #split> -> tensor<2x2xf32, #halves>
  return
}

// -----

#acc = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
func.func @reduce_kind(%s: tensor<32x32xf32, #acc>) {
  // expected-error @+1 {{kind must be max or add, got 'min'}}
  %m = tessel.reduce "min" %s along 1 : tensor<32x32xf32, #acc> -> tensor<32x32xf32, #acc>
  return
}

// -----

#mixed = #tessel.linear<register = [[1, 1]], lane = [[0, 1], [1, 0]]>
#row = #tessel.linear<lane = [[0, 1], [0, 0]]>
func.func @reduce_mixed_bases(%s: tensor<2x2xf32, #mixed>) {
  // expected-error @+1 {{reductions need a layout whose bases move along one dimension each}}
  %m = tessel.reduce "add" %s along 0 : tensor<2x2xf32, #mixed> -> tensor<1x2xf32, #row>
  return
}

// -----

#acc = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#column = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
func.func @broadcast_sizes(%m: tensor<1x32xf32, #column>) {
  // expected-error @+1 {{dimension 1 of 'tensor<1x32xf32, #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>>' must be 1 or that of 'tensor<32x64xf32, #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>>'}}
  %w = tessel.broadcast %m : tensor<1x32xf32, #column> -> tensor<32x64xf32, #acc>
  return
}

// -----

#acc = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#column = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
func.func @broadcast_element(%m: tensor<1x32xf32, #column>) {
  // expected-error @+1 {{element types differ}}
  %w = tessel.broadcast %m : tensor<1x32xf32, #column> -> tensor<32x32xf16, #acc>
  return
}

// -----

func.func @attention_e5m2(%q: memref<1x2x64x64xf8E5M2>, %k: memref<1x2x64x64xf8E5M2>, %v: memref<1x2x64x64xf8E5M2>, %o: memref<1x2x64x64xbf16>) {
  // expected-error @+1 {{operand 'q' has element type 'f8E5M2', expected f16, bf16, f8E4M3FNUZ or f8E4M3FN}}
  tessel.attention ins(%q, %k, %v : memref<1x2x64x64xf8E5M2>, memref<1x2x64x64xf8E5M2>, memref<1x2x64x64xf8E5M2>) outs(%o : memref<1x2x64x64xbf16>)
  return
}

// -----

func.func @attention_descale_f16(%q: memref<1x2x64x64xf16>, %k: memref<1x2x64x64xf16>, %v: memref<1x2x64x64xf16>, %o: memref<1x2x64x64xf16>, %d: memref<1xf32>) {
  // expected-error @+1 {{descale applies to 8-bit float inputs, not 'f16'}}
  tessel.attention ins(%q, %k, %v : memref<1x2x64x64xf16>, memref<1x2x64x64xf16>, memref<1x2x64x64xf16>) outs(%o : memref<1x2x64x64xf16>) descale(%d, %d, %d : memref<1xf32>, memref<1xf32>, memref<1xf32>)
  return
}

// -----

func.func @attention_descale_count(%q: memref<1x2x64x64xf8E4M3FN>, %k: memref<1x2x64x64xf8E4M3FN>, %v: memref<1x2x64x64xf8E4M3FN>, %o: memref<1x2x64x64xbf16>, %d: memref<1xf32>) {
  // expected-error @+1 {{descale takes the scales of q, k and v (3 operands), got 2}}
  tessel.attention ins(%q, %k, %v : memref<1x2x64x64xf8E4M3FN>, memref<1x2x64x64xf8E4M3FN>, memref<1x2x64x64xf8E4M3FN>) outs(%o : memref<1x2x64x64xbf16>) descale(%d, %d : memref<1xf32>, memref<1xf32>)
  return
}

// -----

func.func @attention_descale_shape(%q: memref<1x2x64x64xf8E4M3FN>, %k: memref<1x2x64x64xf8E4M3FN>, %v: memref<1x2x64x64xf8E4M3FN>, %o: memref<1x2x64x64xbf16>, %d: memref<1xf32>, %h: memref<2xf32>) {
  // expected-error @+1 {{descale operands must be memref<1xf32> (one scale per tensor), got 'memref<2xf32>'}}
  tessel.attention ins(%q, %k, %v : memref<1x2x64x64xf8E4M3FN>, memref<1x2x64x64xf8E4M3FN>, memref<1x2x64x64xf8E4M3FN>) outs(%o : memref<1x2x64x64xbf16>) descale(%d, %d, %h : memref<1xf32>, memref<1xf32>, memref<2xf32>)
  return
}

// -----
// tessel.attention_grad

// -----

func.func @grad_stream_k(%q: memref<1x4x77x64xf16>, %k: memref<1x2x90x64xf16>, %v: memref<1x2x90x64xf16>, %o: memref<1x4x77x64xf16>, %do: memref<1x4x77x64xf16>, %lse: memref<1x4x77xf32>, %dq: memref<1x4x77x64xf16>, %dk: memref<1x2x90x64xf16>, %dv: memref<1x2x90x64xf16>) {
  // expected-error @+1 {{the attention backward has no stream-K form (stream_k = 4)}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77xf32>) outs(%dq, %dk, %dv : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>) {config = #tessel.config<tile = [64, 16], waves = [4, 1], stages = 1, stream_k = 4>}
  return
}

// -----

func.func @grad_scores_ahead(%q: memref<1x4x77x64xf16>, %k: memref<1x2x90x64xf16>, %v: memref<1x2x90x64xf16>, %o: memref<1x4x77x64xf16>, %do: memref<1x4x77x64xf16>, %lse: memref<1x4x77xf32>, %dq: memref<1x4x77x64xf16>, %dk: memref<1x2x90x64xf16>, %dv: memref<1x2x90x64xf16>) {
  // expected-error @+1 {{scores_ahead is a forward key-loop form; the attention backward takes none}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77xf32>) outs(%dq, %dk, %dv : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>) {config = #tessel.config<tile = [64, 16], waves = [4, 1], stages = 1, scores_ahead>}
  return
}

// -----

func.func @grad_o_shape(%q: memref<1x4x77x64xf16>, %k: memref<1x2x90x64xf16>, %v: memref<1x2x90x64xf16>, %o: memref<1x4x77x64xf16>, %do: memref<1x4x76x64xf16>, %lse: memref<1x4x77xf32>, %dq: memref<1x4x77x64xf16>, %dk: memref<1x2x90x64xf16>, %dv: memref<1x2x90x64xf16>) {
  // expected-error @+1 {{operand 'grad_o' must be shaped as 'o' [1, 4, 77, 64], got [1, 4, 76, 64]}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>, memref<1x4x77x64xf16>, memref<1x4x76x64xf16>, memref<1x4x77xf32>) outs(%dq, %dk, %dv : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>)
  return
}

// -----

func.func @grad_k_shape(%q: memref<1x4x77x64xf16>, %k: memref<1x2x90x64xf16>, %v: memref<1x2x90x64xf16>, %o: memref<1x4x77x64xf16>, %do: memref<1x4x77x64xf16>, %lse: memref<1x4x77xf32>, %dq: memref<1x4x77x64xf16>, %dk: memref<1x2x91x64xf16>, %dv: memref<1x2x90x64xf16>) {
  // expected-error @+1 {{operand 'grad_k' must be shaped as 'k' [1, 2, 90, 64], got [1, 2, 91, 64]}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77xf32>) outs(%dq, %dk, %dv : memref<1x4x77x64xf16>, memref<1x2x91x64xf16>, memref<1x2x90x64xf16>)
  return
}

// -----

func.func @grad_kv_heads(%q: memref<1x4x77x64xf16>, %k: memref<1x3x90x64xf16>, %v: memref<1x3x90x64xf16>, %o: memref<1x4x77x64xf16>, %do: memref<1x4x77x64xf16>, %lse: memref<1x4x77xf32>, %dq: memref<1x4x77x64xf16>, %dk: memref<1x3x90x64xf16>, %dv: memref<1x3x90x64xf16>) {
  // expected-error @+1 {{query heads (4) must be a multiple of key/value heads (3)}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf16>, memref<1x3x90x64xf16>, memref<1x3x90x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77xf32>) outs(%dq, %dk, %dv : memref<1x4x77x64xf16>, memref<1x3x90x64xf16>, memref<1x3x90x64xf16>)
  return
}

// -----

func.func @grad_fp8(%q: memref<1x4x77x64xf8E4M3FNUZ>, %k: memref<1x2x90x64xf8E4M3FNUZ>, %v: memref<1x2x90x64xf8E4M3FNUZ>, %o: memref<1x4x77x64xf8E4M3FNUZ>, %do: memref<1x4x77x64xf8E4M3FNUZ>, %lse: memref<1x4x77xf32>, %dq: memref<1x4x77x64xf32>, %dk: memref<1x2x90x64xf32>, %dv: memref<1x2x90x64xf32>) {
  // expected-error @+1 {{operand 'q' has element type 'f8E4M3FNUZ', expected f16 or bf16 (the backward has no 8-bit form)}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf8E4M3FNUZ>, memref<1x2x90x64xf8E4M3FNUZ>, memref<1x2x90x64xf8E4M3FNUZ>, memref<1x4x77x64xf8E4M3FNUZ>, memref<1x4x77x64xf8E4M3FNUZ>, memref<1x4x77xf32>) outs(%dq, %dk, %dv : memref<1x4x77x64xf32>, memref<1x2x90x64xf32>, memref<1x2x90x64xf32>)
  return
}

// -----

func.func @grad_o_type(%q: memref<1x4x77x64xf16>, %k: memref<1x2x90x64xf16>, %v: memref<1x2x90x64xf16>, %o: memref<1x4x77x64xbf16>, %do: memref<1x4x77x64xbf16>, %lse: memref<1x4x77xf32>, %dq: memref<1x4x77x64xf16>, %dk: memref<1x2x90x64xf16>, %dv: memref<1x2x90x64xf16>) {
  // expected-error @+1 {{operand 'o' has element type 'bf16' but 'q' has 'f16'; q, k, v, o and grad_o share one element type}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>, memref<1x4x77x64xbf16>, memref<1x4x77x64xbf16>, memref<1x4x77xf32>) outs(%dq, %dk, %dv : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>)
  return
}

// -----

func.func @grad_q_type(%q: memref<1x4x77x64xf16>, %k: memref<1x2x90x64xf16>, %v: memref<1x2x90x64xf16>, %o: memref<1x4x77x64xf16>, %do: memref<1x4x77x64xf16>, %lse: memref<1x4x77xf32>, %dq: memref<1x4x77x64xbf16>, %dk: memref<1x2x90x64xf16>, %dv: memref<1x2x90x64xf16>) {
  // expected-error @+1 {{operand 'grad_q' has element type 'bf16', expected 'f16' (as q) or f32}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77xf32>) outs(%dq, %dk, %dv : memref<1x4x77x64xbf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>)
  return
}

// -----

func.func @grad_lse_shape(%q: memref<1x4x77x64xf16>, %k: memref<1x2x90x64xf16>, %v: memref<1x2x90x64xf16>, %o: memref<1x4x77x64xf16>, %do: memref<1x4x77x64xf16>, %lse: memref<1x4x78xf32>, %dq: memref<1x4x77x64xf16>, %dk: memref<1x2x90x64xf16>, %dv: memref<1x2x90x64xf16>) {
  // expected-error @+1 {{operand 'lse' must be [batch, heads, seq_q] = [1, 4, 77], got [1, 4, 78]}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77x64xf16>, memref<1x4x78xf32>) outs(%dq, %dk, %dv : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>)
  return
}

// -----

func.func @grad_lse_type(%q: memref<1x4x77x64xf16>, %k: memref<1x2x90x64xf16>, %v: memref<1x2x90x64xf16>, %o: memref<1x4x77x64xf16>, %do: memref<1x4x77x64xf16>, %lse: memref<1x4x77xf16>, %dq: memref<1x4x77x64xf16>, %dk: memref<1x2x90x64xf16>, %dv: memref<1x2x90x64xf16>) {
  // expected-error @+1 {{operand 'lse' must have element type f32, got 'f16'}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77xf16>) outs(%dq, %dk, %dv : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>)
  return
}

// -----

func.func @grad_head_dim_stride(%q: memref<1x4x77x64xf16>, %k: memref<1x2x90x64xf16>, %v: memref<1x2x90x64xf16>, %o: memref<1x4x77x64xf16>, %do: memref<1x4x77x64xf16>, %lse: memref<1x4x77xf32>, %dq: memref<1x4x77x64xf16>, %dk: memref<1x2x90x64xf16>, %dv: memref<1x2x90x64xf16, strided<[11520, 5760, 1, 90]>>) {
  // expected-error @+1 {{operand 'grad_v' must be contiguous along head_dim (unit innermost stride)}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77xf32>) outs(%dq, %dk, %dv : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16, strided<[11520, 5760, 1, 90]>>)
  return
}

// -----

func.func @grad_window_causal(%q: memref<1x4x77x64xf16>, %k: memref<1x2x90x64xf16>, %v: memref<1x2x90x64xf16>, %o: memref<1x4x77x64xf16>, %do: memref<1x4x77x64xf16>, %lse: memref<1x4x77xf32>, %dq: memref<1x4x77x64xf16>, %dk: memref<1x2x90x64xf16>, %dv: memref<1x2x90x64xf16>) {
  // expected-error @+1 {{causal sees no key after the query: window right must be 0 or -1 with causal, got 4}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77xf32>) outs(%dq, %dk, %dv : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>) {causal, window = array<i64: 8, 4>}
  return
}

// -----

func.func @grad_scale(%q: memref<1x4x77x64xf16>, %k: memref<1x2x90x64xf16>, %v: memref<1x2x90x64xf16>, %o: memref<1x4x77x64xf16>, %do: memref<1x4x77x64xf16>, %lse: memref<1x4x77xf32>, %dq: memref<1x4x77x64xf16>, %dk: memref<1x2x90x64xf16>, %dv: memref<1x2x90x64xf16>) {
  // expected-error @+1 {{scale must be a positive finite number, got -1}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77x64xf16>, memref<1x4x77xf32>) outs(%dq, %dk, %dv : memref<1x4x77x64xf16>, memref<1x2x90x64xf16>, memref<1x2x90x64xf16>) {scale = -1.0 : f32}
  return
}

// -----
// tessel.attention varlen

// -----

func.func @varlen_batch(%q: memref<2x4x?x64xf16>, %k: memref<2x2x?x64xf16>, %v: memref<2x2x?x64xf16>, %o: memref<2x4x?x64xf16>, %cq: memref<4xi32>, %ck: memref<4xi32>, %max: index) {
  // expected-error @+1 {{with varlen, operand 'q' holds the packed sequences and its batch dimension must be a static 1, got [2, 4, ?, 64]}}
  tessel.attention ins(%q, %k, %v : memref<2x4x?x64xf16>, memref<2x2x?x64xf16>, memref<2x2x?x64xf16>) outs(%o : memref<2x4x?x64xf16>) varlen(%cq, %ck, %max : memref<4xi32>, memref<4xi32>)
  return
}

// -----

func.func @varlen_lengths(%q: memref<1x4x?x64xf16>, %k: memref<1x2x?x64xf16>, %v: memref<1x2x?x64xf16>, %o: memref<1x4x?x64xf16>, %cq: memref<4xi32>, %ck: memref<5xi32>, %max: index) {
  // expected-error @+1 {{cu_seqlens_q and cu_seqlens_k must have the same size (B + 1), got 4 and 5}}
  tessel.attention ins(%q, %k, %v : memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>) outs(%o : memref<1x4x?x64xf16>) varlen(%cq, %ck, %max : memref<4xi32>, memref<5xi32>)
  return
}

// -----

func.func @varlen_rank(%q: memref<1x4x?x64xf16>, %k: memref<1x2x?x64xf16>, %v: memref<1x2x?x64xf16>, %o: memref<1x4x?x64xf16>, %cq: memref<2x2xi32>, %ck: memref<4xi32>, %max: index) {
  // expected-error @+1 {{operand 'cu_seqlens_q' must be a contiguous rank-1 memref of B + 1 cumulative lengths, got 'memref<2x2xi32>'}}
  tessel.attention ins(%q, %k, %v : memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>) outs(%o : memref<1x4x?x64xf16>) varlen(%cq, %ck, %max : memref<2x2xi32>, memref<4xi32>)
  return
}

// -----

func.func @varlen_splits(%q: memref<1x4x?x64xf16>, %k: memref<1x2x?x64xf16>, %v: memref<1x2x?x64xf16>, %o: memref<1x4x?x64xf16>, %cq: memref<4xi32>, %ck: memref<4xi32>, %max: index) {
  // expected-error @+1 {{varlen attention has no split-KV plan (splits 4)}}
  tessel.attention ins(%q, %k, %v : memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>) outs(%o : memref<1x4x?x64xf16>) varlen(%cq, %ck, %max : memref<4xi32>, memref<4xi32>) {config = #tessel.config<tile = [32, 32], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16", splits = 4>}
  return
}

// -----
// tessel.attention paged

// -----

func.func @paged_table(%q: memref<3x4x1x64xf16>, %k: memref<?x2x16x64xf16, strided<[2048, 64, 128, 1]>>, %v: memref<?x2x16x64xf16, strided<[2048, 64, 128, 1]>>, %o: memref<3x4x1x64xf16>, %table: memref<2x4xi32>, %lens: memref<3xi32>) {
  // expected-error @+1 {{operand 'block_table' must be [batch, pages per sequence] = [3, ?], got [2, 4]}}
  tessel.attention ins(%q, %k, %v : memref<3x4x1x64xf16>, memref<?x2x16x64xf16, strided<[2048, 64, 128, 1]>>, memref<?x2x16x64xf16, strided<[2048, 64, 128, 1]>>) outs(%o : memref<3x4x1x64xf16>) paged(%table, %lens : memref<2x4xi32>, memref<3xi32>)
  return
}

// -----

func.func @paged_lens(%q: memref<3x4x1x64xf16>, %k: memref<?x2x16x64xf16, strided<[2048, 64, 128, 1]>>, %v: memref<?x2x16x64xf16, strided<[2048, 64, 128, 1]>>, %o: memref<3x4x1x64xf16>, %table: memref<3x4xi32>, %lens: memref<3x1xi32>) {
  // expected-error @+1 {{operand 'context_lens' must be [batch] = [3], got [3, 1]}}
  tessel.attention ins(%q, %k, %v : memref<3x4x1x64xf16>, memref<?x2x16x64xf16, strided<[2048, 64, 128, 1]>>, memref<?x2x16x64xf16, strided<[2048, 64, 128, 1]>>) outs(%o : memref<3x4x1x64xf16>) paged(%table, %lens : memref<3x4xi32>, memref<3x1xi32>)
  return
}

// -----

func.func @paged_page_size(%q: memref<3x4x1x64xf16>, %k: memref<?x2x24x64xf16>, %v: memref<?x2x24x64xf16>, %o: memref<3x4x1x64xf16>, %table: memref<3x4xi32>, %lens: memref<3xi32>) {
  // expected-error @+1 {{the paged cache's page size (dimension 2 of 'k' and 'v') must be a static 16, 32, 64 or 128, got 24}}
  tessel.attention ins(%q, %k, %v : memref<3x4x1x64xf16>, memref<?x2x24x64xf16>, memref<?x2x24x64xf16>) outs(%o : memref<3x4x1x64xf16>) paged(%table, %lens : memref<3x4xi32>, memref<3xi32>)
  return
}

// -----

func.func @paged_block(%q: memref<3x4x1x64xf16>, %k: memref<?x2x16x64xf16, strided<[2048, 64, 128, 1]>>, %v: memref<?x2x16x64xf16, strided<[2048, 64, 128, 1]>>, %o: memref<3x4x1x64xf16>, %table: memref<3x4xi32>, %lens: memref<3xi32>) {
  // expected-error @+1 {{key blocks of 32 must divide the page size 16}}
  tessel.attention ins(%q, %k, %v : memref<3x4x1x64xf16>, memref<?x2x16x64xf16, strided<[2048, 64, 128, 1]>>, memref<?x2x16x64xf16, strided<[2048, 64, 128, 1]>>) outs(%o : memref<3x4x1x64xf16>) paged(%table, %lens : memref<3x4xi32>, memref<3xi32>) {config = #tessel.config<tile = [32, 32], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16", splits = 4>}
  return
}

// -----

func.func @grad_varlen_max_k(%q: memref<1x4x?x64xf16>, %k: memref<1x2x?x64xf16>, %lse: memref<1x4x?xf32>, %cq: memref<4xi32>, %ck: memref<4xi32>, %max: index) {
  // expected-error @+1 {{varlen takes cu_seqlens_q, cu_seqlens_k, max_seqlen_q and max_seqlen_k together}}
  "tessel.attention_grad"(%q, %k, %k, %q, %q, %lse, %q, %k, %k, %cq, %ck, %max) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0>} : (memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?xf32>, memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>, memref<4xi32>, memref<4xi32>, index) -> ()
  return
}

// -----

func.func @grad_varlen_batch(%q: memref<2x4x?x64xf16>, %k: memref<2x2x?x64xf16>, %lse: memref<2x4x?xf32>, %cq: memref<4xi32>, %ck: memref<4xi32>, %max: index) {
  // expected-error @+1 {{with varlen, operand 'q' holds the packed sequences and its batch dimension must be a static 1, got [2, 4, ?, 64]}}
  tessel.attention_grad ins(%q, %k, %k, %q, %q, %lse : memref<2x4x?x64xf16>, memref<2x2x?x64xf16>, memref<2x2x?x64xf16>, memref<2x4x?x64xf16>, memref<2x4x?x64xf16>, memref<2x4x?xf32>) outs(%q, %k, %k : memref<2x4x?x64xf16>, memref<2x2x?x64xf16>, memref<2x2x?x64xf16>) varlen(%cq, %ck, %max, %max : memref<4xi32>, memref<4xi32>)
  return
}

// -----

#mma = #tessel.mma<"v_mfma_f32_32x32x2_f32", waves = [1, 2]>
#mma_operand = #tessel.mma_operand<b, #mma, kWidth = 4>
#swizzle = #tessel.swizzle<vec = 4, perPhase = 1, maxPhase = 1>
func.func @transposed_read_f32() {
  %c0 = arith.constant 0 : index
  %buffer = tessel.local_alloc : !tessel.lds<1 x[32, 64], f32, #swizzle>
  // expected-error @+1 {{transposed reads move 16-bit elements, not 'f32'}}
  %t = tessel.local_load %buffer[%c0] transposed : !tessel.lds<1 x[32, 64], f32, #swizzle> -> tensor<32x64xf32, #mma_operand>
  return
}

// -----

#mma = #tessel.mma<"v_mfma_f32_32x32x16_bf16", waves = [1, 2]>
#mma_operand = #tessel.mma_operand<b, #mma, kWidth = 8>
#swizzle = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 1, order = [0, 1]>
func.func @transposed_read_k_contiguous() {
  %c0 = arith.constant 0 : index
  %buffer = tessel.local_alloc : !tessel.lds<1 x[32, 64], bf16, #swizzle>
  // expected-error @+1 {{transposed read: the buffer's layout does not give each lane four consecutive elements (the register bit 0 steps 32 elements)}}
  %t = tessel.local_load %buffer[%c0] transposed : !tessel.lds<1 x[32, 64], bf16, #swizzle> -> tensor<32x64xbf16, #mma_operand>
  return
}

// -----

func.func @wave_any_without_layout(%grown: tensor<1x128xi1>) -> i1 {
  // expected-error @+1 {{tile 'tensor<1x128xi1>' has no layout encoding}}
  %any = tessel.wave_any %grown : tensor<1x128xi1>
  return %any : i1
}

// -----

#acc = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
func.func @wave_any_of_floats(%s: tensor<32x32xf32, #acc>) -> i1 {
  // expected-error @+1 {{operand #0 must be ranked tensor of 1-bit signless integer values}}
  %any = tessel.wave_any %s : tensor<32x32xf32, #acc>
  return %any : i1
}

// -----

func.func @config_direct_copies_attention(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{direct_copies copies a matmul's K-loop operands into two LDS slots: it takes a matmul tile of [M, N, K] and stages = 2}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, direct_copies>}
  return
}

// -----

func.func @config_direct_copies_stages(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %c: memref<256x256xbf16>) {
  // expected-error @+1 {{direct_copies copies a matmul's K-loop operands into two LDS slots: it takes a matmul tile of [M, N, K] and stages = 2}}
  tessel.matmul ins(%a, %b : memref<256x256xbf16>, memref<256x256xbf16>) outs(%c : memref<256x256xbf16>) {config = #tessel.config<tile = [128, 128, 32], waves = [2, 2], stages = 1, direct_copies>}
  return
}

// -----

#swizzle = #tessel.swizzle<vec = 8, perPhase = 4, maxPhase = 4>
func.func @copy_without_in_bounds(%a: memref<4096x4096xbf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %buffer = tessel.local_alloc : !tessel.lds<1 x[256, 32], bf16, #swizzle>
  // expected-error @+1 {{copies have no masks: the tile must be in_bounds}}
  tessel.copy_to_local %a[%i, %c0], %buffer[%c0] : memref<4096x4096xbf16>, !tessel.lds<1 x[256, 32], bf16, #swizzle>
  return
}

// -----

#swizzle = #tessel.swizzle<vec = 4, perPhase = 1, maxPhase = 8>
func.func @copy_splitting_runs(%a: memref<4096x4096xbf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %buffer = tessel.local_alloc : !tessel.lds<1 x[256, 32], bf16, #swizzle>
  // expected-error @+1 {{the buffer's layout splits the 16-byte runs of dimension 1 (the memref's contiguous one) that copies move}}
  tessel.copy_to_local %a[%i, %c0], %buffer[%c0] in_bounds : memref<4096x4096xbf16>, !tessel.lds<1 x[256, 32], bf16, #swizzle>
  return
}

// -----

#swizzle = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 1>
func.func @copy_across_runs(%bt: memref<4096x4096xbf16, strided<[1, 4096]>>, %i: index) {
  %c0 = arith.constant 0 : index
  %buffer = tessel.local_alloc : !tessel.lds<1 x[32, 256], bf16, #swizzle>
  // expected-error @+1 {{the buffer's layout splits the 16-byte runs of dimension 0 (the memref's contiguous one) that copies move}}
  tessel.copy_to_local %bt[%c0, %i], %buffer[%c0] in_bounds : memref<4096x4096xbf16, strided<[1, 4096]>>, !tessel.lds<1 x[32, 256], bf16, #swizzle>
  return
}

// -----

#swizzle = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 1>
func.func @copy_part_of_a_wave(%a: memref<4096x4096xbf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %buffer = tessel.local_alloc : !tessel.lds<1 x[16, 16], bf16, #swizzle>
  // expected-error @+1 {{copies to LDS move 64 x 16 bytes per wave and instruction: a slot of 256 'bf16' is not a whole number of them for 1 waves}}
  tessel.copy_to_local %a[%i, %c0], %buffer[%c0] in_bounds : memref<4096x4096xbf16>, !tessel.lds<1 x[16, 16], bf16, #swizzle>
  return
}

// -----

#swizzle = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 1>
func.func @copy_tile_too_large(%a: memref<128x4096xbf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %buffer = tessel.local_alloc : !tessel.lds<1 x[256, 32], bf16, #swizzle>
  // expected-error @+1 {{in_bounds claims a tile of 256 inside dimension 0 of 'memref<128x4096xbf16>', which is smaller}}
  tessel.copy_to_local %a[%i, %c0], %buffer[%c0] in_bounds : memref<128x4096xbf16>, !tessel.lds<1 x[256, 32], bf16, #swizzle>
  return
}
