from indexer.lexical.normalise import fold, tokens, words


def test_fold_lowercases_and_strips_accents() -> None:
    assert fold("Ménière SJÖGREN") == "meniere sjogren"


def test_words_drop_stop_words_and_punctuation() -> None:
    assert words("Fracture of the neck-of-femur, right_side") == ["fracture", "neck", "femur", "right", "side"]


def test_tokens_are_stemmed() -> None:
    assert tokens("Hearing impairments") == ["hear", "impair"]
