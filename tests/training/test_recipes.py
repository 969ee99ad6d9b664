from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from training import base_models
from training.recipe import Recipe, RecipeError

RECIPES = sorted((Path(__file__).resolve().parents[2] / "training" / "recipes").glob("*.yaml"))
NAMED = {p.stem: p for p in RECIPES}


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.stem)
def test_shipped_recipes_are_valid(path: Path) -> None:
    recipe = Recipe.load(path)
    assert recipe.name == path.stem
    assert recipe.base_model in {base_models.MINILM, base_models.MPNET}
    assert set(recipe.data.max_examples) <= set(recipe.contrastive.datasets)
    assert set(recipe.lay.max_examples) <= set(recipe.lay.datasets)
    assert recipe.contrastive.triplet_margin == 0.1


def test_the_recipes_ship() -> None:
    assert sorted(NAMED) == ["biolord-minilm", "biolord-minilm-gpu", "biolord-minilm-gpu-steps", "biolord-mpnet"]


def test_the_gpu_recipe_trains_uncapped_at_batch_1024_with_two_seeds_and_interpolation() -> None:
    recipe = Recipe.load(NAMED["biolord-minilm-gpu"])
    phase = recipe.contrastive
    assert (phase.batch_size, phase.epochs, phase.seeds, phase.learning_rate) == (1024, 3, [1, 2], 2e-5)
    assert set(recipe.data.max_examples) == {"triplets"}  # everything else uncapped
    assert recipe.data.vocabulary  # the project's phrasings, as lay wording
    # Run 10's 64-d head lost everything (docs/MODEL_CARD.md): the soup distils onto its own whole vectors.
    distill = recipe.distill
    assert distill.enabled and distill.dims is None and distill.from_teacher and distill.max_concepts is None
    assert recipe.interpolate.enabled and 1.0 in recipe.interpolate.alphas


def test_the_small_step_gpu_recipe_trains_the_same_data_in_v2s_step_size() -> None:
    """Run 13 (docs/MODEL_CARD.md): the GPU recipe's data in many small steps at v2's rate."""
    steps, gpu = Recipe.load(NAMED["biolord-minilm-gpu-steps"]), Recipe.load(NAMED["biolord-minilm-gpu"])
    assert steps.data == gpu.data and steps.contrastive.datasets == gpu.contrastive.datasets
    phase = steps.contrastive
    assert (phase.batch_size, phase.epochs, phase.seeds, phase.learning_rate) == (256, 1, [1, 2], 5e-5)
    assert phase.repeats == {"synonyms": 2}
    assert steps.distill == gpu.distill and not steps.interpolate.enabled


@pytest.mark.parametrize("alphas", [[], [1.5], [-0.1, 0.5]])
def test_interpolation_weights_outside_0_to_1_are_refused(alphas: list[float]) -> None:
    with pytest.raises(ValidationError) as caught:
        Recipe.model_validate({"name": "x", "export": {"model_id": "x"}, "interpolate": {"alphas": alphas}})
    (error,) = caught.value.errors()
    assert error["loc"] == ("interpolate", "alphas") and "from 0 to 1" in error["msg"]


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


def test_the_cpu_recipe_guards_against_forgetting_with_the_lay_phase_ready() -> None:
    """Issue 18's CPU recipe: the cleaned data with hierarchy rows, lr 2e-5 with frozen token
    embeddings, lay pairs with 3 mined negatives and 2 bridges, interpolation with the base last;
    run 7's lay phase is kept, switched off."""
    recipe = Recipe.load(NAMED["biolord-minilm"])
    assert recipe.export.model_id == "termsearch-biolord-minilm-v3"
    phase = recipe.contrastive
    assert phase.datasets[0] == "lay" and {"entries", "hierarchy"} <= set(phase.datasets)
    assert (phase.learning_rate, phase.batch_size, phase.freeze_embeddings) == (2e-5, 256, True)
    assert (phase.hard_negatives, phase.bridges) == (3, 2)
    assert recipe.interpolate.enabled and 1.0 in recipe.interpolate.alphas
    assert not recipe.lay.enabled and recipe.lay.datasets == ["lay", "synonyms"] and recipe.lay.epochs == 3
    assert (recipe.lay.hard_negatives, recipe.lay.bridges) == (3, 2)
    assert recipe.lay.max_examples == {"lay": None, "synonyms": 4000}
    assert not recipe.distill.enabled


def test_a_recipe_extending_another_replaces_its_fields_one_by_one(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(
        "name: base\ncontrastive: {epochs: 3, batch_size: 1024, seeds: [1, 2], repeats: {lay: 2}}\n"
        "data: {max_examples: {triplets: 10}}\nexport: {model_id: base-v1, quantize: false}\n"
    )
    (tmp_path / "small.yaml").write_text(
        "extends: base.yaml\nname: small\nexport: {model_id: small-v1}\n"
        "contrastive: {batch_size: 64, seeds: [3], repeats: {synonyms: 2}}\n"
    )
    recipe, source = Recipe.read(tmp_path / "small.yaml")
    phase = recipe.contrastive
    assert (recipe.name, recipe.export.model_id, recipe.export.quantize) == ("small", "small-v1", False)
    # A section's fields one by one (epochs kept), a list replaced whole, a mapping merged.
    assert (phase.epochs, phase.batch_size, phase.seeds) == (3, 64, [3])
    assert phase.repeats == {"lay": 2, "synonyms": 2} and recipe.data.max_examples == {"triplets": 10}
    # What a model's record keeps: the merged recipe, loadable as it stands, naming the files read.
    assert source.startswith("# small.yaml extending base.yaml, merged\n")
    assert Recipe.model_validate(yaml.safe_load(source)) == recipe


def test_a_recipe_extending_another_names_its_own_run_and_model(tmp_path: Path) -> None:
    """Left to the other's, the run directory (named after the recipe) and the model id would be
    the other's: its checkpoints resumed with other settings, its model overwritten."""
    (tmp_path / "base.yaml").write_text("name: base\nexport: {model_id: base-v1}\n")
    (tmp_path / "child.yaml").write_text("extends: base.yaml\ncontrastive: {epochs: 2}\n")
    with pytest.raises(RecipeError) as caught:
        Recipe.load(tmp_path / "child.yaml")
    assert str(caught.value) == f"{tmp_path / 'child.yaml'}: extends base.yaml but does not set its own name and export.model_id"


def test_a_recipe_extending_a_missing_file_or_itself_is_refused_naming_the_files(tmp_path: Path) -> None:
    child = tmp_path / "child.yaml"
    own = "name: child\nexport: {model_id: c}\n"
    child.write_text("extends: none.yaml\n" + own)
    with pytest.raises(RecipeError) as missing:
        Recipe.load(child)
    assert str(missing.value) == f"{child}: extends {tmp_path / 'none.yaml'}: No such file or directory"
    (tmp_path / "loop.yaml").write_text("extends: child.yaml\nname: loop\nexport: {model_id: l}\n")
    child.write_text("extends: loop.yaml\n" + own)
    with pytest.raises(RecipeError) as looped:
        Recipe.load(child)
    assert str(looped.value) == f"{child}: extends {tmp_path / 'loop.yaml'}: extends {child}: extends itself"


def test_a_wrong_field_inherited_is_named_by_the_recipe_read(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("name: base\ncontrastive: {batch_size: many}\nexport: {model_id: x}\n")
    (tmp_path / "child.yaml").write_text("extends: base.yaml\nname: child\nexport: {model_id: y}\n")
    with pytest.raises(RecipeError) as caught:
        Recipe.load(tmp_path / "child.yaml")
    assert str(caught.value).startswith(f"{tmp_path / 'child.yaml'}: contrastive.batch_size: Input should be a valid integer")
