"""A page's layout breaks found again inside a sentence whose line breaks are gone."""

from shared.text.seams import page_seams, split_at_seams

PAGE = """Revenue by segment
Revenue grew in every segment over the year, as the table below
shows for each of the product lines the company sells, and the
revenue by region grew as well, most of all in the northern one,
where the new plant opened in the spring and sold its first pumps.
Item | 2021 | 2022
Pumps | 12 | 14
"""


def test_a_heading_is_cut_from_the_sentence_below_it_where_its_words_recur() -> None:
    sentence = "Revenue by segment Revenue grew in every segment over the year, as the table below"
    assert split_at_seams(sentence, page_seams(PAGE)) == [
        "Revenue by segment",
        "Revenue grew in every segment over the year, as the table below",
    ]


def test_table_rows_are_cut_apart_and_text_without_a_seam_stays_whole() -> None:
    assert split_at_seams("Item | 2021 | 2022 Pumps | 12 | 14", page_seams(PAGE)) == [
        "Item | 2021 | 2022",
        "Pumps | 12 | 14",
    ]
    assert split_at_seams("Pumps run quietly.", page_seams(PAGE)) == ["Pumps run quietly."]
