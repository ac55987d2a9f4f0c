"""The optional entailment model: recovers paraphrases, never overrules a failed check."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.adapters.nli import (
    EntailmentModelError,
    answer_key_suffix,
    make_entailment_judge,
)
from shared.app.verification import SourcePage, check_sentence

PAGE = [SourcePage("d1", 7, "Maintenance\nThe coolant pump is serviced every 500 operating hours by the plant fitter.\n")]


class FakeJudge:
    """Says the same thing of every pair; records what it was asked."""

    name = "nli:fake"

    def __init__(self, entailment: float) -> None:
        self.entailment = entailment
        self.asked: list[tuple[str, str]] = []

    def judge(self, premise: str, hypothesis: str) -> dict[str, float]:
        self.asked.append((premise, hypothesis))
        rest = (1.0 - self.entailment) / 2
        return {"entailment": self.entailment, "neutral": rest, "contradiction": rest}


# One word replaced by a synonym: the lexical check sees a replaced word and cannot tell it from
# a wrong one (without word vectors), so it needs the model.
PARAPHRASE = "The coolant pump is maintained every 500 operating hours by the plant fitter."


def test_a_paraphrase_the_model_finds_entailed_is_recovered() -> None:
    without = check_sentence(PARAPHRASE, None, PAGE)
    assert without.verdict == "unsupported"
    judge = FakeJudge(entailment=0.9)
    recovered = check_sentence(PARAPHRASE, None, PAGE, judge)
    assert recovered.verdict == "supported" and "entailment model" in recovered.reason
    assert judge.asked and "coolant pump is serviced" in judge.asked[0][0]
    assert check_sentence(PARAPHRASE, None, PAGE, FakeJudge(entailment=0.1)).verdict == "unsupported"


def test_the_model_never_overrules_a_failed_check_and_is_not_asked_about_supported_sentences() -> None:
    judge = FakeJudge(entailment=0.99)
    wrong = check_sentence("The coolant pump is serviced every 800 operating hours by the plant fitter.", None,
                           PAGE, judge)
    assert wrong.verdict == "contradicted" and "entailment model: contradiction" in wrong.reason
    asked = len(judge.asked)
    right = check_sentence("The coolant pump is serviced every 500 operating hours by the plant fitter.", None,
                           PAGE, judge)
    assert right.verdict == "supported" and len(judge.asked) == asked


def test_entailment_model_is_off_by_default_and_a_bad_folder_says_what_is_missing(tmp_path: Path) -> None:
    assert make_entailment_judge("off") is None and answer_key_suffix("off") == ""
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(EntailmentModelError, match="model.onnx, config.json missing"):
        make_entailment_judge(str(tmp_path))
    assert answer_key_suffix(str(tmp_path)) == f"+nli:{tmp_path.name}"
