// The planted-bug catalogue (catalogue.json, docs/planted-bugs.md): deliberately broken
// variants of the bundled kernels' host twins. Each bug is one small, named edit of one twin
// source (fast/ssu/twin.cpp or fast/chunk_scan/twin.cpp) — a find/replace that CMake applies
// to a copy of the file (properties/planted/CMakeLists.txt) — linked into its own binary,
// build/<preset>/planted/ssmv-planted-<name>: the ssmv command, and the catalogue's test,
// built with the broken twin in place of the bundled one. The production twins stay as
// they are; the catalogue says which real-kernel slip each edit models.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ssmv::prop {

enum class BugClass {
  semantic,       // a wrong result (dropped term, wrong index, missed reset): must be caught
  precision,      // a small real violation of the contract the kernel claims: must be caught
  rounding_path,  // a rounding-path change the contract allows: not a bug, must pass
};

struct PlantedBug {
  std::string name;    // "ssu.wrong_group"
  std::string kernel;  // "ssu" or "chunk_scan"
  BugClass bug_class = BugClass::semantic;
  std::string slip;    // the real-kernel slip it models
  std::string file;    // the twin source it edits
};

std::string_view bug_class_name(BugClass c);  // "semantic", "precision", "rounding_path"
inline bool must_be_caught(BugClass c) { return c != BugClass::rounding_path; }

// Reads catalogue.json. Throws std::runtime_error naming the file, the entry and the field
// on malformed input.
std::vector<PlantedBug> read_catalogue(const std::string& path);

// The entry named `name`; throws std::runtime_error if there is none.
const PlantedBug& find_planted_bug(const std::vector<PlantedBug>& catalogue, std::string_view name);

// The bug this binary carries ("none" in the control binary, whose twins are the bundled
// ones); defined by the file CMake generates for each binary.
extern const char* const kPlantedBugName;

// The catalogue this build read (its path is compiled in).
const std::vector<PlantedBug>& catalogue();

}  // namespace ssmv::prop
