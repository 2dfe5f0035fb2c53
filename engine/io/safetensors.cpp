#include "io/safetensors.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "io/json_file.h"

namespace kvscope {
namespace {

// Element sizes of every dtype the safetensors format defines.
std::optional<std::size_t> element_size(const std::string& dt) {
  static const std::map<std::string, std::size_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};
  auto it = sizes.find(dt);
  if (it == sizes.end()) return std::nullopt;
  return it->second;
}

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // the reference reader's limit

}  // namespace

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string TensorView::shape_string() const {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  SafetensorsFile f;
  f.map_ = MappedFile::open(path);
  const std::string src = path.string();
  const std::size_t size = f.map_->size();
  if (size < 8) throw Error(src, "header", "file is " + std::to_string(size) + " bytes, too short for a safetensors header");
  uint64_t header_len = 0;
  std::memcpy(&header_len, f.map_->data(), 8);  // little-endian on every target we build for
  if (header_len > kMaxHeaderBytes)
    throw Error(src, "header", "header length " + std::to_string(header_len) + " bytes is implausibly large");
  if (header_len > size - 8)
    throw Error(src, "header", "header length " + std::to_string(header_len) + " runs past the end of the file (" +
                                   std::to_string(size) + " bytes); the file is truncated or not safetensors");
  const std::string header(reinterpret_cast<const char*>(f.map_->data() + 8), header_len);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(header);
  } catch (const nlohmann::json::parse_error&) {
    throw Error(src, "header", "header is not valid JSON");
  } catch (const nlohmann::json::exception& e) {
    // Well-formed text the library cannot hold: a number past double's range.
    throw Error(src, "header", std::string("header is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw Error(src, "header", "header is not a JSON object");
  const std::byte* data_start = f.map_->data() + 8 + header_len;
  const uint64_t data_size = size - 8 - header_len;

  struct Span { uint64_t begin, end; std::size_t idx; };
  std::vector<Span> spans;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") {
      if (!it->is_object()) throw Error(src, "__metadata__", "expected an object of strings");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string()) throw Error(src, "__metadata__." + m.key(), "expected a string");
        f.metadata_[m.key()] = m->get<std::string>();
      }
      continue;
    }
    const std::string field = "tensor '" + name + "'";
    if (!it->is_object()) throw Error(src, field, "entry is not an object");
    const auto& e = *it;
    if (!e.contains("dtype") || !e["dtype"].is_string()) throw Error(src, field, "missing or non-string dtype");
    if (!e.contains("shape") || !e["shape"].is_array()) throw Error(src, field, "missing or non-array shape");
    if (!e.contains("data_offsets") || !e["data_offsets"].is_array() || e["data_offsets"].size() != 2)
      throw Error(src, field, "data_offsets must be [begin, end]");
    TensorView t;
    t.name = name;
    t.file = src;
    t.stored_dtype = e["dtype"].get<std::string>();
    auto esize = element_size(t.stored_dtype);
    if (!esize) throw Error(src, field, "unknown dtype '" + t.stored_dtype + "'");
    t.dtype = parse_safetensors_dtype(t.stored_dtype);
    unsigned __int128 numel = 1;
    for (const auto& d : e["shape"]) {
      if (!d.is_number_unsigned()) throw Error(src, field, "shape " + e["shape"].dump() + " has a non-integer or negative dimension");
      t.shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
      numel *= d.get<uint64_t>();
      if (numel > (static_cast<unsigned __int128>(1) << 62)) throw Error(src, field, "shape " + e["shape"].dump() + " is too large");
    }
    const auto& off = e["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      throw Error(src, field, "data_offsets " + off.dump() + " must be non-negative integers");
    const uint64_t b = off[0].get<uint64_t>(), en = off[1].get<uint64_t>();
    if (b > en) throw Error(src, field, "data_offsets " + off.dump() + " end before they begin");
    if (en > data_size)
      throw Error(src, field, "data_offsets " + off.dump() + " run past the data area (" + std::to_string(data_size) +
                                  " bytes); the file is truncated or corrupt");
    const unsigned __int128 expect = numel * *esize;
    if (expect != en - b)
      throw Error(src, field, "shape " + t.shape_string() + " x " + t.stored_dtype + " is " +
                                  std::to_string(static_cast<uint64_t>(expect)) + " bytes but data_offsets span " +
                                  std::to_string(en - b));
    t.data = data_start + b;
    t.nbytes = en - b;
    spans.push_back({b, en, f.tensors_.size()});
    f.tensors_.push_back(std::move(t));
  }
  // The format requires the data area to be covered exactly: sorted by
  // offset, each tensor starts where the previous ended.
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t cursor = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto& s = spans[i];
    const std::string field = "tensor '" + f.tensors_[s.idx].name + "'";
    if (s.begin < cursor)
      throw Error(src, field, "data overlaps tensor '" + f.tensors_[spans[i - 1].idx].name + "'");
    if (s.begin > cursor)
      throw Error(src, field, "gap of " + std::to_string(s.begin - cursor) + " bytes before this tensor's data");
    cursor = s.end;
  }
  if (cursor != data_size)
    throw Error(src, "data", std::to_string(data_size - cursor) + " bytes after the last tensor belong to no tensor");
  for (std::size_t i = 0; i < f.tensors_.size(); ++i) f.index_[f.tensors_[i].name] = i;
  return f;
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

TensorStore TensorStore::from_files(std::vector<SafetensorsFile> files, std::string description) {
  TensorStore s;
  s.files_ = std::move(files);
  s.description_ = std::move(description);
  for (std::size_t fi = 0; fi < s.files_.size(); ++fi) {
    const auto& ts = s.files_[fi].tensors();
    for (std::size_t ti = 0; ti < ts.size(); ++ti) {
      auto [it, inserted] = s.by_name_.emplace(ts[ti].name, std::make_pair(fi, ti));
      if (!inserted)
        throw Error(ts[ti].file, "tensor '" + ts[ti].name + "'",
                    "also stored in " + s.files_[it->second.first].tensors()[it->second.second].file);
    }
  }
  return s;
}

TensorStore TensorStore::from_views(std::vector<TensorView> views, std::shared_ptr<const void> keepalive,
                                    std::string description) {
  TensorStore s;
  s.views_ = std::move(views);
  s.keepalive_ = std::move(keepalive);
  s.description_ = std::move(description);
  for (std::size_t i = 0; i < s.views_.size(); ++i)
    if (!s.view_index_.emplace(s.views_[i].name, i).second)
      throw Error(s.description_, "tensor '" + s.views_[i].name + "'", "appears twice");
  return s;
}

TensorStore TensorStore::open_model_dir(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw Error(dir.string(), "", "model directory not found");
  if (!fs::is_directory(dir, ec)) throw Error(dir.string(), "", "not a directory (expected a Hugging Face model directory)");
  const fs::path single = dir / "model.safetensors";
  const fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(single, ec)) {
    std::vector<SafetensorsFile> files;
    files.push_back(SafetensorsFile::open(single));
    return from_files(std::move(files), single.string());
  }
  if (fs::exists(index, ec)) {
    const auto j = read_json_file(index);
    JsonReader r(j, index.string());
    const auto& wm = r.raw("weight_map");
    if (!wm.is_object()) r.fail("weight_map", "expected an object {tensor name: file name}");
    std::map<std::string, std::vector<std::string>> by_file;
    for (auto it = wm.begin(); it != wm.end(); ++it) {
      if (!it->is_string()) r.fail("weight_map." + it.key(), "expected a file name");
      const std::string file = it->get<std::string>();
      if (file.find('/') != std::string::npos || file == "..")
        r.fail("weight_map." + it.key(), "shard '" + file + "' must be a file in the model directory");
      by_file[file].push_back(it.key());
    }
    std::vector<SafetensorsFile> files;
    for (const auto& [file, names] : by_file) {
      const fs::path p = dir / file;
      if (!fs::exists(p, ec)) throw Error(index.string(), "weight_map", "shard '" + file + "' not found in " + dir.string());
      files.push_back(SafetensorsFile::open(p));
      for (const auto& n : names) {
        if (!files.back().find(n))
          throw Error(index.string(), "weight_map." + n, "tensor is not in shard '" + file + "'");
      }
    }
    return from_files(std::move(files), index.string());
  }
  for (const char* pickle : {"pytorch_model.bin", "pytorch_model.bin.index.json", "model.bin", "consolidated.00.pth"}) {
    if (fs::exists(dir / pickle, ec))
      throw Error((dir / pickle).string(), "",
                  "PyTorch pickle checkpoints are not loaded (they can run code); convert to safetensors, e.g. "
                  "AutoModelForCausalLM.from_pretrained(dir).save_pretrained(dir, safe_serialization=True)");
  }
  throw Error(dir.string(), "", "no model.safetensors or model.safetensors.index.json");
}

const TensorView* TensorStore::find(const std::string& name) const {
  if (auto v = view_index_.find(name); v != view_index_.end()) return &views_[v->second];
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &files_[it->second.first].tensors()[it->second.second];
}

std::vector<std::string> TensorStore::names() const {
  std::vector<std::string> out;
  out.reserve(by_name_.size());
  for (const auto& [n, _] : by_name_) out.push_back(n);
  for (const auto& [n, _] : view_index_) out.push_back(n);
  return out;
}

std::size_t TensorStore::total_bytes() const {
  std::size_t n = 0;
  for (const auto& f : files_)
    for (const auto& t : f.tensors()) n += t.nbytes;
  for (const auto& t : views_) n += t.nbytes;
  return n;
}

}  // namespace kvscope
