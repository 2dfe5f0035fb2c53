#include "io/gguf.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "common/error.h"

namespace kvscope {

namespace {

// A little-endian cursor over the mapping: every read is bounds-checked, so a
// truncated or lying file fails with the key being read, never past the end.
class Cursor {
 public:
  Cursor(const std::byte* data, std::size_t size, const std::string& source)
      : data_(data), size_(size), source_(source) {}

  std::size_t pos() const { return pos_; }

  void need(std::size_t n, const std::string& what) const {
    if (n > size_ - pos_)
      throw Error(source_, what, "file ends early (truncated at byte " + std::to_string(size_) + ")");
  }
  template <typename T>
  T read(const std::string& what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  // `noun` says which string it is ("key", "tensor name"), so a corrupted
  // length reads as what it is, with the file size beside it.
  std::string read_string(const std::string& what, const char* noun = "string") {
    const uint64_t n = read<uint64_t>(what);
    if (n > size_ - pos_)
      throw Error(source_, what,
                  std::string(noun) + " length " + std::to_string(n) + " at byte " + std::to_string(pos_ - 8) +
                      " runs past the end of the file (" + std::to_string(size_) + " bytes)");
    std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }

 private:
  const std::byte* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  const std::string& source_;
};

bool known_value_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufValueType::F64); }

std::size_t scalar_size(GgufValueType t) {
  switch (t) {
    case GgufValueType::U8: case GgufValueType::I8: case GgufValueType::Bool: return 1;
    case GgufValueType::U16: case GgufValueType::I16: return 2;
    case GgufValueType::U32: case GgufValueType::I32: case GgufValueType::F32: return 4;
    case GgufValueType::U64: case GgufValueType::I64: case GgufValueType::F64: return 8;
    default: return 0;
  }
}

// Reads one scalar of type t into v (integer/real/string fields).
void read_scalar(Cursor& c, GgufValueType t, GgufValue& v, const std::string& key, const std::string& source) {
  switch (t) {
    case GgufValueType::U8: v.integer = c.read<uint8_t>(key); break;
    case GgufValueType::I8: v.integer = c.read<int8_t>(key); break;
    case GgufValueType::U16: v.integer = c.read<uint16_t>(key); break;
    case GgufValueType::I16: v.integer = c.read<int16_t>(key); break;
    case GgufValueType::U32: v.integer = c.read<uint32_t>(key); break;
    case GgufValueType::I32: v.integer = c.read<int32_t>(key); break;
    case GgufValueType::I64: v.integer = c.read<int64_t>(key); break;
    case GgufValueType::U64: {
      const uint64_t u = c.read<uint64_t>(key);
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        throw Error(source, key, "unsigned value " + std::to_string(u) + " is too large");
      v.integer = static_cast<int64_t>(u);
      break;
    }
    case GgufValueType::Bool: {
      const uint8_t b = c.read<uint8_t>(key);
      if (b > 1) throw Error(source, key, "bool value " + std::to_string(b) + " is neither 0 nor 1");
      v.integer = b;
      break;
    }
    case GgufValueType::F32: v.real = c.read<float>(key); break;
    case GgufValueType::F64: v.real = c.read<double>(key); break;
    case GgufValueType::String: v.string = c.read_string(key); break;
    case GgufValueType::Array: throw Error(source, key, "arrays of arrays are not supported");
  }
}

GgufValue read_value(Cursor& c, uint32_t raw_type, const std::string& key, const std::string& source,
                     std::size_t file_size) {
  if (!known_value_type(raw_type)) throw Error(source, key, "unknown value type " + std::to_string(raw_type));
  GgufValue v;
  v.type = static_cast<GgufValueType>(raw_type);
  if (v.type != GgufValueType::Array) {
    read_scalar(c, v.type, v, key, source);
    return v;
  }
  const uint32_t et = c.read<uint32_t>(key);
  if (!known_value_type(et)) throw Error(source, key, "unknown array element type " + std::to_string(et));
  v.element_type = static_cast<GgufValueType>(et);
  if (v.element_type == GgufValueType::Array) throw Error(source, key, "arrays of arrays are not supported");
  const uint64_t n = c.read<uint64_t>(key);
  // Every element takes at least one byte (a string at least eight), so a
  // count larger than what is left is a lie; checked before reserving memory.
  const std::size_t min_elem = v.element_type == GgufValueType::String ? 8 : scalar_size(v.element_type);
  if (n > (file_size - c.pos()) / min_elem)
    throw Error(source, key, "array of " + std::to_string(n) + " elements runs past the end of the file");
  GgufValue e;
  if (v.element_type == GgufValueType::String) {
    v.strings.reserve(n);
    for (uint64_t i = 0; i < n; ++i) v.strings.push_back(c.read_string(key));
  } else if (v.element_type == GgufValueType::F32 || v.element_type == GgufValueType::F64) {
    v.reals.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      read_scalar(c, v.element_type, e, key, source);
      v.reals.push_back(e.real);
    }
  } else {
    v.integers.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      read_scalar(c, v.element_type, e, key, source);
      v.integers.push_back(e.integer);
    }
  }
  return v;
}

const char* const kGgmlTypeNames[] = {
    "F32",     "F16",    "Q4_0",    "Q4_1",  "Q4_2",  "Q4_3",   "Q5_0",  "Q5_1", "Q8_0",  "Q8_1",
    "Q2_K",    "Q3_K",   "Q4_K",    "Q5_K",  "Q6_K",  "Q8_K",   "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S",
    "IQ4_NL",  "IQ3_S",  "IQ2_S",   "IQ4_XS", "I8",   "I16",    "I32",   "I64",  "F64",   "IQ1_M",
    "BF16",    "Q4_0_4_4", "Q4_0_4_8", "Q4_0_8_8", "TQ1_0", "TQ2_0", "IQ4_NL_4_4", "IQ4_NL_4_8",
    "IQ4_NL_8_8", "MXFP4",
};

}  // namespace

const char* gguf_value_type_name(GgufValueType t) {
  static const char* const names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                      "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = static_cast<uint32_t>(t);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "unknown";
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufValueType::U8: case GgufValueType::I8: case GgufValueType::U16: case GgufValueType::I16:
    case GgufValueType::U32: case GgufValueType::I32: case GgufValueType::U64: case GgufValueType::I64:
      return true;
    default: return false;
  }
}

std::size_t GgufValue::array_size() const {
  return element_type == GgufValueType::String ? strings.size()
         : (element_type == GgufValueType::F32 || element_type == GgufValueType::F64) ? reals.size()
                                                                                       : integers.size();
}

std::string ggml_type_name(uint32_t type) {
  if (type < sizeof(kGgmlTypeNames) / sizeof(kGgmlTypeNames[0])) return kGgmlTypeNames[type];
  return "type " + std::to_string(type);
}

bool ggml_type_supported(uint32_t type) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16: case GgmlType::Q4_0: case GgmlType::Q4_1:
    case GgmlType::Q5_0: case GgmlType::Q5_1: case GgmlType::Q8_0: case GgmlType::Q4_K: case GgmlType::Q5_K:
    case GgmlType::Q6_K:
      return true;
  }
  return false;
}

int ggml_block_elements(GgmlType t) {
  switch (t) {
    case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16: return 1;
    case GgmlType::Q4_0: case GgmlType::Q4_1: case GgmlType::Q5_0: case GgmlType::Q5_1: case GgmlType::Q8_0: return 32;
    case GgmlType::Q4_K: case GgmlType::Q5_K: case GgmlType::Q6_K: return 256;
  }
  return 0;
}

int ggml_block_bytes(GgmlType t) {
  switch (t) {
    case GgmlType::F32: return 4;
    case GgmlType::F16: case GgmlType::BF16: return 2;
    case GgmlType::Q4_0: return 18;   // f16 scale + 32 nibbles
    case GgmlType::Q4_1: return 20;   // f16 scale, f16 min + 32 nibbles
    case GgmlType::Q5_0: return 22;   // f16 scale, 32 high bits + 32 nibbles
    case GgmlType::Q5_1: return 24;   // f16 scale, f16 min, 32 high bits + 32 nibbles
    case GgmlType::Q8_0: return 34;   // f16 scale + 32 int8
    case GgmlType::Q4_K: return 144;  // f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128 bytes of nibbles
    case GgmlType::Q5_K: return 176;  // as Q4_K plus 32 bytes of high bits
    case GgmlType::Q6_K: return 210;  // 128 low nibbles, 64 bytes of 2-bit highs, 16 int8 scales, f16 d
  }
  return 0;
}

int64_t GgufTensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> GgufTensorInfo::torch_shape() const { return {dims.rbegin(), dims.rend()}; }

GgufFile GgufFile::open(const std::filesystem::path& path) {
  GgufFile f;
  f.source_ = path.string();
  f.map_ = MappedFile::open(path);
  const std::string& src = f.source_;
  const std::size_t size = f.map_->size();
  Cursor c(f.map_->data(), size, src);

  const uint32_t magic = c.read<uint32_t>("magic");
  if (magic != 0x46554747u)  // "GGUF" read little-endian
    throw Error(src, "magic", "not a GGUF file (the first four bytes are not \"GGUF\")");
  const uint32_t version = c.read<uint32_t>("version");
  if (version == 1) throw Error(src, "version", "GGUF version 1 is not supported (convert it again with a current llama.cpp)");
  if (version != 2 && version != 3) {
    // A byte-swapped 2 or 3 means a big-endian file.
    if (version == 0x02000000u || version == 0x03000000u)
      throw Error(src, "version", "big-endian GGUF files are not supported");
    throw Error(src, "version", "unsupported GGUF version " + std::to_string(version) + " (2 and 3 are read)");
  }
  f.version_ = version;
  const uint64_t n_tensors = c.read<uint64_t>("tensor_count");
  const uint64_t n_kv = c.read<uint64_t>("metadata_kv_count");
  // Each key-value pair takes at least 12 bytes, each tensor info at least 24.
  if (n_kv > size / 12) throw Error(src, "metadata_kv_count", std::to_string(n_kv) + " is more than the file can hold");
  if (n_tensors > size / 24) throw Error(src, "tensor_count", std::to_string(n_tensors) + " is more than the file can hold");

  for (uint64_t i = 0; i < n_kv; ++i) {
    const std::string what = "metadata key " + std::to_string(i);
    std::string key = c.read_string(what, "key");
    if (key.empty()) throw Error(src, what, "empty key");
    // GGUF keys are text ("general.architecture"); control bytes (a value
    // type's zeros) mean the length before them is wrong, and the key would
    // print as noise.
    const bool text = std::none_of(key.begin(), key.end(), [](char ch) {
      const auto u = static_cast<unsigned char>(ch);
      return u < 0x20 || u == 0x7f;
    });
    if (!text)
      throw Error(src, what, "key of " + std::to_string(key.size()) + " bytes is not text (its length is corrupted)");
    const uint32_t t = c.read<uint32_t>(key);
    GgufValue v = read_value(c, t, key, src, size);
    if (!f.metadata_.emplace(key, std::move(v)).second) throw Error(src, key, "key appears twice");
  }

  if (const GgufValue* a = f.find("general.alignment")) {
    if (!a->is_integer() || a->integer <= 0 || (a->integer & (a->integer - 1)) != 0)
      throw Error(src, "general.alignment", "must be a positive power of two");
    f.alignment_ = static_cast<uint64_t>(a->integer);
  }

  f.tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    t.name = c.read_string("tensor info " + std::to_string(i), "tensor name");
    const std::string& name = t.name;
    if (name.empty()) throw Error(src, "tensor info " + std::to_string(i), "empty tensor name");
    const uint32_t nd = c.read<uint32_t>(name);
    if (nd == 0 || nd > 4) throw Error(src, name, "has " + std::to_string(nd) + " dimensions (1 to 4 allowed)");
    int64_t numel = 1;
    for (uint32_t d = 0; d < nd; ++d) {
      const uint64_t n = c.read<uint64_t>(name);
      if (n == 0 || n > (uint64_t{1} << 40)) throw Error(src, name, "dimension " + std::to_string(d) + " is " + std::to_string(n));
      if (static_cast<uint64_t>(numel) > (uint64_t{1} << 50) / n) throw Error(src, name, "too many elements");
      numel *= static_cast<int64_t>(n);
      t.dims.push_back(static_cast<int64_t>(n));
    }
    const uint32_t type = c.read<uint32_t>(name);
    if (!ggml_type_supported(type))
      throw Error(src, name, "tensor type " + ggml_type_name(type) +
                                 " is not supported (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K are)");
    t.type = static_cast<GgmlType>(type);
    const int be = ggml_block_elements(t.type);
    if (t.dims[0] % be != 0)
      throw Error(src, name, "first dimension " + std::to_string(t.dims[0]) + " is not a multiple of the " +
                                 ggml_type_name(type) + " block size " + std::to_string(be));
    t.nbytes = static_cast<std::size_t>(numel / be) * static_cast<std::size_t>(ggml_block_bytes(t.type));
    t.offset = c.read<uint64_t>(name);
    if (t.offset % f.alignment_ != 0)
      throw Error(src, name, "offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                                 std::to_string(f.alignment_));
    if (!f.tensor_index_.emplace(name, f.tensors_.size()).second) throw Error(src, name, "tensor name appears twice");
    f.tensors_.push_back(std::move(t));
  }

  // The data area starts at the next multiple of the alignment.
  const uint64_t data_start = (c.pos() + f.alignment_ - 1) / f.alignment_ * f.alignment_;
  if (!f.tensors_.empty() && data_start > size) throw Error(src, "tensor data", "file ends before the tensor data");
  const uint64_t data_size = f.tensors_.empty() ? 0 : size - data_start;
  std::vector<std::pair<uint64_t, std::size_t>> spans;
  for (std::size_t i = 0; i < f.tensors_.size(); ++i) {
    auto& t = f.tensors_[i];
    if (t.offset > data_size || t.nbytes > data_size - t.offset)
      throw Error(src, t.name, "data (" + std::to_string(t.nbytes) + " bytes at offset " + std::to_string(t.offset) +
                                   ") runs past the end of the file (truncated?)");
    t.data = f.map_->data() + data_start + t.offset;
    spans.emplace_back(t.offset, i);
  }
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 1; i < spans.size(); ++i) {
    const auto& prev = f.tensors_[spans[i - 1].second];
    if (prev.offset + prev.nbytes > spans[i].first)
      throw Error(src, f.tensors_[spans[i].second].name, "data overlaps tensor " + prev.name);
  }
  // Writers pad each tensor's data to the alignment and stop there, so what
  // follows the last tensor is less than one alignment. More means the
  // header lists fewer tensors than the file holds (a tensor_count one too
  // low moves the data area and reads every tensor from the wrong bytes).
  if (!spans.empty()) {
    const auto& last = f.tensors_[spans.back().second];
    const uint64_t trailing = data_size - (last.offset + last.nbytes);
    if (trailing >= f.alignment_)
      throw Error(src, "tensor_count",
                  std::to_string(f.tensors_.size()) + " tensors leave " + std::to_string(trailing) +
                      " bytes after the last one's data that belong to no tensor (a count too low, or data "
                      "appended to the file)");
  }
  // Every key, value and tensor name is copied out of the header by now,
  // so its pages leave the resident set (a vocabulary's strings and merges:
  // megabytes of a real file; bench/NOTES.md).
  f.map_->drop_pages(f.map_->data(), static_cast<std::size_t>(std::min<uint64_t>(data_start, size)));
  return f;
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::optional<std::string> GgufFile::get_string_if(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufValueType::String)
    throw Error(source_, key, std::string("expected a string, found ") + gguf_value_type_name(v->type));
  return v->string;
}

std::string GgufFile::get_string(const std::string& key) const {
  auto s = get_string_if(key);
  if (!s) throw Error(source_, key, "missing");
  return *s;
}

std::optional<int64_t> GgufFile::get_int_if(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_integer())
    throw Error(source_, key, std::string("expected an integer, found ") + gguf_value_type_name(v->type));
  return v->integer;
}

int64_t GgufFile::get_int(const std::string& key) const {
  auto i = get_int_if(key);
  if (!i) throw Error(source_, key, "missing");
  return *i;
}

std::optional<double> GgufFile::get_real_if(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->is_real()) return v->real;
  if (v->is_integer()) return static_cast<double>(v->integer);
  throw Error(source_, key, std::string("expected a number, found ") + gguf_value_type_name(v->type));
}

std::optional<bool> GgufFile::get_bool_if(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufValueType::Bool)
    throw Error(source_, key, std::string("expected a bool, found ") + gguf_value_type_name(v->type));
  return v->integer != 0;
}

}  // namespace kvscope
