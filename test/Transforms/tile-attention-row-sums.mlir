// What a key block's row sums add (tessel-tile). With f16 P on gfx942 (and
// gfx90a) the sum is over the f16 probabilities the second product
// multiplies, widened (tessel-lower-to-gpu adds them in pairs with
// v_dot2_f32_f16), and up to padded head dim 64 P is rounded toward zero
// (v_cvt_pkrtz_f16_f32); a kernel that writes the logsumexp, bf16 P and
// gfx950 sum the f32 probabilities and round P to nearest.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 128 -t f16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile{chip=gfx942})' | FileCheck %s --check-prefix=PAIRS
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile{chip=gfx942})' | FileCheck %s --check-prefix=RTZ
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 40 -t f16 --causal | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx90a}),tessel-tile{chip=gfx90a})' | FileCheck %s --check-prefix=RTZ
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 128 -t f16 --lse | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile{chip=gfx942})' | FileCheck %s --check-prefix=F32
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 128 -t bf16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile{chip=gfx942})' | FileCheck %s --check-prefix=F32
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 128 -t bf16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile{chip=gfx942})' | FileCheck %s --check-prefix=BF16
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 128 -t f16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx950}),tessel-tile{chip=gfx950})' | FileCheck %s --check-prefix=F32

// PAIRS-LABEL: func.func @attention
// PAIRS: %[[P:.*]] = math.exp2 %{{.*}} fastmath<afn> : tensor<{{[0-9]+}}x{{[0-9]+}}xf32, #mma>
// PAIRS: %[[LOW:.*]] = arith.truncf %[[P]] : tensor<{{.*}}xf32, {{.*}}> to tensor<{{.*}}xf16
// PAIRS: %[[WIDE:.*]] = arith.extf %[[LOW]]
// PAIRS: tessel.reduce "add" %[[WIDE]] along 0
// PAIRS: tessel.dot %{{.*}}, %[[LOW]]

// RTZ-LABEL: func.func @attention
// RTZ: %[[P:.*]] = math.exp2 %{{.*}} fastmath<afn> : tensor<{{[0-9]+}}x{{[0-9]+}}xf32, #mma>
// RTZ: %[[LOW:.*]] = arith.truncf %[[P]] toward_zero : tensor<{{.*}}xf32, {{.*}}> to tensor<{{.*}}xf16
// RTZ: %[[WIDE:.*]] = arith.extf %[[LOW]]
// RTZ: tessel.reduce "add" %[[WIDE]] along 0
// RTZ: tessel.dot %{{.*}}, %[[LOW]]

// F32-LABEL: func.func @attention
// F32: %[[P:.*]] = math.exp2 %{{.*}} fastmath<afn> : tensor<{{[0-9]+}}x{{[0-9]+}}xf32, #mma>
// F32-NOT: arith.extf
// F32-NOT: toward_zero
// F32: tessel.reduce "add" %[[P]] along 0

// bf16 P on gfx942 (no conversion instruction): rounded to nearest with
// ties away, the bits plus 0x8000 (tessel.paired_add: no sum carries out of
// 32 bits, so tessel-lower-to-gpu adds two registers at once), the top 16
// kept.
// BF16-LABEL: func.func @attention
// BF16: %[[P:.*]] = math.exp2 %{{.*}} fastmath<afn> : tensor<{{[0-9]+}}x{{[0-9]+}}xf32, #mma>
// BF16: %[[BITS:.*]] = arith.bitcast %[[P]]
// BF16: %[[HALF:.*]] = arith.constant dense<32768>
// BF16: %[[SUM:.*]] = arith.addi %[[BITS]], %[[HALF]] {tessel.paired_add}
// BF16: %[[SIXTEEN:.*]] = arith.constant dense<16>
// BF16: %[[TOP:.*]] = arith.shrui %[[SUM]], %[[SIXTEEN]]
// BF16: arith.trunci %[[TOP]]
