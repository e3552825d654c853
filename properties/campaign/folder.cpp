#include "properties/campaign/folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "verify/tensor_file/tensor_file.h"

namespace ssmv::campaign {

std::string plan_path(const std::string& dir) { return dir + "/plan.json"; }
std::string unit_path(const std::string& dir, const Unit& u) { return dir + "/units/" + u.name() + ".json"; }
std::string counterexample_file(const Unit& u) {
  return "counterexamples/" + u.property + ".unit" + std::to_string(u.index) + ".json";
}

void write_text_atomically(const std::string& path, const std::string& text) {
  tensor_file::write_file_atomically(path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

void write_json_atomically(const std::string& path, const json::Value& v) {
  write_text_atomically(path, json::dump(v, 1) + "\n");
}

json::Value read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

void with_folder_lock(const std::string& dir, const std::function<void()>& fn) {
  const std::string path = dir + "/.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": cannot open the campaign lock");
  if (::flock(fd, LOCK_EX) != 0) {
    ::close(fd);
    throw std::runtime_error(path + ": cannot take the campaign lock");
  }
  try {
    fn();
  } catch (...) {
    ::close(fd);  // closing releases the lock
    throw;
  }
  ::close(fd);
}

}  // namespace ssmv::campaign
