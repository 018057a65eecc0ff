#include "runner/base/markdown_cell.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

TEST(MarkdownCell, TextStaysInItsCellAndNeverBecomesHtml) {
  EXPECT_EQ(MarkdownCell("2MiB"), "2MiB");
  EXPECT_EQ(MarkdownCell("a|b"), "a\\|b");
  // An escaped pipe in the text must not turn into a backslash and a cell break.
  EXPECT_EQ(MarkdownCell("a\\|b"), "a\\\\\\|b");
  EXPECT_EQ(MarkdownCell("<script>x&y</script>"), "&lt;script&gt;x&amp;y&lt;/script&gt;");
  EXPECT_EQ(MarkdownCell("two\nlines\r"), "two lines ");
}

}  // namespace
}  // namespace vmm
