// Inputs the fuzzers (tools/fuzz.sh) found escaping a loader with something
// other than a kvscope::Error; each must now be one message naming the file
// and, where there is one, the field. The raw inputs are replayed by
// tools/fuzz.sh from tests/fuzz/regressions/.
#include <gtest/gtest.h>

#include "common/error.h"
#include "io/json_file.h"
#include "io/npy.h"
#include "test_util.h"

namespace kvscope {
namespace {

std::string error_reading_npy(const std::string& shape) {
  test::TempDir dir;
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  header.resize(117, ' ');
  header += '\n';
  test::write_file(dir / "a.npy", std::string("\x93NUMPY\x01\x00\x76\x00", 10) + header + std::string(16, '\0'));
  try {
    read_npy(dir / "a.npy");
  } catch (const Error& e) {
    return e.what();
  }
  return "(read)";
}

TEST(FuzzRegressions, NpyShapeThatIsNotANumberNamesTheShape) {
  EXPECT_NE(error_reading_npy("(1,$2, 40, 40)").find("a.npy: shape: '$2' is not a dimension"), std::string::npos)
      << error_reading_npy("(1,$2, 40, 40)");
  EXPECT_NE(error_reading_npy("(99999999999999999999,)").find("shape"), std::string::npos);
  EXPECT_NE(error_reading_npy("(-4,)").find("shape"), std::string::npos);
  EXPECT_NE(error_reading_npy("(4294967296, 4294967296, 4294967296)").find("shape: has more elements"), std::string::npos);
  EXPECT_EQ(error_reading_npy("(2, 2)"), "(read)");
}

TEST(FuzzRegressions, JsonNumberPastTheDoubleRangeIsAnErrorNamingTheFile) {
  try {
    parse_json_text("{\"total_parameters\": 72e624}", "model.safetensors.index.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.safetensors.index.json: invalid JSON"), std::string::npos) << e.what();
  }
}

TEST(FuzzRegressions, IntegerFieldHoldingAHugeFloatIsOutOfRangeNotUndefined) {
  // Found by fuzz_model_config: 1e300 as an integer field was converted to long
  // long before its range was checked (undefined behaviour under UBSan).
  for (const char* value : {"1e300", "-1e300", "3e9", "9223372036854775808"}) {
    const nlohmann::json doc = parse_json_text(std::string("{\"hidden_size\": ") + value + "}", "config.json");
    const JsonReader r(doc, "config.json");
    try {
      r.get_int("hidden_size");
      FAIL() << value << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("hidden_size: integer out of range"), std::string::npos) << e.what();
    }
  }
  const nlohmann::json doc = parse_json_text("{\"a\": 64.0, \"b\": 2.5}", "config.json");
  const JsonReader ok(doc, "config.json");
  EXPECT_EQ(ok.get_int("a"), 64);
  EXPECT_THROW(ok.get_int("b"), Error);
}

}  // namespace
}  // namespace kvscope
