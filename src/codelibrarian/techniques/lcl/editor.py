"""Applying edits to a composition tree, with diagnostics (the base of the LCL reducer).

:class:`TreeEditor` turns the edit nodes of the AST — ``Add``, ``Remove``,
``Replace``, ``Wrap`` — into new trees through the pure helpers of :mod:`.edits`,
reporting unknown primitives, missing targets and bad positions as positioned
diagnostics with the closest names. A condition (``cond``) makes the edit
*residual*: what it changes is wrapped in a ``conditional`` node (see :mod:`.edits`).
"""

from __future__ import annotations

from dataclasses import replace

from ..diagnostics import Diagnostic, Loc, closest
from ..operators import build_operator
from ..predicates import Predicate
from ..registry import Library
from ..relationships import presence
from ..tree import Node, OperatorNode, Step, freeze, steps_of
from .ast import Add, Edit, Remove, Replace, Wrap
from .edits import conditional, find, get, insert, replace_at, sibling_group

__all__ = ["TreeEditor"]


class TreeEditor:
    """Edit application; subclasses provide ``library`` and ``diags``."""

    library: Library
    diags: list[Diagnostic]

    def err(self, code: str, message: str, loc: Loc, suggestions: tuple[str, ...] = ()) -> None:
        self.diags.append(Diagnostic(code, message, loc, suggestions))

    def known_primitive(self, pid: str, loc: Loc) -> bool:
        if pid in self.library.primitives:
            return True
        self.err(
            "lcl_primitive_not_found",
            f"unknown primitive {pid!r}",
            loc,
            closest(pid, self.library.primitives),
        )
        return False

    def edit_tree(self, root: Node, edit: Edit, cond: Predicate | None) -> Node | None:
        if isinstance(edit, Add):
            return self.add(root, edit, cond)
        if isinstance(edit, Remove):
            return self.remove(root, edit, cond)
        if isinstance(edit, Replace):
            return self.replace(root, edit, cond)
        assert isinstance(edit, Wrap)
        return self.wrap(root, edit, cond)

    def _names(self, root: Node) -> list[str]:
        return [s.primitive for s in _steps(root)]

    def add(self, root: Node, edit: Add, cond: Predicate | None) -> Node:
        if not self.known_primitive(edit.primitive, edit.loc):
            return root
        if cond is None and presence(root).get(edit.primitive) == "certain":
            self.diags.append(
                Diagnostic(
                    "lcl_add_duplicate",
                    f"{edit.primitive} is already a step; adding it runs it twice",
                    edit.loc,
                    severity="warning",
                )
            )
        node: Node = Step(edit.primitive, freeze(dict(edit.params)), loc=edit.loc)
        if cond is not None:
            node = conditional(cond, node, loc=edit.loc)
        new, problem = insert(root, node, edit.position)
        if problem:
            target = edit.position.partition(":")[2]
            self.err("lcl_bad_position", problem, edit.loc, closest(target, self._names(root)))
        return new

    def remove(self, root: Node, edit: Remove, cond: Predicate | None) -> Node | None:
        paths = find(root, edit.target)
        if not paths:
            self.err(
                "lcl_remove_target_missing",
                f"cannot remove {edit.target!r}: it is not a step of the composition",
                edit.loc,
                closest(edit.target, self._names(root)),
            )
            return root
        new: Node | None = root
        for path in reversed(paths):
            assert new is not None
            keep = None
            if cond is not None:
                keep = conditional(cond.negated(), get(new, path), loc=edit.loc)
            new = replace_at(new, path, keep)
        return new

    def replace(self, root: Node, edit: Replace, cond: Predicate | None) -> Node:
        if not self.known_primitive(edit.new, edit.loc):
            return root
        paths = find(root, edit.old)
        if not paths:
            self.err(
                "lcl_replace_target_missing",
                f"cannot replace {edit.old!r}: it is not a step of the composition",
                edit.loc,
                closest(edit.old, self._names(root)),
            )
            return root
        new = root
        for path in reversed(paths):
            old = get(new, path)
            repl: Node = Step(edit.new, loc=edit.loc)
            if cond is not None:
                repl = conditional(cond, repl, old, loc=edit.loc)
            got = replace_at(new, path, repl)
            assert got is not None
            new = got
        return new

    def wrap(self, root: Node, w: Wrap, cond: Predicate | None) -> Node:
        spec = self.library.operators.get(w.operator)
        if spec is None:
            self.err(
                "lcl_operator_not_found",
                f"unknown operator {w.operator!r}",
                w.loc,
                closest(w.operator, self.library.operators),
            )
            return root
        if not w.inputs:
            self.err("lcl_operator_inputs", f"{w.operator} needs at least one input step", w.loc)
            return root
        parent_path, idx, problem = sibling_group(root, w.inputs)
        if problem:
            self.err(
                "lcl_operator_inputs",
                f"cannot wrap {', '.join(w.inputs)} in {w.operator}: {problem}",
                w.loc,
                closest(w.inputs[0], [s.primitive for s in _steps(root)]),
            )
            return root
        if parent_path is None:
            kids: list[Node] = [root]
        else:
            parent = get(root, parent_path)
            assert isinstance(parent, OperatorNode)
            kids = [parent.children[i] for i in idx]
            whole = len(idx) == len(parent.children)
            if whole and parent.operator == w.operator == "sequence" and not w.params:
                return root  # wrapping a whole sequence in a sequence changes nothing
        node, diags = build_operator(spec, w.params, kids, loc=w.loc, param_locs=w.param_locs)
        self.diags.extend(diags)
        new_node: Node = node
        if cond is not None:
            plain = (
                kids[0]
                if len(kids) == 1
                else OperatorNode("sequence", freeze({}), tuple(kids), loc=w.loc)
            )
            new_node = conditional(cond, node, plain, loc=w.loc)
        if parent_path is None:
            return new_node
        holder = get(root, parent_path)
        assert isinstance(holder, OperatorNode)
        return _swap(root, parent_path, holder, idx, new_node)


def _swap(
    root: Node, parent_path: tuple[int, ...], parent: OperatorNode, idx: list[int], node: Node
) -> Node:
    kids = list(parent.children)
    for i in reversed(idx[1:]):
        del kids[i]
    kids[idx[0]] = node
    new = replace_at(root, parent_path, replace(parent, children=tuple(kids)))
    assert new is not None
    return new


def _steps(root: Node) -> list[Step]:
    return list(steps_of(root))
