#define PRECISION float
#include "train.cu"
int main() {
  step(nullptr, nullptr);
  return 0;
}
