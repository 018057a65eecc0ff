#include "runner/vocab/isolate.h"

#include <gtest/gtest.h>

#include <csignal>

namespace vmm {
namespace {

TEST(IsolateVocabTest, CudaErrorNamesComeFromDriverAndRuntimeMessages) {
  EXPECT_EQ(CudaErrorNameIn("vmm_fill_f32: CUDA_ERROR_ILLEGAL_ADDRESS: the kernel faulted"),
            "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(CudaErrorNameIn("cudaEventSynchronize(stop_.get()) failed: cudaErrorIllegalAddress "
                            "(an illegal memory access was encountered) at x.cc:12"),
            "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(CudaErrorNameIn("cudaStreamSynchronize failed: cudaErrorLaunchFailure (x)"),
            "CUDA_ERROR_LAUNCH_FAILED");
  // The first name wins, whichever family it is.
  EXPECT_EQ(CudaErrorNameIn("a: cudaErrorNotReady then CUDA_ERROR_INVALID_VALUE"),
            "CUDA_ERROR_NOT_READY");
  EXPECT_EQ(CudaErrorNameIn("cuMemCreate: out of host memory"), "");
  EXPECT_EQ(CudaErrorNameIn("cudaErrorx"), "");
}

TEST(IsolateVocabTest, ExpectationTextsAreTheRecordsExpected) {
  BlockExpectation e;
  EXPECT_EQ(e.Text(), "ok");
  EXPECT_FALSE(e.AllowsFaults());
  e.kind = BlockExpect::kError;
  e.error = "CUDA_ERROR_ILLEGAL_ADDRESS";
  EXPECT_EQ(e.Text(), "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_TRUE(e.AllowsFaults());
  e.kind = BlockExpect::kSignal;
  e.signal = SIGSEGV;
  EXPECT_EQ(e.Text(), "signal SIGSEGV");
  e.kind = BlockExpect::kTimeout;
  e.limit_ns = 5000000000;
  EXPECT_EQ(e.Text(), "timeout 5s");
}

TEST(IsolateVocabTest, SignalsAndDurationsRoundTrip) {
  EXPECT_EQ(SignalNumber("SIGSEGV"), SIGSEGV);
  EXPECT_EQ(SignalNumber("SIGBUS"), SIGBUS);
  EXPECT_EQ(SignalNumber("SEGV"), 0);
  EXPECT_EQ(SignalText(SIGABRT), "SIGABRT");
  EXPECT_EQ(SignalText(63), "signal 63");
  EXPECT_NE(SignalNames().find("SIGSEGV, SIGBUS"), std::string::npos);
  EXPECT_EQ(DurationText(200000000), "200ms");
  EXPECT_EQ(DurationText(1500000), "1500us");
  EXPECT_EQ(DurationText(7), "7ns");
  EXPECT_EQ(DurationText(0), "0s");
}

}  // namespace
}  // namespace vmm
