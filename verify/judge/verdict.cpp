#include "verify/judge/verdict.h"

namespace ssmv::verify {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::exact: return "EXACT";
    case Verdict::within_contract: return "WITHIN_CONTRACT";
    case Verdict::violation: return "VIOLATION";
    case Verdict::invalid: return "INVALID";
  }
  return "?";
}

}  // namespace ssmv::verify
