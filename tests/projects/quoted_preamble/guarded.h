#ifndef QUOTED_PREAMBLE_GUARDED_H
#define QUOTED_PREAMBLE_GUARDED_H
constexpr int kTile = 32;
#endif
