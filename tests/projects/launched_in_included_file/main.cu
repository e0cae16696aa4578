#define BLOCK 32
#include "moves.cpp"
int main() { run(nullptr, nullptr, 4); }
