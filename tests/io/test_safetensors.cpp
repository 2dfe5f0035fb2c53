// Safetensors validation: every malformed file is refused with a message
// naming the file and the tensor, before any tensor is read.
#include <gtest/gtest.h>

#include <cstring>

#include "common/error.h"
#include "io/safetensors.h"
#include "io/safetensors_writer.h"
#include "test_util.h"

namespace kvscope {
namespace {

SafetensorsEntry f32_tensor(const std::string& name, std::vector<int64_t> shape) {
  SafetensorsEntry e{name, "F32", shape, {}};
  int64_t n = 1;
  for (auto d : shape) n *= d;
  e.bytes.resize(static_cast<std::size_t>(n) * 4);
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(i);
    std::memcpy(&e.bytes[static_cast<std::size_t>(i) * 4], &v, 4);
  }
  return e;
}

// Expects opening `bytes` as a file to throw with all `needles` in the message.
void expect_rejected(const std::string& bytes, std::initializer_list<const char*> needles) {
  test::TempDir dir;
  const auto path = dir / "model.safetensors";
  test::write_file(path, bytes);
  try {
    SafetensorsFile::open(path);
    FAIL() << "accepted a malformed file";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("model.safetensors"), std::string::npos) << msg;
    for (const char* n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in: " << msg;
  }
}

std::string with_header(const std::string& header_json, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = header_json.size();
  std::memcpy(out.data(), &n, 8);
  return out + header_json + data;
}

TEST(Safetensors, ReadsWhatTheWriterWrote) {
  test::TempDir dir;
  write_safetensors(dir / "m.safetensors", {f32_tensor("a", {2, 3}), f32_tensor("b", {4})}, {{"format", "pt"}});
  const auto f = SafetensorsFile::open(dir / "m.safetensors");
  ASSERT_EQ(f.tensors().size(), 2u);
  const TensorView* a = f.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a->dtype, DType::F32);
  float v;
  std::memcpy(&v, a->data + 5 * 4, 4);
  EXPECT_EQ(v, 5.0f);
  EXPECT_EQ(f.metadata().at("format"), "pt");
}

TEST(Safetensors, TooShortFile) { expect_rejected("abc", {"too short"}); }

TEST(Safetensors, TruncatedData) {
  const std::string good = safetensors_bytes({f32_tensor("w", {8, 8})});
  expect_rejected(good.substr(0, good.size() - 10), {"tensor 'w'", "past the data area"});
}

TEST(Safetensors, HeaderLengthBeyondFile) {
  std::string bytes = safetensors_bytes({f32_tensor("w", {2})});
  const uint64_t huge = bytes.size() + 100;
  std::memcpy(bytes.data(), &huge, 8);
  expect_rejected(bytes, {"header length", "past the end of the file"});
}

TEST(Safetensors, InvalidHeaderJson) { expect_rejected(with_header("{\"w\": [1, 2", ""), {"not valid JSON"}); }

// Found by fuzz_safetensors: a number past double's range is well-formed JSON
// the parser still refuses, with an exception that is not a parse error.
TEST(Safetensors, HeaderNumberPastTheDoubleRange) {
  expect_rejected(with_header("{\"w\": {\"dtype\": \"F32\", \"shape\": [8E616], \"data_offsets\": [0, 4]}}", ""),
                  {"header", "not valid JSON"});
}

TEST(Safetensors, HeaderNotAnObject) { expect_rejected(with_header("[1, 2, 3]", ""), {"not a JSON object"}); }

TEST(Safetensors, OffsetsOutOfRange) {
  expect_rejected(with_header(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", std::string(8, '\0')),
                  {"tensor 'w'", "past the data area"});
}

TEST(Safetensors, OffsetsReversed) {
  expect_rejected(with_header(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", std::string(8, '\0')),
                  {"tensor 'w'", "end before they begin"});
}

TEST(Safetensors, OverlappingTensors) {
  expect_rejected(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                              std::string(12, '\0')),
                  {"tensor 'b'", "overlaps tensor 'a'"});
}

TEST(Safetensors, GapBetweenTensors) {
  expect_rejected(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                              std::string(12, '\0')),
                  {"tensor 'b'", "gap"});
}

TEST(Safetensors, TrailingBytesBelongToNoTensor) {
  expect_rejected(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", std::string(12, '\0')),
                  {"belong to no tensor"});
}

TEST(Safetensors, ShapeTimesDtypeMustEqualByteLength) {
  expect_rejected(with_header(R"({"w":{"dtype":"F16","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0')),
                  {"tensor 'w'", "shape [3] x F16 is 6 bytes but data_offsets span 8"});
}

TEST(Safetensors, UnknownDtype) {
  expect_rejected(with_header(R"({"w":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}})", std::string(16, '\0')),
                  {"tensor 'w'", "unknown dtype 'F128'"});
}

TEST(Safetensors, NegativeDimension) {
  expect_rejected(with_header(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", std::string(4, '\0')),
                  {"tensor 'w'", "negative"});
}

TEST(Safetensors, MissingFields) {
  expect_rejected(with_header(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", std::string(4, '\0')), {"dtype"});
  expect_rejected(with_header(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", std::string(4, '\0')), {"shape"});
  expect_rejected(with_header(R"({"w":{"dtype":"F32","shape":[1]}})", std::string(4, '\0')), {"data_offsets"});
}

TEST(TensorStore, MissingDirectory) {
  try {
    TensorStore::open_model_dir("/nonexistent/kvscope-model");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/kvscope-model: model directory not found"), std::string::npos);
  }
}

TEST(TensorStore, RefusesPickleCheckpointsWithAConversionHint) {
  test::TempDir dir;
  test::write_file(dir / "pytorch_model.bin", "PK\x03\x04");
  try {
    TensorStore::open_model_dir(dir.path());
    FAIL();
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("pytorch_model.bin"), std::string::npos);
    EXPECT_NE(msg.find("convert to safetensors"), std::string::npos) << msg;
  }
}

TEST(TensorStore, ShardedIndex) {
  test::TempDir dir;
  write_safetensors(dir / "s1.safetensors", {f32_tensor("a", {2})});
  write_safetensors(dir / "s2.safetensors", {f32_tensor("b", {3})});
  test::write_file(dir / "model.safetensors.index.json",
                   R"({"metadata":{},"weight_map":{"a":"s1.safetensors","b":"s2.safetensors"}})");
  const auto store = TensorStore::open_model_dir(dir.path());
  ASSERT_NE(store.find("a"), nullptr);
  ASSERT_NE(store.find("b"), nullptr);
  EXPECT_EQ(store.find("b")->shape, (std::vector<int64_t>{3}));
}

TEST(TensorStore, ShardedIndexErrors) {
  test::TempDir dir;
  write_safetensors(dir / "s1.safetensors", {f32_tensor("a", {2})});
  test::write_file(dir / "model.safetensors.index.json", R"({"weight_map":{"a":"s1.safetensors","b":"s9.safetensors"}})");
  try {
    TensorStore::open_model_dir(dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shard 's9.safetensors' not found"), std::string::npos) << e.what();
  }
  test::write_file(dir / "model.safetensors.index.json", R"({"weight_map":{"b":"s1.safetensors"}})");
  try {
    TensorStore::open_model_dir(dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weight_map.b: tensor is not in shard 's1.safetensors'"), std::string::npos)
        << e.what();
  }
  test::write_file(dir / "model.safetensors.index.json", R"({"weight_map": 3})");
  EXPECT_THROW(TensorStore::open_model_dir(dir.path()), Error);
  test::write_file(dir / "model.safetensors.index.json", R"({"weight_map": )");
  try {
    TensorStore::open_model_dir(dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.safetensors.index.json: invalid JSON"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvscope
