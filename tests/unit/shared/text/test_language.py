from __future__ import annotations

import pytest

from shared.text.language import detect_language


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What does section 3.2 say about dosage?", "en"),
        ("3.2절에서 투여량에 대해 무엇이라고 합니까?", "ko"),
        ("第3.2節では用量について何と書かれていますか?", "ja"),
        ("カタカナだけ", "ja"),
        ("東京都", "ja"),
        ("R 언어의 data.frame 은 무엇인가요?", "ko"),
        ("", "en"),
    ],
)
def test_detect_language(text: str, expected: str) -> None:
    assert detect_language(text) == expected
