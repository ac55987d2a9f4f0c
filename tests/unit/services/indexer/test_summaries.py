"""Offline summaries: key sentences of a node's own text, never empty when it has text."""

from __future__ import annotations

from services.indexer.pipeline import index_pdf
from services.indexer.summaries import summarise_tree
from shared.model.tree import TreeNode, walk_tree
from shared.text.normalize import split_sentences
from tests.support import pdfs


def summarised(pages: list[str], titles: list[tuple[str, int]]) -> list[str]:
    """The summaries of top-level sections, one per (title, page), over `pages`."""
    nodes = [TreeNode(id=f"{k + 1:04d}", title=title, page_start=page, page_end=page, level=1)
             for k, (title, page) in enumerate(titles)]
    summarise_tree(nodes, pages, frozenset())
    return [node.summary for node in nodes]


def test_every_node_with_text_gets_at_most_three_sentences_from_its_pages() -> None:
    data, _ = pdfs.manual_pdf(chapters=2, sections=2, pages_per_section=2)
    indexed = index_pdf(data, "manual.pdf")
    for node in walk_tree(indexed.tree.nodes):
        assert node.summary, f"empty summary for {node.title!r}"
        assert len(split_sentences(node.summary)) <= 3
        own_pages = " ".join(" ".join(indexed.pages[p - 1].split()) for p in node.pages)
        for sentence in split_sentences(node.summary):
            assert sentence.rstrip(" …") in own_pages


def test_section_summary_prefers_its_distinctive_sentence() -> None:
    data, _ = pdfs.manual_pdf(chapters=2, sections=2, pages_per_section=1)
    indexed = index_pdf(data, "manual.pdf")
    section = next(n for n in walk_tree(indexed.tree.nodes) if n.title == "2.2 Operating limits")
    # The boilerplate paragraph repeats on every page; the section's own fact does not.
    assert pdfs.fact(1, 1) in section.summary


def test_summary_stays_within_the_node_and_falls_back_to_text_without_sentences() -> None:
    pages = [
        "Pump overview\nThe pump moves feedwater into the boiler drum at constant pressure.",
        "Parts list\nimpeller shaft seal bearing housing",
    ]
    assert summarised(pages, [("Pump overview", 1), ("Parts list", 2)]) == [
        "The pump moves feedwater into the boiler drum at constant pressure.", "impeller shaft seal bearing housing"]


def test_figures_without_words_are_no_summary() -> None:
    # A table's column of years, a lone clause number, a signature rule: nothing a reader can use.
    pages = [
        "Selected Financial Data\n2018 2017 2016 2015 2014\nNet sales rose in each of the last five years.",
        "2.15 Company\n5",
        "Signatures\n___________________________",
    ]
    assert summarised(pages, [("Selected Financial Data", 1), ("2.15 Company", 2), ("Signatures", 3)]) == [
        "Net sales rose in each of the last five years.", "", ""]


def test_node_without_text_has_empty_summary() -> None:
    nodes = [TreeNode(id="0001", title="Scan", page_start=1, page_end=1, level=1)]
    summarise_tree(nodes, [""], frozenset())
    assert nodes[0].summary == ""


def test_own_text_starts_at_the_heading_not_at_a_running_header_with_the_same_words() -> None:
    pages = [
        "Valves 7\nThe previous entry ends here with its closing remark about flanges.\n"
        "Valves Isolation and Control\nValves isolate sections of the feedwater line during repairs.",
    ]
    nodes = [TreeNode(id="0001", title="Valves", page_start=1, page_end=1, level=1)]
    summarise_tree(nodes, pages, frozenset())
    assert "flanges" not in nodes[0].summary
    assert "Valves isolate sections of the feedwater line during repairs." in nodes[0].summary


def test_sections_on_one_page_each_summarise_their_own_text() -> None:
    # A heading set over two lines, then a title the page prints twice: each section starts
    # below its own heading, and no two sections read the same text.
    page = "\n".join([
        "Item 7. Management's Discussion and Analysis of",
        "Financial Condition and Results of Operations",
        "Revenue grew by eleven percent as the new plants came into service during the year.",
        "Regulation",
        "The first plant is licensed by the state water board under permit four.",
        "Item 7A. Quantitative and Qualitative Disclosures",
        "About Market Risk",
        "Interest rate swaps hedge the floating rate debt of the company against rising rates.",
        "Regulation",
        "The second plant reports to the federal energy regulator every quarter.",
    ])
    nodes = [
        TreeNode(id="0001", title="Item 7. Management's Discussion and Analysis of Financial Condition and Results "
                 "of Operations", page_start=1, page_end=1, level=1, children=[
                     TreeNode(id="0002", title="Regulation", page_start=1, page_end=1, level=2)]),
        TreeNode(id="0003", title="Item 7A. Quantitative and Qualitative Disclosures About Market Risk",
                 page_start=1, page_end=1, level=1, children=[
                     TreeNode(id="0004", title="Regulation", page_start=1, page_end=1, level=2)]),
    ]
    summarise_tree(nodes, [page], frozenset())
    item7, first, item7a, second = walk_tree(nodes)
    assert item7.summary.startswith("Revenue grew by eleven percent")
    assert first.summary.startswith("The first plant is licensed")
    assert item7a.summary.startswith("Interest rate swaps hedge")
    assert second.summary.startswith("The second plant reports")
    summaries = [n.summary for n in walk_tree(nodes)]
    assert len(set(summaries)) == len(summaries)


def test_a_contents_list_is_not_a_sections_summary() -> None:
    pages = [
        "Part II\nItem 5. Market for Common Equity ........ 21\nItem 6. Selected Financial Data . . . . . . . 23\n"
        "Item 7. Management's Discussion ..................... 24\n"
        "The company's shares trade on the New York Stock Exchange under the symbol NWT.",
    ]
    nodes = [TreeNode(id="0001", title="Part II", page_start=1, page_end=1, level=1)]
    summarise_tree(nodes, pages, frozenset())
    assert nodes[0].summary == "The company's shares trade on the New York Stock Exchange under the symbol NWT."


def test_a_title_whose_first_word_is_short_is_found_and_its_own_text_summarised() -> None:
    pages = [
        "2.3 What is the current version?\nThe current release is numbered by major, minor and patch level.\n"
        "2.4 How can it be obtained?\nSources and binaries are downloaded from the archive network mirrors.",
    ]
    assert summarised(pages, [("What is the current version?", 1), ("How can it be obtained?", 1)]) == [
        "The current release is numbered by major, minor and patch level.",
        "Sources and binaries are downloaded from the archive network mirrors."]


def test_a_section_whose_title_is_not_on_a_page_another_opens_takes_none_of_its_text() -> None:
    pages = ["Nonoperating income\nInvestment gains consist of unrealised holding gains on the deferred plan.\n"
             "Tax provision details follow in the next table of the annual report."]
    nodes = [
        TreeNode(id="0001", title="Nonoperating income", page_start=1, page_end=1, level=1),
        TreeNode(id="0002", title="Provision for income taxes", page_start=1, page_end=1, level=1),
    ]
    summarise_tree(nodes, pages, frozenset())
    assert "Investment gains" in nodes[0].summary
    assert nodes[1].summary == ""


def test_a_parent_without_text_and_one_child_names_its_sections_not_the_childs_words() -> None:
    pages = ["Item 7. Discussion\nOverview\nRevenue grew in every segment during the fiscal year under review."]
    child = TreeNode(id="0002", title="Overview", page_start=1, page_end=1, level=2)
    parent = TreeNode(id="0001", title="Item 7. Discussion", page_start=1, page_end=1, level=1, children=[child])
    summarise_tree([parent], pages, frozenset())
    assert child.summary == "Revenue grew in every segment during the fiscal year under review."
    assert parent.summary == "Sections: Overview"


def test_a_repeated_passage_says_where_it_stood_before_and_a_whole_one_line_text_stays() -> None:
    repeated = "The plan pays the award in shares when the performance goal is met at the end of the period."
    pages = [f"Exhibit A\n{repeated}\nItem 1B. Comments\nNone.", f"Exhibit B\n{repeated}\nItem 9. Changes\nNone."]
    nodes = [
        TreeNode(id="0001", title="Exhibit A", page_start=1, page_end=1, level=1),
        TreeNode(id="0002", title="Item 1B. Comments", page_start=1, page_end=1, level=1),
        TreeNode(id="0003", title="Exhibit B", page_start=2, page_end=2, level=1),
        TreeNode(id="0004", title="Item 9. Changes", page_start=2, page_end=2, level=1),
    ]
    summarise_tree(nodes, pages, frozenset())
    assert nodes[0].summary == repeated
    assert nodes[2].summary == f"Also on p. 1: {repeated}"
    assert nodes[1].summary == nodes[3].summary == "None."


def test_sections_of_one_page_saying_the_same_each_name_the_one_before() -> None:
    deferred = "The information required by this Item is incorporated by reference from the proxy statement."
    items = ["Item 10. Directors and Officers", "Item 11. Executive Compensation", "Item 12. Security Ownership"]
    pages = ["\n".join(f"{title}\n{deferred}" for title in items)]
    nodes = [TreeNode(id=f"000{k + 1}", title=title, page_start=1, page_end=1, level=1) for k, title in enumerate(items)]
    summarise_tree(nodes, pages, frozenset())
    assert [n.summary for n in nodes] == [
        deferred, f"As under “Item 10. Directors and Officers”: {deferred}",
        f"As under “Item 11. Executive Compensation”: {deferred}"]
    assert len({n.summary for n in nodes}) == 3  # told apart, where a page number could not


def test_an_agreement_printed_twice_under_the_same_titles_reads_differently_each_time() -> None:
    # Each copy opens with the same passage twice on one page, under its title and under its
    # first section's: the second copy's note would be the first copy's word for word.
    opening = "The Company has asked the Lenders to extend credit in the amounts and on the terms set out here."

    def copy(page: int, first: int) -> TreeNode:
        child = TreeNode(id=f"{first + 1:04d}", title="Preliminary Statement", page_start=page, page_end=page, level=2)
        return TreeNode(id=f"{first:04d}", title="Credit Agreement", page_start=page, page_end=page, level=1,
                        children=[child])

    pages = [f"Credit Agreement\n{opening}\nPreliminary Statement\n{opening}"] * 2
    nodes = [copy(1, 1), copy(2, 3)]
    summarise_tree(nodes, pages, frozenset())
    summaries = [n.summary for node in nodes for n in (node, *node.children)]
    assert len(set(summaries)) == 4, summaries
    assert summaries[3].endswith(opening) and "p. 2" in summaries[3]
