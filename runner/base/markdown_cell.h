// Text placed in a cell of a GitHub-flavoured Markdown table (diff --markdown, sweep tables).
#pragma once

#include <string>
#include <string_view>

namespace vmm {

// `text` as one table cell that renders as that text: `|` and `\` are backslash-escaped (so a
// cell can never end early or swallow the next pipe), `<`, `>` and `&` become entities (no raw
// HTML such as <script> or <img> reaches the page), line breaks become spaces (a row stays one
// line).
std::string MarkdownCell(std::string_view text);

}  // namespace vmm
