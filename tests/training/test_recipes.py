from pathlib import Path

import pytest
from pydantic import ValidationError

from training import base_models
from training.recipe import Recipe

RECIPES = sorted((Path(__file__).resolve().parents[2] / "training" / "recipes").glob("*.yaml"))


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.stem)
def test_shipped_recipes_are_valid(path: Path) -> None:
    recipe = Recipe.load(path)
    assert recipe.name == path.stem
    assert recipe.base_model in {base_models.MINILM, base_models.MPNET}
    assert set(recipe.data.max_examples) <= set(recipe.contrastive.datasets)
    assert set(recipe.lay.max_examples) <= set(recipe.lay.datasets)
    assert recipe.contrastive.triplet_margin == 0.1


def test_both_recipes_ship() -> None:
    assert [p.stem for p in RECIPES] == ["biolord-minilm", "biolord-mpnet"]


def test_a_recipe_naming_an_unknown_dataset_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        Recipe.model_validate({"name": "x", "export": {"model_id": "x"}, "lay": {"datasets": ["lay", "synonym"]}})
    (error,) = caught.value.errors()
    assert error["loc"] == ("lay", "datasets", 1) and error["input"] == "synonym"


@pytest.mark.parametrize("count", [0, -1, 1.5])
def test_a_dataset_repeated_less_than_once_or_a_fraction_of_a_time_is_refused(count: float) -> None:
    with pytest.raises(ValidationError) as caught:
        Recipe.model_validate({"name": "x", "export": {"model_id": "x"}, "contrastive": {"repeats": {"lay": count}}})
    (error,) = caught.value.errors()
    assert error["loc"] == ("contrastive", "repeats", "lay") and error["input"] == count


def test_the_cpu_recipe_reproduces_the_shipped_model_with_the_lay_phase_ready() -> None:
    """Run 6 of docs/MODEL_CARD.md: lay pairs with 3 mined negatives and 2 bridges in the one
    contrastive phase; run 7's lay phase is kept, switched off."""
    recipe = Recipe.load(RECIPES[0])
    assert recipe.export.model_id == "termsearch-biolord-minilm-v2"
    assert recipe.contrastive.datasets[0] == "lay" and (recipe.contrastive.hard_negatives, recipe.contrastive.bridges) == (3, 2)
    assert not recipe.lay.enabled and recipe.lay.datasets == ["lay", "synonyms"] and recipe.lay.epochs == 3
    assert (recipe.lay.hard_negatives, recipe.lay.bridges) == (3, 2)
    assert recipe.lay.max_examples == {"lay": None, "synonyms": 4000}
    assert not recipe.distill.enabled
