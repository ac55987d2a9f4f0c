"""Which optional part of the install (`pip install 'treerag[EXTRA]'`) provides a module, so a
feature whose library is not installed says what to install instead of a traceback."""

from __future__ import annotations

# Top-level import names of the optional libraries, by the extra of pyproject.toml that has them.
EXTRA_OF_MODULE = {
    "fastapi": "gateway",
    "fastapi_offline": "gateway",
    "uvicorn": "gateway",
    "multipart": "gateway",
    "python_multipart": "gateway",
    "jinja2": "gateway",
    "mcp": "gateway",
    "authlib": "gateway",
    "joserfc": "gateway",
    "google": "gemini",
    "sklearn": "fit",
    "threadpoolctl": "fit",
    "fpdf": "demo",
}


class MissingExtraError(RuntimeError):
    """A feature needs an optional part of the install that is not there."""

    def __init__(self, feature: str, extra: str) -> None:
        super().__init__(f"{feature} needs the '{extra}' part of the install: pip install 'treerag[{extra}]'")
        self.extra = extra


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The extra that provides the module `exc` could not find; None when it is no optional one."""
    top = (exc.name or "").split(".")[0]
    return EXTRA_OF_MODULE.get(top)
