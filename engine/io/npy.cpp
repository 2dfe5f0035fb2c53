#include "io/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "io/atomic_file.h"

namespace kvscope {
namespace {

std::string npy_header(const std::string& descr, const std::vector<int64_t>& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) dict += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  dict += "), }";
  // Magic (6) + version (2) + length (2) + dict + padding + '\n' is a multiple of 64.
  std::size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string h = "\x93NUMPY";
  h += '\x01';
  h += '\x00';
  const uint16_t len = static_cast<uint16_t>(dict.size());
  h += static_cast<char>(len & 0xff);
  h += static_cast<char>(len >> 8);
  return h + dict;
}

void write_npy(const std::filesystem::path& path, const std::string& descr, const void* data,
               std::size_t nbytes, std::size_t elem, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  if (static_cast<std::size_t>(n) * elem != nbytes)
    throw Error(path.string(), "shape", "does not match the number of elements");
  const std::string header = npy_header(descr, shape);
  write_file_atomically(path, [&](std::ostream& out) {
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(nbytes));
  });
}

std::size_t descr_size(const std::string& d) {
  if (d == "<f4" || d == "<i4" || d == "<u4") return 4;
  if (d == "<f8" || d == "<i8" || d == "<u8") return 8;
  if (d == "|u1" || d == "|i1" || d == "|b1") return 1;
  return 0;
}

}  // namespace

void write_npy_f32(const std::filesystem::path& path, std::span<const float> data, const std::vector<int64_t>& shape) {
  write_npy(path, "<f4", data.data(), data.size_bytes(), 4, shape);
}
void write_npy_u8(const std::filesystem::path& path, std::span<const uint8_t> data, const std::vector<int64_t>& shape) {
  write_npy(path, "|u1", data.data(), data.size_bytes(), 1, shape);
}
void write_npy_i32(const std::filesystem::path& path, std::span<const int32_t> data, const std::vector<int64_t>& shape) {
  write_npy(path, "<i4", data.data(), data.size_bytes(), 4, shape);
}

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::vector<float> NpyArray::as_f32() const {
  const int64_t n = numel();
  std::vector<float> out(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const unsigned char* p = bytes.data() + i * descr_size(descr);
    if (descr == "<f4") { float v; std::memcpy(&v, p, 4); out[i] = v; }
    else if (descr == "<f8") { double v; std::memcpy(&v, p, 8); out[i] = static_cast<float>(v); }
    else if (descr == "<i4") { int32_t v; std::memcpy(&v, p, 4); out[i] = static_cast<float>(v); }
    else if (descr == "<i8") { int64_t v; std::memcpy(&v, p, 8); out[i] = static_cast<float>(v); }
    else if (descr == "|u1" || descr == "|b1") { out[i] = static_cast<float>(*p); }
    else throw Error("npy", "descr", "cannot convert " + descr + " to float");
  }
  return out;
}

std::vector<int64_t> NpyArray::as_i64() const {
  const int64_t n = numel();
  std::vector<int64_t> out(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const unsigned char* p = bytes.data() + i * descr_size(descr);
    if (descr == "<i4") { int32_t v; std::memcpy(&v, p, 4); out[i] = v; }
    else if (descr == "<i8") { int64_t v; std::memcpy(&v, p, 8); out[i] = v; }
    else if (descr == "|u1" || descr == "|b1") { out[i] = *p; }
    else throw Error("npy", "descr", "cannot convert " + descr + " to integers");
  }
  return out;
}

NpyArray read_npy(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string(), "", "cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  if (s.size() < 10 || s.compare(0, 6, "\x93NUMPY") != 0) throw Error(path.string(), "", "not a .npy file");
  const int major = static_cast<unsigned char>(s[6]);
  std::size_t hlen, hstart;
  if (major == 1) {
    hlen = static_cast<unsigned char>(s[8]) | (static_cast<unsigned char>(s[9]) << 8);
    hstart = 10;
  } else if ((major == 2 || major == 3) && s.size() >= 12) {
    hlen = 0;
    for (int i = 0; i < 4; ++i) hlen |= static_cast<std::size_t>(static_cast<unsigned char>(s[8 + i])) << (8 * i);
    hstart = 12;
  } else {
    throw Error(path.string(), "version", "unsupported .npy version");
  }
  if (hstart + hlen > s.size()) throw Error(path.string(), "header", "truncated");
  const std::string h = s.substr(hstart, hlen);
  NpyArray a;
  auto field = [&](const std::string& key) -> std::string {
    auto p = h.find("'" + key + "'");
    if (p == std::string::npos) throw Error(path.string(), key, "missing in header");
    p = h.find(':', p);
    return h.substr(p + 1);
  };
  {
    std::string d = field("descr");
    auto q1 = d.find('\''), q2 = d.find('\'', q1 + 1);
    a.descr = d.substr(q1 + 1, q2 - q1 - 1);
  }
  if (descr_size(a.descr) == 0) throw Error(path.string(), "descr", "unsupported dtype " + a.descr);
  if (field("fortran_order").find("True") < field("fortran_order").find(',')) throw Error(path.string(), "fortran_order", "Fortran order is not supported");
  {
    std::string sh = field("shape");
    auto open = sh.find('('), close = sh.find(')');
    std::string inner = sh.substr(open + 1, close - open - 1);
    std::stringstream is(inner);
    std::string tok;
    while (std::getline(is, tok, ',')) {
      if (tok.find_first_not_of(" ") == std::string::npos) continue;
      // A dimension is a non-negative integer; anything else (text, a
      // number past int64) is a malformed header, not an exception of stoll's.
      std::size_t used = 0;
      long long v = -1;
      const auto first = tok.find_first_not_of(' ');
      try {
        v = std::stoll(tok.substr(first), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || tok.find_first_not_of(' ', first + used) != std::string::npos || v < 0)
        throw Error(path.string(), "shape", "'" + tok + "' is not a dimension");
      a.shape.push_back(v);
    }
  }
  // The element count must fit before the size check can use it.
  int64_t count = 1, bytes = 0;
  for (int64_t d : a.shape)
    if (__builtin_mul_overflow(count, d, &count) || __builtin_mul_overflow(count, int64_t(descr_size(a.descr)), &bytes))
      throw Error(path.string(), "shape", "has more elements than any file can hold");
  const std::size_t nbytes = static_cast<std::size_t>(a.numel()) * descr_size(a.descr);
  if (hstart + hlen + nbytes != s.size()) throw Error(path.string(), "data", "size does not match the shape");
  a.bytes.assign(s.begin() + static_cast<std::ptrdiff_t>(hstart + hlen), s.end());
  return a;
}

}  // namespace kvscope
