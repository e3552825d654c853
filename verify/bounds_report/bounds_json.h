// `ssmv bounds --out-json`: the report as JSON (schema "ssmv.bounds/1", documented in
// docs/error-bounds.md "Reading this page"). Non-finite numbers, which JSON cannot hold
// (an allclose tolerance that nothing meets, a ratio at a zero exact value), are null.
#pragma once

#include "verify/bounds_report/bounds_report.h"
#include "verify/json/json.h"

namespace ssmv::verify {

inline constexpr const char* kBoundsSchema = "ssmv.bounds/1";

json::Value bounds_to_json(const BoundsReport& r);

}  // namespace ssmv::verify
