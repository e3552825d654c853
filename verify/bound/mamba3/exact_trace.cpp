#include "verify/bound/mamba3/exact_trace.h"

namespace ssmv::bound::mamba3 {

int64_t chunks_of_sequence(const ssmv::mamba3::Shape& sh, int64_t s, int64_t chunk) {
  return (sh.seq_len(s) + chunk - 1) / chunk;
}

int64_t first_chunk_end(const ssmv::mamba3::Shape& sh, int64_t s, int64_t chunk) {
  int64_t n = 0;
  for (int64_t q = 0; q < s; ++q) n += chunks_of_sequence(sh, q, chunk);
  return n;
}

int64_t chunk_ends(const ssmv::mamba3::Shape& sh, int64_t chunk) {
  return first_chunk_end(sh, sh.num_sequences(), chunk);
}

}  // namespace ssmv::bound::mamba3
