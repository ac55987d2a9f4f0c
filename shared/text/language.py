"""The language of a question, so answers come back in it (Korean, Japanese, English)."""

from __future__ import annotations

LANGUAGE_NAMES = {"ko": "Korean", "ja": "Japanese", "en": "English"}


def detect_language(text: str) -> str:
    """'ko', 'ja' or 'en', by script: Hangul -> Korean; kana -> Japanese; Han ideographs
    alone -> Japanese (of the supported languages, the one written with them); else English."""
    hangul = kana = han = 0
    for ch in text:
        code = ord(ch)
        if 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
            hangul += 1
        elif 0x3040 <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF or 0xFF66 <= code <= 0xFF9F:
            kana += 1
        elif 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF:
            han += 1
    if hangul and hangul >= kana:
        return "ko"
    if kana or han:
        return "ja"
    return "en"
