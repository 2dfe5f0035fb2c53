// --weights stored: a GGUF matrix kept in its file's blocks and dequantized
// inside the products. For every block type kvscope reads, on every
// instruction set this CPU has, one or two input rows, in any band, and in
// the prompt's sgemm path: the bits of the same product on the matrix
// dequantized to fp32 on load (io/gguf_dequant.h, gguf-py's values).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <memory>
#include <random>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/matvec.h"
#include "float_rows.h"
#include "io/dtype.h"
#include "io/gguf_dequant.h"

namespace kvscope::cpu {
namespace {

using testing_rows::randoms;
using testing_rows::same_bits;
using testing_rows::same_bits_or_both_nan;

struct BlockType {
  GgmlType type;
  std::vector<int> half_offsets;  // where a block keeps its fp16 scales (and mins)
};

// Every quantized type, its scales' places in a block (ggml's layouts).
const BlockType kQuantized[] = {
    {GgmlType::Q4_0, {0}}, {GgmlType::Q4_1, {0, 2}}, {GgmlType::Q5_0, {0}},    {GgmlType::Q5_1, {0, 2}},
    {GgmlType::Q8_0, {0}}, {GgmlType::Q4_K, {0, 2}}, {GgmlType::Q5_K, {0, 2}}, {GgmlType::Q6_K, {208}},
};

// `rows` rows of `in` elements as random blocks: every quant, scale and min
// bit arbitrary, the fp16 scales finite and of either sign.
std::vector<std::byte> random_blocks(const BlockType& t, int rows, int in, uint32_t seed) {
  const int be = ggml_block_elements(t.type), bb = ggml_block_bytes(t.type);
  const std::size_t blocks = std::size_t(rows) * (in / be);
  std::vector<std::byte> data(blocks * bb);
  std::mt19937 g(seed);
  for (auto& b : data) b = static_cast<std::byte>(g() & 0xFF);
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  // Some scales subnormal, zero or negative zero, the largest half too:
  // the in-product conversion of a scale must be exact for every half.
  const uint16_t special[] = {0x0001, 0x03FF, 0x8200, 0x0000, 0x8000, 0x7BFF, 0x0400};
  // (The scale and the minimum drawn apart: a -0 scale meets a +0
  // minimum, a subnormal one the largest half.)
  for (std::size_t i = 0; i < blocks; ++i)
    for (std::size_t k = 0; k < t.half_offsets.size(); ++k) {
      const uint16_t h = i % 5 == 4 ? special[(i / 5 + 3 * k) % std::size(special)] : f32_to_f16(scale(g));
      std::memcpy(data.data() + i * bb + t.half_offsets[k], &h, 2);
    }
  return data;
}

// An out x in matrix held as `type` blocks in `data` (kept alive by the tensor).
WeightTensor block_tensor(GgmlType type, std::shared_ptr<std::vector<std::byte>> data, int out, int in) {
  WeightTensor w;
  w.shape = {out, in};
  w.blocks = type;
  w.data = data->data();
  w.keepalive = std::move(data);
  return w;
}

std::vector<float> dequantized(GgmlType type, const std::vector<std::byte>& data, int64_t n) {
  std::vector<float> f(n);
  dequantize_ggml(type, data.data(), n, f.data());
  return f;
}

// Element counts for a row: one block, several, and SmolLM2's width (576,
// K-quants: 512 and 1536).
std::vector<int> widths(GgmlType type) {
  return ggml_block_elements(type) == 256 ? std::vector<int>{256, 512, 1536} : std::vector<int>{32, 96, 576};
}

// x: kMatvecMaxRows input rows of `in`.
void expect_blocks_equal_the_dequantized_product(GgmlType type, const std::vector<std::byte>& data, int rows, int in,
                                                 const std::vector<float>& x) {
  const std::vector<float> w = dequantized(type, data, int64_t(rows) * in);
  for (SimdPath p : supported_simd_paths())
    for (int m = 1; m <= kMatvecMaxRows; ++m) {
      SCOPED_TRACE(std::string(simd_path_name(p)) + ", " + std::to_string(m) + " input rows");
      std::vector<float> want(m * std::size_t(rows)), got(want.size()), banded(want.size());
      matvec_rows(p, x.data(), m, in, w.data(), 0, rows, want.data(), rows);
      matvec_rows_blocks(p, type, x.data(), m, in, data.data(), 0, rows, got.data(), rows);
      for (int r0 = 0; r0 < rows; r0 += 5)
        matvec_rows_blocks(p, type, x.data(), m, in, data.data(), r0, std::min(rows, r0 + 5), banded.data(), rows);
      EXPECT_TRUE(same_bits_or_both_nan(got, want));
      EXPECT_TRUE(same_bits_or_both_nan(banded, want));
      if (m == 1) {  // a prompt's band, dequantized for sgemm
        std::vector<float> values(w.size());
        dequantize_blocks(p, type, data.data(), int64_t(w.size()), values.data());
        EXPECT_TRUE(same_bits_or_both_nan(values, w));
      }
    }
}

void expect_blocks_equal_the_dequantized_product(GgmlType type, const std::vector<std::byte>& data, int rows, int in) {
  expect_blocks_equal_the_dequantized_product(type, data, rows, in, randoms(2 * std::size_t(in), 300 + in));
}

TEST(MatvecBlocks, EveryQuantizedTypeGivesTheBitsOfItsDequantizedMatrixOnEveryPath) {
  const int rows = 23;
  for (const BlockType& t : kQuantized) {
    ASSERT_TRUE(matvec_reads_blocks(t.type));
    for (int in : widths(t.type)) {
      SCOPED_TRACE(ggml_type_name(uint32_t(t.type)) + " in " + std::to_string(in));
      expect_blocks_equal_the_dequantized_product(t.type, random_blocks(t, rows, in, 17 + in), rows, in);
    }
  }
}

// The products' shortcuts keep to their ranges: inputs near the top of
// float's range (a form that rescaled its factors would overflow there),
// and blocks whose scale or minimum is infinite or NaN (where a form that
// subtracted a rescaled offset would make NaN of an infinity), still give
// the bits of the dequantized product, on every type and path (a NaN
// matching any NaN: its sign and payload are the instruction's and the
// compiler's choice). (A Q6_K form that scaled the input by 2^29 failed
// here without its guards.)
TEST(MatvecBlocks, HugeInputsAndNonFiniteScalesGiveTheBitsOfTheDequantizedMatrix) {
  const int rows = 9;
  for (const BlockType& t : kQuantized) {
    const int in = widths(t.type)[1], per_row = in / ggml_block_elements(t.type), bb = ggml_block_bytes(t.type);
    SCOPED_TRACE(ggml_type_name(uint32_t(t.type)));
    auto x = randoms(2 * std::size_t(in), 77);
    x[5] = 0x1p100f;
    x[in + 7] = -0x1p99f;
    {
      SCOPED_TRACE("huge inputs");
      expect_blocks_equal_the_dequantized_product(t.type, random_blocks(t, rows, in, 5), rows, in, x);
    }
    // The last block of row 3 i + 1 with an infinite or NaN scale, that of
    // row 3 i + 2 with such a minimum (where the type has one), every other
    // bit of both set: every q the largest and every scale nonzero, so an
    // infinity makes every weight of the block the same infinity (not NaN).
    // The inputs positive: the row's product is that infinity.
    auto data = random_blocks(t, rows, in, 6);
    const uint16_t nonfinite[] = {0x7C00, 0xFC00, 0x7E00}, one = 0x3C00;  // +inf, -inf, NaN
    for (int i = 0; i < 3; ++i)
      for (std::size_t which = 0; which < t.half_offsets.size(); ++which) {
        std::byte* block = data.data() + std::size_t((3 * i + 2 + int(which)) * per_row - 1) * bb;
        std::memset(block, 0xFF, bb);
        for (std::size_t h = 0; h < t.half_offsets.size(); ++h)
          std::memcpy(block + t.half_offsets[h], h == which ? &nonfinite[i] : &one, 2);
      }
    auto positive = randoms(2 * std::size_t(in), 78);
    for (float& v : positive) v = std::fabs(v);
    SCOPED_TRACE("non-finite scales");
    expect_blocks_equal_the_dequantized_product(t.type, data, rows, in, positive);
  }
}

TEST(MatvecBlocks, Bf16RowsGiveTheBitsOfTheirFloats) {
  const int rows = 19, in = 576;
  const auto f = randoms(std::size_t(rows) * in, 5);
  std::vector<std::byte> data(f.size() * 2);
  for (std::size_t i = 0; i < f.size(); ++i) {
    const uint16_t b = f32_to_bf16(f[i]);
    std::memcpy(data.data() + 2 * i, &b, 2);
  }
  expect_blocks_equal_the_dequantized_product(GgmlType::BF16, data, rows, in);
}

// A BF16 matrix whose width is not a multiple of the 16 elements its rows
// are read in is widened to fp32 instead, so it still computes exactly.
TEST(MatvecBlocks, Bf16RowsOfAnyWidthEqualTheirFp32Twin) {
  for (int in : {40, 576}) {
    SCOPED_TRACE("in " + std::to_string(in));
    const int out = 9;
    const auto f = randoms(std::size_t(out) * in, 8 + in);
    auto data = std::make_shared<std::vector<std::byte>>(f.size() * 2);
    for (std::size_t i = 0; i < f.size(); ++i) {
      const uint16_t b = f32_to_bf16(f[i]);
      std::memcpy(data->data() + 2 * i, &b, 2);
    }
    const WeightTensor w = block_tensor(GgmlType::BF16, data, out, in);
    const Linear stored = Linear::from(w, WeightTensor{}, WeightFormat::Stored, "w");
    const Linear f32 = Linear::from(w, WeightTensor{}, WeightFormat::F32, "w");
    EXPECT_EQ(stored.stored.empty(), in % 16 != 0);
    for (int n : {1, 2, 5}) {
      const auto x = randoms(std::size_t(n) * in, 60 + n);
      std::vector<float> a(std::size_t(n) * out), b(a.size());
      linear(x.data(), n, stored, a.data());
      linear(x.data(), n, f32, b.data());
      EXPECT_TRUE(same_bits(a, b)) << n << " rows";
    }
  }
}

// linear() through two forms of one layer gives the same bits for a decode
// step (matvec), a pair, and prompts (sgemm over the band in fp32).
void expect_same_products(const Linear& stored, const Linear& f32) {
  for (int n : {1, 2, 3, 9}) {
    SCOPED_TRACE(std::to_string(n) + " rows");
    const auto x = randoms(std::size_t(n) * f32.in, 40 + n);
    std::vector<float> a(std::size_t(n) * f32.out), b(a.size());
    linear(x.data(), n, stored, a.data());
    linear(x.data(), n, f32, b.data());
    EXPECT_TRUE(same_bits(a, b));
  }
}

// A prompt's product cuts each band into slices (cpu_ops.cpp): at
// SmolLM2's width, 576 inputs, a band of this 3072-row layer (768 rows)
// holds four slices of 192 rows. Stored blocks, halves and fp32 weights in
// place go through the same slices, so OpenBLAS sees the same shapes for
// all three (small prompts are where it may pick another kernel by shape),
// and the stored and half layers give the bits of their fp32 twins.
TEST(MatvecBlocks, APromptsSlicedBandsGiveTheBitsOfTheFp32TwinAtEveryLength) {
  const int out = 3072, in = 576;
  const BlockType& t = kQuantized[1];  // Q4_1, SmolLM2's
  const WeightTensor w =
      block_tensor(t.type, std::make_shared<std::vector<std::byte>>(random_blocks(t, out, in, 7)), out, in);
  const Linear stored = Linear::from(w, WeightTensor{}, WeightFormat::Stored, "w");
  const Linear f32 = Linear::from(w, WeightTensor{}, WeightFormat::F32, "w");
  const Linear half_fp16 = Linear::from(WeightTensor::owned_f32(randoms(std::size_t(out) * in, 9), {out, in}),
                                        WeightTensor{}, WeightFormat::F16, "w");
  std::vector<float> half_rows(std::size_t(out) * in);
  half_fp16.rows_to_f32(0, out, half_rows.data());
  const Linear half_twin =
      Linear::from(WeightTensor::owned_f32(half_rows, {out, in}), WeightTensor{}, WeightFormat::F32, "w");
  ASSERT_GE(linear_bands(f32, 3).width, 512);  // several slices of at most 128K weights a band
  for (int n : {3, 5, 9, 17, 33, 64}) {
    SCOPED_TRACE(std::to_string(n) + " rows");
    const auto x = randoms(std::size_t(n) * in, 50 + n);
    std::vector<float> a(std::size_t(n) * out), b(a.size()), c(a.size()), d(a.size());
    linear(x.data(), n, stored, a.data());
    linear(x.data(), n, f32, b.data());
    EXPECT_TRUE(same_bits(a, b));
    linear(x.data(), n, half_fp16, c.data());
    linear(x.data(), n, half_twin, d.data());
    EXPECT_TRUE(same_bits(c, d));
  }
}

// A gated MLP's hidden rows (gated_linear): a prompt's up product is made
// one slice at a time beside the gate's, so it holds a slice, not every
// row; the bits are those of the two products made whole by linear() and
// the activation applied after, for every activation, with biases, with
// the two matrices in different block types, across bands and slices.
// (One or two rows, a decode step, make the two products whole.)
TEST(MatvecBlocks, AGatedLayerEqualsItsTwoProductsAndItsActivation) {
  // Bands of 832 rows (the last 640), each three 256-row slices and a
  // shorter one.
  const int out = 3136, in = 512;
  const BlockType& q4k = kQuantized[5];
  const BlockType& q6k = kQuantized[7];
  ASSERT_EQ(q4k.type, GgmlType::Q4_K);
  ASSERT_EQ(q6k.type, GgmlType::Q6_K);
  const auto matrix = [&](const BlockType& t, uint32_t seed) {
    return block_tensor(t.type, std::make_shared<std::vector<std::byte>>(random_blocks(t, out, in, seed)), out, in);
  };
  const Linear gate =
      Linear::from(matrix(q4k, 11), WeightTensor::owned_f32(randoms(out, 12), {out}), WeightFormat::Stored, "gate");
  const Linear up =
      Linear::from(matrix(q6k, 13), WeightTensor::owned_f32(randoms(out, 14), {out}), WeightFormat::Stored, "up");
  ASSERT_GT(linear_bands(gate, 3).count, 1);
  ASSERT_NE(linear_bands(gate, 3).width % 256, 0);
  for (const Activation act : {Activation::Silu, Activation::GeluTanh, Activation::GeluErf}) {
    for (int n : {3, 9, 64, 130}) {
      SCOPED_TRACE(std::to_string(n) + " rows, activation " + std::to_string(int(act)));
      const auto x = randoms(std::size_t(n) * in, 70 + n);
      std::vector<float> got(std::size_t(n) * out), want(got.size()), up_rows(got.size());
      gated_linear(x.data(), n, gate, up, act, got.data());
      linear(x.data(), n, gate, want.data());
      linear(x.data(), n, up, up_rows.data());
      gated_activation(act, want.data(), up_rows.data(), int64_t(n) * out);
      EXPECT_TRUE(same_bits_or_both_nan(got, want));
    }
  }
}

// linear() under --weights stored, for a decode step (matvec), a pair, and
// a prompt (the band dequantized, then sgemm), with a bias: the bits of
// the same layer built from the dequantized matrix.
TEST(MatvecBlocks, ALinearLayerInBlocksEqualsItsFp32TwinForEveryRowCount) {
  for (const BlockType& t : kQuantized) {
    SCOPED_TRACE(ggml_type_name(uint32_t(t.type)));
    const int out = 300, in = 512;
    const WeightTensor w =
        block_tensor(t.type, std::make_shared<std::vector<std::byte>>(random_blocks(t, out, in, 99)), out, in);
    const WeightTensor bias = WeightTensor::owned_f32(randoms(out, 3), {out});
    const Linear stored = Linear::from(w, bias, WeightFormat::Stored, "w");
    const Linear f32 = Linear::from(w, bias, WeightFormat::F32, "w");
    ASSERT_FALSE(stored.stored.empty());
    ASSERT_TRUE(stored.w.empty());
    ASSERT_EQ(f32.w.size(), std::size_t(out) * in);
    expect_same_products(stored, f32);
    std::vector<float> row(in), want(in);
    stored.rows_to_f32(7, 8, row.data());
    f32.rows_to_f32(7, 8, want.data());
    EXPECT_TRUE(same_bits(row, want));
    // Column ranges (CriticalKV reads one KV head's columns of W_o): on
    // block edges, inside one block and across several.
    // (fp16 from small fp32 weights: the random blocks reach past half's range)
    const Linear half = Linear::from(WeightTensor::owned_f32(randoms(std::size_t(out) * in, 5), {out, in}), bias,
                                     WeightFormat::F16, "w");
    for (const auto& [c0, c1] : std::vector<std::pair<int, int>>{{0, 512}, {256, 512}, {64, 192}, {5, 6}, {31, 289}}) {
      SCOPED_TRACE("columns " + std::to_string(c0) + ".." + std::to_string(c1));
      std::vector<float> cols(std::size_t(out) * (c1 - c0)), want_cols(cols.size()), half_cols(cols.size());
      stored.columns_to_f32(c0, c1, cols.data());
      f32.columns_to_f32(c0, c1, want_cols.data());
      EXPECT_TRUE(same_bits(cols, want_cols));
      for (int o = 0; o < out; ++o)
        for (int c = c0; c < c1; ++c)
          ASSERT_EQ(want_cols[std::size_t(o) * (c1 - c0) + (c - c0)], f32.w[std::size_t(o) * in + c]);
      half.columns_to_f32(c0, c1, half_cols.data());
      std::vector<float> half_rows(std::size_t(out) * in);
      half.rows_to_f32(0, out, half_rows.data());
      for (int o = 0; o < out; ++o)
        for (int c = c0; c < c1; ++c)
          ASSERT_EQ(half_cols[std::size_t(o) * (c1 - c0) + (c - c0)], half_rows[std::size_t(o) * in + c]);
    }
  }
}

// An fp32 matrix in a file under --weights stored is read where it lies
// (a copy would double its resident memory), with the copy's bits.
TEST(MatvecBlocks, AnFp32MatrixUnderStoredIsReadWhereItLies) {
  for (const int in : {512, 37}) {  // 37: a row's tail of fewer than 16 elements
    SCOPED_TRACE("in " + std::to_string(in));
    const int out = 300;
    // Four bytes spare, so a tensor can also start two bytes in.
    auto bytes = std::make_shared<std::vector<float>>(std::size_t(out) * in + 1);
    const auto values = randoms(std::size_t(out) * in, 17);
    std::copy(values.begin(), values.end(), bytes->begin());
    WeightTensor w;
    w.shape = {out, in};
    w.dtype = DType::F32;
    w.data = reinterpret_cast<const std::byte*>(bytes->data());
    w.keepalive = bytes;
    const WeightTensor bias = WeightTensor::owned_f32(randoms(out, 3), {out});
    const Linear stored = Linear::from(w, bias, WeightFormat::Stored, "w");
    const Linear f32 = Linear::from(w, bias, WeightFormat::F32, "w");
    EXPECT_TRUE(stored.w.empty());
    EXPECT_EQ(stored.fp32(), bytes->data());
    ASSERT_EQ(f32.w.size(), std::size_t(out) * in);
    EXPECT_EQ(f32.fp32(), f32.w.data());
    EXPECT_FALSE(stored.half());
    expect_same_products(stored, f32);
    std::vector<float> rows(std::size_t(3) * in), want_rows(rows.size());
    stored.rows_to_f32(5, 8, rows.data());
    f32.rows_to_f32(5, 8, want_rows.data());
    EXPECT_TRUE(same_bits(rows, want_rows));
    std::vector<float> cols(std::size_t(out) * 9), want_cols(cols.size());
    stored.columns_to_f32(3, 12, cols.data());
    f32.columns_to_f32(3, 12, want_cols.data());
    EXPECT_TRUE(same_bits(cols, want_cols));
    // Not where a float may not lie (two bytes in): copied, as under f32.
    WeightTensor shifted = w;
    shifted.data += 2;
    EXPECT_FALSE(Linear::reads_in_place(shifted, WeightFormat::Stored));
    EXPECT_FALSE(Linear::from(shifted, bias, WeightFormat::Stored, "w").w.empty());
    // Nor under the other formats.
    EXPECT_FALSE(Linear::reads_in_place(w, WeightFormat::F32));
    EXPECT_FALSE(Linear::reads_in_place(w, WeightFormat::F16));
  }
}

}  // namespace
}  // namespace kvscope::cpu
