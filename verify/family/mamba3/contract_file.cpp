#include "verify/family/mamba3/contract_file.h"

#include <set>
#include <vector>

#include "verify/contracts/budget_json.h"
#include "verify/contracts/json_fields.h"

namespace ssmv::family::mamba3 {
namespace {

using json::Value;
using verify::Field;
using verify::ObjectFields;

const std::vector<std::string> kStepFunctions{"tanh", "cos", "sin", "exp", "sigmoid", "silu"};
const std::vector<std::string> kPrefillFunctions{"tanh", "cos", "sin", "exp2", "sigmoid", "silu"};

Value format_value(Format f) { return Value(std::string(format_name(f))); }

Format parse_dot_format(const Field& f) {
  for (Format v : {Format::fp32, Format::bf16, Format::fp16}) {
    if (format_name(v) == f.as_string()) return v;
  }
  f.fail("unknown format '" + f.as_string() + "' (expected fp32, bf16, fp16)");
}

double parse_division(const Field& f) {
  const double v = verify::non_negative_number(f);
  if (!(v < 1)) f.fail("a relative error must be below 1, found " + f.text());
  return v;
}

Value budgets_to_json(const std::vector<const TranscendentalBudget*>& budgets) {
  Value a = Value::array();
  for (const TranscendentalBudget* b : budgets) a.push_back(verify::budget_to_json(*b));
  return a;
}

// Every function of `functions` exactly once, in any order; `slots` in the same order.
void parse_budgets(const Field& list, const std::vector<std::string>& functions,
                   const std::vector<TranscendentalBudget*>& slots) {
  std::set<std::string> seen;
  for (const Field& f : list.items()) {
    TranscendentalBudget b = verify::budget_from_json(f, functions);
    if (!seen.insert(b.function).second) f.member("function").fail("function '" + b.function + "' is listed twice");
    for (size_t i = 0; i < functions.size(); ++i) {
      if (functions[i] == b.function) *slots[i] = std::move(b);
    }
  }
  for (const std::string& fn : functions) {
    if (!seen.count(fn)) list.fail("no budget for '" + fn + "' (a Mamba-3 contract budgets every function its kernel evaluates)");
  }
}

Field family_field(const Value& v, const std::string& path) { return Field(v, path).member("family"); }

}  // namespace

Value step_contract_to_json(const ssmv::mamba3::StepContract& c) {
  return Value::object({{"family", Value("mamba3_step")},
                        {"name", Value(c.name)},
                        {"dot_operands", format_value(c.dot_operands)},
                        {"dot_tensor_cores", Value(c.dot_tensor_cores)},
                        {"division_rel", Value(c.division_rel)},
                        {"transcendentals", budgets_to_json({&c.tanh, &c.cos, &c.sin, &c.exp, &c.sigmoid, &c.silu})}});
}

Value prefill_contract_to_json(const ssmv::mamba3::PrefillContract& c) {
  return Value::object({{"family", Value("mamba3_prefill")},
                        {"name", Value(c.name)},
                        {"angle_store", format_value(c.angle_store)},
                        {"qk_store", format_value(c.qk_store)},
                        {"dot_operands", format_value(c.dot_operands)},
                        {"dot_tensor_cores", Value(c.dot_tensor_cores)},
                        {"qk_dot_tf32", Value(c.qk_dot_tf32)},
                        {"division_rel", Value(c.division_rel)},
                        {"transcendentals",
                         budgets_to_json({&c.tanh, &c.cos, &c.sin, &c.exp2, &c.sigmoid, &c.silu})}});
}

std::string contract_file_family(const std::string& path) {
  const Value v = verify::parse_json_file_text(verify::read_text_file(path), path);
  if (!v.is_object()) Field(v, path).fail("a Mamba-3 contract file holds one JSON object");
  const Field f = family_field(v, path);
  const std::string& family = f.as_string();
  if (family != "mamba3_step" && family != "mamba3_prefill") {
    f.fail("unknown family '" + family + "' (a Mamba-3 contract file: mamba3_step or mamba3_prefill)");
  }
  return family;
}

ssmv::mamba3::StepContract read_step_contract(const std::string& path) {
  const Value v = verify::parse_json_file_text(verify::read_text_file(path), path);
  const ObjectFields o(Field(v, path),
                       {"family", "name", "dot_operands", "dot_tensor_cores", "division_rel", "transcendentals"});
  if (o.get("family").as_string() != "mamba3_step") o.get("family").fail("expected 'mamba3_step' (the step kernel's contract)");
  ssmv::mamba3::StepContract c;
  c.name = o.get("name").as_string();
  c.dot_operands = parse_dot_format(o.get("dot_operands"));
  c.dot_tensor_cores = o.get("dot_tensor_cores").as_bool();
  c.division_rel = parse_division(o.get("division_rel"));
  parse_budgets(o.get("transcendentals"), kStepFunctions, {&c.tanh, &c.cos, &c.sin, &c.exp, &c.sigmoid, &c.silu});
  return c;
}

ssmv::mamba3::PrefillContract read_prefill_contract(const std::string& path) {
  const Value v = verify::parse_json_file_text(verify::read_text_file(path), path);
  const ObjectFields o(Field(v, path), {"family", "name", "angle_store", "qk_store", "dot_operands", "dot_tensor_cores",
                                        "qk_dot_tf32", "division_rel", "transcendentals"});
  if (o.get("family").as_string() != "mamba3_prefill") {
    o.get("family").fail("expected 'mamba3_prefill' (the chunked prefill's contract)");
  }
  ssmv::mamba3::PrefillContract c;
  c.name = o.get("name").as_string();
  c.angle_store = parse_dot_format(o.get("angle_store"));
  c.qk_store = parse_dot_format(o.get("qk_store"));
  c.dot_operands = parse_dot_format(o.get("dot_operands"));
  c.dot_tensor_cores = o.get("dot_tensor_cores").as_bool();
  c.qk_dot_tf32 = o.get("qk_dot_tf32").as_bool();
  c.division_rel = parse_division(o.get("division_rel"));
  parse_budgets(o.get("transcendentals"), kPrefillFunctions, {&c.tanh, &c.cos, &c.sin, &c.exp2, &c.sigmoid, &c.silu});
  return c;
}

}  // namespace ssmv::family::mamba3
