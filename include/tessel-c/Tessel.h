/*===- tessel-c/Tessel.h - Tessel's C API --------------------------*- C
-*-===*\
|*                                                                            *|
|* The one ABI for frameworks: compile Tessel IR for a chip (cached), read    *|
|* the code object and its report, and run a problem on a GPU through HIP or  *|
|* on the emulator. Functions that can fail return NULL or nonzero and leave  *|
|* a message for tesselGetLastError() (per thread). Thread-safe: one          *|
|* compiler may be used from many threads.                                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TESSEL_C_TESSEL_H
#define TESSEL_C_TESSEL_H

#include <stddef.h>
#include <stdint.h>

/* Tessel's version (the project's one version; CMake reads it from here).
 * 0.x releases make no ABI promise between minor versions: the shared
 * library's SONAME carries major.minor. */
#define TESSEL_VERSION_MAJOR 0
#define TESSEL_VERSION_MINOR 1
#define TESSEL_VERSION_PATCH 0
/* One number that orders versions: 10000 * major + 100 * minor + patch. */
#define TESSEL_VERSION                                                         \
  (10000 * TESSEL_VERSION_MAJOR + 100 * TESSEL_VERSION_MINOR +                 \
   TESSEL_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

#define TESSEL_C_API __attribute__((visibility("default")))

typedef struct TesselCompiler TesselCompiler;
typedef struct TesselModule TesselModule;

typedef enum TesselDevice {
  /* HIP when a GPU is present, else the emulator. */
  TESSEL_DEVICE_AUTO = 0,
  TESSEL_DEVICE_HIP = 1,
  TESSEL_DEVICE_EMULATOR = 2,
} TesselDevice;

/* A host array of `rank` dimensions (0 to TESSEL_MAX_RANK), `bytes` long.
 * `strides` (in elements, one per dimension) may be NULL: the array is then
 * dense in the order of the kernel's layout (row-major, or column-major
 * for an operand the kernel reads transposed; see tesselModuleGetArgument).
 * A scalar argument (e.g. a matmul's f32 alpha) has rank TESSEL_SCALAR_RANK:
 * `data` points to its value and `bytes` is its size (4 or 8); shape and
 * strides are unused. Every argument is checked against the kernel before
 * anything runs. */
typedef struct TesselBuffer {
  void *data;
  size_t bytes;
  int32_t rank;
  const int64_t *shape;
  const int64_t *strides;
} TesselBuffer;

#define TESSEL_MAX_RANK 8
#define TESSEL_SCALAR_RANK (-1)

/* Optional: the problem's sizes are derived from the arrays; a nonzero
 * field here must agree with them (a check, not an override). */
typedef struct TesselProblemSizes {
  int64_t m, n, batch;  /* matmul (batch 0: not batched) */
  int64_t seq_q, heads; /* attention (batch shared) */
} TesselProblemSizes;

/* One argument of a problem as the compiled kernel takes it. The strings
 * and arrays are owned by the module. */
typedef struct TesselArgumentInfo {
  int32_t is_array;         /* else a scalar */
  const char *element_type; /* "f16", "bf16", "f32", "i8", "i32", ... */
  uint32_t element_bytes;
  int32_t rank;
  const int64_t *shape;   /* -1: set at run time */
  const int64_t *strides; /* -1: dense in the layout's order */
  int32_t written;        /* the kernel writes it (an output) */
} TesselArgumentInfo;

typedef struct TesselCacheStats {
  uint64_t memory_hits, disk_hits, misses, corrupt_entries, write_failures;
} TesselCacheStats;

/* The last error of this thread ("" if none). */
TESSEL_C_API const char *tesselGetLastError(void);

/* The library's version as TESSEL_VERSION computes it (compare with the
 * header's TESSEL_VERSION to catch a mismatched library), and as text:
 * "0.1.0 (git 1234abcd, LLVM 22.1.0)". */
TESSEL_C_API int tesselGetVersionNumber(void);
TESSEL_C_API const char *tesselGetVersion(void);

/* A compiler whose disk cache is `cache_directory`: NULL reads
 * TESSEL_CACHE_DIR (default ~/.cache/tessel), "" disables the disk cache. */
TESSEL_C_API TesselCompiler *tesselCompilerCreate(const char *cache_directory);
TESSEL_C_API void tesselCompilerDestroy(TesselCompiler *compiler);
TESSEL_C_API void tesselCompilerGetCacheStats(TesselCompiler *compiler,
                                              TesselCacheStats *stats);

/* Compiles MLIR text for `chip` (e.g. "gfx942"); NULL on error. Code
 * objects are version 5 (every ROCm 6 runtime loads them);
 * TESSEL_CODE_OBJECT_VERSION=4 or 6 asks for another (4 for ROCm 5
 * runtimes, 6 needs ROCm 6.3). */
TESSEL_C_API TesselModule *tesselCompile(TesselCompiler *compiler,
                                         const char *ir, const char *chip);
/* Problem descriptions (zero-initialize, then set what matters; NULL
 * strings take the defaults of tessel/Problems/Problems.h). */
typedef struct TesselMatmulProblem {
  const char *name;                     /* "matmul" */
  int64_t m, n, k, batch;               /* batch 0: not batched */
  const char *a_type, *b_type, *c_type; /* "f16"; b as a; c derived */
  int32_t transpose_a, transpose_b;     /* operands stored column-major */
  const char *bias;                     /* "none", "m" or "n" */
  int32_t residual;                     /* adds a C-shaped argument */
  const char *activation;               /* "none", "relu", "gelu", "silu" */
  int32_t alpha; /* nonzero: the product is scaled by an f32 argument */
  /* Dequantization scales (f32 arguments after alpha, as torch._scaled_mm):
     scale_a "none", "tensor" (one value) or "row" (one per row of A);
     scale_b "none", "tensor" or "column" (one per column of B). */
  const char *scale_a, *scale_b;
  /* Sizes passed at run time, comma-separated: "m", "n", "k", "batch". */
  const char *dynamic;
  const char *config; /* a #tessel.config<...>; NULL: the compiler chooses */
} TesselMatmulProblem;

typedef struct TesselAttentionProblem {
  const char *name;               /* "attention" */
  int64_t batch, heads, kv_heads; /* kv_heads 0: heads */
  int64_t seq_q, seq_kv, head_dim;
  const char *type; /* "f16" */
  int32_t causal;
  float scale;       /* used when has_scale; else 1/sqrt(head_dim) */
  int32_t lse;       /* also write the logsumexp */
  int32_t has_scale; /* nonzero: `scale` is given (0 is then an error) */
  /* Local attention (nonzero has_window): query position p sees keys
     p - window_left .. p + window_right, -1 unbounded on that side. */
  int32_t has_window;
  int64_t window_left, window_right;
  int32_t sinks;      /* nonzero: one f32 sink logit per query head, last arg */
  int64_t head_dim_v; /* of V and O; 0: head_dim */
  /* Sizes passed at run time, comma-separated: "seq-q", "seq-kv", "batch". */
  const char *dynamic;
  const char *config; /* a #tessel.config<...>; NULL: the compiler chooses */
  /* 8-bit types ("f8E4M3FNUZ", "f8E4M3FN"): nonzero adds the per-tensor
     f32 descales of q, k and v (three 1-element arguments, last). */
  int32_t descale;
  const char *out_type; /* of O; NULL: the input type (bf16 for 8-bit) */
  /* Nonzero: the backward pass (tessel.attention_grad). Arguments q, k, v,
     o, do (of `type`), the forward's logsumexp (f32), then dq, dk, dv (of
     out_type; NULL: `type`). lse, sinks and descale must be 0. */
  int32_t backward;
  /* Nonzero: variable-length (packed) sequences as flash_attn_varlen_func
     takes them. q, k, v, o (and the lse) are [1, heads, total, head_dim]
     views of (total, heads, head_dim) arrays (the lse [1, heads, total_q]);
     cu_seqlens_q and cu_seqlens_k (int32, batch + 1) and max_seqlen_q (an
     8-byte integer) follow the other arguments. */
  int32_t varlen;
  /* Nonzero: a paged KV cache (vLLM's) with pages of this many keys (16,
     32, 64 or 128): k and v are [pages, kv_heads, page_size, head_dim]
     views of [pages, page_size, kv_heads, head_dim] caches; block_table
     (int32, [batch, ceil(seq_kv / page_size)]) and context_lens (int32,
     [batch]) follow the other arguments. */
  int64_t page_size;
} TesselAttentionProblem;

TESSEL_C_API TesselModule *
tesselCompileMatmul(TesselCompiler *compiler,
                    const TesselMatmulProblem *problem, const char *chip);
TESSEL_C_API TesselModule *
tesselCompileAttention(TesselCompiler *compiler,
                       const TesselAttentionProblem *problem, const char *chip);
/* The problem-level IR a description stands for (caller frees with
 * tesselFreeString); NULL on error. */
TESSEL_C_API char *tesselMatmulIR(const TesselMatmulProblem *problem);
TESSEL_C_API char *tesselAttentionIR(const TesselAttentionProblem *problem);
TESSEL_C_API void tesselFreeString(char *text);

TESSEL_C_API void tesselModuleDestroy(TesselModule *module);

TESSEL_C_API const void *tesselModuleGetCodeObject(const TesselModule *module,
                                                   size_t *size);
/* The AMDGPU assembly of the code object, generated on the first call (a
 * second backend run); NULL on error. Owned by the module. */
TESSEL_C_API const char *tesselModuleGetAssembly(TesselModule *module);
/* The resource report of every kernel, as JSON. */
TESSEL_C_API const char *tesselModuleGetReport(const TesselModule *module);
TESSEL_C_API size_t tesselModuleGetNumKernels(const TesselModule *module);
TESSEL_C_API const char *tesselModuleGetKernelName(const TesselModule *module,
                                                   size_t index);
TESSEL_C_API unsigned tesselModuleGetKernelBlockSize(const TesselModule *module,
                                                     size_t index);
TESSEL_C_API uint64_t tesselModuleGetKernelLdsBytes(const TesselModule *module,
                                                    size_t index);

/* The arguments problem `name` takes (-1 with an error if there is no such
 * problem), and argument `index` of them (0 on success). */
TESSEL_C_API int64_t tesselModuleGetNumArguments(const TesselModule *module,
                                                 const char *name);
TESSEL_C_API int tesselModuleGetArgument(const TesselModule *module,
                                         const char *name, size_t index,
                                         TesselArgumentInfo *info);

/* Runs problem `name` (the function name in the IR) over `buffers`, the
 * problem function's arguments in order, writing results into the arrays
 * the kernel writes (the others are only read). `sizes` may be NULL.
 * Returns 0 on success. */
TESSEL_C_API int tesselRun(TesselModule *module, const char *name,
                           const TesselProblemSizes *sizes,
                           const TesselBuffer *buffers, size_t count,
                           TesselDevice device);

/* Whether a HIP GPU can be used; if not, why is in tesselGetLastError(). */
TESSEL_C_API int tesselHipAvailable(void);

/*===----------------------------------------------------------------------===*
 * Device-resident runtime: arrays stay in device memory, copies and launches
 * are queued on streams (in order per stream) and return without waiting.
 * The emulator implements the same calls (its device memory is a separate,
 * checked heap; each stream runs on its own thread), so one program runs
 * with and without a GPU. Errors of queued work are reported by the next
 * synchronize of that stream (or of the context); queued host buffers must
 * stay alive until then. The default stream does not wait for the other
 * streams on the emulator (HIP's legacy null stream does): order work on
 * several streams with events. Streams and events keep their context
 * alive; destroying a context releases its memory once they are gone.
 *===----------------------------------------------------------------------===*/

typedef struct TesselContext TesselContext;
typedef struct TesselStream TesselStream;
typedef struct TesselEvent TesselEvent;

typedef enum TesselCopyKind {
  TESSEL_COPY_HOST_TO_DEVICE = 1,
  TESSEL_COPY_DEVICE_TO_HOST = 2,
  TESSEL_COPY_DEVICE_TO_DEVICE = 3,
} TesselCopyKind;

/* A device: TESSEL_DEVICE_AUTO is HIP when a GPU is present, else the
 * emulator (tesselContextGetDevice says which). NULL on error. */
TESSEL_C_API TesselContext *tesselContextCreate(TesselDevice device);
TESSEL_C_API void tesselContextDestroy(TesselContext *context);
/* TESSEL_DEVICE_HIP or TESSEL_DEVICE_EMULATOR (-1 for a bad handle). */
TESSEL_C_API int tesselContextGetDevice(const TesselContext *context);
/* Waits for all work of every stream of the context; 0 on success, else
 * the first error of any stream's queued work. */
TESSEL_C_API int tesselContextSynchronize(TesselContext *context);

/* Device memory (256-byte aligned; the emulator fills it with 0xff bytes,
 * NaN in every float type). NULL on error. Freeing waits for queued work. */
TESSEL_C_API void *tesselDeviceAlloc(TesselContext *context, size_t bytes);
TESSEL_C_API int tesselDeviceFree(TesselContext *context, void *address);
/* Copies (or sets bytes to `value`) on `stream`; with a NULL stream, on the
 * default stream, waiting for it. 0 on success. */
TESSEL_C_API int tesselMemcpy(TesselContext *context, void *destination,
                              const void *source, size_t bytes,
                              TesselCopyKind kind, TesselStream *stream);
TESSEL_C_API int tesselMemset(TesselContext *context, void *destination,
                              int value, size_t bytes, TesselStream *stream);

TESSEL_C_API TesselStream *tesselStreamCreate(TesselContext *context);
/* A hipStream_t the caller owns and keeps alive (e.g. a framework's current
 * stream); HIP contexts only. */
TESSEL_C_API TesselStream *tesselStreamWrap(TesselContext *context,
                                            void *hip_stream);
/* Waits for the stream's work (a created stream's queued work is finished
 * before it is destroyed). */
TESSEL_C_API int tesselStreamSynchronize(TesselStream *stream);
/* Later work on `stream` waits for `event`'s latest record. */
TESSEL_C_API int tesselStreamWaitEvent(TesselStream *stream,
                                       TesselEvent *event);
TESSEL_C_API void tesselStreamDestroy(TesselStream *stream);

TESSEL_C_API TesselEvent *tesselEventCreate(TesselContext *context);
/* Marks the current end of `stream` (NULL: the default stream). */
TESSEL_C_API int tesselEventRecord(TesselEvent *event, TesselStream *stream);
TESSEL_C_API int tesselEventSynchronize(TesselEvent *event);
/* 1 if the latest record has completed (or there is none), 0 if not, -1
 * on error. */
TESSEL_C_API int tesselEventQuery(TesselEvent *event);
/* Milliseconds from `start` to `stop`, both completed; 0 on success. */
TESSEL_C_API int tesselEventElapsedTime(float *milliseconds, TesselEvent *start,
                                        TesselEvent *stop);
TESSEL_C_API void tesselEventDestroy(TesselEvent *event);

/* Queues problem `name` of `module` on `stream` (NULL: the context's
 * default stream) over `buffers` in the context's device memory, the
 * problem function's arguments in order, and returns without waiting. The
 * arrays are checked against the kernel (and, on the emulator, against the
 * device memory) before anything is queued. 0 on success. */
TESSEL_C_API int tesselLaunch(TesselContext *context, TesselStream *stream,
                              TesselModule *module, const char *name,
                              const TesselProblemSizes *sizes,
                              const TesselBuffer *buffers, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* TESSEL_C_TESSEL_H */
