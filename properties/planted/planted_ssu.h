// The planted-bug catalogue: deliberately broken variants of the SSU kernel, built from the
// host twin (fast/ssu/ssu.h) by perturbing what it computes the way real kernel bugs do, and
// judged exactly like the real kernel (reference, sequential bound, per-element verdicts).
// They prove the property suites tell bugs from rounding, and drive the counterexample
// round trip (tests/counterexample_round_trip_test.cpp).
//
//   drop_d       the skip connection D·x is never added to y (a kernel that forgets D);
//   wrong_group  head h reads B and C of group (g(h) + 1) mod G instead of g(h) (an indexing
//                bug visible only with G ≥ 2).
#pragma once

#include <string_view>

#include "fast/ssu/ssu.h"
#include "spec/problem.h"
#include "verify/run/kernel_check.h"

namespace ssmv::prop {

enum class PlantedBug : uint8_t { drop_d, wrong_group };

std::string_view planted_bug_name(PlantedBug bug);  // "ssu.drop_d", "ssu.wrong_group"
// Parses a name planted_bug_name gives; false otherwise.
bool parse_planted_bug(std::string_view name, PlantedBug& out);

// The broken variant's outputs (host twin arithmetic, perturbed).
ssu::Result run_planted(const DecodeProblem& d, PlantedBug bug);

// As verify::check_ssu(d, Device::twin), with the broken variant as the kernel.
verify::KernelCheck check_planted_ssu(const DecodeProblem& d, PlantedBug bug);

// Property 1 on the broken variant (a property body): draws a decode problem and expects the
// variant within the SSU contract — which fails, writing the counterexample (case_failure.h).
void planted_ssu_within_contract(PlantedBug bug);

}  // namespace ssmv::prop
