// DCQCN (being written)
