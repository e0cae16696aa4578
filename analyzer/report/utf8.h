// Text that leaves the tool in a format that must be UTF-8 (JSON, SARIF, GitHub workflow commands,
// the language server): a message may quote source bytes that are not UTF-8
// (a "\xff" in a string literal, a Latin-1 comment, a file name), which must never abort the output.
#pragma once
#include <string>
#include <string_view>

namespace gpuopt {

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
bool isValidUtf8(std::string_view s);
// `s` with each maximal ill-formed subsequence replaced by U+FFFD (the Unicode Standard's
// "substitution of maximal subparts", as nlohmann::json's error_handler_t::replace does); valid
// text is returned unchanged.
std::string toValidUtf8(std::string_view s);

}  // namespace gpuopt
