// The GGUF reader and dequantization: every tensor type against gguf-py's
// reference dequantization, bit for bit (tests/data/gguf/dequant.gguf, made by
// tools/goldens_gguf.py), and malformed files built byte by byte here, each
// refused with one message naming the file and the key or tensor.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "common/error.h"
#include "io/gguf.h"
#include "io/gguf_dequant.h"
#include "test_util.h"

namespace kvscope {
namespace {

std::filesystem::path gguf_data(const std::string& name) { return test::data_dir() / "gguf" / name; }

TEST(GgufDequant, EveryTypeEqualsGgufPyReferenceBitForBit) {
  const auto f = GgufFile::open(gguf_data("dequant.gguf"));
  int checked = 0;
  for (const char* type : {"F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K"}) {
    SCOPED_TRACE(type);
    const GgufTensorInfo* x = f.find_tensor(std::string("x.") + type);
    const GgufTensorInfo* ref = f.find_tensor(std::string("x.") + type + ".ref");
    ASSERT_NE(x, nullptr);
    ASSERT_NE(ref, nullptr);
    EXPECT_EQ(ggml_type_name(static_cast<uint32_t>(x->type)), type);
    ASSERT_EQ(ref->type, GgmlType::F32);
    ASSERT_EQ(x->numel(), ref->numel());
    EXPECT_EQ(x->torch_shape(), (std::vector<int64_t>{3, 512}));
    std::vector<float> got(static_cast<std::size_t>(x->numel()));
    dequantize_ggml(x->type, x->data, x->numel(), got.data());
    std::size_t first_diff = got.size();
    for (std::size_t i = 0; i < got.size() && first_diff == got.size(); ++i)
      if (std::memcmp(&got[i], ref->data + 4 * i, 4) != 0) first_diff = i;
    EXPECT_EQ(first_diff, got.size()) << "first differing element " << first_diff;
    ++checked;
  }
  EXPECT_EQ(checked, 11);
}

TEST(GgufReader, ReadsMetadataAndTensorInfos) {
  const auto f = GgufFile::open(gguf_data("tiny_llama.gguf"));
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_int("llama.block_count"), 2);
  EXPECT_EQ(f.get_int("llama.attention.head_count_kv"), 2);
  EXPECT_DOUBLE_EQ(*f.get_real_if("llama.rope.freq_base"), 10000.0);
  EXPECT_EQ(f.get_bool_if("tokenizer.ggml.add_bos_token"), true);
  const GgufValue* tokens = f.find("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(tokens->element_type, GgufValueType::String);
  EXPECT_EQ(tokens->strings.size(), 319u);
  EXPECT_EQ(tokens->strings[0], "<|endoftext|>");
  const GgufTensorInfo* q = f.find_tensor("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->type, GgmlType::Q4_0);
  EXPECT_EQ(q->dims, (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(q->nbytes, 256u * 256u / 32u * 18u);
  // Wrong-type access names the key.
  try {
    (void)f.get_int("general.architecture");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("general.architecture: expected an integer"), std::string::npos) << e.what();
  }
}

// A GGUF file assembled byte by byte, so each test can break one thing.
class GgufBytes {
 public:
  GgufBytes& u32(uint32_t v) { return raw(&v, 4); }
  GgufBytes& u64(uint64_t v) { return raw(&v, 8); }
  GgufBytes& str(const std::string& s) {
    u64(s.size());
    return raw(s.data(), s.size());
  }
  GgufBytes& raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const char*>(p);
    bytes.insert(bytes.end(), b, b + n);
    return *this;
  }
  GgufBytes& pad_to(std::size_t alignment) {
    while (bytes.size() % alignment) bytes.push_back(0);
    return *this;
  }
  GgufBytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    raw("GGUF", 4);
    u32(version);
    u64(n_tensors);
    return u64(n_kv);
  }
  // key = string value
  GgufBytes& kv_string(const std::string& key, const std::string& value) {
    str(key);
    u32(8);
    return str(value);
  }
  GgufBytes& tensor_info(const std::string& name, std::vector<uint64_t> dims, uint32_t type, uint64_t offset) {
    str(name);
    u32(static_cast<uint32_t>(dims.size()));
    for (auto d : dims) u64(d);
    u32(type);
    return u64(offset);
  }
  std::filesystem::path write(const std::string& name) const {
    const auto path = std::filesystem::path(::testing::TempDir()) / name;
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
  }
  std::vector<char> bytes;
};

// One F32 tensor of 8 elements, correctly laid out.
GgufBytes valid_file() {
  GgufBytes b;
  b.header(1, 1).kv_string("general.architecture", "llama").tensor_info("t", {8}, 0, 0).pad_to(32);
  const float v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  b.raw(v, sizeof(v));
  return b;
}

std::string open_error(const GgufBytes& b, const std::string& name) {
  const auto path = b.write(name);
  try {
    (void)GgufFile::open(path);
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(path.string(), 0), 0u) << "message does not start with the file: " << m;
    return m;
  }
  ADD_FAILURE() << name << ": opened without an error";
  return "";
}

TEST(GgufReader, AValidHandMadeFileOpens) {
  const auto f = GgufFile::open(valid_file().write("valid.gguf"));
  ASSERT_EQ(f.tensors().size(), 1u);
  float x[8];
  dequantize_ggml(GgmlType::F32, f.tensors()[0].data, 8, x);
  EXPECT_EQ(x[7], 8.f);
}

// Data after the last tensor that belongs to no tensor: the header lists
// fewer tensors than the file holds. (Less than one alignment is a
// writer's padding, and opens.)
TEST(GgufReader, BytesAfterTheLastTensorAreATensorCountTooLow) {
  GgufBytes two;
  two.header(2, 1).kv_string("general.architecture", "llama").tensor_info("a", {8}, 0, 0).tensor_info("b", {8}, 0, 32);
  two.pad_to(32);
  const float v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  two.raw(v, sizeof(v)).raw(v, sizeof(v));
  EXPECT_EQ(GgufFile::open(two.write("two.gguf")).tensors().size(), 2u);
  GgufBytes one;  // the same data, the header listing one tensor
  one.header(1, 1).kv_string("general.architecture", "llama").tensor_info("a", {8}, 0, 0).pad_to(32);
  one.raw(v, sizeof(v)).raw(v, sizeof(v));
  const std::string m = open_error(one, "one_listed.gguf");
  EXPECT_NE(m.find("tensor_count: 1 tensors leave 32 bytes after the last one's data that belong to no tensor"),
            std::string::npos)
      << m;
  GgufBytes padded = valid_file();
  padded.raw(v, 31);
  EXPECT_NO_THROW(GgufFile::open(padded.write("padded.gguf")));
}

// The header is copied into the GgufFile as it is parsed (keys, values,
// tensor names), so its pages leave the resident set (a real vocabulary is
// megabytes of it). Here 2 MiB of string values,
// then 1 MiB of tensor data; the strings still read back, and the data
// still reads from the file.
TEST(GgufReader, TheParsedHeaderLeavesTheResidentSet) {
  const std::string big(std::size_t(1) << 20, 'v');
  const std::size_t n = std::size_t(1) << 18;  // floats: 1 MiB
  GgufBytes b;
  b.header(1, 3).kv_string("general.architecture", "llama").kv_string("a", big).kv_string("b", big);
  b.tensor_info("t", {n}, 0, 0).pad_to(32);
  std::vector<float> data(n);
  for (std::size_t i = 0; i < n; ++i) data[i] = float(i);
  b.raw(data.data(), n * sizeof(float));
  const auto f = GgufFile::open(b.write("big_header.gguf"));
  // Whatever the kernel mapped past the header around the parser's last
  // read may stay (fault-around, or a large folio of the page cache mapped
  // whole: up to the 1 MiB of data here); 2 MiB of strings do not.
  const long resident = test::resident_kb_of_mapping(f.mapping()->data());
  ASSERT_GE(resident, 0);
  EXPECT_LE(resident, 1024 + 64) << "kB of the mapping resident after parsing";
  EXPECT_EQ(f.get_string("a"), big);
  float last = 0;
  dequantize_ggml(GgmlType::F32, f.tensors()[0].data + (n - 1) * sizeof(float), 1, &last);
  EXPECT_EQ(last, float(n - 1));
}

TEST(GgufReader, EveryTruncationIsRefusedNamingTheFile) {
  const GgufBytes full = valid_file();
  for (std::size_t n = 0; n < full.bytes.size(); ++n) {
    GgufBytes cut;
    cut.bytes.assign(full.bytes.begin(), full.bytes.begin() + static_cast<std::ptrdiff_t>(n));
    const std::string m = open_error(cut, "cut.gguf");
    EXPECT_FALSE(m.empty()) << "truncated to " << n << " bytes";
  }
}

TEST(GgufReader, BadHeadersAreRefusedByField) {
  GgufBytes magic = valid_file();
  magic.bytes[0] = 'X';
  EXPECT_NE(open_error(magic, "magic.gguf").find("magic: not a GGUF file"), std::string::npos);

  GgufBytes v1 = valid_file();
  v1.bytes[4] = 1;
  EXPECT_NE(open_error(v1, "v1.gguf").find("version: GGUF version 1"), std::string::npos);

  GgufBytes be = valid_file();
  be.bytes[4] = 0;
  be.bytes[7] = 3;
  EXPECT_NE(open_error(be, "be.gguf").find("big-endian"), std::string::npos);

  GgufBytes lie;  // a key-value count larger than the file can hold
  lie.header(0, 1u << 30);
  EXPECT_NE(open_error(lie, "count.gguf").find("metadata_kv_count"), std::string::npos);
}

TEST(GgufReader, BadValuesAndTensorsAreRefusedByName) {
  GgufBytes type;  // unknown value type 13
  type.header(0, 1).str("k").u32(13);
  EXPECT_NE(open_error(type, "vtype.gguf").find("k: unknown value type 13"), std::string::npos);

  GgufBytes nested;  // array of arrays
  nested.header(0, 1).str("k").u32(9).u32(9).u64(1);
  EXPECT_NE(open_error(nested, "nested.gguf").find("k: arrays of arrays"), std::string::npos);

  GgufBytes big_array;  // a million u32 elements in a file of a few bytes
  big_array.header(0, 1).str("k").u32(9).u32(4).u64(1000000);
  EXPECT_NE(open_error(big_array, "array.gguf").find("k: array of 1000000 elements runs past"), std::string::npos);

  GgufBytes twice;
  twice.header(0, 2).kv_string("a", "x").kv_string("a", "y");
  EXPECT_NE(open_error(twice, "twice.gguf").find("a: key appears twice"), std::string::npos);

  GgufBytes quant;  // IQ2_XXS: a real ggml type kvscope does not read
  quant.header(1, 0).tensor_info("w", {256}, 16, 0).pad_to(32);
  EXPECT_NE(open_error(quant, "iq2.gguf").find("w: tensor type IQ2_XXS is not supported"), std::string::npos);

  GgufBytes block;  // a Q8_0 row of 40 elements is not whole blocks
  block.header(1, 0).tensor_info("w", {40}, 8, 0).pad_to(32);
  EXPECT_NE(open_error(block, "block.gguf").find("w: first dimension 40 is not a multiple"), std::string::npos);

  GgufBytes misaligned;
  misaligned.header(1, 0).tensor_info("w", {8}, 0, 4).pad_to(32);
  misaligned.bytes.resize(misaligned.bytes.size() + 64);
  EXPECT_NE(open_error(misaligned, "misaligned.gguf").find("w: offset 4 is not a multiple of the alignment 32"),
            std::string::npos);

  GgufBytes past_end;  // data runs past the end of the file
  past_end.header(1, 0).tensor_info("w", {64}, 0, 0).pad_to(32);
  past_end.bytes.resize(past_end.bytes.size() + 16);
  EXPECT_NE(open_error(past_end, "short.gguf").find("w: data (256 bytes at offset 0) runs past the end"),
            std::string::npos);

  GgufBytes overlap;
  overlap.header(2, 0).tensor_info("a", {16}, 0, 0).tensor_info("b", {8}, 0, 32).pad_to(32);
  overlap.bytes.resize(overlap.bytes.size() + 64);
  EXPECT_NE(open_error(overlap, "overlap.gguf").find("overlaps tensor a"), std::string::npos);

  GgufBytes align;  // alignment must be a power of two
  align.header(0, 1).str("general.alignment").u32(4).u32(24);
  EXPECT_NE(open_error(align, "align.gguf").find("general.alignment: must be a positive power of two"),
            std::string::npos);
}

}  // namespace
}  // namespace kvscope
