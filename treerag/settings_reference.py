"""docs/configuration.md: every setting of every process, its environment name, default and
meaning, written from the settings models so the page cannot drift from the code.

    python -m treerag.settings_reference > docs/configuration.md
"""

from __future__ import annotations

import sys
from typing import Any

from pydantic import AliasChoices, SecretStr
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from services.indexer.settings import IndexerSettings
from services.navigator.settings import NavigatorSettings
from shared.settings import Settings

SECTIONS: tuple[tuple[str, type[BaseSettings]], ...] = (
    ("Every process", Settings),
    ("Indexer", IndexerSettings),
    ("Navigator", NavigatorSettings),
)
INTRO = """# Configuration

Every process reads its settings from the environment when it starts; the `treerag` commands
read the same ones (and take `--store DIR`). A value the process cannot use stops it with the
setting's name and what it accepts, never its value. This page is written from the settings
models (`shared/settings.py`, `services/<stage>/settings.py`):
`python -m treerag.settings_reference > docs/configuration.md`, and a test keeps it so.

`GOOGLE_API_KEY` is read besides these, for `TREERAG_LLM=gemini`.
"""


def environment_names(name: str, info: FieldInfo, prefix: str) -> list[str]:
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    if isinstance(alias, str):
        return [alias]
    return [f"{prefix}{name}".upper()]


def default_text(info: FieldInfo) -> str:
    value: Any = info.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, SecretStr):
        return "unset"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(f"`{item}`" for item in value) if value else "empty"
    if value == "":
        return "empty"
    return f"`{value}`"


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def reference() -> str:
    lines = [INTRO]
    for title, model in SECTIONS:
        prefix = str(model.model_config.get("env_prefix", ""))
        lines += [f"## {title}", "", "| setting | default | what |", "|---|---|---|"]
        for name, info in model.model_fields.items():
            names = environment_names(name, info, prefix)
            shown = " ".join(f"`{n}`" for n in names[:1])
            if len(names) > 1:
                shown += " (also " + ", ".join(f"`{n}`" for n in names[1:]) + ")"
            lines.append(f"| {shown} | {cell(default_text(info))} | {cell(info.description or '')} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    sys.stdout.write(reference())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
