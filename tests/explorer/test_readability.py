"""The explorer is readable (issue 45), checked in real headless Chromium on a MuSiQue slice, by structure rather
than pixels: label sizes on screen at any zoom, the context's first path drawn first and in the highlight colour,
colours by relation family with a legend and a type list, no column clipped, no tooltip left over a later view,
and filters that keep both ends of every kept edge. Screenshots go to ``KG_RAG_SHOTS`` (a temporary folder by
default) to be looked at."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import CHROMIUM_FLAGS
from .test_browser import IDLE, ask, drawn_edges

pytestmark = [pytest.mark.browser, pytest.mark.shared_data]
playwright_api = pytest.importorskip("playwright.sync_api", reason="the browser test needs playwright (test extra)")

TOOLTIP_SHOWN = (
    "() => [...document.querySelectorAll('.vis-tooltip')].some((t) => getComputedStyle(t).visibility === 'visible')"
)
MIN_LABEL_PX = 11.0
"""Smallest on-screen label size (font size x zoom) accepted; fit-to-view drew 6 px before."""


def red_pixels(png: bytes, box: dict, colour: tuple[int, int, int]) -> int:
    """Pixels of ``colour`` (within a small tolerance) inside ``box`` of a screenshot: where the highlight is."""
    import io

    import numpy as np
    from matplotlib import image

    rgb = (image.imread(io.BytesIO(png), format="png")[..., :3] * 255).astype(int)
    x0, y0 = int(box["x"]), int(box["y"])
    crop = rgb[y0 : y0 + int(box["height"]), x0 : x0 + int(box["width"])]
    return int((np.abs(crop - np.asarray(colour)).max(axis=2) <= 40).sum())


def unclipped(page) -> dict[str, list[int]]:
    """Columns whose content is wider than they are (scrollWidth > clientWidth): clipped text."""
    return page.evaluate(
        """() => Object.fromEntries(['side', 'panel', 'legend', 'status', 'details'].map((id) => {
            const e = document.getElementById(id); return [id, [e.scrollWidth, e.clientWidth]]; })
            .filter(([, [s, c]]) => s > c + 1))"""
    )


def visible_state(page) -> dict:
    return page.evaluate(
        """() => { const shown = new Set(kgExplorer.nodes.get().filter(n => !n.hidden).map(n => n.id));
        const kept = kgExplorer.edges.get().filter(e => !e.hidden);
        return { kept: kept.length, dangling: kept.filter(e => !shown.has(e.from) || !shown.has(e.to)).map(e => e.id),
                 hidden: kgExplorer.edges.get().filter(e => e.hidden).map(e => e.relation_type) }; }"""
    )


def test_the_explorer_is_readable(chromium, musique_index, explorer_url, tmp_path):
    index, questions = musique_index
    shots = Path(os.environ.get("KG_RAG_SHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    first_q = next(q["question"] for q in questions if "Brother" in q["question"])  # a context with paths
    other_q = next(q["question"] for q in questions if q["question"] != first_q)
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            page, errors = ask(browser, explorer_url, first_q)
            canvas = page.locator("#graph canvas").bounding_box()
            png = page.screenshot(path=str(shots / "explorer-question.png"))

            # 1. labels: readable on screen at fit-to-view, and still after zooming out and in
            px = page.evaluate("kgExplorer.labelPx()")
            assert px["node"] >= MIN_LABEL_PX and px["edge"] >= MIN_LABEL_PX - 1, px
            page.mouse.move(canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] / 2)
            for delta in (600, -1500):  # out, then in
                page.mouse.wheel(0, delta)
                page.wait_for_timeout(300)
                px = page.evaluate("kgExplorer.labelPx()")
                assert px["node"] >= MIN_LABEL_PX, (delta, px)
            page.evaluate("kgExplorer.network.fit()")

            # 2. the context's paths first, the first one highlighted (red, thickest, on top, first in the panel)
            response = page.evaluate("kgExplorer.state.lastResponse")
            first = next(pa for pa in response["paths"] if pa["context_order"] == 0)
            assert [e["id"] for e in response["edges"][: len(first["edges"])]] == first["edges"]
            styled = page.evaluate(
                "(ids) => ids.map((id) => { const e = kgExplorer.edges.get(id); return [e.color.color, e.width]; })",
                first["edges"],
            )
            assert all(c == "#d62728" and w == max(5, w) for c, w in styled), styled
            assert page.locator("#details li.path.first.active").inner_text() == first["text"]
            assert page.evaluate("kgExplorer.edges.getIds().slice(-1)[0]") in first["edges"]  # drawn last: on top
            assert red_pixels(png, canvas, (0xD6, 0x27, 0x28)) > 40  # the highlight is on the screenshot

            # 3. colours by family: a legend of the families and a list of the view's types, each edge its family's
            assert page.locator("#families [data-family]").count() >= 6
            drawn = drawn_edges(page)
            types = {e["type"] for e in drawn}
            assert {x.get_attribute("data-type") for x in page.locator("#view-types label").all()} == types
            assert not {"BY", "IN"} & types  # the types the README says no longer exist
            colours = page.evaluate(
                "() => kgExplorer.edges.get().filter(e => !kgExplorer.pathRole[e.id])"
                ".map(e => [e.family, e.color.color])"
            )
            by_family: dict[str, set[str]] = {}
            for family, colour in colours:
                by_family.setdefault(family, set()).add(colour)
            assert all(len(c) == 1 for c in by_family.values()), by_family  # one colour per family
            assert len({next(iter(c)) for c in by_family.values()}) == len(by_family)  # and families apart

            # 4. no column clipped, at this width and a narrower one
            assert unclipped(page) == {}
            page.set_viewport_size({"width": 1280, "height": 800})
            page.wait_for_timeout(300)
            assert unclipped(page) == {}
            page.screenshot(path=str(shots / "explorer-1280.png"))
            page.set_viewport_size({"width": 1500, "height": 900})

            # 5. untick a type in the list: its edges go, every kept edge keeps both ends
            hidden_type = sorted(types)[0]
            page.locator(f'#view-types label[data-type="{hidden_type}"] input').uncheck()
            state = visible_state(page)
            assert state["hidden"] and set(state["hidden"]) == {hidden_type} and not state["dangling"], state
            page.locator(f'#view-types label[data-type="{hidden_type}"] input').check()

            # 6. a tooltip shown over this view is gone once another view is drawn
            page.evaluate("kgExplorer.network.stopSimulation()")
            node = response["nodes"][0]["id"]
            x, y = page.evaluate(
                "(id) => { const n = kgExplorer.network; const d = n.canvasToDOM(n.getPositions([id])[id]);"
                " return [d.x, d.y]; }",
                node,
            )
            page.mouse.move(canvas["x"] + x, canvas["y"] + y)
            page.wait_for_function(TOOLTIP_SHOWN, timeout=10_000)
            drawn_before = page.evaluate("kgExplorer.drawn")
            page.evaluate("(q) => kgExplorer.ask(q)", other_q)
            page.wait_for_function(IDLE.format(n=drawn_before), timeout=60_000)
            assert not page.evaluate(TOOLTIP_SHOWN)

            # 7. a server filter (deny a type of the first view): both ends of every kept edge stay on the canvas
            page.fill("#question", first_q)
            page.click("#ask-button")
            page.wait_for_function(IDLE.format(n=drawn_before + 1), timeout=60_000)
            page.fill("#f-exclude-edge-types", drawn[0]["type"])
            drawn_before = page.evaluate("kgExplorer.drawn")
            page.click("#apply")
            page.wait_for_function(IDLE.format(n=drawn_before), timeout=60_000)
            state = visible_state(page)
            assert state["kept"] and not state["dangling"], state
            page.screenshot(path=str(shots / "explorer-filtered.png"))
            assert not errors, errors
        finally:
            browser.close()
