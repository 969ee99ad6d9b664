"""Cells of the tabular outputs (review CSV, SSSOM/TSV) that a spreadsheet cannot run.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by
spreadsheet programs as a formula (CSV injection); as OWASP advises, such a cell is written with
a leading single quote, which shows the text as typed and runs nothing. Every tabular writer
passes its text cells through :func:`safe_cell`.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: str) -> str:
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value
