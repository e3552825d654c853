#include "verify/contracts/budget_json.h"

#include <cmath>

namespace ssmv::verify {
namespace {

json::Value extended(double v) {
  if (std::isinf(v)) return json::Value(v > 0 ? "inf" : "-inf");
  return json::Value(v);
}

}  // namespace

double non_negative_number(const Field& f) {
  const double v = f.as_double();
  if (!(v >= 0)) f.fail("must be >= 0, found " + f.text());
  return v;
}

json::Value budget_to_json(const TranscendentalBudget& b) {
  return json::Value::object({{"function", json::Value(b.function)},
                              {"ulp_const", json::Value(b.ulp_const)},
                              {"ulp_per_abs_arg", json::Value(b.ulp_per_abs_arg)},
                              {"abs_error", json::Value(b.abs_error)},
                              {"arg_lo", extended(b.arg_lo)},
                              {"arg_hi", extended(b.arg_hi)},
                              {"how_measured", json::Value(b.how_measured)}});
}

TranscendentalBudget budget_from_json(const Field& f, const std::vector<std::string>& functions) {
  const ObjectFields o(f, {"function", "ulp_const", "ulp_per_abs_arg", "abs_error", "arg_lo", "arg_hi",
                           "how_measured"});
  TranscendentalBudget b;
  const Field fn = o.get("function");
  b.function = fn.as_string();
  bool known = false;
  std::string expected;
  for (const std::string& k : functions) {
    known = known || k == b.function;
    expected += (expected.empty() ? "" : ", ") + k;
  }
  if (!known) fn.fail("unknown function '" + b.function + "' (expected " + expected + ")");
  b.ulp_const = non_negative_number(o.get("ulp_const"));
  b.ulp_per_abs_arg = non_negative_number(o.get("ulp_per_abs_arg"));
  b.abs_error = non_negative_number(o.get("abs_error"));
  const Field lo = o.get("arg_lo"), hi = o.get("arg_hi");
  b.arg_lo = lo.as_extended();
  b.arg_hi = hi.as_extended();
  if (!(b.arg_lo <= b.arg_hi) || b.arg_lo == HUGE_VAL || b.arg_hi == -HUGE_VAL) {
    hi.fail("the argument range [" + lo.text() + ", " + hi.text() + "] is empty");
  }
  b.how_measured = o.get("how_measured").as_string();
  return b;
}

}  // namespace ssmv::verify
