"""Metrics and gold sets shared by the app's evaluation endpoints and training (DESIGN.md §2).

Uses only ``indexer``; ``app`` and ``training`` both import it, never the other way round.
"""
