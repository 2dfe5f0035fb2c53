// What cpu_info() reads from /proc/cpuinfo: the model name and the vendor,
// family, model and stepping that tell one "AMD EPYC" from another.
#include <gtest/gtest.h>

#include <sstream>

#include "backend/cpu/cpu_info.h"

namespace kvscope {
namespace {

CpuInfo read(const std::string& text) {
  std::istringstream in(text);
  CpuInfo info;
  info.identity = "left over";
  read_cpuinfo(in, info);
  return info;
}

TEST(CpuInfo, AVmsProcessorIsNamedWithItsFamilyAndModel) {
  // The first block of a 2-core Zen 3 VM's /proc/cpuinfo (the second
  // processor's block says the same and is not read).
  const CpuInfo c = read(
      "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n"
      "model name\t: AMD EPYC\nstepping\t: 1\nflags\t\t: fpu avx2\n\n"
      "processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: other\n");
  EXPECT_EQ(c.model_name, "AMD EPYC");
  EXPECT_EQ(c.identity, "AuthenticAMD family 25 model 1 stepping 1");
  EXPECT_EQ(cpu_description(c), "AMD EPYC (AuthenticAMD family 25 model 1 stepping 1)");
}

TEST(CpuInfo, ModelIsNotReadFromModelName) {
  // "model name" starts with "model": only the field named exactly so is the model number.
  const CpuInfo c = read(
      "model name\t: Intel(R) Xeon(R) Platinum 8480+\nvendor_id\t: GenuineIntel\n"
      "cpu family\t: 6\nmodel\t\t: 143\n");
  EXPECT_EQ(c.model_name, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(c.identity, "GenuineIntel family 6 model 143");  // no stepping line: left out
}

TEST(CpuInfo, WithoutTheFieldsTheNameStandsAlone) {
  // An ARM kernel's /proc/cpuinfo has neither a model name nor a vendor_id.
  const CpuInfo arm = read("processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n\n");
  EXPECT_EQ(arm.model_name, "unknown");
  EXPECT_EQ(arm.identity, "");
  EXPECT_EQ(cpu_description(arm), "unknown");
  const CpuInfo named = read("model name\t: AMD EPYC\nvendor_id\t: AuthenticAMD\n");  // no family or model
  EXPECT_EQ(cpu_description(named), "AMD EPYC");
}

TEST(CpuInfo, ThisMachinesDescriptionStartsWithItsModelName) {
  const CpuInfo c = cpu_info();
  EXPECT_FALSE(c.model_name.empty());
  EXPECT_EQ(cpu_description(c).rfind(c.model_name, 0), 0u);
}

}  // namespace
}  // namespace kvscope
