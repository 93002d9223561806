//===- KernelMetadataTest.cpp - Reading code object metadata ----*- C++ -*-===//
//
// Compiles small kernels to real HSACO code objects and checks that the
// metadata read back from their AMDHSA notes describes them.
//
//===----------------------------------------------------------------------===//

#include "tessel/Target/KernelMetadata.h"
#include "tessel/InitAllDialects.h"
#include "tessel/Pipelines/Pipelines.h"
#include "tessel/Target/Chip.h"
#include "tessel/Target/Hsaco.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace tessel;

namespace {

// A 256-lane kernel with 4 KiB of workgroup memory, a barrier and an MFMA.
constexpr const char *kKernel = R"mlir(
gpu.module @kernels {
  gpu.func @stage(%in: memref<256xf32>, %out: memref<256xf32>, %n: i32)
      workgroup(%lds: memref<1024xf32, #gpu.address_space<workgroup>>)
      kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %tid = gpu.thread_id x
    %v = memref.load %in[%tid] : memref<256xf32>
    memref.store %v, %lds[%tid] : memref<1024xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %c255 = arith.constant 255 : index
    %j = arith.subi %c255, %tid : index
    %w = memref.load %lds[%j] : memref<1024xf32, #gpu.address_space<workgroup>>
    %acc = arith.constant dense<0.0> : vector<4xf32>
    %d = amdgpu.mfma 16x16x4 %w * %w + %acc blgp = none : f32, f32, vector<4xf32>
    %e = vector.extract %d[0] : f32 from vector<4xf32>
    memref.store %e, %out[%tid] : memref<256xf32>
    gpu.return
  }
}
)mlir";

class KernelMetadataTest : public ::testing::Test {
protected:
  KernelMetadataTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Lowers and compiles `source` for `chipName` to an HSACO.
  std::vector<char> compile(llvm::StringRef source, llvm::StringRef chipName) {
    const Chip *chip = lookupChip(chipName);
    EXPECT_NE(chip, nullptr);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    PassManager pm(&context);
    TesselToROCDLOptions options;
    options.chip = chipName.str();
    buildTesselToROCDLPipeline(pm, options);
    EXPECT_TRUE(succeeded(pm.run(*module)));
    auto gpuModule = *module->getOps<gpu::GPUModuleOp>().begin();
    FailureOr<GpuModuleBinary> binary =
        compileGpuModule(gpuModule, *chip, HsacoOptions(), HsacoStage::HSACO);
    EXPECT_TRUE(succeeded(binary));
    return succeeded(binary) ? binary->hsaco : std::vector<char>();
  }

  MLIRContext context;
};

TEST_F(KernelMetadataTest, DescribesTheCompiledKernel) {
  for (llvm::StringRef chipName : {"gfx90a", "gfx942", "gfx950"}) {
    std::vector<char> hsaco = compile(kKernel, chipName);
    llvm::Expected<CodeObjectMetadata> metadata = readCodeObjectMetadata(hsaco);
    ASSERT_TRUE(bool(metadata)) << llvm::toString(metadata.takeError());
    EXPECT_EQ(metadata->target, "amdgcn-amd-amdhsa--" + chipName.str());
    EXPECT_EQ(metadata->processor(), chipName.str());
    ASSERT_EQ(metadata->kernels.size(), 1u);
    const KernelMetadata &kernel = metadata->kernels.front();
    EXPECT_EQ(kernel.name, "stage");
    EXPECT_EQ(kernel.symbol, "stage.kd");
    EXPECT_EQ(kernel.wavefrontSize, 64u);
    EXPECT_EQ(kernel.ldsBytes, 4096u);
    EXPECT_EQ(kernel.scratchBytes, 0u);
    EXPECT_EQ(kernel.vgprSpillCount, 0u);
    EXPECT_EQ(kernel.maxFlatWorkgroupSize, 256u);
    EXPECT_EQ(kernel.reqdWorkgroupSize[0], 256u);
    EXPECT_EQ(kernel.workgroupLanes(), 256u);
    EXPECT_GT(kernel.vgprCount, 0u);
    EXPECT_GT(kernel.sgprCount, 0u);
    // Two memrefs (ptr, ptr, offset, size, stride = 5 x 8 bytes each) and
    // an i32, before the hidden arguments.
    size_t explicitArgs = 0;
    for (const KernelArgument &arg : kernel.args)
      if (!llvm::StringRef(arg.valueKind).starts_with("hidden_"))
        ++explicitArgs;
    EXPECT_EQ(explicitArgs, 11u);
    EXPECT_EQ(kernel.args.front().valueKind, "global_buffer");
    EXPECT_GE(kernel.kernargSegmentSize, 84u);
  }
}

TEST_F(KernelMetadataTest, ReportCarriesOccupancy) {
  std::vector<char> hsaco = compile(kKernel, "gfx942");
  llvm::Expected<CodeObjectMetadata> metadata = readCodeObjectMetadata(hsaco);
  ASSERT_TRUE(bool(metadata));
  llvm::json::Value report =
      kernelReportToJSON(*metadata, *lookupChip("gfx942"));
  const llvm::json::Object *kernel =
      report.getAsObject()->getArray("kernels")->front().getAsObject();
  EXPECT_EQ(kernel->getInteger("lds_bytes"), 4096);
  const llvm::json::Object *occupancy = kernel->getObject("occupancy");
  ASSERT_NE(occupancy, nullptr);
  // 4 KiB per 4-wave workgroup: LDS allows 16 workgroups, the barrier limit
  // 8 (32 / 4 waves), so 8 waves per SIMD.
  EXPECT_EQ(occupancy->getInteger("by_lds"), 8);
  std::string text;
  llvm::raw_string_ostream os(text);
  printKernelReport(os, *metadata, *lookupChip("gfx942"));
  EXPECT_NE(text.find("kernel stage (amdgcn-amd-amdhsa--gfx942)"),
            std::string::npos);
  EXPECT_NE(text.find("LDS bytes         4096"), std::string::npos) << text;
}

TEST(KernelMetadataErrors, RejectsWhatIsNotACodeObject) {
  std::vector<char> garbage = {'n', 'o', 't', ' ', 'e', 'l', 'f'};
  llvm::Expected<CodeObjectMetadata> metadata = readCodeObjectMetadata(garbage);
  ASSERT_FALSE(bool(metadata));
  EXPECT_NE(llvm::toString(metadata.takeError()).find("invalid code object"),
            std::string::npos);
  llvm::Expected<CodeObjectMetadata> empty = readCodeObjectMetadata({});
  EXPECT_FALSE(bool(empty));
  llvm::consumeError(empty.takeError());
}

TEST_F(KernelMetadataTest, RejectsATruncatedCodeObject) {
  std::vector<char> hsaco = compile(kKernel, "gfx942");
  ASSERT_GT(hsaco.size(), 256u);
  hsaco.resize(200);
  llvm::Expected<CodeObjectMetadata> metadata = readCodeObjectMetadata(hsaco);
  EXPECT_FALSE(bool(metadata));
  llvm::consumeError(metadata.takeError());
}

} // namespace
