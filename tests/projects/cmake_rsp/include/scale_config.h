// The project's configuration header: STRIDE comes from the compile_commands.json entry (-D), so
// a parse that did not read the entry stops here.
#pragma once
#ifndef STRIDE
#error "STRIDE comes from the compile_commands.json entry"
#endif
#define SCALE_STRIDE STRIDE
