"""The prior's source: diseases per HPO term from phenotype.hpoa, a NOT-qualified row left out."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from indexer.knowledge.hpoa import disease_counts, prior, release

HPOA = """#description: "HPO annotations for rare diseases [8181: OMIM; 47: DECIPHER; 4242 ORPHANET]"
#version: 2025-01-16
database_id\tdisease_name\tqualifier\thpo_id\treference\tevidence\tonset\tfrequency\tsex\tmodifier\taspect\tbiocuration
OMIM:1\tOne\t\tHP:0001250\tOMIM:1\tTAS\t\t\t\t\tP\tHPO:a
OMIM:1\tOne\t\tHP:0001250\tPMID:2\tPCS\t\t\t\t\tP\tHPO:a
OMIM:2\tTwo\t\tHP:0001250\tOMIM:2\tTAS\t\t\t\t\tP\tHPO:a
OMIM:2\tTwo\tNOT\tHP:0001263\tOMIM:2\tTAS\t\t\t\t\tP\tHPO:a
ORPHA:3\tThree\t\tHP:0001263\tORPHA:3\tTAS\t\t\t\t\tP\tHPO:a
ORPHA:3\tThree\t\tHP:0000006\tORPHA:3\tTAS\t\t\t\t\tI\tHPO:a
"""


def test_each_term_counts_the_diseases_annotated_with_it_once_and_not_those_that_lack_it(tmp_path: Path) -> None:
    path = tmp_path / "phenotype.hpoa"
    path.write_text(HPOA, encoding="utf-8")
    assert disease_counts(path) == {"HP:0001250": 2, "HP:0001263": 1, "HP:0000006": 1}
    assert release(path) == "phenotype.hpoa 2025-01-16"


def test_the_prior_scales_the_log_count_and_centres_it_on_a_term_drawn_as_the_annotations_draw_them() -> None:
    """Scaled: log(1 + n) / log(1 + 3), 1 and 0.5; the count-weighted mean (3 * 1 + 1 * 0.5) / 4 =
    0.875 taken off; a term without annotations below both; other systems at 0."""
    counts = {"HP:0001250": 3, "HP:0001263": 1}
    got = prior(["hpo", "hpo", "hpo", "icd10cm"], ["HP:0001250", "HP:0001263", "HP:9999999", "HP:0001250"], counts)
    assert got.dtype == np.float32
    assert np.allclose(got, [0.125, -0.375, -0.875, 0.0])
    assert not prior(["hpo"], ["HP:0001250"], {}).any()  # no annotations: no prior
