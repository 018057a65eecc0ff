#include "runner/timeline/timeline_render.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "runner/base/format.h"
#include "runner/base/xml_escape.h"

namespace vmm::timeline {
namespace {

constexpr double kGutter = 180;  // left: lane labels
constexpr double kHeader = 46;   // top: step ticks
constexpr double kLaneHeight = 64;
constexpr double kLaneGap = 18;
constexpr double kMinColumn = 6, kMaxColumn = 28, kTargetWidth = 1200;

// Names come from user files: escaped for attributes and content alike.
std::string Escape(const std::string& s) { return XmlEscape(s, true); }

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

const char* AccessColour(const std::string& access) {
  if (access == "read_write") return "#2e9e5b";
  if (access == "read") return "#4a7bd0";
  return "#b8b8b8";  // none: mapped, not accessible yet
}

const char* MarkColour(MarkKind kind) {
  switch (kind) {
    case MarkKind::kRead:
      return "#1f4e9c";
    case MarkKind::kWrite:
      return "#d9822b";
    case MarkKind::kCheckPass:
      return "#1b7f3b";
    case MarkKind::kCheckFail:
      return "#c62828";
  }
  return "#000";
}

struct Layout {
  double column = 0;  // width of one step column
  double width = 0, height = 0;
  double X(int column_index) const { return kGutter + column_index * column; }
  double LaneTop(int lane) const { return kHeader + lane * (kLaneHeight + kLaneGap); }
  // y of byte `offset` in a lane of `bytes`.
  double Y(int lane, uint64_t offset, uint64_t bytes) const {
    const double f = bytes == 0 ? 0 : static_cast<double>(offset) / static_cast<double>(bytes);
    return LaneTop(lane) + std::min(1.0, f) * kLaneHeight;
  }
};

Layout MakeLayout(const Timeline& t) {
  Layout l;
  const double n = std::max<size_t>(1, t.columns.size());
  l.column = std::clamp(kTargetWidth / n, kMinColumn, kMaxColumn);
  l.width = kGutter + n * l.column + 20;
  l.height = kHeader + std::max<size_t>(1, t.lanes.size()) * (kLaneHeight + kLaneGap) + 10;
  return l;
}

void Header(const Timeline& t, const Layout& l, std::ostringstream& s) {
  const int n = static_cast<int>(t.columns.size());
  const int every = std::max(1, static_cast<int>(40 / l.column));  // a label every ~40 px
  for (int c = 0; c < n; ++c) {
    const Column& col = t.columns[c];
    const bool failed = col.status == "failed";
    s << "<g class=\"column\" data-op=\"" << Escape(col.op) << "\" data-status=\""
      << Escape(col.status) << "\"><title>#" << c << " " << Escape(col.name) << " ("
      << Escape(col.op) << ", " << Escape(col.status) << ")\n"
      << Escape(col.details) << "</title>";
    s << "<rect x=\"" << Num(l.X(c)) << "\" y=\"" << Num(kHeader - 14) << "\" width=\""
      << Num(l.column) << "\" height=\"" << Num(l.height - kHeader + 4) << "\" fill=\""
      << (failed ? "#fde7e7" : (c % 2 ? "#f7f7f7" : "#ffffff")) << "\"/>";
    if (c % every == 0) {
      s << "<text x=\"" << Num(l.X(c) + 1) << "\" y=\"" << Num(kHeader - 18) << "\" class=\"tick\">"
        << c << "</text>";
    }
    s << "</g>";
  }
}

void Lanes(const Timeline& t, const Layout& l, std::ostringstream& s) {
  const int n = static_cast<int>(t.columns.size());
  for (size_t i = 0; i < t.lanes.size(); ++i) {
    const Lane& lane = t.lanes[i];
    const int lane_index = static_cast<int>(i);
    const int from = lane.reserved < 0 ? 0 : lane.reserved;
    const int to = lane.freed < 0 ? n : lane.freed + 1;
    s << "<g class=\"lane\" data-buffer=\"" << Escape(lane.buffer) << "\"><title>reservation of "
      << Escape(lane.buffer) << ": " << FormatBytes(lane.bytes)
      << (lane.va.empty() ? "" : " at " + Escape(lane.va)) << "</title>";
    s << "<text x=\"6\" y=\"" << Num(l.LaneTop(lane_index) + 18) << "\" class=\"lane-name\">"
      << Escape(lane.buffer) << "</text>";
    s << "<text x=\"6\" y=\"" << Num(l.LaneTop(lane_index) + 34) << "\" class=\"lane-size\">"
      << FormatBytes(lane.bytes) << "</text>";
    s << "<rect class=\"reservation\" x=\"" << Num(l.X(from)) << "\" y=\""
      << Num(l.LaneTop(lane_index)) << "\" width=\"" << Num((to - from) * l.column)
      << "\" height=\"" << Num(kLaneHeight) << "\"/></g>";
  }
}

void Blocks(const Timeline& t, const Layout& l, std::ostringstream& s) {
  for (const Block& b : t.blocks) {
    const uint64_t lane_bytes = t.lanes[b.lane].bytes;
    const double y = l.Y(b.lane, b.offset, lane_bytes);
    const double h = std::max(3.0, l.Y(b.lane, b.offset + b.size, lane_bytes) - y);
    s << "<g class=\"mapping\" data-alloc=\"" << Escape(b.alloc) << "\">";
    for (size_t i = 0; i < b.access.size(); ++i) {
      const int from = b.access[i].from;
      const int to = i + 1 < b.access.size() ? b.access[i + 1].from : b.end;
      if (to <= from) continue;
      s << "<rect class=\"block\" data-alloc=\"" << Escape(b.alloc) << "\" data-access=\""
        << Escape(b.access[i].access) << "\" x=\"" << Num(l.X(from)) << "\" y=\"" << Num(y)
        << "\" width=\"" << Num((to - from) * l.column) << "\" height=\"" << Num(h) << "\" fill=\""
        << AccessColour(b.access[i].access) << "\"><title>" << Escape(b.alloc) << " mapped at +"
        << FormatBytes(b.offset) << " (" << FormatBytes(b.size) << ") of "
        << Escape(t.lanes[b.lane].buffer) << ", steps " << from << "–" << to - 1 << ", access "
        << Escape(b.access[i].access)
        << (b.released >= 0
                ? ", alloc released at step " + std::to_string(b.released) + " while still mapped"
                : "")
        << "</title></rect>";
    }
    const double w = (b.end - b.start) * l.column;
    if (w > 8.0 * static_cast<double>(b.alloc.size()) && h >= 12) {
      s << "<text class=\"alloc\" x=\"" << Num(l.X(b.start) + 3) << "\" y=\"" << Num(y + 11)
        << "\">" << Escape(b.alloc) << "</text>";
    }
    if (b.released >= 0 && b.released < b.end) {
      s << "<rect class=\"released\" x=\"" << Num(l.X(b.released)) << "\" y=\"" << Num(y)
        << "\" width=\"" << Num((b.end - b.released) * l.column) << "\" height=\"" << Num(h)
        << "\" fill=\"url(#released)\"/>";
    }
    s << "</g>";
  }
}

void Marks(const Timeline& t, const Layout& l, std::ostringstream& s) {
  for (const Mark& m : t.marks) {
    const uint64_t lane_bytes = t.lanes[m.lane].bytes;
    const double y0 = l.Y(m.lane, m.offset, lane_bytes);
    const double y1 = std::max(y0 + 4, l.Y(m.lane, m.offset + m.size, lane_bytes));
    const double x = l.X(m.column) + l.column / 2;
    const double r = std::clamp(l.column / 2 - 1, 2.0, 5.0);
    const char* colour = MarkColour(m.kind);
    s << "<g class=\"mark\" data-kind=\"" << MarkKindName(m.kind) << "\"><title>"
      << MarkKindName(m.kind) << " " << Escape(m.what) << " at step " << m.column << " ("
      << Escape(t.columns[m.column].name) << ")"
      << (m.via.empty() ? "" : ", by a replay of " + Escape(m.via)) << "</title>";
    s << "<line x1=\"" << Num(x) << "\" y1=\"" << Num(y0) << "\" x2=\"" << Num(x) << "\" y2=\""
      << Num(y1) << "\" stroke=\"" << colour << "\" stroke-width=\"2\"/>";
    s << "<circle cx=\"" << Num(x) << "\" cy=\"" << Num((y0 + y1) / 2) << "\" r=\"" << Num(r)
      << "\" fill=\"" << colour << "\"/></g>";
  }
}

}  // namespace

std::string RenderSvg(const Timeline& t) {
  const Layout l = MakeLayout(t);
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"" << Num(l.width)
    << "\" height=\"" << Num(l.height) << "\" viewBox=\"0 0 " << Num(l.width) << " "
    << Num(l.height) << "\" font-family=\"sans-serif\" font-size=\"11\">";
  s << "<defs><pattern id=\"released\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
       "<path d=\"M0,6 L6,0\" stroke=\"#333\" stroke-width=\"1\"/></pattern></defs>";
  s << "<style>.tick{fill:#666;font-size:10px}.lane-name{font-weight:bold}"
       ".lane-size{fill:#666}.reservation{fill:none;stroke:#999;stroke-dasharray:3 2}"
       ".alloc{fill:#fff;font-size:10px;pointer-events:none}</style>";
  Header(t, l, s);
  Lanes(t, l, s);
  Blocks(t, l, s);
  Marks(t, l, s);
  s << "</svg>\n";
  return s.str();
}

std::string RenderHtml(const Timeline& t) {
  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    << "<title>" << Escape(t.title) << "</title><style>"
    << "body{font-family:sans-serif;margin:16px;color:#222}"
    << "#scroll{overflow:auto;border:1px solid #ddd}"
    << ".legend span{display:inline-block;margin-right:14px}"
    << ".sw{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}"
    << "#hover{position:sticky;top:0;background:#fffbe6;border:1px solid #e6d98c;"
    << "padding:4px 8px;min-height:1.2em;white-space:pre-wrap;font-size:12px}"
    << "</style></head><body>\n";
  s << "<h1 style=\"font-size:18px\">" << Escape(t.title) << " — " << Escape(t.result)
    << "</h1>\n<p class=\"legend\">"
    << "<span><i class=\"sw\" style=\"background:#2e9e5b\"></i>mapped, read_write</span>"
    << "<span><i class=\"sw\" style=\"background:#4a7bd0\"></i>mapped, read</span>"
    << "<span><i class=\"sw\" style=\"background:#b8b8b8\"></i>mapped, no access yet</span>"
    << "<span><i class=\"sw\" style=\"background:#d9822b\"></i>write</span>"
    << "<span><i class=\"sw\" style=\"background:#1f4e9c\"></i>read</span>"
    << "<span><i class=\"sw\" style=\"background:#1b7f3b\"></i>check passed</span>"
    << "<span><i class=\"sw\" style=\"background:#c62828\"></i>check failed</span>"
    << "<span>hatched: alloc released while mapped · red column: failed step</span></p>\n"
    << "<div id=\"hover\">hover a block, mark or column for details</div>\n"
    << "<div id=\"scroll\">" << RenderSvg(t)
    << "</div>\n"
    // The hover panel: the title of the element under the pointer (tooltips also work alone).
    << "<script>\n"
    << "const panel = document.getElementById('hover');\n"
    << "document.querySelector('svg.timeline').addEventListener('mouseover', (e) => {\n"
    << "  for (let n = e.target; n && n.tagName !== 'svg'; n = n.parentNode) {\n"
    << "    const title = n.querySelector(':scope > title');\n"
    << "    if (title) { panel.textContent = title.textContent; return; }\n"
    << "  }\n"
    << "});\n"
    << "</script>\n</body></html>\n";
  return s.str();
}

}  // namespace vmm::timeline
