// main of the planted-bug binaries (ssmv-planted-<name>):
//   ssmv-planted-<name> catalogue [gtest options]   the catalogue's test (catalogue_test.cpp)
//   ssmv-planted-<name> side-by-side KERNEL FILE     the side-by-side run (side_by_side.h)
//   ssmv-planted-<name> sharp KERNEL FILE            the sharp verdict's proof (sharp_proof.h)
//   ssmv-planted-<name> ARGS...                      ssmv ARGS with the broken twin
//                                                     (e.g. `replay FILE`)
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "properties/planted/catalogue.h"
#include "properties/planted/sharp_proof.h"
#include "properties/planted/side_by_side.h"
#include "verify/cli/dispatch.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "catalogue") {
    std::vector<char*> rest{argv[0]};
    for (int i = 2; i < argc; ++i) rest.push_back(argv[i]);
    int n = int(rest.size());
    testing::InitGoogleTest(&n, rest.data());
    return RUN_ALL_TESTS();
  }
  if (argc >= 2 && std::string(argv[1]) == "side-by-side") {
    if (argc != 4) {
      std::fprintf(stderr, "usage: %s side-by-side ssu|chunk_scan FILE\n", argv[0]);
      return 2;
    }
    return ssmv::prop::side_by_side(argv[2], argv[3], 1);
  }
  if (argc >= 2 && std::string(argv[1]) == "sharp") {
    if (argc != 4) {
      std::fprintf(stderr, "usage: %s sharp ssu|chunk_scan FILE\n", argv[0]);
      return 2;
    }
    return ssmv::prop::sharp_proof(argv[2], argv[3]);
  }
  std::fprintf(stderr, "note: this ssmv is built with the planted bug '%s' in its host twin (properties/planted/catalogue.json)\n",
               ssmv::prop::kPlantedBugName);
  return ssmv::cli::run_ssmv(std::vector<std::string>(argv + 1, argv + argc));
}
