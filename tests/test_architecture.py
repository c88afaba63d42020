"""The engine stays independent of the UI and of vendor SDKs outside their adapters."""

import ast
from pathlib import Path

from . import APP_ROOT

CORE = APP_ROOT / "graphrag_core"
UI_PACKAGES = {"streamlit", "plotly", "graphrag_app"}
VENDOR_ADAPTERS = {"openai": {"llm/openai_model.py"}}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_core_never_imports_the_ui():
    offenders = {
        str(path.relative_to(CORE)): sorted(imported_roots(path) & UI_PACKAGES)
        for path in CORE.rglob("*.py")
        if imported_roots(path) & UI_PACKAGES
    }
    assert offenders == {}


def test_vendor_sdks_only_in_their_adapters():
    for vendor, allowed in VENDOR_ADAPTERS.items():
        users = {str(p.relative_to(CORE)) for p in CORE.rglob("*.py") if vendor in imported_roots(p)}
        assert users <= allowed, f"{vendor} imported outside its adapter: {sorted(users - allowed)}"


def test_shared_pages_do_not_show_tracebacks_or_server_paths() -> None:
    import tomllib

    config = tomllib.loads((APP_ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] in ("type", "none")  # details go to the log
