// The CUDA error tables against the toolkit's own headers (when a toolkit is installed: its cuda.h
// and driver_types.h are the truth the tables were copied from), and their lookups.
#include "runner/vocab/cuda_errors.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace vmm {
namespace {

TEST(CudaErrorsTest, LookupsFindTheRows) {
  ASSERT_FALSE(CudaErrorNames().empty());
  EXPECT_STREQ(CudaErrorNames().front().name, "CUDA_SUCCESS");
  const CudaErrorName* e = FindCudaError("CUDA_ERROR_NOT_SUPPORTED");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->value, 801);
  EXPECT_EQ(FindCudaErrorByValue(2), FindCudaError("CUDA_ERROR_OUT_OF_MEMORY"));
  EXPECT_EQ(FindCudaError("CUDA_ERROR_NOT_A_THING"), nullptr);
  EXPECT_EQ(FindCudaErrorByValue(123456), nullptr);
  EXPECT_STREQ(DriverNameOfRuntimeError("cudaErrorMemoryAllocation"), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_STREQ(DriverNameOfRuntimeError("cudaErrorGraphExecUpdateFailure"),
               "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE");
  EXPECT_EQ(DriverNameOfRuntimeError("cudaErrorNotARealError"), nullptr);
}

TEST(CudaErrorsTest, NamesAndValuesAreUnique) {
  std::set<std::string> names;
  std::set<int> values;
  for (const CudaErrorName& e : CudaErrorNames()) {
    EXPECT_TRUE(names.insert(e.name).second) << e.name;
    EXPECT_TRUE(values.insert(e.value).second) << e.name;
  }
  std::set<std::string> runtime;
  for (const RuntimeErrorName& r : RuntimeErrorNames()) {
    EXPECT_TRUE(runtime.insert(r.runtime).second) << r.runtime;
    EXPECT_NE(FindCudaError(r.driver), nullptr) << r.runtime << " -> " << r.driver;
  }
}

#ifdef VMMRUN_CUDA_INCLUDE_DIR
std::string ReadHeader(const char* name) {
  std::ifstream in(std::string(VMMRUN_CUDA_INCLUDE_DIR) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// name -> value of every enumerator matching `pattern` (two groups: name, value) in `text`.
std::map<std::string, int> Enumerators(const std::string& text, const std::string& pattern) {
  std::map<std::string, int> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    out[(*it)[1]] = std::stoi((*it)[2]);
  }
  return out;
}
#endif

TEST(CudaErrorsTest, TableIsTheToolkitsCuresultEnum) {
#ifndef VMMRUN_CUDA_INCLUDE_DIR
  GTEST_SKIP() << "no CUDA toolkit headers in this build";
#else
  const std::string header = ReadHeader("cuda.h");
  const size_t begin = header.find("typedef enum cudaError_enum");
  const size_t end = header.find("} CUresult;", begin);
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const std::map<std::string, int> in_header =
      Enumerators(header.substr(begin, end - begin), R"(\n\s+(CUDA_[A-Z0-9_]+)\s*=\s*([0-9]+))");
  std::map<std::string, int> in_table;
  for (const CudaErrorName& e : CudaErrorNames()) in_table[e.name] = e.value;
  EXPECT_EQ(in_table, in_header);
#endif
}

TEST(CudaErrorsTest, RuntimeNamesExistInTheToolkit) {
#ifndef VMMRUN_CUDA_INCLUDE_DIR
  GTEST_SKIP() << "no CUDA toolkit headers in this build";
#else
  const std::map<std::string, int> in_header =
      Enumerators(ReadHeader("driver_types.h"), R"(\n\s+(cudaError[A-Za-z0-9]+)\s*=\s*([0-9]+))");
  ASSERT_GT(in_header.size(), 50u);
  for (const RuntimeErrorName& r : RuntimeErrorNames())
    EXPECT_TRUE(in_header.count(r.runtime)) << r.runtime << " is not in driver_types.h";
#endif
}

}  // namespace
}  // namespace vmm
