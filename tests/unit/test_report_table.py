"""Report tables: a cell holding "|" (arm names such as "lego | scratch | ALBERT") stays one
cell when the Markdown is rendered, as the site renders it (markdown-it, CommonMark + GFM
tables), and the text comes back intact."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from reasonlab.report import table


class Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def test_a_pipe_inside_a_cell_is_not_a_column_break():
    pytest.importorskip("markdown_it", reason="markdown-it-py is not installed")
    from reasonlab.site import render_markdown

    header = ["arm", "model.tie_layers", "task.corpus"]
    rows = [["pretrain uniform | ALBERT", "True", "uniform"], ["scratch", "-", "a|b"]]
    parsed = Cells()
    parsed.feed(render_markdown(table(header, rows)))
    assert parsed.rows == [header, *rows]


def test_a_table_without_pipes_is_plain_gfm():
    assert table(["a", "b"], [["1", "2"]]) == "| a | b |\n|---|---|\n| 1 | 2 |"
