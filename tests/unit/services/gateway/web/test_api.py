"""The page viewer's endpoints: the page as a PNG rendered from the stored PDF, and the boxes that
highlight a cited sentence, placed where pdfium says its characters are."""

from __future__ import annotations

import asyncio
import io
import math
from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from fpdf import FPDF
from PIL import Image

from services.gateway.auth import install_auth
from services.gateway.web.api import install_page_routes
from services.gateway.web.rendering import MAX_PIXELS, evidence_boxes, text_layer
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.ids import content_id
from shared.model.text_layer import Box, TextLayer, TextLine, TextWord
from shared.settings import Settings
from tests.support.fakes import FakeKeyStore, FakeRepository

A4_PT = (595.28, 841.89)
FIRST = "Filters are replaced every six weeks by the maintenance crew."
CITED = "The intake valve must be closed before the housing is opened for inspection."
OTHER = "Spare gaskets are kept in the store room beside the compressor hall."
CITED_AT_MM = (20, 150)  # x, y of the cited sentence's line on page 2


def sample_pdf() -> bytes:
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(auto=False)
    pdf.set_font("Helvetica", "", 11)
    pdf.add_page()
    pdf.set_xy(20, 30)
    pdf.cell(0, 6, FIRST)
    pdf.add_page()
    pdf.set_xy(20, 40)
    pdf.cell(0, 6, OTHER)
    pdf.set_xy(*CITED_AT_MM)
    pdf.cell(0, 6, CITED)
    pdf.add_page(format=(2000, 2000))  # a poster page: mm, far beyond the pixel limit at scale 4
    pdf.set_xy(20, 20)
    pdf.cell(0, 6, "Poster")
    return bytes(pdf.output())


@pytest.fixture(scope="module")
def store() -> FakeRepository:
    repo = FakeRepository()
    data = sample_pdf()
    doc_id = content_id(data)
    asyncio.run(repo.put_document(DocumentRecord(doc_id=doc_id, file_name="manual.pdf", status=DocumentStatus.READY)))
    asyncio.run(repo.put_pdf(doc_id, data))
    return repo


@pytest.fixture(scope="module")
def doc_id(store: FakeRepository) -> str:
    return next(iter(store.documents))


@pytest.fixture(scope="module")
def client(store: FakeRepository) -> Iterator[TestClient]:
    app = FastAPI()
    install_auth(app, Settings(auth="off"), FakeKeyStore)  # the default tenant's documents
    install_page_routes(app, lambda: store)
    with TestClient(app) as client:
        yield client


def image(client: TestClient, doc_id: str, page: int, **params: object) -> Image.Image:
    response = client.get(f"/v1/documents/{doc_id}/pages/{page}/image", params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png"
    return Image.open(io.BytesIO(response.content))


def test_a_page_is_rendered_at_the_requested_scale(client: TestClient, doc_id: str) -> None:
    for scale in (1, 2):
        width, height = image(client, doc_id, 1, scale=scale).size
        assert abs(width - A4_PT[0] * scale) <= 1 and abs(height - A4_PT[1] * scale) <= 1


def test_a_page_is_rendered_as_wide_as_asked_within_the_largest_scale(client: TestClient, doc_id: str) -> None:
    # A viewer asks for the pixels it shows the page with: its CSS width times the pixel ratio.
    for wanted in (600, 1191, 1777):
        width, height = image(client, doc_id, 1, width=wanted).size
        assert width == wanted and abs(height - wanted * A4_PT[1] / A4_PT[0]) <= 1
    width, _ = image(client, doc_id, 1, width=8000).size
    assert width == math.ceil(A4_PT[0] * 4)  # no larger than scale 4
    assert client.get(f"/v1/documents/{doc_id}/pages/1/image", params={"width": 0}).status_code == 422
    assert client.get(f"/v1/documents/{doc_id}/pages/1/image", params={"width": 9000}).status_code == 422


def test_a_document_is_addressed_by_its_id_not_its_file_name(client: TestClient) -> None:
    assert client.get("/v1/documents/manual.pdf/pages/1/image").status_code == 404


def test_pages_and_pdfs_are_served_from_memory_after_the_first_request(
        client: TestClient, store: FakeRepository, doc_id: str) -> None:
    first = client.get(f"/v1/documents/{doc_id}/pages/2/image", params={"scale": 0.5})
    reads = store.reads["get_pdf"]
    again = client.get(f"/v1/documents/{doc_id}/pages/2/image", params={"scale": 0.5})
    other_page = client.get(f"/v1/documents/{doc_id}/pages/1/image", params={"scale": 0.5})
    assert first.content == again.content
    assert other_page.status_code == 200
    assert store.reads["get_pdf"] == reads


def test_a_huge_page_is_rendered_smaller_than_the_pixel_limit(client: TestClient, doc_id: str) -> None:
    width, height = image(client, doc_id, 3, scale=4).size
    assert width * height <= MAX_PIXELS
    assert width > 1000  # still a usable image, only bounded


@pytest.mark.parametrize("scale", ["0", "-1", "4.5", "nan", "inf", "big"])
def test_a_scale_out_of_bounds_is_refused(client: TestClient, doc_id: str, scale: str) -> None:
    response = client.get(f"/v1/documents/{doc_id}/pages/1/image", params={"scale": scale})
    assert response.status_code == 422


@pytest.mark.parametrize(("page", "status"), [("0", 422), ("-2", 422), ("x", 422), ("4", 404), ("99999", 404)])
def test_a_page_that_does_not_exist_is_refused(client: TestClient, doc_id: str, page: str, status: int) -> None:
    response = client.get(f"/v1/documents/{doc_id}/pages/{page}/image")
    assert response.status_code == status
    if status == 404:
        assert "has 3 pages" in response.json()["detail"]


def test_an_unknown_document_is_404(client: TestClient) -> None:
    response = client.get("/v1/documents/nosuchdocument/pages/1/image")
    assert response.status_code == 404
    assert "GET /v1/documents" in response.json()["detail"]


def boxes(client: TestClient, doc_id: str, page: int, text: str) -> dict:
    response = client.get(f"/v1/documents/{doc_id}/pages/{page}/boxes", params={"text": text})
    assert response.status_code == 200, response.text
    return response.json()


def test_the_cited_sentence_is_boxed_where_it_is_printed(client: TestClient, doc_id: str) -> None:
    found = boxes(client, doc_id, 2, CITED)
    assert found["match"] == "exact"
    assert found["matched_text"] == CITED
    [box] = found["boxes"]
    x_mm, y_mm = CITED_AT_MM
    assert math.isclose(box["left"], x_mm / 210, abs_tol=0.02)
    assert y_mm / 297 - 0.01 <= box["top"] <= (y_mm + 6) / 297
    assert box["height"] < 8 / 297  # one line, not the page
    # The box covers the printed line: the rendered page has ink inside it and none just above it.
    page = image(client, doc_id, 2, scale=2).convert("L")
    w, h = page.size
    inside = page.crop((int(box["left"] * w), int(box["top"] * h),
                        int((box["left"] + box["width"]) * w), int((box["top"] + box["height"]) * h)))
    above = page.crop((int(box["left"] * w), int((box["top"] - 0.04) * h),
                       int((box["left"] + box["width"]) * w), int((box["top"] - 0.01) * h)))
    assert inside.getextrema()[0] < 100
    assert above.getextrema()[0] > 200


def test_whitespace_and_case_do_not_hide_the_sentence(client: TestClient, doc_id: str) -> None:
    found = boxes(client, doc_id, 2, "  the INTAKE valve must be closed\nbefore the housing  is opened ")
    assert found["match"] == "exact"
    assert len(found["boxes"]) == 1


def test_a_shortened_sentence_boxes_each_kept_part(client: TestClient, doc_id: str) -> None:
    found = boxes(client, doc_id, 2, "The intake valve must be closed … opened for inspection.")
    assert found["match"] == "exact"
    assert len(found["boxes"]) == 2
    assert all(math.isclose(b["top"], found["boxes"][0]["top"], abs_tol=0.005) for b in found["boxes"])


def test_a_paraphrase_boxes_the_closest_passage(client: TestClient, doc_id: str) -> None:
    found = boxes(client, doc_id, 2, "Close the intake valve before the housing is opened.")
    assert found["match"] == "closest"
    assert found["boxes"] and math.isclose(found["boxes"][0]["top"], CITED_AT_MM[1] / 297, abs_tol=0.02)


def test_text_that_is_not_on_the_page_gets_no_box(client: TestClient, doc_id: str) -> None:
    found = boxes(client, doc_id, 1, CITED)
    assert found == {"page": 1, "match": "none", "matched_text": "", "boxes": []}


def test_boxes_need_a_text_and_an_existing_page(client: TestClient, doc_id: str) -> None:
    assert client.get(f"/v1/documents/{doc_id}/pages/1/boxes").status_code == 422
    assert client.get(f"/v1/documents/{doc_id}/pages/1/boxes", params={"text": "x" * 5000}).status_code == 422
    assert client.get(f"/v1/documents/{doc_id}/pages/9/boxes", params={"text": "valve"}).status_code == 404


def test_the_text_layer_places_each_printed_line_where_it_is(client: TestClient, doc_id: str) -> None:
    response = client.get(f"/v1/documents/{doc_id}/pages/2/text-layer")
    assert response.status_code == 200
    layer = response.json()
    assert math.isclose(layer["aspect"], 841.89 / 595.28, rel_tol=1e-3)
    assert [line["text"] for line in layer["lines"]] == [OTHER, CITED]  # in reading order
    cited = layer["lines"][1]
    assert [word["text"] for word in cited["words"]] == CITED.split()
    assert math.isclose(cited["box"]["left"], CITED_AT_MM[0] / 210, abs_tol=0.02)
    assert math.isclose(cited["box"]["top"], CITED_AT_MM[1] / 297, abs_tol=0.02)
    lefts = [word["box"]["left"] for word in cited["words"]]
    assert lefts == sorted(lefts) and cited["words"][0]["box"]["left"] == cited["box"]["left"]
    assert client.get(f"/v1/documents/{doc_id}/pages/4/text-layer").status_code == 404


def glyph_by_glyph_pdf(line: str) -> bytes:
    """One line set a glyph at a time, as a kerned filing is (each glyph placed on its own),
    and drawn a second time a hair to the right, as a fake bold is."""
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", "", 12)
    for shift in (0.0, 0.05):
        x = 20.0
        for char in line:
            if char != " ":
                pdf.text(x + shift, 60, char)
            x += pdf.get_string_width(char) + (0.6 if char == " " else 0.05)
    return bytes(pdf.output())


def test_a_line_set_glyph_by_glyph_reads_as_its_words_once() -> None:
    line = "the first priority for capital deployment"
    layer = text_layer(glyph_by_glyph_pdf(line), 1)
    assert [entry.text for entry in layer.lines] == [line]
    assert [word.text for word in layer.lines[0].words] == line.split()


def test_a_highlight_is_one_box_per_line_of_the_passage() -> None:
    line = "the first priority for capital deployment"
    found = evidence_boxes(glyph_by_glyph_pdf(line), 1, "first priority for capital")
    assert found.match == "exact" and len(found.boxes) == 1

def test_a_word_broken_at_a_line_end_keeps_its_printed_hyphen() -> None:
    # pdfium reports a hyphen ending a line as a break mark (\x02): copied, it is the hyphen printed.
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", "", 12)
    pdf.text(20, 60, "costs and other non-")
    pdf.text(20, 66, "recurring costs are charged")
    layer = text_layer(bytes(pdf.output()), 1)
    assert [line.text for line in layer.lines] == ["costs and other non-", "recurring costs are charged"]
    assert layer.lines[0].words[-1].text == "non-"


def test_a_scanned_page_serves_the_words_ocr_read_and_highlights_among_them() -> None:
    # A page that is only an image: its text layer and highlights come from the words stored at indexing.
    scan = FPDF(format="A4")
    scan.add_page()
    scan.image(Image.new("L", (210, 297), 255), x=0, y=0, w=210, h=297)
    data = bytes(scan.output())
    words = [("The", 0.1), ("valve", 0.2), ("is", 0.3), ("closed", 0.35)]
    recognised = TextLayer(page=1, aspect=297 / 210, lines=[
        TextLine.of([TextWord(text=t, box=Box(left=x, top=0.4, width=0.04, height=0.015)) for t, x in words[:3]]),
        TextLine.of([TextWord(text=words[3][0], box=Box(left=0.1, top=0.43, width=0.06, height=0.015))]),
    ])
    repo = FakeRepository()
    doc_id = content_id(data)
    asyncio.run(repo.put_document(DocumentRecord(doc_id=doc_id, file_name="scan.pdf", status=DocumentStatus.READY)))
    asyncio.run(repo.put_pdf(doc_id, data))
    app = FastAPI()
    install_auth(app, Settings(auth="off"), FakeKeyStore)
    install_page_routes(app, lambda: repo)
    with TestClient(app) as client:
        assert client.get(f"/v1/documents/{doc_id}/pages/1/text-layer").json()["lines"] == []  # nothing stored yet
        asyncio.run(repo.put_text_layers(doc_id, [recognised]))
        assert TextLayer.model_validate(client.get(f"/v1/documents/{doc_id}/pages/1/text-layer").json()) == recognised
        found = boxes(client, doc_id, 1, "valve is closed")
        assert found["match"] == "exact" and found["matched_text"] == "valve is\nclosed"
        # One box per line: the line's words from "valve" on, then the next line's word.
        expected = [(0.2, 0.4, 0.14, 0.015), (0.1, 0.43, 0.06, 0.015)]
        got = [(b["left"], b["top"], b["width"], b["height"]) for b in found["boxes"]]
        assert len(got) == len(expected) and all(map(math.isclose, sum(got, ()), sum(expected, ())))
        assert boxes(client, doc_id, 1, "nothing of the kind here")["match"] == "none"
