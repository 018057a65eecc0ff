// Draws a Timeline as one self-contained SVG, or an HTML page around it (no network, no external
// files). Geometry: steps run left to right, one column each; a lane per reservation, its bytes
// top to bottom; a block per mapping, coloured by the access it had in each column; marks for
// reads, writes and check verdicts. Every element has a <title> (hover text) and data-*
// attributes, which the browser test counts (tests/timeline_browser_test.sh):
//   <g class="lane" data-buffer=..>, <rect class="block" data-alloc=.. data-access=..> (one per
//   access span of a block), <g class="mapping" data-alloc=..> (one per block),
//   <circle|rect class="mark" data-kind=..>.
#pragma once

#include <string>

#include "runner/timeline/timeline.h"

namespace vmm::timeline {

std::string RenderSvg(const Timeline& timeline);
std::string RenderHtml(const Timeline& timeline);

}  // namespace vmm::timeline
