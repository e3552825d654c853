// Counts of the data features the generators drew during one property run (family,
// adversarial features, chunk-edge lengths), printed beside rapidcheck's tag distribution.
// rapidcheck's RC_TAG distribution is keyed by the whole tag set of a case, so per-feature
// coverage is counted here instead. Not thread-safe: one property runs at a time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ssmv::prop {

// Adds one case: its family, its features and an optional extra label ("" for none).
void count_features(const std::string& family, const std::vector<std::string>& features,
                    const std::string& extra);
// Adds one to a label's count (shape coverage and other per-case labels).
void count_label(const std::string& label);
// Adds one case's size in state updates (T·H·P·N), for the mean and maximum in the summary.
void count_updates(int64_t updates);
struct UpdateStats {
  int64_t cases = 0, total = 0, max = 0;
};
const UpdateStats& update_stats();
// The distribution of each judged case's largest bound usage (error ÷ bound over all its
// elements, expect_within_contract): how close the cases come to their contracts. Bins by
// the upper edge: 0 (every element exact), 2^-10, 2^-6, 2^-4, 2^-2, 2^-1, 1, and "inf" for a
// failing case's usage above 1. A case that passes with a usage above 1 is counted in the bin
// "exact_overflow", not in `max`: it was an EXACT ±Inf (an exact value beyond the format's
// range, correctly rounded) before verify::judge gave those usage 0 (verdict.h); the bin now
// stays empty unless that rule breaks, and a count there is a finding.
struct BoundUsageStats {
  int64_t cases = 0;
  double max = 0;
  std::map<std::string, int64_t> bins;  // keyed by bound_usage_bin()
};
void count_bound_usage(double usage, bool passed);
const BoundUsageStats& bound_usage_stats();
// The bin label of a usage ("0", "2^-10", ..., "1", "inf"; "exact_overflow" for a passing case above 1).
std::string bound_usage_bin(double usage, bool passed);
// Counts since the last reset, by label.
const std::map<std::string, int64_t>& feature_counts();
void reset_feature_counts();

}  // namespace ssmv::prop
