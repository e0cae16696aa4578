// A header both the includer and the kernel header include; it holds code nvcc 13 rejects.
#pragma once
inline int halfOf(int n) {
  assert(n % 2 == 0);  // no <assert.h>: nvcc's host pass says "identifier assert is undefined"
  return n / 2;
}
