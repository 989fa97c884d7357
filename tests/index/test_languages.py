"""Per-language: symbols (kind, parent, doc), imports (resolved + external) and references."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.store import open_store
from tests.helpers import make_repo

from .samples import ALL


@dataclass(frozen=True)
class Expect:
    #: (name, kind, parent) that must be among the symbols
    symbols: tuple[tuple[str, str, str | None], ...]
    #: (symbol name, first doc line)
    docs: tuple[tuple[str, str], ...]
    #: (importer, resolved file)
    imports: tuple[tuple[str, str], ...]
    #: (importer, spec) kept as external
    external: tuple[tuple[str, str], ...]
    #: (file, referenced name)
    refs: tuple[tuple[str, str], ...]
    #: a reference edge (referencing file, defining file)
    ref_edge: tuple[str, str]


EXPECT: dict[str, Expect] = {
    "python": Expect(
        symbols=(
            ("ShoppingCart", "class", None),
            ("add_item", "method", "ShoppingCart"),
            ("compute_total", "function", None),
            ("MAX_ITEMS", "constant", None),
        ),
        docs=(("add_item", "Add one item."), ("ShoppingCart", "Holds items before checkout.")),
        imports=(("src/shop/checkout.py", "src/shop/models.py"),),
        external=(("src/shop/checkout.py", "os"),),
        refs=(("src/shop/checkout.py", "compute_total"), ("src/shop/checkout.py", "MAX_ITEMS")),
        ref_edge=("src/shop/checkout.py", "src/shop/models.py"),
    ),
    "javascript": Expect(
        symbols=(
            ("addNumbers", "function", None),
            ("Calculator", "class", None),
            ("add", "method", "Calculator"),
            ("square", "function", None),
            ("PI_ISH", "constant", None),
        ),
        docs=(("addNumbers", "Adds two numbers."),),
        imports=(
            ("app.js", "lib/index.js"),
            ("app.js", "lib/math.js"),
            ("lib/index.js", "lib/math.js"),
        ),
        external=(("app.js", "react"),),
        refs=(("app.js", "addNumbers"), ("app.js", "Calculator")),
        ref_edge=("app.js", "lib/math.js"),
    ),
    "typescript": Expect(
        symbols=(
            ("UserRecord", "interface", None),
            ("UserId", "type", None),
            ("Role", "enum", None),
            ("Repository", "class", None),
            ("find", "method", "UserRepository"),
            ("loadUsers", "function", None),
            ("UserList", "function", None),
        ),
        docs=(("UserRecord", "A user of the system."),),
        imports=(("src/users.ts", "src/types.ts"), ("src/view.tsx", "src/users.ts")),
        external=(("src/users.ts", "node:path"),),
        refs=(("src/view.tsx", "loadUsers"), ("src/users.ts", "UserRecord")),
        ref_edge=("src/view.tsx", "src/users.ts"),
    ),
    "go": Expect(
        symbols=(
            ("Item", "struct", None),
            ("Store", "interface", None),
            ("Restock", "method", "Item"),
            ("NewItem", "function", None),
            ("MaxStock", "constant", None),
        ),
        docs=(("NewItem", "NewItem makes an item."), ("Item", "Item is one product.")),
        imports=(("main.go", "inventory/stock.go"),),
        external=(("main.go", "fmt"),),
        refs=(("main.go", "NewItem"), ("main.go", "Restock")),
        ref_edge=("main.go", "inventory/stock.go"),
    ),
    "rust": Expect(
        symbols=(
            ("Item", "struct", None),
            ("Describe", "trait", None),
            ("new", "method", "Item"),
            ("describe", "method", "Item"),
            ("Kind", "enum", None),
            ("MAX_ITEMS", "constant", None),
            ("shout", "macro", None),
            ("make_item", "function", None),
        ),
        docs=(("Item", "A product."), ("new", "Make a new item.")),
        imports=(
            ("src/lib.rs", "src/inventory.rs"),
            ("src/lib.rs", "src/util/mod.rs"),
            ("src/util/mod.rs", "src/inventory.rs"),
        ),
        external=(("src/util/mod.rs", "std::fmt"),),
        refs=(("src/lib.rs", "make_item"), ("src/util/mod.rs", "Item")),
        ref_edge=("src/lib.rs", "src/util/mod.rs"),
    ),
    "java": Expect(
        symbols=(
            ("Product", "class", None),
            ("getName", "method", "Product"),
            ("Priced", "interface", None),
            ("price", "method", "Priced"),
            ("MAX_PRICE", "constant", "Product"),
        ),
        docs=(("Product", "A product for sale."), ("getName", "The product's name.")),
        imports=(("src/main/java/com/shop/App.java", "src/main/java/com/shop/model/Product.java"),),
        external=(("src/main/java/com/shop/App.java", "java.util.List"),),
        refs=(("src/main/java/com/shop/App.java", "getName"),),
        ref_edge=("src/main/java/com/shop/App.java", "src/main/java/com/shop/model/Product.java"),
    ),
    "c": Expect(
        symbols=(
            ("stack_push", "function", None),
            ("stack_pop", "function", None),
            ("Stack", "struct", "Stack"),
            ("STACK_MAX", "constant", None),
        ),
        docs=(("stack_push", "Push one value."),),
        imports=(("src/stack.c", "include/stack.h"), ("src/main.c", "include/stack.h")),
        external=(("src/stack.c", "<stdio.h>"),),
        refs=(("src/main.c", "stack_push"), ("src/main.c", "Stack")),
        ref_edge=("src/main.c", "src/stack.c"),
    ),
    "cpp": Expect(
        symbols=(
            ("geo", "module", None),
            ("Point", "class", "geo"),
            ("distanceTo", "method", "Point"),
            ("Box", "struct", "geo"),
        ),
        docs=(("Point", "A 2-D point."),),
        imports=(("src/geometry.cpp", "src/geometry.hpp"), ("src/main.cpp", "src/geometry.hpp")),
        external=(("src/geometry.cpp", "<cmath>"),),
        refs=(("src/main.cpp", "distanceTo"),),
        ref_edge=("src/main.cpp", "src/geometry.hpp"),
    ),
    "csharp": Expect(
        symbols=(
            ("Order", "class", "Shop.Models"),
            ("AddLine", "method", "Order"),
            ("IOrderStore", "interface", "Shop.Models"),
            ("Status", "enum", "Shop.Models"),
            ("Money", "struct", "Shop.Models"),
            ("MaxLines", "constant", "Order"),
        ),
        docs=(("Order", "An order."),),
        imports=(("Program.cs", "Models/Order.cs"),),
        external=(("Program.cs", "System"),),
        refs=(("Program.cs", "AddLine"), ("Program.cs", "Order")),
        ref_edge=("Program.cs", "Models/Order.cs"),
    ),
    "ruby": Expect(
        symbols=(
            ("Inventory", "module", None),
            ("Item", "class", "Inventory"),
            ("restock", "method", "Item"),
            ("build", "method", "Item"),
            ("MAX_STOCK", "constant", "Inventory"),
        ),
        docs=(("Item", "One product."), ("Inventory", "Tracks stock.")),
        imports=(("app.rb", "lib/inventory.rb"),),
        external=(("app.rb", "json"),),
        refs=(("app.rb", "restock"), ("app.rb", "Item")),
        ref_edge=("app.rb", "lib/inventory.rb"),
    ),
    "php": Expect(
        symbols=(
            ("Invoice", "class", None),
            ("total", "method", "Invoice"),
            ("Payable", "interface", None),
            ("make_invoice", "function", None),
            ("MAX_LINES", "constant", "Invoice"),
        ),
        docs=(("Invoice", "An invoice."),),
        imports=(("src/main.php", "src/Models/Invoice.php"),),
        external=(),
        refs=(("src/main.php", "make_invoice"), ("src/main.php", "Invoice")),
        ref_edge=("src/main.php", "src/Models/Invoice.php"),
    ),
    "kotlin": Expect(
        symbols=(
            ("Cart", "class", None),
            ("addItem", "method", "Cart"),
            ("Priced", "interface", None),
            ("Registry", "class", None),
            ("lookup", "method", "Registry"),
            ("emptyCart", "function", None),
            ("MAX_ITEMS", "constant", None),
        ),
        docs=(("Cart", "A shopping cart."),),
        imports=(("src/main/kotlin/com/shop/App.kt", "src/main/kotlin/com/shop/model/Cart.kt"),),
        external=(("src/main/kotlin/com/shop/App.kt", "kotlin.math.max"),),
        refs=(("src/main/kotlin/com/shop/App.kt", "emptyCart"),),
        ref_edge=("src/main/kotlin/com/shop/App.kt", "src/main/kotlin/com/shop/model/Cart.kt"),
    ),
}


@pytest.mark.parametrize("language", sorted(EXPECT))
def test_language_sample_is_indexed(tmp_path: Path, language: str) -> None:
    repo = make_repo(tmp_path / language, ALL[language])
    stats = index_workspace(repo)
    assert stats.parse_errors == ()
    exp = EXPECT[language]
    with open_store(repo, readonly=True) as store:
        symbols = store.symbols()
        found = {(s.name, s.kind, s.parent) for s in symbols}
        missing = [s for s in exp.symbols if s not in found]
        assert not missing, f"missing {missing}; found {sorted(found, key=str)}"
        for name, doc in exp.docs:
            assert doc in {s.doc for s in symbols if s.name == name}, (name, doc)
        assert symbols
        for s in symbols:
            lines = (repo / s.path).read_text(encoding="utf-8").count("\n") + 1
            assert 0 < s.start_line <= s.end_line <= lines, s
            assert s.signature, s
        imports = store.imports()
        resolved = {(i.path, i.resolved) for i in imports if i.resolved}
        assert set(exp.imports) <= resolved, resolved
        external = {(i.path, i.spec) for i in imports if i.resolved is None}
        assert set(exp.external) <= external, external
        refs = {(r.path, r.name) for r in store.references()}
        assert set(exp.refs) <= refs
        ref_edges = {(a, b) for a, b, _ in store.edges("ref")}
        assert exp.ref_edge in ref_edges, ref_edges
        import_edges = {(a, b) for a, b, _ in store.edges("import")}
        assert set(exp.imports) <= import_edges
        # every chunk is non-empty, counted and hashed; FTS rows match chunks
        counts = store.counts()
        assert counts["chunks"] == counts["chunks_fts"] > 0
        for f in store.files():
            for c in store.chunks_for(f.path):
                assert c.text.strip() and c.tokens > 0 and len(c.content_hash) == 32


def test_every_language_has_a_query_that_compiles() -> None:
    from codelibrarian.index.languages import LANGUAGES, load_query

    for lang in LANGUAGES:
        parser, query = load_query(lang.name)
        assert parser is not None
        assert query.pattern_count > 8, lang.name


def test_queries_ship_inside_the_package() -> None:
    from importlib import resources

    names = {p.name for p in resources.files("codelibrarian.index").joinpath("queries").iterdir()}
    assert {"python.scm", "typescript.scm", "kotlin.scm", "csharp.scm"} <= names


def test_shared_query_parts_are_spliced_in_place() -> None:
    from importlib import resources

    from codelibrarian.index.languages import query_text

    folder = resources.files("codelibrarian.index").joinpath("queries")
    shared = folder.joinpath("_ecma_toplevel.scm").read_text(encoding="utf-8").rstrip("\n")
    for name in ("javascript", "typescript"):
        text = query_text(name)
        assert not any(line.startswith("; include ") for line in text.split("\n"))
        assert text.count(shared) == 1
        # in place: the shared definitions come before the file's own imports
        assert text.index(shared) < text.index("(import_statement")
