#pragma once
typedef dfloat real_t;
