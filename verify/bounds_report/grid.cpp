#include "verify/bounds_report/grid.h"

#include <algorithm>
#include <stdexcept>

#include "spec/realistic_problem.h"

namespace ssmv::verify {
namespace {

const std::vector<std::string> kDocContracts = {"ssu", "triton.ssu", "chunk_scan.production", "chunk_scan.fp32",
                                                "triton.chunk_scan"};

void positive_list(const std::vector<int64_t>& v, const std::string& option) {
  if (v.empty()) throw std::invalid_argument("option '" + option + "': the list is empty");
  for (const int64_t x : v) {
    if (x <= 0) throw std::invalid_argument("option '" + option + "' = " + std::to_string(x) + " is not positive");
  }
}

void in_sweep(int64_t base, const std::vector<int64_t>& sweep, const std::string& option, const std::string& list) {
  if (std::find(sweep.begin(), sweep.end(), base) == sweep.end()) {
    throw std::invalid_argument("option '" + option + "' = " + std::to_string(base) + " is not one of '" + list +
                                "'");
  }
}

}  // namespace

BoundsGrid default_bounds_grid() {
  BoundsGrid g;
  g.contracts = kDocContracts;
  g.lengths = {64, 256, 1024, 4096, 8192};
  g.state_dims = {16, 64, 128, 256};
  g.chunk_sizes = {64, 128, 256};
  g.base_length = 1024;
  g.base_state_dim = 128;
  g.base_chunk_size = 256;
  g.heads = 4;
  g.head_dim = 64;
  g.groups = 2;
  g.input_formats = {Format::bf16};
  g.state_formats = {Format::fp32};
  g.output_formats = {Format::bf16, Format::fp32};
  g.seed = 1;
  return g;
}

BoundsGrid quick_bounds_grid() {
  BoundsGrid g = default_bounds_grid();
  g.lengths = {32, 160};
  g.state_dims = {16, 32};
  g.chunk_sizes = {64};
  g.base_length = 160;
  g.base_state_dim = 16;
  g.base_chunk_size = 64;
  g.heads = 2;
  g.head_dim = 8;
  g.groups = 1;
  return g;
}

void validate_grid(const BoundsGrid& g) {
  if (g.contracts.empty()) throw std::invalid_argument("option '--contract': no contract given");
  positive_list(g.lengths, "--lengths");
  positive_list(g.state_dims, "--state-dims");
  positive_list(g.chunk_sizes, "--chunk-sizes");
  in_sweep(g.base_length, g.lengths, "--base-length", "--lengths");
  in_sweep(g.base_state_dim, g.state_dims, "--base-state-dim", "--state-dims");
  in_sweep(g.base_chunk_size, g.chunk_sizes, "--base-chunk-size", "--chunk-sizes");
  for (const auto& [v, option] : {std::pair{g.heads, "--heads"}, {g.head_dim, "--head-dim"}, {g.groups, "--groups"}}) {
    if (v <= 0) throw std::invalid_argument("option '" + std::string(option) + "' = " + std::to_string(v) + " is not positive");
  }
  if (g.heads % g.groups != 0) {
    throw std::invalid_argument("option '--groups' = " + std::to_string(g.groups) + " does not divide --heads = " +
                                std::to_string(g.heads));
  }
  for (const auto& [v, option] : {std::pair{&g.input_formats, "--input-formats"}, {&g.state_formats, "--state-formats"},
                                  {&g.output_formats, "--output-formats"}}) {
    if (v->empty()) throw std::invalid_argument("option '" + std::string(option) + "': the list is empty");
  }
}

std::vector<GridProblem> grid_problems(const BoundsGrid& g) {
  std::vector<GridProblem> out;
  const auto add = [&](int64_t T, int64_t N, int64_t L) {
    auto it = std::find_if(out.begin(), out.end(), [&](const GridProblem& q) { return q.T == T && q.N == N; });
    if (it == out.end()) {
      out.push_back({T, N, {}});
      it = out.end() - 1;
    }
    if (std::find(it->chunk_sizes.begin(), it->chunk_sizes.end(), L) == it->chunk_sizes.end()) {
      it->chunk_sizes.push_back(L);
    }
  };
  for (const int64_t T : g.lengths) add(T, g.base_state_dim, g.base_chunk_size);
  for (const int64_t N : g.state_dims) add(g.base_length, N, g.base_chunk_size);
  for (const int64_t L : g.chunk_sizes) add(g.base_length, g.base_state_dim, L);
  return out;
}

Problem grid_problem(const BoundsGrid& g, int64_t T, int64_t N, const Formats& formats) {
  return realistic_problem(Shape{{0, T}, g.heads, g.head_dim, N, g.groups}, formats, g.seed);
}

}  // namespace ssmv::verify
