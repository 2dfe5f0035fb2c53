// Small CSV tables for export (sweep results, per-step metrics): a header,
// rows of text / integer / floating-point cells, RFC 4180 quoting, floats
// printed so that they read back as the same float, written atomically.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kvscope {

// A cell: text, an exact integer, or a number printed with %.9g (enough
// digits to round-trip a float); NaN is written as "nan", infinities as
// "inf" / "-inf" (what numpy and pandas read back).
using CsvCell = std::variant<std::string, int64_t, double>;

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<CsvCell>> rows;

  // Throws kvscope::Error when the row's length differs from the header's.
  void add_row(std::vector<CsvCell> row);
};

// Quotes a field when it holds a comma, a double quote, CR or LF (or
// starts/ends with a space, which some readers would trim); quotes inside
// are doubled.
std::string csv_quote(std::string_view field);
std::string csv_number(double v);
std::string csv_cell(const CsvCell& cell);
// The whole table; records end with "\n" (LF: what Unix tools expect; every
// RFC 4180 reader accepts it), fields with line breaks are quoted.
std::string to_csv(const CsvTable& table);
// Throws kvscope::Error naming `path` (and leaves no file) on failure or when
// a row's length differs from the header's.
void write_csv(const std::filesystem::path& path, const CsvTable& table);

}  // namespace kvscope
