// Small text helpers for schema diagnostics (internal to runner/scenario's validators).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vmm {

// "'x'".
std::string Quote(std::string_view s);
// "'a'", "'a' and 'b'", "'a', 'b' and 'c'" (`last_sep` joins the last two).
std::string QuotedList(const std::vector<std::string>& items, const char* last_sep = " and ");
// "a, b, c".
std::string Join(const std::vector<std::string>& items);
// "1000000" for integral values, else the shortest decimal form.
std::string FormatNumber(double d);
// Code points in a UTF-8 string (what JSON Schema's minLength counts).
size_t Utf8Length(const std::string& s);
// "a size", "an integer".
std::string WithArticle(const std::string& noun);

}  // namespace vmm
