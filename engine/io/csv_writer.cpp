#include "io/csv_writer.h"

#include <cmath>
#include <cstdio>

#include "common/error.h"
#include "io/atomic_file.h"

namespace kvscope {

void CsvTable::add_row(std::vector<CsvCell> row) {
  if (row.size() != header.size())
    throw Error("csv table", "row " + std::to_string(rows.size() + 1),
                "has " + std::to_string(row.size()) + " cells, the header has " + std::to_string(header.size()));
  rows.push_back(std::move(row));
}

std::string csv_quote(std::string_view f) {
  const bool needs = f.find_first_of(",\"\r\n") != std::string_view::npos ||
                     (!f.empty() && (f.front() == ' ' || f.back() == ' '));
  if (!needs) return std::string(f);
  std::string out = "\"";
  for (char c : f) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string csv_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string csv_cell(const CsvCell& cell) {
  if (const auto* s = std::get_if<std::string>(&cell)) return csv_quote(*s);
  if (const auto* i = std::get_if<int64_t>(&cell)) return std::to_string(*i);
  return csv_number(std::get<double>(cell));
}

std::string to_csv(const CsvTable& t) {
  std::string out;
  for (std::size_t i = 0; i < t.header.size(); ++i) {
    if (i) out += ',';
    out += csv_quote(t.header[i]);
  }
  out += '\n';
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    if (t.rows[r].size() != t.header.size())
      throw Error("csv table", "row " + std::to_string(r + 1),
                  "has " + std::to_string(t.rows[r].size()) + " cells, the header has " + std::to_string(t.header.size()));
    for (std::size_t i = 0; i < t.rows[r].size(); ++i) {
      if (i) out += ',';
      out += csv_cell(t.rows[r][i]);
    }
    out += '\n';
  }
  return out;
}

void write_csv(const std::filesystem::path& path, const CsvTable& table) {
  std::string text;
  try {
    text = to_csv(table);
  } catch (const Error& e) {
    throw Error(path.string(), "", e.what());
  }
  write_text_file(path, text);
}

}  // namespace kvscope
