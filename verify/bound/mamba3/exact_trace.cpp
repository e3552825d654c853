#include "verify/bound/mamba3/exact_trace.h"

#include <algorithm>

namespace ssmv::bound::mamba3 {

namespace {
// The chunked prefix of a sequence of `length` tokens.
int64_t chunked_part(const TraceGrid& g, int64_t length) {
  return g.chunked == 0 ? length : std::min(g.chunked, length);
}
}  // namespace

int64_t TraceGrid::kept(int64_t length) const {
  const int64_t c = chunked_part(*this, length);
  return (c + chunk - 1) / chunk + (length - c);
}

bool TraceGrid::keeps(int64_t local, int64_t length) const {
  const int64_t c = chunked_part(*this, length);
  return local >= c || (local + 1) % chunk == 0 || local + 1 == c;
}

int64_t TraceGrid::row(int64_t local, int64_t length) const {
  const int64_t c = chunked_part(*this, length);
  return local < c ? local / chunk : (c + chunk - 1) / chunk + (local - c);
}

int64_t chunks_of_sequence(const ssmv::mamba3::Shape& sh, int64_t s, int64_t chunk) {
  return TraceGrid{chunk, 0}.kept(sh.seq_len(s));
}

int64_t first_kept(const ssmv::mamba3::Shape& sh, int64_t s, const TraceGrid& g) {
  int64_t n = 0;
  for (int64_t q = 0; q < s; ++q) n += g.kept(sh.seq_len(q));
  return n;
}

int64_t kept_tokens(const ssmv::mamba3::Shape& sh, const TraceGrid& g) { return first_kept(sh, sh.num_sequences(), g); }

int64_t first_chunk_end(const ssmv::mamba3::Shape& sh, int64_t s, int64_t chunk) {
  return first_kept(sh, s, TraceGrid{chunk, 0});
}

int64_t chunk_ends(const ssmv::mamba3::Shape& sh, int64_t chunk) { return kept_tokens(sh, TraceGrid{chunk, 0}); }

}  // namespace ssmv::bound::mamba3
