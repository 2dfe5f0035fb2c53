#include "io/png_writer.h"

#include <stb_image_write.h>

#include "common/error.h"
#include "io/atomic_file.h"

namespace kvscope {
namespace {

void append_bytes(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<uint8_t>*>(context);
  const auto* bytes = static_cast<const uint8_t*>(data);
  out->insert(out->end(), bytes, bytes + size);
}

}  // namespace

std::vector<uint8_t> encode_png(std::span<const uint8_t> pixels, int width, int height, int channels,
                                const std::string& source) {
  if (channels != 3 && channels != 4)
    throw Error(source, "channels", std::to_string(channels) + " is not supported (3 = RGB, 4 = RGBA)");
  if (width <= 0 || height <= 0)
    throw Error(source, "size", std::to_string(width) + " x " + std::to_string(height) + " is empty");
  if (pixels.size() != static_cast<std::size_t>(width) * height * channels)
    throw Error(source, "pixels",
                "has " + std::to_string(pixels.size()) + " bytes, " + std::to_string(width) + " x " +
                    std::to_string(height) + " x " + std::to_string(channels) + " expected");
  std::vector<uint8_t> png;
  // stbi_write_png_to_func takes a non-const pointer but only reads it.
  if (!stbi_write_png_to_func(append_bytes, &png, width, height, channels, const_cast<uint8_t*>(pixels.data()),
                              width * channels) ||
      png.empty())
    throw Error(source, "", "PNG encoding failed");
  return png;
}

void write_png(const std::filesystem::path& path, std::span<const uint8_t> pixels, int width, int height,
               int channels) {
  const std::vector<uint8_t> png = encode_png(pixels, width, height, channels, path.string());
  write_file_atomically(path, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  });
}

void write_png(const std::filesystem::path& path, const Image& image) {
  write_png(path, image.pixels, image.width, image.height, 3);
}

}  // namespace kvscope
