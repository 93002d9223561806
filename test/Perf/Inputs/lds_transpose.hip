// Transposes 32x32 float tiles through LDS: the column reads of the plain
// tile make every lane of a phase hit one bank; one float of padding per row
// spreads them over all banks.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __device__ __attribute__((device))
#define TID_X __builtin_amdgcn_workitem_id_x()
#define TID_Y __builtin_amdgcn_workitem_id_y()
#define BID_X __builtin_amdgcn_workgroup_id_x()

template <int Pad>
__device__ __attribute__((always_inline)) static void transpose(const float *in,
                                                     float *out, int tiles) {
  __shared__ float tile[32][32 + Pad];
  for (int t = BID_X; t < tiles; t += 1024) {
    const float *src = in + t * 1024;
    float *dst = out + t * 1024;
    tile[TID_Y][TID_X] = src[TID_Y * 32 + TID_X];
    __builtin_amdgcn_s_barrier();
    dst[TID_Y * 32 + TID_X] = tile[TID_X][TID_Y];
    __builtin_amdgcn_s_barrier();
  }
}

extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(1024, 1024)))
void transpose_conflicted(const float *in, float *out, int tiles) {
  transpose<0>(in, out, tiles);
}

extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(1024, 1024)))
void transpose_padded(const float *in, float *out, int tiles) {
  transpose<1>(in, out, tiles);
}
