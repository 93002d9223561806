// Kernel quality of the split-K decode GEMM (gfx942 bf16 16x4096x4096, B
// stored N x K), with the config the model chooses. One kernel: the K loop
// on buffer loads and LDS, then the arrival at the tile (device-scope
// release, one atomic add by one lane, whether it was the last through the
// first element of the kernel's LDS, acquire for the last split) and the
// last split's sum of the partials.
//
// RUN: tessel-gen matmul -m 16 -n 4096 -k 4096 -t bf16 --transpose-b > %t.mlir
// RUN: tesselc %t.mlir --chip=gfx942 --emit=report | FileCheck %s --check-prefix=REPORT
// RUN: tesselc %t.mlir --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=ISA

// REPORT: kernel matmul (amdgcn-amd-amdhsa--gfx942)
// REPORT: scratch bytes     0
// REPORT: VGPR spills       0
// REPORT: SGPR spills       0

// ISA-LABEL: matmul:
// ISA:       buffer_load_dwordx4
// ISA:       v_mfma_f32_16x16x16_bf16
// ISA:       s_cbranch_vccz
// The partial stored (four consecutive columns per lane: the accumulator
// is transposed), released to the device, counted once by a relaxed
// device-scope atomic (`sc0`: it returns the count; no `sc1`, and no second
// write-back or system-wide invalidate around it).
// ISA:       global_store_dwordx4
// ISA:       buffer_wbl2 sc1
// ISA-NOT:   buffer_wbl2
// ISA:       global_atomic_add {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc0{{$}}
// ISA-NOT:   global_atomic
// ISA-NOT:   buffer_inv
// ISA:       ds_write_b16
// ISA:       ds_read_u16
// The last split acquires, clears the counter and sums the partials.
// ISA:       buffer_inv sc1
// ISA:       global_store_dword {{v[0-9]+}}, {{v[0-9]+}}, s
// ISA:       buffer_load_dwordx4
// ISA:       v_pk_add_f32
// ISA-NOT:   global_store_short
// ISA:       global_store_dwordx2
// ISA-NOT:   global_store_short
// ISA:       s_endpgm
