// A hand-scheduled ping-pong GEMM step in the style of expert AMD kernels:
// 8 waves (two per SIMD); in each K step a wave loads its share of the next
// A and B tiles into LDS at low priority, then raises its priority for a
// cluster of MFMAs fed from LDS, so the SIMD's other wave loads while this
// one multiplies. sched_barrier keeps the compiler from mixing the phases.
// Built with -nogpuinc (no HIP headers), so it names the AMDGPU builtins.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define TID_X __builtin_amdgcn_workitem_id_x()
#define BID_X __builtin_amdgcn_workgroup_id_x()

typedef float floatx16 __attribute__((ext_vector_type(16)));
typedef short shortx4 __attribute__((ext_vector_type(4)));
typedef int intx4 __attribute__((ext_vector_type(4)));

extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(512, 512)))
void pingpong_gemm(const intx4 *a, const intx4 *b, floatx16 *c, int steps) {
  // One K step of a 128x128 tile, K = 32 bf16: 8 KiB of A and of B, 512
  // lanes x 16 bytes each; two buffers.
  __shared__ intx4 ldsA[2][512], ldsB[2][512];
  unsigned lane = TID_X % 64, wave = TID_X / 64;
  floatx16 acc[4] = {};
  const intx4 *aTile = a + BID_X * 512 * steps;
  const intx4 *bTile = b + BID_X * 512 * steps;
  ldsA[0][TID_X] = aTile[TID_X];
  ldsB[0][TID_X] = bTile[TID_X];
  __builtin_amdgcn_s_barrier();
  for (int k = 0; k < steps; ++k) {
    unsigned cur = k & 1, next = cur ^ 1;
    // Memory phase, low priority: the next step's tiles.
    __builtin_amdgcn_s_setprio(0);
    intx4 nextA = aTile[(k + 1) * 512 + TID_X];
    intx4 nextB = bTile[(k + 1) * 512 + TID_X];
    __builtin_amdgcn_sched_barrier(0);
    // Compute phase, high priority: 4 MFMAs of 32x32x8 per 8-element K
    // slice, 4 slices.
    __builtin_amdgcn_s_setprio(1);
    for (int s = 0; s < 4; ++s) {
      const short *rowA = (const short *)&ldsA[cur][(wave % 2) * 256];
      const short *colB = (const short *)&ldsB[cur][(wave / 2) * 128];
      shortx4 bv = *(const shortx4 *)&colB[(s * 64 + lane) * 4 % 1024];
      for (int i = 0; i < 4; ++i) {
        shortx4 av =
            *(const shortx4 *)&rowA[((i * 4 + s) * 64 + lane) * 4 % 2048];
        acc[i] = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(av, bv, acc[i], 0,
                                                          0, 0);
      }
    }
    __builtin_amdgcn_sched_barrier(0);
    __builtin_amdgcn_s_setprio(0);
    ldsA[next][TID_X] = nextA;
    ldsB[next][TID_X] = nextB;
    __builtin_amdgcn_s_barrier();
  }
  for (int i = 0; i < 4; ++i)
    c[(BID_X * 8 + wave) * 4 * 64 + i * 64 + lane] = acc[i];
}
