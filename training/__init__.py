"""Offline training of BioLORD-style encoders from the concept store (DESIGN.md §2, §4).

Reads the store through ``indexer.store.StoreReader`` and hands the indexer a model directory in
the format of ``indexer.encoders.manifest``; it never imports ``app``.
"""
