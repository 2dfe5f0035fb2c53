// GGUF files (llama.cpp, Ollama, LM Studio): header, metadata, tensor infos,
// memory-mapped and fully validated before any tensor is read. Versions 2
// and 3, little-endian. Dequantization is in gguf_dequant.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/ggml_type.h"
#include "io/mapped_file.h"

namespace kvscope {

// The value types of GGUF metadata (numbering from the format).
enum class GgufValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
  String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};
const char* gguf_value_type_name(GgufValueType t);

// One metadata value. Integers of every width land in `integer` (U64 values
// above INT64_MAX are refused when read), floats in `real`; arrays keep their
// element type and one of the vectors (nested arrays are refused: no model
// format kvscope reads uses them).
struct GgufValue {
  GgufValueType type = GgufValueType::U8;
  GgufValueType element_type = GgufValueType::U8;  // for arrays
  int64_t integer = 0;
  double real = 0;
  std::string string;
  std::vector<int64_t> integers;   // integer and bool arrays
  std::vector<double> reals;       // float arrays
  std::vector<std::string> strings;  // string arrays

  bool is_integer() const;
  bool is_real() const { return type == GgufValueType::F32 || type == GgufValueType::F64; }
  bool is_array() const { return type == GgufValueType::Array; }
  std::size_t array_size() const;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // as stored: dims[0] varies fastest (ggml's ne)
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;        // from the start of the data area
  const std::byte* data = nullptr;
  std::size_t nbytes = 0;

  int64_t numel() const;
  // Row-major shape as PyTorch/safetensors write it: dims reversed.
  std::vector<int64_t> torch_shape() const;
};

class GgufFile {
 public:
  // Maps and validates: magic, version 2 or 3, counts, every key and string
  // inside the file, known value types, tensor dims and types, alignment, and
  // every tensor's bytes inside the data area without overlap. Throws
  // kvscope::Error naming the file and the key or tensor.
  static GgufFile open(const std::filesystem::path& path);

  uint32_t version() const { return version_; }
  const std::map<std::string, GgufValue>& metadata() const { return metadata_; }
  const GgufValue* find(const std::string& key) const;
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(const std::string& name) const;
  const std::shared_ptr<const MappedFile>& mapping() const { return map_; }
  const std::string& source() const { return source_; }  // the path, for messages
  uint64_t alignment() const { return alignment_; }

  // Typed metadata access; each throws naming the file and the key when the
  // key is missing (required forms) or has another type.
  std::string get_string(const std::string& key) const;
  std::optional<std::string> get_string_if(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  std::optional<int64_t> get_int_if(const std::string& key) const;
  std::optional<double> get_real_if(const std::string& key) const;  // integers accepted too
  std::optional<bool> get_bool_if(const std::string& key) const;

 private:
  std::shared_ptr<const MappedFile> map_;
  std::string source_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  std::map<std::string, GgufValue> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, std::size_t> tensor_index_;
};

}  // namespace kvscope
