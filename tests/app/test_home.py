"""AppTest: the whole app shell with the Home page."""


def test_home_renders_and_shows_secure_mode(app_test):
    at = app_test("app.py").run()
    assert not at.exception
    assert at.title[0].value == "DP Explorer"
    assert any("Mode: secure" in i.value for i in at.info)


def test_demo_mode_toggle_switches_label(app_test):
    at = app_test("app.py").run()
    at.toggle(key="dpx_demo_mode").set_value(True).run()
    assert not at.exception
    assert any("reproducible demo" in w.value for w in at.warning)


def test_analyst_home_says_all_three_tools_work(app_test, monkeypatch):
    monkeypatch.setenv("DPX_MODE", "analyst")
    at = app_test("app.py").run()
    assert not at.exception
    text = " ".join(x.value for x in [*at.markdown, *at.caption, *at.info])
    assert "Not available in analyst mode" not in text
    assert "All three tools work" in text
    links = {link.proto.page for link in at.get("page_link")}
    assert links == {"location_histograms", "pp_balancing", "dp_sql", "releases"}


def test_home_has_a_card_for_every_page_and_sells_no_method_as_the_location_tool(app_test):
    """Issue 32: a card (with its link) for every page of the app but Home, Releases included;
    the location card leads with Recommended (the default), not HTF; one glossary of symbols."""
    from pathlib import Path

    from ui.shell import HOME, PAGES

    at = app_test("app.py").run()
    assert not at.exception
    links = {link.proto.page for link in at.get("page_link")}
    assert links == {Path(p.file).stem for p in PAGES if p is not HOME}
    location = next(m.value for m in at.markdown if "latitude/longitude" in m.value)
    assert "**Recommended (private choice)**, the default" in location
    assert location.index("Recommended") < location.index("HTF")
    glossary = next(e for e in at.expander if e.label == "Symbols on this page")
    assert "**ρ1**" in glossary.markdown[0].value and "**ε**" in glossary.markdown[0].value
