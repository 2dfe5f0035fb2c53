// One piece of text on its way through the encode pipeline (HF's "split"
// inside a PreTokenizedString), without HF's full offset bookkeeping:
// kvscope only needs ids and token strings.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace kvscope::tok {

struct Piece {
  std::string text;
  // How many leading bytes of `text` HF would align to byte 0 of the text
  // given to encode() (0: the piece does not start there). HF tracks full
  // offsets; the only behaviour that depends on them is Metaspace's
  // prepend_scheme "first" ("does this piece start the input?"), and a piece
  // can start the input without starting at normalized byte 0 (text a
  // normalizer prepended, a first character it expanded).
  size_t origin_bytes = 0;
  // >= 0: an added token, already final (never normalized, split or merged).
  int added_id = -1;

  bool at_origin() const { return origin_bytes > 0; }
};

using Pieces = std::vector<Piece>;

// origin_bytes of the sub-range [start, end) of a piece.
inline size_t origin_of_range(const Piece& p, size_t start, size_t end) {
  return start < p.origin_bytes ? std::min(p.origin_bytes, end) - start : 0;
}

// Replaces every non-added piece by the byte ranges `split(piece)` returns
// (`split` may first rewrite the piece), dropping empty ranges like HF does.
template <typename SplitFn>
void split_pieces(Pieces& pieces, SplitFn split) {
  Pieces out;
  out.reserve(pieces.size());
  for (Piece& p : pieces) {
    if (p.added_id >= 0) {
      out.push_back(std::move(p));
      continue;
    }
    for (const auto& r : split(p)) {
      if (r.end <= r.start) continue;
      out.push_back(Piece{p.text.substr(r.start, r.end - r.start), origin_of_range(p, r.start, r.end), -1});
    }
  }
  pieces = std::move(out);
}

}  // namespace kvscope::tok
