// How the CPU backend holds the matrices of the linear layers. The CLI's
// --weights, the session files' "weights" and the window's choice all read
// the names and descriptions from here.
#pragma once

#include <string>
#include <vector>

namespace kvscope {

// stored: a GGUF file's matrices stay in the file's blocks (quantized, F16,
//   BF16), read in place from the mapping and dequantized inside each
//   product, bit for bit as f32 computes; every other matrix as f32. The
//   default: the reference's numbers in a quantized file's memory.
// f32: every matrix widened to fp32 on load (what the goldens check).
// f16: every matrix rounded to IEEE half (half the bytes a decode step
//   reads; computed in fp32 on the widened weights; logits move by the
//   rounding).
// The CUDA backend always keeps 16-bit weights (cuda_ops.h,
// weight_type_for) and ignores it.
enum class WeightFormat { Stored, F32, F16 };

inline constexpr WeightFormat kDefaultWeightFormat = WeightFormat::Stored;

// "stored" | "f32" | "f16"; throws Error::setting("weights", ...) naming the choices.
WeightFormat parse_weight_format(const std::string& s);
const char* weight_format_name(WeightFormat f);
// One line on what a format does, for help texts and tooltips.
const char* weight_format_description(WeightFormat f);
std::vector<WeightFormat> weight_formats();
// "stored, f32 or f16": the choices as a message lists them.
std::string weight_format_choices();

}  // namespace kvscope
