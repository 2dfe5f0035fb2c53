#include "backend/weight_format.h"

#include "common/error.h"

namespace kvscope {

std::vector<WeightFormat> weight_formats() { return {WeightFormat::Stored, WeightFormat::F32, WeightFormat::F16}; }

const char* weight_format_name(WeightFormat f) {
  switch (f) {
    case WeightFormat::Stored: return "stored";
    case WeightFormat::F32: return "f32";
    case WeightFormat::F16: return "f16";
  }
  return "?";
}

const char* weight_format_description(WeightFormat f) {
  switch (f) {
    case WeightFormat::Stored:
      return "a GGUF file's matrices kept in its blocks (quantized, f16, bf16) and dequantized inside each product: "
             "the same numbers as f32 in the file's memory; an fp32 matrix read where it lies in its file; other "
             "checkpoints as f32";
    case WeightFormat::F32: return "every matrix widened to fp32 on load: the reference the Hugging Face goldens check";
    case WeightFormat::F16:
      return "every matrix rounded to IEEE half: half the bytes of f32 per decode step, computed in fp32; logits "
             "move by the weights' rounding";
  }
  return "";
}

std::string weight_format_choices() {
  std::string s;
  const auto all = weight_formats();
  for (std::size_t i = 0; i < all.size(); ++i)
    s += std::string(i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + weight_format_name(all[i]);
  return s;
}

WeightFormat parse_weight_format(const std::string& s) {
  for (WeightFormat f : weight_formats())
    if (s == weight_format_name(f)) return f;
  throw Error::setting("weights", "unknown weight format '" + s + "' (choose " + weight_format_choices() + ")");
}

}  // namespace kvscope
