// libFuzzer's entry point for the tensor-file parsers (see fuzz_entry.h).
#include <cstddef>
#include <cstdint>

#include "verify/tensor_file/fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ssmv::tensor_file::fuzz_tensor_parsers(data, size);
  return 0;
}
