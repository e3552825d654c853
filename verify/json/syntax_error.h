// The reason and place of a JSON syntax error in ssmv's words, from what nlohmann's parser
// reports (json.cpp's parse() uses it; ParseError formats it as "JSON line L column C
// (byte O): <reason>").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ssmv::json {

struct SyntaxError {
  size_t offset = 0;  // byte offset in the text: the start of the offending token, or the
                      // offending character inside a string or number
  std::string reason;
};

// `position`, `last_token` and `error` as nlohmann's SAX parse_error() receives them
// (position counts the characters read, end of input included); `last_key` is the last
// object key read, named when the ':' after it is missing.
SyntaxError describe_syntax_error(std::string_view text, size_t position, const std::string& last_token,
                                  const nlohmann::detail::exception& error, const std::string& last_key);

}  // namespace ssmv::json
