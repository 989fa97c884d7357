"""Techniques and planning: facts, presets, selection, plans, advice, evolution."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..boundary import guard_methods
from . import FacadePart

if TYPE_CHECKING:
    from ..execution.traces import RunTrace
    from ..planning.advisor import Advice
    from ..planning.plan import EnrichedPlan
    from ..planning.selector import Selection
    from ..providers.registry import ProviderRegistry
    from ..service.evolution import Decision, EvolutionResult
    from ..techniques.facts import Facts
    from ..workspace.presets import PresetStore


@guard_methods
class PlanningPart(FacadePart):
    def facts(
        self,
        task: str = "",
        *,
        base: str | None = None,
        diff_text: str | None = None,
        refresh: bool = True,
    ) -> Facts:
        """Codebase, change and intent facts that LCL conditions are decided on.

        Computed from the index (built or refreshed first) and the current change
        (``base``/``diff_text`` as for :meth:`compose`); see docs/lcl.md.
        """
        from ..service.techniques import workspace_facts

        return workspace_facts(self._ws, task, base=base, diff_text=diff_text, refresh=refresh)

    def presets(self) -> PresetStore:
        """The workspace's presets: built in, ``[presets.*]`` in the config, and
        ``.librarian/presets/*.toml`` (see docs/lcl.md)."""
        from ..service.techniques import preset_store

        return preset_store(self._ws)

    # --------------------------------------------------------------- planning

    def select(self, intent: str, *, llm: bool = False, embeddings: bool = True) -> Selection:
        """Patterns and compositions ranked for ``intent`` (intent decomposition,
        multi-aspect scores, an explanation per aspect); see docs/planning.md.

        ``llm`` asks a provider to decompose the intent (when one is available);
        ``embeddings=False`` uses the keyword fallback without loading the model.
        """
        from ..service.planning import select_intent

        return select_intent(self._ws, intent, llm=llm, embeddings=embeddings)

    def plan(
        self,
        intent: str,
        *,
        base: str | None = None,
        diff_text: str | None = None,
        llm: bool = False,
        embeddings: bool = True,
        model: str | None = None,
        as_of: int | None = None,
        registry: ProviderRegistry | None = None,
    ) -> EnrichedPlan:
        """The enriched plan for ``intent``: the chosen composition decided on this
        codebase's facts, each step's context composed and measured, estimates,
        providers, rationale and alternatives (docs/planning.md). ``registry``
        replaces provider discovery (tests pass one holding a ``FakeProvider``)."""
        from ..service.planning import plan_intent

        return plan_intent(
            self._ws,
            self._composer,
            intent,
            base=base,
            diff_text=diff_text,
            llm=llm,
            embeddings=embeddings,
            model=model,
            as_of=as_of,
            registry=registry,
        )

    def advise(self, *, refresh: bool = True) -> Advice:
        """The seed's ten codebase features found in the index (evidence files and a
        confidence; absent when the evidence is weak) and 3–5 suggested compositions."""
        from ..service.evolution import advise_workspace

        return advise_workspace(self._ws, refresh=refresh)

    def evolve(
        self, *, as_of: int | None = None, traces: Sequence[RunTrace] | None = None
    ) -> EvolutionResult:
        """Proposals, mutations and deprecation candidates learned from finished runs
        (``traces`` instead of the workspace's runs). Nothing changes until an item is
        approved with :meth:`evolve_decide`."""
        from ..service.evolution import evolve_workspace

        return evolve_workspace(self._ws, as_of=as_of, traces=traces)

    def evolve_decide(
        self,
        item_id: str,
        *,
        approve: bool,
        name: str | None = None,
        force: bool = False,
    ) -> Decision:
        """Approve (a proposal or mutation becomes a preset; a deprecation is recorded)
        or reject one item of the last evolution report."""
        from ..service.evolution import decide_item

        return decide_item(
            self._ws, item_id, "approved" if approve else "rejected", name=name, force=force
        )
