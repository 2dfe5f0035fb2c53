// Safetensors checkpoints: memory-mapped, fully validated before any tensor
// is read, single file or sharded through model.safetensors.index.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/dtype.h"
#include "io/ggml_type.h"
#include "io/mapped_file.h"

namespace kvscope {

struct TensorView {
  std::string name;
  std::string stored_dtype;    // as written in the header ("F16", "I64", ...)
  std::optional<DType> dtype;  // set for the float types kvscope computes with
  // A GGUF matrix kept in its file's blocks (quantized, F16 or BF16; rows of
  // whole blocks): `data` holds them and `dtype` is F32, what they
  // dequantize to. Unset for plain arrays of `dtype`.
  std::optional<GgmlType> blocks;
  std::vector<int64_t> shape;
  const std::byte* data = nullptr;  // inside the mapping; not necessarily aligned
  std::size_t nbytes = 0;
  std::string file;  // the file it lives in, for messages

  int64_t numel() const;
  std::string shape_string() const;  // "[768, 2304]"
};

class SafetensorsFile {
 public:
  // Maps and validates: header length sane and inside the file, header JSON an
  // object, every entry with a known dtype, a shape and data_offsets inside the
  // data area, shape x dtype size = byte length, tensors contiguous with no
  // overlap and no gap. Throws kvscope::Error naming the file and the tensor.
  static SafetensorsFile open(const std::filesystem::path& path);

  const std::vector<TensorView>& tensors() const { return tensors_; }
  const TensorView* find(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::shared_ptr<const MappedFile>& mapping() const { return map_; }

 private:
  std::shared_ptr<const MappedFile> map_;
  std::vector<TensorView> tensors_;
  std::map<std::string, std::size_t> index_;
  std::map<std::string, std::string> metadata_;
};

// All tensors of one model directory, whichever way they are stored.
class TensorStore {
 public:
  // Opens <dir>/model.safetensors, or <dir>/model.safetensors.index.json and
  // every shard it names (each tensor must be in the shard the index says).
  // A directory with only pytorch_model.bin is refused with a message saying
  // how to convert it.
  static TensorStore open_model_dir(const std::filesystem::path& dir);
  static TensorStore from_files(std::vector<SafetensorsFile> files, std::string description);
  // Tensors that live elsewhere (a GGUF file dequantized on load): `keepalive`
  // owns the memory the views point into for as long as the store lives.
  static TensorStore from_views(std::vector<TensorView> views, std::shared_ptr<const void> keepalive,
                                std::string description);
  // How the file names a tensor the store knows by its transformers name
  // (a GGUF file's "blk.0.attn_norm.weight"), for messages; unset: the same.
  void set_names_in_file(std::function<std::string(const std::string&)> name_in_file) {
    name_in_file_ = std::move(name_in_file);
  }
  std::string name_in_file(const std::string& name) const { return name_in_file_ ? name_in_file_(name) : name; }

  const TensorView* find(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::string& description() const { return description_; }  // file name(s) for messages
  std::size_t total_bytes() const;

 private:
  std::vector<SafetensorsFile> files_;
  std::map<std::string, std::pair<std::size_t, std::size_t>> by_name_;  // (file, tensor)
  std::vector<TensorView> views_;                   // from_views: no files
  std::map<std::string, std::size_t> view_index_;
  std::shared_ptr<const void> keepalive_;
  std::string description_;
  std::function<std::string(const std::string&)> name_in_file_;
};

}  // namespace kvscope
