"""Hard negatives and bridges for lay pairs, mined by the model a phase starts from.

Random in-batch negatives rarely hold "Heart failure" for "heart attack"; these do. Kept apart from
the trainers so that the sentence-transformers phases and the plain torch loop share them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from indexer.lexical.normalise import fold
from training.data.builders import Pair
from training.data.graph import Key, OntologyGraph

# Texts → normalised vectors, one row each.
Encode = Callable[[list[str]], np.ndarray]


def mine(
    encode: Encode,
    pairs: Sequence[Pair],
    graph: OntologyGraph,
    train: set[Key],
    per_pair: int = 1,
    depth: int = 64,
    threshold: float = 0.8,
    bridges: int = 0,
    bridge_threshold: float = 0.7,
) -> list[tuple[str, ...]]:
    """Rows ``(anchor, positive, negative_1, …, negative_{per_pair})``: each lay pair plus labels
    that ``encode`` (normalised vectors, the model the phase starts from) finds near its anchor among the training labels of
    every system but which mean something else. Skipped: a label of the anchor's concept, its
    ancestors, descendants, siblings or cousins (a sibling or cousin teaches "same site, other
    abnormality = far", the leaf → parent failure), a label containing one of the concept's labels as whole words ("Acute
    myocardial infarction" for "Myocardial infarction"), and one within cosine ``threshold`` of one
    of the concept's formal labels (another system's name for the same thing). Nearness to the lay
    wording itself is no reason to skip: "Heart failure" near "heart attack" is the lesson.
    An anchor's pairs take its fair negatives in order of nearness, in turn; a pair whose anchor
    finds fewer than ``per_pair`` within ``depth`` is dropped.

    With ``bridges``, each anchor is also paired with up to that many labels of *other* systems
    that contain one of its concept's formal names (4 characters or more) as whole words and lie
    within cosine ``bridge_threshold`` of it: "Heart attack" with ICD-10-CM's "Acute myocardial
    infarction" through HPO's "Myocardial infarction". No mapping between the systems is needed.
    """
    owners: dict[str, set[Key]] = defaultdict(set)
    for key in train:
        for text in graph.nodes[key].lay:
            owners[text].add(key)
    anchors = sorted({anchor for anchor, _ in pairs})
    corpus = [(label, key) for key in sorted(train) for label in graph.nodes[key].labels]
    rows_of: dict[Key, list[int]] = defaultdict(list)
    for row, (_, key) in enumerate(corpus):
        rows_of[key].append(row)
    queries = encode(anchors)
    labels = encode([label for label, _ in corpus])
    negatives: dict[str, list[str]] = {}
    for start in range(0, len(anchors), 256):
        nearest = np.argsort(-(queries[start : start + 256] @ labels.T), axis=1)[:, :depth]
        for text, row in zip(anchors[start : start + 256], nearest, strict=True):
            formal = _formal_rows(graph, owners[text], corpus, rows_of)
            same = (labels[row] @ labels[formal].T).max(axis=1) >= threshold if formal else np.zeros(len(row), bool)
            fair = _fair_negative(graph, owners[text])
            found = list(dict.fromkeys(corpus[j][0] for j, close in zip(row, same, strict=True) if not close and fair(*corpus[j])))
            if len(found) >= per_pair:
                negatives[text] = found
    extra = _bridges(graph, owners, anchors, corpus, rows_of, labels, bridges, bridge_threshold) if bridges else []
    rows, turn = [], Counter()
    for anchor, positive in [*pairs, *extra]:
        if anchor in negatives:
            found, first = negatives[anchor], turn[anchor] * per_pair
            rows.append((anchor, positive, *(found[(first + i) % len(found)] for i in range(per_pair))))
            turn[anchor] += 1
    return rows


def columns(per_pair: int) -> list[str]:
    """The column names of :func:`mine`'s rows, as sentence-transformers' losses read them."""
    return ["anchor", "positive", *(["negative"] if per_pair == 1 else [f"negative_{i + 1}" for i in range(per_pair)])]


def _bridges(
    graph: OntologyGraph,
    owners: dict[str, set[Key]],
    anchors: list[str],
    corpus: list[tuple[str, Key]],
    rows_of: dict[Key, list[int]],
    labels: np.ndarray,
    per_anchor: int,
    threshold: float,
) -> list[tuple[str, str]]:
    """(anchor, label of another system) pairs; see :func:`hard_negatives`."""
    formal_rows = sorted({j for text in anchors for j in _formal_rows(graph, owners[text], corpus, rows_of) if len(corpus[j][0]) >= 4})
    near: dict[int, list[tuple[float, int]]] = {}
    for start in range(0, len(formal_rows), 256):
        chunk = formal_rows[start : start + 256]
        scores = labels[chunk] @ labels.T
        for i, row in zip(chunk, scores, strict=True):
            top = np.argsort(-row)[:32]
            name = _whole_words(corpus[i][0])
            near[i] = [
                (float(row[j]), int(j))
                for j in top
                if row[j] >= threshold and corpus[j][1][0] != corpus[i][1][0] and name.search(fold(corpus[j][0]))
            ]
    out = []
    for text in anchors:
        found = sorted(hit for owner in owners[text] for j in rows_of[owner] for hit in near.get(j, []))[::-1]
        out.extend((text, label) for label in list(dict.fromkeys(corpus[j][0] for _, j in found))[:per_anchor])
    return out


def _formal_rows(graph: OntologyGraph, owners: set[Key], corpus: list[tuple[str, Key]], rows_of: dict[Key, list[int]]) -> list[int]:
    """Corpus rows of the ``owners`` concepts' labels that are not lay wording."""
    return [j for owner in owners for j in rows_of[owner] if corpus[j][0] not in graph.nodes[owner].lay]


def _fair_negative(graph: OntologyGraph, owners: set[Key]) -> Callable[[str, Key], bool]:
    """Whether ``label`` of ``key`` may be a negative for an anchor of the ``owners`` concepts: not
    an owner, an ancestor, descendant, sibling or cousin of one, and not containing an owner's
    label as whole words."""
    related = owners.union(*(graph.ancestors(o) + graph.siblings(o) + graph.cousins(o) for o in owners))
    own = [_whole_words(label) for owner in owners for label in graph.nodes[owner].labels]
    return lambda label, key: (
        key not in related
        and owners.isdisjoint(graph.ancestors(key))
        and not any(pattern.search(fold(label)) for pattern in own)
    )


def _whole_words(label: str) -> re.Pattern[str]:
    """Finds ``label`` as whole words in folded text: "myocardial infarction" in "Acute myocardial infarction"."""
    return re.compile(rf"\b{re.escape(fold(label))}\b")
