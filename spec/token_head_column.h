// A value per (token, head), [T, H] in Problem::dt_index order, read by that index: either a
// dense vector (ExactResult's δ and decay, a hand-off's slices) or, per pair, an index into a
// table of distinct values. The second is how ref::compute_scalars keeps δ and the decay: a
// pair's values are a function of its head and its dt alone and a bf16 dt takes at most 2^16
// values, so a check holds 4 bytes per pair (the index) and a table per (head, distinct dt)
// instead of 48 bytes per pair (25 MB at 65,536 tokens × 8 heads, where the dump is 169 MB).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ssmv {

class TokenHeadColumn {
 public:
  TokenHeadColumn() = default;
  // Implicit, so that `input.delta = &vector;` reads a dense vector as before.
  TokenHeadColumn(const std::vector<double>* dense) : dense_(dense) {}  // NOLINT(google-explicit-constructor)
  // Pair k's value is table[entry[k]].
  TokenHeadColumn(const std::vector<uint32_t>* entry, const std::vector<double>* table)
      : entry_(entry), table_(table) {}

  // Whether a column was given (a default-constructed or null one reads nothing).
  bool present() const { return dense_ != nullptr || (entry_ != nullptr && table_ != nullptr); }
  size_t size() const { return dense_ != nullptr ? dense_->size() : entry_ != nullptr ? entry_->size() : 0; }
  double operator[](size_t k) const { return dense_ != nullptr ? (*dense_)[k] : (*table_)[(*entry_)[k]]; }

 private:
  const std::vector<double>* dense_ = nullptr;
  const std::vector<uint32_t>* entry_ = nullptr;
  const std::vector<double>* table_ = nullptr;
};

}  // namespace ssmv
