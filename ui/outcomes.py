"""Governed outcomes, drawn the same way on every page.

Before: what a button will charge (`ChargePlan`, `release_button`) — ε and δ, against which
dataset's remaining budget — and, in analyst mode, a confirmation when one click would spend
more than a quarter of what remains. After: a charge done, a refusal (nothing charged), a
failure after the charge (the charge stands), and the releases of this session that were
charged but never shown (`show_not_shown`), so nobody pays twice without knowing.
Every outcome redraws the page's budget lines (`ui.budget`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum

import pandas as pd
import streamlit as st

from core.errors import InputError
from core.governance import ComputeFailed
from core.planning.standing import standing
from core.privacy.cost import BudgetShortfall, Cost, Dimension, check_budget
from core.registry import Dataset, Registry, Release, RunKind, Status
from ui import state
from ui.budget import SYMBOL, refresh_budget_lines
from ui.glossary import in_app
from ui.shell import is_analyst

CONFIRM_SHARE = 0.25  # analyst mode: a click spending more than this share of what remains asks


@dataclass(frozen=True)
class Share:
    """What one click spends of what remains in one dimension of (ε, δ)."""

    dimension: Dimension
    spend: float
    left: float

    @property
    def fraction(self) -> float:
        return self.spend / self.left if self.left > 0 else float("inf")

    @property
    def large(self) -> bool:
        """More than `CONFIRM_SHARE` of what remains (any spend of nothing left)."""
        return self.spend > 0 and self.spend > CONFIRM_SHARE * self.left

    def words(self) -> str:
        sym = SYMBOL[self.dimension]
        if self.left <= 0:
            return f"{sym} {self.spend:.4g} with no {sym} remaining"
        return f"{sym} {self.spend:.4g} of the {self.left:.4g} remaining ({self.fraction:.0%})"


@contextmanager
def user_errors() -> Iterator[None]:
    """Show an `InputError` as one clear message and stop the page; nothing further runs."""
    try:
        yield
    except InputError as exc:
        st.error(in_app(str(exc)))
        st.stop()


@dataclass(frozen=True)
class ChargePlan:
    """What one click will charge, stated before anything is read."""

    epsilon: float
    delta: float = 0.0
    releases: int = 1
    dataset: Dataset | None = None
    remaining: tuple[float, float] | None = None  # the dataset's (ε, δ) left, read now
    seeded: bool = False
    note: str = ""  # e.g. PP's "(ρ1, ρ2) publication"

    @classmethod
    def of(
        cls,
        registry: Registry | None,
        dataset: Dataset | None,
        epsilon: float,
        delta: float = 0.0,
        releases: int = 1,
        seeded: bool = False,
        note: str = "",
    ) -> ChargePlan:
        remaining = None
        if registry is not None and dataset is not None:
            remaining = registry.remaining(dataset.name)
        return cls(epsilon, delta, releases, dataset, remaining, seeded, note)

    @property
    def shares(self) -> tuple[Share, Share] | None:
        """What this click spends of the remaining ε and of the remaining δ (None: no budget)."""
        if self.remaining is None:
            return None
        eps_left, delta_left = self.remaining
        return (
            Share(Dimension.EPSILON, self.epsilon, eps_left),
            Share(Dimension.DELTA, self.delta, delta_left),
        )

    @property
    def shortfall(self) -> BudgetShortfall | None:
        """The refusal this click would meet (the registry re-checks at the charge), by the
        one budget check: each release against the per-query caps, all against what remains."""
        d = self.dataset
        if d is None or self.remaining is None or self.seeded:
            return None
        p, n = d.policy, max(1, self.releases)
        total = Cost(p.epsilon_total, p.delta_total)
        spent = Cost(
            max(0.0, total.epsilon - self.remaining[0]), max(0.0, total.delta - self.remaining[1])
        )
        where = {"subject": f"dataset '{d.name}'", "cap_source": f"dataset '{d.name}' policy"}
        each = check_budget(
            Cost(self.epsilon / n, self.delta / n),
            max_epsilon=p.max_epsilon_per_query,
            max_delta=p.max_delta_per_query,
            **where,
        )
        return each or check_budget(
            Cost(self.epsilon, self.delta),
            spent=spent,
            total=total,
            owner_command=f"dpx dataset budget {d.name}",
            **where,
        )

    @property
    def confirm_shares(self) -> tuple[Share, ...]:
        """Analyst mode: the dimension(s) of which this click spends more than a quarter of
        what remains — what triggers the confirmation (empty: none asked)."""
        if not is_analyst() or self.seeded or self.shares is None or self.shortfall:
            return ()  # a click that would be refused is said so instead
        return tuple(s for s in self.shares if s.large)

    @property
    def needs_confirmation(self) -> bool:
        """Analyst mode, and this click spends more than a quarter of the remaining ε or δ."""
        return bool(self.confirm_shares)

    def confirm_text(self) -> str:
        """The confirmation's words: the share(s) that triggered it, each with both numbers."""
        spends = " and ".join(s.words() for s in self.confirm_shares)
        return f"Yes, spend {spends} with one click (more than {CONFIRM_SHARE:.0%} of what remains)"

    def confirm_warning(self) -> str:
        which = " and ".join(SYMBOL[s.dimension] for s in self.confirm_shares)
        return (
            f"This click would spend more than a quarter of the dataset's remaining {which}: "
            "tick the confirmation to enable the button."
        )

    def text(self, button: str) -> str:
        cost = f"ε {self.epsilon:.4g}" + (f", δ {self.delta:.3g}" if self.delta else "")
        count = ""
        if self.releases > 1:
            count = (
                f" ({self.releases} releases, ε {self.epsilon / self.releases:.4g} each; "
                "basic composition: they add up)"
            )
        note = f" {self.note}" if self.note else ""
        if self.dataset is None:
            uses = f"uses {cost}{count}." if self.epsilon or self.delta else "charges no ε."
            return (
                f"**{button}** {uses}{note} Unregistered data (a demo or an "
                "upload): recorded as an unregistered run, not limited across runs."
            )
        if self.seeded and not self.dataset.teaching:
            return (
                f"**{button}** with seeded noise is refused on dataset **{self.dataset.name}** "
                "(not flagged --teaching): switch the sidebar to secure mode."
            )
        if self.seeded:
            return (
                f"**{button}** uses seeded noise on teaching dataset **{self.dataset.name}**: "
                "recorded as a demo run, nothing charged."
            )
        eps_left, delta_left = self.remaining or (0.0, 0.0)
        left = f"ε {eps_left:.4g}, δ {delta_left:.3g}"
        if self.epsilon == 0 and self.delta == 0:
            return (
                f"**{button}** charges nothing to dataset **{self.dataset.name}** (remaining "
                f"budget {left}).{note}"
            )
        return (
            f"**{button}** charges {cost}{count} to dataset **{self.dataset.name}**, whose "
            f"remaining budget is {left}.{note}"
        )


def release_button(label: str, plan: ChargePlan, key: str, disabled: bool = False) -> bool:
    """The page's one release button, with what it charges stated above it. In analyst mode,
    when the click would spend more than a quarter of the remaining budget, a confirmation
    checkbox (reset whenever the charge changes) must be ticked first. True when clicked."""
    st.markdown(plan.text(label))
    short = plan.shortfall
    if short is not None:
        st.warning(f"This click would be refused (nothing is charged): {short}")
    if plan.needs_confirmation:
        eps_left, delta_left = plan.remaining
        confirm_key = f"{key}::confirm::{plan.epsilon:g}:{plan.delta:g}:{eps_left:g}:{delta_left:g}"
        confirmed = st.checkbox(plan.confirm_text(), key=confirm_key)
        if not confirmed:
            st.warning(plan.confirm_warning())
        disabled = disabled or not confirmed
    return st.button(label, type="primary", key=key, disabled=disabled)


class OutcomeKind(StrEnum):
    REFUSED = "refused"  # nothing was charged
    FAILED = "failed"  # failed after the charge: the charge stands


@dataclass(frozen=True)
class Outcome:
    """A refusal or a failure, kept for the session so it is still there after navigating away
    and back (or a reload), until the next attempt replaces it."""

    kind: OutcomeKind
    what: str
    message: str
    release_id: int | None = None

    def show(self) -> None:
        if self.kind is OutcomeKind.REFUSED:
            st.error(f"Refused — nothing was released or charged ({self.what}). {self.message}")
        else:
            where = f" (release #{self.release_id})" if self.release_id is not None else ""
            st.error(
                f"Failed after the charge{where} ({self.what}): the charge stands. {self.message}"
            )


def keep_outcome(key: str, outcome: Outcome | None) -> None:
    """Keep (or with None, forget) the outcome shown under `key`."""
    if outcome is None:
        state.drop(f"{key}::outcome")
    else:
        state.put(f"{key}::outcome", outcome, f"the message '{outcome.what} {outcome.kind}'")


def show_kept_outcome(key: str) -> None:
    outcome = state.get(f"{key}::outcome")
    if outcome is not None:
        outcome.show()


@contextmanager
def governed(what: str, key: str) -> Iterator[None]:
    """Around a page's release step: a refusal (nothing charged) or a failure after the charge
    (the charge stands) is kept under `key` (shown by `show_kept_outcome`) and the page goes
    on; budget lines refresh."""
    keep_outcome(key, None)
    try:
        yield
    except ComputeFailed as err:
        keep_outcome(key, Outcome(OutcomeKind.FAILED, what, str(err)))
    except InputError as err:
        keep_outcome(key, Outcome(OutcomeKind.REFUSED, what, str(err)))
    finally:
        refresh_budget_lines()


def charged(dataset: Dataset | None = None) -> None:
    """After a charge: the page's budget lines show the registry's spend as of now (the kept
    result, drawn next, says what was recorded). A registered dataset's page runs again, so
    what the next click would charge — and the analyst's confirmation — are read afresh."""
    refresh_budget_lines()
    if dataset is not None:
        st.rerun()


def plan_text(registry: Registry | None, release_ids: Sequence[int | None]) -> str:
    """Where these releases stand against their dataset's budget plan, in words ('' for demo or
    unregistered runs, or when the registry cannot be read): the CLI's sentence
    (`core.planning.standing`), naming the releases when there are several."""
    if registry is None:
        return ""
    groups: dict[str, list[int]] = {}
    for rid in (i for i in release_ids if i is not None):
        try:
            sentence = standing(registry, registry.release(rid)).sentence
        except InputError:
            return ""
        if sentence:
            groups.setdefault(sentence, []).append(rid)
    if len(groups) == 1 and sum(map(len, groups.values())) == 1:
        return next(iter(groups))
    return " ".join(
        f"{'Release' if len(ids) == 1 else 'Releases'} {', '.join(f'#{i}' for i in ids)}: "
        + sentence[0].lower()
        + sentence[1:]
        for sentence, ids in groups.items()
    )


def recorded_text(
    release: Release | None, what: str = "Release", registry: Registry | None = None
) -> str:
    """What the registry recorded for one run, in words (with `registry`: and where it stands
    against the dataset's budget plan)."""
    if release is None:
        return "Not recorded: the release registry could not be opened."
    if release.kind is RunKind.DEMO:
        return f"Recorded as demo run #{release.id} (seeded noise: not a release, nothing charged)."
    if release.kind is RunKind.UNREGISTERED:
        return f"Recorded as unregistered run #{release.id} (not limited across runs)."
    cost = (
        f"charged ε {release.epsilon:g}" + (f", δ {release.delta:g}" if release.delta else "")
        if release.epsilon or release.delta
        else "no ε charged"
    )
    plan = plan_text(registry, [release.id])
    return f"{what} recorded as release #{release.id} of dataset **{release.dataset}**: {cost}." + (
        f" {plan}" if plan else ""
    )


def open_registry() -> Registry | None:
    """The registry for an unregistered run (a demo or an upload); if it cannot be opened the
    run is made unrecorded, with a warning (as the CLI does)."""
    try:
        return Registry()
    except InputError as err:
        st.warning(f"This run will not be recorded: {err}")
        return None


# -- charged, not shown ----------------------------------------------------------------------
def not_shown(
    registry: Registry, dataset: str | None = None, tools: Sequence[str] | None = None
) -> list[Release]:
    """Runs this session charged but never showed (it was reloaded, or the server restarted
    during a build), and runs of `dataset` stranded by a process that stopped. Analyst mode:
    charged releases of registered datasets only."""
    mine = state.session_id()
    seen = state.shown()
    found: dict[int, Release] = {}
    for r in registry.releases(dataset, session=mine, bodies=False):
        if r.id not in seen:
            found[r.id] = r
    if dataset is not None:
        for r in registry.stranded(dataset):
            found.setdefault(r.id, r)
    runs = [r for r in found.values() if tools is None or r.tool in tools]
    if is_analyst():
        runs = [r for r in runs if r.kind is RunKind.RELEASE]
    return sorted(runs, key=lambda r: r.id)


def stranded_or_not_shown(registry: Registry) -> list[Release]:
    """For the Releases page: every stranded run (a process stopped after the charge, or the
    artefact was not recorded), and every run an app session charged but never showed, except
    those of sessions still running in this server (they may be showing them right now)."""
    found: dict[int, Release] = {r.id: r for r in registry.stranded()}
    mine = state.session_id()
    for r in registry.releases(bodies=False):
        session = r.params.get("session")
        if not session or r.id in found:
            continue
        if session == mine:
            if r.id not in state.shown():
                found[r.id] = r
        elif not state.is_live(session) and r.id not in (state.shown_by(session) or ()):
            found[r.id] = r
    runs = sorted(found.values(), key=lambda r: r.id)
    if is_analyst():
        runs = [r for r in runs if r.kind is RunKind.RELEASE]
    return runs


def not_shown_frame(runs: Sequence[Release]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "id": r.id,
                "time (UTC)": r.time,
                "what": r.title,
                "dataset": r.dataset or "(unregistered)",
                "ε charged": r.epsilon if r.kind is RunKind.RELEASE else 0.0,
                "δ charged": r.delta if r.kind is RunKind.RELEASE else 0.0,
                "status": _status_words(r),
            }
            for r in runs
        ],
        columns=["id", "time (UTC)", "what", "dataset", "ε charged", "δ charged", "status"],
    )


def _status_words(r: Release) -> str:
    if r.status is Status.RELEASED:
        return "computed, never shown here"
    if r.status is Status.CHARGED:
        return "charged; the process stopped before it finished"
    if r.status is Status.UNDELIVERED:
        return "computed, not recorded"
    return "charged, not delivered"


def show_not_shown(choice, tools: Sequence[str], key: str) -> None:
    """A box listing the "charged, not shown" runs of this page's tools for the data chosen
    (`choice`: a `ui.data.DataChoice`), with an acknowledgement button. Drawn right after the
    data chooser, before anything else can be charged."""
    cache = f"_dpx_not_shown::{key}::{choice.dataset_name}"
    if cache not in st.session_state:  # read once per browser session and page (a reload or a
        # restart starts a new one); the registry's list of every release is not read per rerun
        registry = choice.registry
        if registry is None:
            try:
                registry = Registry()
            except InputError:
                return
        st.session_state[cache] = not_shown(registry, choice.dataset_name, tools)
    runs = [r for r in st.session_state[cache] if r.id not in state.shown()]
    if not runs:
        return
    with st.container(border=True, key=f"{key}_not_shown"):
        total = sum(r.epsilon for r in runs if r.kind is RunKind.RELEASE)
        ids = ", ".join(f"#{r.id}" for r in runs)
        st.error(
            f"**Charged, not shown:** {len(runs)} run(s) of this page ({ids}) were charged "
            + (f"(ε {total:.4g} in total) " if total else "")
            + "but never shown — this session was reloaded or the server restarted while they "
            "were being built. Their charges stand. Finished ones have a report on the "
            "**Releases** page; building again charges again."
        )
        st.dataframe(not_shown_frame(runs), hide_index=True, key=f"{key}_not_shown_table")
        if st.button("I have seen these", key=f"{key}_not_shown_ack"):
            state.mark_shown(r.id for r in runs)
            st.rerun()
