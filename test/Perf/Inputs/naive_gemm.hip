// A hand-written HIP GEMM without LDS: each lane computes one element of C.
// Built with -nogpuinc (no HIP headers), so it names the AMDGPU builtins.
#define __global__ __attribute__((global))
#define TID_X __builtin_amdgcn_workitem_id_x()
#define TID_Y __builtin_amdgcn_workitem_id_y()
#define BID_X __builtin_amdgcn_workgroup_id_x()
#define BID_Y __builtin_amdgcn_workgroup_id_y()

extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(256, 256)))
void naive_gemm(const float *a, const float *b, float *c, int n) {
  int row = BID_Y * 16 + TID_Y;
  int col = BID_X * 16 + TID_X;
  if (row >= n || col >= n)
    return;
  float acc = 0;
  for (int k = 0; k < n; ++k)
    acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}
