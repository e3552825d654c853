// splitmix64 (Steele, Lea and Flood, 2014): the one implementation behind every seeded stream and
// keyed draw in ssmv (the realistic problems, the sharp verdict's Monte Carlo noise, the property
// harness's seeds, the Mamba-3 emulation's noise). Integer arithmetic only: a seed gives the same
// draws on every machine.
#pragma once

#include <cstdint>

namespace ssmv {

inline constexpr uint64_t kSplitMixGamma = 0x9e3779b97f4a7c15ull;  // the stream's increment

// The finalizer: a bijection of 64-bit words mixing every input bit into every output bit.
inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// One keyed draw: mix(key + γ), the first draw of a stream whose state starts at `key`.
inline uint64_t splitmix64(uint64_t key) { return splitmix64_mix(key + kSplitMixGamma); }

// The stream: state += γ, then mix.
inline uint64_t splitmix64_next(uint64_t& state) { return splitmix64_mix(state += kSplitMixGamma); }

}  // namespace ssmv
