"""No import cycles between any two modules of ``server``, ``protocol`` and ``clients``.

``make lint`` runs import-linter's ``acyclic_siblings`` contract (``pyproject.toml``),
which forbids cycles between the sibling modules and packages of every package. It
does not see a cycle between a package's ``__init__`` and one of its own modules
(a package ``x`` whose ``__init__`` imports ``x.a``, which imports ``x``): such
a cycle breaks at import time just the same. This test checks every module against
every other, on the same graph (grimp, import-linter's graph library).
"""

from __future__ import annotations

import copy

import grimp
import pytest

PACKAGES = ("server", "protocol", "clients")


def module_cycles(graph: grimp.ImportGraph) -> list[tuple[str, ...]]:
    """Every import cycle of ``graph``, each once: its modules in import order, the
    first import ``a -> b`` being the one whose ``a`` sorts first (shortest loop back)."""
    cycles: set[tuple[str, ...]] = set()
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                loop = (importer, *back[:-1])
                start = loop.index(min(loop))
                cycles.add(loop[start:] + loop[:start])
    return sorted(cycles)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """The import graph of the project's packages (external packages left out)."""
    return grimp.build_graph(*PACKAGES)


def test_no_module_imports_itself_back(graph: grimp.ImportGraph) -> None:
    cycles = module_cycles(graph)
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join((*c, c[0])) for c in cycles)


def test_a_cycle_through_a_package_init_is_found(graph: grimp.ImportGraph) -> None:
    # The case acyclic_siblings leaves out: a module importing its own package, whose
    # __init__ imports it (the paigow-rules package's __init__ imports .hands).
    graph = copy.deepcopy(graph)  # the fixture is shared
    graph.add_import(importer="server.rules_cli.hands", imported="server.rules_cli")
    assert ("server.rules_cli", "server.rules_cli.hands") in module_cycles(graph)


def test_a_longer_cycle_is_reported_once_from_its_first_module() -> None:
    graph = grimp.ImportGraph()
    for module in ("c", "a", "b", "d"):
        graph.add_module(module)
    graph.add_import(importer="b", imported="c")
    graph.add_import(importer="c", imported="a")
    graph.add_import(importer="a", imported="b")
    graph.add_import(importer="a", imported="d")
    assert module_cycles(graph) == [("a", "b", "c")]
