// The wormhole command (being written).
#include "wormhole/version.h"
#include <cstdio>
int main() { std::puts(WORMHOLE_VERSION); return 0; }
