// VMM_HOT: marks a function on the path between two driver calls of a burst (the executor's loop,
// an op's call, the engine's VMM calls and what they call every time).
//
// Contract: a marked function is placed by the compiler in .text.hot, which the linker gathers into
// one run of pages ahead of the rest of the code. A driver call leaves the TLBs and caches cold;
// a raw loop of driver calls then comes back to one or two pages of code, and the runner's path,
// spread over a dozen pages of a 1.5 MiB text, came back to every one of them, each a possible
// page walk. Mark only what runs on every call (an error path stays unmarked: it is cold code and
// would spread the hot pages again).
#pragma once

#if defined(__GNUC__)
#define VMM_HOT [[gnu::hot]]
#else
#define VMM_HOT
#endif
