from pathlib import Path

import pytest

from training import base_models
from training.recipe import Recipe

RECIPES = sorted((Path(__file__).resolve().parents[2] / "training" / "recipes").glob("*.yaml"))


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.stem)
def test_shipped_recipes_are_valid(path: Path) -> None:
    recipe = Recipe.load(path)
    assert recipe.name == path.stem
    assert recipe.base_model in {base_models.MINILM, base_models.MPNET}
    assert set(recipe.data.max_examples) <= set(recipe.contrastive.datasets)
    assert recipe.contrastive.triplet_margin == 0.1


def test_both_recipes_ship() -> None:
    assert [p.stem for p in RECIPES] == ["biolord-minilm", "biolord-mpnet"]
