"""A web page's pages hold its own text: not its banner, menus, sidebars and footer, not the text
of its scripts and pictures; its title is the page's title, not an icon's."""

from __future__ import annotations

from services.indexer.formats.html import read_html
from services.indexer.pipeline import index_document

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Pump maintenance guide</title>
<style>.logo { fill: navy }</style><script>window.analytics = 'tracker text';</script></head>
<body>
<header class="site"><svg class="logo" viewBox="0 0 10 10"><title>Acme logo</title><text>ACME</text></svg>
  <p>Acme Intranet banner</p></header>
<nav><a href="/">Home</a> <a href="/docs">All manuals</a></nav>
<div role="navigation"><a href="/prev">Previous manual</a></div>
<main>
  <article>
    <header><h1>Pump maintenance</h1><p>Revised in March.</p></header>
    <p>Pumps are checked every week.
      <svg width="12" height="12" role="img"><title>Warning icon</title><desc>A triangle</desc></svg>
      The relief valve opens at 8 bar.</p>
    <aside><p>Related: valve maintenance</p></aside>
    <template><p>Template row never shown</p></template>
    <noscript><p>Enable scripts to see the chart</p></noscript>
    <h2>Seals</h2><p>Seals are replaced every two years.</p>
    <footer><p>Written by the plant engineers.</p></footer>
  </article>
</main>
<div role="complementary"><p>Popular this week</p></div>
<div role="contentinfo"><p>Contact the help desk</p></div>
<footer><p>Copyright 2026 Acme</p></footer>
</body></html>"""

CHROME = ["Acme Intranet banner", "ACME", "Home", "All manuals", "Previous manual", "Related: valve maintenance",
          "Template row never shown", "Enable scripts", "Popular this week", "Contact the help desk",
          "Copyright 2026", "tracker text", "navy", "Warning icon", "A triangle", "Acme logo"]


def test_the_title_is_the_pages_title_and_no_svg_title() -> None:
    indexed = index_document(PAGE.encode(), "pumps.html")
    assert read_html(PAGE.encode()).title == "Pump maintenance guide"
    assert indexed.record.title == "Pump maintenance guide"
    untitled = PAGE.replace("<title>Pump maintenance guide</title>", "")
    assert read_html(untitled.encode()).title == "Pump maintenance"  # the first h1 when there is no <title>


def test_banner_menus_sidebars_footer_scripts_and_pictures_are_not_in_any_page() -> None:
    indexed = index_document(PAGE.encode(), "pumps.html")
    text = "\n".join(indexed.pages)
    for chrome in CHROME:
        assert chrome not in text, chrome
    # An article's own header and footer are the article's: its heading and byline stay.
    assert "Pumps are checked every week. The relief valve opens at 8 bar." in text
    assert "Revised in March." in text and "Written by the plant engineers." in text
    assert [n.title for n in indexed.tree.nodes] == ["Pump maintenance"]
    assert [c.title for c in indexed.tree.nodes[0].children] == ["Seals"]
