"""Metrics and gold sets shared by the app's evaluation endpoints and training (DESIGN.md §2).

Uses only ``indexer``; ``app`` and ``training`` both import it, never the other way round.

- ``metrics``: pure functions (Hits@K, MRR, graded nDCG, word overlap, ROC AUC, best-threshold
  accuracy, category overlap error).
- ``hierarchy``: one system's is_a graph in memory and the graded gains.
- ``gold``: text → concept, leaf-to-parent and category gold sets; ``pairs``: term-similarity pairs.
- ``runner``: evaluate a search or similarity function; ``benchmarks``: the built-in ranking sets.
"""
