"""Training data built from the concept store: graph, splits, pair and triplet builders."""
