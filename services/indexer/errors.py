"""Why a document cannot be indexed. Each message is one line that says what to do about it."""

from __future__ import annotations


class DocumentError(Exception):
    """A document (PDF, DOCX, HTML, Markdown or text) that cannot be indexed; str() is a
    one-line reason for the user."""


class PdfError(DocumentError):
    """A PDF that cannot be indexed."""


class NotAPdfError(PdfError):
    def __init__(self, detail: str = "") -> None:
        super().__init__(
            "not a PDF file (no %PDF header)" + (f": {detail}" if detail else "")
            + "; pass a PDF document"
        )


class CorruptPdfError(PdfError):
    def __init__(self, detail: str = "") -> None:
        super().__init__(
            "the PDF is truncated or corrupt" + (f" ({detail})" if detail else "")
            + "; download it again or repair it (e.g. `qpdf in.pdf out.pdf`)"
        )


class EncryptedPdfError(PdfError):
    def __init__(self) -> None:
        super().__init__(
            "the PDF is encrypted with a password; remove the password (e.g. "
            "`qpdf --decrypt --password=... in.pdf out.pdf`) and index the decrypted copy"
        )


class EmptyPdfError(PdfError):
    def __init__(self) -> None:
        super().__init__("the PDF has zero pages; there is nothing to index")


class TooManyPagesError(PdfError):
    def __init__(self, pages: int, limit: int) -> None:
        super().__init__(
            f"the PDF has {pages} pages, over the limit of {limit}; raise the limit "
            "(--max-pages or TREERAG_MAX_PAGES) or split the document"
        )
        self.pages = pages
        self.limit = limit


class UnsupportedFormatError(DocumentError):
    def __init__(self, detail: str = "") -> None:
        super().__init__(
            "not a supported document" + (f" ({detail})" if detail else "")
            + "; pass a PDF, DOCX, HTML, Markdown or plain-text file"
        )


class EmptyDocumentError(DocumentError):
    def __init__(self, kind: str) -> None:
        super().__init__(f"the {kind} file has no text; there is nothing to index")


class CorruptDocumentError(DocumentError):
    def __init__(self, kind: str, detail: str, fix: str) -> None:
        super().__init__(f"the {kind} file is truncated or corrupt ({detail}); {fix}")


class EncryptedDocumentError(DocumentError):
    def __init__(self, kind: str) -> None:
        super().__init__(
            f"the {kind} file is encrypted with a password; save an unprotected copy and index that"
        )


class TooManyPartsError(DocumentError):
    """A converted document with more pages than the limit (the same limit as a PDF's)."""

    def __init__(self, kind: str, pages: int, limit: int) -> None:
        super().__init__(
            f"the {kind} file makes {pages} pages, over the limit of {limit}; raise the limit "
            "(--max-pages or TREERAG_MAX_PAGES) or split the document"
        )
        self.pages = pages
        self.limit = limit

