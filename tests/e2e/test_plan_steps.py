"""The Plan steps in a real browser (issue 21), used as an officer would: open the step, plan,
carry the planned ε into the release step, change a widget, reload — the plan and the carried
values stay, no exception on screen, no request leaves localhost. Owner (demo data) and analyst
(a registered dataset; the location pilot is charged, shown with its cost and confirmed)."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from core.cli import main
from core.planning.location import plan_location
from core.planning.shape import PilotShape
from core.registry import Registry
from tests.e2e.waiting import wait_idle as _idle
from tests.registry.helpers import QUERY, write_points
from ui.glossary import in_app

pytestmark = pytest.mark.browser
PLAN_EPS = "Plan · the ε for the accuracy you need"
PLAN_PP = "Plan · the (ρ1, ρ2) for the error you accept"


def _run(capsys, argv) -> dict:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _open(page, url: str, path: str, heading: str) -> None:
    page.goto(f"{url}/{path}")
    page.get_by_role("heading", name=heading).first.wait_for()
    _idle(page)


def _expand(page, label: str) -> None:
    page.get_by_text(label, exact=True).first.click()
    _idle(page)


def _click(page, key: str) -> None:
    page.locator(f".st-key-{key} button").first.click()
    _idle(page)


def _fill(page, key: str, value: str, textarea: bool = False) -> None:
    box = page.locator(f".st-key-{key} {'textarea' if textarea else 'input'}").first
    box.fill(value)
    box.press("Control+Enter" if textarea else "Enter")
    _idle(page)


def _pick_option(page, label: str, option: str) -> None:
    box = page.get_by_role("combobox", name=label)
    item = page.get_by_role("option", name=option)
    for _ in range(5):  # retried: a late re-layout can close the list before the click
        box.click()
        try:
            item.first.click(timeout=5000)
        except Exception:  # noqa: BLE001 - the list closed before the click: open it again
            page.keyboard.press("Escape")
            continue
        _idle(page)
        if option in box.input_value():
            return
    raise AssertionError(f"could not choose {option!r} in {label!r}")


def _small_grid(page) -> None:
    grid = page.get_by_test_id("stMain").get_by_role("slider").first  # the page's grid slider
    for _ in range(10):  # retried: a rerun can swallow a key press
        if grid.get_attribute("aria-valuetext") == "64":
            return
        grid.focus()
        grid.press("Home")
        page.wait_for_timeout(500)
        _idle(page)


def _expect_sidebar_eps(page, epsilon: float) -> None:
    """The sidebar's ε slider shows `epsilon` (retried: the page may still be drawing)."""
    slider = page.get_by_test_id("stSidebar").get_by_role("slider").first
    value = None
    for _ in range(60):
        value = slider.get_attribute("aria-valuetext")
        if value and float(value) == epsilon:
            return
        page.wait_for_timeout(500)
    raise AssertionError(f"the sidebar's ε is {value}, not {epsilon:g}")


def _location_plan(page, target: str = "0.2") -> None:
    """Plan on the drawn pilot for `target` with the default method (Recommended)."""
    _fill(page, "lh_plan_target", target)
    _click(page, "lh_plan_run")
    page.locator(".st-key-lh_plan_use_auto button").wait_for(timeout=120_000)


def _expected_location(registry: Registry, pilot_id: int, target: float):
    from core.governance.planning import recorded_pilot

    pilot = recorded_pilot(registry, pilot_id, None)
    return plan_location(PilotShape(pilot), ["auto"], target, unit=pilot.unit)


def test_owner_plans_on_every_page_and_a_reload_keeps_it(
    page, app_url, external_requests, no_exception
):
    # location (demo points): a pilot (an unregistered run: its cost is stated), plan, carry ε
    _open(page, app_url, "location_histograms", "Location histograms")
    _small_grid(page)
    _expand(page, PLAN_EPS)
    page.get_by_text("Draw the pilot uses ε 0.2").first.wait_for()
    _click(page, "lh_plan_pilot_run")
    page.get_by_text("Recorded as unregistered run", exact=False).first.wait_for()
    pilot = max(
        (r for r in Registry().releases() if r.tool == "pilot" and r.params.get("via") == "app"),
        key=lambda r: r.id,
    )  # the newest pilot drawn from the app: this one
    _location_plan(page)
    expected = _expected_location(Registry(), pilot.id, 0.2).best
    label = f"Use ε {expected.epsilon:g} with {expected.label} in the release step"
    page.get_by_role("button", name=label).click()
    _idle(page)
    _expect_sidebar_eps(page, expected.epsilon)
    page.get_by_text(f"Build releases uses ε {expected.epsilon:.4g}").first.wait_for()
    page.reload()
    page.get_by_role("heading", name="Location histograms").first.wait_for()
    _idle(page)
    page.get_by_role("button", name=label).wait_for()  # the plan is still there after a reload
    _expect_sidebar_eps(page, expected.epsilon)
    no_exception(page)

    # DP SQL (demo tables): targets -> ε, written into the query; a reload keeps both
    _open(page, app_url, "dp_sql", "DP SQL")
    _expand(page, PLAN_EPS)
    _fill(page, "dpsql_plan_targets", "c=5@40", textarea=True)
    _click(page, "dpsql_plan_run")
    page.get_by_text("meets every target").first.wait_for()
    button = page.locator(".st-key-dpsql_plan_use button")
    eps = button.inner_text().split("ε ")[1].split(" ")[0]
    button.click()
    _idle(page)
    query = page.locator(".st-key-dpsql_query textarea")
    written = re.compile(rf"epsilon\s*=\s*{re.escape(eps)}\b")
    expect(query).to_have_value(written)
    page.reload()
    page.get_by_role("heading", name="DP SQL").first.wait_for()
    _idle(page)
    page.get_by_text("meets every target").first.wait_for()
    expect(query).to_have_value(written)
    no_exception(page)

    # PP (demo table): target error -> the loosest ρ2, carried into the settings
    _open(page, app_url, "pp_balancing", "PP balancing")
    _expand(page, PLAN_PP)
    _fill(page, "pp_plan_target", "20")  # the demo table has 42 rows: ±20 points
    _click(page, "pp_plan_run")
    use = page.locator(".st-key-pp_plan_use button")
    use.wait_for(timeout=60_000)
    rho2 = use.inner_text().split("= ")[1].strip()
    use.click()
    _idle(page)
    rho2_box = page.locator("[class*='st-key-pp_rho2_'] input").first
    expect(rho2_box).to_have_value(rho2)  # retried: the page may still be drawing
    page.reload()
    page.get_by_role("heading", name="PP balancing").first.wait_for()
    _idle(page)
    expect(rho2_box).to_have_value(rho2)  # retried: the page may still be drawing
    no_exception(page)
    assert external_requests == []


@pytest.fixture
def analyst_app_url(monkeypatch):
    """A server started with DPX_MODE=analyst; this test process stays the owner."""
    from tests.e2e.conftest import serve_app

    monkeypatch.setenv("DPX_MODE", "analyst")
    with serve_app() as url:
        monkeypatch.delenv("DPX_MODE")
        yield url


def test_analyst_plans_and_confirms_the_charged_pilot(
    page, analyst_app_url, external_requests, no_exception, capsys, tmp_path
):
    url = analyst_app_url
    name = f"plan-{tmp_path.name[-10:]}"
    points = write_points(tmp_path / "pts.csv")
    _run(capsys, ["dataset", "add", name, "--table", f"t={points}", "--uid", "uid",
                  "--epsilon", "0.6", "--delta", "1e-5"])  # fmt: skip
    registry = Registry()

    # location: the pilot is more than a quarter of what remains: confirm, then it is charged
    _open(page, url, "location_histograms", "Location histograms")
    _pick_option(page, "Registered dataset", name)
    _small_grid(page)
    _pick_option(page, "Bounding box", "Los Angeles")
    _expand(page, PLAN_EPS)
    page.get_by_text(f"Draw the pilot charges ε 0.2 to dataset {name}").first.wait_for()
    assert page.locator(".st-key-lh_plan_pilot_run button").is_disabled()
    page.get_by_text("Yes, spend ε 0.2 of the 0.6 remaining", exact=False).click()
    _idle(page)
    _click(page, "lh_plan_pilot_run")
    page.get_by_text("Pilot recorded as release", exact=False).first.wait_for()
    assert registry.spent(name)[0] == pytest.approx(0.2)
    (pilot,) = [r for r in registry.releases(name) if r.tool == "pilot"]
    _location_plan(page, "0.3")
    expected = _expected_location(registry, pilot.id, 0.3)
    page.get_by_text(in_app(expected.describe())).first.wait_for()
    page.reload()  # the plan and the paid-for pilot survive a reload; nothing is charged again
    page.get_by_role("heading", name="Location histograms").first.wait_for()
    _idle(page)
    page.get_by_text(in_app(expected.describe())).first.wait_for()
    assert registry.spent(name)[0] == pytest.approx(0.2)
    no_exception(page)

    # DP SQL: planning reads the schema only and charges nothing
    _open(page, url, "dp_sql", "DP SQL")
    _pick_option(page, "Registered dataset", name)
    area = page.locator(".st-key-dpsql_query textarea")
    area.fill(QUERY.format(eps=1))
    area.press("Control+Enter")
    _idle(page)
    _expand(page, PLAN_EPS)
    _fill(page, "dpsql_plan_targets", "n=10@50", textarea=True)
    _click(page, "dpsql_plan_run")
    page.get_by_text("meets every target").first.wait_for()
    no_exception(page)

    # PP: categories and size typed (no SA value offered), the answer shown
    _open(page, url, "pp_balancing", "PP balancing")
    _pick_option(page, "Registered dataset", name)
    _pick_option(page, "Sensitive attribute (SA) column", "sa")
    page.locator(".st-key-pp_missing").get_by_text("drop those records").click()
    _idle(page)
    _expand(page, PLAN_PP)
    cats = page.locator("[class*='st-key-pp_plan_cats_'] input").first
    assert cats.input_value() == ""
    _fill(page, "pp_plan_rows", "400")
    cats.fill("a, b, c, d")
    cats.press("Enter")
    _idle(page)
    _click(page, "pp_plan_run")
    page.get_by_text(in_app("PP at rho1 = 1/3")).first.wait_for(timeout=60_000)
    no_exception(page)
    assert registry.spent(name)[0] == pytest.approx(0.2)  # only the pilot was charged
    assert external_requests == []


def test_owner_saves_a_budget_plan_and_a_reload_shows_it(
    page, app_url, external_requests, no_exception, capsys, tmp_path
):
    name = f"budget-{tmp_path.name[-10:]}"
    points = write_points(tmp_path / "pts.csv")
    _run(capsys, ["dataset", "add", name, "--table", f"t={points}", "--uid", "uid",
                  "--epsilon", "4"])  # fmt: skip
    _open(page, app_url, "releases", "Releases")
    _expand(page, f"Budget plan · {name}")
    _fill(page, f"rel_plan_{name}_items", "sql:1x2\nlocation:share", textarea=True)
    page.get_by_text(
        in_app("the plan uses epsilon 4, delta 0 for 2 of 2 planned release kinds"), exact=False
    ).first.wait_for()
    _fill(page, f"rel_plan_{name}_name", "Q3")
    _click(page, f"rel_plan_{name}_save")
    page.get_by_text("nothing was charged", exact=False).first.wait_for()
    (plan,) = Registry().plans(name)
    assert plan.name == "Q3" and Registry().spent(name)[0] == 0
    page.reload()
    page.get_by_role("heading", name="Releases").first.wait_for()
    _idle(page)
    page.get_by_text(
        in_app(f"Plan 'Q3' (#{plan.id}) planned epsilon 4"), exact=False
    ).first.wait_for()
    no_exception(page)
    assert external_requests == []


def test_plan_step_screenshot(page, app_url, screenshot_dir, no_exception):
    """The README's picture of a Plan step: a declared size and shape (nothing charged)."""
    _open(page, app_url, "location_histograms", "Location histograms")
    _small_grid(page)
    _expand(page, PLAN_EPS)
    page.get_by_text("A declared public size and shape", exact=False).first.click()
    _idle(page)
    _click(page, "lh_plan_run")
    page.locator(".st-key-lh_plan_use_auto button").wait_for(timeout=120_000)
    no_exception(page)
    step = page.locator(".st-key-lh_plan_open")
    step.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    box = step.bounding_box()
    out = screenshot_dir / "plan_step.png"
    page.screenshot(path=str(out), full_page=True, clip={**box, "height": box["height"] + 24})
    assert out.stat().st_size > 10_000
