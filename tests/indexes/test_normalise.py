from indexer.lexical.normalise import fold, tokens, typed_words, words


def test_fold_lowercases_and_strips_accents() -> None:
    assert fold("Ménière SJÖGREN") == "meniere sjogren"


def test_words_drop_stop_words_and_punctuation() -> None:
    assert words("Fracture of the neck-of-femur, right_side") == ["fracture", "neck", "femur", "right", "side"]


def test_tokens_are_stemmed() -> None:
    assert tokens("Hearing impairments") == ["hear", "impair"]


def test_british_medical_spellings_index_and_match_as_american_ones() -> None:
    assert words("Gastro-oesophageal reflux, anaemia, ischaemic, diarrhoea, tumour") == [
        "gastro", "esophageal", "reflux", "anemia", "ischemic", "diarrhea", "tumor",
    ]  # fmt: skip
    assert tokens("paediatric oedema") == tokens("pediatric edema")
    assert typed_words("Anaemia") == ["anaemia"]  # as typed, for the spelling rewrite


def test_an_inflammation_is_kept_whole_not_stemmed_to_its_organ() -> None:
    assert tokens("hepatitis sinusitis esophagitis") == ["hepatitis", "sinusitis", "esophagitis"]
    assert set(tokens("hepatic sinus esophageal")).isdisjoint(tokens("hepatitis sinusitis esophagitis"))
