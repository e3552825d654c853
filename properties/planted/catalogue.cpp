#include "properties/planted/catalogue.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "verify/json/json.h"

#ifndef SSMV_PLANTED_CATALOGUE
#error "SSMV_PLANTED_CATALOGUE (the path of catalogue.json) is set by properties/planted/CMakeLists.txt"
#endif

namespace ssmv::prop {

std::string_view bug_class_name(BugClass c) {
  switch (c) {
    case BugClass::semantic: return "semantic";
    case BugClass::precision: return "precision";
    case BugClass::rounding_path: return "rounding_path";
  }
  return "?";
}

std::vector<PlantedBug> read_catalogue(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  const json::Value doc = json::parse(text.str());
  if (!doc.is_object() || !doc.contains("bugs") || !doc["bugs"].is_array()) {
    throw std::runtime_error(path + ": expected an object with an array 'bugs'");
  }
  std::vector<PlantedBug> out;
  for (size_t i = 0; i < doc["bugs"].size(); ++i) {
    const json::Value& e = doc["bugs"][i];
    auto field = [&](const char* key) {
      if (!e.is_object() || !e.contains(key) || !e[key].is_string()) {
        throw std::runtime_error(path + ": bugs[" + std::to_string(i) + "]: field '" + key + "' is missing or not a string");
      }
      return e[key].get<std::string>();
    };
    PlantedBug b{field("name"), field("kernel"), BugClass::semantic, field("slip"), field("file")};
    const std::string cls = field("class");
    if (cls == "semantic") b.bug_class = BugClass::semantic;
    else if (cls == "precision") b.bug_class = BugClass::precision;
    else if (cls == "rounding_path") b.bug_class = BugClass::rounding_path;
    else throw std::runtime_error(path + ": bugs[" + std::to_string(i) + "] ('" + b.name + "'): field 'class' = '" + cls +
                                  "': expected semantic, precision or rounding_path");
    if (b.kernel != "ssu" && b.kernel != "chunk_scan") {
      throw std::runtime_error(path + ": bugs[" + std::to_string(i) + "] ('" + b.name + "'): field 'kernel' = '" + b.kernel +
                               "': expected ssu or chunk_scan");
    }
    out.push_back(std::move(b));
  }
  return out;
}

const PlantedBug& find_planted_bug(const std::vector<PlantedBug>& catalogue, std::string_view name) {
  for (const PlantedBug& b : catalogue) {
    if (b.name == name) return b;
  }
  throw std::runtime_error("the planted-bug catalogue has no bug '" + std::string(name) + "'");
}

const std::vector<PlantedBug>& catalogue() {
  static const std::vector<PlantedBug> c = read_catalogue(SSMV_PLANTED_CATALOGUE);
  return c;
}

}  // namespace ssmv::prop
