"""The plan of ``docs/architecture.md``, checked: one test per rule of its "Rules" section (and
that browser tests wait for states, not for time). Every check reads the code's syntax tree and
fails naming each offence as ``path:line: what``.

The tables at the top are the plan's lists; when the plan changes, change them (and the page).
The ``test_checker_*`` tests at the end run the checks on small made-up modules, so a rule that
passes does so because the code keeps it, not because its check cannot see.

Why this module is long: each rule's check sits beside its test, and the checks' own tests follow,
so a rule is read, changed or dropped in one file.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import types
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from fnmatch import fnmatch
from functools import cache
from itertools import pairwise
from pathlib import Path

from . import APP_ROOT


@dataclass(frozen=True)
class Layer:
    """What one top-level part of the project may import: the project's parts it may use
    (its own included, when it may) and the libraries it never imports."""

    may_import: frozenset[str]
    never: frozenset[str] = frozenset()


def _layer(may_import: Iterable[str], never: Iterable[str] = ()) -> Layer:
    return Layer(frozenset(may_import), frozenset(never))


# ---- The plan (docs/architecture.md, "Rules") -------------------------------------------------

LAYERS: dict[str, Layer] = {
    # part            the project's parts it may import             libraries it never imports
    "graphrag_core": _layer({"graphrag_core"}, {"streamlit", "plotly", "pandas", "argparse"}),
    "graphrag_cli": _layer({"graphrag_cli", "graphrag_core"}, {"streamlit", "plotly"}),
    "graphrag_app": _layer({"graphrag_app", "graphrag_core"}),
    "pages": _layer({"graphrag_app", "graphrag_core"}),  # not "pages": a page never imports another
    "app": _layer({"graphrag_app", "graphrag_core"}),  # app.py
}
"""Rule 1. The project's parts: a package folder each, or ``app.py`` for ``app``. Every rule
below reads the modules of these parts (not ``tests/``, ``benchmarks/`` or ``scripts/``)."""

LAYER_EXCEPTIONS: dict[str, frozenset[str]] = {
    "graphrag_core/__main__.py": frozenset({"graphrag_cli"}),  # python -m graphrag_core hands over
    "graphrag_core/samples/__main__.py": frozenset({"argparse"}),  # the sample builder's own command
    "graphrag_core/index/schema.py": frozenset({"argparse"}),  # python -m graphrag_core.index.schema writes the schema
}
"""Rule 1. A module and what it may import beyond its own part's rule: project parts, or
libraries its part never imports."""

PURE_APP_MODULES = (
    "graphrag_app/*/charts.py",
    "graphrag_app/explore/relevance.py",
    "graphrag_app/compare/settings_table.py",
    "graphrag_app/panels/chart_parts.py",
    "graphrag_app/text.py",
    "graphrag_app/urls.py",
)
"""Rule 3. Modules (glob patterns) that import no ``streamlit``, not even through another module."""

VENDOR_SDKS: dict[str, tuple[str, ...]] = {
    "openai": ("graphrag_core/llm/openai_model.py", "graphrag_core/llm/openai_embedding*.py"),
}
"""Rule 4. Each vendor SDK and the adapters (glob patterns) that alone may import it."""

ENVIRONMENT = frozenset({"os.environ", "os.environb", "os.getenv", "os.getenvb", "dotenv.load_dotenv"})
ENVIRONMENT_READERS = ("graphrag_app/settings.py", "graphrag_cli/context.py", "graphrag_core/samples/__main__.py")
"""Rule 5. The names that read the environment, and the modules that alone may use them (the
sample builder's own command among them). The engine's pydantic-settings class reads only the
mapping it is given (``tests/test_openai_model.py`` checks it)."""

EVENT_LOOP_STARTERS = frozenset({"asyncio.run", "asyncio.Runner", "asyncio.new_event_loop", "asyncio.get_event_loop"})
EVENT_LOOP_METHODS = frozenset({"run_until_complete", "run_forever"})
EVENT_LOOP_OWNERS = ("graphrag_cli/loop.py", "graphrag_app/jobs.py", "graphrag_core/samples/__main__.py")
"""Rule 6. What starts or runs an event loop (names, and methods of a loop), and the modules
that alone may."""

PUBLIC_STREAMLIT = frozenset(
    {"streamlit", "streamlit.delta_generator", "streamlit.column_config", "streamlit.components.v1", "streamlit.connections", "streamlit.errors"}
)
"""Rule 7. The Streamlit modules a module may import or reach (``streamlit.delta_generator``
for the type of a container); any other, ``streamlit.runtime`` and ``streamlit.web`` among them,
is an internal. Nothing may assign to an attribute of a Streamlit module or class."""

STREAMLIT_FILE_NAMES = frozenset({"streamlit.__file__", "streamlit.__path__", "streamlit.__spec__"})
PACKAGE_FILE_READERS = frozenset(
    {"importlib.resources.files", "importlib.resources.path", "importlib.resources.read_text", "importlib.util.find_spec", "importlib.metadata.files", "pkgutil.get_data"}
)
"""Rule 7. What reads a package's installed files: the module's own file names, and the readers
that, handed ``"streamlit"``, find its folder."""

LONG_MODULE_LINES = 500
LONG_MODULE_REASON = "Why this module is long:"
"""Rule 8. A module over this many lines begins its docstring's last paragraph with the reason."""
LONG_FUNCTION_LINES = 100
FUNCTION_PARTS = ("graphrag_core", "graphrag_cli", "graphrag_app", "pages", "app")
"""Rule 8. No function (or method) of these parts is longer than this, counted from its ``def``
to its last line."""
ENGINE_MODULE_LINES = 600
ENGINE_PARTS = ("graphrag_core",)
"""Rule 8. No module of the engine is longer than this, whatever its reason."""

PAGE_PACKAGES = ("explore", "compare", "sweeps", "evaluate", "provenance", "index_browser")
"""Rule 10. The app's page packages (``graphrag_app/<page>/``); every other module of the app is
the shared layer."""
MAX_PAGE_REACH = 22
"""Rule 10. The most app modules a page (``pages/X.py``) reaches through its imports."""
MAX_PLAIN_APP_MODULES = 12
"""Rule 10. The most plain modules directly in ``graphrag_app/`` (its ``__init__`` aside)."""

SESSION_STATE = "streamlit.session_state"
MAX_SESSION_STATE_MENTIONS = 40
MAX_SESSION_STATE_MODULES = 3
"""Rule 11. How often, and in how many modules, the app may name ``st.session_state``."""

MAX_FUNCTION_LINES = 100
MAX_APP_MODULE_LINES = 600
"""Rule 12. The longest function or method of the app and its pages, and the longest app module."""
APP_PARTS = ("graphrag_app", "pages", "app")

STATUS_MODULE = "graphrag_core/status.py"
STATUS_NAMES = ("status", "outcome", "error_type")
"""Rule 9. Where statuses have their words; a name containing one of these holds a status."""

LEVELS_MODULE = "graphrag_core/levels.py"
LEVEL_WORDS = ("leaf", "dynamic")
"""Rule 9. Where levels are parsed and labelled, and the words of the levels that are not numbers."""

FIXED_WAITS = frozenset({"time.sleep", "asyncio.sleep"})
FIXED_WAIT_METHODS = frozenset({"wait_for_timeout"})
BROWSER_SUPPORT = ("tests/browser_support.py", "tests/__init__.py")
POLLING_PAUSES = frozenset({("tests/__init__.py", "wait_until")})
"""Browser tests wait for the state they need: no fixed sleep in a browser test module (one whose
name starts with ``test_browser``, or that imports Playwright or ``browser_support``) or in the
modules they share, except the polling pause of each (module, function) listed."""


# ---- Reading modules ------------------------------------------------------------------------


@dataclass(frozen=True)
class Module:
    name: str
    """Dotted: ``graphrag_core.llm.base``, ``graphrag_core`` for its ``__init__``, ``pages.explore``, ``app``."""
    path: str
    """Relative to the project's folder, with ``/``."""
    is_package: bool
    tree: ast.Module
    lines: int


def module_from_source(path: str, source: str) -> Module:
    """The module at ``path`` (relative, with ``/``) whose text is ``source``."""
    parts = path.removesuffix(".py").split("/")
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return Module(".".join(parts), path, is_package, ast.parse(source, filename=path), len(source.splitlines()))


@cache
def project_modules() -> dict[str, Module]:
    """Every module of the parts :data:`LAYERS` names, by dotted name."""
    paths: list[Path] = []
    for part in LAYERS:
        if (APP_ROOT / part).is_dir():
            paths += sorted((APP_ROOT / part).rglob("*.py"))
        elif (APP_ROOT / f"{part}.py").is_file():
            paths.append(APP_ROOT / f"{part}.py")
    modules = (module_from_source(p.relative_to(APP_ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in paths)
    return {m.name: m for m in modules}


@cache
def _test_modules() -> tuple[Module, ...]:
    paths = sorted((APP_ROOT / "tests").glob("*.py"))
    return tuple(module_from_source(p.relative_to(APP_ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in paths)


def part_of(module: Module) -> str:
    return module.name.split(".")[0]


def matches(module: Module, patterns: Iterable[str]) -> bool:
    return any(fnmatch(module.path, pattern) for pattern in patterns)


def where(module: Module, node: ast.AST | int) -> str:
    return f"{module.path}:{node if isinstance(node, int) else getattr(node, 'lineno', 0)}"


@dataclass(frozen=True)
class Import:
    line: int
    module: str
    """The absolute dotted name of the module imported, or imported from."""
    names: tuple[str, ...] = ()
    """For ``from module import a, b``: ``("a", "b")``; empty for ``import module``."""


def _package_of(module: Module) -> str:
    return module.name if module.is_package else module.name.rpartition(".")[0]


def imports_of(module: Module) -> list[Import]:
    """Every import of ``module``, wherever it is (top, function, ``TYPE_CHECKING``), including
    ``importlib.import_module`` with a literal name."""
    found: list[Import] = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            found += [Import(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package_of(module).split(".")
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([node.module] if node.module else [])])
            found.append(Import(node.lineno, base, tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.Call) and _called_name(node.func) in ("import_module", "__import__") and node.args:
            name = node.args[0]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                package = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "package"), None)
                anchor = {"__name__": module.name, "__package__": _package_of(module)}.get(getattr(package, "id", ""), getattr(package, "value", None))
                if not name.value.startswith(".") or isinstance(anchor, str):
                    found.append(Import(node.lineno, importlib.util.resolve_name(name.value, anchor)))
    return found


def _called_name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def edges_of(module: Module, modules: Mapping[str, Module]) -> Iterator[tuple[Import, str]]:
    """The project's modules ``module`` imports, each with its import: ``import a.b.c`` reaches
    ``a.b.c`` only (not the packages on the way); ``from p import n`` reaches ``p.n`` when that is a
    module, else ``p`` (its ``__init__``)."""
    for imp in imports_of(module):
        if not imp.names:
            if imp.module in modules:
                yield imp, imp.module
            continue
        for name in imp.names:
            if f"{imp.module}.{name}" in modules:
                yield imp, f"{imp.module}.{name}"
            elif imp.module in modules:
                yield imp, imp.module


def aliases(module: Module) -> dict[str, str]:
    """What each name bound by an absolute import stands for: ``{"st": "streamlit", "run":
    "asyncio.run", "os": "os"}`` (module-wide; a rebinding of the name is not followed)."""
    bound: dict[str, str] = {}
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def qualified(node: ast.AST, bound: Mapping[str, str]) -> str | None:
    """``st.runtime.exists`` -> ``"streamlit.runtime.exists"`` when ``st`` is bound by an import."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        base = qualified(node.value, bound)
        return f"{base}.{node.attr}" if base else None
    return None


def references(module: Module, names: Iterable[str]) -> list[tuple[int, str]]:
    """Each (line, name) where ``module`` imports or uses one of the dotted ``names``."""
    wanted = set(names)
    bound = aliases(module)
    found = {(imp.line, f"{imp.module}.{n}") for imp in imports_of(module) for n in imp.names if f"{imp.module}.{n}" in wanted}
    for node in ast.walk(module.tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and (name := qualified(node, bound)) in wanted:
            found.add((node.lineno, name))
    return sorted(found)


def _place(offence: str) -> tuple[str, int, str]:
    path, _, rest = offence.partition(":")
    line = rest.partition(":")[0]
    return path, int(line) if line.isdigit() else 0, offence


def report(offences: Iterable[str], rule: str) -> None:
    """Fail listing ``offences`` (``path:line: what``, in file and line order) under ``rule``."""
    listed = sorted(set(offences), key=_place)
    assert not listed, f"{rule}: {len(listed)} offence(s)\n" + "\n".join(listed)


# ---- Rule 1: layers -------------------------------------------------------------------------


def layer_offences(modules: Mapping[str, Module]) -> list[str]:
    offences = []
    for module in modules.values():
        part = part_of(module)
        excepted = LAYER_EXCEPTIONS.get(module.path, frozenset())
        allowed = LAYERS[part].may_import | excepted
        for imp in imports_of(module):
            root = imp.module.split(".")[0]
            if root in LAYERS and root not in allowed:
                offences.append(f"{where(module, imp.line)}: imports {imp.module}; {part} may import only {', '.join(sorted(allowed))}")
            elif root in LAYERS[part].never and root not in excepted:
                offences.append(f"{where(module, imp.line)}: imports {imp.module}; {part} never imports {', '.join(sorted(LAYERS[part].never))}")
    return offences


def test_rule_1_each_part_imports_only_the_layers_below_it() -> None:
    report(layer_offences(project_modules()), "Rule 1 (layers)")


def test_rule_1_python_m_graphrag_core_hands_over_to_the_command_line() -> None:
    main = project_modules()["graphrag_core.__main__"]
    assert "graphrag_cli" in {imp.module.split(".")[0] for imp in imports_of(main)}, f"{main.path} does not import graphrag_cli"


# ---- Rule 2: no import cycles; import where a name is defined --------------------------------


def import_graph(modules: Mapping[str, Module]) -> dict[str, dict[str, int]]:
    """Module -> the project's modules it imports -> the line of its first such import."""
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for name, module in modules.items():
        for imp, target in edges_of(module, modules):
            graph[name].setdefault(target, imp.line)
    return graph


def strongly_connected(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """Tarjan's components of ``graph``, each sorted; only those that hold a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def shortest_cycle(graph: Mapping[str, Mapping[str, int]], start: str, within: set[str]) -> list[str]:
    """The shortest path from ``start`` back to itself inside ``within``: ``[start, ..., start]``."""
    parent: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in sorted(graph[node]):
            if target == start:
                path = [node]
                while (before := parent[path[-1]]) is not None:
                    path.append(before)
                return [*reversed(path), start]
            if target in within and target not in parent:
                parent[target] = node
                queue.append(target)
    return []


def cycle_offences(modules: Mapping[str, Module]) -> list[str]:
    graph = import_graph(modules)
    offences = []
    for component in strongly_connected(graph):
        members = set(component)
        cycle = shortest_cycle(graph, component[0], members)
        steps = [f"{where(modules[a], graph[a][b])}: {a} imports {b}" for a, b in pairwise(cycle)]
        inside = [f"{where(modules[a], line)}: {a} imports {b}" for a in component for b, line in sorted(graph[a].items()) if b in members]
        offences.append(
            f"a cycle through {len(component)} module(s): {', '.join(component)}\n  shortest: "
            + "\n            ".join(steps)
            + f"\n  every import inside it ({len(inside)}):\n    "
            + "\n    ".join(inside)
        )
    return offences


def test_rule_2_no_import_cycles_counting_every_import() -> None:
    report(cycle_offences(project_modules()), "Rule 2 (no import cycles)")


def init_import_offences(modules: Mapping[str, Module]) -> list[str]:
    offences = []
    for module in modules.values():
        parts = module.name.split(".")
        enclosing = {".".join(parts[:i]) for i in range(1, len(parts))}
        for imp in imports_of(module):
            if imp.module not in enclosing or imp.module not in modules:
                continue
            names = [n for n in imp.names if f"{imp.module}.{n}" not in modules] if imp.names else ["the package"]
            if names:
                offences.append(f"{where(module, imp.line)}: imports {', '.join(names)} from {modules[imp.module].path}; import from the module that defines it")
    return offences


def test_rule_2_a_module_imports_a_name_from_its_module_not_from_its_packages_init() -> None:
    report(init_import_offences(project_modules()), "Rule 2 (import from the defining module)")


# ---- Rule 3: pure parts stay pure -----------------------------------------------------------


def impurity_offences(modules: Mapping[str, Module], library: str = "streamlit") -> list[str]:
    """Each pure module that imports ``library``, itself or through the project's modules it
    imports (then with the chain, from the pure module's import of the first of them)."""
    graph = import_graph(modules)
    offences = []
    for module in modules.values():
        if not matches(module, PURE_APP_MODULES):
            continue
        chain_to: dict[str, list[str]] = {module.name: [module.name]}
        queue = deque([module.name])
        while queue:
            current = modules[queue.popleft()]
            direct = [imp for imp in imports_of(current) if imp.module.split(".")[0] == library]
            chain = chain_to[current.name]
            if direct and current is module:
                offences.append(f"{where(module, direct[0].line)}: imports {library}")
            elif direct:
                offences.append(f"{where(module, graph[module.name][chain[1]])}: imports {library} through {' -> '.join(chain)} ({where(current, direct[0].line)})")
            for target in graph[current.name]:
                if target not in chain_to:
                    chain_to[target] = [*chain, target]
                    queue.append(target)
    return offences


def test_rule_3_pure_app_modules_import_no_streamlit() -> None:
    report(impurity_offences(project_modules()), "Rule 3 (pure parts stay pure)")


# ---- Rule 4: vendor SDKs in their adapters --------------------------------------------------


def vendor_offences(modules: Mapping[str, Module]) -> list[str]:
    return [
        f"{where(module, imp.line)}: imports {imp.module}; only {', '.join(VENDOR_SDKS[root])} may"
        for module in modules.values()
        for imp in imports_of(module)
        if (root := imp.module.split(".")[0]) in VENDOR_SDKS and not matches(module, VENDOR_SDKS[root])
    ]


def test_rule_4_vendor_sdks_only_in_their_adapters() -> None:
    report(vendor_offences(project_modules()), "Rule 4 (vendor SDKs in their adapters)")


# ---- Rule 5: one reader of the environment per front end ------------------------------------


def environment_offences(modules: Mapping[str, Module]) -> list[str]:
    return [
        f"{where(module, line)}: uses {name}, which reads the environment; only {', '.join(ENVIRONMENT_READERS)} may"
        for module in modules.values()
        if not matches(module, ENVIRONMENT_READERS)
        for line, name in references(module, ENVIRONMENT)
    ]


def test_rule_5_only_the_settings_modules_read_the_environment() -> None:
    report(environment_offences(project_modules()), "Rule 5 (one reader of the environment per front end)")


# ---- Rule 6: event loops in two places ------------------------------------------------------


def event_loop_offences(modules: Mapping[str, Module]) -> list[str]:
    offences = []
    for module in modules.values():
        if matches(module, EVENT_LOOP_OWNERS):
            continue
        offences += [f"{where(module, line)}: uses {name}" for line, name in references(module, EVENT_LOOP_STARTERS)]
        offences += [
            f"{where(module, node)}: calls .{node.func.attr}()"
            for node in ast.walk(module.tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EVENT_LOOP_METHODS
        ]
    return [f"{o}; only {', '.join(EVENT_LOOP_OWNERS)} start or run event loops" for o in offences]


def test_rule_6_event_loops_only_in_the_loop_modules() -> None:
    report(event_loop_offences(project_modules()), "Rule 6 (event loops in two places)")


# ---- Rule 7: no Streamlit internals ---------------------------------------------------------


@cache
def streamlit_module_of(dotted: str) -> str:
    """The deepest module along ``dotted`` (``streamlit.runtime.exists`` -> ``streamlit.runtime``),
    read from the installed Streamlit: an attribute that is not a module (``st.navigation``, a
    function) ends the walk."""
    parts = dotted.split(".")
    name, obj = parts[0], importlib.import_module(parts[0])
    for part in parts[1:]:
        attribute = getattr(obj, part, None)
        if attribute is None:
            try:
                attribute = importlib.import_module(f"{name}.{part}")
            except ImportError:
                break
        if not isinstance(attribute, types.ModuleType):
            break
        name, obj = f"{name}.{part}", attribute
    return name


def _patchable(dotted: str) -> bool:
    """Whether ``dotted`` names a module or a class (what a patch assigns to), as the installed
    Streamlit says; a name that does not resolve counts as one."""
    module = streamlit_module_of(dotted)
    obj: object = importlib.import_module(module)
    rest = dotted[len(module) :].lstrip(".")
    for part in rest.split(".") if rest else []:
        obj = getattr(obj, part, None)
        if obj is None:
            return True
    return isinstance(obj, (types.ModuleType, type))


def streamlit_internal_offences(modules: Mapping[str, Module]) -> list[str]:
    offences = set()
    for module in modules.values():
        for imp in imports_of(module):
            if imp.module.split(".")[0] != "streamlit":
                continue
            for dotted in [f"{imp.module}.{n}" for n in imp.names] or [imp.module]:
                if (reached := streamlit_module_of(dotted)) not in PUBLIC_STREAMLIT:
                    offences.add(f"{where(module, imp.line)}: imports {reached}, an internal of Streamlit")
        bound = aliases(module)
        for node in ast.walk(module.tree):
            dotted = (qualified(node, bound) or "") if isinstance(node, ast.Attribute) else ""
            if dotted.startswith("streamlit.") and (reached := streamlit_module_of(dotted)) not in PUBLIC_STREAMLIT:
                offences.add(f"{where(module, node)}: uses {reached}, an internal of Streamlit")
            patched: list[tuple[ast.expr, str]] = []
            if isinstance(node, (ast.Assign, ast.Delete)):
                patched = [(t.value, t.attr) for t in node.targets if isinstance(t, ast.Attribute)]
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Attribute):
                patched = [(node.target.value, node.target.attr)]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") and len(node.args) > 1:
                patched = [(node.args[0], ast.unparse(node.args[1]))]
            for owner, attribute in patched:
                if (base := qualified(owner, bound) or "").split(".")[0] == "streamlit" and _patchable(base):
                    offences.add(f"{where(module, node)}: patches {base}.{attribute}")
        offences.update(streamlit_file_offences(module, bound))
    return sorted(offences)


def streamlit_file_offences(module: Module, bound: Mapping[str, str]) -> list[str]:
    """Each place ``module`` reads Streamlit's installed files: its file names
    (``st.__file__``, ``__path__``, ``__spec__``), or a package-file reader handed ``"streamlit"``."""
    offences = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Attribute) and qualified(node, bound) in STREAMLIT_FILE_NAMES:
            offences.append(f"{where(module, node)}: reads {qualified(node, bound)}, Streamlit's installed files")
        elif isinstance(node, ast.Call) and qualified(node.func, bound) in PACKAGE_FILE_READERS:
            named = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if any(name.split(".")[0] == "streamlit" for name in named):
                offences.append(f"{where(module, node)}: {qualified(node.func, bound)}({named[0]!r}) reads Streamlit's installed files")
    return offences


def test_rule_7_no_streamlit_internals() -> None:
    report(streamlit_internal_offences(project_modules()), "Rule 7 (no Streamlit internals)")


# ---- Rule 8: small rooms --------------------------------------------------------------------


def long_module_offences(modules: Mapping[str, Module]) -> list[str]:
    offences = []
    for module in modules.values():
        if module.lines <= LONG_MODULE_LINES:
            continue
        paragraphs = [p.strip() for p in (ast.get_docstring(module.tree) or "").split("\n\n") if p.strip()]
        reason = paragraphs[-1] if paragraphs else ""
        if not reason.startswith(LONG_MODULE_REASON) or not reason.removeprefix(LONG_MODULE_REASON).strip():
            offences.append(f"{where(module, 1)}: {module.lines} lines, and its docstring's last paragraph does not begin with {LONG_MODULE_REASON!r} and say why")
    return offences


def test_rule_8_a_long_module_says_why_it_is_long() -> None:
    report(long_module_offences(project_modules()), "Rule 8 (small rooms)")


def long_function_offences(modules: Mapping[str, Module]) -> list[str]:
    return [
        f"{where(module, node)}: {node.name} is {length} lines, over {LONG_FUNCTION_LINES}; split it where its algorithm has seams"
        for module in modules.values()
        if part_of(module) in FUNCTION_PARTS
        for node in ast.walk(module.tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (length := (node.end_lineno or node.lineno) - node.lineno + 1) > LONG_FUNCTION_LINES
    ]


def long_engine_module_offences(modules: Mapping[str, Module]) -> list[str]:
    return [
        f"{where(module, 1)}: {module.lines} lines, over {ENGINE_MODULE_LINES}; split it into modules named by their jobs"
        for module in modules.values()
        if part_of(module) in ENGINE_PARTS and module.lines > ENGINE_MODULE_LINES
    ]


def test_rule_8_no_function_is_over_100_lines_and_no_engine_module_over_600() -> None:
    report(long_function_offences(project_modules()) + long_engine_module_offences(project_modules()), "Rule 8 (small rooms)")


# ---- Rule 9: one spelling per state ---------------------------------------------------------


def _key_name(node: ast.AST) -> str:
    """The name an expression reads a value by: ``run.status`` -> ``status``, ``row["status"]``
    -> ``status``, ``row.get("error_type")`` -> ``error_type``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    if isinstance(node, ast.Call) and _called_name(node.func) == "get" and node.args and isinstance(node.args[0], ast.Constant):
        return str(node.args[0].value)
    return ""


def _strings(node: ast.AST) -> list[str]:
    """The string literals ``node`` is or holds (``"x"``, ``("x", "y")``, ``{"x"}``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for element in node.elts for s in _strings(element)]
    return []


def literal_comparisons(module: Module) -> Iterator[tuple[int, ast.AST, list[str]]]:
    """Each (line, subject, string literals) where ``module`` compares something with string
    literals: ``==``, ``!=``, ``in``, ``not in``, ``is`` and ``match``/``case``."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for a, b in pairwise(operands):
                for subject, other in ((a, b), (b, a)):
                    if (words := _strings(other)) and not _strings(subject):
                        yield node.lineno, subject, words
        elif isinstance(node, ast.Match):
            for case in node.cases:
                for pattern in ast.walk(case.pattern):
                    if isinstance(pattern, ast.MatchValue) and (words := _strings(pattern.value)):
                        yield pattern.lineno, node.subject, words


def exception_names(modules: Mapping[str, Module]) -> set[str]:
    """The names of the exception classes the project defines (and Python's own)."""
    names = {name for name, obj in vars(builtins).items() if isinstance(obj, type) and issubclass(obj, BaseException)}
    classes = [node for m in modules.values() for node in ast.walk(m.tree) if isinstance(node, ast.ClassDef)]
    grown = True
    while grown:
        before = len(names)
        names |= {c.name for c in classes if any(_called_name(base) in names for base in c.bases)}
        grown = len(names) > before
    return names - {name for name in vars(builtins)}


def _not_code(tree: ast.Module) -> set[int]:
    """The ids of string nodes that are no value the code compares or passes on: docstrings and
    other bare strings, annotations, and ``__all__``."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        parts: list[ast.AST | None] = []
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            parts = [node.value]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts = [node.returns, *(a.annotation for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg] if a)]
        elif isinstance(node, ast.AnnAssign):
            parts = [node.annotation]
        elif isinstance(node, (ast.Assign, ast.AugAssign)) and "__all__" in {getattr(t, "id", "") for t in getattr(node, "targets", [getattr(node, "target", None)])}:
            parts = [node.value]
        skipped |= {id(inner) for part in parts if part is not None for inner in ast.walk(part)}
    return skipped


def status_offences(modules: Mapping[str, Module]) -> list[str]:
    errors = exception_names(modules)
    offences = []
    for module in modules.values():
        if module.path == STATUS_MODULE:
            continue
        for line, subject, words in literal_comparisons(module):
            if any(word in _key_name(subject).lower() for word in STATUS_NAMES):
                offences.append(f"{where(module, line)}: compares {ast.unparse(subject)} with the string(s) {', '.join(map(repr, words))}; compare with the members of the status's type")
        skipped = _not_code(module.tree)
        offences += [
            f"{where(module, node)}: names the error type {node.value!r} by its string; use the class (isinstance, or {node.value}.__name__)"
            for node in ast.walk(module.tree)
            if isinstance(node, ast.Constant) and node.value in errors and id(node) not in skipped
        ]
    return offences


def test_rule_9_no_status_or_error_type_is_compared_as_a_string() -> None:
    report(status_offences(project_modules()), "Rule 9 (one spelling per state: statuses)")


def level_offences(modules: Mapping[str, Module]) -> list[str]:
    offences = []
    for module in modules.values():
        if module.path == LEVELS_MODULE:
            continue
        for line, subject, words in literal_comparisons(module):
            levels = [w for w in words if w in LEVEL_WORDS]
            if LEVEL_WORDS[0] in words or (levels and "level" in _key_name(subject).lower()):
                offences.append(f"{where(module, line)}: compares {ast.unparse(subject)} with {', '.join(map(repr, levels))}; parse a level with graphrag_core.levels")
    return offences


def test_rule_9_levels_are_parsed_only_in_levels_py() -> None:
    report(level_offences(project_modules()), "Rule 9 (one spelling per state: levels)")


# ---- Rule 10: a room per page ---------------------------------------------------------------


def page_package_of(module: Module) -> str | None:
    """The page package ``module`` belongs to (``"explore"`` for ``graphrag_app.explore.views``), or None."""
    parts = module.name.split(".")
    return parts[1] if parts[0] == "graphrag_app" and len(parts) > 1 and parts[1] in PAGE_PACKAGES else None


def page_package_offences(modules: Mapping[str, Module]) -> list[str]:
    """Each import of a page package by another page package, or by the shared layer."""
    offences = []
    for module in modules.values():
        if part_of(module) != "graphrag_app":
            continue
        own = page_package_of(module)
        for imp, target in edges_of(module, modules):
            theirs = page_package_of(modules[target])
            if theirs is not None and theirs != own:
                who = f"the {own} page package" if own else "the shared layer"
                offences.append(f"{where(module, imp.line)}: {who} imports {target}; a page package is imported by its page only")
    return offences


def test_rule_10_no_page_package_imports_another() -> None:
    report(page_package_offences(project_modules()), "Rule 10 (a room per page: page packages)")


def reached(graph: Mapping[str, Mapping[str, int]], start: str) -> set[str]:
    """Every module ``start`` reaches through its imports (itself left out)."""
    seen: set[str] = set()
    queue = deque([start])
    while queue:
        for target in graph[queue.popleft()]:
            if target not in seen and target != start:
                seen.add(target)
                queue.append(target)
    return seen


def page_reach_offences(modules: Mapping[str, Module], limit: int = MAX_PAGE_REACH) -> list[str]:
    """Each page (``pages/X.py``) that reaches more than ``limit`` of the app's modules."""
    graph = import_graph(modules)
    offences = []
    for module in modules.values():
        if part_of(module) != "pages":
            continue
        app = sorted(name for name in reached(graph, module.name) if name.split(".")[0] == "graphrag_app")
        if len(app) > limit:
            offences.append(f"{where(module, 1)}: reaches {len(app)} app modules (at most {limit}): {', '.join(app)}")
    return offences


def test_rule_10_each_page_reaches_at_most_22_app_modules() -> None:
    report(page_reach_offences(project_modules()), "Rule 10 (a room per page: what a page reaches)")


def plain_module_offences(modules: Mapping[str, Module], limit: int = MAX_PLAIN_APP_MODULES) -> list[str]:
    """The plain modules directly in ``graphrag_app/``, when there are more than ``limit``."""
    plain = sorted(m.path for m in modules.values() if m.path.count("/") == 1 and m.path.startswith("graphrag_app/") and not m.is_package)
    return [f"graphrag_app/: {len(plain)} plain modules (at most {limit}): {', '.join(plain)}"] if len(plain) > limit else []


def test_rule_10_at_most_12_plain_modules_in_graphrag_app() -> None:
    report(plain_module_offences(project_modules()), "Rule 10 (a room per page: the shared layer)")


# ---- Rule 11: session state behind typed accessors ------------------------------------------


def session_state_offences(modules: Mapping[str, Module], *, mentions: int = MAX_SESSION_STATE_MENTIONS, at_most: int = MAX_SESSION_STATE_MODULES) -> list[str]:
    """Every mention of ``st.session_state`` in the app (its imports included), when there are more
    than ``mentions``, or in more than ``at_most`` modules."""
    found = {
        module.path: lines
        for module in modules.values()
        if part_of(module) in APP_PARTS and (lines := [line for line, _name in references(module, [SESSION_STATE])])
    }
    total = sum(len(lines) for lines in found.values())
    if total <= mentions and len(found) <= at_most:
        return []
    listed = "; ".join(f"{path} ({len(lines)})" for path, lines in sorted(found.items()))
    return [f"{path}:{lines[0]}: {total} mentions of st.session_state in {len(found)} modules (at most {mentions} in {at_most}): {listed}" for path, lines in sorted(found.items())]


def test_rule_11_session_state_is_named_at_most_40_times_in_at_most_3_modules() -> None:
    report(session_state_offences(project_modules()), "Rule 11 (session state behind typed accessors)")


# ---- Rule 12: short functions, bounded modules ----------------------------------------------


def long_app_function_offences(modules: Mapping[str, Module], limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Each function or method of the app and its pages over ``limit`` lines (decorators included)."""
    offences = []
    for module in modules.values():
        if part_of(module) not in APP_PARTS:
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                if (length := (node.end_lineno or start) - start + 1) > limit:
                    offences.append(f"{where(module, start)}: {node.name} is {length} lines (at most {limit})")
    return offences


def test_rule_12_no_app_function_over_100_lines() -> None:
    report(long_app_function_offences(project_modules()), "Rule 12 (short functions)")


def long_app_module_offences(modules: Mapping[str, Module], limit: int = MAX_APP_MODULE_LINES) -> list[str]:
    return [f"{where(m, 1)}: {m.lines} lines (at most {limit})" for m in modules.values() if part_of(m) == "graphrag_app" and m.lines > limit]


def test_rule_12_no_app_module_over_600_lines() -> None:
    report(long_app_module_offences(project_modules()), "Rule 12 (bounded modules)")


# ---- The plan's tree names every app module --------------------------------------------------


def tree_offences(modules: Mapping[str, Module], plan: str) -> list[str]:
    """Each app module the graphrag_app section of the plan does not name (its file name, under its
    package's folder), so the tree stays true."""
    section = plan.split("## graphrag_app and pages", 1)[-1].split("## Rules", 1)[0]
    words = set(section.replace("/", " / ").split())
    offences = []
    for module in modules.values():
        if part_of(module) != "graphrag_app" or module.is_package:
            continue
        parts = module.path.split("/")
        folders = [f"{folder}/" for folder in parts[1:-1]]
        if parts[-1] not in words or any(folder.rstrip("/") not in words for folder in folders):
            offences.append(f"{module.path}:1: not named in docs/architecture.md's graphrag_app tree")
    return offences


def test_the_plan_names_every_app_module() -> None:
    report(tree_offences(project_modules(), (APP_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")), "The plan's tree")


# ---- Browser tests wait for states ----------------------------------------------------------


def is_browser_module(module: Module) -> bool:
    named = Path(module.path).name.startswith("test_browser") or module.path in BROWSER_SUPPORT
    return named or any(imp.module.split(".")[0] == "playwright" or imp.module.endswith("browser_support") or "browser_support" in imp.names for imp in imports_of(module))


def calls_in_functions(node: ast.AST, function: str = "") -> Iterator[tuple[ast.Call, str]]:
    """Each call under ``node``, with the name of the innermost function around it ("" for none)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        function = node.name
    if isinstance(node, ast.Call):
        yield node, function
    for child in ast.iter_child_nodes(node):
        yield from calls_in_functions(child, function)


def fixed_wait_offences(modules: Iterable[Module]) -> list[str]:
    offences = []
    for module in filter(is_browser_module, modules):
        bound = aliases(module)
        for call, function in calls_in_functions(module.tree):
            waits = qualified(call.func, bound) in FIXED_WAITS or (isinstance(call.func, ast.Attribute) and call.func.attr in FIXED_WAIT_METHODS)
            if waits and (module.path, function) not in POLLING_PAUSES:
                offences.append(f"{where(module, call)}: {ast.unparse(call)} waits a fixed time; wait for the state the next step needs")
    return offences


def test_browser_tests_wait_for_states_not_for_time() -> None:
    report(fixed_wait_offences(_test_modules()), "Browser tests wait for states")


# ---- Beyond the rules: what stays public ----------------------------------------------------


def test_shared_pages_do_not_show_tracebacks_or_server_paths() -> None:
    import tomllib

    config = tomllib.loads((APP_ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] in ("type", "none")  # details go to the log


def test_the_deployed_app_spends_nothing_on_what_only_development_needs() -> None:
    # no file watcher and no rerun on save (a developer runs --server.fileWatcherType auto), and
    # no full garbage collection after every script run: the live view reruns twice a second
    import tomllib

    config = tomllib.loads((APP_ROOT / ".streamlit" / "config.toml").read_text())
    assert (config["server"]["fileWatcherType"], config["server"]["runOnSave"]) == ("none", False)
    assert config["runner"]["postScriptGC"] is False and config["runner"]["fastReruns"] is True


def test_every_public_name_of_the_package_resolves() -> None:
    """``__all__`` of ``graphrag_core`` holds the public names; some are imported on first use
    (index loading, model adapters, the cache), and those must resolve too."""
    import graphrag_core
    from graphrag_core.index import load_index, save_index

    from graphrag_core import load_index as top_load, save_index as top_save

    assert (top_load, top_save) == (load_index, save_index)
    assert {"load_index", "save_index", "OpenAIChatModel", "OfflineChatModel", "SqliteMapCache", "ModelSettings", "build_chat_model"} <= set(graphrag_core.__all__)
    for name in graphrag_core.__all__:
        assert getattr(graphrag_core, name) is not None, name


# ---- The checks, on made-up modules ---------------------------------------------------------


def made_up(sources: Mapping[str, str]) -> dict[str, Module]:
    modules = (module_from_source(path, source) for path, source in sources.items())
    return {m.name: m for m in modules}


def places(offences: Iterable[str]) -> set[str]:
    """``{"path:line", ...}`` of offences written ``path:line: what``."""
    return {":".join(o.split(":")[:2]) for o in offences}


def test_checker_edges_reach_the_module_imported_and_count_every_import() -> None:
    modules = made_up(
        {
            "graphrag_core/__init__.py": "",
            "graphrag_core/a.py": "",
            "graphrag_core/b.py": "",
            "graphrag_core/pkg/__init__.py": "",
            "graphrag_core/pkg/c.py": "",
            "graphrag_core/user.py": (
                "from typing import TYPE_CHECKING\n"
                "import graphrag_core.pkg.c\n"  # line 2: pkg.c only, not graphrag_core or pkg
                "from graphrag_core.pkg import c, helper\n"  # line 3: pkg.c, and pkg for helper
                "if TYPE_CHECKING:\n"
                "    from . import a\n"  # line 5
                "def f():\n"
                "    import importlib\n"
                "    from .pkg.c import thing\n"  # line 8
                "    return importlib.import_module('.b', __package__)\n"  # line 9
            ),
        }
    )
    found = sorted((imp.line, target) for imp, target in edges_of(modules["graphrag_core.user"], modules))
    assert found == [
        (2, "graphrag_core.pkg.c"),
        (3, "graphrag_core.pkg"),
        (3, "graphrag_core.pkg.c"),
        (5, "graphrag_core.a"),
        (8, "graphrag_core.pkg.c"),
        (9, "graphrag_core.b"),
    ]


def test_checker_finds_a_cycle_made_inside_a_function_and_under_type_checking() -> None:
    modules = made_up(
        {
            "graphrag_core/a.py": "def f():\n    from graphrag_core import b\n",
            "graphrag_core/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from graphrag_core.a import f\n",
            "graphrag_core/c.py": "import graphrag_core.a\n",
        }
    )
    (offence,) = cycle_offences(modules)
    assert "graphrag_core.a, graphrag_core.b" in offence and "graphrag_core.c" not in offence
    assert "graphrag_core/a.py:2: graphrag_core.a imports graphrag_core.b" in offence
    assert "graphrag_core/b.py:3: graphrag_core.b imports graphrag_core.a" in offence
    assert cycle_offences(made_up({"graphrag_core/a.py": "", "graphrag_core/b.py": "import graphrag_core.a\n"})) == []


def test_checker_layers_init_imports_and_purity() -> None:
    modules = made_up(
        {
            "graphrag_core/__init__.py": "X = 1\n",
            "graphrag_core/__main__.py": "from graphrag_cli import main\n",
            "graphrag_core/engine.py": "import json\ndef f():\n    import pandas\n    from graphrag_app import views\nfrom graphrag_core import X\n",
            "graphrag_app/views.py": "import streamlit as st\n",
            "graphrag_app/explore/charts.py": "import plotly\nfrom graphrag_app.views import st\n",
            "graphrag_app/urls.py": "import streamlit\n",
            "pages/one.py": "from graphrag_app import views\nfrom pages import two\n",
            "pages/two.py": "",
        }
    )
    assert places(layer_offences(modules)) == {"graphrag_core/engine.py:3", "graphrag_core/engine.py:4", "pages/one.py:2"}
    assert places(init_import_offences(modules)) == {"graphrag_core/engine.py:5"}
    assert places(impurity_offences(modules)) == {"graphrag_app/explore/charts.py:2", "graphrag_app/urls.py:1"}
    assert "through graphrag_app.explore.charts -> graphrag_app.views (graphrag_app/views.py:1)" in " ".join(impurity_offences(modules))


def test_checker_vendors_environment_and_event_loops() -> None:
    modules = made_up(
        {
            "graphrag_core/llm/openai_model.py": "import openai\n",
            "graphrag_core/llm/other.py": "from openai import AsyncOpenAI\n",
            "graphrag_app/settings.py": "import os\nKEY = os.environ.get('K')\n",
            "graphrag_app/jobs.py": "import asyncio\nasyncio.run(None)\n",
            "graphrag_core/store.py": "import os as system\nfrom os import getenv\nA = system.environ['A']\nB = getenv('B')\n",
            "graphrag_core/preflight.py": (
                "import asyncio\n"
                "from asyncio import run\n"  # 2
                "def f(pool, loop):\n"
                "    pool.submit(asyncio.run, None)\n"  # 4: handed to a thread, still a new loop
                "    loop.run_until_complete(None)\n"  # 5
                "    run(None)\n"  # 6
            ),
        }
    )
    assert places(vendor_offences(modules)) == {"graphrag_core/llm/other.py:1"}
    assert places(environment_offences(modules)) == {f"graphrag_core/store.py:{line}" for line in (2, 3, 4)}
    assert places(event_loop_offences(modules)) == {f"graphrag_core/preflight.py:{line}" for line in (2, 4, 5, 6)}


def test_checker_streamlit_internals_and_patches() -> None:
    source = (
        "import streamlit as st\n"
        "from streamlit.runtime.pages_manager import PagesManager\n"  # 2: an internal
        "PagesManager.uses_pages_directory = False\n"  # 3: a patch
        "st.session_state.x = 1\n"
        "st.navigation([])\n"
        "from streamlit.delta_generator import DeltaGenerator\n"
        "if st.runtime.exists():\n"  # 7: an internal reached through st
        "    setattr(st, 'fragment', None)\n"  # 8: a patch
        "import streamlit.components.v1 as components\n"
    )
    offences = streamlit_internal_offences(made_up({"graphrag_app/navigation.py": source}))
    assert places(offences) == {f"graphrag_app/navigation.py:{line}" for line in (2, 3, 7, 8)}
    assert any("patches streamlit.runtime.pages_manager.PagesManager.uses_pages_directory" in o for o in offences)


STATUS_SOURCE = '''__all__ = ["RunCancelled"]
def f(state, row, batch, level, selection) -> "RunCancelled":
    """RunCancelled"""
    a = state.status == "failed"
    b = row["error_type"] != "RunCancelled"
    c = batch.outcome in ("ok", "cached")
    d = state.phase == "done" and selection == "dynamic"
    e = "RunCancelled"
    g = level in ("leaf", "dynamic")
    h = "leaf" == selection
    match state.status:
        case "running":
            pass
'''
"""Lines 4, 5 (twice: a status and an error type), 6, 8 and 12 name statuses or error types by
their strings; lines 9 and 10 parse levels; the rest do neither."""


def test_checker_long_modules_statuses_and_levels() -> None:
    long_body = "x = 1\n" * LONG_MODULE_LINES
    modules = made_up(
        {
            "graphrag_core/long.py": '"""A long room.\n\nIt is long."""\n' + long_body,
            "graphrag_core/reasoned.py": f'"""A long room.\n\n{LONG_MODULE_REASON} one table, one parser each.\n"""\n' + long_body,
            "graphrag_core/errors.py": "class GraphRAGError(ValueError):\n    pass\nclass RunCancelled(GraphRAGError):\n    pass\n",
            "graphrag_core/status.py": "def f(status):\n    return status == 'running'\n",
            "graphrag_core/views.py": STATUS_SOURCE,
        }
    )
    assert places(long_module_offences(modules)) == {"graphrag_core/long.py:1"}
    assert places(status_offences(modules)) == {f"graphrag_core/views.py:{line}" for line in (4, 5, 6, 8, 12)}
    assert sum(o.startswith("graphrag_core/views.py:5:") for o in status_offences(modules)) == 2
    assert places(level_offences(modules)) == {"graphrag_core/views.py:9", "graphrag_core/views.py:10"}


def test_checker_long_functions_and_long_engine_modules() -> None:
    def function(name: str, lines: int, indent: str = "") -> str:  # a def of exactly ``lines`` lines
        return f"{indent}def {name}():\n" + f"{indent}    x = 1\n" * (lines - 1)

    modules = made_up(
        {
            "graphrag_core/steps.py": function("fits", LONG_FUNCTION_LINES) + function("long", LONG_FUNCTION_LINES + 1),
            "graphrag_cli/commands/go.py": "class Command:\n" + function("method", LONG_FUNCTION_LINES + 1, "    "),
            "graphrag_app/views.py": "async " + function("panel", LONG_FUNCTION_LINES + 1),
            "pages/explore.py": function("layout", LONG_FUNCTION_LINES + 1),
            "tests/test_x.py": function("test_long", LONG_FUNCTION_LINES + 1),
            "graphrag_core/big.py": "x = 1\n" * (ENGINE_MODULE_LINES + 1),
            "graphrag_core/full.py": "x = 1\n" * ENGINE_MODULE_LINES,
            "graphrag_app/big_page.py": "x = 1\n" * (ENGINE_MODULE_LINES + 1),
        }
    )
    assert places(long_function_offences(modules)) == {
        f"graphrag_core/steps.py:{LONG_FUNCTION_LINES + 1}", "graphrag_cli/commands/go.py:2", "graphrag_app/views.py:1", "pages/explore.py:1",
    }
    assert places(long_engine_module_offences(modules)) == {"graphrag_core/big.py:1"}


def test_checker_finds_fixed_waits_in_browser_tests_only() -> None:
    modules = made_up(
        {
            "tests/test_browser_x.py": "import time\ndef test(page):\n    page.wait_for_timeout(500)\n    time.sleep(1)\n",
            "tests/test_y.py": "from .browser_support import ask\nfrom time import sleep as nap\ndef test():\n    nap(1)\n",
            "tests/test_z.py": "import time\ndef test():\n    time.sleep(1)\n",
            "tests/__init__.py": "import time\ndef wait_until():\n    time.sleep(0.01)\ndef other():\n    time.sleep(1)\n",
        }
    ).values()
    assert places(fixed_wait_offences(modules)) == {"tests/test_browser_x.py:3", "tests/test_browser_x.py:4", "tests/test_y.py:4", "tests/__init__.py:5"}


def test_checker_reading_streamlit_s_installed_files() -> None:
    source = (
        "import importlib.resources\n"
        "from pathlib import Path\n"
        "import streamlit as st\n"
        "STATIC = Path(st.__file__).parent / 'static'\n"  # 4
        "JS = importlib.resources.files('streamlit.static')\n"  # 5
        "OWN = importlib.resources.files('graphrag_core.sample_data')\n"
        "st.plotly_chart({})\n"
    )
    offences = streamlit_internal_offences(made_up({"graphrag_app/explore/views.py": source}))
    assert places(offences) == {"graphrag_app/explore/views.py:4", "graphrag_app/explore/views.py:5"}


def test_checker_page_packages_and_what_a_page_reaches() -> None:
    modules = made_up(
        {
            "graphrag_app/__init__.py": "",
            "graphrag_app/session.py": "",
            "graphrag_app/text.py": "",
            "graphrag_app/labels.py": "def f():\n    from graphrag_app.compare import views\n",  # 2: the shared layer imports a page package
            "graphrag_app/explore/__init__.py": "",
            "graphrag_app/explore/views.py": "from .. import session\nfrom ..compare.views import draw\nfrom . import state\n",  # 2: another page's
            "graphrag_app/explore/state.py": "from graphrag_app import text\n",
            "graphrag_app/compare/__init__.py": "",
            "graphrag_app/compare/views.py": "from graphrag_app.text import x\n",
            "pages/explore.py": "from graphrag_app.explore import views\n",
            "pages/compare.py": "from graphrag_app.compare.views import draw\n",
        }
    )
    assert places(page_package_offences(modules)) == {"graphrag_app/labels.py:2", "graphrag_app/explore/views.py:2"}
    assert places(page_reach_offences(modules, limit=4)) == {"pages/explore.py:1"}  # views, session, compare.views, state, text
    assert "reaches 5 app modules" in " ".join(page_reach_offences(modules, limit=4)) and page_reach_offences(modules, limit=5) == []
    assert plain_module_offences(modules, limit=3) == [] and len(plain_module_offences(modules, limit=2)) == 1


def test_checker_session_state_mentions_functions_and_module_lengths() -> None:
    state_source = "import streamlit as st\nfrom streamlit import session_state\nA = st.session_state['a']\nB = st.session_state.get('b')\n"
    long_function = "def f():\n" + "    x = 1\n" * 100 + "def g():\n" + "    x = 1\n" * 99
    modules = made_up(
        {
            "graphrag_app/session.py": state_source,  # 3 mentions (the import is one)
            "graphrag_app/views.py": "import streamlit as st\nst.session_state.x = 1\n",
            "pages/one.py": long_function,
            "graphrag_core/long.py": long_function,  # the engine's own rule is rule 8's, not this one
            "graphrag_app/big.py": "x = 1\n" * 601,
        }
    )
    assert session_state_offences(modules) == []
    assert places(session_state_offences(modules, mentions=3)) == {"graphrag_app/session.py:2", "graphrag_app/views.py:2"}
    assert "4 mentions of st.session_state in 2 modules" in session_state_offences(modules, at_most=1)[0]
    assert places(long_app_function_offences(modules)) == {"pages/one.py:1"}
    assert places(long_app_module_offences(modules)) == {"graphrag_app/big.py:1"}


def test_checker_the_plan_s_tree() -> None:
    modules = made_up({"graphrag_app/__init__.py": "", "graphrag_app/urls.py": "", "graphrag_app/explore/__init__.py": "", "graphrag_app/explore/views.py": "", "graphrag_app/gone.py": ""})
    plan = "## graphrag_app and pages\n```\ngraphrag_app/\n  urls.py   links\n  explore/\n    views.py\n```\n## Rules\ngone.py\n"
    assert places(tree_offences(modules, plan)) == {"graphrag_app/gone.py:1"}
