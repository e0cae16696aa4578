#pragma once
#include "gpuopt_cuda_builtin.h"
