// PNG export of 8-bit RGB / RGBA rasters through stb_image_write (Debian's
// libstb, which already contains the implementation): encoded in memory,
// then written atomically.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "io/image.h"

namespace kvscope {

// `pixels` holds height rows of width * channels bytes (channels 3 = RGB,
// 4 = RGBA), top row first. Throws kvscope::Error naming `source` when the
// sizes do not match or the encoder fails.
std::vector<uint8_t> encode_png(std::span<const uint8_t> pixels, int width, int height, int channels,
                                const std::string& source = "png");

// Throws kvscope::Error naming `path`; never leaves a partial file.
void write_png(const std::filesystem::path& path, std::span<const uint8_t> pixels, int width, int height,
               int channels);
void write_png(const std::filesystem::path& path, const Image& image);

}  // namespace kvscope
