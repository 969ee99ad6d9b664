"""Search as you type: completions within the scope, the rewrite, and the core's ranking of it."""

from __future__ import annotations

import numpy as np
import pytest

from app.search.autocomplete import Autocomplete, partial_word
from app.search.loader import open_search_service
from app.search.scope import Scope
from app.search.values import Mode
from app.settings import Settings
from indexer.encoders import FakeEncoder
from indexer.lexical.vocabulary import Vocabulary
from tests.api.conftest import built  # noqa: F401 - the toy bundle fixture

LABELS = ["Hearing loss", "Hearing impairment", "Heart murmur", "Heart failure", "Heartburn", "Hearts and minds"]
EVERYWHERE = ((0, len(LABELS)),)


def test_completions_are_the_most_frequent_words_one_per_stem() -> None:
    vocabulary = Vocabulary.from_texts(LABELS)
    assert vocabulary.completions("hear", EVERYWHERE, 2) == ("hearing", "heart")  # "hearts" shares heart's stem
    assert vocabulary.completions("hear", EVERYWHERE, 10) == ("hearing", "heart", "heartburn")
    assert vocabulary.completions("xyz", EVERYWHERE, 3) == ()


def test_completions_count_only_the_labels_in_scope() -> None:
    vocabulary = Vocabulary.from_texts(LABELS)
    assert vocabulary.completions("hear", ((2, 6),), 1) == ("heart",)  # the hearing labels are out of scope


def test_the_completion_among_labels_is_the_word_most_of_them_hold_the_first_of_equals() -> None:
    vocabulary = Vocabulary.from_texts(["Heart attack", "Heart failure", "Hearing loss", "Heartburn", "Hearing aid"])
    every = np.arange(5)
    assert vocabulary.completions_among("hear", every) == "hearing"  # two labels, as heart: the first in word order
    assert vocabulary.completions_among("hear", np.array([0, 1, 3])) == "heart"
    assert vocabulary.completions_among("hear", np.array([3])) == "heartburn"
    assert vocabulary.completions_among("xyz", every) is None and vocabulary.completions_among("hear", every[:0]) is None
    assert vocabulary.completions_among("hear", every, limit=2) is None  # more words start so: too short to tell


def test_membership_is_of_whole_folded_words() -> None:
    vocabulary = Vocabulary.from_texts(["Café au lait spots"])
    assert "cafe" in vocabulary and "caf" not in vocabulary and "au" in vocabulary


def test_correction_of_an_unknown_word() -> None:
    vocabulary = Vocabulary.from_texts(["Pneumonia", "Tachycardia", "Dystonia"])
    assert vocabulary.correction("pnemonia") == "pneumonia"
    assert vocabulary.correction("pneumonia") is None  # known
    assert vocabulary.correction("xyzzyq") is None  # nothing close


def test_a_word_spelt_as_it_sounds_is_corrected_though_it_starts_otherwise() -> None:
    """ "numonia" does not start as pneumonia does (edits are only weighed between words of the
    same first letter), but its Metaphone key (NMN) is the same; nonsense stays uncorrected."""
    vocabulary = Vocabulary.from_texts(["Pneumonia", "Tachycardia", "Dystonia", "Diarrhea"])
    assert vocabulary.correction("numonia") == "pneumonia"
    assert vocabulary.correction("diarea") == "diarrhea"
    assert vocabulary.correction("qwxzv") is None


def test_a_word_typed_without_its_silent_first_letter_is_corrected() -> None:
    """ "sorriasis" is as close to the rare "siriasis" (same first letter) as to "psoriasis" with its
    silent "p" left out: the commoner word is meant."""
    vocabulary = Vocabulary.from_texts(["Psoriasis", "Psoriasis vulgaris", "Psoriatic arthritis psoriasis", "Siriasis"])
    assert vocabulary.correction("sorriasis") == "psoriasis"
    assert vocabulary.correction("soriasis") == "psoriasis"


def test_a_word_spelled_as_it_sounds_is_the_word_it_sounds_like() -> None:
    """ "hypotonya" is one edit from "hypotony" (a deletion) and from "hypotonia" (a substitution),
    nearer the first by the ratio, but spoken as the second ("y" as "i"); likewise "ph" as "f", a
    doubled letter as one, "ae"/"oe" as "e"."""
    vocabulary = Vocabulary.from_texts(["Ocular hypotony", "Hypotonia", "Diarrhea", "Diarrheal", "Fenestra"])
    assert vocabulary.correction("hypotonya") == "hypotonia"
    assert vocabulary.correction("diarrhoea") == "diarrhea"


def test_a_word_spelled_as_it_sounds_is_found_though_many_letters_differ() -> None:
    """ "skitsophrenia" differs from "schizophrenia" in five letters but is spoken alike ("sch" as
    "sk", "ts" and "z" as "s"); "hemroids" is three letters short of "hemorrhoids", one as spoken
    ("rrh" as "r"); "sistitis" is spoken as "cystitis" (a soft "c" as "s"), though it starts
    otherwise and is nearer "sinusitis" as written; "emfazema" is near "emphysema" only as spoken."""
    vocabulary = Vocabulary.from_texts(
        ["Schizophrenia", "Schizoaffective disorder", "Hemorrhoids", "Hemarthrosis", "Cheilodynia", "Cystitis", "Sinusitis",
         "Emphysema", "Edema", "Blocked duct", "Frontal bossing"]
    )  # fmt: skip
    assert vocabulary.correction("skitsophrenia") == "schizophrenia"
    assert vocabulary.correction("hemroids") == "hemorrhoids"
    assert vocabulary.correction("sistitis") == "cystitis"
    assert vocabulary.correction("emfazema") == "emphysema"
    assert vocabulary.correction("bossed") != "blocked"  # a hard "ck" is no soft "c"


def test_known_words_run_together_are_split_into_the_fewest_and_commonest() -> None:
    vocabulary = Vocabulary.from_texts(["Low back pain", "Back pain", "Sleep apnea", "Heartburn", "Heart burn", "Chest pain"])
    assert vocabulary.segmentation("lowbackpain") == "low back pain"
    assert vocabulary.segmentation("sleepapnea") == "sleep apnea"
    assert vocabulary.segmentation("heartburnpain") == "heartburn pain"  # the fewest words: not "heart burn pain"
    assert vocabulary.segmentation("sleep") is None  # known
    assert vocabulary.segmentation("painbk") is None  # "bk" is no word
    assert vocabulary.segmentation("qwertyuiop") is None


@pytest.mark.parametrize(("text", "partial"), [("hearing lo", "lo"), ("Tachyc", "tachyc"), ("hearing ", None), ("fever,", None)])
def test_the_last_word_is_partial_until_a_space_or_punctuation(text: str, partial: str | None) -> None:
    assert partial_word(text) == partial


@pytest.fixture
def typing(built: Settings) -> Autocomplete:  # noqa: F811
    return Autocomplete(open_search_service(built, FakeEncoder(32)), completions=8)


TOY = Scope(("toy",))


@pytest.mark.parametrize(
    ("typed", "rewritten"),
    [
        ("tachyc", "tachycardia"),  # a lone fragment: the scope's most frequent completion
        ("hearing lo", "hearing loss"),  # completed with what co-occurs with the finished words
        ("heart mu", "heart murmur"),
        ("hearing ", "hearing"),  # nothing unfinished
        ("qzx", "qzx"),  # begins no word: kept as typed
    ],
)
def test_the_unfinished_word_is_completed_within_what_the_finished_words_found(
    typing: Autocomplete, typed: str, rewritten: str
) -> None:
    assert typing.rewrite(typed, TOY) == rewritten


def test_a_prefix_ranks_as_its_completion_does(typing: Autocomplete) -> None:
    service = typing.service
    for typed, full in (("hearing lo", "hearing loss"), ("tachyc", "tachycardia")):
        as_typed = [ranked.row for ranked in typing.rank(typed, TOY, 5).rows]
        assert as_typed == [ranked.row for ranked in service.rank(full, TOY, 5, Mode.HYBRID).rows]
    assert service.bundle.concepts[typing.rank("tachyc", TOY, 5).rows[0].row].display == "Tachycardia"


def test_the_vocabulary_is_built_with_the_bundle_and_read_back_whole(built: Settings) -> None:  # noqa: F811
    """Built with the bundle, not when the service opens or by the first filtered request: what
    the bundle reads back is what its labels give."""
    service = open_search_service(built, FakeEncoder(32))
    read, fresh = service.vocabulary, Vocabulary.from_texts(list(service.bundle.label_text))
    assert "tachycardia" in read
    assert read.token_columns == fresh.token_columns and read.by_sound == fresh.by_sound
    assert (read.label_tokens != fresh.label_tokens).nnz == 0
    for word in ("tachycardia", "heart", "fast"):
        assert read.labels_with(word).tolist() == fresh.labels_with(word).tolist() != []
    assert read.correction("tachycardai") == fresh.correction("tachycardai") == "tachycardia"


def test_a_fragment_no_completion_goes_with_stays_as_typed(typing: Autocomplete) -> None:
    """The finished words carry the meaning: a completion that no label holds together with
    them ("unable to heart...") is not forced on the fragment."""
    assert typing.rewrite("unable to hea", Scope(("toy",))) == "unable to hea"
    assert typing.rewrite("whooshing hea", Scope(("toy",))) == "whooshing heart"
    assert typing.rewrite("whooshing hea", Scope(("toyicd",))) == "whooshing heart"  # toy's label completes it
