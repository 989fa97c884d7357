"""One step's work around its executor: contracts, its own context, the executor, the handout.

For every dispatch the shell (on its main thread):

1. checks the input schema, the preconditions and the invariants (seed 004 P18);
   a violation is the step's result — it never runs;
2. for an ``agent`` or ``llm`` step, composes the step's own context pack with
   the Composer and the primitive's context recipe (its query rendered over the
   task, the facts and earlier outputs, its pinned files, its lanes, its budget,
   its role); writes it as ``steps/<dispatch>/context.md`` and, as the run's
   record for that role, the role's Local Context Pack and the handoff from the
   role that worked the previous step;
3. hands the work to an executor: a builtin function over the index, a provider
   model matched by capability, or the calling agent (a handout it fetches with
   ``runs next``);
4. checks what came back: the output schema, the postconditions and the
   invariants again (with fresh facts). A violation is the step's result
   (``violated``), which a ``retry`` or ``fallback`` around it acts on.

Everything that leaves through a handout or a history entry passes the
outgoing-text gate (:func:`~.outgoing.gate_text`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import LibrarianError
from ..requests import ComposeRequest
from ..techniques.contracts import ContractCheck, ContractValidator
from ..techniques.primitives import Primitive
from .builtins import BuiltinContext, BuiltinFn, CancelToken, StepCancelled
from .outgoing import gate_text
from .rules import canonical
from .values import Dispatch, StepResult

if TYPE_CHECKING:
    from ..service.compose import ComposeService
    from ..service.workspace import WorkspaceSession
    from ..techniques.registry import Library
    from .core import Engine
    from .models import ModelAccess, ModelChoice
    from .store import RunMeta, WorkflowStore

__all__ = ["Dispatcher", "Raw", "ShellEnv", "StepContext"]

#: how long an output may be in a history entry (characters)
_HISTORY_CHARS = 1500


@dataclass
class ShellEnv:
    """What the shell works with (one per process and run)."""

    ws: WorkspaceSession
    composer: ComposeService
    library: Library
    executors: Mapping[str, BuiltinFn]
    store: WorkflowStore
    clock_ms: Callable[[], int]
    models: Callable[[], ModelAccess]
    fresh_facts: Callable[[], Mapping[str, Any]]
    validator: ContractValidator = field(default_factory=ContractValidator)


@dataclass(frozen=True, slots=True)
class StepContext:
    """A step's own context pack, as composed and stored."""

    text: str
    tokens: int
    budget: int
    query: str
    files: tuple[str, ...]
    uri: str
    decision_id: str | None = None
    lcp_uri: str | None = None
    handoff_uri: str | None = None


@dataclass
class Raw:
    """What an executor returned, before the output contract is checked."""

    status: str
    output: Mapping[str, Any] | None = None
    tokens: int = 0
    duration_ms: int = 0
    codes: tuple[str, ...] = ()
    evidence: list[dict[str, Any]] = field(default_factory=list)
    #: human-readable reasons (local only: never in the ledger)
    reasons: tuple[str, ...] = ()


def _codes(check: ContractCheck) -> list[str]:
    return [f"{r.condition_id or check.phase}:{r.code}" for r in check.violations]


class Dispatcher:
    """Per-step work for one run (see the module docstring)."""

    def __init__(self, env: ShellEnv, meta: RunMeta, engine: Engine) -> None:
        self.env = env
        self.meta = meta
        self.engine = engine

    # ------------------------------------------------------------- routing

    def primitive(self, d: Dispatch) -> Primitive:
        return self.env.library.primitive(d.primitive)

    def route(self, d: Dispatch) -> str:
        """``builtin``, ``llm`` (a provider model) or ``agent`` (the caller)."""
        if d.executor == "builtin":
            return "builtin"
        if self.meta.mode == "provider" or d.executor == "llm":
            return "llm"
        return "agent"

    # ----------------------------------------------------------- contracts

    def _evidence(self, d: Dispatch, check: ContractCheck) -> dict[str, Any]:
        return {
            "kind": "contract_check",
            "at": self.env.clock_ms(),
            "dispatch": d.dispatch_id,
            "phase": check.phase,
            "satisfied": check.satisfied,
            "conditions": len(check.results),
            "violations": _codes(check),
        }

    def precheck(self, d: Dispatch) -> tuple[Raw | None, list[dict[str, Any]]]:
        """Input schema, preconditions and invariants before the step runs."""
        prim = self.primitive(d)
        v = self.env.validator
        facts = self.meta.facts
        checks = [v.check_preconditions(prim, dict(d.input), facts)]
        if prim.contract.invariants:
            checks.append(v.check_invariants(prim, dict(d.input), facts))
        evidence = [self._evidence(d, c) for c in checks]
        bad = [c for c in checks if not c.satisfied]
        if not bad:
            return None, evidence
        codes = tuple(code for c in bad for code in _codes(c))
        reasons = tuple(r.reason for c in bad for r in c.violations)
        return Raw("violated", None, 0, 0, codes, [], reasons), evidence

    def postcheck(self, d: Dispatch, raw: Raw) -> tuple[StepResult, tuple[str, ...]]:
        """The output schema, postconditions and invariants (fresh facts) of a success."""
        if raw.status != "success" or raw.output is None:
            status = raw.status if raw.status != "success" else "failure"
            res = StepResult(d.dispatch_id, status, None, raw.tokens, raw.duration_ms, raw.codes)  # type: ignore[arg-type]
            return res, raw.reasons
        prim = self.primitive(d)
        v = self.env.validator
        checks = [v.check_postconditions(prim, dict(d.input), dict(raw.output), self.meta.facts)]
        if prim.contract.invariants:
            checks.append(v.check_invariants(prim, dict(d.input), self.env.fresh_facts()))
        raw.evidence.extend(self._evidence(d, c) for c in checks)
        bad = [c for c in checks if not c.satisfied]
        if bad:
            codes = tuple(code for c in bad for code in _codes(c))
            reasons = tuple(r.reason for c in bad for r in c.violations)
            res = StepResult(d.dispatch_id, "violated", None, raw.tokens, raw.duration_ms, codes)
            return res, reasons
        return (
            StepResult(
                d.dispatch_id, "success", raw.output, raw.tokens, raw.duration_ms, raw.codes
            ),
            (),
        )

    # ------------------------------------------------------------- context

    def recipe_env(self) -> dict[str, Any]:
        env: dict[str, Any] = {k: v for k, v in self.meta.facts.items() if k != "steps"}
        env["task"] = self.meta.task
        env["steps"] = {pid: {"output": out} for pid, out in self.engine.by_primitive.items()}
        return env

    def _previous_role(self, d: Dispatch) -> tuple[str, str] | None:
        """(role, dispatch id) of the step whose result arrived last, if any."""
        for dispatch_id, _status in reversed(self.engine.history):
            sid = dispatch_id.rsplit(".", 1)[0]
            info = self.engine.plan.steps.get(sid)
            if info is not None and dispatch_id != d.dispatch_id:
                return info.role, dispatch_id
        return None

    def compose_context(self, d: Dispatch) -> tuple[StepContext, list[dict[str, Any]]]:
        """Compose, store and record the step's own context (main thread)."""
        env = self.env
        prim = self.primitive(d)
        recipe = prim.context
        renv = self.recipe_env()
        query = recipe.render_query(renv) or self.meta.task
        root = env.ws.root
        files = tuple(
            f
            for f in recipe.pinned_files(renv)
            if (root / f).is_file() and not env.ws.is_sensitive(f)
        )
        now_ms = env.clock_ms()
        request = ComposeRequest(
            query,
            budget=recipe.budget,
            files=files,
            agent_role=d.role,
            as_of=now_ms // 1000,
            event="agent_request",
            lanes=recipe.all_lanes,
        )
        result = env.composer.compose(request)
        text = gate_text(result.text)
        store = env.store
        run_id = self.meta.run_id
        path = store.write_step(run_id, d.dispatch_id, "context.md", text)
        evidence: list[dict[str, Any]] = [
            {
                "kind": "context_composed",
                "at": now_ms,
                "dispatch": d.dispatch_id,
                "role": d.role,
                "tokens": result.tokens,
                "budget": recipe.budget,
                "artifacts": len(result.artifacts),
                "pinned": len(files),
                "decision": result.decision_id,
            }
        ]
        lcp_uri = handoff_uri = None
        if self.meta.lcp:
            lcp_uri, handoff_uri, more = self._role_records(d, query, files, now_ms)
            evidence.extend(more)
        ctx = StepContext(
            text,
            result.tokens,
            recipe.budget,
            query,
            files,
            store.runs.uri(path),
            result.decision_id,
            lcp_uri,
            handoff_uri,
        )
        return ctx, evidence

    def _role_records(
        self, d: Dispatch, query: str, files: tuple[str, ...], now_ms: int
    ) -> tuple[str | None, str | None, list[dict[str, Any]]]:
        """The role's Local Context Pack for this step and the handoff into it."""
        from ..packs.service import make_handoff, make_pack

        evidence: list[dict[str, Any]] = []
        run_id = self.meta.run_id
        pack = make_pack(
            self.env.composer, d.role, query, run_id=run_id, files=files, as_of=now_ms // 1000
        )
        handoff_uri = None
        prev = self._previous_role(d)
        if prev is not None and prev[0] != d.role:
            status = dict(self.engine.history).get(prev[1], "")
            out = self.env.store.step_file(run_id, prev[1], "output.json")
            result = make_handoff(
                self.env.ws,
                run_id,
                prev[0],
                d.role,
                notes=[f"step {prev[1]} ended: {status}; next: {d.dispatch_id}"],
                evidence=[self.env.store.runs.uri(out)] if out.is_file() else [],
                as_of=now_ms // 1000,
            )
            handoff_uri = result.uri
            evidence.append(
                {
                    "kind": "handoff",
                    "at": now_ms,
                    "dispatch": d.dispatch_id,
                    "from": prev[0],
                    "to": d.role,
                    "diff_refs": len(result.package.diff_refs),
                }
            )
        return pack.uri, handoff_uri, evidence

    # ------------------------------------------------------------ executors

    def builtin_job(self, d: Dispatch, token: CancelToken) -> Callable[[], Raw]:
        env = self.env
        fn = env.executors.get(d.primitive)
        ws = env.ws
        ctx = BuiltinContext(
            root=ws.root,
            config=ws.config,
            input=d.input,
            facts=self.meta.facts,
            token=token,
            changes_of=lambda: tuple(ws.working_changes()),
            is_sensitive=ws.is_sensitive,
        )

        def job() -> Raw:
            started = time.perf_counter()
            if fn is None:
                return Raw("failure", codes=("executor_missing",))
            output: dict[str, Any] | None = None
            codes: tuple[str, ...] = ()
            try:
                output, status = dict(fn(ctx)), "success"
            except StepCancelled as exc:
                status = "timeout" if exc.timeout else "cancelled"
            except LibrarianError as exc:
                status, codes = "failure", (f"error:{exc.code}",)
            except Exception as exc:  # a crashing executor is a failed step, not a dead run
                status, codes = "failure", (f"crash:{type(exc).__name__}",)
            finally:
                ctx.close()
            ms = int((time.perf_counter() - started) * 1000)
            return Raw(status, output, 0, ms, codes)

        return job

    def choose_model(self, d: Dispatch) -> ModelChoice:
        return self.env.models().choose(d.dispatch_id, self.primitive(d).capabilities)

    def llm_job(
        self, d: Dispatch, ctx: StepContext, choice: ModelChoice, token: CancelToken
    ) -> Callable[[], Raw]:
        from ..providers.clients import ChatMessage

        prim = self.primitive(d)
        access = self.env.models()
        assert choice.provider is not None and choice.model is not None
        provider, model = choice.provider, choice.model
        key = f"{self.meta.run_id}:{d.dispatch_id}"
        messages = [
            ChatMessage("system", _system_prompt(prim)),
            ChatMessage("user", _user_prompt(prim, d, ctx)),
        ]

        def job() -> Raw:
            started = time.perf_counter()
            try:
                token.check()
                client = access.client(
                    provider, model, idempotency_key=key, timeout_s=token.remaining_s()
                )
                answer = client.chat(messages, schema=prim.output_schema)
            except StepCancelled as exc:
                return Raw("timeout" if exc.timeout else "cancelled")
            except LibrarianError as exc:
                kind = getattr(exc, "kind", exc.code)
                ms = int((time.perf_counter() - started) * 1000)
                status = "timeout" if kind == "timeout" else "failure"
                return Raw(status, None, ctx.tokens, ms, (f"provider:{kind}",))
            ms = int((time.perf_counter() - started) * 1000)
            usage = answer.usage
            tokens = max(ctx.tokens, usage.input_tokens) + usage.output_tokens
            if answer.json_error is not None or not isinstance(answer.data, dict):
                return Raw("violated", None, tokens, ms, ("output_schema:not_json",))
            return Raw("success", answer.data, tokens, ms)

        return job

    # --------------------------------------------------------------- agent

    def handout(
        self,
        d: Dispatch,
        ctx: StepContext,
        *,
        degraded: str | None = None,
        previous: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """What the calling agent is given for an agent step (stored, gated)."""
        prim = self.primitive(d)
        doc: dict[str, Any] = {
            "run_id": self.meta.run_id,
            "step": d.step_id,
            "dispatch": d.dispatch_id,
            "primitive": prim.id,
            "name": prim.name,
            "role": d.role,
            "attempt": d.attempt,
            "instructions": prim.instructions,
            "input": dict(d.input),
            "output_schema": prim.output_schema,
            "postconditions": [
                {"id": c.id, "when": c.predicate.text, "description": c.description}
                for c in prim.contract.postconditions
            ],
            "deadline_at": d.deadline_ms,
            "context": {
                "uri": ctx.uri,
                "tokens": ctx.tokens,
                "budget": ctx.budget,
                "query": ctx.query,
                "pinned": list(ctx.files),
                "decision_id": ctx.decision_id,
                "text": ctx.text,
            },
            "lcp_uri": ctx.lcp_uri,
            "handoff_uri": ctx.handoff_uri,
            "submit": f"librarian runs submit {self.meta.run_id} {d.step_id} --output FILE",
        }
        if degraded:
            doc["degraded"] = degraded
        if previous:
            doc["previous_violations"] = [gate_text(r) for r in previous]
        self.env.store.write_step(
            self.meta.run_id, d.dispatch_id, "handout.json", json.dumps(doc, ensure_ascii=False)
        )
        return doc

    # ------------------------------------------------------------- history

    def history_text(self, d: Dispatch, output: Mapping[str, Any]) -> str:
        text = canonical(dict(output))
        if len(text) > _HISTORY_CHARS:
            text = text[: _HISTORY_CHARS - 3] + "..."
        return gate_text(f"workflow step {d.step_id} ({d.primitive}) succeeded: {text}")


def _system_prompt(prim: Primitive) -> str:
    return (
        "You work one step of a codelibrarian workflow. Follow the instructions, use the "
        "context pack, and answer with exactly one JSON object that matches the output "
        "schema: no prose, no code fences.\n\n"
        f"Step: {prim.name} ({prim.id})\nInstructions:\n{prim.instructions}"
    )


def _user_prompt(prim: Primitive, d: Dispatch, ctx: StepContext) -> str:
    posts = "\n".join(f"- {c.id}: {c.predicate.text}" for c in prim.contract.postconditions)
    return (
        f"Task: {d.input.get('task', '')}\n"
        f"Input: {canonical(dict(d.input))}\n"
        f"Output schema: {canonical(prim.output_schema)}\n"
        + (f"Postconditions:\n{posts}\n" if posts else "")
        + f"\nContext pack:\n{ctx.text}"
    )
