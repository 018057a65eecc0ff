// A fixture for ctest `layering_detects_a_break`: base may include nothing above it.
#pragma once

#include "runner/cli/run_command.h"
